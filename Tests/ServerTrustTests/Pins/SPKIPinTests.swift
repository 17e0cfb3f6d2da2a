import CertificateParsing
import ServerTrust
import Testing

@Suite("SPKI pins")
struct SPKIPinTests {
    let f = PolicyFixtures.shared

    @Test("OkHttp, curl and bare forms name the same key")
    func spellings() throws {
        let base64 = f.root.spkiSHA256Base64
        for text in ["sha256/" + base64, "sha256//" + base64, base64, "SHA256/" + base64] {
            let pin = try SPKIPin(text)
            #expect(pin.algorithm == .sha256, "\(text)")
            #expect(pin.matches(f.root), "\(text)")
            #expect(!pin.matches(f.intermediate), "\(text)")
            #expect(pin.description == "sha256/" + base64)
        }
        #expect(try SPKIPin("sha256/" + base64).rfc7469 == "pin-sha256=\"\(base64)\"")
    }

    @Test("a digest whose base64 starts with a slash reads the same in OkHttp and curl form")
    func leadingSlash() throws {
        let digest = [0xFF, 0xF0] + [UInt8](repeating: 7, count: 30)
        let base64 = Base64.encode(digest)
        #expect(base64.hasPrefix("/"))
        #expect(try SPKIPin("sha256/" + base64).digest == digest)
        #expect(try SPKIPin("sha256//" + base64).digest == digest)
        #expect(try SPKIPin(base64).digest == digest)
    }

    @Test("SHA-384 and SHA-512 pins", arguments: [PinDigestAlgorithm.sha384, .sha512])
    func longerDigests(_ algorithm: PinDigestAlgorithm) throws {
        let digest = algorithm == .sha384 ? SHA384.hash(f.root.subjectPublicKeyInfo.derBytes) : SHA512.hash(f.root.subjectPublicKeyInfo.derBytes)
        let prefixed = try SPKIPin(algorithm.rawValue + "/" + Base64.encode(digest))
        let bare = try SPKIPin(Base64.encode(digest))
        #expect(prefixed == bare)
        #expect(prefixed.algorithm == algorithm)
        #expect(prefixed.matches(f.root))
        #expect(SPKIPin(certificate: f.root, algorithm: algorithm) == prefixed)
    }

    @Test(
        "invalid pins say why",
        arguments: [
            ("sha256/abc", "not base64"),
            ("sha256/" + Base64.encode([UInt8](repeating: 1, count: 31)), "31 bytes, expected 32"),
            ("sha1/" + Base64.encode([UInt8](repeating: 1, count: 20)), "unsupported digest"),
            ("md5/AAAA", "unsupported digest"),
            (Base64.encode([UInt8](repeating: 1, count: 20)), "20 bytes"),
            ("", "not base64"),
            ("sha256/", "not base64"),
            // Hex fingerprints: 64 hex digits are valid base64 of 48 bytes, and were read as a
            // SHA-384 pin that matches nothing.
            (String(repeating: "ab12", count: 16), "64 hex digits look like a certificate fingerprint"),
            (String(repeating: "AB12", count: 16), "64 hex digits look like a certificate fingerprint"),
            ("sha256/" + String(repeating: "0f", count: 32), "64 hex digits look like a certificate fingerprint"),
            (Array(repeating: "9C", count: 32).joined(separator: ":"), "64 hex digits look like a certificate fingerprint"),
            (String(repeating: "a1", count: 20), "40 hex digits look like a certificate fingerprint"),
            (String(repeating: "7e", count: 48), "96 hex digits"),
        ])
    func invalid(_ text: String, _ reason: String) {
        let error = #expect(throws: PolicyConfigurationError.self) { try SPKIPin(text) }
        #expect(error?.kind == .invalidPin)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(SPKIPin.acceptedForms) == true, "the message names the accepted forms: \(error?.message ?? "")")
    }

    @Test("validity windows include both ends")
    func windows() throws {
        let pin = try SPKIPin(f.root.spkiSHA256Base64, notBefore: 100, notAfter: 200)
        #expect(!pin.isActive(at: 99))
        #expect(pin.isActive(at: 100) && pin.isActive(at: 200))
        #expect(!pin.isActive(at: 201))
        #expect(try SPKIPin(f.root.spkiSHA256Base64).isActive(at: .min))
    }
}
