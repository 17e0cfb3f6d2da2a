import ServerTrustLab
import Testing

/// Certificate assembly and signing: every scheme verifies with `openssl verify`, and
/// odd field values come out exactly as specified.
@Suite struct LabCertificateTests {
    struct SchemeCase: Sendable, CustomTestStringConvertible {
        var scheme: LabSignatureScheme
        var key: LabKeyAlgorithm
        var textName: [String]
        var testDescription: String { "\(scheme) with \(key)" }
    }

    static let schemes: [SchemeCase] = [
        SchemeCase(scheme: .rsaPKCS1(.md5), key: .rsa(bits: 2048), textName: ["md5WithRSAEncryption"]),
        SchemeCase(scheme: .rsaPKCS1(.sha1), key: .rsa(bits: 2048), textName: ["sha1WithRSAEncryption"]),
        SchemeCase(scheme: .rsaPKCS1(.sha224), key: .rsa(bits: 2048), textName: ["sha224WithRSAEncryption"]),
        SchemeCase(scheme: .rsaPKCS1(.sha256), key: .rsa(bits: 2048), textName: ["sha256WithRSAEncryption"]),
        SchemeCase(scheme: .rsaPKCS1(.sha384), key: .rsa(bits: 2048), textName: ["sha384WithRSAEncryption"]),
        SchemeCase(scheme: .rsaPKCS1(.sha512), key: .rsa(bits: 2048), textName: ["sha512WithRSAEncryption"]),
        SchemeCase(
            scheme: .rsaPSS(.sha256, saltLength: 32), key: .rsa(bits: 2048),
            textName: ["rsassaPss", "Hash Algorithm: sha256", "Mask Algorithm: mgf1 with sha256", "Salt Length: 0x20"]),
        SchemeCase(
            scheme: .rsaPSS(.sha1, saltLength: 20), key: .rsa(bits: 2048),
            textName: ["rsassaPss", "Hash Algorithm: sha1 (default)", "Salt Length: 0x14 (default)"]),
        SchemeCase(
            scheme: .rsaPSS(.sha384, saltLength: 48), key: .rsa(bits: 2048),
            textName: ["rsassaPss", "Hash Algorithm: sha384", "Mask Algorithm: mgf1 with sha384", "Salt Length: 0x30"]),
        SchemeCase(
            scheme: .rsaPSS(.sha512, saltLength: 0), key: .rsa(bits: 2048),
            textName: ["rsassaPss", "Hash Algorithm: sha512", "Salt Length: 0x00"]),
        SchemeCase(scheme: .ecdsa(.sha1), key: .p256, textName: ["ecdsa-with-SHA1"]),
        SchemeCase(scheme: .ecdsa(.sha224), key: .p256, textName: ["ecdsa-with-SHA224"]),
        SchemeCase(scheme: .ecdsa(.sha256), key: .p256, textName: ["ecdsa-with-SHA256"]),
        SchemeCase(scheme: .ecdsa(.sha384), key: .p384, textName: ["ecdsa-with-SHA384"]),
        SchemeCase(scheme: .ecdsa(.sha512), key: .p521, textName: ["ecdsa-with-SHA512"]),
        SchemeCase(scheme: .ed25519, key: .ed25519, textName: ["Signature Algorithm: ED25519"]),
        SchemeCase(scheme: .ed448, key: .ed448, textName: ["Signature Algorithm: ED448"]),
    ]

    /// A CA whose key has `algorithm`, for signing test leaves.
    static func ca(_ algorithm: LabKeyAlgorithm) throws -> LabIssuer {
        let key = try LabKey.shared(algorithm, slot: 10)
        let spec = LabCertificateSpec(
            subject: LabName([("O", "Lab Tests"), ("CN", "Scheme CA \(algorithm)")]),
            notBefore: LabClock.reference - LabClock.year, notAfter: LabClock.reference + LabClock.year,
            extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]
        )
        return try LabCertificate.issue(spec, subjectKey: key).asIssuer()
    }

    @Test(arguments: schemes)
    func everySchemeVerifiesWithOpenSSL(_ testCase: SchemeCase) throws {
        let directory = try TemporaryDirectory()
        let issuer = try Self.ca(testCase.key)
        var spec = LabCertificateSpec(
            subject: .cn("scheme.example"),
            extensions: [.authorityKeyIdentifier(), .basicConstraints(ca: false)])
        spec.signatureScheme = testCase.scheme
        let leaf = try LabCertificate.issue(spec, subjectKey: LabKey.shared(.p256, slot: 11), issuer: issuer)

        let text = try OpenSSLCLI.text(leaf, in: directory)
        #expect(text.ok, "\(text)")
        for name in testCase.textName {
            #expect(text.output.contains(name), "missing \(name) in \(text.output)")
        }
        // Security level 0 admits MD5 and SHA-1, which OpenSSL 3 otherwise rejects as too weak.
        let verify = try OpenSSLCLI.verify(leaf: leaf, root: issuer.certificate, extra: ["-auth_level", "0"], in: directory)
        #expect(verify.ok && verify.output.hasSuffix(": OK\n"), "\(verify)")

        // Outer and inner AlgorithmIdentifiers are identical, as RFC 5280 §4.1.1.2 requires.
        let outer = try LabDER.parse(leaf.der).children()[1].encoded
        #expect(outer == (try testCase.scheme.algorithmIdentifierDER))
        #expect(leaf.tbsDER.windows(of: outer))
    }

    @Test(arguments: [LabKeyAlgorithm.ed448, .rsa(bits: 2048)])
    func selfSignedSignatureChecks(algorithm: LabKeyAlgorithm) throws {
        let directory = try TemporaryDirectory()
        var spec = LabCertificateSpec(subject: .cn("self \(algorithm)"), extensions: [.basicConstraints(ca: true)])
        if algorithm.isRSA { spec.signatureScheme = .rsaPSS(.sha256, saltLength: 32) }
        let certificate = try LabCertificate.issue(spec, subjectKey: LabKey.shared(algorithm, slot: 12))
        let result = try OpenSSLCLI.verify(leaf: certificate, root: certificate, extra: ["-check_ss_sig"], in: directory)
        #expect(result.ok, "\(result)")
    }

    @Test func psssAlgorithmIdentifierMatchesRFC4055Encoding() throws {
        // RSASSA-PSS with SHA-256, MGF1-SHA-256, salt 32 as OpenSSL and the CA/B Forum encode it.
        let expected: [UInt8] = [
            0x30, 0x41, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0A, 0x30, 0x34,
            0xA0, 0x0F, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00,
            0xA1, 0x1C, 0x30, 0x1A, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x08,
            0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00,
            0xA2, 0x03, 0x02, 0x01, 0x20,
        ]
        #expect(try LabSignatureScheme.rsaPSS(.sha256, saltLength: 32).algorithmIdentifierDER == expected)
        #expect(
            try LabSignatureScheme.rsaPKCS1(.sha256).algorithmIdentifierDER
                == [0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B, 0x05, 0x00])
        #expect(
            try LabSignatureScheme.ecdsa(.sha256).algorithmIdentifierDER
                == [0x30, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02])
        #expect(try LabSignatureScheme.ed25519.algorithmIdentifierDER == [0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70])
        #expect(throws: LabError.self) { try LabSignatureScheme.ecdsa(.md5).algorithmIdentifierDER }
    }

    @Test func defaultSchemes() {
        #expect(LabSignatureScheme.default(for: .rsa(bits: 3072)) == .rsaPKCS1(.sha256))
        #expect(LabSignatureScheme.default(for: .p256) == .ecdsa(.sha256))
        #expect(LabSignatureScheme.default(for: .p384) == .ecdsa(.sha384))
        #expect(LabSignatureScheme.default(for: .p521) == .ecdsa(.sha512))
        #expect(LabSignatureScheme.default(for: .ed25519) == .ed25519)
        #expect(LabSignatureScheme.default(for: .ed448) == .ed448)
    }

    @Test func mismatchedSchemeAndKeyThrows() throws {
        var spec = LabCertificateSpec(subject: .cn("mismatch"))
        spec.signatureScheme = .ecdsa(.sha256)
        #expect(throws: LabError.self) { try LabCertificate.issue(spec, subjectKey: LabKey.shared(.ed25519)) }
    }

    @Test func validityUsesGeneralizedTimeFrom2050() throws {
        let directory = try TemporaryDirectory()
        let spec = LabCertificateSpec(
            subject: .cn("long"), notBefore: LabClock.reference,
            notAfter: 2_524_608_000)  // 2050-01-01T00:00:00Z
        let certificate = try LabCertificate.issue(spec, subjectKey: LabKey.shared(.p256))
        let asn1 = try OpenSSLCLI.asn1parse(certificate.der, in: directory)
        #expect(asn1.output.contains("UTCTIME           :260101000000Z"), "\(asn1)")
        #expect(asn1.output.contains("GENERALIZEDTIME   :20500101000000Z"), "\(asn1)")
        let text = try OpenSSLCLI.text(certificate, in: directory)
        #expect(text.output.contains("Not After : Jan  1 00:00:00 2050 GMT"), "\(text)")
    }

    /// Serial content octets and how `openssl x509 -serial` renders them.
    static let serials: [([UInt8], String)] = [
        ([0x01], "serial=01"),
        ([0x00], "serial=00"),
        ([0x7F] + [UInt8](repeating: 0xA5, count: 19), "serial=7F" + String(repeating: "A5", count: 19)),
        ([0x00, 0x80] + [UInt8](repeating: 0x11, count: 19), "serial=80" + String(repeating: "11", count: 19)),
        ([0xFF, 0x01], "serial=-FF"),
    ]

    @Test(arguments: serials)
    func serialsAreVerbatim(serial: [UInt8], rendering: String) throws {
        let directory = try TemporaryDirectory()
        let certificate = try LabCertificate.issue(
            LabCertificateSpec(subject: .cn("serial"), serial: serial),
            subjectKey: LabKey.shared(.p256))
        #expect(certificate.serialNumber == serial)
        let path = try directory.write(certificate.pem, named: "c.pem")
        let result = try OpenSSLCLI.run(["x509", "-in", path, "-noout", "-serial"])
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == rendering, "\(result)")
    }

    @Test func twentyByteSerialInTextOutput() throws {
        let serial = (1...20).map { UInt8($0) }
        let certificate = try LabCertificate.issue(
            LabCertificateSpec(subject: .cn("s"), serial: serial),
            subjectKey: LabKey.shared(.p256))
        let text = try OpenSSLCLI.text(certificate, in: TemporaryDirectory())
        #expect(text.output.contains(hex(serial, uppercase: false, separator: ":")), "\(text)")
        #expect(LabCertificateSpec.randomSerial().count == 16)
        #expect((1...100).allSatisfy { _ in (1...0x7F).contains(LabCertificateSpec.randomSerial(length: 20)[0]) })
    }

    @Test func versionOneAndUniqueIdentifiers() throws {
        let directory = try TemporaryDirectory()
        var v1 = LabCertificateSpec(subject: .cn("v1"), version: 0)
        v1.extensions = []
        let old = try LabCertificate.issue(v1, subjectKey: LabKey.shared(.p256))
        #expect(try LabDER.parse(old.tbsDER).children().first?.tag == LabDER.Tag.integer)  // no [0] version
        let oldText = try OpenSSLCLI.text(old, in: directory)
        #expect(oldText.output.contains("Version: 1 (0x0)"), "\(oldText)")

        var withIDs = LabCertificateSpec(subject: .cn("ids"))
        withIDs.issuerUniqueID = [0xDE, 0xAD]
        withIDs.subjectUniqueID = [0xBE, 0xEF]
        let unique = try LabCertificate.issue(withIDs, subjectKey: LabKey.shared(.p256))
        let text = try OpenSSLCLI.text(unique, in: directory)
        for needle in ["Issuer Unique ID:", "de:ad", "Subject Unique ID:", "be:ef"] {
            #expect(text.output.contains(needle), "missing \(needle) in \(text)")
        }
    }

    @Test func issuerNameIsTheIssuerSubjectVerbatim() throws {
        // A deliberately unusual issuer encoding (BMPString CN, non-sorted multi-valued RDN) must be copied byte for byte.
        let odd = LabDER.sequence([
            LabDER.set(
                [
                    LabDER.sequence([try LabDER.oid("2.5.4.11"), LabDER.string("Unit", as: .bmp)]),
                    LabDER.sequence([try LabDER.oid("2.5.4.3"), LabDER.string("Odd CA", as: .bmp)]),
                ], sorted: false)
        ])
        let caKey = try LabKey.shared(.p384)
        let ca = try LabCertificate.issue(
            LabCertificateSpec(subject: LabName(der: odd), extensions: [.basicConstraints(ca: true)]), subjectKey: caKey
        )
        let leaf = try LabCertificate.issue(
            LabCertificateSpec(subject: .cn("leaf")), subjectKey: LabKey.shared(.p256),
            issuer: LabIssuer(certificate: ca, key: caKey))
        #expect(leaf.issuerNameDER == odd)
        var forged = LabCertificateSpec(subject: .cn("forged"))
        forged.issuerNameOverride = .cn("Somebody Else")
        let other = try LabCertificate.issue(forged, subjectKey: LabKey.shared(.p256), issuer: LabIssuer(certificate: ca, key: caKey))
        #expect(other.issuerNameDER == (try LabName.cn("Somebody Else").derEncoded()))
    }

    @Test func signArbitraryTBS() throws {
        let directory = try TemporaryDirectory()
        let issuer = try Self.ca(.p256)
        let leaf = try LabCertificate.issue(
            LabCertificateSpec(subject: .cn("resign")),
            subjectKey: LabKey.shared(.p256, slot: 11), issuer: issuer)
        // Re-signing the same TBS with the right key verifies; with another key it does not.
        let resigned = try LabCertificate.sign(tbsDER: leaf.tbsDER, with: issuer.key)
        let good = try LabCertificate(der: resigned)
        #expect(good.tbsDER == leaf.tbsDER)
        #expect(try OpenSSLCLI.verify(leaf: good, root: issuer.certificate, in: directory).ok)
        let wrongKey = try LabCertificate(der: LabCertificate.sign(tbsDER: leaf.tbsDER, with: LabKey.shared(.p256, slot: 13)))
        let bad = try OpenSSLCLI.verify(leaf: wrongKey, root: issuer.certificate, in: directory)
        #expect(!bad.ok && bad.output.contains("signature failure"), "\(bad)")
        // An outer algorithm that disagrees with the inner one is rejected by OpenSSL.
        let mismatched = try LabCertificate.sign(
            tbsDER: leaf.tbsDER, algorithmIdentifierDER: LabSignatureScheme.ecdsa(.sha384).algorithmIdentifierDER,
            with: issuer.key, scheme: .ecdsa(.sha256)
        )
        let mismatch = try OpenSSLCLI.verify(leaf: LabCertificate(der: mismatched), root: issuer.certificate, in: directory)
        #expect(!mismatch.ok, "\(mismatch)")
        // Hand-made TBS bytes are signed verbatim, even when they are not a TBSCertificate.
        let junk = try LabCertificate.sign(tbsDER: LabDER.sequence([LabDER.integer(1)]), with: issuer.key)
        #expect(try LabDER.parse(junk).children()[0].encoded == [0x30, 0x03, 0x02, 0x01, 0x01])
        #expect(throws: LabError.self) { try LabCertificate(der: junk) }
    }

    @Test func certificateValueSemantics() throws {
        let key = try LabKey.shared(.p256)
        let spec = LabCertificateSpec(subject: .cn("same"), serial: [1])
        let a = try LabCertificate.issue(spec, subjectKey: key)
        let wrapped = try LabCertificate(der: a.der)
        #expect(a == wrapped)
        #expect(wrapped.spec == nil && a.spec == spec && a.subjectKey === key)
        #expect(a.subjectPublicKeyInfoDER == key.publicKeyInfoDER)
        #expect(throws: LabError.self) { try wrapped.asIssuer() }
        #expect(a.pem.hasPrefix("-----BEGIN CERTIFICATE-----\n") && a.pem.hasSuffix("-----END CERTIFICATE-----\n"))
        #expect(a.pem.split(separator: "\n").allSatisfy { $0.count <= 64 })
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs as a contiguous run.
    func windows(of needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        return (0...(count - needle.count)).contains { Array(self[$0..<($0 + needle.count)]) == needle }
    }
}
