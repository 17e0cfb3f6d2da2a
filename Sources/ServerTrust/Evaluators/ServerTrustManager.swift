/// Maps host patterns to evaluators (Alamofire's `ServerTrustManager`), failing closed for
/// hosts it does not know.
///
/// Unlike Alamofire's exact, case-sensitive dictionary lookup (Alamofire #1335, #3484), keys
/// are ``HostPattern``s: `api.example.com`, `*.example.com` (one label), `**.example.com`
/// (any depth, the domain included); the most specific matching pattern wins.
public final class ServerTrustManager: ServerTrustEvaluating {
    /// One pattern and its evaluator.
    public struct Rule: Sendable {
        /// The hosts covered.
        public let pattern: HostPattern
        /// The evaluator for them.
        public let evaluator: any ServerTrustEvaluating

        /// Creates a rule.
        /// - Parameters:
        ///   - pattern: The hosts covered.
        ///   - evaluator: The evaluator for them.
        public init(_ pattern: HostPattern, _ evaluator: any ServerTrustEvaluating) {
            self.pattern = pattern
            self.evaluator = evaluator
        }
    }

    /// Whether a host without an evaluator is refused (default `true`). When `false`, such a
    /// host gets ``DefaultTrustEvaluator`` (URLSession's default handling).
    public let allHostsMustBeEvaluated: Bool
    /// The rules, in the order given.
    public let rules: [Rule]
    /// Sees every decision made through the manager; cannot change it.
    public let observer: DecisionObserver?

    /// Creates a manager from patterns and evaluators.
    /// - Parameters:
    ///   - allHostsMustBeEvaluated: Refuse hosts without an evaluator (default `true`).
    ///   - rules: The rules.
    ///   - observer: Sees every decision.
    public init(allHostsMustBeEvaluated: Bool = true, rules: [Rule], observer: DecisionObserver? = nil) {
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        self.rules = rules
        self.observer = observer
    }

    /// Creates a manager from pattern strings (Alamofire's initializer).
    /// - Parameters:
    ///   - allHostsMustBeEvaluated: Refuse hosts without an evaluator (default `true`).
    ///   - evaluators: Evaluators by host pattern.
    ///   - observer: Sees every decision.
    /// - Throws: ``PolicyConfigurationError`` for a key that is not a host pattern, with the
    ///   key as its path.
    public convenience init(
        allHostsMustBeEvaluated: Bool = true, evaluators: [String: any ServerTrustEvaluating], observer: DecisionObserver? = nil
    ) throws(PolicyConfigurationError) {
        var rules: [Rule] = []
        for key in evaluators.keys.sorted() {
            guard let evaluator = evaluators[key] else { continue }
            do {
                rules.append(Rule(try HostPattern(key), evaluator))
            } catch {
                throw error.at("evaluators[\"\(key)\"]")
            }
        }
        self.init(allHostsMustBeEvaluated: allHostsMustBeEvaluated, rules: rules, observer: observer)
    }

    /// The evaluator for `host`: the most specific matching rule's.
    /// - Parameter host: The host.
    /// - Returns: The evaluator, or `nil` when none matches and hosts need not be evaluated.
    /// - Throws: ``TrustEvaluationError`` (`noRequiredEvaluator`) when none matches and
    ///   ``allHostsMustBeEvaluated`` is set.
    public func serverTrustEvaluator(forHost host: String) throws(TrustEvaluationError) -> (any ServerTrustEvaluating)? {
        if let best = HostPattern.mostSpecific(in: rules, matching: host, by: \.pattern) { return best.evaluator }
        if allHostsMustBeEvaluated {
            throw TrustEvaluationError(.noRequiredEvaluator, host: host, "no evaluator is configured for \(host) and all hosts must be evaluated")
        }
        return nil
    }

    /// Decides for `trust` and `host` with the host's evaluator.
    /// - Parameters:
    ///   - trust: The server's trust.
    ///   - host: The host connected to.
    /// - Returns: The decision.
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        let decision: TrustDecision
        do {
            if let evaluator = try serverTrustEvaluator(forHost: host) {
                decision = evaluator.decide(trust, forHost: host)
            } else {
                let fallback = DefaultTrustEvaluator().decide(trust, forHost: host)
                var record = fallback.record
                record.notes.append("no evaluator for \(host): default handling (allHostsMustBeEvaluated is false)")
                decision = TrustDecision(failure: fallback.failure, record: record, served: fallback.served)
            }
        } catch {
            var recorder = DecisionRecorder(evaluator: "ServerTrustManager", policy: "allHostsMustBeEvaluated=true", trust: trust, host: host)
            recorder.step(.noMatchingRule(host: host))
            decision = recorder.reject(error)
        }
        observer?(decision.record)
        return decision
    }

    /// Throws unless `trust` is acceptable for `host`.
    /// - Parameters:
    ///   - trust: The server's trust.
    ///   - host: The host connected to.
    /// - Throws: ``TrustEvaluationError``.
    public func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }
}
