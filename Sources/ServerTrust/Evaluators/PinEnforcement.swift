import CertificateParsing
import TrustEvaluation

/// SPKI pins applied after an evaluator decided: the one place where a pin set's outcome
/// becomes part of a decision, with its reports and notes. ``SPKIPinsTrustEvaluator`` runs it
/// after its own validation; ``ServerTrustDecider`` runs it after the evaluator of a
/// ``HostTrustPolicy`` with pins.
///
/// Pins are compared only with the certificates the evaluation proved (``ProvenChain``): the
/// path the evaluator validated (among the valid paths, one the pins are on when there is one:
/// the caller puts the pins' requirement on the trust before the evaluator runs), or without
/// one the signature chain. A chain the evaluator refused stays refused; on a pinned host the
/// refusal is reported (TrustKit reports chain failures too), never turned into an acceptance.
struct PinEnforcement {
    /// The host's pin set.
    let pins: PinnedHost
    let reporter: (any PinFailureReporter)?
    let logger: PolicyLogger?

    /// The decision with the pins applied.
    /// - Parameters:
    ///   - decision: The evaluator's decision on `trust`.
    ///   - trust: The trust it decided.
    ///   - host: The host.
    ///   - time: The decision's instant (pin windows and expiry are judged at it).
    func apply(to decision: TrustDecision, trust: PeerTrust, host: String, time: Int64) -> TrustDecision {
        var recorder = DecisionRecorder(continuing: decision)
        recorder.step(.pinSet(pattern: pins.pattern.description, excluded: pins.isExcluded))
        guard decision.isTrusted else {
            if !pins.isExcluded, decision.validationFailure != nil {
                report(trust: trust, host: host, validated: trust.certificates, result: .failedInvalidCertificateChain, time: time)
            }
            return decision
        }
        let proven = Self.provenChain(decision, trust: trust)
        recorder.pinCandidates(proven)
        let chain = proven.certificates
        let check = PinningConfiguration.check(pins, certificates: chain, forHost: host, at: time)
        recorder.step(.pinCheck(check))
        let configured = pins.pins.map(\.description) + pins.negativePins.map { "!" + $0.description }
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
            report(trust: trust, host: host, validated: chain, result: .failedNoMatchingPin, time: time)
            if !pins.enforcePinning {
                let text = "report-only: \(check.detail); the connection is allowed and reported"
                recorder.note(text)
                logger?(text)
                return recorder.accept()
            }
            return recorder.reject(TrustEvaluationError(.spkiPinningFailed, host: host, check.detail))
        case .negativePinMatched:
            recorder.pinEvidence(chain: chain, configured: configured)
            report(trust: trust, host: host, validated: chain, result: .failedNegativePinMatched, time: time)
            return recorder.reject(TrustEvaluationError(.negativePinMatched, host: host, check.detail))
        }
    }

    /// The certificates the evaluation proved: its validated path when it validated this
    /// served chain, else what ``ProvenChain`` allows without one.
    static func provenChain(_ decision: TrustDecision, trust: PeerTrust) -> ProvenChain {
        if let path = decision.record.validatedPath, path.leaf == trust.certificates.first { return ProvenChain(validated: path) }
        return trust.provenChain(after: nil)
    }

    private func report(trust: PeerTrust, host: String, validated: [Certificate], result: PinFailureReport.ValidationResult, time: Int64) {
        guard let reporter else { return }
        let report = PinFailureReport(
            date: time, hostname: host, port: trust.port, pinnedHost: pins, served: trust.certificates, validated: validated, result: result)
        reporter.send(report, to: pins.reportURIs)
    }
}
