/// What ``SecurityPolicy`` compares a server's chain against (`AFSSLPinningMode`).
public enum PinningMode: String, Hashable, Sendable, CaseIterable {
    /// No pinning: the chain is validated against the trust's anchors
    /// (`AFSSLPinningModeNone`).
    case none
    /// The public key of some certificate along the chain must be the key of a pinned
    /// certificate (`AFSSLPinningModePublicKey`).
    case publicKey
    /// The pinned certificates become the only trust anchors and the evaluated chain must
    /// contain one of them, byte for byte (`AFSSLPinningModeCertificate`).
    case certificate
}
