/// Validates the chain against the trust's anchors with the SSL server policy, and the host
/// name unless told not to (Alamofire's `DefaultTrustEvaluator`).
///
/// `validateHost: false` keeps the SSL server policy (serverAuth EKU) without a name, as
/// Alamofire does; AFNetworking uses the basic X.509 policy there instead.
public final class DefaultTrustEvaluator: ServerTrustEvaluating {
    /// Whether the host name is validated.
    public let validateHost: Bool

    /// Creates the evaluator.
    /// - Parameter validateHost: Whether the host name is validated (default `true`).
    public init(validateHost: Bool = true) {
        self.validateHost = validateHost
    }

    /// Throws unless the chain validates (for `host`).
    public func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    /// The decision and its record.
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        var trust = trust
        var recorder = DecisionRecorder(evaluator: "DefaultTrustEvaluator", policy: "validateHost=\(validateHost)", trust: trust, host: host)
        let validation = DefaultValidation(performDefaultValidation: !validateHost, validateHost: validateHost)
        if case .failure(let error) = validation.run(&trust, host: host, recorder: &recorder) {
            return recorder.reject(error)
        }
        return recorder.accept()
    }
}
