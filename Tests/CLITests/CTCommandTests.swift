import CertificateParsing
import Foundation
import ServerTrustLab
import Testing

/// `--ct`, `--ct-policy`, `--ct-log-list` on `servertrust evaluate` (the same flags as `get`),
/// and `inspect --ct-log-list`: generated chains with embedded SCTs from Lab logs, a v3 log list
/// naming those logs, the Lab root as SSL_CERT_FILE, at LabClock.reference. Key slots 790-794
/// and LabPKI keySlot 265 (795-797) belong to this suite.
@Suite("servertrust evaluate --ct, inspect --ct-log-list")
struct CTCommandTests {
    static let host = "ct.cli.test"
    static let at = "2026-01-01T00:00:00Z"

    struct Files: Sendable {
        let directory: String
        let root: String
        let logList: String
        let staleList: String
        /// Leaf (SCTs from two operators) and intermediate.
        let compliant: String
        /// Leaf with one SCT, and intermediate.
        let oneSCT: String
        /// Leaf with SCTs from two logs of one operator, and intermediate.
        let oneOperator: String
        let alphaID: String
    }

    static let files: Files = {
        do { return try makeFiles() } catch { fatalError("fixture generation failed: \(error)") }
    }()

    static func makeFiles() throws -> Files {
        let pki = try LabPKI.webChain(host: host, keySlot: 265)
        let alpha = try LabCTLog(name: "CLI Alpha", operatorName: "Operator A", key: LabKey.shared(.p256, slot: 790))
        let beta = try LabCTLog(name: "CLI Beta", operatorName: "Operator B", key: LabKey.shared(.p256, slot: 791))
        let gamma = try LabCTLog(name: "CLI Gamma", operatorName: "Operator A", key: LabKey.shared(.p256, slot: 792))
        let directory = try CLIRunner.temporaryDirectory()
        func leaf(_ logs: [LabCTLog]) throws -> [LabCertificate] {
            let spec = LabPKI.leafSpec(
                host: host, keyAlgorithm: .p256, notBefore: LabClock.reference - 10 * LabClock.day, notAfter: LabClock.reference + 80 * LabClock.day)
            let issued = try LabCertificate.issueWithEmbeddedSCTs(spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, logs: logs)
            return [issued.certificate, pki.intermediate]
        }
        func write(_ name: String, _ text: String) throws -> String {
            let path = directory + "/" + name
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let list = LabCTLogList(logs: [alpha, beta, gamma], timestamp: LabClock.reference - LabClock.day)
        let stale = LabCTLogList(logs: [alpha, beta, gamma], timestamp: LabClock.reference - 90 * LabClock.day)
        return Files(
            directory: directory, root: try write("root.pem", LabPEM.bundle([pki.root])),
            logList: try write("logs.json", String(decoding: try list.json(), as: UTF8.self)),
            staleList: try write("stale.json", String(decoding: try stale.json(), as: UTF8.self)),
            compliant: try write("compliant.pem", LabPEM.bundle(try leaf([alpha, beta]))), oneSCT: try write("one.pem", LabPEM.bundle(try leaf([alpha]))),
            oneOperator: try write("operator.pem", LabPEM.bundle(try leaf([alpha, gamma]))), alphaID: Data(alpha.logID).base64EncodedString())
    }

    func evaluate(_ chain: String, _ options: [String]) async throws -> CLIRunner.Result {
        let f = Self.files
        return try await CLIRunner.run(["evaluate", chain, "--host", Self.host, "--at", Self.at] + options, environment: ["SSL_CERT_FILE": f.root])
    }

    @Test("require: a compliant chain is trusted under both policies; --explain lists the SCTs and rules", arguments: ["apple", "chrome"])
    func compliant(policy: String) async throws {
        let f = Self.files
        let result = try await evaluate(f.compliant, ["--ct", "require", "--ct-policy", policy, "--ct-log-list", f.logList, "--explain"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Certificate Transparency: passed: compliant with the \(policy) policy"), "\(result)")
        #expect(result.stdout.contains("Certificate Transparency: passed: embedded SCT from CLI Alpha at 2025-12-22T00:00:01Z: valid"), "\(result)")
        #expect(result.stdout.contains("rule \(policy)."), "\(result)")
    }

    @Test(
        "require refuses a non-compliant chain (exit 1); report accepts it with a note (exit 0)", arguments: [("one.pem", "apple"), ("operator.pem", "chrome")])
    func nonCompliant(file: String, policy: String) async throws {
        let f = Self.files
        let chain = f.directory + "/" + file
        let refused = try await evaluate(chain, ["--ct", "require", "--ct-policy", policy, "--ct-log-list", f.logList])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stdout.hasPrefix("rejected: chainValidationFailed (host \(Self.host)): "), "\(refused)")
        #expect(refused.stdout.contains("certificateTransparencyNotCompliant: not compliant with the \(policy) policy"), "\(refused)")
        let reported = try await evaluate(chain, ["--ct", "report", "--ct-policy", policy, "--ct-log-list", f.logList])
        #expect(reported.status == 0, "\(reported)")
        #expect(reported.stdout.contains("note: Certificate Transparency, report only: not compliant with the \(policy) policy"), "\(reported)")
        // Without --ct the same chain is trusted and nothing is said about CT.
        let off = try await evaluate(chain, [])
        #expect(off.status == 0 && !off.stdout.contains("Certificate Transparency"), "\(off)")
    }

    @Test("a private anchor (--cacert) is exempt; a stale list stops enforcement; both say so")
    func exemptAndStale() async throws {
        let f = Self.files
        let exempt = try await CLIRunner.run(
            ["evaluate", f.oneSCT, "--host", Self.host, "--at", Self.at, "--cacert", f.root, "--ct", "require", "--ct-log-list", f.logList, "--explain"])
        #expect(exempt.status == 0, "\(exempt)")
        #expect(
            exempt.stdout.contains("Certificate Transparency: noted: exempt: the path ends at an anchor that is not a root of the system trust store"),
            "\(exempt)")
        let stale = try await evaluate(f.oneSCT, ["--ct", "require", "--ct-log-list", f.staleList, "--explain"])
        #expect(stale.status == 0, "\(stale)")
        #expect(
            stale.stdout.contains(
                "Certificate Transparency: noted: not enforced: the log list from 2025-10-03T00:00:00Z is older than the maximum age of 70 days"), "\(stale)")
    }

    @Test(
        "bad --ct input is one line and exit 2",
        arguments: [
            (["--ct", "enforce", "--ct-log-list", "LIST"], "--ct: 'enforce' is not off, report or require"),
            (["--ct", "require"], "--ct require needs --ct-log-list FILE"),
            (["--ct-log-list", "LIST"], "--ct-log-list needs --ct report or --ct require"),
            (["--ct", "report", "--ct-policy", "firefox", "--ct-log-list", "LIST"], "--ct-policy: 'firefox' is not apple or chrome"),
            (["--ct", "report", "--ct-log-list", "ROOT"], "--ct-log-list ROOT: not a CT log list: looks like a certificate"),
            (["--ct", "report", "--ct-log-list", "/nonexistent/list.json"], "/nonexistent/list.json: No such file or directory"),
        ])
    func badInput(options: [String], message: String) async throws {
        let f = Self.files
        let substituted = options.map { $0 == "LIST" ? f.logList : $0 == "ROOT" ? f.root : $0 }
        let result = try await evaluate(f.compliant, substituted)
        #expect(result.status == 2, "\(result)")
        let expected = message.replacingOccurrences(of: "ROOT", with: f.root)
        #expect(result.stderr.hasPrefix("servertrust: evaluate: \(expected)"), "\(result)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result)")
    }

    @Test("inspect --ct-log-list names each embedded SCT's log and says whether it verifies, and what the policies make of them")
    func inspect() async throws {
        let f = Self.files
        let result = try await CLIRunner.run(["inspect", f.compliant, "--ct-log-list", f.logList])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let scts = lines.filter { $0.hasPrefix("  SCT ") }
        #expect(scts.count == 2, "\(result)")
        #expect(scts.first?.hasSuffix("log \(f.alphaID) (CLI Alpha, Operator A) at 2025-12-22T00:00:01Z: verifies") == true, "\(result)")
        #expect(scts.last?.contains("(CLI Beta, Operator B)") == true && scts.last?.hasSuffix(": verifies") == true, "\(result)")
        #expect(lines.contains { $0.hasPrefix("  CT ") && $0.contains(" compliant with apple; compliant with chrome (embedded SCTs only)") }, "\(result)")
        let operators = try await CLIRunner.run(["inspect", f.oneOperator, "--ct-log-list", f.logList])
        #expect(operators.stdout.contains("not compliant with chrome (chrome.embedded-operators)"), "\(operators)")
        // Without the issuer among the certificates shown, the SCTs cannot be verified.
        let leafOnly = f.directory + "/leaf-only.pem"
        let chain = try Certificate.load(Array(try String(contentsOfFile: f.oneOperator, encoding: .utf8).utf8))
        try LabPEM.encode(chain[0].derBytes, label: "CERTIFICATE").write(toFile: leafOnly, atomically: true, encoding: .utf8)
        let alone = try await CLIRunner.run(["inspect", leafOnly, "--ct-log-list", f.logList])
        #expect(alone.stdout.contains("not verified: the issuer's certificate is not among the certificates shown"), "\(alone)")
        // JSON says the same.
        let json = try await CLIRunner.run(["inspect", f.compliant, "--ct-log-list", f.logList, "--json"])
        let items = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let entries = try #require(items.first?["scts"] as? [[String: Any]])
        #expect(entries.count == 2 && entries.allSatisfy { $0["verifies"] as? Bool == true })
        #expect(entries.first?["log"] as? String == "CLI Alpha" && entries.first?["logID"] as? String == f.alphaID)
        // A list that is not one is bad input.
        let bad = try await CLIRunner.run(["inspect", f.oneOperator, "--ct-log-list", f.root])
        #expect(bad.status == 2 && bad.stderr.contains("not a CT log list"), "\(bad)")
    }
}
