import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

@Suite("SecurityPolicy beyond the matrix")
struct SecurityPolicyTests {
    let f = PolicyFixtures.shared
    let host = PolicyFixtures.host

    @Test("defaults match +defaultPolicy, with strict semantics")
    func defaults() {
        let policy = SecurityPolicy.default
        #expect(policy.pinningMode == .none)
        #expect(!policy.allowInvalidCertificates)
        #expect(policy.validatesDomainName)
        #expect(policy.pinnedCertificates.isEmpty)
        #expect(policy.semantics == .strict)
        #expect(!policy.allowsExpiredPinnedCertificates)
    }

    @Test("pinned certificates keep their order without duplicates")
    func pinnedDeduplicated() {
        var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [f.root, f.intermediate, f.root])
        #expect(policy.pinnedCertificates == [f.root, f.intermediate])
        policy.pinnedCertificates = [f.selfSigned, f.selfSigned]
        #expect(policy.pinnedCertificates == [f.selfSigned])
    }

    @Test("nil domain: compat skips the host check (row 3 then accepts anything); strict uses the trust's host")
    func nilDomain() {
        let compat = SecurityPolicy(pinningMode: .none, allowInvalidCertificates: true, validatesDomainName: true, semantics: .compat)
        #expect(compat.evaluate(f.trust([f.attacker]), forDomain: nil).isTrusted)
        #expect(SecurityPolicy(semantics: .compat).evaluate(f.trust(f.otherHostChain), forDomain: nil).isTrusted)

        let strict = SecurityPolicy(pinningMode: .none, allowInvalidCertificates: true, validatesDomainName: true, semantics: .strict)
        #expect(strict.evaluate(f.trust([f.attacker]), forDomain: nil).failure?.kind == .allowInvalidCertificatesRequiresPinning)
        #expect(SecurityPolicy(semantics: .strict).evaluate(f.trust(f.otherHostChain), forDomain: nil).failure?.kind == .hostValidationFailed)
        #expect(SecurityPolicy(semantics: .strict).evaluate(f.trust(f.otherHostChain, host: nil), forDomain: nil).failure?.kind == .noHostToValidate)
    }

    @Test("validatesDomainName=NO: compat's BasicX509 accepts a clientAuth-only leaf, strict keeps serverAuth")
    func serverAuthKept() {
        var compat = SecurityPolicy(semantics: .compat)
        compat.validatesDomainName = false
        #expect(compat.evaluate(f.trust(f.clientOnlyChain), forDomain: host).isTrusted)
        var strict = SecurityPolicy(semantics: .strict)
        strict.validatesDomainName = false
        let decision = strict.evaluate(f.trust(f.clientOnlyChain), forDomain: host)
        #expect(decision.failure?.validationFailure?.kind == .extendedKeyUsageNotAllowed)
    }

    @Test("strict lets a pin excuse expiry only when asked", arguments: [PinningMode.publicKey, .certificate])
    func expiredOptIn(_ mode: PinningMode) {
        var policy = SecurityPolicy(pinningMode: mode, pinnedCertificates: [f.root, f.selfSigned], allowInvalidCertificates: true)
        #expect(!policy.evaluate(f.trust(f.expiredChain), forDomain: host).isTrusted)
        policy.allowsExpiredPinnedCertificates = true
        let decision = policy.evaluate(f.trust(f.expiredChain), forDomain: host)
        #expect(decision.isTrusted)
        #expect(decision.record.notes.contains { $0.contains("allowsExpiredPinnedCertificates") })
        #expect(!policy.evaluate(f.trust(f.otherHostChain), forDomain: host).isTrusted, "only expiry is excused")
    }

    @Test("public-key mode counts matches along the chain and names the first")
    func publicKeyMatchRecorded() {
        let policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [f.root, f.intermediate], semantics: .compat)
        let decision = policy.evaluate(f.trust(f.validChain), forDomain: host)
        #expect(decision.isTrusted)
        #expect(decision.record.matchedPin?.contains("2 pinned key match(es)") == true)
        #expect(decision.record.matchedPin?.contains("chain position 1") == true)
    }

    @Test("a pin failure lists the chain's pins beside the configured ones")
    func pinFailureEvidence() {
        let policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [f.selfSigned], semantics: .compat)
        let decision = policy.evaluate(f.trust(f.validChain), forDomain: host)
        #expect(decision.failure?.kind == .publicKeyPinningFailed)
        #expect(decision.record.servedPins.map(\.pin) == (f.validChain + [f.root]).map { "sha256/" + $0.spkiSHA256Base64 })
        #expect(decision.record.configuredPins == ["sha256/" + f.selfSigned.spkiSHA256Base64])
        #expect(decision.record.pinFailureMessage?.hasPrefix("Certificate pinning failure!\n  Peer certificate chain:\n    sha256/") == true)
    }

    @Test("certificates(inDirectory:) loads .cer .crt .der .pem in name order and names a bad file")
    func certificatesInDirectory() throws {
        let directory = try PolicyFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(FileManager.default.createFile(atPath: directory + "/a.cer", contents: Data(f.root.derBytes)))
        #expect(FileManager.default.createFile(atPath: directory + "/b.CRT", contents: Data(f.intermediate.derBytes)))
        try (f.selfSigned.pemString + f.attacker.pemString).write(toFile: directory + "/c.pem", atomically: true, encoding: .utf8)
        #expect(FileManager.default.createFile(atPath: directory + "/d.der", contents: Data(f.validChain[0].derBytes)))
        try "not a certificate".write(toFile: directory + "/notes.txt", atomically: true, encoding: .utf8)
        let loaded = try SecurityPolicy.certificates(inDirectory: directory)
        #expect(loaded == [f.root, f.intermediate, f.selfSigned, f.attacker, f.validChain[0]])

        try "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n".write(toFile: directory + "/e.crt", atomically: true, encoding: .utf8)
        let error = #expect(throws: PolicyConfigurationError.self) { try SecurityPolicy.certificates(inDirectory: directory) }
        #expect(error?.kind == .notACertificate)
        #expect(error?.path == directory + "/e.crt")
        let missing = #expect(throws: PolicyConfigurationError.self) { try SecurityPolicy.certificates(inDirectory: directory + "/absent") }
        #expect(missing?.kind == .unreadable)
    }

    @Test("a pinned .cer whose two signatureAlgorithm fields differ in encoding (AFNetworking's, Alamofire's test certificates) loads, noted")
    func pinnedFileWithParameterQuirk() throws {
        let directory = try PolicyFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var spec = LabPKI.leafSpec(host: "foobar.com", keyAlgorithm: .rsa(bits: 2048))
        spec.tbsSignatureAlgorithmDER = try LabSignatureScheme.rsaPKCS1(.sha256).algorithmIdentifierDERWithoutParameters
        let quirky = try LabCertificate.issue(spec, subjectKey: try LabKey.shared(.rsa(bits: 2048), slot: 37))
        #expect(FileManager.default.createFile(atPath: directory + "/foobar.com.cer", contents: Data(quirky.der)))
        let loaded = try SecurityPolicy.certificates(inDirectory: directory)
        #expect(loaded.map(\.derBytes) == [quirky.der])
        #expect(loaded.first?.toleratedDeviations.first?.contains("tolerated for a local pinned-certificate file") == true)
        // A certificate a server sends is parsed strictly: the same bytes are malformed there.
        #expect(throws: DERError.self) { try Certificate(derEncoded: quirky.der) }
    }

    /// A self-signed leaf for the host, with the given extensions instead of the usual ones.
    func selfSigned(_ extensions: [LabExtension], slot: Int) throws -> Certificate {
        var spec = LabPKI.leafSpec(host: host, keyAlgorithm: .p256)
        spec.extensions = extensions
        return try Certificate(derEncoded: try LabCertificate.issue(spec, subjectKey: try LabKey.shared(.p256, slot: slot)).der)
    }

    @Test(
        "compat certificate mode with allowInvalidCertificates accepts a pinned self-signed leaf with a critical EKU or a critical SAN beside a subject, as AFNetworking does; strict refuses it",
        arguments: ["critical extendedKeyUsage", "critical subjectAltName beside a subject"])
    func compatPinnedShape(_ shape: String) throws {
        let extensions: [LabExtension]
        switch shape {
        case "critical extendedKeyUsage":
            extensions = [
                .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["serverAuth"], critical: true), .subjectAltName([.dns(host)]),
            ]
        default:
            extensions = [
                .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["serverAuth"]), .subjectAltName([.dns(host)], critical: true),
            ]
        }
        let pinned = try selfSigned(extensions, slot: 222)
        let compat = SecurityPolicy(
            pinningMode: .certificate, pinnedCertificates: [pinned], allowInvalidCertificates: true, validatesDomainName: true, semantics: .compat)
        let accepted = compat.evaluate(f.trust([pinned]), forDomain: host)
        #expect(accepted.isTrusted, "\(shape): \(String(describing: accepted.failure))")
        var strict = compat
        strict.semantics = .strict
        #expect(!strict.evaluate(f.trust([pinned]), forDomain: host).isTrusted, "\(shape): strict keeps the Web PKI profile")
        // Only the pinned certificate: an impostor of the same shape is refused, and the host
        // is still checked.
        let impostor = try selfSigned(extensions, slot: 223)
        #expect(!compat.evaluate(f.trust([impostor]), forDomain: host).isTrusted, "an impostor of the same shape and name")
        #expect(!compat.evaluate(f.trust([pinned], host: "other.example.test"), forDomain: "other.example.test").isTrusted)
    }

    @Test("compat keeps RFC 5280's own rules for pinned certificates: an unknown critical extension is still refused")
    func compatUnknownCritical() throws {
        let pinned = try selfSigned(
            [
                .basicConstraints(ca: false), .extendedKeyUsage(["serverAuth"]), .subjectAltName([.dns(host)]),
                .raw(oid: "1.3.6.1.4.1.55555.1", critical: true, valueDER: LabDER.null()),
            ], slot: 224)
        let compat = SecurityPolicy(
            pinningMode: .certificate, pinnedCertificates: [pinned], allowInvalidCertificates: true, validatesDomainName: true, semantics: .compat)
        #expect(compat.evaluate(f.trust([pinned]), forDomain: host).failure?.validationFailure?.kind == .unhandledCriticalExtension)
    }

    /// What a pinned CA certificate restricts, which a served copy of its key under other
    /// names, dates and extensions (anyone can write one: no private key is needed) must not
    /// lift: strict public-key mode validates "everything else, anchored on the pinned keys"
    /// (``PolicySemantics`` fix 1), and an anchor's validity and constraints come from the
    /// pinned certificate (RFC 5280 §6.1.1 (d), §6.1.3 (a)(2), §6.1.4 (g), (m)).
    enum PinnedCARestriction: String, CaseIterable, Sendable {
        case nameConstraints = "name constraints"
        case expiry = "expired CA certificate"
        case pathLength = "pathLenConstraint 0"
    }

    /// A CA whose key is pinned, a chain below it that the CA certificate itself forbids (a
    /// mis-issued leaf, or a sub-CA), and the same chain ending in a forged copy of the CA
    /// certificate: the pinned key, no restriction, signed by the attacker.
    func forgedAnchorChains(_ restriction: PinnedCARestriction) throws -> (pinned: Certificate, genuine: [Certificate], forged: [Certificate]) {
        let caKey = try LabKey.shared(.p256, slot: 225)
        var spec = LabCertificateSpec(
            subject: LabName([("O", "Partner"), ("CN", "Partner CA")]), notBefore: PolicyFixtures.now - LabClock.year,
            notAfter: PolicyFixtures.now + LabClock.year,
            extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier(), .authorityKeyIdentifier()])
        var leafNotBefore = PolicyFixtures.now - 30 * LabClock.day
        switch restriction {
        case .nameConstraints:
            spec.extensions.append(.nameConstraints(permitted: [.dns("partner.test")], excluded: []))
        case .expiry:
            spec.notAfter = PolicyFixtures.now - LabClock.day
            leafNotBefore = spec.notAfter - 30 * LabClock.day
        case .pathLength:
            spec.extensions[0] = .basicConstraints(ca: true, pathLength: 0)
        }
        let ca = try LabCertificate.issue(spec, subjectKey: caKey, issuer: f.pki.rootIssuer)
        var below: [LabCertificate] = []
        var issuer = LabIssuer(certificate: ca, key: caKey)
        if restriction == .pathLength {
            let subKey = try LabKey.shared(.p256, slot: 227)
            let sub = try LabCertificate.issue(
                LabCertificateSpec(
                    subject: .cn("Partner Sub CA"), notBefore: PolicyFixtures.now - LabClock.year, notAfter: PolicyFixtures.now + LabClock.year,
                    extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier(), .authorityKeyIdentifier()]),
                subjectKey: subKey, issuer: issuer)
            below.append(sub)
            issuer = LabIssuer(certificate: sub, key: subKey)
        }
        let leaf = try LabCertificate.issue(
            LabPKI.leafSpec(host: host, keyAlgorithm: .p256, notBefore: leafNotBefore), subjectKey: LabKey.shared(.p256, slot: 226), issuer: issuer)
        var forgedSpec = spec
        forgedSpec.notAfter = PolicyFixtures.now + LabClock.year
        forgedSpec.extensions = [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]
        let attacker = LabIssuer(certificate: try LabCertificate(der: f.attacker.derBytes), key: try LabKey.shared(.p256, slot: PolicySlot.attacker))
        let forged = try LabCertificate.issue(forgedSpec, subjectKey: caKey, issuer: attacker)
        func parse(_ certificates: [LabCertificate]) throws -> [Certificate] { try certificates.map { try Certificate(derEncoded: $0.der) } }
        return (try Certificate(derEncoded: ca.der), try parse([leaf] + below + [ca]), try parse([leaf] + below + [forged]))
    }

    @Test(
        "strict public-key mode: a served certificate with a pinned CA's key but not signed by it never anchors the path",
        arguments: PinnedCARestriction.allCases, [true, false])
    func forgedAnchorRefused(_ restriction: PinnedCARestriction, _ validatesDomainName: Bool) throws {
        let (pinned, genuine, forged) = try forgedAnchorChains(restriction)
        let policy = SecurityPolicy(
            pinningMode: .publicKey, pinnedCertificates: [pinned], allowInvalidCertificates: true, validatesDomainName: validatesDomainName)
        let refused = policy.evaluate(f.trust(genuine), forDomain: host)
        #expect(!refused.isTrusted, "\(restriction): the pinned CA certificate forbids this chain")
        let decision = policy.evaluate(f.trust(forged), forDomain: host)
        #expect(!decision.isTrusted, "\(restriction): a forged copy of the pinned key lifted it: \(decision)")
        #expect(decision.failure?.kind == refused.failure?.kind, "\(String(describing: decision.failure))")
    }

    @Test(
        "strict public-key mode still accepts a certificate re-issued on a pinned key: the served leaf, or one self-signed by the key",
        arguments: [true, false])
    func reissuedOnPinnedKey(_ validatesDomainName: Bool) throws {
        // The leaf re-issued by its CA on the same key (the handshake proves the key).
        let reissuedLeaf = try Certificate(
            derEncoded: try f.pki.issueLeaf(
                host: host, key: LabKey.shared(.p256, slot: 3 * PolicySlot.webChain + 2), notBefore: PolicyFixtures.now - LabClock.day
            ).der)
        #expect(reissuedLeaf != f.validChain[0])
        // The pinned self-signed certificate re-issued, self-signed, with new dates.
        var spec = LabPKI.leafSpec(host: host, keyAlgorithm: .p256, notBefore: PolicyFixtures.now - LabClock.day)
        spec.notAfter = PolicyFixtures.now + LabClock.year
        let reissuedSelfSigned = try Certificate(derEncoded: try LabCertificate.issue(spec, subjectKey: LabKey.shared(.p256, slot: PolicySlot.selfSigned)).der)
        #expect(reissuedSelfSigned != f.selfSigned)
        let policy = SecurityPolicy(
            pinningMode: .publicKey, pinnedCertificates: [f.validChain[0], f.selfSigned], allowInvalidCertificates: true,
            validatesDomainName: validatesDomainName)
        for chain in [[reissuedLeaf, f.intermediate], [reissuedLeaf], [reissuedSelfSigned]] {
            let decision = policy.evaluate(f.trust(chain), forDomain: host)
            #expect(decision.isTrusted, "\(decision)")
        }
    }

    @Test("SecurityPolicy is a ServerTrustEvaluating")
    func asEvaluator() {
        let policy: any ServerTrustEvaluating = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [f.root])
        #expect(throws: TrustEvaluationError.self) { try policy.evaluate(f.trust(f.interceptedChain), forHost: host) }
        #expect(policy.decide(f.trust(f.validChain), forHost: host).isTrusted)
    }
}
