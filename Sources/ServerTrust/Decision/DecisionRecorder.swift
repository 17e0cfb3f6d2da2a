import CertificateParsing
import TrustEvaluation

/// Builds a ``DecisionRecord`` while an evaluator works, and turns it into a
/// ``PolicyDecision``.
struct DecisionRecorder {
    var record: DecisionRecord

    init(evaluator: String, policy: String, mode: String? = nil, trust: PeerTrust, host: String?, clock: TrustClock = .system) {
        record = DecisionRecord(
            evaluator: evaluator, policy: policy, mode: mode, host: host ?? trust.host, port: trust.port,
            evaluationTime: trust.evaluationTime(clock))
        record.chain = trust.certificates.map(\.subject.rfc4514)
    }

    mutating func step(_ text: String) { record.steps.append(text) }

    mutating func note(_ text: String) { record.notes.append(text) }

    /// Records a chain evaluation: its anchors, the chain built, and the host-name result.
    mutating func evaluation(_ result: TrustResult, of trust: PeerTrust, _ label: String) {
        record.anchors = result.anchorsDescription
        if let chain = result.chain { record.chain = chain.certificates.map(\.subject.rfc4514) }
        if result.policy.kind == .sslServer, let name = result.policy.peerName, let leaf = trust.certificates.first {
            record.hostname = ServerIdentity.matches(leaf, name: name)
                ? .matched(name.description) : .mismatched(name.description, validFor: ServerIdentity.names(of: leaf))
        } else if result.policy.kind == .basicX509 {
            record.hostname = .notChecked(reason: "basic X.509 policy")
        } else {
            record.hostname = .notChecked(reason: "SSL server policy without a host name")
        }
        step("\(label): \(result.isTrusted ? "trusted" : "failed — \(result.failure?.description ?? "")")")
    }

    /// Records the chain's pins beside the configured ones (OkHttp's failure message).
    mutating func pinEvidence(chain: [Certificate], configured: [String]) {
        record.servedPins = chain.enumerated().map {
            DecisionRecord.CertificatePin(pin: "sha256/" + $0.element.spkiSHA256Base64, subject: $0.element.subject.rfc4514, position: $0.offset)
        }
        record.configuredPins = configured
    }

    mutating func matched(_ description: String) { record.matchedPin = description }

    func accept() -> PolicyDecision { PolicyDecision(failure: nil, record: record) }

    func reject(_ error: TrustEvaluationError) -> PolicyDecision {
        var record = self.record
        record.failure = error
        return PolicyDecision(failure: error, record: record)
    }
}

extension Certificate {
    /// `sha256/<base64 SPKI digest>`, the pin OkHttp, TrustKit and HPKP use.
    var spkiPinText: String { "sha256/" + spkiSHA256Base64 }
}
