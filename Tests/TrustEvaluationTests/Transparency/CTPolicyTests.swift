import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

// The Apple and Chrome policies, table by table: lifetime buckets (with the 180-day boundary
// the two policies count differently), operators, deliveries, log states and the RFC 6962 rule.
// Every row issues a real certificate with real SCTs from Lab logs and evaluates it at
// LabClock.reference; the leaf's notBefore is ten days earlier and its SCTs one second after it.

/// The Lab logs by name: A runs alpha and delta, B runs beta and epsilon, C runs gamma (RSA)
/// and tiled (static-ct-api); tiledB is a static-ct-api log of B.
enum LogRef: String, Sendable, CaseIterable {
    case alpha, beta, gamma, delta, epsilon, tiled, tiledB

    var log: LabCTLog {
        get throws {
            switch self {
            case .alpha: return try CTLogs.alpha
            case .beta: return try CTLogs.beta
            case .gamma: return try CTLogs.gamma
            case .delta: return try CTLogs.delta
            case .epsilon: return try CTLogs.epsilon
            case .tiled: return try CTLogs.tiled
            case .tiledB: return try CTLogs.tiledB
            }
        }
    }
}

/// A change to one log's list entry.
struct LogChange: Sendable {
    let log: LogRef
    let state: LabCTLog.State?
    /// Seconds relative to LabClock.reference.
    let since: Int64
    /// A previous operator that ran the log until `since`.
    let previousOperator: String?

    static func state(_ log: LogRef, _ state: LabCTLog.State, at since: Int64) -> LogChange {
        LogChange(log: log, state: state, since: since, previousOperator: nil)
    }

    static func previousOperator(_ log: LogRef, _ name: String, until since: Int64) -> LogChange {
        LogChange(log: log, state: nil, since: since, previousOperator: name)
    }
}

struct PolicyCase: Sendable, CustomTestStringConvertible {
    let name: String
    var lifetime: Int64 = 90 * LabClock.day
    var embedded: [LogRef] = []
    var tls: [LogRef] = []
    var ocsp: [LogRef] = []
    var changes: [LogChange] = []
    /// The embedded SCTs' time, relative to LabClock.reference (default: notBefore + 1 s).
    var embeddedAt: Int64?
    let apple: Bool
    let chrome: Bool
    /// Rules that must be reported failed (the others of each policy may pass or fail).
    var appleFails: Set<CTPolicyRule> = []
    var chromeFails: Set<CTPolicyRule> = []

    var testDescription: String { "\(name): apple \(apple ? "✓" : "✗"), chrome \(chrome ? "✓" : "✗")" }

    func evaluate(_ policy: CTPolicy) throws -> CTEvaluation {
        let notBefore = LabClock.reference - 10 * LabClock.day
        let spec = CTTestbed.spec(notBefore: notBefore, lifetime: lifetime)
        let embeddedLogs = try embedded.map { try $0.log }
        let timestamp = embeddedAt.map { UInt64(LabClock.reference + $0) * 1000 }
        let subject = embedded.isEmpty ? try CTTestbed.plain(spec: spec) : try CTTestbed.embedded(embeddedLogs, spec: spec, timestamp: timestamp)
        let tlsList = tls.isEmpty ? nil : try CTTestbed.delivered(try tls.map { try $0.log }, for: subject)
        let ocspList = ocsp.isEmpty ? nil : try CTTestbed.delivered(try ocsp.map { try $0.log }, for: subject)
        var listed: [LabCTLog] = []
        for reference in LogRef.allCases {
            var log = try reference.log
            for change in changes where change.log == reference {
                if let state = change.state {
                    log = log.with(state: state, since: LabClock.reference + change.since)
                }
                if let name = change.previousOperator {
                    log.previousOperators.append(.init(name: name, endTime: LabClock.reference + change.since))
                }
            }
            listed.append(log)
        }
        return try CTTestbed.evaluate(subject, logs: listed, policy: policy, tls: tlsList, ocsp: ocspList)
    }
}

@Suite("CT policies")
struct CTPolicyTests {
    static let day = LabClock.day

    /// Lifetimes around each policy's thresholds. Apple counts notBefore through notAfter
    /// inclusive, a started day as a day (103214): notAfter − notBefore = 180 days is 181 days.
    /// Chrome compares notAfter − notBefore with 180 days (Chromium's enforcer).
    static let lifetimes: [PolicyCase] = [
        PolicyCase(name: "90 days, two operators", embedded: [.alpha, .beta], apple: true, chrome: true),
        PolicyCase(
            name: "90 days, one SCT", embedded: [.alpha], apple: false, chrome: false,
            appleFails: [.appleTwoSCTsFromApprovedLogs, .appleEmbeddedCount], chromeFails: [.chromeEmbeddedCount]),
        PolicyCase(
            name: "90 days, two logs of one operator", embedded: [.alpha, .delta], apple: false, chrome: false, appleFails: [.appleEmbeddedCount],
            chromeFails: [.chromeEmbeddedOperatorDiversity]),
        PolicyCase(name: "180 days minus one second, two SCTs", lifetime: 180 * day - 1, embedded: [.alpha, .beta], apple: true, chrome: true),
        PolicyCase(
            name: "exactly 180 days, two SCTs", lifetime: 180 * day, embedded: [.alpha, .beta], apple: false, chrome: true,
            appleFails: [.appleEmbeddedCount]),
        PolicyCase(name: "exactly 180 days, three SCTs", lifetime: 180 * day, embedded: [.alpha, .beta, .gamma], apple: true, chrome: true),
        PolicyCase(
            name: "180 days plus one second, two SCTs", lifetime: 180 * day + 1, embedded: [.alpha, .beta], apple: false, chrome: false,
            appleFails: [.appleEmbeddedCount], chromeFails: [.chromeEmbeddedCount]),
        PolicyCase(name: "200 days, three operators", lifetime: 200 * day, embedded: [.alpha, .beta, .gamma], apple: true, chrome: true),
        PolicyCase(
            name: "200 days, two of operator A and one of B (Apple counts up to two per operator)", lifetime: 200 * day,
            embedded: [.alpha, .delta, .beta], apple: true, chrome: true),
        PolicyCase(
            name: "200 days, three logs of operator A", lifetime: 200 * day, embedded: [.alpha, .delta, .delta], apple: false, chrome: false,
            appleFails: [.appleEmbeddedCount], chromeFails: [.chromeEmbeddedCount, .chromeEmbeddedOperatorDiversity]),
        PolicyCase(
            name: "200 days, two SCTs", lifetime: 200 * day, embedded: [.alpha, .beta], apple: false, chrome: false,
            appleFails: [.appleEmbeddedCount], chromeFails: [.chromeEmbeddedCount]),
        PolicyCase(name: "398 days (Apple) with three SCTs", lifetime: 398 * day - 1, embedded: [.alpha, .beta, .gamma], apple: true, chrome: true),
        PolicyCase(
            name: "399 days (Apple) is beyond Apple's table", lifetime: 398 * day, embedded: [.alpha, .beta, .gamma], apple: false, chrome: true,
            appleFails: [.appleEmbeddedCount]),
        PolicyCase(
            name: "two SCTs, the same log twice", embedded: [.alpha, .alpha], apple: false, chrome: false,
            appleFails: [.appleTwoSCTsFromApprovedLogs], chromeFails: [.chromeEmbeddedCount]),
    ]

    static let deliveries: [PolicyCase] = [
        PolicyCase(name: "two TLS SCTs of two operators", tls: [.alpha, .beta], apple: true, chrome: true),
        PolicyCase(name: "one TLS and one OCSP SCT", tls: [.alpha], ocsp: [.beta], apple: true, chrome: true),
        PolicyCase(name: "two OCSP SCTs", ocsp: [.alpha, .gamma], apple: true, chrome: true),
        PolicyCase(
            name: "one TLS SCT and one embedded (Chrome does not mix deliveries)", embedded: [.beta], tls: [.alpha], apple: true, chrome: false,
            chromeFails: [.chromeDeliveredSCTs, .chromeEmbeddedCount]),
        PolicyCase(
            name: "two TLS SCTs of one operator", tls: [.alpha, .delta], apple: true, chrome: false, chromeFails: [.chromeDeliveredOperatorDiversity]),
        PolicyCase(
            name: "one TLS SCT", tls: [.alpha], apple: false, chrome: false, appleFails: [.appleTwoSCTsFromApprovedLogs, .appleDeliveredSCTs],
            chromeFails: [.chromeDeliveredSCTs]),
        PolicyCase(
            name: "two TLS SCTs from static-ct-api logs only", tls: [.tiled, .tiledB], apple: false, chrome: true, appleFails: [.appleRFC6962Log]),
        PolicyCase(
            name: "two embedded SCTs from static-ct-api logs only", embedded: [.tiled, .tiledB], apple: false, chrome: true,
            appleFails: [.appleRFC6962Log]),
        PolicyCase(name: "an RFC 6962 and a static-ct-api log", embedded: [.alpha, .tiled], apple: true, chrome: true),
    ]

    static let states: [PolicyCase] = [
        PolicyCase(name: "a ReadOnly log", embedded: [.alpha, .beta], changes: [.state(.beta, .readOnly, at: -5 * day)], apple: true, chrome: true),
        PolicyCase(name: "a Qualified log", embedded: [.alpha, .beta], changes: [.state(.beta, .qualified, at: -300 * day)], apple: true, chrome: true),
        PolicyCase(
            name: "a log Retired after the SCTs", embedded: [.alpha, .beta], changes: [.state(.beta, .retired, at: -5 * day)], apple: true, chrome: true),
        PolicyCase(
            name: "a log Retired before the SCTs", embedded: [.alpha, .beta], changes: [.state(.beta, .retired, at: -20 * day)], apple: false,
            chrome: false, appleFails: [.appleTwoSCTsFromApprovedLogs, .appleEmbeddedCount], chromeFails: [.chromeEmbeddedCount]),
        PolicyCase(
            name: "a log to be Retired after the time of check", embedded: [.alpha, .beta], changes: [.state(.beta, .retired, at: 5 * day)],
            apple: true, chrome: true),
        PolicyCase(
            name: "every log Retired after the SCTs", embedded: [.alpha, .beta],
            changes: [.state(.alpha, .retired, at: -5 * day), .state(.beta, .retired, at: -5 * day)], apple: false, chrome: false,
            appleFails: [.appleEmbeddedFromCurrentLog], chromeFails: [.chromeEmbeddedFromAdmissibleLog, .chromeEmbeddedCount]),
        PolicyCase(
            name: "a Pending log", embedded: [.alpha, .beta], changes: [.state(.beta, .pending, at: -300 * day)], apple: false, chrome: false,
            appleFails: [.appleTwoSCTsFromApprovedLogs], chromeFails: [.chromeEmbeddedCount]),
        PolicyCase(
            name: "a Rejected log", embedded: [.alpha, .beta], changes: [.state(.beta, .rejected, at: -300 * day)], apple: false, chrome: false,
            chromeFails: [.chromeEmbeddedCount]),
        PolicyCase(
            name: "TLS SCTs from a Retired log never count", tls: [.alpha, .beta], changes: [.state(.beta, .retired, at: -5 * day)], apple: false,
            chrome: false, appleFails: [.appleDeliveredSCTs], chromeFails: [.chromeDeliveredSCTs]),
        PolicyCase(
            name: "SCTs in the future", embedded: [.alpha, .beta], embeddedAt: LabClock.day, apple: false, chrome: false,
            appleFails: [.appleTwoSCTsFromApprovedLogs], chromeFails: [.chromeEmbeddedFromAdmissibleLog]),
        PolicyCase(
            name: "delta's SCT from after its move from operator B to A: one operator", embedded: [.alpha, .delta],
            changes: [.previousOperator(.delta, "Operator B", until: -20 * day)], apple: false, chrome: false,
            chromeFails: [.chromeEmbeddedOperatorDiversity]),
        PolicyCase(
            name: "delta's SCT from while operator B ran it: two operators", embedded: [.alpha, .delta],
            changes: [.previousOperator(.delta, "Operator B", until: -5 * day)], apple: true, chrome: true),
    ]

    @Test("lifetime buckets", arguments: lifetimes)
    func lifetimeBuckets(_ row: PolicyCase) throws { try check(row) }

    @Test("deliveries and log APIs", arguments: deliveries)
    func deliveryRules(_ row: PolicyCase) throws { try check(row) }

    @Test("log states and operators at SCT time", arguments: states)
    func stateRules(_ row: PolicyCase) throws { try check(row) }

    private func check(_ row: PolicyCase) throws {
        for (policy, expected, fails) in [(CTPolicy.apple, row.apple, row.appleFails), (.chrome, row.chrome, row.chromeFails)] {
            let evaluation = try row.evaluate(policy)
            #expect(evaluation.verdict == (expected ? .compliant : .nonCompliant), "\(policy)\n\(evaluation)")
            #expect(evaluation.rules.map(\.rule) == policy.rules)
            let failed = Set(evaluation.rules.filter { !$0.passed }.map(\.rule))
            #expect(fails.isSubset(of: failed), "\(policy): expected \(fails) among the failed rules\n\(evaluation)")
        }
    }

    @Test("every rule names the policy text it comes from")
    func rulesCiteTheirSource() {
        for rule in CTPolicyRule.allCases {
            #expect(rule.source.contains(rule.policy == .apple ? "support.apple.com/103214" : "ct_policy.html"))
            #expect(!rule.summary.isEmpty)
        }
        #expect(CTPolicy.apple.rules.count == 5)
        #expect(CTPolicy.chrome.rules.count == 5)
    }
}
