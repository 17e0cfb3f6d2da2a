/// The answer to "trust this server?", with the record of how it was reached.
public struct PolicyDecision: Sendable, CustomStringConvertible {
    /// Why trust was refused, or `nil` when the server is trusted.
    public let failure: TrustEvaluationError?
    /// Everything the evaluation did and found.
    public let record: DecisionRecord

    /// Creates a decision.
    /// - Parameters:
    ///   - failure: The refusal, or `nil` to trust.
    ///   - record: The record of the evaluation.
    public init(failure: TrustEvaluationError?, record: DecisionRecord) {
        self.failure = failure
        self.record = record
    }

    /// Whether the server is trusted. In report-only mode a pin mismatch still yields `true`;
    /// the record's notes say what would have been refused.
    public var isTrusted: Bool { failure == nil }

    /// Throws the refusal, if any (the `ServerTrustEvaluating` contract).
    /// - Throws: ``TrustEvaluationError`` when the server is not trusted.
    public func get() throws(TrustEvaluationError) {
        if let failure { throw failure }
    }

    /// `trusted` or `rejected: <failure>`.
    public var description: String { failure.map { "rejected: \($0)" } ?? "trusted" }
}
