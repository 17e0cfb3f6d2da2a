import Foundation
import ServerTrustLab
import Testing

/// `--revocation`, `--revocation-depth`, `--crl-cache` and `evaluate --offline`: the revocation
/// setting from the command line, and its bad input (one line, exit 2). The fetching itself is
/// tested against a CRL server in ServerTrustHTTPTests (RevocationWireTests).
@Suite("servertrust evaluate and get: revocation options")
struct RevocationOptionsTests {
    /// A chain whose certificates name a CRL on a port nothing listens on, and its root.
    static func files() throws -> (directory: String, chain: String, root: String) {
        let pki = try LabPKI.webChain(host: "revoked.example.test", keySlot: 217)
        let leaf = try pki.issueLeaf(host: "revoked.example.test", extraExtensions: [.crlDistributionPoints(["http://127.0.0.1:9/issuing.crl"])])
        let directory = try CLIRunner.temporaryDirectory()
        try LabPEM.bundle([leaf, pki.intermediate]).write(toFile: directory + "/chain.pem", atomically: true, encoding: .utf8)
        try pki.root.pem.write(toFile: directory + "/root.pem", atomically: true, encoding: .utf8)
        return (directory, directory + "/chain.pem", directory + "/root.pem")
    }

    static func evaluate(_ files: (directory: String, chain: String, root: String), _ options: [String]) async throws -> CLIRunner.Result {
        try await CLIRunner.run(
            ["evaluate", files.chain, "--host", "revoked.example.test", "--cacert", files.root, "--at", "2026-01-01T00:00:00Z"] + options)
    }

    @Test("offline, hard-fail refuses a chain nothing can settle and says CRLs were not fetched; soft-fail accepts it with a note; off checks nothing")
    func offline() async throws {
        let files = try Self.files()
        defer { try? FileManager.default.removeItem(atPath: files.directory) }
        let hard = try await Self.evaluate(files, ["--revocation", "hard-fail", "--revocation-depth", "leaf", "--offline"])
        #expect(hard.status == 1, "\(hard)")
        #expect(hard.stdout.contains("revocationStatusUnknown") && hard.stdout.contains("CRLs are not fetched"), "\(hard)")
        let soft = try await Self.evaluate(files, ["--revocation", "soft-fail", "--offline", "--explain"])
        #expect(soft.status == 0, "\(soft)")
        #expect(soft.stdout.contains("revocation: noted: revocation status unknown, accepted (soft-fail)"), "\(soft)")
        let off = try await Self.evaluate(files, ["--offline", "--explain"])
        #expect(off.status == 0 && !off.stdout.contains("revocation:"), "\(off)")
    }

    @Test("online, evaluate fetches: an unreachable distribution point is named in the refusal")
    func online() async throws {
        let files = try Self.files()
        defer { try? FileManager.default.removeItem(atPath: files.directory) }
        let hard = try await Self.evaluate(files, ["--revocation", "hard-fail", "--revocation-depth", "leaf", "--crl-cache", files.directory + "/cache"])
        #expect(hard.status == 1, "\(hard)")
        #expect(hard.stdout.contains("CRL http://127.0.0.1:9/issuing.crl: unreachable"), "\(hard)")
        #expect(FileManager.default.fileExists(atPath: files.directory + "/cache"), "the cache folder is made")
    }

    @Test(
        "bad revocation options: one line, exit 2",
        arguments: [
            (["--revocation", "maybe"], "--revocation: 'maybe' is not off, soft-fail or hard-fail"),
            (["--revocation", "soft-fail", "--revocation-depth", "all"], "--revocation-depth: 'all' is not leaf or chain"),
            (["--revocation-depth", "leaf"], "--revocation-depth needs --revocation soft-fail or hard-fail (or a --policy file that checks revocation)"),
            (["--crl-cache", "/tmp/x"], "--crl-cache needs --revocation soft-fail or hard-fail (or a --policy file that checks revocation)"),
            (
                ["--revocation", "off", "--crl-cache", "/tmp/x"],
                "--crl-cache needs --revocation soft-fail or hard-fail (or a --policy file that checks revocation)"
            ),
            (["--revocation", "soft-fail", "--crl-cache", ""], "--crl-cache: an empty folder name"),
            (["--revocation", "off", "--crl", "/dev/null"], "--crl cannot be combined with --revocation off"),
        ])
    func badInput(options: [String], message: String) async throws {
        let files = try Self.files()
        defer { try? FileManager.default.removeItem(atPath: files.directory) }
        for command in ["evaluate", "get"] {
            let result =
                command == "evaluate"
                ? try await Self.evaluate(files, options) : try await CLIRunner.run(["get", "https://revoked.example.test/", "--cacert", files.root] + options)
            #expect(result.status == 2, "\(command) \(options): \(result)")
            #expect(result.stderr == "servertrust: \(command): \(message)\n", "\(command) \(options): \(result.stderr)")
        }
    }

    @Test("--offline is evaluate's: get has no such option")
    func offlineIsEvaluates() async throws {
        let result = try await CLIRunner.run(["get", "https://example.test/", "--offline"])
        #expect(result.status == 2 && result.stderr.contains("--offline"), "\(result)")
    }
}
