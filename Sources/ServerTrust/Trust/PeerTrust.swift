public import CertificateParsing
public import TrustEvaluation

/// What a server presented and how to judge it: the `SecTrust` analogue.
///
/// It holds the served chain (leaf first, then whatever the server sent), the host and port,
/// the validation policy (`SecTrustSetPolicies`), custom anchors with the anchors-only flag
/// (`SecTrustSetAnchorCertificates` / `SecTrustSetAnchorCertificatesOnly`), the system anchors,
/// and the evaluation time (`SecTrustSetVerifyDate`), so AFNetworking-style code maps one to
/// one. Unlike `SecTrust` it is a value: an evaluator works on its own copy, so evaluating never
/// changes the caller's trust (AFNetworking's `SecTrustSetPolicies` and
/// `SecTrustSetAnchorCertificates` mutate the caller's object; anchors-features.md §(d) "Side
/// effects").
public struct PeerTrust: Sendable {
    /// The certificates the server sent, leaf first.
    public var certificates: [Certificate]
    /// The host the connection was made to (the URL's host), if known.
    public var host: String?
    /// The port the connection was made to.
    public var port: Int
    /// What an evaluation checks (`SecTrustSetPolicies`). Defaults to the SSL server policy for
    /// ``host``.
    public var policy: ValidationPolicy
    /// When set, only the custom anchors are trusted; when clear, the custom anchors are added
    /// to the system anchors (`SecTrustSetAnchorCertificatesOnly`).
    public var anchorsOnly: Bool
    /// The system's roots (from `SSL_CERT_FILE` / `SSL_CERT_DIR` with ``TrustStore/system()``,
    /// or a store supplied by a test).
    public var systemAnchors: TrustStore
    /// The instant to evaluate at, in seconds since 1970 (`SecTrustSetVerifyDate`); `nil`
    /// means the policy's own time, or now.
    public var verifyTime: Int64?
    private var customAnchorStore: TrustStore

    /// Creates a trust for a served chain.
    /// - Parameters:
    ///   - certificates: The certificates the server sent, leaf first.
    ///   - host: The host connected to.
    ///   - port: The port connected to.
    ///   - systemAnchors: The system roots.
    ///   - policy: The validation policy; `nil` means the SSL server policy for `host`
    ///     (what URLSession's server-trust challenge carries).
    ///   - verifyTime: The evaluation instant; `nil` means now.
    public init(
        certificates: [Certificate],
        host: String?,
        port: Int = 443,
        systemAnchors: TrustStore,
        policy: ValidationPolicy? = nil,
        verifyTime: Int64? = nil
    ) {
        self.certificates = certificates
        self.host = host
        self.port = port
        self.policy = policy ?? .sslServer(host: host)
        self.anchorsOnly = false
        self.systemAnchors = systemAnchors
        self.verifyTime = verifyTime
        self.customAnchorStore = .empty
    }

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

    /// The instant evaluations use: ``verifyTime``, else the policy's, else `clock`.
    func evaluationTime(_ clock: TrustClock = .system) -> Int64 {
        verifyTime ?? policy.validationTime ?? clock.now()
    }

    /// Validates the served chain against ``effectiveAnchors`` with ``policy`` at ``verifyTime``
    /// (`SecTrustEvaluateWithError`).
    /// - Parameter trace: Record every path tried, for explanations.
    /// - Returns: The result.
    public func evaluate(trace: Bool = false) -> TrustResult {
        var policy = self.policy
        if let verifyTime { policy.validationTime = verifyTime }
        let anchors = effectiveAnchors
        guard let leaf = certificates.first else {
            return TrustResult(
                result: .failure(ValidationFailure(.invalidCertificate, "the server sent no certificate")),
                trace: [], policy: policy, anchorMode: anchorMode, anchors: anchors)
        }
        let outcome = Verifier(anchors: anchors, policy: policy).validate(
            leaf: leaf, intermediates: Array(certificates.dropFirst()), trace: trace)
        return TrustResult(result: outcome.result, trace: outcome.trace, policy: policy, anchorMode: anchorMode, anchors: anchors)
    }

    /// The trust's certificate chain (`SecTrustCopyCertificateChain`): the validated chain when
    /// the trust validates; otherwise the best chain that can be built, which is the served
    /// certificates followed by the anchor that signed the last of them, if any.
    ///
    /// Apple builds this chain even for an untrusted trust (AFNetworking's public-key mode
    /// enumerates it without evaluating; anchors-features.md §(a)1 step 6 notes that
    /// `SecTrustGetCertificateCount` evaluates lazily). The anchor is appended only when its
    /// key verifies the last served certificate's signature, so a certificate that merely
    /// names a pinned CA as its issuer never brings that CA's key into the chain.
    /// - Parameter evaluation: An evaluation already made of this trust, to avoid repeating it.
    /// - Returns: Leaf first.
    public func certificateChain(after evaluation: TrustResult? = nil) -> [Certificate] {
        let evaluation = evaluation ?? evaluate()
        if let chain = evaluation.chain { return chain.certificates }
        var chain: [Certificate] = []
        for certificate in certificates where !chain.contains(certificate) { chain.append(certificate) }
        guard let last = chain.last, !last.isSelfIssued else { return chain }
        let verifier = OpenSSLSignatureVerifier()
        for anchor in effectiveAnchors.certificates where anchor.subject == last.issuer && !chain.contains(anchor) {
            guard let key = try? verifier.makeKey(anchor.subjectPublicKeyInfo) else { continue }
            if verifier.check(last, signedBy: key).isValid {
                chain.append(anchor)
                break
            }
        }
        return chain
    }
}
