public import CertificateParsing
import TrustEvaluation

/// Certificate pinning, Alamofire's way (`PinnedCertificatesTrustEvaluator`).
///
/// Order (Alamofire `ServerTrustEvaluation.swift`): no certificates is an error; with
/// `acceptSelfSignedCertificates` the pinned certificates become the only anchors; default
/// validation; host validation (even without default validation, it is a full evaluation with
/// the host); then some certificate of the chain must be byte-equal to a pinned one. The chain
/// is what Alamofire's `trust.af.certificateData` reads (`SecTrustCopyCertificateChain`): the
/// validated path, chosen among the valid paths to carry a pinned certificate when one does, or
/// without any validation the signature chain (``ProvenChain``): a pinned CA certificate the
/// server merely appends never matches, since it did not sign what is below it.
public final class PinnedCertificatesTrustEvaluator: ServerTrustEvaluating {
    /// The pinned certificates.
    public let certificates: [Certificate]
    /// Whether the pinned certificates become the only anchors (so a self-signed or private-CA
    /// server validates).
    public let acceptSelfSignedCertificates: Bool
    /// Whether the chain is validated.
    public let performDefaultValidation: Bool
    /// Whether the host name is validated.
    public let validateHost: Bool
    /// The pinned certificates as anchors, built once.
    private let pinnedAnchors: TrustStore
    private let pinnedDER: Set<[UInt8]>

    /// Creates the evaluator.
    /// - Parameters:
    ///   - certificates: The pinned certificates.
    ///   - acceptSelfSignedCertificates: Make them the only anchors (default `false`).
    ///   - performDefaultValidation: Validate the chain (default `true`).
    ///   - validateHost: Validate the host name (default `true`).
    public init(
        certificates: [Certificate], acceptSelfSignedCertificates: Bool = false, performDefaultValidation: Bool = true,
        validateHost: Bool = true
    ) {
        self.certificates = certificates
        self.acceptSelfSignedCertificates = acceptSelfSignedCertificates
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
        self.pinnedAnchors = TrustStore(certificates, sources: ["pinned certificates"])
        self.pinnedDER = Set(certificates.map(\.derBytes))
    }

    /// Throws unless a pinned certificate is in the chain (and the chain and host validate).
    public func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    /// The decision and its record.
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        var trust = trust
        var recorder = DecisionRecorder(
            evaluator: "PinnedCertificatesTrustEvaluator",
            policy: "acceptSelfSignedCertificates=\(acceptSelfSignedCertificates), performDefaultValidation=\(performDefaultValidation), "
                + "validateHost=\(validateHost), certificates=\(certificates.count)",
            mode: "certificate", trust: trust, host: host)
        guard !certificates.isEmpty else {
            return recorder.reject(TrustEvaluationError(.noCertificatesFound, host: host, "no pinned certificates were given"))
        }
        trust.prefer(pinsOf: self, forHost: host)
        if acceptSelfSignedCertificates {
            trust.setAnchors(pinnedAnchors, only: true)
            recorder.step(.anchors(.pinnedCertificates(count: pinnedAnchors.count)))
        }
        let validation = DefaultValidation(performDefaultValidation: performDefaultValidation, validateHost: validateHost)
        let chain: [Certificate]
        switch validation.provenChain(&trust, host: host, recorder: &recorder) {
        case .failure(let error): return recorder.reject(error)
        case .success(let proven): chain = proven.certificates
        }
        if let index = chain.firstIndex(where: { pinnedDER.contains($0.derBytes) }) {
            recorder.matched(.certificate(chain[index], position: index))
            return recorder.accept()
        }
        recorder.pinEvidence(chain: chain, configured: certificates.map(\.spkiPinText))
        return recorder.reject(TrustEvaluationError(.certificatePinningFailed, host: host, "no certificate of the chain is pinned"))
    }
}

extension PinnedCertificatesTrustEvaluator: PinRequiring {
    func pinRequirements(forHost host: String, at time: Int64) -> [PinRequirement] {
        pinnedDER.isEmpty ? [] : [PinRequirement(kind: .certificates(pinnedDER))]
    }
}
