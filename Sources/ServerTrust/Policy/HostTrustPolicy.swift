public import CertificateParsing
public import TrustEvaluation

/// Everything that decides the server trust of one host, in one immutable value: the evaluator
/// (validation and AFNetworking- or Alamofire-style pinning, with its own options), the
/// anchors and whether they are the only ones, the SPKI pin set with its report targets, the
/// revocation settings and the Certificate Transparency settings.
///
/// Whatever the source (code, a policy file, a TrustKit dictionary, a signed pin set, the
/// command line), a decision reads the host's policy from exactly one of these, resolved by
/// ``TrustPolicy/resolve(_:at:)``; nothing reaches a decision around it.
public struct HostTrustPolicy: Sendable {
    /// Decides the chain: validation, host name and (AFNetworking, Alamofire) pinning.
    public var evaluator: any ServerTrustEvaluating
    /// Anchors beside the system roots, or instead of them.
    public var anchors: TrustAnchors
    /// SPKI pins (TrustKit, OkHttp, ATS, NSC) with their scopes, windows, negative pins,
    /// report-only mode, expiry and report URIs; checked after the evaluator accepts, on the
    /// certificates its evaluation proved (``ProvenChain``). `nil`: no pin set.
    public var pins: PinnedHost?
    /// Revocation checking on the validated path.
    public var revocation: RevocationPolicy
    /// Certificate Transparency on the validated path (off by default).
    public var certificateTransparency: CertificateTransparencyPolicy
    /// Where this value was written (`policy file policy.json $.hosts[2]`, `code`), for
    /// decision records.
    public var source: String

    /// Creates a host policy.
    /// - Parameters:
    ///   - evaluator: Decides the chain (default: chain validation with the host name).
    ///   - anchors: Anchors beside or instead of the system roots (default: none).
    ///   - pins: An SPKI pin set (default: none).
    ///   - revocation: Revocation checking (default: off).
    ///   - certificateTransparency: Certificate Transparency (default: off).
    ///   - source: Where the value was written, for decision records.
    public init(
        evaluator: any ServerTrustEvaluating = DefaultTrustEvaluator(), anchors: TrustAnchors = .none, pins: PinnedHost? = nil,
        revocation: RevocationPolicy = .off, certificateTransparency: CertificateTransparencyPolicy = .off, source: String = "code"
    ) {
        self.evaluator = evaluator
        self.anchors = anchors
        self.pins = pins
        self.revocation = revocation
        self.certificateTransparency = certificateTransparency
        self.source = source
    }
}

/// The anchors a host's policy adds to the system roots, or trusts instead of them
/// (`SecTrustSetAnchorCertificates` with `SecTrustSetAnchorCertificatesOnly`; a policy file's
/// `anchors` and `anchorsOnly`; curl's `--cacert`).
///
/// The store is built once, when the policy is made, so every decision shares its parsed keys.
public struct TrustAnchors: Sendable {
    /// The configured anchors (empty for none).
    public let store: TrustStore
    /// Whether only ``store`` is trusted (the system roots are not).
    public let only: Bool

    /// Creates the anchors.
    /// - Parameters:
    ///   - store: The anchors.
    ///   - only: Trust only them.
    public init(_ store: TrustStore, only: Bool) {
        self.store = store
        self.only = only
    }

    /// Creates the anchors from certificates.
    /// - Parameters:
    ///   - certificates: The anchors.
    ///   - only: Trust only them.
    ///   - source: What the store is called in decision records.
    public init(_ certificates: [Certificate], only: Bool, source: String = "configured anchors") {
        self.init(TrustStore(certificates, sources: [source]), only: only)
    }

    /// No configured anchors: the system roots alone.
    public static let none = TrustAnchors(.empty, only: false)

    /// Whether anything is configured.
    public var isConfigured: Bool { only || store.count > 0 }
}
