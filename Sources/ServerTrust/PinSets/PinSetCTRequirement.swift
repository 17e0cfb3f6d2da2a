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

extension SignedPinSet {
    /// The one place a signed pin set's CT requirement meets the baseline's settings for
    /// `host`: the requirement of the document's entry that applies to the host (the most
    /// specific, as for its pins), else the top level's; a lower mode is refused, a raise
    /// without a log list cannot apply.
    /// - Parameters:
    ///   - host: The host.
    ///   - baseline: The host's settings in the baseline policy.
    /// - Returns: The settings in force and notes for the record.
    func certificateTransparency(for host: String, over baseline: CertificateTransparencyPolicy) -> (CertificateTransparencyPolicy, [String]) {
        let requirements = document.certificateTransparency
        let entry = document.pins.pinnedHost(for: host)?.pattern
        guard let requirement = requirements.first(where: { $0.pattern != nil && $0.pattern == entry }) ?? requirements.first(where: { $0.pattern == nil })
        else { return (baseline, []) }
        let who = "signed pin set \(document.serial)"
        let asked = requirement.mode ?? baseline.mode
        var notes: [String] = []
        if asked < baseline.mode {
            notes.append(
                "\(who) asks for CT \(asked) for \(host), below the baseline's \(baseline.mode): a signed pin set cannot lower CT, the baseline's mode stays")
        }
        let mode = max(asked, baseline.mode)
        if mode != .off, baseline.logList == nil {
            notes.append(
                "\(who) asks for CT \(mode) for \(host), but the baseline policy has no CT log list for it (a signed pin set cannot name one): CT stays off")
            return (baseline, notes)
        }
        let policy = requirement.policy ?? baseline.policy
        guard mode != baseline.mode || (mode != .off && policy != baseline.policy) else { return (baseline, notes) }
        notes.append("CT \(mode) with the \(policy) policy from \(who)\(requirement.pattern.map { " (\($0))" } ?? "")")
        return (baseline.with(mode: mode, policy: policy), notes)
    }
}
