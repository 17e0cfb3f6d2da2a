import CertificateParsing
import Foundation
import ServerTrustLab
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every subcommand: `--help` (usage, options, exit codes), one-line errors on bad input with
/// exit 2, and `limbo-serve`'s line protocol on stdin (key slots 291-293: keySlot 97).
@Suite("servertrust --help and bad input, every subcommand")
struct HelpAndBadInputTests {
    static let helpCases: [[String]] = [
        ["inspect"], ["pins"], ["pinset"], ["evaluate"], ["get"], ["demo"], ["bench"], ["bench", "evaluate"], ["bench", "https"], ["bench", "h2"],
        ["bench", "download"], ["limbo-serve"],
        ["stress"], ["stress", "load"],
    ]

    @Test("--help prints usage, options and exit codes on stdout, exit 0", arguments: helpCases)
    func help(command: [String]) async throws {
        let result = try await CLIRunner.run(command + ["--help"])
        #expect(result.status == 0, "\(command): \(result.stderr)")
        #expect(result.stderr.isEmpty, "\(command)")
        let usage = "usage: servertrust " + command.joined(separator: " ")
        #expect(
            result.stdout.hasPrefix(usage) || (command == ["bench", "evaluate"] && result.stdout.hasPrefix("usage: servertrust bench evaluate")),
            "\(command): \(result.stdout.prefix(80))")
        #expect(result.stdout.contains("exit codes:"), "\(command)")
        #expect(result.stdout.split(separator: "\n").count >= 4, "\(command): a description, not only a usage line")
    }

    @Test("servertrust help lists every subcommand")
    func overview() async throws {
        for spelling in ["help", "--help", "-h"] {
            let result = try await CLIRunner.run([spelling])
            #expect(result.status == 0)
            for command in [
                "inspect FILE", "inspect https://HOST", "pins ", "pinset ", "evaluate ", "get ", "demo ", "bench ", "stress ", "limbo-serve", "exit codes:",
            ] {
                #expect(result.stdout.contains(command), "\(spelling): missing \(command)")
            }
        }
        let bare = try await CLIRunner.run([])
        #expect(bare.status == 2)
        #expect(bare.stderr.contains("usage: servertrust <command>"))
    }

    static let badInputCases: [(String, [String])] = [
        ("inspect", ["inspect", "--bogus"]),
        ("inspect", ["inspect"]),
        ("pins", ["pins", "--format", "xml"]),
        ("pins", ["pins"]),
        ("pinset", ["pinset"]),
        ("pinset", ["pinset", "sign"]),
        ("pinset", ["pinset", "verify", "/nonexistent.json", "--key", "x", "--key", "y"]),
        ("pinset", ["pinset", "keygen", "--out", "/proc/forbidden.pem"]),
        ("pinset", ["pinset", "serve", "/nonexistent.json"]),
        ("evaluate", ["evaluate"]),
        ("evaluate", ["evaluate", "/nonexistent/chain.pem", "--host", "example.test"]),
        // A readable chain, but a host that no certificate can match: bad input, not a rejection.
        ("evaluate", ["evaluate", "/etc/ssl/certs/ca-certificates.crt", "--host", "exa mple..com"]),
        ("get", ["get"]),
        ("get", ["get", "https://example.test/", "--timeout", "soon"]),
        // curl's spellings (CurlSpellingsTests, PlainMessagesTests, PasswordSourceTests).
        ("get", ["get", "https://example.test/", "-m", "soon"]),
        ("get", ["get", "https://example.test/", "--connect-timeout"]),
        ("get", ["get", "https://example.test/", "--pinnedpubkey", "sha256//notbase64"]),
        ("get", ["get", "https://example.test/", "--pinnedpubkey", "/nonexistent/key.pem"]),
        ("get", ["get", "https://example.test/", "--cacert", "/nonexistent/bundle.pem"]),
        ("get", ["get", "https://example.test/", "--cert-type", "P12"]),
        ("get", ["get", "https://example.test/", "--cert", "/etc/hostname", "--cert-type", "XYZ"]),
        ("get", ["get", "https://example.test/", "-u", "alice"]),
        ("get", ["get", "https://example.test/", "-kX"]),
        // A HEAD request has no body: the data would be dropped unsent.
        ("get", ["get", "https://example.test/", "-I", "-d", "x=1"]),
        ("get", ["get", "https://example.test/", "--head", "-F", "a=b"]),
        ("get", ["get", "https://example.test/", "-I", "-T", "/etc/hostname"]),
        // One URL, one file: a second -o would win silently, a second -T be dropped.
        ("get", ["get", "https://example.test/", "-o", "/tmp/servertrust-never-a", "-o", "/tmp/servertrust-never-b"]),
        ("get", ["get", "https://example.test/", "--output=/tmp/servertrust-never-a", "-o", "/tmp/servertrust-never-b"]),
        ("get", ["get", "https://example.test/", "-T", "/etc/hostname", "--upload-file", "/etc/hostname"]),
        ("evaluate", ["evaluate", "/etc/ssl/certs/ca-certificates.crt", "--host", "example.test", "--pinnedpubkey", "sha256//x;md5//y"]),
        ("demo", ["demo", "--bogus"]),
        ("demo", ["demo", "extra"]),
        ("bench", ["bench"]),
        ("bench", ["bench", "nonsense"]),
        ("bench", ["bench", "evaluate"]),
        ("bench", ["bench", "evaluate", "--mode", "parse"]),
        ("bench", ["bench", "evaluate", "--chain", "/nonexistent"]),
        ("bench", ["bench", "evaluate", "--chain", "/tmp", "--iterations", "-1"]),
        ("bench", ["bench", "https"]),
        ("bench", ["bench", "https", "--url", "https://example.test/", "--cainfo", "/nonexistent.pem"]),
        ("bench", ["bench", "https", "--url", "https://example.test/", "--cainfo", "x", "--mode", "sometimes"]),
        ("bench", ["bench", "https", "--url", "https://example.test/", "--cainfo", "x", "--signature-memo", "sometimes"]),
        ("bench", ["bench", "h2"]),
        ("bench", ["bench", "h2", "--url", "https://example.test/", "--cainfo", "/nonexistent.pem"]),
        ("bench", ["bench", "download", "--url", "https://example.test/", "--cainfo", "/nonexistent.pem", "--bogus"]),
        ("stress", ["stress"]),
        ("stress", ["stress", "nonsense"]),
        ("stress", ["stress", "load", "--bogus"]),
        ("stress", ["stress", "load", "--in-flight", "many"]),
        ("stress", ["stress", "load", "--in-flight", "0"]),
        ("stress", ["stress", "load", "--keepalive", "0", "--new-connections", "0"]),
        ("stress", ["stress", "load", "--keepalive", "10", "--new-connections", "5", "--memory-checkpoint", "16"]),
        ("stress", ["stress", "load", "--memory-checkpoint", "0"]),
        ("stress", ["stress", "faults", "extra"]),
        ("limbo-serve", ["limbo-serve", "--bogus"]),
        ("limbo-serve", ["limbo-serve", "extra"]),
        ("limbo-serve", ["limbo-serve", "--signature-memo", "sometimes"]),
        ("frobnicate", ["frobnicate"]),
    ]

    @Test("bad input: exit 2, nothing on stdout, one line 'servertrust: <command>: <message>'", arguments: badInputCases)
    func badInput(command: String, arguments: [String]) async throws {
        let result = try await CLIRunner.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        #expect(result.stderr.hasPrefix("servertrust: \(command): "), "\(arguments): \(result.stderr)")
    }

    /// Every option that names a file, given a FIFO nobody writes to. Opening it for reading
    /// waits for a writer (POSIX open()), so a reader that checks the file's type only after
    /// opening it hangs instead of refusing it.
    static let fifoCases: [[String]] = [
        ["inspect", "FIFO"],
        ["evaluate", "FIFO", "--host", "x.test"],
        ["pins", "FIFO"],
        ["pins", "lint", "FIFO"],
        ["get", "https://example.test/", "--cacert", "FIFO"],
        ["get", "https://example.test/", "--pinnedpubkey", "FIFO"],
        ["pinset", "serve", "FIFO", "--cert", "FIFO", "--key", "FIFO"],
    ]

    @Test("a FIFO is refused at once (exit 2, one line naming it), never waited on", arguments: fifoCases)
    func fifoRefused(_ template: [String]) async throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let arguments = template.map { $0 == "FIFO" ? fifo : $0 }
        let (hung, status, stderr) = try await Self.runBounded(arguments, in: directory)
        #expect(!hung, "\(arguments) still waits on the FIFO after 10 s")
        #expect(status == 2 && stderr.split(separator: "\n").count == 1, "\(arguments): \(status) \(stderr)")
        #expect(stderr.hasPrefix("servertrust: \(template[0]): ") && stderr.contains(fifo), "\(arguments): \(stderr)")
    }

    /// Runs `servertrust` for at most 10 s (then stops it): whether it was still running, its
    /// status and its stderr.
    static func runBounded(_ arguments: [String], in directory: String) async throws -> (hung: Bool, status: Int32, stderr: String) {
        let child = try LabChildProcess(CLIRunner.binary, arguments, stdoutPath: directory + "/out", stderrPath: directory + "/err")
        let deadline = ContinuousClock.now + .seconds(10)
        while child.isRunning && ContinuousClock.now < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        let hung = child.isRunning
        let status = child.stop(grace: .seconds(1))
        return (hung, status, String(decoding: FileManager.default.contents(atPath: directory + "/err") ?? Data(), as: UTF8.self))
    }

    @Test("collect --retain-days beyond what seconds since 1970 can hold: exit 2 at start, not a trap when retention first runs")
    func retentionOverflow() async throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let days = String(Int64.max / 86_400 + 1)
        let arguments = ["collect", "--db", "sqlite:" + directory + "/reports.db", "--listen", "127.0.0.1:0", "--retain-days", days]
        let (hung, status, stderr) = try await Self.runBounded(arguments, in: directory)
        #expect(!hung && status == 2 && stderr.split(separator: "\n").count == 1, "\(status) \(stderr)")
        #expect(stderr.hasPrefix("servertrust: collect: ") && stderr.contains("--retain-days"), "\(stderr)")
    }

    /// The mistakes people make with pins: curl's two slashes written as one, bare base64,
    /// a hex fingerprint, a SHA-1 pin. Each is named as a pin mistake with the option and the
    /// accepted forms, never as a missing file, and a hex fingerprint is never read as a pin.
    static let sha256 = "AxEKAhGSjS/BE5ggNqD6QzpeMb7vVp8F0rH9jgKblrw="
    static let pinMistakeCases: [(arguments: [String], mentions: [String])] = [
        (["--pinnedpubkey", "sha256/" + sha256], ["--pinnedpubkey 'sha256/", "one slash is OkHttp's form", "sha256//BASE64"]),
        (["--pinnedpubkey", sha256], ["--pinnedpubkey '", "sha256// prefix", "sha256//BASE64"]),
        (["--pinnedpubkey", String(repeating: "ab12", count: 16)], ["--pinnedpubkey '", "hex certificate fingerprint", "sha256//BASE64"]),
        (["--pinnedpubkey", Array(repeating: "AB", count: 32).joined(separator: ":")], ["hex certificate fingerprint", "sha256//BASE64"]),
        (["--pinnedpubkey", "sha1//" + String(sha256.prefix(28))], ["--pinnedpubkey '", "sha1 is not a digest", "sha256//BASE64"]),
        (["--pinnedpubkey", "sha256//" + sha256 + ";sha256/" + sha256], ["--pinnedpubkey: 'sha256/", "one slash", "sha256//BASE64"]),
        (["--pinnedpubkey", "/nonexistent/key.pem"], ["--pinnedpubkey /nonexistent/key.pem: No such file", "sha256//BASE64"]),
        (["--pin", String(repeating: "ab12", count: 16)], ["--pin '", "fingerprint", "sha256/BASE64 (OkHttp)"]),
        (["--pin", "sha1/" + String(sha256.prefix(28))], ["--pin '", "unsupported digest", "sha256/BASE64 (OkHttp)"]),
        (["--pin", "sha256/notbase64!"], ["--pin '", "not base64", "sha256/BASE64 (OkHttp)"]),
    ]

    @Test("a mistyped pin names the option and the accepted forms, never a missing file; a hex fingerprint is refused", arguments: pinMistakeCases)
    func pinMistakes(_ arguments: [String], _ mentions: [String]) async throws {
        for command in [["get", "https://example.test/"], ["evaluate", "/etc/ssl/certs/ca-certificates.crt", "--host", "example.test"]] {
            let result = try await CLIRunner.run(command + arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            for text in mentions { #expect(result.stderr.contains(text), "\(arguments): '\(text)' not in \(result.stderr)") }
            #expect(!result.stderr.contains("No such file") || arguments.contains("/nonexistent/key.pem"), "\(result.stderr)")
        }
    }

    @Test("bench evaluate without --chain is exit 2 and names the option")
    func benchEvaluateNeedsChain() async throws {
        let result = try await CLIRunner.run(["bench", "evaluate", "--iterations", "10"])
        #expect(result.status == 2)
        #expect(result.stderr == "servertrust: bench: --chain DIR is required (usage: servertrust bench --help)\n", "\(result.stderr)")
    }

    /// One limbo-jsonl/1 request for a Lab chain at the Lab's reference instant.
    static func limboRequest(id: String, host: String) throws -> String {
        let pki = try LabPKI.webChain(host: "limbo.cli.test", keySlot: 97)
        let request: [String: Any] = [
            "id": id,
            "peer_certificate": pki.leaf.pem,
            "untrusted_intermediates": [pki.intermediate.pem],
            "trusted_certs": [pki.root.pem],
            "validation_kind": "SERVER",
            "validation_time": ASN1Time(secondsSince1970: LabClock.reference).rfc3339,
            "expected_peer_name": ["kind": "DNS", "value": host],
            "extended_key_usage": ["serverAuth"],
        ]
        return String(decoding: try JSONSerialization.data(withJSONObject: request, options: [.sortedKeys]), as: UTF8.self)
    }

    /// A BASIC (RFC 5280, NIST PKITS) request for the same chain, with `inputs` as pkits_inputs.
    static func basicRequest(id: String, inputs: [String: Any]?) throws -> String {
        var request = try #require(try JSONSerialization.jsonObject(with: Data(try limboRequest(id: id, host: "limbo.cli.test").utf8)) as? [String: Any])
        request["validation_kind"] = "BASIC"
        request["expected_peer_name"] = NSNull()
        request["extended_key_usage"] = [String]()
        if let inputs { request["pkits_inputs"] = inputs }
        return String(decoding: try JSONSerialization.data(withJSONObject: request, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test("limbo-serve BASIC: RFC 5280 validation with the pkits_inputs policy inputs; the policy set is in the reason")
    func limboServeBasic() async throws {
        let input =
            [
                try Self.basicRequest(id: "defaults", inputs: nil),
                // The chain asserts no certificate policy, so an explicit policy cannot be met.
                try Self.basicRequest(
                    id: "explicit",
                    inputs: [
                        "user_initial_policy_set": ["2.5.29.32.0"], "initial_explicit_policy": true,
                        "initial_policy_mapping_inhibit": false, "initial_any_policy_inhibit": false,
                    ]),
                try Self.basicRequest(id: "bad-inputs", inputs: ["initial_explicit_policy": "yes"]),
                try Self.basicRequest(id: "bad-oid", inputs: ["user_initial_policy_set": ["not.an.oid"]]),
            ].joined(separator: "\n") + "\n"
        let result = try await CLIRunner.run(["limbo-serve"], input: input)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try Self.responses(result.stdout)
        guard lines.count == 4 else {
            Issue.record("expected 4 answers: \(result.stdout)")
            return
        }
        #expect(lines[0]["result"] as? String == "SUCCESS", "\(lines[0])")
        #expect((lines[0]["reason"] as? String)?.contains("user-constrained-policy-set {}") == true, "\(lines[0])")
        #expect(lines[1]["result"] as? String == "FAILURE")
        #expect((lines[1]["reason"] as? String)?.hasPrefix("policyViolation") == true, "\(lines[1])")
        #expect(lines[2]["result"] as? String == "FAILURE")
        #expect((lines[2]["reason"] as? String)?.contains("initial_explicit_policy is not a boolean") == true, "\(lines[2])")
        #expect((lines[3]["reason"] as? String)?.contains("bad policy OID not.an.oid") == true, "\(lines[3])")
    }

    static func responses(_ stdout: String) throws -> [[String: Any]] {
        try stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test("limbo-serve answers one request line with one response line")
    func limboServeOneLine() async throws {
        let result = try await CLIRunner.run(["limbo-serve"], input: try Self.limboRequest(id: "cli-1", host: "limbo.cli.test") + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try Self.responses(result.stdout)
        #expect(lines.count == 1)
        #expect(lines.first?["id"] as? String == "cli-1")
        #expect(lines.first?["result"] as? String == "SUCCESS", "\(result.stdout)")
    }

    @Test("limbo-serve: a bad line is a FAILURE response, not a crash; answers stay in order")
    func limboServeBadLines() async throws {
        let input =
            [
                "{not json",
                "[1, 2, 3]",
                #"{"id": "no-certificate"}"#,
                #"{"id": "garbage-certificate", "peer_certificate": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "validation_time": "2026-01-01T00:00:00Z"}"#,
                try Self.limboRequest(id: "wrong-host", host: "other.cli.test"),
                try Self.limboRequest(id: "good", host: "limbo.cli.test"),
            ].joined(separator: "\n") + "\n"
        let result = try await CLIRunner.run(["limbo-serve"], input: input)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try Self.responses(result.stdout)
        #expect(lines.count == 6, "\(result.stdout)")
        guard lines.count == 6 else { return }
        #expect(lines[0]["id"] is NSNull && lines[0]["result"] as? String == "FAILURE")
        #expect(lines[1]["id"] is NSNull && lines[1]["result"] as? String == "FAILURE")
        #expect(lines[2]["id"] as? String == "no-certificate" && lines[2]["result"] as? String == "FAILURE")
        #expect(lines[3]["id"] as? String == "garbage-certificate" && lines[3]["result"] as? String == "FAILURE")
        #expect((lines[3]["reason"] as? String)?.hasPrefix("malformed peer certificate") == true, "\(lines[3])")
        #expect(lines[4]["id"] as? String == "wrong-host" && lines[4]["result"] as? String == "FAILURE")
        #expect((lines[4]["reason"] as? String)?.contains("hostnameMismatch") == true, "\(lines[4])")
        #expect(lines[5]["id"] as? String == "good" && lines[5]["result"] as? String == "SUCCESS")
    }
}
