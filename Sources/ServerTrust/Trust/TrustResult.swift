public import TrustEvaluation

/// The outcome of ``PeerTrust/evaluate(trace:)``: the chain-validation result and what it was
/// evaluated with.
public struct TrustResult: Sendable {
    /// The validated chain (leaf first, anchor last) or the rejection.
    public let result: Result<VerifiedChain, ValidationFailure>
    /// Every path tried, when tracing was requested.
    public let trace: [PathAttempt]
    /// The policy applied.
    public let policy: ValidationPolicy
    /// The instant it was evaluated at, seconds since 1970.
    public let time: Int64
    /// The names of the whole-path checks the evaluation ran on every candidate path
    /// (``PeerTrust/pathChecks``).
    public let checks: [String]
    /// Which anchors were in force.
    public let anchorMode: AnchorMode
    /// The anchors used.
    public let anchors: TrustStore

    /// Whether the chain validated.
    public var isTrusted: Bool {
        if case .success = result { return true }
        return false
    }

    /// The validated chain, if any.
    public var chain: VerifiedChain? {
        if case .success(let chain) = result { return chain }
        return nil
    }

    /// The rejection, if any.
    public var failure: ValidationFailure? {
        if case .failure(let failure) = result { return failure }
        return nil
    }

    /// One line naming the anchors, for decision records.
    public var anchorsDescription: String {
        func subjects(_ store: TrustStore) -> String {
            store.certificates.prefix(4).map { "\"\($0.subject.rfc4514)\"" }.joined(separator: ", ")
                + (store.count > 4 ? ", … (\(store.count) in all)" : "")
        }
        switch anchorMode {
        case .customOnly:
            return anchors.count == 0 ? "custom anchors only: none (nothing is trusted)" : "custom anchors only: " + subjects(anchors)
        case .systemOnly:
            let origin = anchors.sources.isEmpty ? "" : " (\(anchors.sources.joined(separator: ", ")))"
            // Only the store read from SSL_CERT_FILE / SSL_CERT_DIR is called the system's: a
            // private CA handed to the decider as its roots is named as what it is.
            return anchors.isSystemStore
                ? "system trust store: \(anchors.count) roots\(origin)" : "\(anchors.count) anchor\(anchors.count == 1 ? "" : "s")\(origin)"
        case .customAndSystem:
            return "custom anchors and system trust store: \(anchors.count) anchors (\(anchors.sources.joined(separator: ", ")))"
        }
    }
}
