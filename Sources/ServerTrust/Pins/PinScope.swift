/// Which chain positions a pin may match.
public enum PinScope: String, Hashable, Sendable, CaseIterable {
    /// Any certificate of the validated chain, leaf to anchor (TrustKit, OkHttp, NSC).
    case any
    /// The leaf only (ATS `NSPinnedLeafIdentities`; curl's only position).
    case leaf
    /// Any CA of the validated chain, including the anchor (ATS `NSPinnedCAIdentities`).
    case ca
}
