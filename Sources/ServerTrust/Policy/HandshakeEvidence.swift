import TrustEvaluation

/// What a decision needs from the TLS handshake beside the certificates: the HTTPS client asks
/// the server for it and decides where it has arrived (``HostTrustPolicy/handshakeEvidence``).
public struct HandshakeEvidence: OptionSet, Hashable, Sendable {
    /// The raw value.
    public let rawValue: UInt8
    /// Creates a set from its raw value.
    /// - Parameter rawValue: The raw value.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The OCSP response stapled to the handshake (status_request, RFC 6066 §8): in TLS 1.2 it
    /// arrives after the certificates, so the decision waits for the end of the server's flight.
    public static let stapledOCSPResponse = HandshakeEvidence(rawValue: 1 << 0)
    /// The `signed_certificate_timestamp` extension (RFC 6962 §3.3.1, type 18).
    public static let signedCertificateTimestamps = HandshakeEvidence(rawValue: 1 << 1)
}

extension HostTrustPolicy {
    /// What deciding this host needs from the TLS handshake beside the certificates, derived
    /// from its settings: the stapled OCSP response when revocation is on and reads staples;
    /// with Certificate Transparency on, the TLS SCT extension and the staple (SCTs come from
    /// the certificate, the extension and a verified OCSP response, RFC 6962 §3.3). The HTTPS
    /// client asks the server for exactly this, and when it includes the staple, decides where
    /// the staple has arrived (after the server's whole first flight) instead of when the
    /// certificates arrive.
    public var handshakeEvidence: HandshakeEvidence {
        revocation.handshakeEvidence.union(certificateTransparency.isOn ? CertificateTransparencyPolicy.evidence : [])
    }
}

extension CertificateTransparencyPolicy {
    /// What CT reads from a handshake: the SCT extension and the stapled OCSP response.
    static let evidence: HandshakeEvidence = [.signedCertificateTimestamps, .stapledOCSPResponse]
}

extension TrustPolicy {
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
        // A document may raise CT only where the baseline has a log list.
        let raisesCT = signedPins?.document.certificateTransparency.contains { ($0.mode ?? .off) > .off } ?? false
        return (rules.map(\.policy) + (unmatched.map { [$0] } ?? [])).reduce(into: HandshakeEvidence()) { evidence, policy in
            evidence.formUnion(policy.handshakeEvidence)
            evidence.formUnion(policy.revocation.strengthened(to: strongest, depth: policy.revocation.depth).handshakeEvidence)
            if raisesCT, policy.certificateTransparency.logList != nil { evidence.formUnion(CertificateTransparencyPolicy.evidence) }
        }
    }
}
