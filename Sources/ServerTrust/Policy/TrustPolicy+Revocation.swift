import TrustEvaluation

extension TrustPolicy {
    /// A signed pin set's revocation setting laid over `policy` (``PinSetRevocation``): while
    /// the document is in force, the host's mode and depth become the stronger of the
    /// baseline's and the document's; what the document asks for below the baseline is not
    /// applied, and the record says so.
    func overlaySignedRevocation(on policy: inout HostTrustPolicy, host: String, at time: Int64, notes: inout [String]) {
        guard let signedPins, !signedPins.document.revocation.isEmpty, !signedPins.rules.isExpired(signedPins.document, at: time) else { return }
        let document = signedPins.document
        guard let setting = document.revocation.setting(forEntry: document.pins.pinnedHost(for: host)?.pattern) else { return }
        let baseline = policy.revocation
        policy.revocation = baseline.strengthened(to: setting.mode, depth: setting.depth ?? baseline.depth)
        if policy.revocation.mode != baseline.mode || policy.revocation.depth != baseline.depth {
            notes.append("revocation \(policy.revocation.mode.rawValue), \(policy.revocation.depth.rawValue) from signed pin set \(document.serial)")
        }
        if setting.mode < baseline.mode || (setting.depth.map { $0 < baseline.depth } ?? false) {
            let asked = setting.mode.rawValue + (setting.depth.map { ", \($0.rawValue)" } ?? "")
            notes.append(
                "signed pin set \(document.serial) asks for revocation \(asked): the baseline's \(baseline.mode.rawValue), \(baseline.depth.rawValue) "
                    + "stays (a signed pin set may strengthen revocation, never weaken it)")
        }
    }
}
