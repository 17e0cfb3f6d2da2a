/// Which of several valid paths a caller wants: the one its pins are on.
///
/// One served chain can have more than one valid path: a root cross-signed by an older root
/// (Let's Encrypt's ISRG Root X2 and YR/YE under X1/X2), an intermediate issued twice with one
/// key, or an intermediate that a trust store also carries as an anchor (Chrome's store holds
/// Let's Encrypt's intermediates since 2026-01; Brave #52059). Which one a verifier builds first
/// depends on the order of the store and of what the server sent, so a pin compared with the
/// first path alone fails a correctly pinned server at random.
///
/// Given a preference, ``Verifier/validate(leaf:intermediates:at:checks:preferring:trace:)``
/// keeps looking, within the validation's work budget, for a valid path the preference accepts,
/// and says which path it chose and which other valid paths it saw. A preference never makes a
/// path valid: every path it is asked about has reached a trust anchor and passed RFC 5280 §6.1
/// and every ``PathCheck``; when no valid path is preferred, the first valid path is returned,
/// marked ``VerifiedChain/Selection/noPreferredPath``, and the caller's pin check refuses it.
public protocol PathPreference: Sendable {
    /// Whether `path` is one the caller wants (its pins are on it).
    /// - Parameters:
    ///   - path: A valid path, leaf first, trust anchor last.
    ///   - time: The validation's instant (pins may have validity windows).
    /// - Returns: `true` to stop the search at this path.
    func prefers(_ path: CandidatePath, at time: Int64) -> Bool
}

extension VerifiedChain {
    /// How the verifier chose this path among the valid paths it found.
    public enum Selection: String, Hashable, Sendable {
        /// No preference was given: the first valid path found.
        case first
        /// The first valid path the ``PathPreference`` accepted.
        case preferred
        /// No valid path found within the budget was preferred: the first valid path found.
        case noPreferredPath
    }
}

/// Every valid path of a served chain, as ``Verifier/validPaths(leaf:intermediates:at:checks:)``
/// found them.
public struct ValidPaths: Sendable {
    /// The valid paths, in the order the search found them (its order of preference: anchors
    /// before intermediates, issuers whose key identifier matches first).
    public let paths: [VerifiedChain]
    /// When there is none: the most telling failure (as ``ValidationOutcome/failure`` reports it).
    public let failure: ValidationFailure?
    /// Whether the work budget ran out before every candidate was tried, so that more valid
    /// paths may exist.
    public let isIncomplete: Bool
}
