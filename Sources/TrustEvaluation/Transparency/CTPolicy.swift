import CertificateParsing

/// A Certificate Transparency policy: which SCTs a certificate needs, written rule by rule from
/// the public policy texts.
///
/// - ``apple``: Apple's Certificate Transparency policy (support.apple.com/103214), what
///   `SecTrust` enforces on Apple platforms.
/// - ``chrome``: the Chrome Certificate Transparency Policy
///   (googlechrome.github.io/CertificateTransparency/ct_policy.html), for certificates issued
///   on or after 15 April 2022 (no certificate issued before can still be valid).
///
/// Each rule is one function in `AppleCTPolicy.swift` or `ChromeCTPolicy.swift` and one
/// ``CTPolicyRule`` in the report. Only valid SCTs (``CTSCTStatus/valid``) count.
public enum CTPolicy: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Apple's policy.
    case apple
    /// Chrome's policy.
    case chrome

    /// The rules, in the order they are reported.
    public var rules: [CTPolicyRule] { CTPolicyRule.allCases.filter { $0.policy == self } }

    /// `apple` or `chrome`.
    public var description: String { rawValue }

    /// Applies every rule; the verdict combines them as the policy text does.
    func judge(_ input: CTPolicyInput) -> (compliant: Bool, rules: [CTRuleResult]) {
        switch self {
        case .apple: return AppleCTPolicy.judge(input)
        case .chrome: return ChromeCTPolicy.judge(input)
        }
    }
}

/// One rule of ``CTPolicy/apple`` or ``CTPolicy/chrome``.
public enum CTPolicyRule: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Apple: at least two SCTs from logs once or currently approved at the time of check.
    case appleTwoSCTsFromApprovedLogs = "apple.two-scts"
    /// Apple, first alternative: at least two SCTs from currently approved logs, at least one
    /// of them delivered in the TLS extension or a stapled OCSP response.
    case appleDeliveredSCTs = "apple.tls-or-ocsp"
    /// Apple, second alternative (a): an embedded SCT from a currently approved log.
    case appleEmbeddedFromCurrentLog = "apple.embedded-current-log"
    /// Apple, second alternative (b): embedded SCTs from distinct once or currently approved
    /// logs, as many as the certificate lifetime requires, with at most so many per operator.
    case appleEmbeddedCount = "apple.embedded-count"
    /// Apple: at least one SCT from an RFC 6962 log.
    case appleRFC6962Log = "apple.rfc6962-log"
    /// Chrome, embedded (1): an embedded SCT from a log Qualified, Usable or ReadOnly at the
    /// time of check.
    case chromeEmbeddedFromAdmissibleLog = "chrome.embedded-admissible-log"
    /// Chrome, embedded (2): embedded SCTs from N distinct logs (N by lifetime).
    case chromeEmbeddedCount = "chrome.embedded-count"
    /// Chrome, embedded (3): those SCTs come from at least two log operators.
    case chromeEmbeddedOperatorDiversity = "chrome.embedded-operators"
    /// Chrome, OCSP or TLS (1): two SCTs delivered in the TLS extension or OCSP from logs
    /// Qualified, Usable or ReadOnly at the time of check.
    case chromeDeliveredSCTs = "chrome.tls-or-ocsp"
    /// Chrome, OCSP or TLS (2): those SCTs come from at least two log operators.
    case chromeDeliveredOperatorDiversity = "chrome.tls-or-ocsp-operators"

    /// Which of a policy's alternative ways to comply a rule belongs to.
    public enum Alternative: String, Hashable, Sendable {
        /// Compliance by embedded SCTs.
        case embedded
        /// Compliance by SCTs delivered in the TLS extension or a stapled OCSP response (Apple:
        /// at least one of them delivered so).
        case delivered = "TLS or OCSP"
    }

    /// The policy the rule belongs to.
    public var policy: CTPolicy { rawValue.hasPrefix("apple.") ? .apple : .chrome }

    /// The alternative the rule belongs to, or `nil` for a rule every compliant certificate meets.
    public var alternative: Alternative? {
        switch self {
        case .appleTwoSCTsFromApprovedLogs, .appleRFC6962Log: return nil
        case .appleDeliveredSCTs, .chromeDeliveredSCTs, .chromeDeliveredOperatorDiversity: return .delivered
        case .appleEmbeddedFromCurrentLog, .appleEmbeddedCount, .chromeEmbeddedFromAdmissibleLog, .chromeEmbeddedCount,
            .chromeEmbeddedOperatorDiversity:
            return .embedded
        }
    }

    /// The rule in a few words.
    public var summary: String {
        switch self {
        case .appleTwoSCTsFromApprovedLogs: return "two SCTs from once or currently approved logs"
        case .appleDeliveredSCTs: return "two SCTs from currently approved logs, one via TLS or OCSP"
        case .appleEmbeddedFromCurrentLog: return "an embedded SCT from a currently approved log"
        case .appleEmbeddedCount: return "embedded SCTs from distinct logs by lifetime, capped per operator"
        case .appleRFC6962Log: return "an SCT from an RFC 6962 log"
        case .chromeEmbeddedFromAdmissibleLog: return "an embedded SCT from a Qualified, Usable or ReadOnly log"
        case .chromeEmbeddedCount: return "embedded SCTs from distinct logs by lifetime"
        case .chromeEmbeddedOperatorDiversity: return "embedded SCTs from two log operators"
        case .chromeDeliveredSCTs: return "two TLS or OCSP SCTs from Qualified, Usable or ReadOnly logs"
        case .chromeDeliveredOperatorDiversity: return "TLS or OCSP SCTs from two log operators"
        }
    }

    /// Where the rule is written.
    public var source: String {
        switch policy {
        case .apple: return "Apple's Certificate Transparency policy, support.apple.com/103214"
        case .chrome:
            return "Chrome Certificate Transparency Policy (certificates issued on or after 15 April 2022), "
                + "googlechrome.github.io/CertificateTransparency/ct_policy.html"
        }
    }

    /// The rule's identifier, e.g. `apple.embedded-count`.
    public var description: String { rawValue }
}

/// What the rules read: the certificate's validity, the time of check and the valid SCTs.
struct CTPolicyInput {
    /// A valid SCT with its log.
    struct Counted {
        let source: CTSCTResult.Source
        let sct: SignedCertificateTimestamp
        let log: CTLog

        /// The operator when the SCT was issued (Chrome's CT policy, `previous_operators`).
        var operatorName: String { log.operatorName(atMilliseconds: sct.timestamp) }
        var isEmbedded: Bool { source == .embedded }
    }

    let valid: [Counted]
    let notBefore: ASN1Time
    let notAfter: ASN1Time
    /// The time of check, seconds since 1970.
    let time: Int64

    /// The number of distinct logs among `scts`.
    static func distinctLogs(_ scts: [Counted]) -> Int { Set(scts.map(\.log.logID)).count }
    /// The number of distinct operators among `scts`.
    static func distinctOperators(_ scts: [Counted]) -> Int { Set(scts.map(\.operatorName)).count }
}

extension CTLog {
    /// Qualified, Usable or ReadOnly at `time`, or Retired only after `time`: "currently
    /// approved" (Apple) and "Qualified, Usable, or ReadOnly at the time of check" (Chrome).
    /// Pending, Rejected, unrecognized and missing states never count; Chrome's compiled list
    /// leaves them out altogether.
    func isAdmissible(at time: Int64) -> Bool {
        guard let state else { return false }
        switch state.kind {
        case .qualified, .usable, .readOnly: return true
        case .retired: return state.since.secondsSince1970 > time
        case .pending, .rejected, .unrecognized: return false
        }
    }

    /// The retirement instant when the log is Retired at `time`.
    func retirement(at time: Int64) -> ASN1Time? {
        guard let state, state.kind == .retired, state.since.secondsSince1970 <= time else { return nil }
        return state.since
    }
}

extension UInt64 {
    /// Whether this SCT timestamp (milliseconds) is before `time` (seconds).
    func isBefore(_ time: ASN1Time) -> Bool {
        let seconds = time.secondsSince1970
        guard seconds > 0 else { return false }
        let (limit, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1000)
        return overflow || self < limit
    }
}
