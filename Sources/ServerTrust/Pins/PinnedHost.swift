/// The pin set of one host pattern: positive pins with their scopes and windows, negative
/// pins, enforcement or report-only, expiry, and where to report failures.
///
/// The union of what TrustKit (`kTSK…` per-domain keys), ATS (`NSPinnedLeafIdentities` /
/// `NSPinnedCAIdentities`), NSC (`<pin-set expiration>`) and Chromium (`bad_static_spki_hashes`)
/// offer; see ``PinningConfiguration/check(_:forHost:at:)`` for how it is applied.
public struct PinnedHost: Hashable, Sendable {
    /// The hosts it applies to (its `noted-hostname` in reports).
    public var pattern: HostPattern
    /// The pins; one matching pin of each non-empty scope group is required.
    public var pins: [SPKIPin]
    /// Keys that must never appear anywhere in the chain.
    public var negativePins: [SPKIPin]
    /// `false` is report-only mode: a missing match is reported and logged but allowed
    /// (TrustKit's `kTSKEnforcePinning = NO`). Negative pins and chain failures are never
    /// relaxed by it.
    public var enforcePinning: Bool
    /// After this instant (seconds since 1970) the host is treated as unpinned and that is
    /// logged (TrustKit's `kTSKExpirationDate`, NSC's `expiration`).
    public var expirationDate: Int64?
    /// Where failure reports go.
    public var reportURIs: [String]
    /// An exclusion: the host is unpinned even though a wider pattern covers it (TrustKit's
    /// `kTSKExcludeSubdomainFromParentPolicy`).
    public var isExcluded: Bool
    /// Whether the backup-pin rule applies when enforcing (at least two distinct pins, checked
    /// when the configuration is made; see ``PinningConfiguration``). Clear it only for an
    /// ad-hoc check such as `servertrust evaluate --pin`, never for a deployed configuration.
    public var requiresBackupPin: Bool

    /// Creates a pin set.
    /// - Parameters:
    ///   - pattern: The hosts covered.
    ///   - pins: The pins.
    ///   - negativePins: Keys that must never appear.
    ///   - enforcePinning: `false` for report-only mode.
    ///   - expirationDate: When the pin set stops applying.
    ///   - reportURIs: Where failure reports go.
    ///   - requiresBackupPin: Whether the backup-pin rule applies when enforcing.
    public init(
        pattern: HostPattern,
        pins: [SPKIPin],
        negativePins: [SPKIPin] = [],
        enforcePinning: Bool = true,
        expirationDate: Int64? = nil,
        reportURIs: [String] = [],
        requiresBackupPin: Bool = true
    ) {
        self.pattern = pattern
        self.pins = pins
        self.negativePins = negativePins
        self.enforcePinning = enforcePinning
        self.expirationDate = expirationDate
        self.reportURIs = reportURIs
        self.isExcluded = false
        self.requiresBackupPin = requiresBackupPin
    }

    /// An exclusion entry for `pattern`.
    /// - Parameter pattern: The hosts to leave unpinned.
    /// - Returns: The entry.
    public static func excluded(_ pattern: HostPattern) -> PinnedHost {
        var host = PinnedHost(pattern: pattern, pins: [])
        host.isExcluded = true
        return host
    }

    /// How many different pins there are (the same algorithm and digest written twice, or in
    /// two windows, count once).
    public var distinctPinCount: Int {
        Set(pins.map { PinIdentity(algorithm: $0.algorithm, digest: $0.digest) }).count
    }

    private struct PinIdentity: Hashable {
        let algorithm: PinDigestAlgorithm
        let digest: [UInt8]
    }

    /// Whether the pattern covers subdomains (RFC 7469's `include-subdomains`).
    public var includesSubdomains: Bool { pattern.kind != .exact }
}
