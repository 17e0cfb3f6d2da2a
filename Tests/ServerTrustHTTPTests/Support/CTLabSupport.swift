import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import TrustEvaluation

/// The Certificate Transparency lab of the live tests: a web PKI whose root plays the system
/// root, Lab CT logs (operator A runs alpha and gamma, operator B beta; an unknown log the list
/// does not name; a log the list says was retired 20 days ago), a v3 log list of them (current,
/// and one 90 days old), and for each shape of issue 26 the SCTs a server presents, embedded in
/// its certificate (nginx) or sent in the TLS extension (the Lab's TLS server). Valid around
/// the real clock, since a connection is decided at the real time.
///
/// Key slots 780-784 and LabPKI keySlot 262 (786-788) belong to these tests.
final class CTLab: Sendable {
    /// The shapes: one compliant, the rest not (under both policies, except `oneOperator`
    /// delivered in the TLS extension, which Apple's policy accepts: it asks for two logs, one
    /// of them delivered, not two operators).
    enum Shape: String, CaseIterable, Sendable, CustomStringConvertible {
        case compliant
        case tooFew = "too-few"
        case oneOperator = "one-operator"
        case badSignature = "bad-signature"
        case unknownLog = "unknown-log"
        case retiredLog = "retired-log"
        case futureTimestamp = "future-timestamp"

        var description: String { rawValue }
        static var nonCompliant: [Shape] { allCases.filter { $0 != .compliant } }

        /// Whether `policy` refuses the shape when its SCTs come in the TLS extension.
        func refusedDelivered(under policy: CTPolicy) -> Bool { self != .compliant && !(self == .oneOperator && policy == .apple) }
    }

    static let host = "ct.nginx.test"
    let now: Int64
    let pki: LabPKI
    let root: Certificate
    let alpha: LabCTLog
    let beta: LabCTLog
    let gamma: LabCTLog
    let unknown: LabCTLog
    let retired: LabCTLog
    /// The list of alpha, beta, gamma and the retired log, a day old.
    let logListJSON: [UInt8]
    /// The same logs, listed 90 days ago.
    let staleLogListJSON: [UInt8]

    init() throws {
        let now = Int64(Date().timeIntervalSince1970)
        self.now = now
        pki = try LabPKI.webChain(host: Self.host, leafNotBefore: now - 10 * LabClock.day, leafNotAfter: now + 80 * LabClock.day, keySlot: 262)
        root = try Certificate(derEncoded: pki.root.der)
        func log(_ name: String, _ operatorName: String, _ slot: Int) throws -> LabCTLog {
            try LabCTLog(name: name, operatorName: operatorName, key: LabKey.shared(.p256, slot: slot), stateSince: now - 365 * LabClock.day)
        }
        alpha = try log("Live Alpha", "Operator A", 780)
        beta = try log("Live Beta", "Operator B", 781)
        gamma = try log("Live Gamma", "Operator A", 782)
        unknown = try log("Live Unlisted", "Operator C", 783)
        retired = try log("Live Retired", "Operator B", 784).with(state: .retired, since: now - 20 * LabClock.day)
        logListJSON = try LabCTLogList(logs: [alpha, beta, gamma, retired], timestamp: now - LabClock.day).json()
        staleLogListJSON = try LabCTLogList(logs: [alpha, beta, gamma, retired], timestamp: now - 90 * LabClock.day).json()
    }

    func logList(stale: Bool = false) throws -> CTLogList { try CTLogList(json: stale ? staleLogListJSON : logListJSON) }

    /// The Lab logs' keys, for OpenSSL's SCT_validate (the listed ones).
    var listedKeys: [[UInt8]] { [alpha, beta, gamma, retired].map(\.key.publicKeyInfoDER) }

    /// The logs whose SCTs a shape carries, and the SCT time (milliseconds).
    func logs(_ shape: Shape) -> [LabCTLog] {
        switch shape {
        case .compliant, .badSignature, .futureTimestamp: return [alpha, beta]
        case .tooFew: return [alpha]
        case .oneOperator: return [alpha, gamma]
        case .unknownLog: return [alpha, unknown]
        case .retiredLog: return [alpha, retired]
        }
    }

    func spec() -> LabCertificateSpec {
        LabPKI.leafSpec(host: Self.host, keyAlgorithm: .p256, notBefore: now - 10 * LabClock.day, notAfter: now + 80 * LabClock.day)
    }

    /// A leaf with the shape's SCTs embedded (dated a second after notBefore, or an hour ahead
    /// for `futureTimestamp`).
    func embeddedLeaf(_ shape: Shape) throws -> LabCertificate {
        let spec = spec()
        let timestamp = shape == .futureTimestamp ? UInt64(now + 3600) * 1000 : nil
        let issued = try LabCertificate.issueWithEmbeddedSCTs(
            spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, logs: logs(shape), timestamp: timestamp)
        guard shape == .badSignature else { return issued.certificate }
        return try LabCertificate.issue(
            spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, embedding: [issued.scts[0], issued.scts[1].withCorruptedSignature])
    }

    /// A leaf without SCTs.
    func plainLeaf() throws -> LabCertificate {
        try LabCertificate.issue(spec(), subjectKey: pki.leafKey, issuer: pki.intermediateIssuer)
    }

    /// The shape's SCTs over `leaf` (x509 entries), as the TLS extension or a staple carries them.
    func deliveredSCTs(_ shape: Shape, for leaf: LabCertificate) throws -> [LabSCT] {
        let timestamp = UInt64(shape == .futureTimestamp ? now + 3600 : now - 60) * 1000
        var scts = try logs(shape).map { try $0.sign(.certificate(leaf), timestamp: timestamp) }
        if shape == .badSignature { scts[1] = scts[1].withCorruptedSignature }
        return scts
    }

    /// A stapled OCSP response for `leaf`, signed by the intermediate, carrying `scts`.
    func staple(for leaf: LabCertificate, scts: [LabSCT]) throws -> [UInt8] {
        let single = LabOCSPSingleResponse(
            certID: try .of(leaf, issuer: pki.intermediate), status: .good, thisUpdate: now - 3600, nextUpdate: now + 4 * LabClock.day,
            extensions: [.raw(oid: "1.3.6.1.4.1.11129.2.4.5", critical: false, valueDER: LabDER.octetString(LabSCT.list(scts)))])
        return try LabOCSP.issue(LabOCSPResponseSpec(responses: [single], producedAt: now - 3600), signer: pki.intermediateIssuer)
    }

    /// The CT settings.
    func settings(_ mode: CTMode, _ policy: CTPolicy, stale: Bool = false) throws -> CertificateTransparencyPolicy {
        CertificateTransparencyPolicy(mode: mode, policy: policy, logList: try logList(stale: stale))
    }

    /// A decider with the lab root as the system root, and the host's CT settings (and anchors).
    func decider(_ ct: CertificateTransparencyPolicy, hostAnchors: Bool = false) -> ServerTrustDecider {
        let anchors = hostAnchors ? TrustAnchors([root], only: true) : .none
        return ServerTrustDecider(
            policy: TrustPolicy(HostTrustPolicy(anchors: anchors, certificateTransparency: ct)), anchors: hostAnchors ? .empty : TrustStore([root]))
    }
}

/// An event monitor that keeps the violations a session reports.
final class ViolationRecorder: EventMonitor, Sendable {
    private let storage = Mutex<[(host: String?, violations: [PathCheckFinding])]>([])
    func request(_ request: HTTPRequest, didReportViolations violations: [PathCheckFinding], in decision: TrustDecision) {
        storage.withLock { $0.append((decision.host, violations)) }
    }
    var reports: [(host: String?, violations: [PathCheckFinding])] { storage.withLock { $0 } }
}
