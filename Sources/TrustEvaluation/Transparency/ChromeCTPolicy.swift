import CertificateParsing

/// The Chrome Certificate Transparency Policy
/// (googlechrome.github.io/CertificateTransparency/ct_policy.html), "For certificates issued
/// on-or-after 15 April 2022", one function per rule. A certificate is compliant by its
/// embedded SCTs or by its SCTs delivered in OCSP or TLS; the policy keeps the two apart
/// ("CT Compliance can no longer be met by a mix of embedded, OCSP, and TLS SCTs",
/// ct-policy@chromium.org, 2020), and so does this code, stricter than Chromium's enforcer,
/// which still lets one TLS SCT plus an embedded one from another operator pass.
///
/// The 2025 requirement of one SCT from an RFC 6962 log (Chrome 134, when static-ct-api logs
/// arrived) was dropped again ("Chrome would continue to accept RFC6962 logs, [...] but no
/// longer specifically require", ct-policy@chromium.org); the Apple policy keeps it.
enum ChromeCTPolicy {
    static func judge(_ input: CTPolicyInput) -> (compliant: Bool, rules: [CTRuleResult]) {
        let admissible = embeddedFromAdmissibleLog(input)
        let count = embeddedCount(input)
        let operators = embeddedOperatorDiversity(input)
        let delivered = deliveredSCTs(input)
        let deliveredOperators = deliveredOperatorDiversity(input)
        let compliant = (admissible.passed && count.passed && operators.passed) || (delivered.passed && deliveredOperators.passed)
        return (compliant, [admissible, count, operators, delivered, deliveredOperators])
    }

    /// Table: "<= 180 days: 2, > 180 days: 3", with the lifetime as Chromium computes it,
    /// notAfter minus notBefore (`cert.valid_expiry() - cert.valid_start() > base::Days(180)`):
    /// a certificate whose notAfter is exactly 180 days after its notBefore needs 2. Apple counts
    /// the same certificate as 181 days (see ``AppleCTPolicy/lifetimeDays(_:)``).
    static func requiredEmbeddedSCTs(_ input: CTPolicyInput) -> (required: Int, lifetimeSeconds: Int64) {
        let lifetime = input.notAfter.secondsSince1970 - input.notBefore.secondsSince1970
        return (lifetime > 180 * 86_400 ? 3 : 2, lifetime)
    }

    /// "Chrome uses the earliest SCT among all SCTs presented to evaluate CT compliance against
    /// CT Log Retired timestamps", taken as Chromium does over SCTs from logs not Retired at the
    /// time of check (so a retired log's own SCT cannot vouch for its timing).
    static func issuanceDate(_ input: CTPolicyInput) -> UInt64? {
        input.valid.filter { $0.log.retirement(at: input.time) == nil }.map(\.sct.timestamp).min()
    }

    /// Embedded SCTs satisfying requirements 1 and 2: from logs "Qualified, Usable, ReadOnly,
    /// or Retired at the time of check", where for a Retired log "an SCT must have been issued
    /// before the Log's Retired timestamp", as must the earliest SCT presented.
    static func countedEmbedded(_ input: CTPolicyInput) -> [CTPolicyInput.Counted] {
        let issued = issuanceDate(input)
        return input.valid.filter { sct in
            guard sct.isEmbedded else { return false }
            if sct.log.isAdmissible(at: input.time) { return true }
            guard let retired = sct.log.retirement(at: input.time), let issued else { return false }
            return sct.sct.timestamp.isBefore(retired) && issued.isBefore(retired)
        }
    }

    /// Embedded 1: "At least one Embedded SCT from a CT Log that was Qualified, Usable, or
    /// ReadOnly at the time of check".
    static func embeddedFromAdmissibleLog(_ input: CTPolicyInput) -> CTRuleResult {
        let count = input.valid.filter { $0.isEmbedded && $0.log.isAdmissible(at: input.time) }.count
        return CTRuleResult(
            rule: .chromeEmbeddedFromAdmissibleLog, passed: count >= 1, detail: "\(count) embedded SCTs from Qualified, Usable or ReadOnly logs")
    }

    /// Embedded 2: "There are Embedded SCTs from at least N distinct CT Logs that were
    /// Qualified, Usable, ReadOnly, or Retired at the time of check".
    static func embeddedCount(_ input: CTPolicyInput) -> CTRuleResult {
        let (required, lifetime) = requiredEmbeddedSCTs(input)
        let logs = CTPolicyInput.distinctLogs(countedEmbedded(input))
        let rest = lifetime % 86_400
        let lifetimeText = "\(lifetime / 86_400) days" + (rest == 0 ? "" : " \(rest) s")
        return CTRuleResult(
            rule: .chromeEmbeddedCount, passed: logs >= required, detail: "\(logs) of \(required) distinct logs required (lifetime \(lifetimeText))")
    }

    /// Embedded 3: "Among the SCTs satisfying requirements 1 and 2, at least two SCTs must be
    /// issued from distinct CT Log Operators", each operator the one at the SCT's time.
    static func embeddedOperatorDiversity(_ input: CTPolicyInput) -> CTRuleResult {
        let operators = CTPolicyInput.distinctOperators(countedEmbedded(input))
        return CTRuleResult(rule: .chromeEmbeddedOperatorDiversity, passed: operators >= 2, detail: "\(operators) of 2 log operators")
    }

    /// SCTs delivered via OCSP or TLS from a log "Qualified, Usable, or ReadOnly at the time of
    /// check" (a Retired log's delivered SCTs never count: they can be refreshed).
    static func deliveredAdmissible(_ input: CTPolicyInput) -> [CTPolicyInput.Counted] {
        input.valid.filter { !$0.isEmbedded && $0.log.isAdmissible(at: input.time) }
    }

    /// OCSP or TLS 1: "At least two SCTs from a CT Log that was Qualified, Usable, or ReadOnly
    /// at the time of check" (two logs: one log's two SCTs are one promise).
    static func deliveredSCTs(_ input: CTPolicyInput) -> CTRuleResult {
        let logs = CTPolicyInput.distinctLogs(deliveredAdmissible(input))
        return CTRuleResult(rule: .chromeDeliveredSCTs, passed: logs >= 2, detail: "\(logs) of 2 distinct logs via TLS or OCSP")
    }

    /// OCSP or TLS 2: "Among the SCTs satisfying requirement 1, at least two SCTs must be issued
    /// from distinct CT Log Operators".
    static func deliveredOperatorDiversity(_ input: CTPolicyInput) -> CTRuleResult {
        let operators = CTPolicyInput.distinctOperators(deliveredAdmissible(input))
        return CTRuleResult(rule: .chromeDeliveredOperatorDiversity, passed: operators >= 2, detail: "\(operators) of 2 log operators")
    }
}
