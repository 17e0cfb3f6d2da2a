public import CertificateParsing

/// The outcome of ``CertificateTransparency`` for one certificate: a verdict, every SCT that
/// was presented (where it came from, which log, valid or why not) and every rule of the
/// policy with whether it passed. Meant for the decision record and `servertrust` output as
/// much as for the decision itself.
public struct CTEvaluation: Hashable, Sendable, CustomStringConvertible {
    /// The decision.
    public enum Verdict: Hashable, Sendable, CustomStringConvertible {
        /// The SCTs satisfy the policy.
        case compliant
        /// They do not; ``CTEvaluation/rules`` says which rule failed.
        case nonCompliant
        /// CT is not enforced for this evaluation; the reason is recorded (never a refusal).
        case notEnforced(NotEnforcedReason)

        /// `compliant`, `non-compliant`, or `not enforced: <reason>`.
        public var description: String {
            switch self {
            case .compliant: return "compliant"
            case .nonCompliant: return "non-compliant"
            case .notEnforced(let reason): return "not enforced: \(reason)"
            }
        }
    }

    /// Why CT was not enforced.
    public enum NotEnforcedReason: Hashable, Sendable, CustomStringConvertible {
        /// The log list is older than the maximum age: logs may have changed state or been
        /// added since, so enforcing could refuse valid certificates (Chrome's CT policy, "CT
        /// Enforcement Timeout": enforcement stops 70 days after the freshest
        /// `log_list_timestamp`).
        case staleLogList(listTimestamp: ASN1Time, maximumAge: Int64)

        /// `log list from <date> is older than <n> days`.
        public var description: String {
            switch self {
            case .staleLogList(let timestamp, let maximumAge):
                return "the log list from \(timestamp.rfc3339) is older than the maximum age of \(maximumAge / 86_400) days"
            }
        }
    }

    /// The policy the SCTs were judged by.
    public let policy: CTPolicy
    /// The decision.
    public let verdict: Verdict
    /// Every SCT presented, embedded first, then TLS, then OCSP, each in the order sent.
    public let scts: [CTSCTResult]
    /// Every rule of the policy, in the policy's order.
    public let rules: [CTRuleResult]
    /// Remarks for people: the stale list, a missing issuer, a list delivery that failed to parse.
    public let notes: [String]

    /// Whether the connection may proceed as far as CT is concerned: compliant, or not enforced.
    public var permitsConnection: Bool {
        if case .nonCompliant = verdict { return false }
        return true
    }

    /// One line per SCT and rule under a verdict line.
    public var description: String {
        var lines = ["CT (\(policy)): \(verdict)"]
        lines += scts.map { "  \($0)" }
        lines += rules.map { "  \($0)" }
        lines += notes.map { "  note: \($0)" }
        return lines.joined(separator: "\n")
    }
}

/// One SCT as the evaluation saw it.
public struct CTSCTResult: Hashable, Sendable, CustomStringConvertible {
    /// How the SCT reached the client (RFC 6962 §3.3).
    public enum Source: String, Hashable, Sendable, CaseIterable {
        /// In the certificate's SCT list extension (over the precertificate).
        case embedded
        /// In the TLS `signed_certificate_timestamp` extension (over the certificate).
        case tlsExtension = "TLS extension"
        /// In a stapled OCSP response's SCT list extension (over the certificate).
        case ocspResponse = "OCSP response"
    }

    /// Where it came from.
    public let source: Source
    /// The SCT, when it could be parsed.
    public let sct: SignedCertificateTimestamp?
    /// The log that issued it, when the list names it.
    public let log: CTLog?
    /// Valid, or why not.
    public let status: CTSCTStatus

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - source: The delivery.
    ///   - sct: The parsed SCT, if any.
    ///   - log: Its log, if known.
    ///   - status: The verification result.
    public init(source: Source, sct: SignedCertificateTimestamp?, log: CTLog?, status: CTSCTStatus) {
        self.source = source
        self.sct = sct
        self.log = log
        self.status = status
    }

    /// `embedded SCT from Google 'Argon2026h1' log at 2026-01-01T00:00:00Z: valid`, with the
    /// log's state when it is not Usable (whether a valid SCT counts depends on it).
    public var description: String {
        guard let sct else { return "\(source.rawValue) SCT: \(status)" }
        var from = log?.name ?? "log \(Base64.encode(sct.logID))"
        if let state = log?.state, state.kind != .usable { from += " (\(state))" }
        return "\(source.rawValue) SCT from \(from) at \(sct.time.rfc3339): \(status)"
    }
}

/// Whether one SCT is valid, and if not, the first reason found.
public enum CTSCTStatus: Hashable, Sendable, CustomStringConvertible {
    /// Well formed, from a listed log, correctly signed, and its times are acceptable.
    case valid
    /// The SCT, or the list it came in, is malformed (RFC 6962 §3.3: skipped).
    case malformed(CTEncodingError)
    /// No log in the list has this log ID.
    case unknownLog
    /// The log's key cannot verify SCTs: not ECDSA P-256 or RSA of at least 2048 bits
    /// (RFC 6962 §2.1.4), or rejected by the signature library.
    case unusableLogKey(String)
    /// The SCT is not signed with SHA-256 and the log key's algorithm (RFC 6962 §2.1.4).
    case unsupportedAlgorithm(hash: TLSHashAlgorithm, signature: TLSSignatureAlgorithm)
    /// The signature does not verify over the entry the SCT should cover.
    case badSignature(SignatureError)
    /// An embedded SCT cannot be checked without the certificate's issuer (the precertificate
    /// entry contains the issuer's key hash).
    case issuerUnavailable
    /// The log entry could not be built from the certificate.
    case unencodableEntry(CTEncodingError)
    /// The SCT is dated after the evaluation time.
    case futureTimestamp
    /// The SCT is dated before the log was accepted (the time it became Qualified).
    case beforeLogAcceptance(ASN1Time)
    /// The certificate's notAfter is outside the log's temporal interval: the log does not
    /// accept this certificate, so its SCT promises nothing.
    case outsideTemporalInterval(CTTemporalInterval)
    /// Not checked: the certificate came with more SCTs to verify than the evaluation checks
    /// (the limit is given); a genuine certificate carries a handful.
    case checkLimitReached(Int)

    /// Whether the SCT is valid.
    public var isValid: Bool { self == .valid }

    /// `valid`, or the reason in a few words.
    public var description: String {
        switch self {
        case .valid: return "valid"
        case .malformed(let error): return "malformed (\(error))"
        case .unknownLog: return "from a log not in the log list"
        case .unusableLogKey(let why): return "the log's key cannot be used (\(why))"
        case .unsupportedAlgorithm(let hash, let signature): return "signed with \(hash)/\(signature), not SHA-256 with the log's key type"
        case .badSignature(let error): return "bad signature (\(error.reason))"
        case .issuerUnavailable: return "embedded SCT, but the issuer certificate is not known"
        case .unencodableEntry(let error): return "the log entry cannot be built (\(error))"
        case .futureTimestamp: return "timestamp in the future"
        case .beforeLogAcceptance(let since): return "issued before the log was accepted (\(since.rfc3339))"
        case .outsideTemporalInterval(let interval): return "certificate expiry outside the log's temporal interval \(interval)"
        case .checkLimitReached(let limit): return "not checked: more than \(limit) SCT signatures to verify"
        }
    }
}

/// One rule of a CT policy and whether it held.
public struct CTRuleResult: Hashable, Sendable, CustomStringConvertible {
    /// The rule.
    public let rule: CTPolicyRule
    /// Whether it held.
    public let passed: Bool
    /// What was counted, e.g. `2 distinct logs, 3 required (lifetime 397 days)`.
    public let detail: String

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - rule: The rule.
    ///   - passed: Whether it held.
    ///   - detail: What was counted.
    public init(rule: CTPolicyRule, passed: Bool, detail: String) {
        self.rule = rule
        self.passed = passed
        self.detail = detail
    }

    /// `passed|FAILED [<alternative>] <rule>: <detail>`.
    public var description: String {
        "\(passed ? "passed" : "FAILED") \(rule.alternative.map { "[\($0.rawValue)] " } ?? "")\(rule.summary): \(detail)"
    }
}
