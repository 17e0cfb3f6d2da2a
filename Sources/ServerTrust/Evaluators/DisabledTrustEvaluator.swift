/// Trusts every server without looking at it (Alamofire's `DisabledTrustEvaluator`).
///
/// - Warning: THIS EVALUATOR MUST NEVER BE USED IN PRODUCTION. It accepts any certificate for
///   any host, so anyone on the network path can read and change the traffic. It exists for
///   local development against servers whose certificates cannot be fixed, and its decisions
///   say so in their record.
public final class DisabledTrustEvaluator: ServerTrustEvaluating {
    /// Creates the evaluator.
    public init() {}

    /// Never throws.
    public func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {}

    /// A trusting decision whose record warns that nothing was checked.
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        var recorder = DecisionRecorder(evaluator: "DisabledTrustEvaluator", policy: "trust everything", trust: trust, host: host)
        recorder.step(.nothingChecked)
        recorder.note("DisabledTrustEvaluator trusts every certificate: never use it in production")
        return recorder.accept()
    }
}
