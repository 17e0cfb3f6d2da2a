import CertificateParsing
import TrustEvaluation

/// Builds a ``DecisionRecord`` while an evaluator works, and turns it into a
/// ``TrustDecision``.
struct DecisionRecorder {
    var record: DecisionRecord
    let served: ServedChain

    /// Starts the record of an evaluation of `trust` for `host`, at the trust's evaluation time.
    init(evaluator: String, policy: String, mode: String? = nil, trust: PeerTrust, host: String?) {
        self.init(evaluator: evaluator, policy: policy, mode: mode, served: trust.served, host: host ?? trust.host, time: trust.evaluationTime())
    }

    /// Starts a record; `time` is `nil` for a decision made outside any evaluation (a challenge
    /// handler's answer, an unreadable chain), which has no instant of its own.
    init(evaluator: String, policy: String, mode: String? = nil, served: ServedChain, host: String?, time: Int64?) {
        record = DecisionRecord(
            evaluator: evaluator, policy: policy, mode: mode, host: host, port: served.port, evaluationTime: time, served: served.certificates)
        self.served = served
    }

    /// Continues the record of a decision already made (pins applied after an evaluator).
    init(continuing decision: TrustDecision) {
        record = decision.record
        served = decision.served
    }

    mutating func step(_ step: DecisionStep) { record.steps.append(step) }

    mutating func note(_ text: String) { record.notes.append(text) }

    /// Records a chain evaluation: its anchors, the chain built, and the host-name result.
    mutating func evaluation(_ result: TrustResult, of trust: PeerTrust, _ kind: DecisionStep.EvaluationKind) {
        record.lastEvaluation = result
        if let chain = result.chain { record.validatedPath = chain }
        step(.evaluation(kind, failure: result.failure))
        if let chain = result.chain, chain.selection != .first {
            step(.pinnedPath(found: chain.selection == .preferred, others: chain.otherValidPaths.map { $0.map(\.subject.rfc4514) }))
        }
        // What the whole-path checks found on the accepted path, or on the path whose check
        // refused it, as typed steps; a violation a check only reports is also a note.
        for finding in result.chain?.findings ?? result.failure?.findings ?? [] {
            step(.pathCheck(finding))
            if let reported = finding.reportedFailure {
                let text = "\(finding.check), report only: \(reported.detail)"
                if !record.notes.contains(text) { note(text) }
            }
        }
    }

    /// Records which certificates the pins are compared with (``ProvenChain``).
    mutating func pinCandidates(_ proven: ProvenChain) {
        step(.pinCandidates(proven.basis, count: proven.certificates.count))
    }

    /// Records the compared certificates' pins beside the configured ones (OkHttp's failure
    /// message).
    mutating func pinEvidence(chain: [Certificate], configured: [String]) {
        record.servedPins = chain.enumerated().map {
            DecisionRecord.CertificatePin(pin: "sha256/" + $0.element.spkiSHA256Base64, subject: $0.element.subject.rfc4514, position: $0.offset)
        }
        record.configuredPins = configured
    }

    mutating func matched(_ match: DecisionRecord.PinMatchRecord) { record.pinMatch = match }

    func accept() -> TrustDecision { TrustDecision(failure: nil, record: record, served: served) }

    func reject(_ error: TrustEvaluationError) -> TrustDecision { TrustDecision(failure: error, record: record, served: served) }
}

extension Certificate {
    /// `sha256/<base64 SPKI digest>`, the pin OkHttp, TrustKit and HPKP use.
    var spkiPinText: String { "sha256/" + spkiSHA256Base64 }
}
