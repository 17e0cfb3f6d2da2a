// Fuzz target "crl": CertificateRevocationList(derEncoded:) on arbitrary bytes; an accepted
// CRL has every field read. (isRevoked needs a SerialNumber, which only a Certificate can
// make; the chain target exercises it.)
import CertificateParsing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCRL(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    do {
        let crl = try CertificateRevocationList(derEncoded: bytes)
        invariant(crl.derBytes == bytes, "derBytes must be the input")
        touch(crl)
    } catch {
        sink(error.description)
        invariant(error.offset >= 0 && error.offset <= bytes.count, "DERError offset \(error.offset) outside the input")
    }
    return 0
}
