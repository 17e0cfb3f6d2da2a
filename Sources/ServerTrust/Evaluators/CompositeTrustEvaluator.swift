import CertificateParsing
import TrustEvaluation

/// Runs evaluators in order; all must pass (Alamofire's `CompositeTrustEvaluator`).
///
/// As with one `SecTrust` handed to each of Alamofire's evaluators in turn, a path validated
/// by an earlier evaluator is what a later one compares its pins with when it does not
/// validate again (``PeerTrust/validatedPath``): `[DefaultTrustEvaluator(),
/// PublicKeysTrustEvaluator(keys, performDefaultValidation: false, validateHost: false)]`
/// pins on the validated path, never on the certificates the server merely sent. So that path
/// is one the later pins are on when any valid path is, every evaluation of the composite
/// prefers the paths the pins of all its evaluators are on (``PeerTrust/evaluate(trace:)``).
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
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        guard !evaluators.isEmpty else {
            // Fail closed: a composite of nothing must not mean "trust everything".
            let recorder = DecisionRecorder(evaluator: "CompositeTrustEvaluator", policy: "no evaluators", trust: trust, host: host)
            return recorder.reject(TrustEvaluationError(.customEvaluationFailed, host: host, "a composite of no evaluators trusts nothing"))
        }
        let name = "CompositeTrustEvaluator(" + evaluators.map { String(describing: type(of: $0)) }.joined(separator: ", ") + ")"
        var trust = trust
        trust.prefer(pinRequirements(forHost: host, at: trust.evaluationTime()))
        var steps: [DecisionStep] = []
        var notes: [String] = []
        var pinMatch: DecisionRecord.PinMatchRecord?
        var validatedPath: VerifiedChain?
        var last: TrustDecision?
        for evaluator in evaluators {
            let decision = evaluator.decide(trust, forHost: host)
            var record = decision.record
            steps += record.steps.map { .nested(evaluator: record.evaluator, $0) }
            notes += record.notes
            pinMatch = record.pinMatch ?? pinMatch
            validatedPath = record.validatedPath ?? validatedPath
            record.pinMatch = pinMatch
            record.validatedPath = validatedPath
            record.evaluator = name
            record.steps = steps
            record.notes = notes
            let combined = TrustDecision(failure: decision.failure, record: record, served: decision.served)
            if !combined.isTrusted { return combined }
            // Hand a validated path on only for the same served chain (every evaluator of a
            // composite sees the same trust, so this holds unless an evaluator is broken).
            if trust.validatedPath == nil, let path = decision.record.validatedPath, path.leaf == trust.certificates.first {
                trust.validatedPath = path
            }
            last = combined
        }
        return last ?? DecisionRecorder(evaluator: name, policy: "", trust: trust, host: host).accept()
    }
}

extension CompositeTrustEvaluator: PinRequiring {
    func pinRequirements(forHost host: String, at time: Int64) -> [PinRequirement] {
        evaluators.flatMap { ($0 as? any PinRequiring)?.pinRequirements(forHost: host, at: time) ?? [] }
    }
}
