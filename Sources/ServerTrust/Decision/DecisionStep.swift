public import TrustEvaluation

/// One check an evaluator performed, in the order it did it: the typed form of a line of
/// ``DecisionRecord/steps``. `description` is the line `servertrust evaluate --explain` and the
/// record's JSON print.
public indirect enum DecisionStep: Hashable, Sendable, CustomStringConvertible {
    /// The validation policy an evaluation uses (`SecTrustSetPolicies`).
    public enum PolicyChoice: Hashable, Sendable {
        /// The SSL server policy for a host (`SecPolicyCreateSSL(true, host)`).
        case sslServer(host: String)
        /// The SSL server policy without a name because the caller passed a nil domain
        /// (AFNetworking's `SecPolicyCreateSSL(true, NULL)`).
        case sslServerNilDomain
        /// Strict semantics with `validatesDomainName = NO`: the SSL server profile without a name.
        case sslServerWithoutName
        /// The basic X.509 policy (`SecPolicyCreateBasicX509`): no name, no serverAuth EKU.
        case basicX509
    }

    /// Which anchors an evaluator put in force.
    public enum AnchorChoice: Hashable, Sendable {
        /// The pinned certificates only (`SecTrustSetAnchorCertificates`).
        case pinnedCertificates(count: Int)
        /// Strict public-key mode: the pinned certificates and the served certificates that
        /// carry a pinned key.
        case pinnedKeys
        /// Configured anchors added (or, with `only`, replacing the system roots).
        case configured(count: Int, only: Bool)
    }

    /// What a chain evaluation was for.
    public enum EvaluationKind: Hashable, Sendable {
        /// Against the trust's anchors (AFNetworking's `AFServerTrustIsValid`).
        case trustAnchors
        /// Against the pinned certificates as the only anchors.
        case pinnedCertificates
        /// Against the pinned keys as the only anchors (strict public-key mode).
        case pinnedKeys
        /// Alamofire's default validation, with the host when one is given.
        case defaultValidation(host: String?)
        /// `allowsExpiredPinnedCertificates`: again at the instant the chain expired.
        case expiredRetry(at: Int64)
    }

    /// Strict semantics: no domain was given, so the trust's own host is validated.
    case domainFromTrust(String)
    /// Strict semantics: no domain was given and the trust names no host.
    case noHostToValidate
    /// AFNetworking's early rejection of `allowInvalidCertificates` + `validatesDomainName`
    /// without pins.
    case earlyRejection
    /// The validation policy chosen.
    case validationPolicy(PolicyChoice)
    /// Mode `none` with `allowInvalidCertificates`: accepted with nothing evaluated.
    case acceptedWithoutEvaluation
    /// `allowInvalidCertificates` in a pinning mode: the evaluation against the trust's anchors
    /// is skipped.
    case evaluationSkipped
    /// Anchors replaced or added.
    case anchors(AnchorChoice)
    /// The host's policy that applied (``TrustPolicy/resolve(_:at:)``): the pattern of its
    /// rule (`nil`: the policy for hosts no rule covers) and where it was written.
    case hostPolicy(pattern: String?, source: String)
    /// The whole-path checks the host's policy put on every evaluation (revocation, …).
    case pathChecks([String])
    /// What a whole-path check found on the validated path.
    case pathCheck(PathCheckFinding)
    /// The evaluator accepted without validating a path, so the configured whole-path checks
    /// had nothing to run on.
    case pathChecksNotRun([String])
    /// A chain evaluation and its outcome (`nil` failure: it validated).
    case evaluation(EvaluationKind, failure: ValidationFailure?)
    /// Which certificates the pins were compared with, and why those (``ProvenChain``).
    case pinCandidates(ProvenChain.Basis, count: Int)
    /// The pins made a chain evaluation look among the valid paths for one they are on
    /// (``/TrustEvaluation/PathPreference``): whether the validated path is one (`found`), and
    /// the subjects (leaf first) of the other valid paths it saw.
    case pinnedPath(found: Bool, others: [[String]])
    /// The pin set that applies to the host.
    case pinSet(pattern: String, excluded: Bool)
    /// The outcome of the pin check (its text is made when the step is printed).
    case pinCheck(PinCheckResult)
    /// ``DisabledTrustEvaluator``: nothing was checked.
    case nothingChecked
    /// ``ServerTrustManager``: no rule covers the host.
    case noMatchingRule(host: String)
    /// A custom evaluator's `evaluate(_:forHost:)` passed or threw.
    case customEvaluator(String, passed: Bool)
    /// A decision made outside the evaluators (a challenge handler, an unreadable chain).
    case external(String)
    /// A step of one evaluator inside a ``CompositeTrustEvaluator``.
    case nested(evaluator: String, DecisionStep)

    /// The line as printed.
    public var description: String {
        switch self {
        case .domainFromTrust(let host): return "strict: no domain given; validating the trust's host \(host)"
        case .noHostToValidate: return "strict: no domain given and the trust names no host"
        case .earlyRejection: return "early rejection: allowInvalidCertificates and validatesDomainName without pinned certificates"
        case .validationPolicy(let choice):
            switch choice {
            case .sslServer(let host): return "policy: SSL server for \(host)"
            case .sslServerNilDomain: return "policy: SSL server without a host name (nil domain)"
            case .sslServerWithoutName: return "policy: SSL server without a host name (strict: BasicX509 would drop the serverAuth check)"
            case .basicX509: return "policy: basic X.509 (no host name, no serverAuth EKU)"
            }
        case .acceptedWithoutEvaluation: return "mode none with allowInvalidCertificates: accepted without evaluating the chain"
        case .evaluationSkipped: return "allowInvalidCertificates: the evaluation against the trust's anchors is skipped"
        case .anchors(let choice):
            switch choice {
            case .pinnedCertificates(let count):
                return "anchors := the \(count) pinned certificate\(count == 1 ? "" : "s") only (SecTrustSetAnchorCertificates)"
            case .pinnedKeys: return "strict: anchors := the pinned certificates and served certificates with a pinned key"
            case .configured(let count, let only):
                return "anchors: \(count) configured anchor(s) added\(only ? ", system roots not trusted" : "")"
            }
        case .hostPolicy(let pattern, let source):
            return "policy: \(pattern.map { "the rule for \($0)" } ?? "the policy for hosts no rule covers") (\(source))"
        case .pathChecks(let names): return "whole-path checks on every evaluation: \(names.joined(separator: ", "))"
        case .pathCheck(let finding): return finding.description
        case .pathChecksNotRun(let names):
            return "no path was validated, so the whole-path checks (\(names.joined(separator: ", "))) did not run"
        case .evaluation(let kind, let failure):
            let label: String
            switch kind {
            case .trustAnchors: label = "evaluation against the trust's anchors"
            case .pinnedCertificates: label = "evaluation against the pinned certificates"
            case .pinnedKeys: label = "evaluation against the pinned keys"
            case .defaultValidation(let host): label = host.map { "default validation with host \($0)" } ?? "default validation (no host)"
            case .expiredRetry(let instant):
                label = "allowsExpiredPinnedCertificates: evaluation at \(ASN1TimeText.rfc3339(instant)), when the chain expired"
            }
            return "\(label): \(failure.map { "failed — \($0)" } ?? "trusted")"
        case .pinCandidates(let basis, let count):
            switch basis {
            case .validatedPath: return "pins compared with the validated path (\(count) certificates, anchor included)"
            case .leafOnly: return "pins compared with the leaf only, whose key the handshake proves"
            case .signatureChain:
                return "no path was validated: pins compared with the signature chain, the leaf and the certificates that "
                    + "verifiably signed it (\(count) certificate\(count == 1 ? "" : "s"))"
            }
        case .pinnedPath(let found, let others):
            let seen = others.map { $0.joined(separator: " ← ") }.joined(separator: "; ")
            if found {
                return "pins: the validated path is the valid path they are on"
                    + (others.isEmpty ? "" : " (other valid path\(others.count == 1 ? "" : "s") seen: \(seen))")
            }
            return "pins: no valid path found is one they are on; the first is the validated path"
                + (others.isEmpty ? " (no other valid path)" : " (others: \(seen))")
        case .pinSet(let pattern, let excluded): return "pin set: \(pattern)\(excluded ? " (exclusion)" : "")"
        case .pinCheck(let check): return "pin check: \(check.outcome.rawValue) — \(check.detail)"
        case .nothingChecked: return "nothing checked"
        case .noMatchingRule(let host): return "no rule matches \(host)"
        case .customEvaluator(let name, let passed): return "\(name).evaluate: \(passed ? "passed" : "failed")"
        case .external(let text): return text
        case .nested(let evaluator, let step): return "[\(evaluator)] \(step)"
        }
    }
}
