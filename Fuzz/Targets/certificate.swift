// Fuzz target "certificate": Certificate(derEncoded:) on arbitrary bytes; an accepted
// certificate has every field read (RDNs and RFC 4514 text, extensions, GeneralNames,
// fingerprints, PEM round trip; see Support/Touch.swift). The same bytes also go through
// the standalone SubjectPublicKeyInfo and DistinguishedName parsers.
import CertificateParsing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCertificate(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    do {
        let certificate = try Certificate(derEncoded: bytes)
        invariant(certificate.derBytes == bytes, "derBytes must be the input")
        touch(certificate)
        // FUZZ_STRICT=1 (for surveys with `run.sh repro`, not for fuzzing): report accepted
        // certificates that DER.parse rejects. The certificate parser does not walk the values
        // it keeps opaque (algorithm parameters, otherName values, x400Address, policy
        // qualifiers, CRL entry extensions), so non-DER inside them is accepted by design.
        if fuzzStrict, (try? DER.parse(bytes)) == nil {
            invariant(false, "Certificate accepted bytes that DER.parse rejects: \(String(describing: Result { () throws(DERError) in try DER.parse(bytes) }))")
        }
    } catch {
        sink(error.description)
        invariant(error.offset >= 0 && error.offset <= bytes.count, "DERError offset \(error.offset) outside the input")
    }
    if let spki = try? SubjectPublicKeyInfo(derEncoded: bytes) { touch(spki) }
    if let name = try? DistinguishedName(derEncoded: bytes) { touch(name) }
    return 0
}
