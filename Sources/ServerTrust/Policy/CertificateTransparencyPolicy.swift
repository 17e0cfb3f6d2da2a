public import TrustEvaluation

/// How a host's chains are held to Certificate Transparency: the CT settings of one
/// ``HostTrustPolicy`` (a policy file's `certificateTransparency`, `--ct` on the command line).
///
/// ```swift
/// let logList = try CTLogList(json: listBytes, signature: signature, signedBy: listKey)
/// let ct = CertificateTransparencyPolicy(mode: .require, policy: .apple, logList: logList)
/// let policy = TrustPolicy(HostTrustPolicy(certificateTransparency: ct))
/// ```
///
/// The check runs through the verifier's one hook for whole-path checks
/// (``/TrustEvaluation/CertificateTransparencyCheck``), whatever evaluator decides, on every
/// path that ends at a root of the decision's system trust store (``PeerTrust/systemAnchors``):
/// the host's own anchors, user-added anchors and pinned self-signed certificates are exempt,
/// as browsers exempt private and user-added roots, and the record says so. So a private CA
/// belongs in the host's ``HostTrustPolicy/anchors``, not among the system roots a
/// ``ServerTrustDecider`` is made with.
///
/// The SCTs come from the leaf, from the TLS extension (``ServedChain/signedCertificateTimestamps``)
/// and from a verified stapled OCSP response (``ServedChain/stapledOCSPResponse``). The log list is the
/// app's input (Chrome's lists may not be used to enforce CT in other clients without
/// permission); a list older than ``maximumLogListAge`` stops enforcement with a note.
public struct CertificateTransparencyPolicy: Sendable {
    /// Off, report (accept and report a non-compliant chain) or require (refuse it).
    public let mode: CTMode
    /// Apple's or Chrome's policy.
    public let policy: CTPolicy
    /// The logs the app trusts; `nil` only when ``mode`` is ``/TrustEvaluation/CTMode/off``.
    public let logList: CTLogList?
    /// Seconds after the list's timestamp at which enforcement stops (default 70 days, as
    /// Chrome and Firefox do).
    public let maximumLogListAge: Int64

    /// Creates the settings.
    /// - Parameters:
    ///   - mode: Off, report or require.
    ///   - policy: Apple's (the default: what `SecTrust` enforces on Apple platforms) or Chrome's.
    ///   - logList: The logs the app trusts.
    ///   - maximumLogListAge: Seconds after the list's timestamp at which enforcement stops.
    public init(mode: CTMode, policy: CTPolicy = .apple, logList: CTLogList, maximumLogListAge: Int64 = CTLogList.defaultMaximumAge) {
        self.init(mode: mode, policy: policy, logList: Optional(logList), maximumLogListAge: maximumLogListAge)
    }

    private init(mode: CTMode, policy: CTPolicy, logList: CTLogList?, maximumLogListAge: Int64) {
        self.mode = logList == nil ? .off : mode
        self.policy = policy
        self.logList = logList
        self.maximumLogListAge = maximumLogListAge
    }

    /// No Certificate Transparency check (the default: CT needs a log list, which only the app
    /// can supply).
    public static let off = CertificateTransparencyPolicy(mode: .off, policy: .apple, logList: nil, maximumLogListAge: CTLogList.defaultMaximumAge)

    /// Whether a check runs.
    public var isOn: Bool { mode != .off }

    /// The same settings with another mode and policy, keeping the log list and its maximum
    /// age: what a signed pin set may change (``TrustPolicy/resolve(_:at:)``).
    /// - Parameters:
    ///   - mode: The mode.
    ///   - policy: The policy.
    /// - Returns: The settings; still off when there is no log list.
    func with(mode: CTMode, policy: CTPolicy) -> CertificateTransparencyPolicy {
        CertificateTransparencyPolicy(mode: mode, policy: policy, logList: logList, maximumLogListAge: maximumLogListAge)
    }

    /// The whole-path checks these settings ask for on `trust`: the CT check with the
    /// connection's SCTs and staple and the trust's system roots.
    func pathChecks(for trust: PeerTrust) -> [any PathCheck] {
        guard mode != .off, let logList else { return [] }
        return [
            CertificateTransparencyCheck(
                mode: mode, policy: policy, logList: logList, maximumLogListAge: maximumLogListAge, systemAnchors: trust.systemAnchors,
                tlsSCTList: trust.served.signedCertificateTimestamps, ocspResponse: trust.served.stapledOCSPResponse)
        ]
    }
}
