public import TrustEvaluation

/// What a signed pin set asks of Certificate Transparency: a mode and a policy, for every host
/// (the document's top level) or for the hosts of one entry (docs/pinset-format.md).
///
/// A document from the network may **raise** CT and never lower it. Turning CT off or down to
/// `report` is exactly what a holder of a stolen signing key would want: paired with a
/// misissued certificate, it would make a host that relies on CT (or whose pins the same key
/// replaced) accept a certificate no log has seen. Raising costs such an attacker nothing they
/// could use. The policy may be named (`apple` or `chrome`): both require a certificate to be
/// publicly logged with independent logs, so switching between them never lets an unlogged
/// certificate through. A document cannot name a log list (a file path) or the list's maximum
/// age: where the baseline has no log list, a raise cannot take effect, and the record says so.
public struct PinSetCTRequirement: Hashable, Sendable {
    /// The mode asked for, if given.
    public let mode: CTMode?
    /// The policy asked for, if given.
    public let policy: CTPolicy?
    /// The pattern of the host entry that asks (`nil`: the document's top level, every host).
    public let pattern: HostPattern?
}
