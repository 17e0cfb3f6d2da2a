public import CertificateParsing
public import TrustEvaluation

/// Adds configured anchors to the trust, then delegates (a policy file's `anchors`, the CLI's
/// `--anchors`): `SecTrustSetAnchorCertificates` followed by
/// `SecTrustSetAnchorCertificatesOnly(only)`.
///
/// The anchors are made into a store once, when the evaluator is made, so every evaluation
/// shares its parsed keys and verifiers.
public final class AnchoredTrustEvaluator: ServerTrustEvaluating {
    /// The configured anchors.
    public let anchors: TrustStore
    /// Whether only ``anchors`` are trusted (the system roots are not).
    public let anchorsOnly: Bool
    /// The evaluator that then decides.
    public let evaluator: any ServerTrustEvaluating

    /// Creates the evaluator.
    /// - Parameters:
    ///   - anchors: The anchors to add.
    ///   - anchorsOnly: Trust only them.
    ///   - evaluator: The evaluator that decides.
    public init(anchors: [Certificate], anchorsOnly: Bool, evaluator: any ServerTrustEvaluating) {
        self.anchors = TrustStore(anchors, sources: ["configured anchors"])
        self.anchorsOnly = anchorsOnly
        self.evaluator = evaluator
    }

    /// Throws unless the delegate trusts the server with the anchors in force.
    public func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    /// The delegate's decision, with the anchors recorded as its first step.
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        var trust = trust
        trust.setAnchors(trust.anchors.isEmpty ? anchors : TrustStore(trust.anchors) + anchors, only: anchorsOnly || trust.anchorsOnly)
        let decision = evaluator.decide(trust, forHost: host)
        var record = decision.record
        record.steps.insert(.anchors(.configured(count: anchors.count, only: anchorsOnly)), at: 0)
        return TrustDecision(failure: decision.failure, record: record, served: decision.served)
    }
}
