import TrustEvaluation

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
