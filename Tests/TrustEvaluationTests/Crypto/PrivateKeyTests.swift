import CertificateParsing
import Foundation
import ServerTrustLab
import Testing
import TrustEvaluation

/// ``PrivateKey``: every encoding and algorithm, passwords, malformed and unsupported input,
/// and matching against certificates. Keys come from ServerTrustLab or the `openssl` CLI at
/// test time; no key material is committed.
@Suite("Private keys")
struct PrivateKeyTests {
    /// How a Lab key is serialised for the test.
    enum Encoding: String, Sendable, CaseIterable {
        case pkcs8PEM, traditionalPEM, pkcs8DER, traditionalDER
        case encryptedPKCS8PEM, encryptedPKCS8DER, encryptedTraditionalPEM
    }

    struct FormatCase: Sendable, CustomTestStringConvertible {
        let key: LabKeyAlgorithm
        let encoding: Encoding
        var testDescription: String { "\(key) \(encoding.rawValue)" }
    }

    static let password = "s3cret pässword"

    static let formatCases: [FormatCase] = {
        var cases: [FormatCase] = []
        for key in LabKeyAlgorithm.common {
            for encoding in Encoding.allCases {
                let traditional =
                    encoding == .traditionalPEM || encoding == .traditionalDER || encoding == .encryptedTraditionalPEM
                if traditional && !(key.isRSA || key.isEC) { continue }
                cases.append(FormatCase(key: key, encoding: encoding))
            }
        }
        return cases
    }()

    /// Serialises `key` as `encoding` (encrypted forms use ``password``).
    static func load(
        _ key: LabKey,
        _ encoding: Encoding,
        password: String? = PrivateKeyTests.password
    ) throws -> PrivateKey {
        switch encoding {
        case .pkcs8PEM: return try PrivateKey(pemEncoded: try key.privateKeyPEM(format: .pkcs8))
        case .traditionalPEM: return try PrivateKey(pemEncoded: try key.privateKeyPEM(format: .traditional))
        case .pkcs8DER: return try PrivateKey(derEncoded: try key.privateKeyDER(format: .pkcs8))
        case .traditionalDER: return try PrivateKey(derEncoded: try key.privateKeyDER(format: .traditional))
        case .encryptedPKCS8PEM:
            return try PrivateKey(
                pemEncoded: try key.encryptedPrivateKeyPEM(password: PrivateKeyTests.password),
                password: password
            )
        case .encryptedPKCS8DER:
            let der = try PEMDocument(pemEncoded: try key.encryptedPrivateKeyPEM(password: PrivateKeyTests.password))
                .derBytes
            return try PrivateKey(derEncoded: der, password: password)
        case .encryptedTraditionalPEM:
            return try PrivateKey(pemEncoded: try encryptedTraditionalPEM(key), password: password)
        }
    }

    /// OpenSSL's RFC 1421-style encrypted traditional PEM (`Proc-Type: 4,ENCRYPTED`).
    static func encryptedTraditionalPEM(_ key: LabKey) throws -> String {
        let directory = try CryptoTestKit.TemporaryDirectory()
        let input = try directory.write(Array(try key.privateKeyPEM(format: .pkcs8).utf8), named: "key.pem")
        let result = try CryptoTestKit.openssl([
            "pkey", "-in", input, "-traditional", "-aes256", "-passout", "pass:\(password)",
        ])
        try #require(result.status == 0, "\(result.output)")
        #expect(result.output.contains("Proc-Type: 4,ENCRYPTED"))
        return result.output
    }

    @Test("loads every algorithm in every encoding", arguments: formatCases)
    func loads(_ c: FormatCase) throws {
        let labKey = try LabKey.shared(c.key)
        let key = try Self.load(labKey, c.encoding)
        #expect(key.publicKeyInfoDER == labKey.publicKeyInfoDER)
        let (name, bits): (String, Int) = {
            switch c.key {
            case .rsa(let bits): return ("RSA", bits)
            case .p256: return ("EC", 256)
            case .p384: return ("EC", 384)
            case .p521: return ("EC", 521)
            case .ed25519: return ("Ed25519", 253)
            case .ed448: return ("Ed448", 456)
            }
        }()
        #expect(key.algorithmName == name)
        #expect(key.bitSize == bits)
        #expect(key.description == "\(name)-\(bits) private key")

        let own = try CryptoTestKit.selfSigned(labKey, scheme: .default(for: c.key))
        let other = try CryptoTestKit.selfSigned(try LabKey.shared(c.key, slot: 1), scheme: .default(for: c.key))
        #expect(key.matches(own))
        #expect(!key.matches(other))
    }

    @Test(
        "a wrong or missing password is .wrongPassword",
        arguments: [Encoding.encryptedPKCS8PEM, .encryptedPKCS8DER, .encryptedTraditionalPEM]
    )
    func wrongPassword(_ encoding: Encoding) throws {
        let labKey = try LabKey.shared(.p256)
        for attempt in [
            "wrong", "", "s3cret passsword", PrivateKeyTests.password + " ", PrivateKeyTests.password + "\u{0}x",
        ] {
            #expect(throws: KeyError(.wrongPassword, "")) { try Self.load(labKey, encoding, password: attempt) }
        }
        #expect(throws: KeyError(.wrongPassword, "")) { try Self.load(labKey, encoding, password: nil) }
        let rsa = try LabKey.shared(.rsa(bits: 2048))
        #expect(throws: KeyError(.wrongPassword, "")) { try Self.load(rsa, encoding, password: "wrong") }
        #expect(try Self.load(rsa, encoding).algorithmName == "RSA")
    }

    @Test("a password given for an unencrypted key is ignored")
    func passwordIgnored() throws {
        let labKey = try LabKey.shared(.ed25519)
        let key = try PrivateKey(pemEncoded: try labKey.privateKeyPEM(), password: "unused")
        #expect(key.publicKeyInfoDER == labKey.publicKeyInfoDER)
    }

    /// Malformed input: each must be `.malformed`, never a crash or another key.
    struct MalformedCase: Sendable, CustomTestStringConvertible {
        let name: String
        let load: @Sendable () throws -> PrivateKey
        var testDescription: String { name }
    }

    static let malformedCases: [MalformedCase] = [
        MalformedCase(name: "empty text") { try PrivateKey(pemEncoded: "") },
        MalformedCase(name: "text without PEM") { try PrivateKey(pemEncoded: "just some words\n") },
        MalformedCase(name: "bad base64 in the block") {
            try PrivateKey(pemEncoded: "-----BEGIN PRIVATE KEY-----\nMIIB$$$notbase64\n-----END PRIVATE KEY-----\n")
        },
        MalformedCase(name: "END line missing") {
            let pem = try LabKey.shared(.p256).privateKeyPEM()
            return try PrivateKey(pemEncoded: String(pem.prefix(pem.count - 30)))
        },
        MalformedCase(name: "empty DER") { try PrivateKey(derEncoded: []) },
        MalformedCase(name: "DER garbage") { try PrivateKey(derEncoded: [0x30, 0x03, 0x02, 0x01, 0x00]) },
        MalformedCase(name: "truncated PKCS #8 DER") {
            let der = try LabKey.shared(.p256).privateKeyDER(format: .pkcs8)
            return try PrivateKey(derEncoded: Array(der.dropLast(5)))
        },
        MalformedCase(name: "PKCS #8 DER with a trailing byte") {
            try PrivateKey(derEncoded: try LabKey.shared(.p256).privateKeyDER(format: .pkcs8) + [0])
        },
        MalformedCase(name: "RSA key labelled PRIVATE KEY") {
            let der = try LabKey.shared(.rsa(bits: 2048)).privateKeyDER(format: .traditional)
            return try PrivateKey(pemEncoded: PEMDocument(label: "PRIVATE KEY", derBytes: der).pemString)
        },
        MalformedCase(name: "EC key labelled RSA PRIVATE KEY") {
            let der = try LabKey.shared(.p256).privateKeyDER(format: .traditional)
            return try PrivateKey(pemEncoded: PEMDocument(label: "RSA PRIVATE KEY", derBytes: der).pemString)
        },
        MalformedCase(name: "PKCS #8 with a corrupted inner key") {
            var der = try LabKey.shared(.p256).privateKeyDER(format: .pkcs8)
            // The inner ECPrivateKey starts after the version and algorithm: replace its SEQUENCE tag.
            if let index = der.indices.dropFirst(4).first(where: { der[$0] == 0x04 && der[$0 + 2] == 0x30 }) {
                der[index + 2] = 0x31
            }
            return try PrivateKey(derEncoded: der)
        },
        MalformedCase(name: "a certificate's DER") {
            try PrivateKey(
                derEncoded: try CryptoTestKit.selfSigned(try LabKey.shared(.p256), scheme: .ecdsa(.sha256)).derBytes
            )
        },
    ]

    @Test("malformed input is .malformed", arguments: malformedCases)
    func malformed(_ c: MalformedCase) {
        #expect(throws: KeyError(.malformed, "")) { try c.load() }
        do {
            _ = try c.load()
        } catch let error as KeyError {
            #expect(error.reason.count > 10, "\(error)")
        } catch {
            Issue.record("unexpected error type: \(error)")
        }
    }

    @Test("PEM without a key block is .missingKey")
    func missingKey() throws {
        let certificate = try CryptoTestKit.selfSigned(try LabKey.shared(.p256), scheme: .ecdsa(.sha256))
        #expect(throws: KeyError(.missingKey, "")) { try PrivateKey(pemEncoded: certificate.pemString) }
    }

    @Test("other blocks before the key are skipped")
    func combinedFiles() throws {
        let labKey = try LabKey.shared(.p384)
        let certificate = try CryptoTestKit.selfSigned(labKey, scheme: .ecdsa(.sha384))
        let combined =
            certificate.pemString + "some explanatory text\n" + (try labKey.privateKeyPEM(format: .traditional))
        #expect(try PrivateKey(pemEncoded: combined).publicKeyInfoDER == labKey.publicKeyInfoDER)

        // `openssl ecparam -genkey` writes EC PARAMETERS before EC PRIVATE KEY.
        let generated = try CryptoTestKit.openssl(["ecparam", "-name", "prime256v1", "-genkey"])
        try #require(generated.status == 0, "\(generated.output)")
        #expect(generated.output.contains("EC PARAMETERS"))
        let key = try PrivateKey(pemEncoded: generated.output)
        #expect(key.algorithmName == "EC" && key.bitSize == 256)
    }

    @Test("keys that cannot sign, and foreign formats, are .unsupported")
    func unsupported() throws {
        for algorithm in ["X25519", "X448"] {
            let generated = try CryptoTestKit.openssl(["genpkey", "-algorithm", algorithm])
            try #require(generated.status == 0, "\(generated.output)")
            #expect(throws: KeyError(.unsupported, "")) { try PrivateKey(pemEncoded: generated.output) }
            let der = try PEMDocument(pemEncoded: generated.output).derBytes
            #expect(throws: KeyError(.unsupported, "")) { try PrivateKey(derEncoded: der) }
        }
        let dsaLabel = PEMDocument(label: "DSA PRIVATE KEY", derBytes: [0x30, 0x00]).pemString
        #expect(throws: KeyError(.unsupported, "")) { try PrivateKey(pemEncoded: dsaLabel) }
    }

    @Test("matches a certificate whose SPKI encodes the same key differently")
    func matchesEquivalentEncoding() throws {
        let labKey = try LabKey.shared(.p256)
        let key = try PrivateKey(pemEncoded: try labKey.privateKeyPEM())
        let spki = try SubjectPublicKeyInfo(derEncoded: labKey.publicKeyInfoDER)
        guard case .ec(_, let point) = spki.key else {
            Issue.record("not an EC key")
            return
        }
        let compressed = [UInt8(point.last.map { $0 & 1 == 0 ? 2 : 3 } ?? 2)] + Array(point.dropFirst().prefix(32))
        let compressedSPKI = try SubjectPublicKeyInfo(
            derEncoded: try CryptoTestKit.ecSPKI(curveOID: "1.2.840.10045.3.1.7", point: compressed)
        )
        #expect(!compressedSPKI.derBytes.elementsEqual(key.publicKeyInfoDER))
        #expect(key.matches(compressedSPKI))
        let otherSPKI = try SubjectPublicKeyInfo(derEncoded: try LabKey.shared(.p256, slot: 1).publicKeyInfoDER)
        #expect(!key.matches(otherSPKI))
        let rsaSPKI = try SubjectPublicKeyInfo(derEncoded: try LabKey.shared(.rsa(bits: 2048)).publicKeyInfoDER)
        #expect(!key.matches(rsaSPKI))
    }

    /// A P-256 SEC 1 ECPrivateKey (traditional DER) whose trailing `publicKey` point is
    /// replaced by `transform` (the point is the last 65 bytes: 0x04 ‖ X ‖ Y).
    static func sec1(withPoint transform: ([UInt8]) throws -> [UInt8]) throws -> [UInt8] {
        var der = try LabKey.shared(.p256).privateKeyDER(format: .traditional)
        let start = der.count - 65
        try #require(der[start] == 0x04 && der[start - 3] == 0x03 && der[start - 2] == 0x42)
        let point = try transform(Array(der[start...]))
        try #require(point.count == 65)
        der.replaceSubrange(start..., with: point)
        return der
    }

    @Test("an EC key whose point is in X9.62 hybrid form gets an uncompressed SPKI (fuzz finding)")
    func hybridPointIsReencoded() throws {
        let der = try Self.sec1 { point in
            // Hybrid: 0x06 for an even Y, 0x07 for an odd one, then X ‖ Y.
            [point.last! & 1 == 0 ? 0x06 : 0x07] + point.dropFirst()
        }
        let key = try PrivateKey(derEncoded: der)
        let labKey = try LabKey.shared(.p256)
        #expect(key.publicKeyInfoDER == labKey.publicKeyInfoDER)
        let spki = try SubjectPublicKeyInfo(derEncoded: key.publicKeyInfoDER)
        #expect(key.matches(spki))
    }

    @Test("an EC key carrying another key's public point is .malformed")
    func mismatchedPointIsRefused() throws {
        let other = try LabKey.shared(.p256, slot: 1).publicKeyInfoDER
        let der = try Self.sec1 { _ in Array(other.suffix(65)) }
        #expect(throws: KeyError(.malformed, "")) { try PrivateKey(derEncoded: der) }
        do {
            _ = try PrivateKey(derEncoded: der)
        } catch {
            #expect(error.description.contains("does not match the private key"), "\(error)")
        }
    }

    @Test("an RSA key whose modulus is another key's is .malformed (n ≠ p·q)")
    func mismatchedRSAModulusIsRefused() throws {
        var der = try LabKey.shared(.rsa(bits: 2048)).privateKeyDER(format: .traditional)
        let other = try LabKey.shared(.rsa(bits: 2048), slot: 1).privateKeyDER(format: .traditional)
        // RSAPrivateKey: SEQUENCE (4-byte header), version (3 bytes), then n: 02 82 01 01 00 ‖ 256 bytes.
        let n = 7..<(7 + 4 + 257)
        try #require(der[n.lowerBound] == 0x02 && other[n.lowerBound] == 0x02 && der[n.lowerBound + 1] == 0x82)
        #expect(try PrivateKey(derEncoded: der).bitSize == 2048)
        der.replaceSubrange(n, with: other[n])
        #expect(throws: KeyError(.malformed, "")) { try PrivateKey(derEncoded: der) }
    }

    @Test("a multi-prime RSA key (RFC 8017 §3.2) passes the n = p·q·r check")
    func multiPrimeRSAKeyLoads() throws {
        let result = try CryptoTestKit.openssl([
            "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-pkeyopt", "rsa_keygen_primes:3",
        ])
        try #require(result.status == 0, "\(result.output)")
        let key = try PrivateKey(pemEncoded: result.output)
        #expect(key.bitSize == 2048)
    }

    @Test("KeyError descriptions and equality")
    func errors() {
        #expect(KeyError(.wrongPassword, "x").description == "key wrongPassword: x")
        #expect(KeyError(.malformed, "a") == KeyError(.malformed, "b"))
        #expect(KeyError(.malformed, "a") != KeyError(.unsupported, "a"))
    }
}
