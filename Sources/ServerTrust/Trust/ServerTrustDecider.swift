public import CertificateParsing
public import TrustEvaluation

/// What decides a served chain: an evaluator (a ``SecurityPolicy``, an Alamofire-style
/// evaluator, a ``ServerTrustManager`` with per-host rules, a composite, your own type) with
/// the anchors and the clock its ``PeerTrust`` gets. The one trust pipeline of the library:
/// the HTTPS client's default handling, its `https://` proxies, the probe and every CLI
/// command decide through one of these.
///
/// ```swift
/// let decider = try ServerTrustDecider.system(.publicKeys(of: [pinned]))
/// let decision = decider.decide(ServedChain(certificates: served, host: "api.example.com"))
/// ```
///
/// Make it once per policy and keep it: verifiers and anchor stores are then built once and
/// shared by every decision (``/TrustEvaluation/Verifier/shared(anchors:policy:)``).
public struct ServerTrustDecider: Sendable {
    /// Decides each chain.
    public let evaluator: any ServerTrustEvaluating
    /// The roots a trust starts with (its ``PeerTrust/systemAnchors``).
    public let anchors: TrustStore
    /// "Now" for every decision.
    public let clock: TrustClock
    /// CRLs every chain is checked against (RFC 5280 §6.3; curl's `--crlfile`), whatever
    /// evaluator decides: `nil` checks no revocation. Supplying CRLs makes revocation checking
    /// required, hard-fail (``/TrustEvaluation/ValidationPolicy/revocationLists``).
    public let revocationLists: [CertificateRevocationList]?

    /// Creates a decider.
    /// - Parameters:
    ///   - evaluator: Decides each chain.
    ///   - anchors: The roots a trust starts with: the system store, or your private CA
    ///     (add them with `+`).
    ///   - revocationLists: CRLs to check every chain against; `nil` for none.
    ///   - clock: "Now" (tests inject a fixed or stepped clock).
    public init(
        _ evaluator: any ServerTrustEvaluating, anchors: TrustStore, revocationLists: [CertificateRevocationList]? = nil,
        clock: TrustClock = .system
    ) {
        self.evaluator = evaluator
        self.anchors = anchors
        self.revocationLists = revocationLists
        self.clock = clock
    }

    /// A decider on the system trust store (`SSL_CERT_FILE` / `SSL_CERT_DIR`, as OpenSSL).
    /// - Parameters:
    ///   - evaluator: Decides each chain; default chain validation with the host name.
    ///   - clock: "Now".
    /// - Returns: The decider.
    /// - Throws: ``/TrustEvaluation/TrustStoreError`` when the system bundle cannot be read.
    public static func system(
        _ evaluator: any ServerTrustEvaluating = DefaultTrustEvaluator(), clock: TrustClock = .system
    ) throws(TrustStoreError) -> ServerTrustDecider {
        ServerTrustDecider(evaluator, anchors: try TrustStore.system(), clock: clock)
    }

    /// The trust a served chain is judged as.
    /// - Parameter served: What the server sent.
    /// - Returns: The trust, with this decider's anchors and clock.
    public func trust(for served: ServedChain) -> PeerTrust {
        var policy = ValidationPolicy.sslServer(host: served.host)
        policy.revocationLists = revocationLists
        return PeerTrust(served: served, systemAnchors: anchors, policy: policy, clock: clock)
    }

    /// Decides one served chain.
    /// - Parameter served: What the server sent, for which host and port.
    /// - Returns: The decision, with its record.
    public func decide(_ served: ServedChain) -> TrustDecision {
        let trust = trust(for: served)
        guard let host = served.host else {
            var recorder = DecisionRecorder(evaluator: "ServerTrustDecider", policy: "no host", trust: trust, host: nil)
            recorder.step(.noHostToValidate)
            return recorder.reject(TrustEvaluationError(.noHostToValidate, host: nil, "the served chain names no host to decide for"))
        }
        return evaluator.decide(trust, forHost: host)
    }
}
