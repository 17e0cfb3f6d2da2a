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
        /// A certificate in the path is revoked by a supplied CRL (RFC 5280 §6.3).
        case revoked
        /// Revocation checking is required (CRLs were supplied) and the supplied CRLs do not
        /// determine a certificate's status: none is in scope, usable and current for every
        /// revocation reason (RFC 5280 §6.3.3: UNDETERMINED). A hard failure, never accepted.
        case revocationStatusUnknown
        /// RFC 5280 §6.1 certificate-policy processing rejects the path: an explicit policy is
        /// required and no acceptable policy is valid for the whole path.
        case policyViolation
        /// The search budget (signature checks, name-constraint comparisons) ran out: a
        /// denial-of-service shape, never retried.
        case budgetExhausted
        /// Certificate Transparency is required for the host and the leaf's SCTs do not satisfy
        /// the policy (Apple's or Chrome's) with the app's log list: too few valid SCTs, too few
        /// log operators, SCTs from logs the list does not know or no longer trusts
        /// (``CertificateTransparencyCheck``). Only chains that end at a root of the system trust
        /// store are held to it.
        case certificateTransparencyNotCompliant
    }

    /// The kind of rejection.
    public let kind: Kind
    /// Position of the certificate concerned in the path tried (0 = the leaf), if one is.
    public let certificateIndex: Int?
    /// RFC 4514 subject of that certificate.
    public let subject: String?
    /// What exactly was wrong.
    public let detail: String
    /// What the whole-path checks found on the path before it failed one of them (``PathCheck``:
    /// the SCTs and rules of a Certificate Transparency refusal, the CRLs that settled the
    /// certificates before a revoked one); empty for a failure of any other kind.
    public private(set) var findings: [PathCheckFinding] = []

    /// Creates a failure.
    public init(_ kind: Kind, certificateIndex: Int? = nil, subject: String? = nil, _ detail: String) {
        self.kind = kind
        self.certificateIndex = certificateIndex
        self.subject = subject
        self.detail = detail
    }

    func at(_ index: Int, _ certificate: Certificate) -> ValidationFailure {
        var located = ValidationFailure(kind, certificateIndex: index, subject: certificate.subject.rfc4514, detail)
        located.findings = findings
        return located
    }

    /// The same failure with what the whole-path checks found on its path.
    func with(findings: [PathCheckFinding]) -> ValidationFailure {
        var failure = self
        failure.findings = findings
        return failure
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
    /// The §6.1.1 policy inputs the path was validated with.
    let policyInputs: CertificatePolicyInputs
    /// What the whole-path checks found on this path (``PathCheck``), in the order they ran:
    /// empty when none was asked for.
    public let findings: [PathCheckFinding]
    /// How the path was chosen, when a ``PathPreference`` was given (`nil` otherwise: an
    /// unpinned validation carries, and copies, nothing more than before).
    var choice: PathChoice?

    /// How this path was chosen among the valid paths found (``PathPreference``).
    public var selection: Selection { choice?.selection ?? .first }
    /// The other valid paths the search found (each leaf first, anchor last), in the order
    /// found: with a ``PathPreference``, those it did not prefer; empty without one, since the
    /// search then stops at the first valid path.
    public var otherValidPaths: [[Certificate]] { choice?.otherValidPaths ?? [] }

    /// The certificate policies the path is valid for (RFC 5280 §6.1.5 (g), §6.1.6).
    ///
    /// Validation decides with as little of RFC 5280 §6.1 as the decision needs (none at all
    /// when no explicit policy can be required of the path), so the sets are computed here, on
    /// each access, with a fresh work budget of the validation's size; a path whose policies
    /// exceed that budget reports empty sets.
    public var policies: ValidPolicies {
        var budget = Budget()
        if case .valid(let valid) = PolicyGraph.process(certificates, policyInputs, outputs: true, budget: &budget) { return valid }
        return ValidPolicies(authoritiesConstrained: [], userConstrained: [])
    }
    /// The leaf.
    public var leaf: Certificate { certificates[0] }
    /// The trust anchor that ended the path.
    public var anchor: Certificate { certificates[certificates.count - 1] }
}

/// A certificate policy a verified path is valid for, with the qualifiers the leaf gave it.
public struct ValidPolicy: Hashable, Sendable, CustomStringConvertible {
    /// The policy OID, in the trust anchor's policy domain (before any mapping); anyPolicy
    /// (2.5.29.32.0) when the path is valid for any policy.
    public let identifier: ASN1ObjectIdentifier
    /// The policy qualifiers (CPS pointer, user notice) of the leaf's corresponding policies.
    public let qualifiers: [PolicyQualifier]

    /// The policy OID in dotted decimal.
    public var description: String { identifier.dotted }
}

/// The outputs of RFC 5280 §6.1 certificate-policy processing for a verified path.
public struct ValidPolicies: Hashable, Sendable {
    /// The authorities-constrained policy set: the policies every CA of the path allows, as
    /// the valid_policy_tree leaves them before the application's own set is applied. Empty
    /// when the tree is NULL (some certificate has no certificatePolicies).
    public let authoritiesConstrained: [ValidPolicy]
    /// The user-constrained policy set: the authorities-constrained set intersected with
    /// ``CertificatePolicyInputs/initialPolicySet`` (§6.1.5 (g)); what the application may rely on.
    public let userConstrained: [ValidPolicy]
}

/// One candidate path the builder tried, for `--explain` (VerificationDiagnostic in spirit).
public struct PathAttempt: Hashable, Sendable, CustomStringConvertible {
    /// Subjects from the leaf up to the last certificate tried.
    public let subjects: [String]
    /// Why the attempt failed, or `nil` for the accepted path.
    public let failure: ValidationFailure?

    /// The subjects from the leaf up, joined by `←`, then the failure or `trusted`.
    public var description: String {
        subjects.joined(separator: " ← ") + ": " + (failure.map(\.description) ?? "trusted")
    }
}

/// The outcome of ``Verifier/validate(leaf:intermediates:at:checks:trace:)``.
public struct ValidationOutcome: Sendable {
    /// The verified chain, or the rejection.
    public let result: Result<VerifiedChain, ValidationFailure>
    /// Every path tried, when tracing was requested.
    public let trace: [PathAttempt]
    /// Signature checks performed.
    public let signatureChecks: Int
    /// Work spent on RFC 5280 §6.1 policy graphs (nodes, edges and comparisons), bounded by the
    /// verifier's budget.
    public let policyGraphWork: Int

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

/// How a path was chosen among the valid paths found, kept apart from ``VerifiedChain`` so
/// that a chain validated without a preference stays as cheap to copy as before.
final class PathChoice: Hashable, Sendable {
    let selection: VerifiedChain.Selection
    let otherValidPaths: [[Certificate]]

    init(_ selection: VerifiedChain.Selection, otherValidPaths: [[Certificate]]) {
        self.selection = selection
        self.otherValidPaths = otherValidPaths
    }

    static func == (lhs: PathChoice, rhs: PathChoice) -> Bool {
        lhs.selection == rhs.selection && lhs.otherValidPaths == rhs.otherValidPaths
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(selection)
        hasher.combine(otherValidPaths)
    }
}
