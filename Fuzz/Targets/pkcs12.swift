// Fuzz target "pkcs12": Identity(pkcs12:password:) with the fixed password "fuzz" (the seeds
// use it), then the identity's fields. Only the Swift side is coverage-instrumented (OpenSSL
// is the system library), so libFuzzer steers on the error handling around d2i_PKCS12,
// PKCS12_verify_mac and PKCS12_parse; mutations rarely keep the MAC valid. LeakSanitizer
// watches the OpenSSL objects on every error path.
import CertificateParsing
import TrustEvaluation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPKCS12(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    for password in ["fuzz", ""] {
        do {
            let identity = try Identity(pkcs12: bytes, password: password)
            verbose("password \"\(password)\": \(identity.privateKey), \(identity.certificate.subject.rfc4514), chain of \(identity.chain.count)")
            touch(identity.certificate)
            for certificate in identity.chain { touch(certificate) }
            sink(identity.privateKey.description)
            sink(identity.privateKey.algorithmName)
            sink(identity.privateKey.bitSize)
            invariant(identity.privateKey.matches(identity.certificate), "identity key does not match its certificate")
            let spki = identity.privateKey.publicKeyInfoDER
            invariant((try? SubjectPublicKeyInfo(derEncoded: spki)) != nil, "the key's own SPKI does not parse")
        } catch {
            verbose("password \"\(password)\": \(error)")
            sink(error.description)
            sink(error.code.rawValue)
        }
    }
    return 0
}
