public import CertificateParsing
public import TrustEvaluation

/// The answer to "trust this server?": the verdict, the refusal if any, what was served, and
/// the record of how the answer was reached.
///
/// Every evaluator of this module returns one (``ServerTrustEvaluating/decide(_:forHost:)``),
/// ``ServerTrustDecider`` returns one for each served chain, and the HTTPS client attaches it to
/// its responses and to its trust rejections (AFNetworking's -1202 with the peer trust
/// attached). It is the only decision type of the library.
public struct TrustDecision: Sendable, CustomStringConvertible {
    /// Accept or reject.
    public enum Verdict: String, Sendable, Hashable {
        /// The handshake may complete and the request may be sent.
        case accepted
        /// The handshake is aborted before any request byte is sent.
        case rejected
    }

    /// Why trust was refused, or `nil` when the server is trusted.
    public let failure: TrustEvaluationError?
    /// Everything the evaluation did and found.
    public let record: DecisionRecord
    /// What the server presented.
    public let served: ServedChain
    /// `true` when this decision belongs to an earlier handshake whose connection or TLS
    /// session a request reused (no certificate was presented for the request itself).
    public let isFromEarlierHandshake: Bool

    /// Creates a decision.
    /// - Parameters:
    ///   - failure: The refusal, or `nil` to trust.
    ///   - record: The record of the evaluation.
    ///   - served: What the server presented.
    public init(failure: TrustEvaluationError?, record: DecisionRecord, served: ServedChain) {
        self.init(failure: failure, record: record, served: served, isFromEarlierHandshake: false)
    }

    init(failure: TrustEvaluationError?, record: DecisionRecord, served: ServedChain, isFromEarlierHandshake: Bool) {
        var record = record
        record.failure = failure
        self.failure = failure
        self.record = record
        self.served = served
        self.isFromEarlierHandshake = isFromEarlierHandshake
    }

    /// A decision made outside an evaluator, such as a challenge handler's answer.
    /// - Parameters:
    ///   - served: What the server presented.
    ///   - evaluator: Who decided (`"challenge handler"`).
    ///   - reason: Why, in one line; recorded as the only step.
    /// - Returns: An accepting decision.
    public static func accepted(_ served: ServedChain, by evaluator: String, _ reason: String) -> TrustDecision {
        var recorder = DecisionRecorder(evaluator: evaluator, policy: reason, served: served, host: served.host, time: nil)
        recorder.step(.external(reason))
        return recorder.accept()
    }

    /// A refusal made outside an evaluator: an unreadable chain, a cancelled challenge.
    /// - Parameters:
    ///   - served: What the server presented.
    ///   - evaluator: Who decided (`"parser"`, `"challenge handler"`).
    ///   - kind: The kind of refusal.
    ///   - detail: What was wrong, one line.
    /// - Returns: A rejecting decision.
    public static func rejected(
        _ served: ServedChain, by evaluator: String, _ kind: TrustEvaluationError.Kind, _ detail: String
    ) -> TrustDecision {
        var recorder = DecisionRecorder(evaluator: evaluator, policy: kind.rawValue, served: served, host: served.host, time: nil)
        recorder.step(.external(detail))
        return recorder.reject(TrustEvaluationError(kind, host: served.host, detail))
    }

    /// The verdict: accepted exactly when there is no ``failure``. In report-only mode a pin
    /// mismatch is still accepted; the record's notes say what would have been refused.
    public var verdict: Verdict { failure == nil ? .accepted : .rejected }
    /// Whether the server is trusted.
    public var isTrusted: Bool { failure == nil }

    /// Throws the refusal, if any (the ``ServerTrustEvaluating/evaluate(_:forHost:)`` contract).
    /// - Throws: ``TrustEvaluationError`` when the server is not trusted.
    public func get() throws(TrustEvaluationError) {
        if let failure { throw failure }
    }

    /// Which evaluator decided (`DefaultTrustEvaluator`, `SecurityPolicy`, `challenge handler`, …).
    public var evaluator: String { record.evaluator }
    /// One line saying why: the refusal, or what trusted the server.
    public var reason: String { failure?.description ?? "trusted (\(record.policy))" }
    /// The path-validation failure behind a refusal, when path validation was the cause.
    public var validationFailure: ValidationFailure? { failure?.validationFailure }
    /// The chain the server presented, leaf first.
    public var servedChain: [Certificate] { served.certificates }
    /// The validated path (leaf to anchor) of the evaluation, when a chain validated.
    public var verifiedChain: [Certificate]? { record.validatedPath?.certificates }
    /// The host the chain was served for.
    public var host: String? { served.host }
    /// The port the chain was served on.
    public var port: Int { served.port }
    /// A multi-line account of the evaluation.
    public var explanation: String { record.explanation }

    /// The same decision, marked as reused by a later request.
    package var reused: TrustDecision {
        TrustDecision(failure: failure, record: record, served: served, isFromEarlierHandshake: true)
    }

    /// `rejected www.example.test:443 by DefaultTrustEvaluator: hostValidationFailed …`, one line.
    public var description: String { "\(verdict.rawValue) \(host ?? "(no host)"):\(port) by \(evaluator): \(reason)" }
}
