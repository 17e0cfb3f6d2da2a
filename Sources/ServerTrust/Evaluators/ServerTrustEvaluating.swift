public import CertificateParsing

/// Decides whether to trust a server (Alamofire's `ServerTrustEvaluating`, with a
/// ``PeerTrust`` where Alamofire has a `SecTrust`, so it works on Linux).
///
/// Implement ``evaluate(_:forHost:)``; ``decide(_:forHost:)`` has a default that wraps it.
/// The evaluators of this module implement ``decide(_:forHost:)`` to return a full
/// ``DecisionRecord``.
public protocol ServerTrustEvaluating: Sendable {
    /// Throws unless `trust` is acceptable for `host`.
    /// - Parameters:
    ///   - trust: The server's trust (a value: changes stay with the evaluator).
    ///   - host: The host connected to.
    /// - Throws: ``TrustEvaluationError`` saying why not.
    func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError)

    /// The decision for `trust` and `host`, with its record.
    /// - Parameters:
    ///   - trust: The server's trust.
    ///   - host: The host connected to.
    /// - Returns: The decision.
    func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision
}

extension ServerTrustEvaluating {
    /// Runs ``evaluate(_:forHost:)`` and records its outcome.
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        var recorder = DecisionRecorder(evaluator: String(describing: Self.self), policy: "custom evaluator", trust: trust, host: host)
        do {
            try evaluate(trust, forHost: host)
            recorder.step(.customEvaluator(String(describing: Self.self), passed: true))
            return recorder.accept()
        } catch {
            recorder.step(.customEvaluator(String(describing: Self.self), passed: false))
            return recorder.reject(error)
        }
    }
}

extension ServerTrustEvaluating where Self == DefaultTrustEvaluator {
    /// Chain validation against the trust's anchors, with the host name.
    public static var defaultEvaluation: DefaultTrustEvaluator { DefaultTrustEvaluator() }
}

extension ServerTrustEvaluating where Self == DisabledTrustEvaluator {
    /// Trusts everything. Never use it in production.
    public static var disabled: DisabledTrustEvaluator { DisabledTrustEvaluator() }
}

extension ServerTrustEvaluating where Self == PinnedCertificatesTrustEvaluator {
    /// Certificate pinning (Alamofire's `.pinnedCertificates(...)`).
    /// - Parameters:
    ///   - certificates: The pinned certificates.
    ///   - acceptSelfSignedCertificates: Make the pinned certificates the only anchors.
    ///   - performDefaultValidation: Validate the chain.
    ///   - validateHost: Validate the host name.
    /// - Returns: The evaluator.
    public static func pinnedCertificates(
        _ certificates: [Certificate], acceptSelfSignedCertificates: Bool = false, performDefaultValidation: Bool = true,
        validateHost: Bool = true
    ) -> PinnedCertificatesTrustEvaluator {
        PinnedCertificatesTrustEvaluator(
            certificates: certificates, acceptSelfSignedCertificates: acceptSelfSignedCertificates,
            performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }
}

extension ServerTrustEvaluating where Self == PublicKeysTrustEvaluator {
    /// Public-key pinning (Alamofire's `.publicKeys(...)`).
    /// - Parameters:
    ///   - certificates: Certificates whose keys are pinned.
    ///   - performDefaultValidation: Validate the chain.
    ///   - validateHost: Validate the host name.
    /// - Returns: The evaluator.
    public static func publicKeys(
        of certificates: [Certificate], performDefaultValidation: Bool = true, validateHost: Bool = true
    ) -> PublicKeysTrustEvaluator {
        PublicKeysTrustEvaluator(certificates: certificates, performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }
}

extension ServerTrustEvaluating where Self == CompositeTrustEvaluator {
    /// All of `evaluators`, in order (Alamofire's `.composite(...)`).
    /// - Parameter evaluators: The evaluators.
    /// - Returns: The evaluator.
    public static func composite(_ evaluators: [any ServerTrustEvaluating]) -> CompositeTrustEvaluator {
        CompositeTrustEvaluator(evaluators: evaluators)
    }
}

/// Alamofire's two validation switches, shared by its pinning evaluators.
struct DefaultValidation {
    /// `performDefaultValidation`: the chain is validated (without the host name).
    let performDefaultValidation: Bool
    /// `validateHost`: the chain is validated with the host name (a full evaluation even
    /// without default validation, as Alamofire's `performValidation(forHost:)` is).
    let validateHost: Bool

    /// Runs the validations the switches ask for, in Alamofire's order, and returns what the
    /// pins are then compared with (the last validated path, or without validation the
    /// signature chain: ``ProvenChain``), or the refusal.
    func provenChain(_ trust: inout PeerTrust, host: String, recorder: inout DecisionRecorder) -> Result<ProvenChain, TrustEvaluationError> {
        switch run(&trust, host: host, recorder: &recorder) {
        case .failure(let error): return .failure(error)
        case .success(let evaluation):
            let proven = trust.provenChain(after: evaluation)
            recorder.pinCandidates(proven)
            return .success(proven)
        }
    }

    /// Runs the validations the switches ask for, in Alamofire's order, and returns the last
    /// result, or the refusal.
    func run(_ trust: inout PeerTrust, host: String, recorder: inout DecisionRecorder) -> Result<TrustResult?, TrustEvaluationError> {
        var last: TrustResult?
        for withHost in [false, true] where withHost ? validateHost : performDefaultValidation {
            trust.setPolicy(.sslServer, host: withHost ? host : nil)
            let result = trust.evaluate()
            recorder.evaluation(result, of: trust, .defaultValidation(host: withHost ? host : nil))
            if let failure = result.failure { return .failure(.validation(failure, host: host)) }
            last = result
        }
        return .success(last)
    }
}
