import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

// The evaluation around the rules: the log list's age, the list model's own checks, and what
// the report says.

@Suite("CT evaluation")
struct CTEvaluationTests {

    @Test(
        "a list 70 days old or more stops enforcement with a note, whatever the SCTs",
        arguments: [(69 * LabClock.day, true), (70 * LabClock.day - 1, true), (70 * LabClock.day, false), (400 * LabClock.day, false)])
    func staleList(age: Int64, enforced: Bool) throws {
        let good = try CTTestbed.embedded([CTLogs.alpha, CTLogs.beta])
        let bad = try CTTestbed.embedded([CTLogs.alpha])
        for (subject, compliant) in [(good, true), (bad, false)] {
            let evaluation = try CTTestbed.evaluate(subject, logs: [CTLogs.alpha, CTLogs.beta], policy: .chrome, listTimestamp: CTTestbed.now - age)
            if enforced {
                #expect(evaluation.verdict == (compliant ? .compliant : .nonCompliant))
                #expect(evaluation.notes.isEmpty)
            } else {
                guard case .notEnforced(.staleLogList(let timestamp, let maximum)) = evaluation.verdict else {
                    Issue.record("expected not enforced, got \(evaluation.verdict)")
                    continue
                }
                #expect(timestamp.secondsSince1970 == CTTestbed.now - age)
                #expect(maximum == CTLogList.defaultMaximumAge)
                #expect(evaluation.permitsConnection)
                #expect(evaluation.notes.contains { $0.contains("older than 70 days") })
                // The SCTs and rules are still in the record.
                #expect(evaluation.scts.count == (compliant ? 2 : 1))
                #expect(evaluation.rules.count == 5)
            }
        }
    }

    @Test("the maximum age is the caller's")
    func customMaximumAge() throws {
        let subject = try CTTestbed.embedded([CTLogs.alpha, CTLogs.beta])
        let list = try CTTestbed.list([CTLogs.alpha, CTLogs.beta], timestamp: CTTestbed.now - 8 * LabClock.day)
        let weekly = CertificateTransparency.evaluate(
            leaf: subject.leaf, issuer: subject.issuer, logList: list, policy: .apple, maximumLogListAge: 7 * LabClock.day, at: CTTestbed.now)
        #expect(weekly.verdict == .notEnforced(.staleLogList(listTimestamp: list.timestamp, maximumAge: 7 * LabClock.day)))
        let default70 = CertificateTransparency.evaluate(leaf: subject.leaf, issuer: subject.issuer, logList: list, policy: .apple, at: CTTestbed.now)
        #expect(default70.verdict == .compliant)
    }

    @Test("a certificate without SCTs is non-compliant under both policies, and refused")
    func noSCTs() throws {
        let subject = try CTTestbed.plain()
        for policy in CTPolicy.allCases {
            let evaluation = try CTTestbed.evaluate(subject, logs: [CTLogs.alpha, CTLogs.beta], policy: policy)
            #expect(evaluation.verdict == .nonCompliant)
            #expect(!evaluation.permitsConnection)
            #expect(evaluation.scts.isEmpty)
            #expect(evaluation.rules.contains { !$0.passed })
        }
    }

    @Test("the report lists every SCT by source and log, and every rule with its alternative")
    func report() throws {
        let subject = try CTTestbed.embedded([CTLogs.alpha, CTLogs.beta])
        let evaluation = try CTTestbed.evaluate(
            subject, logs: [CTLogs.alpha, CTLogs.beta, CTLogs.gamma], policy: .chrome, tls: try CTTestbed.delivered([CTLogs.gamma], for: subject),
            ocsp: try CTTestbed.delivered([try CTLogs.epsilon], for: subject))
        #expect(evaluation.scts.map(\.source) == [.embedded, .embedded, .tlsExtension, .ocspResponse])
        #expect(evaluation.scts.map { $0.log?.name } == ["Lab 'Alpha'", "Lab 'Beta'", "Lab 'Gamma'", nil])
        #expect(evaluation.scts.last?.status == .unknownLog)
        let text = evaluation.description
        #expect(text.hasPrefix("CT (chrome): compliant"))
        #expect(text.contains("embedded SCT from Lab 'Alpha'"))
        #expect(text.contains("OCSP response SCT from log "))
        #expect(text.contains("passed [embedded] embedded SCTs from two log operators"))
        #expect(text.contains("FAILED [TLS or OCSP] two TLS or OCSP SCTs"))
    }

    @Test("an embedded SCT without the issuer cannot be checked, and says so")
    func missingIssuer() throws {
        let subject = try CTTestbed.embedded([CTLogs.alpha, CTLogs.beta])
        let evaluation = CertificateTransparency.evaluate(
            leaf: subject.leaf, issuer: nil, logList: try CTTestbed.list([CTLogs.alpha, CTLogs.beta]), policy: .apple, at: CTTestbed.now)
        #expect(evaluation.scts.allSatisfy { $0.status == .issuerUnavailable })
        #expect(evaluation.verdict == .nonCompliant)
    }

    @Test("a list refuses two logs with one key, and a log ID that is not its key's hash")
    func listModelChecks() throws {
        let alpha = try CTTestbed.model(CTLogs.alpha)
        #expect(throws: CTLogListError(.duplicateLog, at: "", "")) {
            try CTLogList(logs: [alpha, alpha], timestamp: ASN1Time(secondsSince1970: 0))
        }
        #expect(throws: CTLogListError(.logIDMismatch, at: "", "")) {
            try CTLog(
                publicKeyInfo: alpha.publicKeyInfo, name: "x", operatorName: "y", state: nil, expectedLogID: try CTLogs.beta.logID)
        }
        // Without a timestamp, the newest state change stands in (the list can only seem older).
        let beta = try CTTestbed.model(try CTLogs.beta.with(state: .qualified, since: CTTestbed.now - 3 * LabClock.day))
        let undated = try CTLogList(logs: [alpha, beta], timestamp: nil)
        #expect(undated.timestampSource == .newestStateChange)
        #expect(undated.timestamp.secondsSince1970 == CTTestbed.now - 3 * LabClock.day)
        #expect(undated.log(id: alpha.logID)?.name == "Lab 'Alpha'")
        #expect(undated.log(id: [UInt8](repeating: 0, count: 32)) == nil)
    }
}
