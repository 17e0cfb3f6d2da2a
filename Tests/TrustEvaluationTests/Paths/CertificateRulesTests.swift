import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// The rule table audited position by position: each row breaks one rule (or changes the key)
/// in exactly one certificate of root → issuing CA → leaf, and states what the Web PKI profile
/// (TLS server, `www.example.com`) and the RFC 5280 profile (basic X.509) must answer for that
/// position. A rule written for one position only shows up here as a wrong answer at another.
@Suite("Certificate rules at every position and under both profiles")
struct CertificateRulesTests {
    typealias Kind = ValidationFailure.Kind
    typealias Profile = ValidationPolicy.Profile

    enum Position: Int, CaseIterable, Sendable, CustomTestStringConvertible {
        case leaf = 0
        case intermediate = 1
        case anchor = 2
        var testDescription: String { "\(self)" }
        var isCA: Bool { self != .leaf }
    }

    enum Mutation: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case version1, negativeSerial, serialOf22Octets, generalizedTimeBefore2050, sha1Signature, unknownCriticalExtension
        case missingAKI, akiWithIssuerAndSerial, missingSKI, keyUsageWithoutKeyCertSign, keyCertSignOnLeaf
        case noBasicConstraints, nonCriticalBasicConstraints, leafAssertsCA, nameConstraintsOnLeaf
        case nonCriticalPolicyConstraints, nonCriticalInhibitAnyPolicy, policyMappingToAnyPolicy
        case missingSAN, criticalSANWithSubject, criticalEKU, ekuWithoutServerAuth, criticalFreshestCRL, criticalCRLDistributionPoints
        case rsa1024, rsa2048, rsa3072, p384, p521, ed25519, ed448
        var testDescription: String { rawValue }

        /// The positions where the mutation means something.
        var positions: [Position] {
            switch self {
            case .keyCertSignOnLeaf, .leafAssertsCA, .nameConstraintsOnLeaf, .missingSAN, .criticalSANWithSubject: return [.leaf]
            case .keyUsageWithoutKeyCertSign, .noBasicConstraints: return [.intermediate, .anchor]
            default: return Position.allCases
            }
        }

        var key: LabKeyAlgorithm? {
            switch self {
            case .rsa1024: return .rsa(bits: 1024)
            case .rsa2048: return .rsa(bits: 2048)
            case .rsa3072: return .rsa(bits: 3072)
            case .p384: return .p384
            case .p521: return .p521
            case .ed25519: return .ed25519
            case .ed448: return .ed448
            default: return nil
            }
        }

        /// What the profile must answer (`nil`: trusted).
        func expected(_ position: Position, _ profile: Profile) -> Kind? {
            let web = profile == .webPKI
            switch self {
            case .version1:
                switch position {
                case .leaf: return web ? .invalidCertificate : nil
                case .intermediate: return .invalidCertificate
                case .anchor: return web ? .invalidCertificate : .notCertificateAuthority
                }
            case .negativeSerial, .generalizedTimeBefore2050: return web ? .invalidCertificate : nil
            case .serialOf22Octets: return .invalidCertificate
            // A trust anchor's own signature is never checked.
            case .sha1Signature: return position == .anchor ? nil : .algorithmNotAllowed
            case .unknownCriticalExtension: return .unhandledCriticalExtension
            // A trust anchor is trusted for itself, not for how it was issued.
            case .missingAKI: return web && position != .anchor ? .extensionProfileViolation : nil
            case .akiWithIssuerAndSerial: return web ? .extensionProfileViolation : nil
            case .missingSKI: return web && position == .intermediate ? .extensionProfileViolation : nil
            case .keyUsageWithoutKeyCertSign, .keyCertSignOnLeaf: return .keyUsageNotAllowed
            case .noBasicConstraints: return .notCertificateAuthority
            case .nonCriticalBasicConstraints: return web && position.isCA ? .notCertificateAuthority : nil
            case .leafAssertsCA: return web ? .leafIsCertificateAuthority : nil
            case .nameConstraintsOnLeaf: return .extensionProfileViolation
            case .nonCriticalPolicyConstraints, .nonCriticalInhibitAnyPolicy: return web ? .extensionProfileViolation : nil
            // §6.1.4 (a) is a rule for certificates 1…n-1; the anchor's and the leaf's
            // mappings are not processed.
            case .policyMappingToAnyPolicy: return position == .intermediate ? .policyViolation : nil
            case .missingSAN, .criticalSANWithSubject: return web ? .extensionProfileViolation : nil
            case .criticalEKU: return web ? .extensionProfileViolation : nil
            // Basic X.509 requires no purpose.
            case .ekuWithoutServerAuth: return web ? .extendedKeyUsageNotAllowed : nil
            case .criticalFreshestCRL: return .extensionProfileViolation
            case .criticalCRLDistributionPoints: return nil
            case .rsa1024: return .weakKey
            case .rsa2048, .rsa3072, .p384, .p521, .ed25519, .ed448: return nil
            }
        }

        func apply(_ spec: inout LabCertificateSpec, _ position: Position) {
            func replace(_ oid: String, with ext: LabExtension?) {
                if let index = spec.extensions.firstIndex(where: { $0.oid == oid }) {
                    if let ext { spec.extensions[index] = ext } else { spec.extensions.remove(at: index) }
                } else if let ext {
                    spec.extensions.append(ext)
                }
            }
            switch self {
            case .version1:
                spec.version = 0
                spec.extensions = []
            case .negativeSerial: spec.serial = [0x80] + Array(spec.serial.dropFirst())
            case .serialOf22Octets: spec.serial = [0x01] + [UInt8](repeating: 0x5A, count: 21)
            case .generalizedTimeBefore2050: break  // re-encoded after signing, see `chain`
            case .sha1Signature: spec.signatureScheme = .ecdsa(.sha1)
            case .unknownCriticalExtension: spec.extensions.append(.raw(oid: "1.3.6.1.4.1.99999.42", critical: true, valueDER: LabDER.null()))
            case .missingAKI: replace("2.5.29.35", with: nil)
            case .akiWithIssuerAndSerial: replace("2.5.29.35", with: .authorityKeyIdentifier(includeIssuerAndSerial: true))
            case .missingSKI: replace("2.5.29.14", with: nil)
            case .keyUsageWithoutKeyCertSign: replace("2.5.29.15", with: .keyUsage([.digitalSignature, .cRLSign]))
            case .keyCertSignOnLeaf: replace("2.5.29.15", with: .keyUsage([.digitalSignature, .keyCertSign]))
            case .noBasicConstraints: replace("2.5.29.19", with: nil)
            case .nonCriticalBasicConstraints: replace("2.5.29.19", with: .basicConstraints(ca: position.isCA, critical: false))
            case .leafAssertsCA: replace("2.5.29.19", with: .basicConstraints(ca: true))
            case .nameConstraintsOnLeaf: spec.extensions.append(.nameConstraints(permitted: [.dns("example.com")], excluded: []))
            case .nonCriticalPolicyConstraints:
                spec.extensions.append(.policyConstraints(requireExplicitPolicy: 5, inhibitPolicyMapping: nil, critical: false))
            case .nonCriticalInhibitAnyPolicy: spec.extensions.append(.inhibitAnyPolicy(5, critical: false))
            case .policyMappingToAnyPolicy: spec.extensions.append(.policyMappings([LabPolicyMapping("1.3.6.1.4.1.99999.1.1", "anyPolicy")]))
            case .missingSAN: replace("2.5.29.17", with: nil)
            case .criticalSANWithSubject: replace("2.5.29.17", with: .subjectAltName([.dns(TrustPKI.host)], critical: true))
            case .criticalEKU: replace("2.5.29.37", with: .extendedKeyUsage(position.isCA ? ["serverAuth", "clientAuth"] : ["serverAuth"], critical: true))
            case .ekuWithoutServerAuth: replace("2.5.29.37", with: .extendedKeyUsage(["clientAuth"]))
            case .criticalFreshestCRL: spec.extensions.append(.freshestCRL([.uri("http://crl.example/delta.crl")], critical: true))
            case .criticalCRLDistributionPoints: spec.extensions.append(.crlDistributionPoints(["http://crl.example/a.crl"], critical: true))
            case .rsa1024, .rsa2048, .rsa3072, .p384, .p521, .ed25519, .ed448: break
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let mutation: Mutation
        let position: Position
        let profile: Profile
        var testDescription: String { "\(mutation.rawValue) at the \(position) (\(profile == .webPKI ? "Web PKI" : "RFC 5280"))" }
    }

    static let rows: [Row] = Mutation.allCases.flatMap { mutation in
        mutation.positions.flatMap { position in [Profile.webPKI, .rfc5280].map { Row(mutation: mutation, position: position, profile: $0) } }
    }

    /// Key slots for the key-type rows (one per algorithm).
    static func slot(_ algorithm: LabKeyAlgorithm) -> Int {
        switch algorithm {
        case .rsa(let bits): return 130 + bits / 1024
        case .p256: return 140
        case .p384: return 141
        case .p521: return 142
        case .ed25519: return 143
        case .ed448: return 144
        }
    }

    /// Root → issuing CA → leaf with `row`'s mutation applied to its position.
    static func chain(_ row: Row) throws -> (root: LabCertificate, intermediate: LabCertificate, leaf: LabCertificate) {
        func key(_ position: Position, default slot: Int) throws -> LabKey {
            guard position == row.position, let algorithm = row.mutation.key else { return try TrustPKI.key(slot) }
            return try TrustPKI.key(Self.slot(algorithm), algorithm)
        }
        func specFor(_ position: Position, _ base: LabCertificateSpec) -> LabCertificateSpec {
            var spec = base
            if position == row.position { row.mutation.apply(&spec, position) }
            return spec
        }
        func reencoded(_ certificate: LabCertificate, _ position: Position, signer: LabKey) throws -> LabCertificate {
            guard position == row.position, row.mutation == .generalizedTimeBefore2050, let spec = certificate.spec else { return certificate }
            // RFC 5280 §4.1.2.5: a 1950–2049 date must be UTCTime; write notBefore as GeneralizedTime.
            return try TrustPKI.resign(certificate, with: signer) { fields in
                var fields = fields
                fields[4] = LabDER.sequence([try LabDER.generalizedTime(spec.notBefore), try LabDER.time(spec.notAfter)])
                return fields
            }
        }
        let rootKey = try key(.anchor, default: TrustSlot.root)
        let root = try reencoded(
            try LabCertificate.issue(specFor(.anchor, TrustPKI.caSpec("Audit Root", selfSigned: true)), subjectKey: rootKey), .anchor, signer: rootKey)
        let caKey = try key(.intermediate, default: TrustSlot.intermediate)
        var caBase = TrustPKI.caSpec("Audit Issuing CA", pathLength: 0)
        caBase.extensions.append(.extendedKeyUsage(["serverAuth", "clientAuth"]))
        let intermediate = try reencoded(
            try LabCertificate.issue(specFor(.intermediate, caBase), subjectKey: caKey, issuer: LabIssuer(certificate: root, key: rootKey)),
            .intermediate, signer: rootKey)
        let leafKey = try key(.leaf, default: TrustSlot.leaf)
        let rsaLeaf = leafKey.algorithm.isRSA
        let leaf = try reencoded(
            try LabCertificate.issue(
                specFor(.leaf, TrustPKI.leafSpec(rsa: rsaLeaf)), subjectKey: leafKey, issuer: LabIssuer(certificate: intermediate, key: caKey)),
            .leaf, signer: caKey)
        return (root, intermediate, leaf)
    }

    @Test("each rule at each position, under each profile", arguments: rows)
    func rule(_ row: Row) throws {
        let (root, intermediate, leaf) = try Self.chain(row)
        var policy = row.profile == .webPKI ? TrustPKI.serverPolicy() : ValidationPolicy.basicX509
        policy.profile = row.profile
        let outcome = try TrustPKI.validate(leaf, [intermediate], anchors: [root], policy: policy)
        if let kind = row.mutation.expected(row.position, row.profile) {
            expectRejected(outcome, kind, at: row.position.rawValue)
        } else {
            try expectTrusted(outcome, chain: [leaf, intermediate, root])
        }
    }
}
