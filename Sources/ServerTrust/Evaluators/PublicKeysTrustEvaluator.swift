public import CertificateParsing

/// Public-key pinning, Alamofire's way (`PublicKeysTrustEvaluator`): no keys is an error;
/// default and host validation; then some key of the chain must be a pinned key (SPKI bytes
/// compared exactly). The chain is what Alamofire's `trust.af.publicKeys` reads
/// (`SecTrustCopyCertificateChain`): the validated path, chosen among the valid paths to carry
/// a pinned key when one does, or without any validation the signature chain, the leaf and the
/// certificates that verifiably signed it (``ProvenChain``).
public final class PublicKeysTrustEvaluator: ServerTrustEvaluating {
    /// The pinned keys (SubjectPublicKeyInfo DER).
    public let keys: [[UInt8]]
    /// Whether the chain is validated.
    public let performDefaultValidation: Bool
    /// Whether the host name is validated.
    public let validateHost: Bool
    private let pinned: Set<[UInt8]>

    /// Creates the evaluator from SubjectPublicKeyInfo DER encodings.
    /// - Parameters:
    ///   - keys: The pinned keys.
    ///   - performDefaultValidation: Validate the chain (default `true`).
    ///   - validateHost: Validate the host name (default `true`).
    public init(keys: [[UInt8]], performDefaultValidation: Bool = true, validateHost: Bool = true) {
        self.keys = keys
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
        self.pinned = Set(keys)
    }

    /// Creates the evaluator with the keys of `certificates`.
    /// - Parameters:
    ///   - certificates: Certificates whose keys are pinned.
    ///   - performDefaultValidation: Validate the chain (default `true`).
    ///   - validateHost: Validate the host name (default `true`).
    public convenience init(certificates: [Certificate], performDefaultValidation: Bool = true, validateHost: Bool = true) {
        self.init(
            keys: certificates.map { Array($0.subjectPublicKeyInfo.derBytes) }, performDefaultValidation: performDefaultValidation,
            validateHost: validateHost)
    }

    /// Throws unless a pinned key is in the chain (and the chain and host validate).
    public func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    /// The decision and its record.
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        var trust = trust
        var recorder = DecisionRecorder(
            evaluator: "PublicKeysTrustEvaluator",
            policy: "performDefaultValidation=\(performDefaultValidation), validateHost=\(validateHost), keys=\(keys.count)",
            mode: "publicKey", trust: trust, host: host)
        guard !keys.isEmpty else {
            return recorder.reject(TrustEvaluationError(.noPublicKeysFound, host: host, "no pinned public keys were given"))
        }
        trust.prefer(pinsOf: self, forHost: host)
        let validation = DefaultValidation(performDefaultValidation: performDefaultValidation, validateHost: validateHost)
        let chain: [Certificate]
        switch validation.provenChain(&trust, host: host, recorder: &recorder) {
        case .failure(let error): return recorder.reject(error)
        case .success(let proven): chain = proven.certificates
        }
        if let index = chain.firstIndex(where: { pinned.contains(Array($0.subjectPublicKeyInfo.derBytes)) }) {
            recorder.matched(.publicKey(chain[index], position: index, matches: nil))
            return recorder.accept()
        }
        recorder.pinEvidence(chain: chain, configured: keys.map { "sha256/" + Base64.encode(SHA256.hash($0)) })
        return recorder.reject(TrustEvaluationError(.publicKeyPinningFailed, host: host, "no key of the chain is pinned"))
    }
}

extension PublicKeysTrustEvaluator: PinRequiring {
    func pinRequirements(forHost host: String, at time: Int64) -> [PinRequirement] {
        pinned.isEmpty ? [] : [PinRequirement(kind: .keys(pinned))]
    }
}
