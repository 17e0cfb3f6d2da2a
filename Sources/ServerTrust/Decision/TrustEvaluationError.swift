public import TrustEvaluation

/// Why a server's trust was refused: a machine-readable ``Kind``, the host concerned, a
/// one-line detail, and the chain-validation failure underneath when there is one.
///
/// Modelled on Alamofire's `AFError.ServerTrustFailureReason` (AFError.swift): each
/// failure carries its evidence. The full evidence of a pin failure (the served chain's pins
/// beside the configured ones) is in the ``DecisionRecord`` of the same decision.
public struct TrustEvaluationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of refusal.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// ``ServerTrustManager`` has no evaluator for the host and `allHostsMustBeEvaluated`
        /// is set (Alamofire's `.noRequiredEvaluator(host:)`): unknown hosts fail closed.
        case noRequiredEvaluator
        /// AFNetworking's early rejection: `allowInvalidCertificates` and `validatesDomainName`
        /// without pinning mode or without pinned certificates (AFSecurityPolicy.m, first
        /// statement of `evaluateServerTrust:forDomain:`).
        case allowInvalidCertificatesRequiresPinning
        /// Strict semantics only: the domain name must be validated but neither the caller nor
        /// the trust names a host.
        case noHostToValidate
        /// The peer sent no certificate.
        case emptyChain
        /// A served certificate could not be parsed: it is never trusted.
        case malformedCertificate
        /// The chain did not validate (untrusted root, expired, bad signature, …).
        case chainValidationFailed
        /// The chain validated except for the host name (RFC 6125).
        case hostValidationFailed
        /// Certificate pinning: no served or evaluated certificate is one of the pinned ones,
        /// or the chain does not reach a pinned certificate.
        case certificatePinningFailed
        /// Public-key pinning: no key along the chain is a pinned key.
        case publicKeyPinningFailed
        /// SPKI-hash pinning: no pin of the host's pin set matches (in enforcing mode).
        case spkiPinningFailed
        /// A negative pin (a key that must never appear) matched a certificate of the chain.
        case negativePinMatched
        /// A pinned-certificates evaluator was given no certificates.
        case noCertificatesFound
        /// A public-keys evaluator was given no keys.
        case noPublicKeysFound
        /// A custom evaluator failed, or a challenge handler refused.
        case customEvaluationFailed
    }

    /// The kind of refusal.
    public let kind: Kind
    /// The host the evaluation was for, if known.
    public let host: String?
    /// What exactly was wrong, one line.
    public let detail: String
    /// The chain-validation failure underneath, when the refusal comes from path validation.
    public let validationFailure: ValidationFailure?

    /// Creates an error.
    /// - Parameters:
    ///   - kind: The kind of refusal.
    ///   - host: The host concerned.
    ///   - detail: One line saying what was wrong.
    ///   - validationFailure: The path-validation failure underneath, if any.
    public init(_ kind: Kind, host: String?, _ detail: String, validationFailure: ValidationFailure? = nil) {
        self.kind = kind
        self.host = host
        self.detail = detail
        self.validationFailure = validationFailure
    }

    /// `kind (host H): detail`, one line.
    public var description: String {
        "\(kind.rawValue)\(host.map { " (host \($0))" } ?? ""): \(detail)"
    }

    /// Maps a path-validation failure to a refusal: a host-name mismatch is
    /// ``Kind/hostValidationFailed``, anything else `otherwise`.
    static func validation(
        _ failure: ValidationFailure, host: String?, otherwise: Kind = .chainValidationFailed, context: String = ""
    ) -> TrustEvaluationError {
        let kind: Kind = failure.kind == .hostnameMismatch ? .hostValidationFailed : otherwise
        return TrustEvaluationError(kind, host: host, context + failure.description, validationFailure: failure)
    }
}
