import CertificateParsing

/// Pin sets by host pattern, validated as a whole, and the pin check itself.
public struct PinningConfiguration: Sendable {
    /// The entries, in configuration order.
    public let hosts: [PinnedHost]

    /// Validates and stores pin sets.
    ///
    /// Every problem is reported: duplicate patterns, a host with no pins, enforced pinning
    /// with fewer than two distinct pins (the backup-pin rule, below), and exclusions no other
    /// pattern covers.
    ///
    /// **The backup-pin rule** is TrustKit's: an entry that enforces pinning needs at least two
    /// distinct pins (RFC 7469 §4.3 asks for a backup), so that losing one key does not lock
    /// every client out. It is decided here, from the configuration, once, never from what a
    /// server sends: the same pins give the same decision whether the server sends its root or
    /// not, reorders its chain or adds a stray certificate. Whether a pin is a true spare (a key
    /// on no current chain) cannot be known from the configuration; ``PinCheckResult/spareWarning``
    /// and `servertrust pins` say so as a warning, never as a refusal.
    /// - Parameter hosts: The entries.
    /// - Throws: ``PolicyFileError`` with one problem per fault, located at `$.hosts[i]`.
    public init(_ hosts: [PinnedHost]) throws(PolicyFileError) {
        try self.init(hosts, path: { "$.hosts[\($0)]" })
    }

    init(_ hosts: [PinnedHost], path: (Int) -> String) throws(PolicyFileError) {
        let problems = Self.problems(in: hosts, path: path)
        guard problems.isEmpty else { throw PolicyFileError(problems) }
        self.hosts = hosts
    }

    static func problems(in hosts: [PinnedHost], path: (Int) -> String) -> [PolicyConfigurationError] {
        var problems: [PolicyConfigurationError] = []
        var seen: [HostPattern: Int] = [:]
        for (index, host) in hosts.enumerated() {
            if let first = seen[host.pattern] {
                problems.append(
                    PolicyConfigurationError(
                        .duplicateHostPattern, path: path(index), "\(host.pattern) is already configured at \(path(first))"))
            } else {
                seen[host.pattern] = index
            }
            if host.isExcluded {
                let covered = hosts.enumerated().contains { other in
                    other.offset != index && !other.element.isExcluded && other.element.pattern.matches(host.pattern.base)
                        && other.element.pattern != host.pattern
                }
                if !covered {
                    problems.append(
                        PolicyConfigurationError(
                            .excludeWithoutParent, path: path(index), "\(host.pattern) is excluded, but no other entry covers it"))
                }
                continue
            }
            if host.pins.isEmpty && host.negativePins.isEmpty {
                problems.append(PolicyConfigurationError(.noPins, path: path(index), "\(host.pattern) has no pins"))
            } else if host.enforcePinning && host.requiresBackupPin && !host.pins.isEmpty && host.distinctPinCount < 2 {
                problems.append(
                    PolicyConfigurationError(
                        .missingBackupPin, path: path(index),
                        "enforcing pinning for \(host.pattern) needs at least 2 distinct pins, one for a backup key; "
                            + "with \(host.distinctPinCount) a key change locks every client out (RFC 7469 §4.3)"))
            }
        }
        return problems
    }

    /// The entry for `host`: the most specific pattern that matches it.
    /// - Parameter host: The host name or IP literal.
    /// - Returns: The entry, or `nil`.
    public func pinnedHost(for host: String) -> PinnedHost? {
        HostPattern.mostSpecific(in: hosts, matching: host, by: \.pattern)
    }

    /// Checks the proven certificates against the pins for `host` at `time`.
    ///
    /// In order: no entry, an exclusion or an expired pin set leave the host unpinned (NSC and
    /// TrustKit fail open on expiry; the caller logs it). A negative pin matching any proven
    /// certificate fails. Then, among the pins valid at `time`: when leaf-scoped or CA-scoped
    /// pins exist, each such set needs a match (so with both, both must match, as ATS
    /// requires), and an `any` pin counts toward the set of the position it matches; when only
    /// `any` pins exist, one match anywhere suffices. Pins all outside their windows match
    /// nothing.
    /// - Parameters:
    ///   - proven: The certificates whose keys the evaluation proved (``ProvenChain``): the
    ///     validated path with its anchor (pins may name the anchor, as OkHttp's cleaned chain
    ///     allows), or the signature chain when nothing was validated. Never the served list.
    ///   - host: The host.
    ///   - time: The instant, seconds since 1970.
    /// - Returns: The outcome.
    public func check(_ proven: ProvenChain, forHost host: String, at time: Int64) -> PinCheckResult {
        check(certificates: proven.certificates, forHost: host, at: time)
    }

    /// The check on a list already known to be proven.
    func check(certificates chain: [Certificate], forHost host: String, at time: Int64) -> PinCheckResult {
        Self.check(pinnedHost(for: host), certificates: chain, forHost: host, at: time)
    }

    /// The pin rule itself, for the entry already chosen for `host` (by pattern here, or by
    /// ``TrustPolicy/resolve(_:at:)``), on certificates already known to be proven.
    static func check(_ entry: PinnedHost?, certificates chain: [Certificate], forHost host: String, at time: Int64) -> PinCheckResult {
        var digests = ChainDigests(chain)
        return check(entry, digests: &digests, forHost: host, at: time)
    }

    /// The check with the keys at `renewed` positions taken to be new ones no pin names.
    static func check(_ entry: PinnedHost?, certificates chain: [Certificate], forHost host: String, at time: Int64, renewing renewed: [Int]) -> PinCheckResult
    {
        var digests = ChainDigests(chain)
        digests.renew(renewed)
        return check(entry, digests: &digests, forHost: host, at: time)
    }

    static func check(_ entry: PinnedHost?, digests: inout ChainDigests, forHost host: String, at time: Int64) -> PinCheckResult {
        let chain = digests.chain
        guard let entry else { return PinCheckResult(.notPinned, nil, host: host, time: time) }
        if entry.isExcluded { return PinCheckResult(.excluded, entry, host: host, time: time) }
        if let expiration = entry.expirationDate, time > expiration { return PinCheckResult(.expired, entry, host: host, time: time) }
        for pin in entry.negativePins where pin.isActive(at: time) {
            if let position = digests.firstPosition(of: pin, in: 0..<chain.count) {
                return PinCheckResult(
                    .negativePinMatched, entry, host: host, time: time, matches: [PinMatch(pin: pin, position: position)],
                    subjects: chain.map(\.subject.rfc4514))
            }
        }
        if entry.pins.isEmpty { return PinCheckResult(.matched, entry, host: host, time: time) }
        var matches: [PinMatch] = []
        var active = false
        var hasLeafSet = false
        var hasCASet = false
        var leafMatched = false
        var caMatched = false
        for pin in entry.pins where pin.isActive(at: time) {
            active = true
            let range: Range<Int>
            switch pin.scope {
            case .any: range = 0..<chain.count
            case .leaf: range = 0..<min(1, chain.count)
            case .ca: range = min(1, chain.count)..<chain.count
            }
            hasLeafSet = hasLeafSet || pin.scope == .leaf
            hasCASet = hasCASet || pin.scope == .ca
            guard let position = digests.firstPosition(of: pin, in: range) else { continue }
            matches.append(PinMatch(pin: pin, position: position))
            // An `any` pin counts for the leaf set when it names the leaf, for the CA set when
            // it names a CA (it may name both if the chain repeats a key).
            if position == 0 { leafMatched = true }
            if position > 0 || (pin.scope == .any && digests.firstPosition(of: pin, in: min(1, chain.count)..<chain.count) != nil) {
                caMatched = true
            }
        }
        guard active else { return PinCheckResult(.noMatchingPin, entry, host: host, time: time) }
        var unmatched: [PinScope] = []
        if hasLeafSet || hasCASet {
            // ATS: when both a leaf set and a CA set exist, both must match.
            if hasLeafSet && !leafMatched { unmatched.append(.leaf) }
            if hasCASet && !caMatched { unmatched.append(.ca) }
        } else if matches.isEmpty {
            unmatched = [.any]
        }
        if unmatched.isEmpty {
            // A spare is a pin naming no key of this chain; without one, every pin rotates with
            // this chain (a warning only: see the backup-pin rule at init).
            let hasSpare = entry.pins.contains { digests.firstPosition(of: $0, in: 0..<chain.count) == nil }
            return PinCheckResult(.matched, entry, host: host, time: time, matches: matches, hasSpare: hasSpare)
        }
        return PinCheckResult(.noMatchingPin, entry, host: host, time: time, matches: matches, unmatchedScopes: unmatched)
    }
}
