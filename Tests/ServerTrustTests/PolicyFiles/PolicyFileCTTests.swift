import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

/// `certificateTransparency` in policy files (docs/policy-schema.md): at the top level and per
/// host, each host member replacing the top level's; every problem at its JSON path.
@Suite("policy files: certificateTransparency")
struct PolicyFileCTTests {
    typealias F = CTFixture

    /// A folder with the fixtures' log lists: `logs.json` (current), `stale.json` (80 days old),
    /// `bad.json` (not a list).
    static let directory: String = {
        do {
            let directory = try PolicyFixtures.temporaryDirectory()
            try Data(try F.listJSON()).write(to: URL(fileURLWithPath: directory + "/logs.json"))
            try Data(try F.listJSON(timestamp: F.now - 80 * LabClock.day)).write(to: URL(fileURLWithPath: directory + "/stale.json"))
            try Data(#"{"operators": "none"}"#.utf8).write(to: URL(fileURLWithPath: directory + "/bad.json"))
            return directory
        } catch { fatalError("\(error)") }
    }()

    func parse(_ json: String) throws(PolicyFileError) -> TrustPolicy {
        try PolicyFile.parse(Array(json.utf8), baseDirectory: Self.directory, source: "ct.json")
    }

    func settings(_ policy: TrustPolicy, _ host: String) -> CertificateTransparencyPolicy? {
        policy.resolve(host, at: F.now).policy?.certificateTransparency
    }

    @Test("the top level applies to every host, unmatched ones included; a host member replaces what it gives")
    func layers() throws {
        let policy = try parse(
            #"""
            {"version": 1, "allHostsMustBeEvaluated": false,
             "certificateTransparency": {"mode": "report", "policy": "chrome", "logList": "logs.json", "maxLogListAge": 30},
             "hosts": [
               {"host": "a.example.test"},
               {"host": "b.example.test", "certificateTransparency": {"mode": "require"}},
               {"host": "c.example.test", "certificateTransparency": {"mode": "off"}},
               {"host": "d.example.test", "certificateTransparency": {"policy": "apple", "logList": "stale.json"}}
             ]}
            """#)
        let a = try #require(settings(policy, "a.example.test"))
        #expect(a.mode == .report && a.policy == .chrome && a.maximumLogListAge == 30 * 86_400)
        #expect(a.logList?.logs.map(\.name) == ["Lab CT Alpha", "Lab CT Gamma", "Lab CT Beta"])
        let b = try #require(settings(policy, "b.example.test"))
        #expect(b.mode == .require && b.policy == .chrome && b.maximumLogListAge == 30 * 86_400 && b.logList == a.logList)
        #expect(settings(policy, "c.example.test")?.isOn == false)
        let d = try #require(settings(policy, "d.example.test"))
        #expect(d.mode == .report && d.policy == .apple && d.logList?.timestamp.secondsSince1970 == F.now - 80 * LabClock.day)
        #expect(settings(policy, "unlisted.example.test")?.mode == .report)
    }

    @Test("a host can turn CT on by itself; the defaults are the apple policy and 70 days")
    func hostOnly() throws {
        let policy = try parse(
            #"{"version": 1, "hosts": [{"host": "a.example.test", "certificateTransparency": {"mode": "require", "logList": "logs.json"}}, {"host": "b.example.test"}]}"#
        )
        let a = try #require(settings(policy, "a.example.test"))
        #expect(a.mode == .require && a.policy == .apple && a.maximumLogListAge == CTLogList.defaultMaximumAge)
        #expect(settings(policy, "b.example.test")?.isOn == false)
    }

    @Test("a policy file's CT decides: require refuses a non-compliant chain, report accepts it with a note")
    func decides() throws {
        for (mode, trusted) in [("require", false), ("report", true)] {
            let policy = try parse(
                #"{"version": 1, "certificateTransparency": {"mode": "\#(mode)", "logList": "logs.json"}, "hosts": [{"host": "\#(F.host)"}]}"#)
            let decision = F.decider(policy).decide(ServedChain(certificates: try F.embedded([F.alpha]), host: F.host))
            #expect(decision.isTrusted == trusted, "\(mode): \(decision.explanation)")
            #expect(decision.explanation.contains("policy: the rule for \(F.host) (ct.json $.hosts[0])"), "\(decision.explanation)")
            #expect(decision.explanation.contains("Certificate Transparency"), "\(decision.explanation)")
        }
    }

    struct Case: Sendable, CustomStringConvertible {
        let json: String
        let kind: PolicyConfigurationError.Kind
        let path: String
        let message: String
        var description: String { path }
    }

    static let errors: [Case] = [
        Case(
            json: #"{"version": 1, "certificateTransparency": {"mode": "enforce", "logList": "logs.json"}, "hosts": [{"host": "a.test"}]}"#,
            kind: .invalidValue, path: "$.certificateTransparency.mode", message: "\"enforce\" is not off, report or require"),
        Case(
            json:
                #"{"version": 1, "certificateTransparency": {"mode": "require", "policy": "firefox", "logList": "logs.json"}, "hosts": [{"host": "a.test"}]}"#,
            kind: .invalidValue, path: "$.certificateTransparency.policy", message: "\"firefox\" is not apple or chrome"),
        Case(
            json: #"{"version": 1, "certificateTransparency": {"mode": "require"}, "hosts": [{"host": "a.test"}]}"#,
            kind: .missingKey, path: "$.certificateTransparency.logList", message: "CT mode require needs a log list"),
        Case(
            json: #"{"version": 1, "hosts": [{"host": "a.test", "certificateTransparency": {"mode": "report"}}]}"#,
            kind: .missingKey, path: "$.hosts[0].certificateTransparency.logList", message: "CT mode report needs a log list"),
        Case(
            json: #"{"version": 1, "certificateTransparency": {"logList": "logs.json"}, "hosts": [{"host": "a.test"}]}"#,
            kind: .missingKey, path: "$.certificateTransparency.mode", message: "missing: off, report or require"),
        Case(
            json: #"{"version": 1, "certificateTransparency": {"mode": "off", "logList": "missing.json"}, "hosts": [{"host": "a.test"}]}"#,
            kind: .unreadable, path: "$.certificateTransparency.logList", message: "cannot read the CT log list"),
        Case(
            json: #"{"version": 1, "certificateTransparency": {"mode": "require", "logList": "bad.json"}, "hosts": [{"host": "a.test"}]}"#,
            kind: .invalidValue, path: "$.certificateTransparency.logList", message: "not a CT log list: CT log list wrongType at $.operators"),
        Case(
            json: #"{"version": 1, "certificateTransparency": {"mode": "require", "logList": "logs.json", "maxLogListAge": 0}, "hosts": [{"host": "a.test"}]}"#,
            kind: .invalidValue, path: "$.certificateTransparency.maxLogListAge", message: "0 is not a number of days from 1 to 3650"),
        Case(
            json:
                #"{"version": 1, "certificateTransparency": {"mode": "require", "logList": "logs.json", "maxLogListAge": "70"}, "hosts": [{"host": "a.test"}]}"#,
            kind: .wrongType, path: "$.certificateTransparency.maxLogListAge", message: "expected an integer"),
        Case(
            json: #"{"version": 1, "certificateTransparency": {"mode": "require", "logList": "logs.json", "logs": 2}, "hosts": [{"host": "a.test"}]}"#,
            kind: .unknownKey, path: "$.certificateTransparency.logs", message: "unknown key (allowed: logList, maxLogListAge, mode, policy)"),
        Case(
            json: #"{"version": 1, "certificateTransparency": "require", "hosts": [{"host": "a.test"}]}"#,
            kind: .wrongType, path: "$.certificateTransparency", message: "expected an object, found a string"),
    ]

    @Test("each problem of a certificateTransparency member, at its JSON path", arguments: errors)
    func configurationError(_ c: Case) {
        do {
            _ = try parse(c.json)
            Issue.record("accepted: \(c.json)")
        } catch {
            let problem = error.problems.first { $0.path == c.path }
            #expect(problem?.kind == c.kind, "\(error.problems)")
            #expect(problem?.message.contains(c.message) == true, "\(error.problems)")
        }
    }
}
