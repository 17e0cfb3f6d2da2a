import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// The foundation's corpus check: certificates generated at test time (fixed Lab clock) that
/// carry every extension the model decodes, for every key and signature algorithm, parse into
/// the expected typed values, verify with their issuer's key, and stop verifying when any byte
/// of the signed data or of the signature changes.
@Suite("Generated corpus: every extension, every algorithm, tamper-evident")
struct GeneratedCorpusTests {
    struct Algorithm: Sendable, CustomTestStringConvertible {
        let key: LabKeyAlgorithm
        let scheme: LabSignatureScheme
        var testDescription: String { "\(key) \(scheme)" }
    }

    static let algorithms: [Algorithm] = [
        Algorithm(key: .rsa(bits: 2048), scheme: .rsaPKCS1(.sha256)),
        Algorithm(key: .rsa(bits: 2048), scheme: .rsaPKCS1(.sha384)),
        Algorithm(key: .rsa(bits: 2048), scheme: .rsaPKCS1(.sha512)),
        Algorithm(key: .rsa(bits: 2048), scheme: .rsaPSS(.sha256, saltLength: 32)),
        Algorithm(key: .p256, scheme: .ecdsa(.sha256)),
        Algorithm(key: .p384, scheme: .ecdsa(.sha384)),
        Algorithm(key: .p521, scheme: .ecdsa(.sha512)),
        Algorithm(key: .ed25519, scheme: .ed25519),
        Algorithm(key: .ed448, scheme: .ed448),
    ]

    /// Every extension the model decodes, plus an unknown one kept raw.
    static let everyExtension: [LabExtension] = [
        .basicConstraints(ca: true, pathLength: 2),
        .keyUsage([.digitalSignature, .keyCertSign, .cRLSign]),
        .extendedKeyUsage(["serverAuth", "clientAuth", "1.3.6.1.5.5.7.3.9"]),
        .subjectAltName([
            .dns("corpus.example.test"), .ipAddress("192.0.2.7"), .ipAddress("2001:db8::7"), .email("ops@example.test"),
            .uri("https://corpus.example.test/path"), .directoryName(LabName([("O", "Corpus"), ("CN", "Directory")])),
            .otherName(oid: "1.3.6.1.4.1.311.20.2.3", valueDER: LabDER.utf8String("upn@example.test")),
        ]),
        .issuerAltName([.uri("https://issuer.example.test/")]),
        .nameConstraints(
            permitted: [.dns("example.test"), .ipSubnet("192.0.2.0/24"), .email("example.test")],
            excluded: [.dns("forbidden.example.test"), .ipSubnet("2001:db8:dead::/48")]),
        .subjectKeyIdentifier(),
        .authorityKeyIdentifier(includeIssuerAndSerial: true),
        .certificatePolicies([LabPolicy("2.23.140.1.2.1", cpsURI: "https://cps.example.test/")]),
        .policyMappings([LabPolicyMapping("1.3.6.1.4.1.99999.1", "1.3.6.1.4.1.99999.2")]),
        .policyConstraints(requireExplicitPolicy: 0, inhibitPolicyMapping: 1),
        .inhibitAnyPolicy(0),
        .authorityInfoAccess(ocsp: ["http://ocsp.example.test"], caIssuers: ["http://ca.example.test/ca.der"]),
        .crlDistributionPoints(["http://crl.example.test/ca.crl"]),
        .signedCertificateTimestamps([0x00, 0x00]),
        .raw(oid: "1.3.6.1.4.1.99999.42", critical: false, valueDER: LabDER.utf8String("opaque")),
    ]

    /// A root for `algorithm` and a certificate it issues with every extension.
    static func corpus(_ algorithm: Algorithm) throws -> (issuer: Certificate, subject: Certificate) {
        let rootKey = try LabKey.shared(algorithm.key, slot: 140)
        let subjectKey = try LabKey.shared(algorithm.key, slot: 141)
        let root = try LabCertificate.issue(
            LabCertificateSpec(
                subject: LabName([("C", "US"), ("O", "Corpus"), ("CN", "Corpus Root \(algorithm.key)")]),
                extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()],
                signatureScheme: algorithm.scheme),
            subjectKey: rootKey)
        let subject = try LabCertificate.issue(
            LabCertificateSpec(
                subject: LabName([("C", "US"), ("O", "Corpus"), ("CN", "Corpus CA \(algorithm.key)")]),
                extensions: everyExtension, signatureScheme: algorithm.scheme),
            subjectKey: subjectKey, issuer: LabIssuer(certificate: root, key: rootKey))
        return (try Certificate(derEncoded: root.der), try Certificate(derEncoded: subject.der))
    }

    @Test("every extension decodes to its typed value", arguments: [algorithms[4]])
    func everyExtensionDecodes(_ algorithm: Algorithm) throws {
        let (_, c) = try Self.corpus(algorithm)
        let e = c.extensions
        #expect(e.basicConstraints?.isCertificateAuthority == true)
        #expect(e.basicConstraints?.pathLengthConstraint == 2)
        #expect(e.keyUsage?.setNames == ["digitalSignature", "keyCertSign", "cRLSign"])
        #expect(e.extendedKeyUsage?.usages == [OID.serverAuth, OID.clientAuth, OID.ocspSigning])
        #expect(
            c.subjectAlternativeNames.map(\.description) == [
                "DNS:corpus.example.test", "IP:192.0.2.7", "IP:2001:db8::7", "email:ops@example.test",
                "URI:https://corpus.example.test/path", "DirName:CN=Directory,O=Corpus", "othername:1.3.6.1.4.1.311.20.2.3",
            ])
        #expect(e.issuerAlternativeNames?.map(\.description) == ["URI:https://issuer.example.test/"])
        #expect(e.nameConstraints?.permittedSubtrees.count == 3)
        #expect(e.nameConstraints?.excludedSubtrees.count == 2)
        #expect(e.subjectKeyIdentifier?.count == 20)
        #expect(e.authorityKeyIdentifier?.keyIdentifier?.count == 20)
        #expect(e.authorityKeyIdentifier?.authorityCertIssuer?.count == 1)
        #expect(e.authorityKeyIdentifier?.authorityCertSerialNumber != nil)
        #expect(e.certificatePolicies?.first?.policyIdentifier == "2.23.140.1.2.1")
        #expect(e.certificatePolicies?.first?.qualifiers.first?.cpsURI == "https://cps.example.test/")
        #expect(e.policyMappings?.first?.subjectDomainPolicy == "1.3.6.1.4.1.99999.2")
        #expect(e.policyConstraints?.requireExplicitPolicy == 0)
        #expect(e.policyConstraints?.inhibitPolicyMapping == 1)
        #expect(e.inhibitAnyPolicy == 0)
        #expect(e.authorityInformationAccess?.map(\.accessMethod) == [OID.ocsp, OID.caIssuers])
        #expect(e.crlDistributionPoints?.first?.name == .fullName([.uri("http://crl.example.test/ca.crl")]))
        #expect(e.signedCertificateTimestamps != nil)
        let unknown = try #require(e["1.3.6.1.4.1.99999.42"])
        #expect(!unknown.critical)
        #expect(e.all.count == Self.everyExtension.count)
    }

    @Test("every algorithm: the signature verifies; any changed byte of TBS or signature does not", arguments: algorithms)
    func tamperEvident(_ algorithm: Algorithm) throws {
        let (issuer, c) = try Self.corpus(algorithm)
        let verifier = OpenSSLSignatureVerifier()
        let key = try verifier.makeKey(issuer.subjectPublicKeyInfo)
        #expect(verifier.check(c, signedBy: key) == .valid)
        let tbs = Array(c.tbsBytes)
        // One flipped bit at every byte of the signed data (bit chosen by position).
        for position in tbs.indices {
            var altered = tbs
            altered[position] ^= UInt8(1 << (position % 8))
            let result = verifier.check(signature: c.signature, over: altered[...], algorithm: c.signatureAlgorithm, key: key)
            #expect(!result.isValid, "TBS byte \(position) flipped still verifies")
        }
        let signature = Array(c.signature)
        for position in signature.indices {
            var altered = signature
            altered[position] ^= UInt8(1 << (position % 8))
            let result = verifier.check(signature: altered[...], over: c.tbsBytes, algorithm: c.signatureAlgorithm, key: key)
            #expect(!result.isValid, "signature byte \(position) flipped still verifies")
        }
    }
}
