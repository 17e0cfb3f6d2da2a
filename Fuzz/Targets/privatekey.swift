// Fuzz target "privatekey": PrivateKey(pemEncoded:password:) on the bytes as text and
// PrivateKey(derEncoded:password:) on the raw bytes (PKCS #8 plain and encrypted, PKCS #1,
// SEC 1), password "fuzz" (the seeds' password) and nil.
import CertificateParsing
import TrustEvaluation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPrivateKey(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    var keys: [PrivateKey] = []
    for password in ["fuzz", nil] as [String?] {
        do { keys.append(try PrivateKey(pemEncoded: text, password: password)) } catch {
            verbose("PEM, password \(password ?? "nil"): \(error)")
            sink(error.description)
        }
        do { keys.append(try PrivateKey(derEncoded: bytes, password: password)) } catch {
            verbose("DER, password \(password ?? "nil"): \(error)")
            sink(error.description)
        }
    }
    for key in keys {
        verbose("loaded \(key)")
        sink(key.description)
        sink(key.bitSize)
        do {
            let spki = try SubjectPublicKeyInfo(derEncoded: key.publicKeyInfoDER)
            touch(spki)
            invariant(key.matches(spki), "a key does not match its own public key")
        } catch {
            invariant(false, "the key's own SPKI does not parse: \(error)")
        }
    }
    return 0
}
