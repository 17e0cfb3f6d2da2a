import CertificateParsing
import TrustEvaluation

/// SPKI-hash pinning with per-host pin sets (TrustKit, OkHttp, ATS, NSC and curl in one):
/// host patterns, scopes, expiry, per-pin windows, report-only mode, negative pins, failure
/// reports and an observer.
///
/// Order: the chain is validated with the SSL server policy for the host (TrustKit always
/// does, so pins can never make an untrusted chain acceptable; OkHttp and NSC likewise pin
/// only a trusted chain), then ``PinningConfiguration/check(_:forHost:at:)`` runs on the
/// validated path including its anchor (``ProvenChain``). Failures on a pinned host are
/// reported, including report-only mismatches and chain failures; every decision goes to the
/// observer. The time is the trust's (``PeerTrust/evaluationTime()``), the same instant the
/// chain is validated at.
public final class SPKIPinsTrustEvaluator: ServerTrustEvaluating {
    /// The pin sets.
    public let configuration: PinningConfiguration
    /// Whether the chain is validated first (default `true`). Without it, and without
    /// ``validateHost``, no path is proven and pins are matched on the leaf alone, as curl's
    /// `-k --pinnedpubkey` does.
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
        trust.verifyTime = time
        var recorder = DecisionRecorder(
            evaluator: "SPKIPinsTrustEvaluator",
            policy: "performDefaultValidation=\(performDefaultValidation), validateHost=\(validateHost), pin sets=\(configuration.hosts.count)",
            mode: "spki", trust: trust, host: host)
        let entry = configuration.pinnedHost(for: host)
        if let entry { recorder.step(.pinSet(pattern: entry.pattern.description, excluded: entry.isExcluded)) }

        // Alamofire's switches collapse to one evaluation here: with the host when asked,
        // else without it when default validation is asked.
        var evaluation: TrustResult?
        if performDefaultValidation || validateHost {
            trust.setPolicy(.sslServer, host: validateHost ? host : nil)
            let result = trust.evaluate()
            recorder.evaluation(result, of: trust, .defaultValidation(host: validateHost ? host : nil))
            if let failure = result.failure {
                if let entry, !entry.isExcluded {
                    report(entry, trust: trust, host: host, validated: trust.certificates, result: .failedInvalidCertificateChain, time: time)
                }
                return recorder.reject(.validation(failure, host: host))
            }
            evaluation = result
        }
        let proven = trust.provenChain(after: evaluation)
        let chain = proven.certificates
        recorder.pinCandidates(proven)

        let check = configuration.check(proven, forHost: host, at: time)
        recorder.step(.pinCheck(check))
        let configured = check.pinnedHost.map { $0.pins.map(\.description) + $0.negativePins.map { "!" + $0.description } } ?? []
        switch check.outcome {
        case .notPinned, .excluded:
            return recorder.accept()
        case .expired:
            logger?(check.detail)
            recorder.note(check.detail)
            return recorder.accept()
        case .matched:
            recorder.matched(.spki(check.matches))
            if let warning = check.spareWarning { recorder.note(warning) }
            return recorder.accept()
        case .noMatchingPin:
            recorder.pinEvidence(chain: chain, configured: configured)
            if let entry = check.pinnedHost {
                report(entry, trust: trust, host: host, validated: chain, result: .failedNoMatchingPin, time: time)
                if !entry.enforcePinning {
                    let text = "report-only: \(check.detail); the connection is allowed and reported"
                    recorder.note(text)
                    logger?(text)
                    return recorder.accept()
                }
            }
            return recorder.reject(TrustEvaluationError(.spkiPinningFailed, host: host, check.detail))
        case .negativePinMatched:
            recorder.pinEvidence(chain: chain, configured: configured)
            if let entry = check.pinnedHost {
                report(entry, trust: trust, host: host, validated: chain, result: .failedNegativePinMatched, time: time)
            }
            return recorder.reject(TrustEvaluationError(.negativePinMatched, host: host, check.detail))
        }
    }

    private func report(
        _ entry: PinnedHost, trust: PeerTrust, host: String, validated: [Certificate], result: PinFailureReport.ValidationResult, time: Int64
    ) {
        guard let reporter else { return }
        let report = PinFailureReport(
            date: time, hostname: host, port: trust.port, pinnedHost: entry, served: trust.certificates, validated: validated, result: result)
        reporter.send(report, to: entry.reportURIs)
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
