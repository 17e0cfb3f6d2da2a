/// The outcome of a pin check (``PinningConfiguration/check(_:forHost:at:)``).
public struct PinCheckResult: Hashable, Sendable {
    /// What the check found.
    public enum Outcome: String, Hashable, Sendable {
        /// No pin set covers the host.
        case notPinned
        /// The most specific entry for the host is an exclusion.
        case excluded
        /// The host's pin set has expired; the host is treated as unpinned.
        case expired
        /// Every non-empty scope group of pins has a match.
        case matched
        /// Some scope group has no match (allowed in report-only mode).
        case noMatchingPin
        /// A negative pin matched.
        case negativePinMatched
    }

    /// What the check found.
    public let outcome: Outcome
    /// The pin set applied, if any.
    public let pinnedHost: PinnedHost?
    /// The pins that matched and their chain positions (for a negative-pin failure, the
    /// negative pin).
    public let matches: [PinMatch]
    /// The host checked.
    public let host: String
    /// The instant of the check, seconds since 1970.
    public let time: Int64
    /// For ``Outcome/noMatchingPin``: the scopes without a match (empty when no pin was valid
    /// at ``time``).
    public let unmatchedScopes: [PinScope]
    /// For ``Outcome/matched``: whether some pin names a key that is not in the chain checked
    /// (a spare that survives a rotation of this chain's keys).
    public let hasSpare: Bool
    /// Subjects of the chain checked (for messages).
    let subjects: [String]

    init(
        _ outcome: Outcome, _ pinnedHost: PinnedHost?, host: String, time: Int64, matches: [PinMatch] = [], unmatchedScopes: [PinScope] = [],
        subjects: [String] = [], hasSpare: Bool = true
    ) {
        self.hasSpare = hasSpare
        self.outcome = outcome
        self.pinnedHost = pinnedHost
        self.host = host
        self.time = time
        self.matches = matches
        self.unmatchedScopes = unmatchedScopes
        self.subjects = subjects
    }

    /// One line for records and logs (built on demand: a passing check on the connection path
    /// formats nothing).
    public var detail: String {
        let pattern = pinnedHost?.pattern.description ?? host
        switch outcome {
        case .notPinned: return "no pin set covers \(host)"
        case .excluded: return "\(host) is excluded from pinning by \(pattern)"
        case .expired:
            let date = pinnedHost?.expirationDate.map(ASN1TimeText.rfc3339) ?? "?"
            return "the pin set for \(pattern) expired at \(date); \(host) is treated as unpinned"
        case .matched:
            return matches.isEmpty ? "no negative pin matched (no positive pins configured)" : matches.map(\.description).joined(separator: "; ")
        case .noMatchingPin:
            if unmatchedScopes.isEmpty { return "no pin for \(pattern) is valid at \(ASN1TimeText.rfc3339(time))" }
            // "no pin for …" (scope any), "no leaf pin for …", "no leaf or CA pin for …".
            let scopes = unmatchedScopes.compactMap { scope -> String? in
                switch scope {
                case .any: return nil
                case .leaf: return "leaf"
                case .ca: return "CA"
                }
            }
            return "no \(scopes.isEmpty ? "" : scopes.joined(separator: " or ") + " ")pin for \(pattern) matches the chain"
        case .negativePinMatched:
            guard let match = matches.first else { return "a negative pin matched" }
            let subject = subjects.indices.contains(match.position) ? subjects[match.position] : "?"
            return "negative pin \(match.pin) matches \"\(subject)\" at chain position \(match.position)"
        }
    }

    /// A warning when the pins matched but every one of them names a key of this chain: none
    /// is a spare, so when these keys change every client is locked out (RFC 7469 §4.3). Not a
    /// refusal: the backup-pin rule is a configuration rule (``PinningConfiguration``).
    public var spareWarning: String? {
        guard outcome == .matched, !hasSpare, let pinnedHost, !pinnedHost.pins.isEmpty else { return nil }
        return "every pin for \(pinnedHost.pattern) names a key of this chain, so none is a spare: when these keys change "
            + "every client is locked out; add a pin for a key held in reserve (RFC 7469 §4.3)"
    }

    /// Whether the connection may proceed on account of the pins: unpinned, matched, or a
    /// mismatch in report-only mode.
    public var allowsConnection: Bool {
        switch outcome {
        case .notPinned, .excluded, .expired, .matched: return true
        case .noMatchingPin: return !(pinnedHost?.enforcePinning ?? true)
        case .negativePinMatched: return false
        }
    }
}
