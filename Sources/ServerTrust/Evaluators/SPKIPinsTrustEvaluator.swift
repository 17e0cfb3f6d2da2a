import CertificateParsing
import TrustEvaluation

/// SPKI-hash pinning with per-host pin sets (TrustKit, OkHttp, ATS, NSC and curl in one):
/// host patterns, scopes, expiry, per-pin windows, report-only mode, negative pins, failure
/// reports and an observer.
///
/// Order: the chain is validated with the SSL server policy for the host (TrustKit always
/// does, so pins can never make an untrusted chain acceptable; OkHttp and NSC likewise pin
/// only a trusted chain), then ``PinningConfiguration/check(_:forHost:at:)`` runs on the
/// validated path including its anchor (``ProvenChain``): among the valid paths, one the pins
/// are on when there is one (a cross-signed root, an alternate intermediate). Failures on a pinned host are
/// reported, including report-only mismatches and chain failures; every decision goes to the
/// observer. The time is the trust's (``PeerTrust/evaluationTime()``), the same instant the
/// chain is validated at.
public final class SPKIPinsTrustEvaluator: ServerTrustEvaluating {
    /// The pin sets.
    public let configuration: PinningConfiguration
    /// Whether the chain is validated first (default `true`). Without it, and without
    /// ``validateHost``, no path is validated and pins are matched on the signature chain: the
    /// leaf and the certificates that verifiably signed it (``ProvenChain``), as Alamofire's
    /// evaluators read `SecTrustCopyCertificateChain` without an evaluation.
    public let performDefaultValidation: Bool
    /// Whether the host name is validated (default `true`).
    public let validateHost: Bool
    /// Where failure reports go.
    public let reporter: (any PinFailureReporter)?
    /// Sees every decision.
    public let observer: DecisionObserver?
    /// Receives diagnostics such as pin-set expiry.
    public let logger: PolicyLogger?

    /// Creates the evaluator.
    /// - Parameters:
    ///   - configuration: The pin sets.
    ///   - performDefaultValidation: Validate the chain first.
    ///   - validateHost: Validate the host name.
    ///   - reporter: Where failure reports go (wrap it in ``RateLimitedReporter`` to limit them).
    ///   - observer: Sees every decision; cannot change it.
    ///   - logger: Receives diagnostics.
    public init(
        configuration: PinningConfiguration,
        performDefaultValidation: Bool = true,
        validateHost: Bool = true,
        reporter: (any PinFailureReporter)? = nil,
        observer: DecisionObserver? = nil,
        logger: PolicyLogger? = nil
    ) {
        self.configuration = configuration
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
        self.reporter = reporter
        self.observer = observer
        self.logger = logger
    }

    /// Throws unless the chain validates and the pins allow it.
    public func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    /// The decision and its record; reports and observes it.
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        let decision = makeDecision(trust, forHost: host)
        observer?(decision.record)
        return decision
    }

    private func makeDecision(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        var trust = trust
        // One instant for the chain and the pins: the pin set's expiry and per-pin windows are
        // judged when the chain is.
        let time = trust.evaluationTime()
        trust.clock = .fixed(time)
        trust.prefer(pinRequirements(forHost: host, at: time))
        let validation = AlamofireValidation(
            performDefaultValidation: performDefaultValidation, validateHost: validateHost, pinSets: configuration.hosts.count)
        let validated = validation.decide(trust, forHost: host)
        guard let entry = configuration.pinnedHost(for: host) else {
            guard validated.isTrusted else { return validated }
            var recorder = DecisionRecorder(continuing: validated)
            recorder.step(.pinCheck(PinningConfiguration.check(nil, certificates: [], forHost: host, at: time)))
            return recorder.accept()
        }
        return PinEnforcement(pins: entry, reporter: reporter, logger: logger).apply(to: validated, trust: trust, host: host, time: time)
    }
}

/// The validation of ``SPKIPinsTrustEvaluator``, on its own: Alamofire's two switches collapse
/// to one evaluation, with the host when `validateHost`, else without it when
/// `performDefaultValidation`, else none (the pins are then compared with the signature chain,
/// ``ProvenChain``). A policy file's `spkiPins` entry is this, followed by the
/// host policy's pins (``PinEnforcement``).
struct AlamofireValidation: ServerTrustEvaluating {
    let performDefaultValidation: Bool
    let validateHost: Bool
    /// The number of pin sets the evaluator's record names (an `spkiPins` entry has one).
    var pinSets = 1

    func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        var trust = trust
        var recorder = DecisionRecorder(
            evaluator: "SPKIPinsTrustEvaluator",
            policy: "performDefaultValidation=\(performDefaultValidation), validateHost=\(validateHost), pin sets=\(pinSets)",
            mode: "spki", trust: trust, host: host)
        guard performDefaultValidation || validateHost else { return recorder.accept() }
        trust.setPolicy(.sslServer, host: validateHost ? host : nil)
        let result = trust.evaluate()
        recorder.evaluation(result, of: trust, .defaultValidation(host: validateHost ? host : nil))
        if let failure = result.failure { return recorder.reject(.validation(failure, host: host)) }
        return recorder.accept()
    }
}

extension ServerTrustEvaluating where Self == SPKIPinsTrustEvaluator {
    /// SPKI-hash pinning with `configuration`.
    /// - Parameter configuration: The pin sets.
    /// - Returns: The evaluator.
    public static func spkiPins(_ configuration: PinningConfiguration) -> SPKIPinsTrustEvaluator {
        SPKIPinsTrustEvaluator(configuration: configuration)
    }
}

extension SPKIPinsTrustEvaluator: PinRequiring {
    func pinRequirements(forHost host: String, at time: Int64) -> [PinRequirement] {
        configuration.pinnedHost(for: host).flatMap { PinRequirement.pinSet($0, host: host, at: time) }.map { [$0] } ?? []
    }
}
