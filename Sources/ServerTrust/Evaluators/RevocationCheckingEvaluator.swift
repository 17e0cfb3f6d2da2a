public import CertificateParsing

/// Adds CRLs to the trust, then delegates: every certificate of the path but the anchor must
/// be covered by them and not revoked (RFC 5280 §6.3, hard-fail: see
/// `ValidationPolicy.revocationLists`), whatever evaluator then decides. A policy file's
/// `crls`, per host or for every host.
public final class RevocationCheckingEvaluator: ServerTrustEvaluating {
    /// The CRLs added.
    public let revocationLists: [CertificateRevocationList]
    /// The evaluator that then decides.
    public let evaluator: any ServerTrustEvaluating

    /// Creates the evaluator.
    /// - Parameters:
    ///   - revocationLists: The CRLs to check against.
    ///   - evaluator: The evaluator that decides.
    public init(revocationLists: [CertificateRevocationList], evaluator: any ServerTrustEvaluating) {
        self.revocationLists = revocationLists
        self.evaluator = evaluator
    }

    /// Throws unless the delegate trusts the server with the CRLs in force.
    public func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    /// The delegate's decision, with the CRLs recorded as its first step.
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        var trust = trust
        trust.policy.revocationLists = (trust.policy.revocationLists ?? []) + revocationLists
        let decision = evaluator.decide(trust, forHost: host)
        var record = decision.record
        record.steps.insert(.revocation(crls: trust.policy.revocationLists?.count ?? 0), at: 0)
        return TrustDecision(failure: decision.failure, record: record, served: decision.served)
    }
}
