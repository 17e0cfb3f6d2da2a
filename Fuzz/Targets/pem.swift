// Fuzz target "pem": PEMDocument.parseAll on the bytes read as text (invalid UTF-8 repaired,
// as String(decoding:) does when a file is read), Base64, and the loaders built on PEM
// (Certificate.load, CertificateRevocationList.load). Round trips: every accepted block
// re-encodes (pemString) to text that parses back to the same label and bytes.
import CertificateParsing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPEM(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    do {
        let documents = try PEMDocument.parseAll(text)
        for document in documents {
            sink(document.label)
            sink(document.line)
            sink(bytes: document.derBytes)
            let again = try? PEMDocument(pemEncoded: document.pemString)
            invariant(
                again?.label == document.label && again?.derBytes == document.derBytes,
                "PEM block \(document.label) at line \(document.line) does not round-trip through pemString")
        }
        if documents.count == 1 { invariant((try? PEMDocument(pemEncoded: text)) != nil, "single-block init disagrees with parseAll") }
    } catch {
        sink(error.description)
        invariant(error.line >= 1, "PEMError line \(error.line) is not 1-based")
    }
    _ = PEMDocument.looksLikePEM(bytes)
    // Base64 alone: decode, and encode(decode(x)) decodes to the same bytes.
    if let decoded = Base64.decode(bytes) {
        invariant(Base64.decode(Array(Base64.encode(decoded).utf8)) == decoded, "Base64 does not round-trip")
    }
    switch Result(catching: { () throws(CertificateLoadingError) in try Certificate.load(bytes) }) {
    case .success(let certificates): for certificate in certificates { touch(certificate) }
    case .failure(let error): sink(error.description)
    }
    switch Result(catching: { () throws(CRLLoadingError) in try CertificateRevocationList.load(bytes) }) {
    case .success(let crls): for crl in crls { touch(crl) }
    case .failure(let error): sink(error.description)
    }
    return 0
}
