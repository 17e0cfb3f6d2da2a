extension HostTrustPolicy {
    /// What deciding this host needs from the TLS handshake beside the certificates, derived
    /// from its settings: the stapled OCSP response when revocation is on and reads staples.
    /// The HTTPS client asks the server for exactly this, and when it includes the staple,
    /// decides where the staple has arrived (after the server's whole first flight) instead of
    /// when the certificates arrive.
    public var handshakeEvidence: HandshakeEvidence {
        revocation.handshakeEvidence
    }
}
