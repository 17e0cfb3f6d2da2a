import CertificateParsing
public import TrustEvaluation

/// What decides a served chain: a ``TrustPolicy`` (per host: an evaluator, anchors, pins,
/// revocation), the system roots a trust starts with, and the one clock. The one trust
/// pipeline of the library: the HTTPS client's default handling, its `https://` proxies, the
/// probe and every CLI command decide through one of these.
///
/// ```swift
/// let decider = try ServerTrustDecider.system(.publicKeys(of: [pinned]))
/// let decision = decider.decide(ServedChain(certificates: served, host: "api.example.com"))
/// ```
///
/// A decision reads the clock once and gives the trust that instant as a fixed clock, so every
/// evaluation, pin window and expiry of the decision sees the same "now"; the policy then
/// decides (``TrustPolicy/decide(_:forHost:)``).
///
/// Make it once per policy and keep it: verifiers and anchor stores are then built once and
/// shared by every decision (``/TrustEvaluation/Verifier/shared(anchors:policy:)``).
public struct ServerTrustDecider: Sendable {
    /// What applies to each host.
    public let policy: TrustPolicy
    /// The roots a trust starts with (its ``PeerTrust/systemAnchors``).
    public let anchors: TrustStore
    /// "Now" for every decision: the only source of the instant a decision is made at.
    public let clock: TrustClock

    /// Creates a decider for a policy.
    /// - Parameters:
    ///   - policy: What applies to each host.
    ///   - anchors: The roots a trust starts with: the system store, or your private CA.
    ///   - clock: "Now" (tests inject a fixed or stepped clock).
    public init(policy: TrustPolicy, anchors: TrustStore, clock: TrustClock = .system) {
        self.policy = policy
        self.anchors = anchors
        self.clock = clock
    }

    /// Creates a decider that decides every host with one evaluator (a ``TrustPolicy`` given
    /// here is used as it is).
    /// - Parameters:
    ///   - evaluator: Decides each chain.
    ///   - anchors: The roots a trust starts with: the system store, or your private CA
    ///     (add them with `+`).
    ///   - clock: "Now" (tests inject a fixed or stepped clock).
    public init(_ evaluator: any ServerTrustEvaluating, anchors: TrustStore, clock: TrustClock = .system) {
        self.init(policy: evaluator as? TrustPolicy ?? TrustPolicy(HostTrustPolicy(evaluator: evaluator)), anchors: anchors, clock: clock)
    }

    /// A decider on the system trust store (`SSL_CERT_FILE` / `SSL_CERT_DIR`, as OpenSSL).
    /// - Parameters:
    ///   - evaluator: Decides each chain (a ``TrustPolicy`` for per-host rules); default chain
    ///     validation with the host name.
    ///   - clock: "Now".
    /// - Returns: The decider.
    /// - Throws: ``/TrustEvaluation/TrustStoreError`` when the system bundle cannot be read.
    public static func system(
        _ evaluator: any ServerTrustEvaluating = DefaultTrustEvaluator(), clock: TrustClock = .system
    ) throws(TrustStoreError) -> ServerTrustDecider {
        ServerTrustDecider(evaluator, anchors: try TrustStore.system(), clock: clock)
    }

    /// Decides one served chain.
    /// - Parameter served: What the server sent, for which host and port.
    /// - Returns: The decision, with its record.
    public func decide(_ served: ServedChain) -> TrustDecision {
        let trust = PeerTrust(served: served, systemAnchors: anchors, clock: .fixed(clock.now()))
        guard let host = served.host else {
            var recorder = DecisionRecorder(evaluator: "ServerTrustDecider", policy: "no host", trust: trust, host: nil)
            recorder.step(.noHostToValidate)
            return recorder.reject(TrustEvaluationError(.noHostToValidate, host: nil, "the served chain names no host to decide for"))
        }
        return policy.decide(trust, forHost: host)
    }
}
