public import TrustEvaluation

/// The revocation settings a signed pin set carries (docs/pinset-format.md): a mode and
/// optionally a depth, for every host of the baseline (`revocation` at the top level) or for
/// the hosts of one entry; never a source, since sources name files and folders.
///
/// **They only strengthen** (``TrustPolicy/resolve(_:at:)``): each host's mode and depth become
/// the stronger of the baseline's and the document's, and the baseline's sources stay. A
/// document asking for less is not applied to the host (its record says so). The reason is the
/// attacker's position: a signed pin set arrives over the network, and whoever can get one
/// signed (a stolen update key, a compromised publishing pipeline) could otherwise switch
/// revocation off and bring a revoked, stolen server key back into use, while the worst a
/// strengthening document can do is refuse connections the baseline accepted, which its own
/// pins could do anyway. What the app shipped is the floor.
public struct PinSetRevocation: Hashable, Sendable {
    /// One `revocation` object of a document.
    public struct Setting: Hashable, Sendable {
        /// The mode asked for.
        public let mode: RevocationMode
        /// The depth asked for, if the document gives one.
        public let depth: RevocationDepth?

        /// Creates a setting.
        /// - Parameters:
        ///   - mode: The mode.
        ///   - depth: The depth, or `nil` for the baseline's.
        public init(mode: RevocationMode, depth: RevocationDepth?) {
            self.mode = mode
            self.depth = depth
        }
    }

    /// The document's top-level setting, for every host.
    public var everyHost: Setting?
    /// The settings of its host entries, by the entry's pattern.
    public var entries: [HostPattern: Setting]

    /// Creates the settings.
    /// - Parameters:
    ///   - everyHost: The top-level setting.
    ///   - entries: The entries' settings.
    public init(everyHost: Setting?, entries: [HostPattern: Setting]) {
        self.everyHost = everyHost
        self.entries = entries
    }

    /// No revocation settings.
    public static let none = PinSetRevocation(everyHost: nil, entries: [:])

    /// The setting for a host the document's entry `pattern` covers (`nil`: no entry does):
    /// the entry's own, else the top level's.
    /// - Parameter pattern: The pattern of the document's entry for the host.
    /// - Returns: The setting, if any.
    public func setting(forEntry pattern: HostPattern?) -> Setting? {
        pattern.flatMap { entries[$0] } ?? everyHost
    }

    /// Whether the document says anything about revocation.
    public var isEmpty: Bool { everyHost == nil && entries.isEmpty }
}
