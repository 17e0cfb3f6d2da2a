import CertificateParsing

/// Apple's Certificate Transparency policy (support.apple.com/103214), one function per rule:
///
/// > Apple's policy requires at least two SCTs issued from a CT log — once-approved or
/// > currently approved at the time of check — and either: at least two SCTs from currently
/// > approved CT logs with one SCT presented via TLS extension or OCSP Stapling; or at least
/// > one embedded SCT from a currently approved log and at least the number of SCTs from once
/// > or currently approved logs, based on validity period [...]. At least one SCT must be
/// > issued from a log compliant with RFC 6962.
///
/// Our reading where the text is terse (documented, tested): "currently approved" is a log
/// Qualified, Usable or ReadOnly at the time of check (or Retired only later), the states in
/// which Apple's list marks a log as trusted; "once approved" adds a Retired log whose SCT was
/// issued before its retirement, since an SCT a log issued after leaving the program promises
/// nothing; SCTs "from distinct logs" count one per log.
enum AppleCTPolicy {
    static func judge(_ input: CTPolicyInput) -> (compliant: Bool, rules: [CTRuleResult]) {
        let two = twoSCTsFromApprovedLogs(input)
        let delivered = deliveredSCTs(input)
        let embeddedCurrent = embeddedFromCurrentLog(input)
        let embeddedCount = embeddedCount(input)
        let rfc6962 = rfc6962Log(input)
        let compliant = two.passed && rfc6962.passed && (delivered.passed || (embeddedCurrent.passed && embeddedCount.passed))
        return (compliant, [two, delivered, embeddedCurrent, embeddedCount, rfc6962])
    }

    /// 103214: "currently approved" at the time of check.
    static func isCurrentlyApproved(_ sct: CTPolicyInput.Counted, at time: Int64) -> Bool {
        sct.log.isAdmissible(at: time)
    }

    /// 103214: "once-approved or currently approved at the time of check".
    static func isApproved(_ sct: CTPolicyInput.Counted, at time: Int64) -> Bool {
        if sct.log.isAdmissible(at: time) { return true }
        guard let retired = sct.log.retirement(at: time) else { return false }
        return sct.sct.timestamp.isBefore(retired)
    }

    /// 103214, footnote on lifetime: "the period of time from notBefore through notAfter,
    /// inclusive" (RFC 5280 §4.1.2.5), "a day being equal to 86,400 seconds. Any time greater
    /// than this indicates an additional day of validity." So a certificate whose notAfter is
    /// exactly 180 days after its notBefore is valid 180 days and one second: 181 days.
    static func lifetimeDays(_ input: CTPolicyInput) -> Int64 {
        let seconds = input.notAfter.secondsSince1970 - input.notBefore.secondsSince1970 + 1
        return seconds <= 0 ? 0 : (seconds + 86_399) / 86_400
    }

    /// 103214's table: 180 days or less, 2 SCTs from distinct logs with at most 1 per operator
    /// counting; 181 to 398 days, 3 with at most 2 per operator. Longer lifetimes are outside
    /// the table (Apple refuses TLS certificates valid for more than 398 days).
    static func embeddedRequirement(lifetimeDays days: Int64) -> (required: Int, perOperator: Int)? {
        if days <= 180 { return (2, 1) }
        if days <= 398 { return (3, 2) }
        return nil
    }

    /// 103214: "at least two SCTs issued from a CT log — once-approved or currently approved at
    /// the time of check".
    static func twoSCTsFromApprovedLogs(_ input: CTPolicyInput) -> CTRuleResult {
        let logs = CTPolicyInput.distinctLogs(input.valid.filter { isApproved($0, at: input.time) })
        return CTRuleResult(rule: .appleTwoSCTsFromApprovedLogs, passed: logs >= 2, detail: "\(logs) of 2 distinct approved logs")
    }

    /// 103214, first alternative: "at least two SCTs from currently approved CT logs with one
    /// SCT presented via TLS extension or OCSP Stapling".
    static func deliveredSCTs(_ input: CTPolicyInput) -> CTRuleResult {
        let current = input.valid.filter { isCurrentlyApproved($0, at: input.time) }
        let logs = CTPolicyInput.distinctLogs(current)
        let delivered = current.filter { !$0.isEmbedded }.count
        return CTRuleResult(
            rule: .appleDeliveredSCTs, passed: logs >= 2 && delivered >= 1,
            detail: "\(logs) of 2 distinct currently approved logs, \(delivered) SCTs via TLS or OCSP (1 required)")
    }

    /// 103214, second alternative: "at least one embedded SCT from a currently approved log".
    static func embeddedFromCurrentLog(_ input: CTPolicyInput) -> CTRuleResult {
        let count = input.valid.filter { $0.isEmbedded && isCurrentlyApproved($0, at: input.time) }.count
        return CTRuleResult(rule: .appleEmbeddedFromCurrentLog, passed: count >= 1, detail: "\(count) embedded SCTs from currently approved logs")
    }

    /// 103214, second alternative: "at least the number of SCTs from once or currently
    /// approved logs, based on validity period", with the table's "# of SCTs from distinct
    /// logs" and "Maximum # of SCTs per log operator which count towards the SCT requirement".
    static func embeddedCount(_ input: CTPolicyInput) -> CTRuleResult {
        let days = lifetimeDays(input)
        guard let requirement = embeddedRequirement(lifetimeDays: days) else {
            return CTRuleResult(rule: .appleEmbeddedCount, passed: false, detail: "lifetime \(days) days is beyond the 398 days Apple's table covers")
        }
        // One SCT per log (its earliest), so a log cannot count under two operators.
        var perLog: [[UInt8]: CTPolicyInput.Counted] = [:]
        for sct in input.valid where sct.isEmbedded && isApproved(sct, at: input.time) {
            if let seen = perLog[sct.log.logID], seen.sct.timestamp <= sct.sct.timestamp { continue }
            perLog[sct.log.logID] = sct
        }
        var perOperator: [String: Int] = [:]
        for sct in perLog.values { perOperator[sct.operatorName, default: 0] += 1 }
        let counted = perOperator.values.reduce(0) { $0 + min($1, requirement.perOperator) }
        return CTRuleResult(
            rule: .appleEmbeddedCount, passed: counted >= requirement.required,
            detail:
                "\(counted) of \(requirement.required) required (lifetime \(days) days; \(perLog.count) distinct logs, at most \(requirement.perOperator) per operator counting)"
        )
    }

    /// 103214: "At least one SCT must be issued from a log compliant with RFC 6962."
    static func rfc6962Log(_ input: CTPolicyInput) -> CTRuleResult {
        let count = input.valid.filter { $0.log.api == .rfc6962 && isApproved($0, at: input.time) }.count
        return CTRuleResult(rule: .appleRFC6962Log, passed: count >= 1, detail: "\(count) SCTs from approved RFC 6962 logs")
    }
}
