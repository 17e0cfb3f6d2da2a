import CertificateParsing
import Foundation
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

// Shared fixtures for the verifier suites (VerifierPathBuildingTests, VerifierRejectionTests,
// HostnameVerificationTests, TrustStoreTests, NameConstraintTests).
//
// Every certificate is generated at test time with ServerTrustLab and evaluated at the fixed
// instant `LabClock.reference`, never the real clock. Keys come from `LabKey.shared` with slots
// from `TrustSlot` (all ≥ 100, so they never collide with the other test files' slots).

/// Key slots of the verifier suites. The same slot always yields the same key, so two roles that
/// must have different keys must use different slots.
enum TrustSlot {
    static let root = 100
    static let intermediate = 101
    static let leaf = 102
    static let otherRoot = 103
    static let otherIntermediate = 104
    /// A key that signs what it should not (bad-signature cases).
    static let wrong = 105
    static let crossRoot = 106
    static let untrustedRoot = 107
    static let secondIntermediate = 108
    static let rollover = 109
    static let cycleA = 110
    static let cycleB = 111
    static let selfSignedLeaf = 112
    /// A second key of the issuing CA, for CRLs only (RFC 5280 §6.3.3 (f)).
    static let crlSigner = 113
    /// A delegated CRL issuer (indirect CRLs).
    static let delegatedCRLIssuer = 114
    /// Ten consecutive slots for the budget mesh.
    static let meshBase = 120
    /// RSA keys (slow to generate: a handful only).
    static let rsa = 100
    static let rsaSecond = 101
}

/// A CA of a generated hierarchy: its certificate and private key.
struct TrustCA: Sendable {
    let certificate: LabCertificate
    let key: LabKey

    var issuer: LabIssuer { LabIssuer(certificate: certificate, key: key) }

    /// Issues a certificate under this CA; `signingKey` replaces the CA's key for the
    /// signature only (names and AKI still point at this CA), for bad-signature cases.
    func issue(_ spec: LabCertificateSpec, key subjectKey: LabKey, signingKey: LabKey? = nil) throws -> LabCertificate {
        try LabCertificate.issue(spec, subjectKey: subjectKey, issuer: LabIssuer(certificate: certificate, key: signingKey ?? key))
    }

    /// Issues a subordinate CA.
    func issueCA(_ spec: LabCertificateSpec, key subjectKey: LabKey, signingKey: LabKey? = nil) throws -> TrustCA {
        TrustCA(certificate: try issue(spec, key: subjectKey, signingKey: signingKey), key: subjectKey)
    }

    /// Issues a subordinate CA named `commonName` with the standard CA profile.
    func issueCA(_ commonName: String, slot: Int, algorithm: LabKeyAlgorithm = .p256, pathLength: Int? = nil) throws -> TrustCA {
        try issueCA(TrustPKI.caSpec(commonName, pathLength: pathLength), key: TrustPKI.key(slot, algorithm))
    }

    /// Issues a standard server leaf for `host`.
    func issueLeaf(_ host: String = TrustPKI.host, slot: Int = TrustSlot.leaf, sans: [LabGeneralName]? = nil) throws -> LabCertificate {
        try issue(TrustPKI.leafSpec(host, sans: sans), key: TrustPKI.key(slot))
    }
}

/// A root → intermediate → leaf hierarchy.
struct TrustChain: Sendable {
    let root: TrustCA
    let intermediate: TrustCA
    let leaf: LabCertificate

    /// Root `rootName`, intermediate `intermediateName` (pathLen 0), leaf for `host`.
    static func make(
        host: String = TrustPKI.host,
        sans: [LabGeneralName]? = nil,
        rootName: String = "Trust Test Root",
        intermediateName: String = "Trust Test Issuing CA",
        rootSlot: Int = TrustSlot.root,
        intermediateSlot: Int = TrustSlot.intermediate,
        leafSlot: Int = TrustSlot.leaf
    ) throws -> TrustChain {
        let root = try TrustPKI.root(rootName, slot: rootSlot)
        let intermediate = try root.issueCA(intermediateName, slot: intermediateSlot, pathLength: 0)
        let leaf = try intermediate.issueLeaf(host, slot: leafSlot, sans: sans)
        return TrustChain(root: root, intermediate: intermediate, leaf: leaf)
    }

    /// Validates the leaf with the intermediate against the root.
    func validate(
        policy: ValidationPolicy = TrustPKI.serverPolicy(), at time: Int64 = TrustPKI.now, checks: [any PathCheck] = [], trace: Bool = false
    ) throws -> ValidationOutcome {
        try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate], policy: policy, at: time, checks: checks, trace: trace)
    }
}

/// Builders and the validation entry point for the verifier suites.
enum TrustPKI {
    /// The evaluation instant: 2026-01-01T00:00:00Z.
    static let now = LabClock.reference
    /// The host most leaves are issued for.
    static let host = "www.example.com"
    /// Root validity: now ± 10 years.
    static let rootValidity = (notBefore: now - 10 * LabClock.year, notAfter: now + 10 * LabClock.year)
    /// Intermediate validity: now ± 5 years.
    static let caValidity = (notBefore: now - 5 * LabClock.year, notAfter: now + 5 * LabClock.year)
    /// Leaf validity: 30 days before to 60 days after now.
    static let leafValidity = (notBefore: now - 30 * LabClock.day, notAfter: now + 60 * LabClock.day)

    static func key(_ slot: Int, _ algorithm: LabKeyAlgorithm = .p256) throws -> LabKey {
        try LabKey.shared(algorithm, slot: slot)
    }

    /// The SSL server policy for `host`.
    static func serverPolicy(host: String? = TrustPKI.host) -> ValidationPolicy {
        .sslServer(host: host)
    }

    /// The standard CA extensions: critical basicConstraints cA, keyCertSign|cRLSign, SKI and
    /// (unless self-signed) AKI.
    static func caExtensions(pathLength: Int? = nil, selfSigned: Bool = false) -> [LabExtension] {
        var extensions: [LabExtension] = [
            .basicConstraints(ca: true, pathLength: pathLength),
            .keyUsage([.keyCertSign, .cRLSign]),
            .subjectKeyIdentifier(),
        ]
        if !selfSigned { extensions.append(.authorityKeyIdentifier()) }
        return extensions
    }

    /// A CA spec named `CN=commonName`.
    static func caSpec(
        _ commonName: String,
        pathLength: Int? = nil,
        selfSigned: Bool = false,
        notBefore: Int64 = caValidity.notBefore,
        notAfter: Int64 = caValidity.notAfter,
        extensions: [LabExtension]? = nil
    ) -> LabCertificateSpec {
        LabCertificateSpec(
            subject: .cn(commonName), notBefore: notBefore, notAfter: notAfter,
            extensions: extensions ?? caExtensions(pathLength: pathLength, selfSigned: selfSigned))
    }

    /// The standard server-leaf extensions: CA:FALSE, digitalSignature (plus keyEncipherment
    /// for RSA), EKU serverAuth, SAN (omitted when empty), SKI, AKI.
    static func leafExtensions(sans: [LabGeneralName], rsa: Bool = false) -> [LabExtension] {
        var extensions: [LabExtension] = [
            .basicConstraints(ca: false),
            .keyUsage(rsa ? [.digitalSignature, .keyEncipherment] : [.digitalSignature]),
            .extendedKeyUsage(["serverAuth"]),
        ]
        if !sans.isEmpty { extensions.append(.subjectAltName(sans)) }
        extensions += [.subjectKeyIdentifier(), .authorityKeyIdentifier()]
        return extensions
    }

    /// A server-leaf spec with subject `CN=host` and SAN `sans` (default: the host).
    static func leafSpec(
        _ host: String = TrustPKI.host,
        sans: [LabGeneralName]? = nil,
        rsa: Bool = false,
        notBefore: Int64 = leafValidity.notBefore,
        notAfter: Int64 = leafValidity.notAfter,
        extensions: [LabExtension]? = nil
    ) -> LabCertificateSpec {
        LabCertificateSpec(
            subject: .cn(host), notBefore: notBefore, notAfter: notAfter,
            extensions: extensions ?? leafExtensions(sans: sans ?? [.forHost(host)], rsa: rsa))
    }

    /// A self-signed root CA.
    static func root(
        _ commonName: String = "Trust Test Root",
        slot: Int = TrustSlot.root,
        algorithm: LabKeyAlgorithm = .p256,
        notBefore: Int64 = rootValidity.notBefore,
        notAfter: Int64 = rootValidity.notAfter,
        pathLength: Int? = nil,
        extensions: [LabExtension]? = nil
    ) throws -> TrustCA {
        let key = try key(slot, algorithm)
        let spec = caSpec(
            commonName, pathLength: pathLength, selfSigned: true, notBefore: notBefore, notAfter: notAfter,
            extensions: extensions)
        return TrustCA(certificate: try LabCertificate.issue(spec, subjectKey: key), key: key)
    }

    static func parse(_ certificate: LabCertificate) throws -> Certificate {
        try Certificate(derEncoded: certificate.der)
    }

    /// Validates `leaf` with `intermediates` (in the given order) against `anchors`, at `time`
    /// (the reference instant unless given), with the whole-path `checks`.
    static func validate(
        _ leaf: LabCertificate,
        _ intermediates: [LabCertificate] = [],
        anchors: [LabCertificate],
        policy: ValidationPolicy = serverPolicy(),
        at time: Int64 = now,
        checks: [any PathCheck] = [],
        trace: Bool = false
    ) throws -> ValidationOutcome {
        let store = TrustStore(try anchors.map(parse))
        return try validate(leaf, intermediates, store: store, policy: policy, at: time, checks: checks, trace: trace)
    }

    /// Validates against an existing store.
    static func validate(
        _ leaf: LabCertificate,
        _ intermediates: [LabCertificate] = [],
        store: TrustStore,
        policy: ValidationPolicy = serverPolicy(),
        at time: Int64 = now,
        checks: [any PathCheck] = [],
        trace: Bool = false
    ) throws -> ValidationOutcome {
        let verifier = Verifier(anchors: store, policy: policy)
        return verifier.validate(leaf: try parse(leaf), intermediates: try intermediates.map(parse), at: time, checks: checks, trace: trace)
    }

    /// Re-signs `certificate` with `key` after replacing TBSCertificate fields: `transform`
    /// receives the encoded fields and returns the new ones (for encodings the Lab's spec cannot
    /// express, such as a GeneralizedTime before 2050).
    static func resign(
        _ certificate: LabCertificate,
        with key: LabKey,
        transform: ([[UInt8]]) throws -> [[UInt8]]
    ) throws -> LabCertificate {
        let fields = try LabDER.parse(certificate.tbsDER).children().map(\.encoded)
        let tbs = LabDER.sequence(try transform(fields))
        return try LabCertificate(der: LabCertificate.sign(tbsDER: tbs, with: key))
    }

    /// A v2 CRL from `issuer` listing `revokedSerials`, with a cRLNumber, signed by
    /// `signingKey` (default: the issuer's key).
    static func crl(
        from issuer: TrustCA,
        revoking revokedSerials: [[UInt8]] = [],
        thisUpdate: Int64 = now - LabClock.day,
        nextUpdate: Int64? = now + 7 * LabClock.day,
        includeNumber: Bool = true,
        signingKey: LabKey? = nil,
        scheme: LabSignatureScheme? = nil
    ) throws -> CertificateRevocationList {
        let key = signingKey ?? issuer.key
        let scheme = scheme ?? LabSignatureScheme.default(for: key.algorithm)
        var fields: [[UInt8]] = [
            LabDER.integer(1),
            try scheme.algorithmIdentifierDER,
            issuer.certificate.subjectNameDER,
            try LabDER.time(thisUpdate),
        ]
        if let nextUpdate { fields.append(try LabDER.time(nextUpdate)) }
        if !revokedSerials.isEmpty {
            fields.append(
                LabDER.sequence(
                    try revokedSerials.map { serial in
                        LabDER.sequence([LabDER.integer(content: serial), try LabDER.time(thisUpdate)])
                    }))
        }
        if includeNumber {
            let number = LabDER.sequence([try LabDER.oid("2.5.29.20"), LabDER.octetString(LabDER.integer(1))])
            fields.append(LabDER.explicit(0, LabDER.sequence([number])))
        }
        let der = try LabCertificate.sign(tbsDER: LabDER.sequence(fields), with: key, scheme: scheme)
        return try CertificateRevocationList(derEncoded: der)
    }
}

// MARK: - Assertions

/// Expects a trusted outcome whose chain is exactly `expected` (leaf first, anchor last).
func expectTrusted(
    _ outcome: ValidationOutcome,
    chain expected: [LabCertificate],
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let certificates = try expected.map(TrustPKI.parse)
    #expect(outcome.failure == nil, "unexpected rejection: \(outcome.failure.map(\.description) ?? "")", sourceLocation: sourceLocation)
    #expect(outcome.chain?.certificates == certificates, sourceLocation: sourceLocation)
}

/// Expects a rejection of exactly `kind` at `index` (nil: no certificate concerned).
func expectRejected(
    _ outcome: ValidationOutcome,
    _ kind: ValidationFailure.Kind,
    at index: Int?,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let detail = outcome.failure.map(\.description) ?? "trusted"
    #expect(outcome.failure?.kind == kind, "got \(detail)", sourceLocation: sourceLocation)
    #expect(outcome.failure?.certificateIndex == index, "got \(detail)", sourceLocation: sourceLocation)
}

extension TrustPKI {
    /// A CRL generated by ServerTrustLab from `spec`, signed by `signer`.
    static func crl(_ spec: LabCRLSpec, signedBy signer: TrustCA) throws -> CertificateRevocationList {
        try CertificateRevocationList(derEncoded: LabCRL.issue(spec, signer: signer.issuer))
    }

    /// The policy the revocation suites validate under: the server policy (Web PKI), or basic
    /// X.509 under RFC 5280 alone.
    static func revocationPolicy(profile: ValidationPolicy.Profile = .webPKI) -> ValidationPolicy {
        var policy = profile == .webPKI ? serverPolicy() : ValidationPolicy.basicX509
        policy.profile = profile
        return policy
    }
}

/// OpenSSL's verifier behind counters (signature checks and keys made), or a verifier that
/// refuses every signature: for the suites that prove a check goes through the
/// `SignatureVerifier` seam (CT, OCSP).
final class CountingVerifier: SignatureVerifier, Sendable {
    let refuses: Bool
    private let checkCount = Atomic<Int>(0)
    private let keyCount = Atomic<Int>(0)

    init(refuses: Bool = false) { self.refuses = refuses }

    /// Signature checks made so far.
    var checks: Int { checkCount.load(ordering: .relaxed) }
    /// Keys made so far.
    var keys: Int { keyCount.load(ordering: .relaxed) }

    func makeKey(_ publicKeyInfo: SubjectPublicKeyInfo) throws(SignatureError) -> VerificationKey {
        keyCount.add(1, ordering: .relaxed)
        return try OpenSSLSignatureVerifier().makeKey(publicKeyInfo)
    }

    func check(signature: ArraySlice<UInt8>, over data: ArraySlice<UInt8>, algorithm: SignatureAlgorithm, key: VerificationKey) -> SignatureCheckResult {
        checkCount.add(1, ordering: .relaxed)
        if refuses { return .invalid(SignatureError(.badSignature, "refused by the test")) }
        return OpenSSLSignatureVerifier().check(signature: signature, over: data, algorithm: algorithm, key: key)
    }
}
