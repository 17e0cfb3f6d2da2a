public import CertificateParsing
public import TrustEvaluation

/// What a server presented and how to judge it: the `SecTrust` analogue.
///
/// It holds the served chain (leaf first, then whatever the server sent), the host and port,
/// the validation policy (`SecTrustSetPolicies`), custom anchors with the anchors-only flag
/// (`SecTrustSetAnchorCertificates` / `SecTrustSetAnchorCertificatesOnly`), the system anchors,
/// the clock that says "now" (`SecTrustSetVerifyDate` is `clock = .fixed(instant)`) and the
/// whole-path checks its host's policy asks for (revocation: `SecPolicyCreateRevocation`), so
/// AFNetworking-style code maps one to one. Unlike `SecTrust` it is a value: an evaluator works
/// on its own copy, so evaluating never changes the caller's trust (AFNetworking's
/// `SecTrustSetPolicies` and `SecTrustSetAnchorCertificates` mutate the caller's object, so
/// the policy and anchors of one evaluation stay on the trust for the next).
public struct PeerTrust: Sendable {
    /// What the server sent, for which host and port.
    public let served: ServedChain
    /// What an evaluation checks (`SecTrustSetPolicies`). Defaults to the SSL server policy for
    /// ``host``.
    public var policy: ValidationPolicy
    /// When set, only the custom anchors are trusted; when clear, the custom anchors are added
    /// to the system anchors (`SecTrustSetAnchorCertificatesOnly`).
    public var anchorsOnly: Bool
    /// The system's roots (from `SSL_CERT_FILE` / `SSL_CERT_DIR` with ``/TrustEvaluation/TrustStore/system()``,
    /// or a store supplied by a test).
    public var systemAnchors: TrustStore
    /// "Now": the only way an evaluation gets its instant. A decision gives its trust a fixed
    /// clock read once, so every evaluation and pin check of the decision sees one instant;
    /// `SecTrustSetVerifyDate(trust, date)` is `trust.clock = .fixed(date)`.
    public var clock: TrustClock
    /// The whole-path checks every evaluation of this trust runs on the path it validates
    /// (``/TrustEvaluation/PathCheck``: revocation, and the checks that build on the same hook),
    /// as the host's ``HostTrustPolicy`` asks for them. Set by ``ServerTrustDecider``; an
    /// evaluator choosing its own anchors or policy keeps them.
    public internal(set) var pathChecks: [any PathCheck]
    /// The path an earlier evaluator of the same decision validated for this served chain
    /// (``CompositeTrustEvaluator`` hands it on), so that a later pin check that does not
    /// validate again compares pins with that path rather than the signature chain, as a later
    /// `SecTrustCopyCertificateChain` returns the chain an earlier evaluation built.
    public internal(set) var validatedPath: VerifiedChain?
    /// What the pins of the decision need of a path (``PinRequirement``): every evaluation of
    /// this trust prefers, among the valid paths, one they are on (``pinPreference``), and the
    /// signature chain of an unvalidated trust is chosen the same way. Empty without pins.
    var pinRequirements: [PinRequirement]
    private var customAnchorStore: TrustStore

    /// Creates a trust for a served chain.
    /// - Parameters:
    ///   - served: What the server sent.
    ///   - systemAnchors: The system roots.
    ///   - policy: The validation policy; `nil` means the SSL server policy for the served
    ///     chain's host (what URLSession's server-trust challenge carries).
    ///   - clock: "Now" (`.fixed(instant)` for `SecTrustSetVerifyDate`).
    public init(served: ServedChain, systemAnchors: TrustStore, policy: ValidationPolicy? = nil, clock: TrustClock = .system) {
        self.served = served
        self.policy = policy ?? .sslServer(host: served.host)
        self.anchorsOnly = false
        self.systemAnchors = systemAnchors
        self.clock = clock
        self.pathChecks = []
        self.validatedPath = nil
        self.pinRequirements = []
        self.customAnchorStore = .empty
    }

    /// Creates a trust for a chain judged without a connection.
    /// - Parameters:
    ///   - certificates: The certificates the server sent, leaf first.
    ///   - host: The host connected to.
    ///   - port: The port connected to.
    ///   - systemAnchors: The system roots.
    ///   - policy: The validation policy; `nil` means the SSL server policy for `host`.
    ///   - clock: "Now" (`.fixed(instant)` to judge the chain at another instant).
    public init(
        certificates: [Certificate], host: String?, port: Int = 443, systemAnchors: TrustStore, policy: ValidationPolicy? = nil,
        clock: TrustClock = .system
    ) {
        self.init(served: ServedChain(certificates: certificates, host: host, port: port), systemAnchors: systemAnchors, policy: policy, clock: clock)
    }

    /// The certificates the server sent, leaf first.
    public var certificates: [Certificate] { served.certificates }
    /// The host the connection was made to (the URL's host), if known.
    public var host: String? { served.host }
    /// The port the connection was made to.
    public var port: Int { served.port }

    /// Custom trust anchors. Setting them does not change ``anchorsOnly``; use
    /// ``setAnchorCertificates(_:)`` for `SecTrustSetAnchorCertificates` semantics.
    public var anchors: [Certificate] {
        get { customAnchorStore.certificates }
        set { customAnchorStore = TrustStore(newValue, sources: ["custom anchors"]) }
    }

    /// `SecTrustSetAnchorCertificates`: `certificates` become the custom anchors and, as on
    /// Apple platforms, the built-in anchors are no longer trusted.
    /// - Parameter certificates: The new anchors.
    public mutating func setAnchorCertificates(_ certificates: [Certificate]) {
        anchors = certificates
        anchorsOnly = true
    }

    /// Custom anchors from a store built once (an evaluator's configured anchors), so that
    /// evaluations share its keys and verifiers instead of rebuilding them.
    /// - Parameters:
    ///   - store: The anchors.
    ///   - only: Trust only them (`SecTrustSetAnchorCertificatesOnly(true)`).
    public mutating func setAnchors(_ store: TrustStore, only: Bool) {
        customAnchorStore = store
        anchorsOnly = only
    }

    /// Which anchors an evaluation uses: the system roots until custom anchors are set; then
    /// the custom ones only, or both when ``anchorsOnly`` is clear.
    public var anchorMode: AnchorMode {
        if anchorsOnly { return .customOnly }
        return customAnchorStore.count == 0 ? .systemOnly : .customAndSystem
    }

    /// The anchors an evaluation uses.
    public var effectiveAnchors: TrustStore {
        switch anchorMode {
        case .customOnly: return customAnchorStore
        case .systemOnly: return systemAnchors
        case .customAndSystem: return customAnchorStore + systemAnchors
        }
    }

    /// `SecTrustSetPolicies` with an SSL server or basic X.509 policy: the purpose and the
    /// name change, what the trust was given besides them stays (its algorithm and key rules,
    /// its clock and its whole-path checks).
    /// - Parameters:
    ///   - kind: `.sslServer` or `.basicX509`.
    ///   - host: The name the leaf must be valid for (SSL server only); `nil` for none.
    public mutating func setPolicy(_ kind: ValidationPolicy.Kind, host: String?) {
        policy.kind = kind
        policy.peerName = kind == .sslServer ? host.map(PeerName.host) : nil
    }

    /// The instant evaluations use: ``clock``'s reading.
    public func evaluationTime() -> Int64 {
        clock.now()
    }

    /// Validates the served chain against ``effectiveAnchors`` with ``policy`` at
    /// ``evaluationTime()``, running ``pathChecks`` on the path (`SecTrustEvaluateWithError`).
    ///
    /// When the decision has pins (an SPKI pin set, pinned keys or certificates), the path
    /// returned is, among the valid paths, one the pins are on when there is one
    /// (``/TrustEvaluation/PathPreference``): a cross-signed root, an alternate intermediate or
    /// an intermediate that is also an anchor cannot make a correctly pinned server fail. The
    /// result's chain says which other valid paths were seen.
    /// - Parameter trace: Record every path tried, for explanations.
    /// - Returns: The result.
    public func evaluate(trace: Bool = false) -> TrustResult {
        let time = evaluationTime()
        let anchors = effectiveAnchors
        guard let leaf = certificates.first else {
            return TrustResult(
                result: .failure(ValidationFailure(.invalidCertificate, "the server sent no certificate")),
                trace: [], policy: policy, time: time, checks: pathChecks.map(\.name), anchorMode: anchorMode, anchors: anchors)
        }
        // One verifier per (anchors, policy): its rule tables are built once, not per handshake.
        let outcome = Verifier.shared(anchors: anchors, policy: policy).validate(
            leaf: leaf, intermediates: Array(certificates.dropFirst()), at: time, checks: pathChecks, preferring: pinPreference, trace: trace)
        return TrustResult(
            result: outcome.result, trace: outcome.trace, policy: policy, time: time, checks: pathChecks.map(\.name), anchorMode: anchorMode,
            anchors: anchors)
    }

    /// The trust's certificate chain (`SecTrustCopyCertificateChain`): the validated path when
    /// the chain validates, otherwise the chain Apple's chain builder would report for an
    /// untrusted trust, which is ``ProvenChain/signatureChain(of:)``: the leaf and the issuers
    /// that verifiably signed it, never the served list as sent.
    /// - Parameter evaluation: An evaluation already made of this trust, to avoid repeating it.
    /// - Returns: Leaf first.
    public func certificateChain(after evaluation: TrustResult? = nil) -> [Certificate] {
        let evaluation = evaluation ?? evaluate()
        if let chain = evaluation.chain { return chain.certificates }
        return ProvenChain.signatureChain(of: self).certificates
    }

    /// The certificates a pin may be compared with after `evaluation` (``ProvenChain``, the
    /// one pin rule of the library): the validated path, else the signature chain.
    /// - Parameter evaluation: The evaluator's own chain evaluation, if it made one.
    /// - Returns: The proven certificates.
    public func provenChain(after evaluation: TrustResult?) -> ProvenChain {
        ProvenChain(trust: self, evaluation: evaluation)
    }

    /// The certificates a pin may be compared with after `evaluation`: the same in both
    /// semantics since the signature chain became the rule for every unvalidated trust.
    /// - Parameters:
    ///   - evaluation: The evaluator's own chain evaluation, if it made one.
    ///   - semantics: No longer changes anything.
    /// - Returns: The proven certificates (``provenChain(after:)``).
    @available(*, deprecated, message: "both semantics prove the same certificates: use provenChain(after:)")
    public func provenChain(after evaluation: TrustResult?, semantics: PolicySemantics) -> ProvenChain {
        provenChain(after: evaluation)
    }
}
