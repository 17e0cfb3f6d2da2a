public import CertificateParsing
public import ServerTrust
public import TrustEvaluation

/// Puts module `ServerTrust`'s evaluators on the wire: a ``SecurityPolicy`` (AFNetworking's
/// `AFSecurityPolicy`), any other `ServerTrustEvaluating`, or a `ServerTrustManager` (per-host
/// rules), each run on a `PeerTrust` built from the served chain.
///
/// ```swift
/// let policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [pinned])
/// let session = try HTTPSession(serverTrust: SecurityPolicyDecider(policy, systemAnchors: try .system()))
/// ```
public struct SecurityPolicyDecider: ServerTrustDecider {
    private enum Source: Sendable {
        case evaluator(any ServerTrustEvaluating)
        case manager(ServerTrustManager)
    }

    private let source: Source
    /// The system roots given to every `PeerTrust`.
    public let systemAnchors: TrustStore
    /// Custom anchors (`SecTrustSetAnchorCertificates`), empty for none.
    public let customAnchors: [Certificate]
    /// Trust only ``customAnchors`` (`SecTrustSetAnchorCertificatesOnly`).
    public let anchorsOnly: Bool

    /// Wraps an evaluator (a ``SecurityPolicy``, pinning evaluators, a composite, …).
    ///
    /// - Parameters:
    ///   - evaluator: The evaluator.
    ///   - systemAnchors: The system roots.
    ///   - customAnchors: Extra or replacement anchors.
    ///   - anchorsOnly: Trust only `customAnchors`.
    public init(_ evaluator: any ServerTrustEvaluating, systemAnchors: TrustStore, customAnchors: [Certificate] = [],
                anchorsOnly: Bool = false) {
        self.source = .evaluator(evaluator)
        self.systemAnchors = systemAnchors
        self.customAnchors = customAnchors
        self.anchorsOnly = anchorsOnly
    }

    /// Wraps a per-host manager (hosts without a rule fail when it requires every host to be
    /// evaluated).
    ///
    /// - Parameters:
    ///   - manager: The manager.
    ///   - systemAnchors: The system roots.
    public init(_ manager: ServerTrustManager, systemAnchors: TrustStore) {
        self.source = .manager(manager)
        self.systemAnchors = systemAnchors
        self.customAnchors = []
        self.anchorsOnly = false
    }

    /// Builds the `PeerTrust` and runs the evaluator.
    ///
    /// - Parameter chain: The served chain.
    /// - Returns: The decision, with the evaluator's decision record as ``TrustDecision/explanation``.
    public func decide(_ chain: ServedChain) -> TrustDecision {
        var trust = PeerTrust(certificates: chain.certificates, host: chain.host, port: chain.port, systemAnchors: systemAnchors)
        if !customAnchors.isEmpty {
            trust.anchors = customAnchors
            trust.anchorsOnly = anchorsOnly
        }
        let decision: PolicyDecision
        switch source {
        case .evaluator(let evaluator): decision = evaluator.decide(trust, forHost: chain.host)
        case .manager(let manager): decision = manager.decide(trust, forHost: chain.host)
        }
        let record = decision.record
        if let failure = decision.failure {
            return TrustDecision(.rejected, for: chain, evaluator: record.evaluator, reason: failure.description,
                                 validationFailure: failure.validationFailure, explanation: record.explanation)
        }
        return TrustDecision(.accepted, for: chain, evaluator: record.evaluator, reason: "trusted (\(record.policy))",
                             explanation: record.explanation)
    }
}
