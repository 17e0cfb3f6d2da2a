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

    /// What deciding `host` at `time` needs from the TLS handshake beside the certificates
    /// (the stapled OCSP response, …), by the host's policy as ``resolve(_:at:)`` finds it.
    /// - Parameters:
    ///   - host: The host connected to.
    ///   - time: The instant (a signed pin set in force may switch revocation on).
    /// - Returns: The evidence to ask the server for.
    public func handshakeEvidence(forHost host: String, at time: Int64) -> HandshakeEvidence {
        resolve(host, at: time).policy?.handshakeEvidence ?? []
    }

    /// What deciding any host may need from the handshake: the union over the rules, the policy
    /// for unmatched hosts and what the signed pin set could switch on. Empty means no decision
    /// of this policy needs more than the certificates, so a client need not look per host.
    public var handshakeEvidenceForAnyHost: HandshakeEvidence {
        let document = signedPins?.document.revocation ?? .none
        let strongest = ([document.everyHost] + document.entries.values.map(Optional.some)).compactMap { $0 }.map(\.mode).max() ?? .off
        return (rules.map(\.policy) + (unmatched.map { [$0] } ?? [])).reduce(into: HandshakeEvidence()) { evidence, policy in
            evidence.formUnion(policy.handshakeEvidence)
            evidence.formUnion(policy.revocation.strengthened(to: strongest, depth: policy.revocation.depth).handshakeEvidence)
        }
    }
}
