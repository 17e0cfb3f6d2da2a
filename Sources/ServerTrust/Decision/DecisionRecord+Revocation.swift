public import TrustEvaluation

extension DecisionRecord {
    /// The certificates of the accepted path whose revocation status no source could establish
    /// and which soft-fail accepted anyway (``/TrustEvaluation/PathCheckFinding/Code/revocationStatusUnknown``,
    /// noted), each finding saying why; empty when every covered certificate was settled, or
    /// the decision refused.
    public var unknownRevocationStatus: [PathCheckFinding] {
        guard isTrusted else { return [] }
        return (validatedPath?.findings ?? []).filter { $0.code == .revocationStatusUnknown && $0.outcome == .noted }
    }
}
