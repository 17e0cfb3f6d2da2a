/// Runs evaluators in order; all must pass (Alamofire's `CompositeTrustEvaluator`).
public final class CompositeTrustEvaluator: ServerTrustEvaluating {
    /// The evaluators, in order.
    public let evaluators: [any ServerTrustEvaluating]

    /// Creates the evaluator.
    /// - Parameter evaluators: The evaluators; an empty list trusts nothing.
    public init(evaluators: [any ServerTrustEvaluating]) {
        self.evaluators = evaluators
    }

    /// Throws the first failure.
    public func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    /// The first failing decision, or the last passing one with every step recorded.
    public func decide(_ trust: PeerTrust, forHost host: String) -> PolicyDecision {
        guard !evaluators.isEmpty else {
            // Fail closed: a composite of nothing must not mean "trust everything".
            let recorder = DecisionRecorder(evaluator: "CompositeTrustEvaluator", policy: "no evaluators", trust: trust, host: host)
            return recorder.reject(TrustEvaluationError(.customEvaluationFailed, host: host, "a composite of no evaluators trusts nothing"))
        }
        var steps: [String] = []
        var notes: [String] = []
        var matchedPin: String?
        var last: PolicyDecision?
        for evaluator in evaluators {
            var decision = evaluator.decide(trust, forHost: host)
            steps += decision.record.steps.map { "[\(decision.record.evaluator)] \($0)" }
            notes += decision.record.notes
            var record = decision.record
            matchedPin = record.matchedPin ?? matchedPin
            record.matchedPin = matchedPin
            record.evaluator = "CompositeTrustEvaluator(" + evaluators.map { String(describing: type(of: $0)) }.joined(separator: ", ") + ")"
            record.steps = steps
            record.notes = notes
            decision = PolicyDecision(failure: decision.failure, record: record)
            if !decision.isTrusted { return decision }
            last = decision
        }
        return last ?? DecisionRecorder(evaluator: "CompositeTrustEvaluator", policy: "", trust: trust, host: host).accept()
    }
}
