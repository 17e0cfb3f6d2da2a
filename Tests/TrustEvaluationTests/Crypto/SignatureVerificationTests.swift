import CertificateParsing
import Foundation
import ServerTrustLab
import Testing
import TrustEvaluation

/// ``OpenSSLSignatureVerifier``: every supported algorithm against signatures OpenSSL made
/// (through ServerTrustLab), tampering, wrong keys and algorithms, PSS parameters, key
/// validation, and the Swift RSASSA-PKCS1-v1_5 comparison against crafted encoded messages
/// signed with the `openssl` CLI's raw RSA operation.
@Suite("Signature verification")
struct SignatureVerificationTests {
    /// No signature memo: every check here must reach libcrypto (the memo has its own suite).
    let verifier = OpenSSLSignatureVerifier(memo: nil)

    /// A key algorithm and a scheme it can sign with.
    struct Case: Sendable, CustomTestStringConvertible {
        let key: LabKeyAlgorithm
        let scheme: LabSignatureScheme
        init(_ key: LabKeyAlgorithm, _ scheme: LabSignatureScheme) {
            self.key = key
            self.scheme = scheme
        }
        var testDescription: String { "\(key) \(scheme)" }
    }

    static let cases: [Case] = [
        Case(.rsa(bits: 2048), .rsaPKCS1(.sha256)),
        Case(.rsa(bits: 2048), .rsaPKCS1(.sha384)),
        Case(.rsa(bits: 2048), .rsaPKCS1(.sha512)),
        // Weak digests still verify at this layer; policy decides whether they are allowed.
        Case(.rsa(bits: 2048), .rsaPKCS1(.sha1)),
        Case(.rsa(bits: 2048), .rsaPKCS1(.sha224)),
        Case(.rsa(bits: 2048), .rsaPKCS1(.md5)),
        Case(.rsa(bits: 3072), .rsaPKCS1(.sha256)),
        Case(.rsa(bits: 4096), .rsaPKCS1(.sha512)),
        Case(.rsa(bits: 2048), .rsaPSS(.sha256, saltLength: 32)),
        Case(.rsa(bits: 2048), .rsaPSS(.sha384, saltLength: 48)),
        Case(.rsa(bits: 2048), .rsaPSS(.sha512, saltLength: 64)),
        Case(.rsa(bits: 2048), .rsaPSS(.sha256, saltLength: 0)),
        Case(.rsa(bits: 2048), .rsaPSS(.sha1, saltLength: 20)),
        Case(.rsa(bits: 4096), .rsaPSS(.sha256, saltLength: 32)),
        Case(.p256, .ecdsa(.sha256)),
        Case(.p384, .ecdsa(.sha384)),
        Case(.p521, .ecdsa(.sha512)),
        // Any digest with any curve verifies (RFC 5480 §4 allows it; BR matching is policy).
        Case(.p384, .ecdsa(.sha256)),
        Case(.p256, .ecdsa(.sha512)),
        Case(.p521, .ecdsa(.sha1)),
        Case(.ed25519, .ed25519),
        Case(.ed448, .ed448),
    ]

    // MARK: - Every algorithm

    @Test("a self-signed certificate verifies, and tampering fails", arguments: cases)
    func certificateSignature(_ c: Case) throws {
        let labKey = try LabKey.shared(c.key)
        let certificate = try CryptoTestKit.selfSigned(labKey, scheme: c.scheme)
        let key = try verifier.makeKey(certificate.subjectPublicKeyInfo)
        #expect(verifier.check(certificate, signedBy: key) == .valid)
        #expect(key.algorithmName == certificate.subjectPublicKeyInfo.key.algorithmName)
        #expect(key.bitSize == certificate.subjectPublicKeyInfo.key.bitSize)

        let algorithm = certificate.signatureAlgorithm
        let signature = certificate.signature
        let tbs = certificate.tbsBytes
        // A flipped bit anywhere in the signed data.
        for position in [0, tbs.count / 2, tbs.count - 1] {
            var altered = Array(tbs)
            altered[position] ^= 0x01
            expectInvalid(signature, altered[...], algorithm, key, "data bit at \(position)")
        }
        // A flipped bit anywhere in the signature.
        for position in [0, 1, signature.count / 2, signature.count - 1] {
            var altered = Array(signature)
            altered[position] ^= 0x10
            expectInvalid(altered[...], tbs, algorithm, key, "signature bit at \(position)")
        }
        expectInvalid(signature.dropLast(), tbs, algorithm, key, "truncated signature")
        expectInvalid(Array(signature + [0])[...], tbs, algorithm, key, "signature with a trailing byte")
        expectInvalid([], tbs, algorithm, key, "empty signature")
    }

    /// Expects `signature` over `data` not to verify, whatever the reason.
    func expectInvalid(
        _ signature: ArraySlice<UInt8>,
        _ data: ArraySlice<UInt8>,
        _ algorithm: SignatureAlgorithm,
        _ key: VerificationKey,
        _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let result = verifier.check(signature: signature, over: data, algorithm: algorithm, key: key)
        #expect(!result.isValid, "\(what) verified", sourceLocation: sourceLocation)
    }

    @Test("arbitrary messages of every length class verify", arguments: cases)
    func messages(_ c: Case) throws {
        let labKey = try LabKey.shared(c.key)
        let algorithm = try CryptoTestKit.selfSigned(labKey, scheme: c.scheme).signatureAlgorithm
        let key = try verifier.makeKey(SubjectPublicKeyInfo(derEncoded: labKey.publicKeyInfoDER))
        var generator = CryptoTestKit.Generator(seed: 42)
        for length in [0, 1, 55, 64, 111, 128, 1000, 5000] {
            let message = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let signature = try c.scheme.sign(message, with: labKey)
            let result = verifier.check(signature: signature[...], over: message[...], algorithm: algorithm, key: key)
            #expect(result.isValid, "length \(length): \(result)")
        }
    }

    @Test("another key of the same type does not verify", arguments: cases)
    func wrongKey(_ c: Case) throws {
        let certificate = try CryptoTestKit.selfSigned(try LabKey.shared(c.key), scheme: c.scheme)
        let other = try verifier.makeKey(
            SubjectPublicKeyInfo(derEncoded: try LabKey.shared(c.key, slot: 1).publicKeyInfoDER)
        )
        let result = verifier.check(certificate, signedBy: other)
        #expect(result == .invalid(SignatureError(.badSignature, "")), "\(result)")
    }

    @Test(
        "a Lab web PKI chain verifies link by link",
        arguments: [LabKeyAlgorithm.rsa(bits: 2048), .p256, .p384, .ed25519]
    )
    func chain(_ algorithm: LabKeyAlgorithm) throws {
        let pki = try LabPKI.webChain(host: "www.example.test", algorithm: algorithm)
        let root = try Certificate(derEncoded: pki.root.der)
        let intermediate = try Certificate(derEncoded: pki.intermediate.der)
        let leaf = try Certificate(derEncoded: pki.leaf.der)
        let rootKey = try verifier.makeKey(root.subjectPublicKeyInfo)
        let intermediateKey = try verifier.makeKey(intermediate.subjectPublicKeyInfo)
        #expect(verifier.check(root, signedBy: rootKey).isValid)
        #expect(verifier.check(intermediate, signedBy: rootKey).isValid)
        #expect(verifier.check(leaf, signedBy: intermediateKey).isValid)
        #expect(!verifier.check(leaf, signedBy: rootKey).isValid)
        #expect(!verifier.check(intermediate, signedBy: intermediateKey).isValid)
    }

    // MARK: - Algorithm and key mismatches

    @Test("a signature algorithm that does not fit the key is a failure, not a crash")
    func algorithmMismatch() throws {
        let rsa = try verifier.makeKey(
            SubjectPublicKeyInfo(derEncoded: try LabKey.shared(.rsa(bits: 2048)).publicKeyInfoDER)
        )
        let p256 = try verifier.makeKey(SubjectPublicKeyInfo(derEncoded: try LabKey.shared(.p256).publicKeyInfoDER))
        let ed25519 = try verifier.makeKey(
            SubjectPublicKeyInfo(derEncoded: try LabKey.shared(.ed25519).publicKeyInfoDER)
        )
        let ed448 = try verifier.makeKey(SubjectPublicKeyInfo(derEncoded: try LabKey.shared(.ed448).publicKeyInfoDER))
        let pss = try CryptoTestKit.selfSigned(
            try LabKey.shared(.rsa(bits: 2048)),
            scheme: .rsaPSS(.sha256, saltLength: 32)
        ).signatureAlgorithm
        let pairs: [(SignatureAlgorithm, VerificationKey)] = [
            (.ecdsa(.sha256), rsa), (.ed25519, rsa), (.rsaPKCS1(.sha256), p256), (pss, p256), (.ed25519, p256),
            (.ed25519, ed448), (.ed448, ed25519), (.ecdsa(.sha256), ed25519), (.rsaPKCS1(.sha256), ed448),
        ]
        let signature = [UInt8](repeating: 0x42, count: 256)[...]
        for (algorithm, key) in pairs {
            let result = verifier.check(signature: signature, over: [1, 2, 3], algorithm: algorithm, key: key)
            #expect(result == .invalid(SignatureError(.algorithmMismatch, "")), "\(algorithm) with \(key): \(result)")
        }
    }

    @Test("an unknown signature algorithm never verifies")
    func unknownAlgorithm() throws {
        // dsa-with-SHA256 (RFC 5758 §3.1): parsed as .other.
        let labKey = try LabKey.shared(.rsa(bits: 2048))
        let certificate = try CryptoTestKit.certificate(
            algorithmIdentifierDER: LabDER.sequence([try LabDER.oid("2.16.840.1.101.3.4.3.2")]),
            signedWith: labKey,
            scheme: .rsaPKCS1(.sha256)
        )
        guard case .other = certificate.signatureAlgorithm else {
            Issue.record("expected .other, got \(certificate.signatureAlgorithm)")
            return
        }
        let key = try verifier.makeKey(certificate.subjectPublicKeyInfo)
        #expect(verifier.check(certificate, signedBy: key) == .invalid(SignatureError(.unsupportedAlgorithm, "")))
    }

    // MARK: - RSASSA-PSS parameters

    /// The certificate claims `claimed` parameters; the signature was made with `signedWith`.
    struct PSSCase: Sendable, CustomTestStringConvertible {
        let name: String
        let claimedHash: LabDigest
        let claimedMGF1: LabDigest
        let claimedSalt: Int
        let signedWith: LabSignatureScheme
        let valid: Bool
        var testDescription: String { name }
    }

    static let pssCases: [PSSCase] = [
        PSSCase(
            name: "parameters as signed",
            claimedHash: .sha256,
            claimedMGF1: .sha256,
            claimedSalt: 32,
            signedWith: .rsaPSS(.sha256, saltLength: 32),
            valid: true
        ),
        PSSCase(
            name: "salt length 20 claimed, 32 used",
            claimedHash: .sha256,
            claimedMGF1: .sha256,
            claimedSalt: 20,
            signedWith: .rsaPSS(.sha256, saltLength: 32),
            valid: false
        ),
        PSSCase(
            name: "salt length 33 claimed, 32 used",
            claimedHash: .sha256,
            claimedMGF1: .sha256,
            claimedSalt: 33,
            signedWith: .rsaPSS(.sha256, saltLength: 32),
            valid: false
        ),
        PSSCase(
            name: "salt length 32 claimed, 0 used",
            claimedHash: .sha256,
            claimedMGF1: .sha256,
            claimedSalt: 32,
            signedWith: .rsaPSS(.sha256, saltLength: 0),
            valid: false
        ),
        PSSCase(
            name: "MGF1-SHA-1 claimed, MGF1-SHA-256 used",
            claimedHash: .sha256,
            claimedMGF1: .sha1,
            claimedSalt: 32,
            signedWith: .rsaPSS(.sha256, saltLength: 32),
            valid: false
        ),
        PSSCase(
            name: "MGF1-SHA-384 claimed, MGF1-SHA-256 used",
            claimedHash: .sha256,
            claimedMGF1: .sha384,
            claimedSalt: 32,
            signedWith: .rsaPSS(.sha256, saltLength: 32),
            valid: false
        ),
        PSSCase(
            name: "SHA-384 claimed, SHA-256 used",
            claimedHash: .sha384,
            claimedMGF1: .sha256,
            claimedSalt: 32,
            signedWith: .rsaPSS(.sha256, saltLength: 32),
            valid: false
        ),
        PSSCase(
            name: "PKCS #1 v1.5 signature under a PSS identifier",
            claimedHash: .sha256,
            claimedMGF1: .sha256,
            claimedSalt: 32,
            signedWith: .rsaPKCS1(.sha256),
            valid: false
        ),
    ]

    @Test("RSASSA-PSS parameters are enforced exactly", arguments: pssCases)
    func pssParameters(_ c: PSSCase) throws {
        let labKey = try LabKey.shared(.rsa(bits: 2048))
        func hashID(_ digest: LabDigest) throws -> [UInt8] {
            LabDER.sequence([try LabDER.oid(digest.oid), LabDER.null()])
        }
        // RFC 4055 §3.1 RSASSA-PSS-params with every field explicit (the parser accepts
        // explicit defaults, so the SHA-1 MGF1 case is expressible).
        let parameters = LabDER.sequence([
            LabDER.explicit(0, try hashID(c.claimedHash)),
            LabDER.explicit(1, LabDER.sequence([try LabDER.oid("1.2.840.113549.1.1.8"), try hashID(c.claimedMGF1)])),
            LabDER.explicit(2, LabDER.integer(c.claimedSalt)),
        ])
        let identifier = LabDER.sequence([try LabDER.oid("1.2.840.113549.1.1.10"), parameters])
        let certificate = try CryptoTestKit.certificate(
            algorithmIdentifierDER: identifier,
            signedWith: labKey,
            scheme: c.signedWith
        )
        guard case .rsaPSS(let parsed) = certificate.signatureAlgorithm else {
            Issue.record("expected .rsaPSS, got \(certificate.signatureAlgorithm)")
            return
        }
        #expect(parsed.saltLength == c.claimedSalt)
        let key = try verifier.makeKey(certificate.subjectPublicKeyInfo)
        let result = verifier.check(certificate, signedBy: key)
        #expect(result.isValid == c.valid, "\(result)")
        if !c.valid { #expect(result == .invalid(SignatureError(.badSignature, ""))) }
    }

    // MARK: - Key validation

    struct KeyCase: Sendable, CustomTestStringConvertible {
        let name: String
        let spki: @Sendable () throws -> [UInt8]
        let expected: SignatureError.Code?
        var testDescription: String { name }
    }

    static let keyCases: [KeyCase] = [
        KeyCase(name: "RSA 512 bits (the floor)", spki: { try CryptoTestKit.rsaSPKI(bits: 512) }, expected: nil),
        KeyCase(name: "RSA 511 bits", spki: { try CryptoTestKit.rsaSPKI(bits: 511) }, expected: .keySizeOutOfRange),
        KeyCase(name: "RSA 504 bits", spki: { try CryptoTestKit.rsaSPKI(bits: 504) }, expected: .keySizeOutOfRange),
        KeyCase(name: "RSA 16384 bits (the ceiling)", spki: { try CryptoTestKit.rsaSPKI(bits: 16384) }, expected: nil),
        KeyCase(name: "RSA 16392 bits", spki: { try CryptoTestKit.rsaSPKI(bits: 16392) }, expected: .keySizeOutOfRange),
        KeyCase(
            name: "RSA even modulus",
            spki: { try CryptoTestKit.rsaSPKI(bits: 2048, odd: false) },
            expected: .invalidKey
        ),
        KeyCase(
            name: "RSA exponent 1",
            spki: { try CryptoTestKit.rsaSPKI(bits: 2048, exponent: [1]) },
            expected: .invalidKey
        ),
        KeyCase(
            name: "RSA exponent 65536",
            spki: { try CryptoTestKit.rsaSPKI(bits: 2048, exponent: [1, 0, 0]) },
            expected: .invalidKey
        ),
        KeyCase(name: "RSA exponent 3", spki: { try CryptoTestKit.rsaSPKI(bits: 2048, exponent: [3]) }, expected: nil),
        KeyCase(
            name: "RSA 64-bit exponent",
            spki: { try CryptoTestKit.rsaSPKI(bits: 2048, exponent: [0x80, 0, 0, 0, 0, 0, 0, 1]) },
            expected: nil
        ),
        KeyCase(
            name: "RSA 65-bit exponent",
            spki: { try CryptoTestKit.rsaSPKI(bits: 2048, exponent: [1, 0, 0, 0, 0, 0, 0, 0, 1]) },
            expected: .invalidKey
        ),
        KeyCase(
            name: "P-256 point off the curve",
            spki: { try CryptoTestKit.alteredECPoint(.p256) },
            expected: .invalidKey
        ),
        KeyCase(
            name: "P-384 point off the curve",
            spki: { try CryptoTestKit.alteredECPoint(.p384) },
            expected: .invalidKey
        ),
        KeyCase(
            name: "secp256k1 key",
            spki: { try CryptoTestKit.ecSPKI(curveOID: "1.3.132.0.10", point: [4] + [UInt8](repeating: 1, count: 64)) },
            expected: .unsupportedKey
        ),
        KeyCase(
            name: "DSA key",
            spki: {
                let parameters = LabDER.sequence([LabDER.integer(23), LabDER.integer(11), LabDER.integer(4)])
                return LabDER.sequence([
                    LabDER.sequence([try LabDER.oid("1.2.840.10040.4.1"), parameters]),
                    LabDER.bitString(LabDER.integer(9)),
                ])
            },
            expected: .unsupportedKey
        ),
        KeyCase(
            name: "id-RSASSA-PSS key (RFC 4055 §1.2)",
            spki: {
                let directory = try CryptoTestKit.TemporaryDirectory()
                let keyPath = directory.path("pss.pem")
                let publicPath = directory.path("pss.pub.pem")
                _ = try CryptoTestKit.openssl([
                    "genpkey", "-algorithm", "RSA-PSS", "-pkeyopt", "rsa_keygen_bits:1024", "-out", keyPath,
                ])
                _ = try CryptoTestKit.openssl(["pkey", "-in", keyPath, "-pubout", "-out", publicPath])
                let pem = String(decoding: FileManager.default.contents(atPath: publicPath) ?? Data(), as: UTF8.self)
                return try PEMDocument(pemEncoded: pem).derBytes
            },
            expected: .unsupportedKey
        ),
    ]

    @Test("key validation", arguments: keyCases)
    func keyValidation(_ c: KeyCase) throws {
        let spki = try SubjectPublicKeyInfo(derEncoded: try c.spki())
        do {
            let key = try verifier.makeKey(spki)
            #expect(c.expected == nil, "built \(key), expected \(String(describing: c.expected))")
        } catch {
            #expect(error.code == c.expected, "\(error)")
            #expect(!error.reason.isEmpty)
        }
    }

    @Test("a compressed P-256 point works like the uncompressed one")
    func compressedPoint() throws {
        let labKey = try LabKey.shared(.p256)
        let certificate = try CryptoTestKit.selfSigned(labKey, scheme: .ecdsa(.sha256))
        guard case .ec(_, let point) = certificate.subjectPublicKeyInfo.key else {
            Issue.record("not an EC key")
            return
        }
        let x = Array(point.dropFirst().prefix(32))
        let y = Array(point.suffix(32))
        let compressed = [UInt8(y[31] & 1 == 0 ? 2 : 3)] + x
        let key = try verifier.makeKey(
            SubjectPublicKeyInfo(
                derEncoded: try CryptoTestKit.ecSPKI(curveOID: "1.2.840.10045.3.1.7", point: compressed)
            )
        )
        #expect(verifier.check(certificate, signedBy: key).isValid)
    }

    // MARK: - ECDSA through EC_KEY and through EVP_PKEY

    /// Signature encodings derived from a valid one; a DER `ECDSA-Sig-Value` must be exact.
    static func ecdsaVariants(_ signature: [UInt8]) -> [(String, [UInt8])] {
        var variants: [(String, [UInt8])] = [("as signed", signature)]
        for index in signature.indices {
            var flipped = signature
            flipped[index] ^= 0x01
            variants.append(("bit 0 of byte \(index) flipped", flipped))
        }
        variants.append(("a trailing zero byte", signature + [0]))
        variants.append(("the last byte dropped", Array(signature.dropLast())))
        variants.append(("empty SEQUENCE", [0x30, 0x00]))
        // r with a superfluous leading zero: the same integers, not DER (X.690 §8.3.2).
        if signature.count > 4, signature[0] == 0x30, signature[1] < 0x80, signature[2] == 0x02, signature[3] < 0x7F {
            let r = signature[4..<(4 + Int(signature[3]))]
            let rest = signature[(4 + Int(signature[3]))...]
            let padded = [0x30, signature[1] + 1, 0x02, signature[3] + 1, 0x00] + r + rest
            variants.append(("r with a leading zero", Array(padded)))
        }
        // The length in long form: BER, never DER.
        if signature.count > 2, signature[1] < 0x80 {
            variants.append(("long-form length", [0x30, 0x81] + signature[1...]))
        }
        return variants
    }

    @Test(
        "ECDSA: the EC_KEY path is in use and gives the EVP_PKEY path's verdict on every encoding",
        arguments: [Case(.p256, .ecdsa(.sha256)), Case(.p384, .ecdsa(.sha384)), Case(.p521, .ecdsa(.sha512))]
    )
    func ecdsaBackendsAgree(_ c: Case) throws {
        let certificate = try CryptoTestKit.selfSigned(try LabKey.shared(c.key), scheme: c.scheme)
        let direct = try verifier.makeKey(certificate.subjectPublicKeyInfo)
        let evp = try VerificationKey(certificate.subjectPublicKeyInfo, ecdsaBackend: .evp)
        // Debian's OpenSSL 3.0 keeps the deprecated API and runs without FIPS, so the fast
        // path must be the one chosen; a silent fallback would show here.
        #expect(direct.ecdsaBackend == .ecKey)
        #expect(evp.ecdsaBackend == .evp)
        var accepted = 0
        for (name, signature) in Self.ecdsaVariants(Array(certificate.signature)) {
            let viaECKey = verifier.verify(
                signature: signature[...], over: certificate.tbsBytes, algorithm: certificate.signatureAlgorithm, key: direct)
            let viaEVP = verifier.verify(
                signature: signature[...], over: certificate.tbsBytes, algorithm: certificate.signatureAlgorithm, key: evp)
            #expect(viaECKey == viaEVP, "\(name): EC_KEY \(viaECKey), EVP \(viaEVP)")
            if viaECKey { accepted += 1 }
        }
        // Only the signature as made verifies (a flipped bit in a padding-free DER integer
        // changes the value or the encoding).
        #expect(accepted == 1)
    }

    @Test("ECDSA: a point off the curve is rejected on both paths")
    func ecdsaBackendsRejectOffCurvePoint() throws {
        let spki = try SubjectPublicKeyInfo(derEncoded: try CryptoTestKit.alteredECPoint(.p256))
        for backend in [ECDSABackend.ecKey, .evp] {
            do {
                let key = try VerificationKey(spki, ecdsaBackend: backend)
                Issue.record("\(backend): built \(key) from a point off the curve")
            } catch {
                #expect(error.code == .invalidKey, "\(backend): \(error)")
            }
        }
    }

    // MARK: - RSASSA-PKCS1-v1_5 against OpenSSL

    /// How a crafted encoded message departs from EMSA-PKCS1-v1_5 (RFC 8017 §9.2).
    struct EMCase: Sendable, CustomTestStringConvertible {
        let name: String
        let valid: Bool
        /// Builds EM from k and the SHA-256 of the message.
        let build: @Sendable (_ k: Int, _ hash: [UInt8]) -> [UInt8]
        var testDescription: String { name }
    }

    static let sha256Prefix: [UInt8] = [
        0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04,
        0x20,
    ]

    static func em(
        _ k: Int,
        _ t: [UInt8],
        blockType: UInt8 = 1,
        filler: UInt8 = 0xFF,
        lead: UInt8 = 0,
        separator: UInt8 = 0
    ) -> [UInt8] {
        [lead, blockType] + [UInt8](repeating: filler, count: k - t.count - 3) + [separator] + t
    }

    static let emCases: [EMCase] = [
        EMCase(name: "well-formed", valid: true) { k, h in em(k, sha256Prefix + h) },
        EMCase(name: "block type 2", valid: false) { k, h in em(k, sha256Prefix + h, blockType: 2) },
        EMCase(name: "leading byte 1", valid: false) { k, h in em(k, sha256Prefix + h, lead: 1) },
        EMCase(name: "one padding byte 0xFE", valid: false) { k, h in
            var e = em(k, sha256Prefix + h)
            e[10] = 0xFE
            return e
        },
        EMCase(name: "no 0x00 separator", valid: false) { k, h in em(k, sha256Prefix + h, separator: 0xFF) },
        EMCase(name: "garbage after the hash (Bleichenbacher 2006)", valid: false) { k, h in
            em(k, sha256Prefix + h + [0x00, 0x01, 0x02, 0x03])
        },
        EMCase(name: "DigestInfo without NULL parameters", valid: false) { k, h in
            let noNull: [UInt8] = [
                0x30, 0x2f, 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x04, 0x20,
            ]
            return em(k, noNull + h)
        },
        EMCase(name: "SHA-384 OID over a SHA-256 hash", valid: false) { k, h in
            var prefix = sha256Prefix
            prefix[14] = 0x02
            return em(k, prefix + h)
        },
        EMCase(name: "last hash byte changed", valid: false) { k, h in em(k, sha256Prefix + h.dropLast() + [h[31] ^ 1])
        },
        EMCase(name: "bare hash, no DigestInfo", valid: false) { k, h in em(k, h) },
        EMCase(name: "separator after 7 padding bytes, filler before the DigestInfo", valid: false) { k, h in
            [0, 1] + [UInt8](repeating: 0xFF, count: 7) + [0] + [UInt8](repeating: 0x41, count: k - 10 - 51)
                + sha256Prefix + h
        },
    ]

    @Test("crafted PKCS #1 v1.5 encodings: same verdict as OpenSSL", arguments: emCases)
    func craftedEncodings(_ c: EMCase) throws {
        let labKey = try LabKey.shared(.rsa(bits: 2048))
        let directory = try CryptoTestKit.TemporaryDirectory()
        let keyPath = try directory.write(Array(try labKey.privateKeyPEM().utf8), named: "key.pem")
        let publicPath = try directory.write(
            Array(LabPEM.encode(labKey.publicKeyInfoDER, label: "PUBLIC KEY").utf8),
            named: "pub.pem"
        )
        let message = Array("crafted \(c.name)".utf8)
        let messagePath = try directory.write(message, named: "message.bin")
        let encoded = c.build(256, SHA256.hash(message))
        #expect(encoded.count == 256)
        let emPath = try directory.write(encoded, named: "em.bin")
        let signaturePath = directory.path("signature.bin")
        // The raw RSA private operation, signature = EM^d mod n: `pkeyutl -sign` refuses
        // inputs longer than a digest, but an unpadded "decryption" is the same operation.
        let signed = try CryptoTestKit.openssl([
            "pkeyutl", "-decrypt", "-inkey", keyPath, "-pkeyopt", "rsa_padding_mode:none", "-in", emPath, "-out",
            signaturePath,
        ])
        try #require(signed.status == 0, "\(signed.output)")
        let signature = try #require(FileManager.default.contents(atPath: signaturePath).map { Array($0) })

        let key = try verifier.makeKey(SubjectPublicKeyInfo(derEncoded: labKey.publicKeyInfoDER))
        let ours = verifier.check(
            signature: signature[...],
            over: message[...],
            algorithm: .rsaPKCS1(.sha256),
            key: key
        )
        let theirs = try CryptoTestKit.openssl([
            "dgst", "-sha256", "-verify", publicPath, "-signature", signaturePath, messagePath,
        ])
        #expect(ours.isValid == c.valid, "\(ours)")
        #expect((theirs.status == 0) == c.valid, "openssl: \(theirs.output)")
    }

    @Test("1000 OpenSSL signatures verify and 3000 corruptions of them do not")
    func randomizedAgainstOpenSSL() throws {
        let labKey = try LabKey.shared(.rsa(bits: 2048))
        let key = try verifier.makeKey(SubjectPublicKeyInfo(derEncoded: labKey.publicKeyInfoDER))
        var generator = CryptoTestKit.Generator(seed: 7)
        let digests: [LabDigest] = [.sha1, .sha256, .sha384, .sha512]
        for round in 0..<1000 {
            let digest = digests[round % digests.count]
            let algorithm = SignatureAlgorithm.rsaPKCS1(CryptoTestKit.digestAlgorithm(digest))
            let message = (0..<Int(generator.next() % 700)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let signature = try LabSignatureScheme.rsaPKCS1(digest).sign(message, with: labKey)
            let result = verifier.check(signature: signature[...], over: message[...], algorithm: algorithm, key: key)
            #expect(result.isValid, "round \(round): \(result)")
            for _ in 0..<3 {
                var corrupted = signature
                let index = Int(generator.next() % UInt64(corrupted.count))
                corrupted[index] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
                let verified = verifier.verify(
                    signature: corrupted[...],
                    over: message[...],
                    algorithm: algorithm,
                    key: key
                )
                #expect(!verified, "round \(round), byte \(index)")
            }
        }
    }

    @Test("RSA signatures out of range or of the wrong length are rejected")
    func rsaRangeAndLength() throws {
        let labKey = try LabKey.shared(.rsa(bits: 2048))
        let spki = try SubjectPublicKeyInfo(derEncoded: labKey.publicKeyInfoDER)
        let key = try verifier.makeKey(spki)
        guard case .rsa(let modulus, _) = spki.key else {
            Issue.record("not RSA")
            return
        }
        let message: [UInt8] = [1, 2, 3]
        // s = n and s = 2^2048 - 1 are >= n (RFC 8017 §5.2.2 step 1).
        for signature in [Array(modulus), [UInt8](repeating: 0xFF, count: 256)] {
            #expect(
                verifier.check(signature: signature[...], over: message[...], algorithm: .rsaPKCS1(.sha256), key: key)
                    == .invalid(SignatureError(.badSignature, ""))
            )
        }
        #expect(
            verifier.check(
                signature: [UInt8](repeating: 0, count: 256)[...],
                over: message[...],
                algorithm: .rsaPKCS1(.sha256),
                key: key
            )
                == .invalid(SignatureError(.badSignature, ""))
        )
        for length in [0, 128, 255, 257, 512] {
            #expect(
                verifier.check(
                    signature: [UInt8](repeating: 1, count: length)[...],
                    over: message[...],
                    algorithm: .rsaPKCS1(.sha256),
                    key: key
                )
                    == .invalid(SignatureError(.malformedSignature, "")),
                "length \(length)"
            )
        }
    }

    @Test("a signature with its leading zero byte stripped is malformed (OpenSSL would accept it)")
    func strippedLeadingZero() throws {
        let labKey = try LabKey.shared(.rsa(bits: 2048))
        let key = try verifier.makeKey(SubjectPublicKeyInfo(derEncoded: labKey.publicKeyInfoDER))
        for attempt in 0..<4000 {
            let message = Array("leading zero \(attempt)".utf8)
            let signature = try LabSignatureScheme.rsaPKCS1(.sha256).sign(message, with: labKey)
            guard signature.first == 0 else { continue }
            let full = verifier.verify(
                signature: signature[...],
                over: message[...],
                algorithm: .rsaPKCS1(.sha256),
                key: key
            )
            #expect(full)
            #expect(
                verifier.check(
                    signature: signature.dropFirst(),
                    over: message[...],
                    algorithm: .rsaPKCS1(.sha256),
                    key: key
                )
                    == .invalid(SignatureError(.malformedSignature, ""))
            )
            return
        }
        Issue.record("no signature with a leading zero byte in 4000 attempts")
    }

    @Test("SHA-512 PKCS #1 v1.5 needs more than a 512-bit modulus (RFC 8017 §9.2 step 3)")
    func modulusTooShortForDigest() throws {
        let labKey = try LabKey.shared(.rsa(bits: 512))
        let key = try verifier.makeKey(SubjectPublicKeyInfo(derEncoded: labKey.publicKeyInfoDER))
        let message: [UInt8] = [9, 9, 9]
        let sha256 = try LabSignatureScheme.rsaPKCS1(.sha256).sign(message, with: labKey)
        let valid = verifier.verify(signature: sha256[...], over: message[...], algorithm: .rsaPKCS1(.sha256), key: key)
        #expect(valid)
        let result = verifier.check(signature: sha256[...], over: message[...], algorithm: .rsaPKCS1(.sha512), key: key)
        #expect(result == .invalid(SignatureError(.badSignature, "")), "\(result)")
    }

    // MARK: - Concurrency and errors

    @Test("one key is used from many tasks at once")
    func concurrentUse() async throws {
        var jobs: [(VerificationKey, SignatureAlgorithm, [UInt8], [UInt8])] = []
        for c in [
            Case(.rsa(bits: 2048), .rsaPKCS1(.sha256)), Case(.rsa(bits: 2048), .rsaPSS(.sha256, saltLength: 32)),
            Case(.p256, .ecdsa(.sha256)), Case(.ed25519, .ed25519),
        ] {
            let labKey = try LabKey.shared(c.key)
            let certificate = try CryptoTestKit.selfSigned(labKey, scheme: c.scheme)
            // A fresh key, so the lazily built RSASSA-PSS EVP_PKEY is raced for as well.
            let key = try verifier.makeKey(certificate.subjectPublicKeyInfo)
            jobs.append(
                (key, certificate.signatureAlgorithm, Array(certificate.signature), Array(certificate.tbsBytes))
            )
        }
        let verifier = self.verifier
        let failures = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                let job = jobs[worker % jobs.count]
                group.addTask {
                    var failures = 0
                    for _ in 0..<40
                    where !verifier.verify(signature: job.2[...], over: job.3[...], algorithm: job.1, key: job.0) {
                        failures += 1
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)

        // Keys are also built concurrently (the EC path copies one shared curve template).
        let spkis = try [LabKeyAlgorithm.p256, .p384, .rsa(bits: 2048), .ed448].map {
            try SubjectPublicKeyInfo(derEncoded: try LabKey.shared($0).publicKeyInfoDER)
        }
        let built = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                let spki = spkis[worker % spkis.count]
                group.addTask {
                    var count = 0
                    for _ in 0..<50 where (try? verifier.makeKey(spki)) != nil { count += 1 }
                    return count
                }
            }
            return await group.reduce(0, +)
        }
        #expect(built == 400)
    }

    @Test("error descriptions are one grep-friendly line")
    func descriptions() {
        #expect(SignatureError(.badSignature, "x").description == "signature badSignature: x")
        #expect(SignatureCheckResult.valid.description == "valid")
        #expect(OpenSSLError(operation: "EVP_Foo").description == "EVP_Foo failed: no OpenSSL error reported")
        #expect(SignatureError(.badSignature, "a") == SignatureError(.badSignature, "b"))
    }
}

/// Helpers shared by this target's crypto and key tests (namespaced so they cannot clash with
/// other suites in the target).
enum CryptoTestKit {
    /// A minimal self-signed v3 certificate signed with `scheme`.
    static func selfSigned(_ key: LabKey, scheme: LabSignatureScheme) throws -> Certificate {
        try certificate(algorithmIdentifierDER: try scheme.algorithmIdentifierDER, signedWith: key, scheme: scheme)
    }

    /// A minimal certificate for `key` whose inner and outer signature algorithm are
    /// `algorithmIdentifierDER`, signed (whatever the identifier claims) with `scheme`.
    static func certificate(
        algorithmIdentifierDER: [UInt8],
        signedWith key: LabKey,
        scheme: LabSignatureScheme
    ) throws -> Certificate {
        let name = try LabName([("CN", "crypto test \(key.algorithm)")]).derEncoded()
        let tbs = LabDER.sequence([
            LabDER.explicit(0, LabDER.integer(2)),
            LabDER.integer(1),
            algorithmIdentifierDER,
            name,
            LabDER.sequence([try LabDER.time(LabClock.reference - 86400), try LabDER.time(LabClock.reference + 86400)]),
            name,
            key.publicKeyInfoDER,
        ])
        let der = try LabCertificate.sign(
            tbsDER: tbs,
            algorithmIdentifierDER: algorithmIdentifierDER,
            with: key,
            scheme: scheme
        )
        return try Certificate(derEncoded: der)
    }

    /// An RSA SubjectPublicKeyInfo with a modulus of exactly `bits` bits (not a real key).
    static func rsaSPKI(bits: Int, odd: Bool = true, exponent: [UInt8] = [1, 0, 1]) throws -> [UInt8] {
        var generator = Generator(seed: UInt64(bits))
        var modulus = (0..<((bits + 7) / 8)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let topBits = bits % 8 == 0 ? 8 : bits % 8
        modulus[0] = (modulus[0] & UInt8((1 << topBits) - 1)) | UInt8(1 << (topBits - 1))
        modulus[modulus.count - 1] = odd ? modulus[modulus.count - 1] | 1 : modulus[modulus.count - 1] & 0xFE
        let rsaPublicKey = LabDER.sequence([
            LabDER.integer(unsignedBigEndian: modulus), LabDER.integer(unsignedBigEndian: exponent),
        ])
        return LabDER.sequence([
            LabDER.sequence([try LabDER.oid("1.2.840.113549.1.1.1"), LabDER.null()]),
            LabDER.bitString(rsaPublicKey),
        ])
    }

    /// An EC SubjectPublicKeyInfo on the named curve `curveOID`.
    static func ecSPKI(curveOID: String, point: [UInt8]) throws -> [UInt8] {
        LabDER.sequence([
            LabDER.sequence([try LabDER.oid("1.2.840.10045.2.1"), try LabDER.oid(curveOID)]),
            LabDER.bitString(point),
        ])
    }

    /// A real key's SPKI with the point's last byte changed, which takes it off the curve.
    static func alteredECPoint(_ algorithm: LabKeyAlgorithm) throws -> [UInt8] {
        var der = try LabKey.shared(algorithm).publicKeyInfoDER
        der[der.count - 1] ^= 0x01
        return der
    }

    static func digestAlgorithm(_ digest: LabDigest) -> DigestAlgorithm {
        switch digest {
        case .md5: return .md5
        case .sha1: return .sha1
        case .sha224: return .sha224
        case .sha256: return .sha256
        case .sha384: return .sha384
        case .sha512: return .sha512
        }
    }

    /// Lower-case hex.
    static func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        bytes.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }

    /// A deterministic generator (SplitMix64), so failures reproduce.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// The result of one `openssl` run.
    struct CLIResult {
        var status: Int32
        var output: String
    }

    /// Runs `/usr/bin/openssl` with `arguments`; stdout and stderr are returned together.
    static func openssl(_ arguments: [String]) throws -> CLIResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIResult(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// A directory under the system temporary directory, removed when released.
    final class TemporaryDirectory {
        let url: URL

        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent(
                "trust-evaluation-crypto-\(UUID().uuidString)"
            )
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        func path(_ name: String) -> String { url.appendingPathComponent(name).path }

        func write(_ bytes: [UInt8], named name: String) throws -> String {
            let path = path(name)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }
    }
}
