public import CertificateParsing

/// Why a chain was rejected: a machine-readable kind (Go's `InvalidReason`), the certificate
/// concerned, and a detail for people.
public struct ValidationFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of rejection.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// The validation time is after notAfter (RFC 5280 §6.1.3 (a)(2)).
        case expired
        /// The validation time is before notBefore.
        case notYetValid
        /// The leaf is not valid for the requested host or IP (RFC 6125 §6).
        case hostnameMismatch
        /// No path reaches a trust anchor (unknown issuer, or every candidate failed).
        case untrustedRoot
        /// An issuer's key does not verify the signature.
        case badSignature
        /// A CA's pathLenConstraint is exceeded (RFC 5280 §4.2.1.9).
        case pathLengthExceeded
        /// The path is longer than the policy's maximum number of intermediates.
        case chainTooLong
        /// An issuer is not a CA (basicConstraints absent, not critical, or cA false).
        case notCertificateAuthority
        /// keyUsage forbids the use (no keyCertSign on a CA, keyCertSign on a leaf, a required bit missing).
        case keyUsageNotAllowed
        /// extendedKeyUsage does not allow the purpose (RFC 5280 §4.2.1.12).
        case extendedKeyUsageNotAllowed
        /// A name in the chain violates a CA's name constraints (RFC 5280 §4.2.1.10).
        case nameConstraintViolation
        /// A critical extension this verifier does not process (RFC 5280 §4.2).
        case unhandledCriticalExtension
        /// An extension is present where the profile forbids it, absent where it requires it,
        /// or has the wrong criticality or shape.
        case extensionProfileViolation
        /// The signature algorithm is not allowed by the policy (e.g. SHA-1, MD5).
        case algorithmNotAllowed
        /// The key is too weak or of a type the policy does not allow.
        case weakKey
        /// The certificate breaks a basic profile rule: version, serial, empty issuer,
        /// validity encoding (RFC 5280 §4.1.2).
        case invalidCertificate
        /// The leaf is a CA certificate where an end-entity is required.
        case leafIsCertificateAuthority
        /// A certificate in the path is revoked by a supplied CRL, or its status is unknown.
        case revoked
        /// The search budget (signature checks, name-constraint comparisons) ran out: a
        /// denial-of-service shape, never retried.
        case budgetExhausted
    }

    /// The kind of rejection.
    public let kind: Kind
    /// Position of the certificate concerned in the path tried (0 = the leaf), if one is.
    public let certificateIndex: Int?
    /// RFC 4514 subject of that certificate.
    public let subject: String?
    /// What exactly was wrong.
    public let detail: String

    /// Creates a failure.
    public init(_ kind: Kind, certificateIndex: Int? = nil, subject: String? = nil, _ detail: String) {
        self.kind = kind
        self.certificateIndex = certificateIndex
        self.subject = subject
        self.detail = detail
    }

    func at(_ index: Int, _ certificate: Certificate) -> ValidationFailure {
        ValidationFailure(kind, certificateIndex: index, subject: certificate.subject.rfc4514, detail)
    }

    /// `kind: detail (certificate N "subject")`, one line.
    public var description: String {
        var text = "\(kind.rawValue): \(detail)"
        if let certificateIndex {
            text += " (certificate \(certificateIndex)"
            if let subject { text += " \"\(subject)\"" }
            text += ")"
        }
        return text
    }
}

/// A chain that passed validation: leaf first, trust anchor last.
public struct VerifiedChain: Hashable, Sendable {
    /// Leaf, intermediates, anchor.
    public let certificates: [Certificate]
    /// The leaf.
    public var leaf: Certificate { certificates[0] }
    /// The trust anchor that ended the path.
    public var anchor: Certificate { certificates[certificates.count - 1] }
}

/// One candidate path the builder tried, for `--explain` (VerificationDiagnostic in spirit).
public struct PathAttempt: Hashable, Sendable, CustomStringConvertible {
    /// Subjects from the leaf up to the last certificate tried.
    public let subjects: [String]
    /// Why the attempt failed, or `nil` for the accepted path.
    public let failure: ValidationFailure?

    public var description: String {
        subjects.joined(separator: " ← ") + ": " + (failure.map(\.description) ?? "trusted")
    }
}

/// The outcome of ``Verifier/validate(leaf:intermediates:)``.
public struct ValidationOutcome: Sendable {
    /// The verified chain, or the rejection.
    public let result: Result<VerifiedChain, ValidationFailure>
    /// Every path tried, when tracing was requested.
    public let trace: [PathAttempt]
    /// Signature checks performed.
    public let signatureChecks: Int

    /// Whether the chain is trusted.
    public var isTrusted: Bool {
        if case .success = result { return true }
        return false
    }

    /// The verified chain, if trusted.
    public var chain: VerifiedChain? { try? result.get() }

    /// The failure, if rejected.
    public var failure: ValidationFailure? {
        if case .failure(let failure) = result { return failure }
        return nil
    }
}
