public import CertificateParsing

/// A check that needs a whole path: the one hook for whole-path checks.
///
/// The ``Verifier`` runs every check it is given on each candidate path that reached a trust
/// anchor and passed every rule of RFC 5280 §6.1, before it accepts that path. Revocation from
/// CRLs (``CRLCheck``, RFC 5280 §6.3) is one; Certificate Transparency and fetched revocation
/// plug in the same way, so adding such a check touches the check itself and the policy that
/// asks for it, not the path builder or the evaluators above it (swift-certificates keeps chain
/// building apart from its policies in the same way: `VerifierPolicy`).
///
/// A failing check makes the search try the next candidate path, as any §6.1 failure does: a
/// server with two valid paths (a cross-signed root, an alternate intermediate) is accepted when
/// one of them passes every check. A check that runs out of the validation's budget
/// (``PathCheckContext/spendSignatureCheck()``) ends the whole validation.
public protocol PathCheck: Sendable {
    /// The check's name in decision records (`CRL`, `Certificate Transparency`).
    var name: String { get }

    /// Judges a complete path.
    /// - Parameters:
    ///   - path: The candidate path, leaf first, trust anchor last.
    ///   - context: The validation's instant, policy, budget and signature verifier.
    /// - Returns: Passed or failed, with what the check found for the decision record.
    func check<Verification: SignatureVerifier>(_ path: CandidatePath, context: inout PathCheckContext<Verification>) -> PathCheckResult
}

/// A path that reached a trust anchor and passed RFC 5280 §6.1, handed to each ``PathCheck``.
public struct CandidatePath: Sendable {
    /// Leaf first, trust anchor last.
    public let certificates: [Certificate]
    /// Where each certificate came from (`nil` for the leaf): an anchor of the store or an
    /// intermediate the peer sent, by index.
    let sources: [Candidate?]

    /// The leaf.
    public var leaf: Certificate { certificates[0] }
    /// The trust anchor that ends the path.
    public var anchor: Certificate { certificates[certificates.count - 1] }
}

/// What a ``PathCheck`` may use: the validation's instant, policy and peer-sent certificates,
/// its signature verifier, and its work budget, which the check shares.
public struct PathCheckContext<Verification: SignatureVerifier> {
    /// The validation's state; a check works on it in place and hands it back.
    var search: Search<Verification>

    /// The validation instant, seconds since 1970 (read once per decision from its
    /// ``TrustClock``).
    public var time: Int64 { search.time }
    /// The policy the path was validated under.
    public var policy: ValidationPolicy { search.verifier.policy }
    /// The certificates the peer sent besides the leaf, in the order sent.
    public var intermediates: [Certificate] { search.intermediates }
    /// The signature verifier of the validation: a check verifies signatures through it (and
    /// so through whatever it remembers or counts), never through a verifier of its own.
    public var signatureVerifier: Verification { search.verifier.signatureVerifier }

    /// Takes one signature check from the validation's budget.
    /// - Returns: `false` when the budget is spent: the check must then fail with
    ///   ``PathCheckResult/budgetExhausted``.
    public mutating func spendSignatureCheck() -> Bool { search.budget.spendSignatureCheck() }
}

/// One thing a ``PathCheck`` found, as a decision record shows it.
public struct PathCheckFinding: Hashable, Sendable, CustomStringConvertible {
    /// What the finding means for the path.
    public enum Outcome: String, Hashable, Sendable {
        /// The check is satisfied for this certificate or rule.
        case passed
        /// The check fails the path.
        case failed
        /// Accepted with a remark: an exemption, a status that could not be established
        /// under a policy that allows it, or a violation the policy only reports
        /// (``PathCheckFinding/reportedFailure``).
        case noted
    }

    /// The check that found it (``PathCheck/name``).
    public let check: String
    /// The certificate it concerns (0 = the leaf), if one.
    public let certificateIndex: Int?
    /// That certificate's RFC 4514 subject.
    public let subject: String?
    /// Passed, failed or noted.
    public let outcome: Outcome
    /// What exactly, for people.
    public let detail: String
    /// What kind of finding it is, for programs (``Code/revocationStatusUnknown``,
    /// ``Code/shortLivedExemption``, …), when the check gives one: a monitor matches on this,
    /// never on ``detail``.
    public let code: Code?

    /// A finding's kind, for programs: a stable dotted name (`revocation.statusUnknown`). Each
    /// check declares its own codes as static members.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The dotted name.
        public let rawValue: String
        /// Creates a code.
        /// - Parameter rawValue: The dotted name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The dotted name.
        public var description: String { rawValue }
    }
    /// The failure the check would have refused the path with, had its policy enforced it: a
    /// violation that the policy only reports (Certificate Transparency in `report` mode), with
    /// ``Outcome/noted``. The path is accepted; the decision lists these findings so that the
    /// violation can be reported (an HTTPS session's event monitors are told). `nil` for every
    /// other finding.
    public let reportedFailure: ValidationFailure?

    /// Creates a finding.
    /// - Parameters:
    ///   - check: The check's name.
    ///   - outcome: Passed, failed or noted.
    ///   - certificateIndex: The certificate concerned (0 = the leaf), if one.
    ///   - certificate: That certificate, for its subject.
    ///   - detail: What exactly.
    ///   - code: What kind of finding it is, for programs.
    public init(check: String, _ outcome: Outcome, certificateIndex: Int? = nil, certificate: Certificate? = nil, _ detail: String, code: Code? = nil) {
        self.init(check: check, outcome, certificateIndex: certificateIndex, certificate: certificate, detail, code: code, reporting: nil)
    }

    /// Creates a finding that reports a violation its policy does not enforce (``reportedFailure``):
    /// the outcome is ``Outcome/noted``.
    /// - Parameters:
    ///   - check: The check's name.
    ///   - failure: The failure an enforcing policy would have refused the path with.
    ///   - certificateIndex: The certificate concerned (0 = the leaf), if one.
    ///   - certificate: That certificate, for its subject.
    ///   - detail: What exactly.
    ///   - code: What kind of finding it is, for programs.
    public init(
        check: String, reporting failure: ValidationFailure, certificateIndex: Int? = nil, certificate: Certificate? = nil, _ detail: String,
        code: Code? = nil
    ) {
        self.init(check: check, .noted, certificateIndex: certificateIndex, certificate: certificate, detail, code: code, reporting: failure)
    }

    private init(
        check: String, _ outcome: Outcome, certificateIndex: Int?, certificate: Certificate?, _ detail: String, code: Code?,
        reporting: ValidationFailure?
    ) {
        self.check = check
        self.outcome = outcome
        self.certificateIndex = certificateIndex
        self.subject = certificate?.subject.rfc4514
        self.detail = detail
        self.code = code
        self.reportedFailure = reporting
    }

    /// `CRL: passed: not revoked … (certificate 0 "CN=…")`, one line.
    public var description: String {
        var text = "\(check): \(outcome.rawValue): \(detail)"
        if let certificateIndex {
            text += " (certificate \(certificateIndex)"
            if let subject { text += " \"\(subject)\"" }
            text += ")"
        }
        return text
    }
}

/// A ``PathCheck``'s verdict on one path and what it found.
public struct PathCheckResult: Hashable, Sendable {
    /// Why the path fails the check, or `nil` when it passes.
    public let failure: ValidationFailure?
    /// What the check found, in order.
    public let findings: [PathCheckFinding]

    /// The path passes.
    /// - Parameter findings: What the check found.
    /// - Returns: The result.
    public static func passed(_ findings: [PathCheckFinding]) -> PathCheckResult {
        PathCheckResult(failure: nil, findings: findings)
    }

    /// The path fails.
    /// - Parameters:
    ///   - failure: Why, naming the certificate concerned.
    ///   - findings: What the check found.
    /// - Returns: The result.
    public static func failed(_ failure: ValidationFailure, _ findings: [PathCheckFinding] = []) -> PathCheckResult {
        PathCheckResult(failure: failure, findings: findings)
    }

    /// The validation's budget ran out during the check: the whole validation stops.
    public static var budgetExhausted: PathCheckResult { PathCheckResult(failure: Budget.exhaustedFailure, findings: []) }
}
