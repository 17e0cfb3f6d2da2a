import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// Every `ValidationFailure.Kind` the verifier can produce, each from a chain that is wrong in
/// exactly one way, with the certificate index the failure names (0 = leaf).
@Suite("Verifier rejections")
struct VerifierRejectionTests {
    typealias Kind = ValidationFailure.Kind

    // MARK: - Validity period

    /// Which certificate of root → intermediate → leaf has the narrow validity window.
    enum Role: Int, CaseIterable, Sendable, CustomTestStringConvertible {
        case leaf = 0
        case intermediate = 1
        case root = 2
        var testDescription: String { "\(self)" }
    }

    /// Where the validation instant lies relative to that window.
    enum Boundary: CaseIterable, Sendable, CustomTestStringConvertible {
        case oneSecondBeforeNotBefore, exactlyNotBefore, exactlyNotAfter, oneSecondAfterNotAfter

        var expected: Kind? {
            switch self {
            case .oneSecondBeforeNotBefore: return .notYetValid
            case .exactlyNotBefore, .exactlyNotAfter: return nil
            case .oneSecondAfterNotAfter: return .expired
            }
        }
        var testDescription: String { "\(self)" }
    }

    @Test("validity is inclusive at both ends for leaf, intermediate and root", arguments: Role.allCases, Boundary.allCases)
    func validityBoundaries(role: Role, boundary: Boundary) throws {
        let notBefore = TrustPKI.now - LabClock.day
        let notAfter = TrustPKI.now + LabClock.day
        let root =
            role == .root
            ? try TrustPKI.root(notBefore: notBefore, notAfter: notAfter)
            : try TrustPKI.root()
        let intermediate =
            role == .intermediate
            ? try root.issueCA(
                TrustPKI.caSpec("Trust Test Issuing CA", pathLength: 0, notBefore: notBefore, notAfter: notAfter),
                key: TrustPKI.key(TrustSlot.intermediate))
            : try root.issueCA("Trust Test Issuing CA", slot: TrustSlot.intermediate, pathLength: 0)
        let leaf =
            role == .leaf
            ? try intermediate.issue(TrustPKI.leafSpec(notBefore: notBefore, notAfter: notAfter), key: TrustPKI.key(TrustSlot.leaf))
            : try intermediate.issueLeaf()
        let time: Int64
        switch boundary {
        case .oneSecondBeforeNotBefore: time = notBefore - 1
        case .exactlyNotBefore: time = notBefore
        case .exactlyNotAfter: time = notAfter
        case .oneSecondAfterNotAfter: time = notAfter + 1
        }
        let outcome = try TrustPKI.validate(
            leaf, [intermediate.certificate], anchors: [root.certificate], at: time)
        if let kind = boundary.expected {
            expectRejected(outcome, kind, at: role.rawValue)
        } else {
            try expectTrusted(outcome, chain: [leaf, intermediate.certificate, root.certificate])
        }
    }

    // MARK: - Names and trust

    @Test("a leaf for another host is a hostnameMismatch at the leaf")
    func hostnameMismatch() throws {
        let chain = try TrustChain.make()
        expectRejected(try chain.validate(policy: TrustPKI.serverPolicy(host: "mail.example.com")), .hostnameMismatch, at: 0)
        expectRejected(try chain.validate(policy: TrustPKI.serverPolicy(host: "192.0.2.1")), .hostnameMismatch, at: 0)
        // Without a name the same chain is trusted: only the name was wrong.
        try expectTrusted(
            try chain.validate(policy: TrustPKI.serverPolicy(host: nil)), chain: [chain.leaf, chain.intermediate.certificate, chain.root.certificate])
    }

    @Test("an unknown issuer is untrustedRoot at the last certificate reached")
    func unknownIssuer() throws {
        let chain = try TrustChain.make()
        let other = try TrustPKI.root("Trust Test Other Root", slot: TrustSlot.otherRoot)
        let outcome = try TrustPKI.validate(chain.leaf, [chain.intermediate.certificate], anchors: [other.certificate])
        expectRejected(outcome, .untrustedRoot, at: 1)
        expectRejected(
            try TrustPKI.validate(chain.leaf, [chain.intermediate.certificate], store: .empty), .untrustedRoot, at: 1)
    }

    @Test("a missing intermediate is untrustedRoot at the leaf")
    func missingIntermediate() throws {
        let chain = try TrustChain.make()
        expectRejected(try TrustPKI.validate(chain.leaf, [], anchors: [chain.root.certificate]), .untrustedRoot, at: 0)
    }

    @Test("a peer-sent self-signed root that is not an anchor is untrustedRoot")
    func peerSentRootIsNotTrusted() throws {
        let chain = try TrustChain.make()
        let other = try TrustPKI.root("Trust Test Other Root", slot: TrustSlot.otherRoot)
        let outcome = try TrustPKI.validate(
            chain.leaf, [chain.intermediate.certificate, chain.root.certificate], anchors: [other.certificate])
        expectRejected(outcome, .untrustedRoot, at: 2)
    }

    // MARK: - Signatures

    @Test("an intermediate signed by the wrong key (right names) is badSignature at its issuer")
    func intermediateBadSignature() throws {
        let root = try TrustPKI.root()
        let forged = try root.issueCA(
            TrustPKI.caSpec("Trust Test Issuing CA", pathLength: 0), key: TrustPKI.key(TrustSlot.intermediate),
            signingKey: TrustPKI.key(TrustSlot.wrong))
        let leaf = try forged.issueLeaf()
        let outcome = try TrustPKI.validate(leaf, [forged.certificate], anchors: [root.certificate])
        // The failing link is root → intermediate: the root's key does not verify it.
        expectRejected(outcome, .badSignature, at: 2)
    }

    @Test("a leaf signed by the wrong key is badSignature at the intermediate")
    func leafBadSignature() throws {
        let chain = try TrustChain.make()
        let leaf = try chain.intermediate.issue(TrustPKI.leafSpec(), key: TrustPKI.key(TrustSlot.leaf), signingKey: TrustPKI.key(TrustSlot.wrong))
        expectRejected(
            try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate]), .badSignature, at: 1)
    }

    @Test("an anchor with the issuer's name but another key is badSignature at the anchor")
    func impostorAnchor() throws {
        let chain = try TrustChain.make()
        let impostor = try TrustPKI.root("Trust Test Root", slot: TrustSlot.otherRoot)
        let outcome = try TrustPKI.validate(chain.leaf, [chain.intermediate.certificate], anchors: [impostor.certificate])
        expectRejected(outcome, .badSignature, at: 2)
    }

    // MARK: - Path length and depth

    @Test("pathLenConstraint 0 on an intermediate with another intermediate below is pathLengthExceeded")
    func pathLengthOnIntermediate() throws {
        let root = try TrustPKI.root()
        let upper = try root.issueCA("Trust Test Policy CA", slot: TrustSlot.intermediate, pathLength: 0)
        let lower = try upper.issueCA("Trust Test Issuing CA", slot: TrustSlot.secondIntermediate)
        let leaf = try lower.issueLeaf()
        let outcome = try TrustPKI.validate(leaf, [lower.certificate, upper.certificate], anchors: [root.certificate])
        expectRejected(outcome, .pathLengthExceeded, at: 2)
    }

    /// A root with pathLen `limit` over `count` intermediates.
    struct PathLengthCase: Sendable, CustomTestStringConvertible {
        let limit: Int
        let count: Int
        var expected: Kind? { count > limit ? .pathLengthExceeded : nil }
        var testDescription: String { "root pathLen \(limit), \(count) intermediates" }
    }

    @Test(
        "a root's pathLenConstraint counts the intermediates below it",
        arguments: [
            PathLengthCase(limit: 0, count: 0), PathLengthCase(limit: 0, count: 1),
            PathLengthCase(limit: 1, count: 1), PathLengthCase(limit: 1, count: 2),
        ])
    func pathLengthOnRoot(_ c: PathLengthCase) throws {
        let root = try TrustPKI.root(pathLength: c.limit)
        var cas: [TrustCA] = []
        var issuer = root
        for i in 0..<c.count {
            issuer = try issuer.issueCA("Trust Test CA \(i)", slot: TrustSlot.meshBase + i)
            cas.append(issuer)
        }
        let leaf = try issuer.issueLeaf()
        let intermediates = cas.reversed().map(\.certificate)
        let outcome = try TrustPKI.validate(leaf, intermediates, anchors: [root.certificate])
        if let kind = c.expected {
            expectRejected(outcome, kind, at: c.count + 1)
        } else {
            try expectTrusted(outcome, chain: [leaf] + intermediates + [root.certificate])
        }
    }

    @Test("more intermediates than policy.maximumIntermediates is chainTooLong", arguments: [0, 1, 2, 3, 4])
    func chainTooLong(maximum: Int) throws {
        let root = try TrustPKI.root()
        var issuer = root
        var cas: [TrustCA] = []
        for i in 0..<3 {
            issuer = try issuer.issueCA("Trust Test CA \(i)", slot: TrustSlot.meshBase + i)
            cas.append(issuer)
        }
        let leaf = try issuer.issueLeaf()
        let intermediates = cas.reversed().map(\.certificate)
        var policy = TrustPKI.serverPolicy()
        policy.maximumIntermediates = maximum
        let outcome = try TrustPKI.validate(leaf, intermediates, anchors: [root.certificate], policy: policy)
        if maximum >= 3 {
            try expectTrusted(outcome, chain: [leaf] + intermediates + [root.certificate])
        } else {
            // The first intermediate beyond the limit is the one named.
            expectRejected(outcome, .chainTooLong, at: maximum + 1)
        }
    }

    // MARK: - CA profile

    /// An intermediate whose basicConstraints make it no CA.
    struct NotCACase: Sendable, CustomTestStringConvertible {
        let name: String
        let basicConstraints: LabExtension?
        var testDescription: String { name }
    }

    @Test(
        "an issuer that is not a CA is notCertificateAuthority",
        arguments: [
            NotCACase(name: "no basicConstraints", basicConstraints: nil),
            NotCACase(name: "basicConstraints cA false", basicConstraints: .basicConstraints(ca: false)),
            NotCACase(name: "basicConstraints cA true but not critical", basicConstraints: .basicConstraints(ca: true, critical: false)),
        ])
    func notCertificateAuthority(_ c: NotCACase) throws {
        let root = try TrustPKI.root()
        var extensions: [LabExtension] = [.keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier(), .authorityKeyIdentifier()]
        if let bc = c.basicConstraints { extensions.insert(bc, at: 0) }
        let intermediate = try root.issueCA(
            TrustPKI.caSpec("Trust Test Issuing CA", extensions: extensions), key: TrustPKI.key(TrustSlot.intermediate))
        let leaf = try intermediate.issueLeaf()
        let outcome = try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate])
        // ValidationFailure.Kind.notCertificateAuthority documents all three shapes:
        // "basicConstraints absent, not critical, or cA false".
        expectRejected(outcome, .notCertificateAuthority, at: 1)
    }

    @Test("a leaf used as an issuer is notCertificateAuthority")
    func leafAsIssuer() throws {
        let chain = try TrustChain.make()
        let issuingLeaf = TrustCA(certificate: chain.leaf, key: try TrustPKI.key(TrustSlot.leaf))
        let subLeaf = try issuingLeaf.issueLeaf("sub.example.com", slot: TrustSlot.selfSignedLeaf)
        let outcome = try TrustPKI.validate(
            subLeaf, [chain.leaf, chain.intermediate.certificate], anchors: [chain.root.certificate],
            policy: TrustPKI.serverPolicy(host: "sub.example.com"))
        expectRejected(outcome, .notCertificateAuthority, at: 1)
    }

    // MARK: - Key usage

    @Test("a CA without keyCertSign is keyUsageNotAllowed")
    func caWithoutKeyCertSign() throws {
        let root = try TrustPKI.root()
        let intermediate = try root.issueCA(
            TrustPKI.caSpec(
                "Trust Test Issuing CA",
                extensions: [
                    .basicConstraints(ca: true), .keyUsage([.digitalSignature, .cRLSign]), .subjectKeyIdentifier(),
                    .authorityKeyIdentifier(),
                ]),
            key: TrustPKI.key(TrustSlot.intermediate))
        let leaf = try intermediate.issueLeaf()
        expectRejected(
            try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate]), .keyUsageNotAllowed, at: 1)
    }

    @Test("a leaf asserting keyCertSign is keyUsageNotAllowed")
    func leafWithKeyCertSign() throws {
        let chain = try TrustChain.make()
        let spec = TrustPKI.leafSpec(extensions: [
            .basicConstraints(ca: false), .keyUsage([.digitalSignature, .keyCertSign]), .extendedKeyUsage(["serverAuth"]),
            .subjectAltName([.dns(TrustPKI.host)]), .subjectKeyIdentifier(), .authorityKeyIdentifier(),
        ])
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        expectRejected(
            try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate]),
            .keyUsageNotAllowed, at: 0)
    }

    @Test("policy.requiredKeyUsages missing from the leaf is keyUsageNotAllowed")
    func requiredKeyUsageMissing() throws {
        let chain = try TrustChain.make()
        let spec = TrustPKI.leafSpec(extensions: [
            .basicConstraints(ca: false), .keyUsage([.keyEncipherment]), .extendedKeyUsage(["serverAuth"]),
            .subjectAltName([.dns(TrustPKI.host)]), .subjectKeyIdentifier(), .authorityKeyIdentifier(),
        ])
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        var policy = TrustPKI.serverPolicy()
        policy.requiredKeyUsages = ["digitalSignature"]
        expectRejected(
            try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate], policy: policy),
            .keyUsageNotAllowed, at: 0)
        // The standard leaf asserts digitalSignature and passes the same policy.
        try expectTrusted(
            try chain.validate(policy: policy), chain: [chain.leaf, chain.intermediate.certificate, chain.root.certificate])
    }

    // MARK: - Extended key usage

    /// Leaf EKU, CA EKU and policy, with the expected outcome.
    struct EKUCase: Sendable, CustomTestStringConvertible {
        let name: String
        let leafEKU: [String]?
        let caEKU: [String]?
        let client: Bool
        let expected: Kind?
        let index: Int?
        var testDescription: String { name }
    }

    @Test(
        "extendedKeyUsage in the leaf and in CAs",
        arguments: [
            EKUCase(name: "leaf serverAuth, server policy", leafEKU: ["serverAuth"], caEKU: nil, client: false, expected: nil, index: nil),
            EKUCase(name: "leaf without EKU, server policy", leafEKU: nil, caEKU: nil, client: false, expected: nil, index: nil),
            EKUCase(
                name: "leaf clientAuth only, server policy", leafEKU: ["clientAuth"], caEKU: nil, client: false,
                expected: .extendedKeyUsageNotAllowed, index: 0),
            EKUCase(name: "leaf clientAuth only, client policy", leafEKU: ["clientAuth"], caEKU: nil, client: true, expected: nil, index: nil),
            EKUCase(
                name: "leaf serverAuth only, client policy", leafEKU: ["serverAuth"], caEKU: nil, client: true,
                expected: .extendedKeyUsageNotAllowed, index: 0),
            EKUCase(
                name: "leaf anyExtendedKeyUsage alone, server policy", leafEKU: ["anyExtendedKeyUsage"], caEKU: nil, client: false,
                expected: .extendedKeyUsageNotAllowed, index: 0),
            EKUCase(
                name: "CA EKU clientAuth excludes serverAuth", leafEKU: ["serverAuth"], caEKU: ["clientAuth"], client: false,
                expected: .extendedKeyUsageNotAllowed, index: 1),
            EKUCase(
                name: "CA EKU anyExtendedKeyUsage passes", leafEKU: ["serverAuth"], caEKU: ["anyExtendedKeyUsage"], client: false,
                expected: nil, index: nil),
            EKUCase(
                name: "CA EKU serverAuth+clientAuth passes", leafEKU: ["serverAuth"], caEKU: ["serverAuth", "clientAuth"], client: false,
                expected: nil, index: nil),
        ])
    func extendedKeyUsage(_ c: EKUCase) throws {
        let root = try TrustPKI.root()
        var caExtensions = TrustPKI.caExtensions()
        if let eku = c.caEKU { caExtensions.append(.extendedKeyUsage(eku)) }
        let intermediate = try root.issueCA(
            TrustPKI.caSpec("Trust Test Issuing CA", extensions: caExtensions), key: TrustPKI.key(TrustSlot.intermediate))
        var leafExtensions: [LabExtension] = [.basicConstraints(ca: false), .keyUsage([.digitalSignature])]
        if let eku = c.leafEKU { leafExtensions.append(.extendedKeyUsage(eku)) }
        leafExtensions += [.subjectAltName([.dns(TrustPKI.host)]), .subjectKeyIdentifier(), .authorityKeyIdentifier()]
        let leaf = try intermediate.issue(TrustPKI.leafSpec(extensions: leafExtensions), key: TrustPKI.key(TrustSlot.leaf))
        let policy = c.client ? ValidationPolicy.sslClient : TrustPKI.serverPolicy()
        let outcome = try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate], policy: policy)
        if let kind = c.expected {
            expectRejected(outcome, kind, at: c.index)
        } else {
            try expectTrusted(outcome, chain: [leaf, intermediate.certificate, root.certificate])
        }
    }

    @Test("policy.requiredExtendedKeyUsages replaces the kind's default")
    func requiredExtendedKeyUsages() throws {
        let chain = try TrustChain.make()
        var policy = TrustPKI.serverPolicy()
        policy.requiredExtendedKeyUsages = [OID.codeSigning]
        expectRejected(try chain.validate(policy: policy), .extendedKeyUsageNotAllowed, at: 0)
    }

    // MARK: - Name constraints (more in NameConstraintTests)

    @Test("a SAN outside the intermediate's permitted subtree is nameConstraintViolation at that intermediate")
    func nameConstraintViolation() throws {
        let root = try TrustPKI.root()
        let intermediate = try root.issueCA(
            TrustPKI.caSpec(
                "Trust Test Issuing CA",
                extensions: TrustPKI.caExtensions() + [.nameConstraints(permitted: [.dns("example.org")], excluded: [])]),
            key: TrustPKI.key(TrustSlot.intermediate))
        let leaf = try intermediate.issueLeaf()
        expectRejected(
            try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate]), .nameConstraintViolation, at: 1)
    }

    // MARK: - Extensions

    /// A leaf or intermediate carrying one extra extension.
    struct ExtensionCase: Sendable, CustomTestStringConvertible {
        let name: String
        let onLeaf: Bool
        let ext: LabExtension
        let expected: Kind?
        var testDescription: String { name }
    }

    static let unknownOID = "1.3.6.1.4.1.55555.1.1"

    @Test(
        "unknown and precertificate extensions",
        arguments: [
            ExtensionCase(
                name: "unknown critical extension on the leaf", onLeaf: true,
                ext: .raw(oid: unknownOID, critical: true, valueDER: LabDER.null()), expected: .unhandledCriticalExtension),
            ExtensionCase(
                name: "unknown critical extension on the intermediate", onLeaf: false,
                ext: .raw(oid: unknownOID, critical: true, valueDER: LabDER.null()), expected: .unhandledCriticalExtension),
            ExtensionCase(
                name: "unknown non-critical extension on the leaf", onLeaf: true,
                ext: .raw(oid: unknownOID, critical: false, valueDER: LabDER.null()), expected: nil),
            ExtensionCase(
                name: "unknown non-critical extension on the intermediate", onLeaf: false,
                ext: .raw(oid: unknownOID, critical: false, valueDER: LabDER.null()), expected: nil),
            ExtensionCase(name: "CT poison on the leaf", onLeaf: true, ext: .precertificatePoison, expected: .unhandledCriticalExtension),
            ExtensionCase(
                name: "nameConstraints on the leaf", onLeaf: true,
                ext: .nameConstraints(permitted: [.dns("example.com")], excluded: []), expected: .extensionProfileViolation),
            ExtensionCase(
                name: "policyConstraints on the leaf", onLeaf: true,
                ext: .policyConstraints(requireExplicitPolicy: 0, inhibitPolicyMapping: nil), expected: .extensionProfileViolation),
        ])
    func extraExtension(_ c: ExtensionCase) throws {
        let root = try TrustPKI.root()
        let intermediate = try root.issueCA(
            TrustPKI.caSpec("Trust Test Issuing CA", extensions: TrustPKI.caExtensions() + (c.onLeaf ? [] : [c.ext])),
            key: TrustPKI.key(TrustSlot.intermediate))
        let leaf = try intermediate.issue(
            TrustPKI.leafSpec(extensions: TrustPKI.leafExtensions(sans: [.dns(TrustPKI.host)]) + (c.onLeaf ? [c.ext] : [])),
            key: TrustPKI.key(TrustSlot.leaf))
        let outcome = try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate])
        if let kind = c.expected {
            expectRejected(outcome, kind, at: c.onLeaf ? 0 : 1)
        } else {
            try expectTrusted(outcome, chain: [leaf, intermediate.certificate, root.certificate])
        }
    }

    @Test("a server leaf without subjectAltName is extensionProfileViolation (no CN fallback)")
    func missingSAN() throws {
        let chain = try TrustChain.make(sans: [])
        expectRejected(try chain.validate(), .extensionProfileViolation, at: 0)
        // Also without a host to match: the SAN itself is required of a server leaf.
        expectRejected(try chain.validate(policy: TrustPKI.serverPolicy(host: nil)), .extensionProfileViolation, at: 0)
    }

    /// SAN criticality against subject emptiness (RFC 5280 §4.2.1.6, CA/B BR 7.1.2.7.12).
    struct SANCriticalityCase: Sendable, CustomTestStringConvertible {
        let emptySubject: Bool
        let critical: Bool
        var expected: Kind? { emptySubject == critical ? nil : .extensionProfileViolation }
        var testDescription: String { "\(emptySubject ? "empty" : "non-empty") subject, \(critical ? "critical" : "non-critical") SAN" }
    }

    @Test(
        "SAN is critical exactly when the subject is empty",
        arguments: [
            SANCriticalityCase(emptySubject: false, critical: true), SANCriticalityCase(emptySubject: true, critical: false),
            SANCriticalityCase(emptySubject: true, critical: true), SANCriticalityCase(emptySubject: false, critical: false),
        ])
    func sanCriticality(_ c: SANCriticalityCase) throws {
        let chain = try TrustChain.make()
        var spec = TrustPKI.leafSpec(extensions: [
            .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["serverAuth"]),
            .subjectAltName([.dns(TrustPKI.host)], critical: c.critical), .subjectKeyIdentifier(), .authorityKeyIdentifier(),
        ])
        if c.emptySubject { spec.subject = .empty }
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        let outcome = try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate])
        if let kind = c.expected {
            expectRejected(outcome, kind, at: 0)
        } else {
            try expectTrusted(outcome, chain: [leaf, chain.intermediate.certificate, chain.root.certificate])
        }
    }

    @Test("an intermediate without subjectKeyIdentifier is extensionProfileViolation")
    func caMissingSKI() throws {
        let root = try TrustPKI.root()
        let intermediate = try root.issueCA(
            TrustPKI.caSpec(
                "Trust Test Issuing CA",
                extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .authorityKeyIdentifier()]),
            key: TrustPKI.key(TrustSlot.intermediate))
        let leaf = try intermediate.issueLeaf()
        expectRejected(
            try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate]), .extensionProfileViolation, at: 1)
    }

    @Test("an intermediate without authorityKeyIdentifier is extensionProfileViolation")
    func intermediateMissingAKI() throws {
        let root = try TrustPKI.root()
        let intermediate = try root.issueCA(
            TrustPKI.caSpec(
                "Trust Test Issuing CA",
                extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]),
            key: TrustPKI.key(TrustSlot.intermediate))
        let leaf = try intermediate.issueLeaf()
        expectRejected(
            try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate]), .extensionProfileViolation, at: 1)
    }

    @Test("a server leaf without authorityKeyIdentifier is extensionProfileViolation")
    func leafMissingAKI() throws {
        let chain = try TrustChain.make()
        let spec = TrustPKI.leafSpec(extensions: [
            .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["serverAuth"]),
            .subjectAltName([.dns(TrustPKI.host)]), .subjectKeyIdentifier(),
        ])
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        expectRejected(
            try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate]),
            .extensionProfileViolation, at: 0)
    }

    // MARK: - Algorithms and keys

    @Test("a SHA-1-signed leaf is algorithmNotAllowed, naming the leaf")
    func sha1Leaf() throws {
        let chain = try TrustChain.make()
        var spec = TrustPKI.leafSpec()
        spec.signatureScheme = .ecdsa(.sha1)
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        let outcome = try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate])
        // The certificate whose signature algorithm is disallowed is the leaf, not its issuer.
        expectRejected(outcome, .algorithmNotAllowed, at: 0)
    }

    @Test("SHA-1 is accepted when policy.allowsSHA1Signatures is set")
    func sha1Allowed() throws {
        let chain = try TrustChain.make()
        var spec = TrustPKI.leafSpec()
        spec.signatureScheme = .ecdsa(.sha1)
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        var policy = TrustPKI.serverPolicy()
        policy.allowsSHA1Signatures = true
        try expectTrusted(
            try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate], policy: policy),
            chain: [leaf, chain.intermediate.certificate, chain.root.certificate])
    }

    @Test("a SHA-224-signed intermediate is algorithmNotAllowed at the intermediate")
    func sha224Intermediate() throws {
        let root = try TrustPKI.root()
        var spec = TrustPKI.caSpec("Trust Test Issuing CA", pathLength: 0)
        spec.signatureScheme = .ecdsa(.sha224)
        let intermediate = try root.issueCA(spec, key: TrustPKI.key(TrustSlot.intermediate))
        let leaf = try intermediate.issueLeaf()
        let outcome = try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate])
        expectRejected(outcome, .algorithmNotAllowed, at: 1)
    }

    @Test("a trust anchor's own SHA-1 self-signature is never checked")
    func sha1Anchor() throws {
        let key = try TrustPKI.key(TrustSlot.root)
        var spec = TrustPKI.caSpec("Trust Test Root", selfSigned: true, notBefore: TrustPKI.rootValidity.notBefore, notAfter: TrustPKI.rootValidity.notAfter)
        spec.signatureScheme = .ecdsa(.sha1)
        let root = TrustCA(certificate: try LabCertificate.issue(spec, subjectKey: key), key: key)
        let intermediate = try root.issueCA("Trust Test Issuing CA", slot: TrustSlot.intermediate, pathLength: 0)
        let leaf = try intermediate.issueLeaf()
        try expectTrusted(
            try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate]),
            chain: [leaf, intermediate.certificate, root.certificate])
    }

    /// RSA key sizes in the leaf or the intermediate.
    struct KeySizeCase: Sendable, CustomTestStringConvertible {
        let leafBits: Int?
        let intermediateBits: Int?
        let minimum: Int
        let expected: Kind?
        let index: Int?
        var testDescription: String {
            "leaf \(leafBits.map { "RSA-\($0)" } ?? "P-256"), intermediate \(intermediateBits.map { "RSA-\($0)" } ?? "P-256"), minimum \(minimum)"
        }
    }

    @Test(
        "RSA keys below policy.minimumRSAKeyBits are weakKey",
        arguments: [
            KeySizeCase(leafBits: 1024, intermediateBits: nil, minimum: 2048, expected: .weakKey, index: 0),
            KeySizeCase(leafBits: nil, intermediateBits: 1024, minimum: 2048, expected: .weakKey, index: 1),
            KeySizeCase(leafBits: 2048, intermediateBits: 2048, minimum: 2048, expected: nil, index: nil),
            KeySizeCase(leafBits: 2048, intermediateBits: nil, minimum: 3072, expected: .weakKey, index: 0),
            KeySizeCase(leafBits: 1024, intermediateBits: nil, minimum: 1024, expected: nil, index: nil),
        ])
    func rsaKeySize(_ c: KeySizeCase) throws {
        let root = try TrustPKI.root()
        let intermediateKey =
            try c.intermediateBits.map { try TrustPKI.key(TrustSlot.rsaSecond, .rsa(bits: $0)) }
            ?? TrustPKI.key(TrustSlot.intermediate)
        let intermediate = try root.issueCA(TrustPKI.caSpec("Trust Test Issuing CA", pathLength: 0), key: intermediateKey)
        let leafKey = try c.leafBits.map { try TrustPKI.key(TrustSlot.rsa, .rsa(bits: $0)) } ?? TrustPKI.key(TrustSlot.leaf)
        let leaf = try intermediate.issue(TrustPKI.leafSpec(rsa: c.leafBits != nil), key: leafKey)
        var policy = TrustPKI.serverPolicy()
        policy.minimumRSAKeyBits = c.minimum
        let outcome = try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate], policy: policy)
        if let kind = c.expected {
            expectRejected(outcome, kind, at: c.index)
        } else {
            try expectTrusted(outcome, chain: [leaf, intermediate.certificate, root.certificate])
        }
    }

    // MARK: - Basic certificate rules

    @Test("a v1 leaf is invalidCertificate")
    func v1Leaf() throws {
        let chain = try TrustChain.make()
        let spec = LabCertificateSpec(subject: .cn(TrustPKI.host), extensions: [], version: 0)
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        expectRejected(
            try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate]),
            .invalidCertificate, at: 0)
    }

    @Test("a v1 intermediate is invalidCertificate")
    func v1Intermediate() throws {
        let root = try TrustPKI.root()
        let spec = LabCertificateSpec(
            subject: .cn("Trust Test Issuing CA"), notBefore: TrustPKI.caValidity.notBefore, notAfter: TrustPKI.caValidity.notAfter,
            extensions: [], version: 0)
        let intermediate = try root.issueCA(spec, key: TrustPKI.key(TrustSlot.intermediate))
        let leaf = try intermediate.issueLeaf()
        expectRejected(
            try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate]), .invalidCertificate, at: 1)
    }

    /// Leaf serial numbers (INTEGER content octets).
    struct SerialCase: Sendable, CustomTestStringConvertible {
        let name: String
        let serial: [UInt8]
        let valid: Bool
        var testDescription: String { name }
    }

    @Test(
        "serial numbers: negative and over-long are invalidCertificate",
        arguments: [
            SerialCase(name: "negative", serial: [0x80, 0x01], valid: false),
            SerialCase(name: "minus one", serial: [0xFF], valid: false),
            SerialCase(name: "20 octets", serial: [0x7F] + [UInt8](repeating: 0xAB, count: 19), valid: true),
            SerialCase(name: "21 octets with sign byte (tolerated)", serial: [0x00] + [UInt8](repeating: 0xAB, count: 20), valid: true),
            SerialCase(name: "22 octets", serial: [0x01] + [UInt8](repeating: 0xAB, count: 21), valid: false),
        ])
    func serialNumber(_ c: SerialCase) throws {
        let chain = try TrustChain.make()
        var spec = TrustPKI.leafSpec()
        spec.serial = c.serial
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        let outcome = try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate])
        if c.valid {
            try expectTrusted(outcome, chain: [leaf, chain.intermediate.certificate, chain.root.certificate])
        } else {
            expectRejected(outcome, .invalidCertificate, at: 0)
        }
    }

    @Test("an empty issuer name is invalidCertificate")
    func emptyIssuer() throws {
        let chain = try TrustChain.make()
        var spec = TrustPKI.leafSpec()
        spec.issuerNameOverride = .empty
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        expectRejected(
            try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate]),
            .invalidCertificate, at: 0)
    }

    @Test("a 2049 date encoded as GeneralizedTime is invalidCertificate; 2050 as GeneralizedTime is fine")
    func generalizedTimeBefore2050() throws {
        let chain = try TrustChain.make()
        let in2049: Int64 = 2_506_291_200  // 2049-06-03T00:00:00Z
        let in2050: Int64 = 2_537_827_200  // 2050-06-03T00:00:00Z
        let template = try chain.intermediate.issue(TrustPKI.leafSpec(notAfter: in2049), key: TrustPKI.key(TrustSlot.leaf))
        // TBSCertificate: [0] version, serial, signature, issuer, validity (index 4), …
        let leaf = try TrustPKI.resign(template, with: chain.intermediate.key) { fields in
            var fields = fields
            fields[4] = LabDER.sequence([try LabDER.time(TrustPKI.leafValidity.notBefore), try LabDER.generalizedTime(in2049)])
            return fields
        }
        let parsed = try TrustPKI.parse(leaf)
        #expect(parsed.notAfter.encoding == .generalizedTime)
        #expect(parsed.notAfter.year == 2049)
        expectRejected(
            try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate]),
            .invalidCertificate, at: 0)

        let later = try chain.intermediate.issue(TrustPKI.leafSpec(notAfter: in2050), key: TrustPKI.key(TrustSlot.leaf))
        #expect(try TrustPKI.parse(later).notAfter.encoding == .generalizedTime)
        try expectTrusted(
            try TrustPKI.validate(later, [chain.intermediate.certificate], anchors: [chain.root.certificate]),
            chain: [later, chain.intermediate.certificate, chain.root.certificate])
    }

    @Test("a CA certificate as the leaf is leafIsCertificateAuthority")
    func leafIsCertificateAuthority() throws {
        let chain = try TrustChain.make()
        let spec = TrustPKI.leafSpec(extensions: [
            .basicConstraints(ca: true), .keyUsage([.digitalSignature]), .extendedKeyUsage(["serverAuth"]),
            .subjectAltName([.dns(TrustPKI.host)]), .subjectKeyIdentifier(), .authorityKeyIdentifier(),
        ])
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        expectRejected(
            try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate]),
            .leafIsCertificateAuthority, at: 0)
        // The intermediate itself presented as the leaf.
        expectRejected(
            try TrustPKI.validate(chain.intermediate.certificate, [], anchors: [chain.root.certificate], policy: .basicX509),
            .leafIsCertificateAuthority, at: 0)
    }

    // MARK: - Budget

    /// Six keys; for every ordered pair (i, j), i ≠ j, a self-issued "Mesh CA" certificate for
    /// key i signed by key j: 30 intermediates that all chain to each other, none to an anchor,
    /// so every permutation of keys is a candidate path. The leaf is signed by key 0.
    static func mesh() throws -> (leaf: LabCertificate, intermediates: [LabCertificate]) {
        let count = 6
        let keys = try (0..<count).map { try TrustPKI.key(TrustSlot.meshBase + $0) }
        let handles = try keys.map { key in
            TrustCA(certificate: try LabCertificate.issue(TrustPKI.caSpec("Mesh CA", selfSigned: true), subjectKey: key), key: key)
        }
        var mesh: [LabCertificate] = []
        for i in 0..<count {
            for j in 0..<count where i != j {
                mesh.append(try handles[j].issue(TrustPKI.caSpec("Mesh CA"), key: keys[i]))
            }
        }
        return (try handles[0].issueLeaf(), mesh)
    }

    @Test("a mesh of cross-signed same-subject intermediates exhausts the signature budget quickly")
    func budgetExhausted() throws {
        let (leaf, mesh) = try Self.mesh()
        let anchor = try TrustPKI.root()
        let clock = ContinuousClock()
        var outcome: ValidationOutcome?
        let elapsed = try clock.measure {
            outcome = try TrustPKI.validate(leaf, mesh, anchors: [anchor.certificate])
        }
        let result = try #require(outcome)
        expectRejected(result, .budgetExhausted, at: nil)
        #expect(result.signatureChecks == 128)
        #expect(elapsed < .seconds(3), "took \(elapsed)")
    }

    @Test("with tracing, the attempt that exhausted the budget is the trace's last entry")
    func budgetExhaustedTrace() throws {
        let (leaf, mesh) = try Self.mesh()
        let outcome = try TrustPKI.validate(leaf, mesh, anchors: [try TrustPKI.root().certificate], trace: true)
        expectRejected(outcome, .budgetExhausted, at: nil)
        #expect(!outcome.trace.isEmpty)
        // The attempt cut short by the budget is recorded, so an explanation says why it stopped.
        #expect(outcome.trace.last?.failure?.kind == .budgetExhausted, "last: \(outcome.trace.last?.description ?? "none")")
    }

    @Test("a chain whose name-constraint work exceeds the budget is budgetExhausted")
    func nameConstraintBudget() throws {
        let root = try TrustPKI.root()
        let permitted = (0..<1000).map { LabGeneralName.dns("permitted\($0).example") }
        let intermediate = try root.issueCA(
            TrustPKI.caSpec(
                "Trust Test Issuing CA", extensions: TrustPKI.caExtensions() + [.nameConstraints(permitted: permitted, excluded: [])]),
            key: TrustPKI.key(TrustSlot.intermediate))
        let sans = (0..<1100).map { LabGeneralName.dns("host\($0).permitted0.example") }
        let leaf = try intermediate.issueLeaf("host0.permitted0.example", sans: sans)
        let outcome = try TrustPKI.validate(
            leaf, [intermediate.certificate], anchors: [root.certificate], policy: TrustPKI.serverPolicy(host: nil))
        // 1,101 names × 1,000 subtrees exceeds the 2^20 comparisons up front; the constraining
        // CA is named (unlike signature-budget exhaustion, which names no certificate).
        expectRejected(outcome, .budgetExhausted, at: 1)
    }

    // MARK: - Revocation

    enum CRLCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case noneRevoked, otherSerialRevoked, leafRevoked, intermediateRevoked, noCRLFromIntermediate, noCRLsAtAll
        case crlSignedByWrongKey, staleCRL, futureCRL, crlWithoutNumber
        /// A SHA-1-signed CRL is not used when the policy forbids SHA-1, so status is unknown.
        case sha1SignedCRL
        var testDescription: String { rawValue }

        var expectedIndex: Int? {
            switch self {
            case .noneRevoked, .otherSerialRevoked: return nil
            case .intermediateRevoked: return 1
            default: return 0
            }
        }

        /// A listed certificate is revoked; a certificate no usable CRL covers has an unknown
        /// status, which is a hard failure of its own kind (RFC 5280 §6.3.3 UNDETERMINED).
        var expectedKind: Kind {
            switch self {
            case .leafRevoked, .intermediateRevoked: return .revoked
            default: return .revocationStatusUnknown
            }
        }
    }

    @Test("CRLs: a revoked leaf or intermediate is revoked; an unknown status is a failure too", arguments: CRLCase.allCases)
    func revocation(_ c: CRLCase) throws {
        let chain = try TrustChain.make()
        let leafSerial = chain.leaf.serialNumber
        let intermediateSerial = chain.intermediate.certificate.serialNumber
        let rootCRL = try TrustPKI.crl(from: chain.root, revoking: c == .intermediateRevoked ? [intermediateSerial] : [])
        let intermediateCRL: CertificateRevocationList?
        switch c {
        case .noneRevoked, .intermediateRevoked: intermediateCRL = try TrustPKI.crl(from: chain.intermediate)
        case .otherSerialRevoked: intermediateCRL = try TrustPKI.crl(from: chain.intermediate, revoking: [[0x01, 0x02, 0x03]])
        case .leafRevoked: intermediateCRL = try TrustPKI.crl(from: chain.intermediate, revoking: [leafSerial])
        case .noCRLFromIntermediate, .noCRLsAtAll: intermediateCRL = nil
        case .crlSignedByWrongKey:
            intermediateCRL = try TrustPKI.crl(from: chain.intermediate, signingKey: TrustPKI.key(TrustSlot.wrong))
        case .staleCRL:
            intermediateCRL = try TrustPKI.crl(
                from: chain.intermediate, thisUpdate: TrustPKI.now - 30 * LabClock.day, nextUpdate: TrustPKI.now - LabClock.day)
        case .futureCRL:
            intermediateCRL = try TrustPKI.crl(
                from: chain.intermediate, thisUpdate: TrustPKI.now + LabClock.day, nextUpdate: TrustPKI.now + 8 * LabClock.day)
        case .crlWithoutNumber: intermediateCRL = try TrustPKI.crl(from: chain.intermediate, includeNumber: false)
        case .sha1SignedCRL: intermediateCRL = try TrustPKI.crl(from: chain.intermediate, scheme: .ecdsa(.sha1))
        }
        let crls = c == .noCRLsAtAll ? [] : [rootCRL] + (intermediateCRL.map { [$0] } ?? [])
        let outcome = try chain.validate(checks: [CRLCheck(crls)])
        if let index = c.expectedIndex {
            expectRejected(outcome, c.expectedKind, at: index)
        } else {
            try expectTrusted(outcome, chain: [chain.leaf, chain.intermediate.certificate, chain.root.certificate])
        }
    }
}
