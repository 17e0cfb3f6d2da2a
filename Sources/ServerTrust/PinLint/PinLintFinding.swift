/// One thing ``TrustPolicy/lint(chain:anchors:at:)`` found about a policy's pins: which rule,
/// how serious, for which hosts and which pin, what is wrong and how to fix it.
///
/// With certificates that live 47 days (CA/Browser Forum ballot SC-081, 2029) and CAs that
/// rotate intermediates on purpose (Let's Encrypt since 2024), a pin set that looked right the
/// day it shipped breaks at the next renewal. The rules say so before it ships.
public struct PinLintFinding: Hashable, Sendable, CustomStringConvertible {
    /// The rules.
    public enum Rule: String, Hashable, Sendable, CaseIterable {
        /// The pins name only leaf keys: every renewal that brings a new key (ACME clients make
        /// one by default) locks every client out.
        case leafOnly
        /// Every pin names a key of the server's current chain: no spare key held in reserve,
        /// so a change of CA (or of its key) locks every client out (RFC 7469 §4.3).
        case noSpareKey
        /// The only CA key pinned is one intermediate's: CAs that issue from several
        /// intermediates (Let's Encrypt, Google Trust Services, Amazon) switch at any renewal.
        case singleIntermediate
        /// Every certificate known to carry a pinned key expires before the pin set does.
        case certificatesExpireFirst
        /// A pinned root has a cross-signed successor that the trust store also holds, and the
        /// successor is not pinned: clients that build the path to it are refused.
        case crossSignedSuccessorNotPinned
        /// The pin set's expiry has passed: its pins are not enforced at all.
        case expiryPassed
        /// The pin set's expiry is more than a year away.
        case expiryTooFar
        /// No valid path of the server's chain today carries the pins: every client is refused.
        case noMatchToday
        /// The chain given does not validate against the roots, so the rules that need its
        /// valid paths read the chain as served.
        case chainNotValid
        /// The chain given is for a host no pinned entry of the policy covers.
        case chainNotCovered
    }

    /// How serious a finding is.
    public enum Level: String, Hashable, Sendable, CaseIterable {
        /// The pins will fail (or are not enforced): `servertrust pins lint` exits 1.
        case error
        /// The pins may fail at a renewal or a change of CA.
        case warning
    }

    /// The rule.
    public let rule: Rule
    /// How serious.
    public let level: Level
    /// The host pattern of the pin set (`*` for a finding about no entry).
    public let hosts: String
    /// The pin concerned (`sha256/…`), when one is.
    public let pin: String?
    /// What is wrong, for people.
    public let message: String
    /// How to fix it.
    public let fix: String

    /// Creates a finding.
    /// - Parameters:
    ///   - rule: The rule.
    ///   - level: How serious.
    ///   - hosts: The host pattern of the pin set.
    ///   - pin: The pin concerned, if one.
    ///   - message: What is wrong.
    ///   - fix: How to fix it.
    public init(_ rule: Rule, _ level: Level, hosts: String, pin: String? = nil, _ message: String, fix: String) {
        self.rule = rule
        self.level = level
        self.hosts = hosts
        self.pin = pin
        self.message = message
        self.fix = fix
    }

    /// `error: leafOnly: api.example.com: sha256/…: message; fix: …`, one line.
    public var description: String {
        "\(level.rawValue): \(rule.rawValue): \(hosts): " + (pin.map { "\($0): " } ?? "") + message + "; fix: " + fix
    }
}
