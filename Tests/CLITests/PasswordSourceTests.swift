import Foundation
import Glibc
import ServerTrustLab
import Testing

/// Passwords that need not sit in argv (where `ps` and `/proc/PID/cmdline` show them to every
/// local user): `env:NAME`, `file:PATH` and `pass:TEXT`, OpenSSL's pass-phrase convention, for
/// `--pass` (curl's literal phrase still works), `-u USER --user-password` and
/// `--proxy-user USER --proxy-user-password`. Key slots: keySlot 120-121 (360-365).
@Suite("servertrust get: passwords from the environment or a file")
struct PasswordSourceTests {
    typealias Setup = CurlSpellingsTests.Setup
    static let host = CurlSpellingsTests.host

    /// A server that echoes the Authorization header it got.
    static func echoSetup() throws -> Setup {
        try Setup(
            keySlot: 120,
            configure: { configuration in
                configuration.handler = { request in .text("auth=\(request.header("Authorization") ?? "-")") }
            })
    }

    @Test("--pass env:, file:, pass: and a literal phrase open the PKCS#12 file; curl takes only the literal")
    func certificatePassword() async throws {
        let client = try CurlSpellingsTests.ClientSetup()
        let setup = client.setup
        defer { setup.server.stop() }
        let passwordFile = try LabFiles.write("pw\r\nsecond line\n", to: setup.directory + "/p12-password")
        let environment = ["SERVERTRUST_TEST_P12_PASSWORD": "pw"]
        let base = ["--cacert", setup.root, "--cert", client.p12, "--cert-type", "P12"]
        for pass in ["env:SERVERTRUST_TEST_P12_PASSWORD", "file:" + passwordFile, "pass:pw", "pw"] {
            let pair = try await setup.both(base + ["--pass", pass], environment: environment)
            #expect(pair.ours.status == 0, "--pass \(pass): \(pair.summary)")
            // curl's --pass is the phrase itself: only the literal one is right for curl.
            #expect(pair.curl.status == (pass == "pw" ? 0 : 58), "--pass \(pass): \(pair.summary)")
        }
        // A source that gives the wrong password is a wrong password.
        let wrong = try await CLIRunner.run(
            ["get", setup.url, "--resolve", setup.resolve] + base + ["--pass", "env:SERVERTRUST_TEST_P12_PASSWORD"],
            environment: setup.environment.merging(["SERVERTRUST_TEST_P12_PASSWORD": "nope"]) { _, new in new })
        #expect(wrong.status == 2 && wrong.stderr == "servertrust: get: --cert \(client.p12): wrong password\n", "\(wrong.stderr)")
    }

    @Test(
        "bad sources: exit 2, one line naming the option, the password never echoed, nothing sent",
        arguments: [
            (
                ["--cert", "C", "--pass", "env:SERVERTRUST_TEST_UNSET"],
                "--pass env:SERVERTRUST_TEST_UNSET: the environment variable SERVERTRUST_TEST_UNSET is not set"
            ),
            (["--cert", "C", "--pass", "env:"], "--pass env: needs a variable name (env:NAME)"),
            (["--cert", "C", "--pass", "file:/nonexistent/password"], "--pass file:/nonexistent/password: No such file or directory"),
            (["--cert", "C:pw", "--pass", "pw"], "--cert FILE:PASSWORD and --pass both give the password: give it once"),
            (["--pass", "pw"], "--pass needs --cert"),
            (["-u", "alice"], "-u alice has no password: write -u USER:PASS, or keep it out of argv with --user-password env:NAME or file:PATH"),
            (["--user", "alice"], "--user alice has no password: write --user USER:PASS"),
            (["-u", "alice:pw", "--user-password", "env:HOME"], "-u USER:PASS and --user-password both give the password: give it once"),
            (["-u", "alice", "--user-password", "hunter2"], "--user-password takes env:NAME, file:PATH or pass:TEXT"),
            (["--user-password", "env:HOME"], "--user-password needs -u USER"),
            (
                ["--proxy", "http://127.0.0.1:9", "--proxy-user", "p"],
                "--proxy-user p has no password: write --proxy-user USER:PASS, or keep it out of argv with --proxy-user-password env:NAME or file:PATH"
            ),
            (["--proxy", "http://127.0.0.1:9", "--proxy-user-password", "env:HOME"], "--proxy-user-password needs --proxy-user USER"),
        ])
    func badSources(_ arguments: [String], _ says: String) async throws {
        let setup = try Self.echoSetup()
        defer { setup.server.stop() }
        let certificate = try LabFiles.write(setup.pki.leaf.pem, to: setup.directory + "/C")
        let resolved = arguments.map { $0 == "C" ? certificate : $0 == "C:pw" ? certificate + ":pw" : $0 }
        let result = try await CLIRunner.run(["get", setup.url, "--resolve", setup.resolve, "--cacert", setup.root] + resolved)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("servertrust: get: \(says)") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(!result.stderr.contains("hunter2"))
        #expect(setup.server.statistics.connectionsAccepted == 0)
    }

    @Test("-u USER --user-password env:/file: sends what curl -u USER:PASS sends")
    func userPassword() async throws {
        let setup = try Self.echoSetup()
        defer { setup.server.stop() }
        let curl = try await CLIRunner.run(
            ["-sS", "--resolve", setup.resolve, "--cacert", setup.root, "-u", "alice:s3cret:with colon", setup.url],
            environment: setup.environment, executable: CurlBeside.curl)
        #expect(curl.status == 0 && curl.stdout.hasPrefix("auth=Basic "), "\(curl.stderr)")
        let passwordFile = try LabFiles.write("s3cret:with colon\n", to: setup.directory + "/user-password")
        for source in ["env:SERVERTRUST_TEST_USER_PASSWORD", "file:" + passwordFile, "pass:s3cret:with colon"] {
            let ours = try await CLIRunner.run(
                ["get", setup.url, "--resolve", setup.resolve, "--cacert", setup.root, "-u", "alice", "--user-password", source],
                environment: setup.environment.merging(["SERVERTRUST_TEST_USER_PASSWORD": "s3cret:with colon"]) { _, new in new })
            #expect(ours.status == 0 && ours.stdout == curl.stdout, "\(source): \(ours.stdout) \(ours.stderr)")
        }
    }

    @Test("--proxy-user USER --proxy-user-password env:NAME authenticates to the proxy; without it the proxy refuses (exit 4)")
    func proxyUserPassword() async throws {
        let setup = try Setup(keySlot: 121)
        defer { setup.server.stop() }
        let interception = try LabPKI.webChain(host: "mitm.invalid", keySlot: 53)
        var configuration = LabMITMRelay.Configuration(mode: .httpProxy, interceptionCA: interception.rootIssuer)
        configuration.hostOverrides = [Self.host: "127.0.0.1"]
        configuration.proxyCredentials = .init(user: "proxy", password: "pw")
        let relay = try LabMITMRelay.started(configuration)
        defer { relay.stop() }
        let interceptionRoot = try LabFiles.write(interception.root.pem, to: setup.directory + "/mitm.pem")
        let base = ["get", setup.url, "--proxy", relay.proxyURL, "--cacert", interceptionRoot]
        let environment = ["SERVERTRUST_TEST_PROXY_PASSWORD": "pw"]
        let through = try await CLIRunner.run(
            base + ["--proxy-user", "proxy", "--proxy-user-password", "env:SERVERTRUST_TEST_PROXY_PASSWORD"], environment: environment)
        #expect(through.status == 0 && through.stdout == "hello from curl-beside", "\(through.stderr)")
        let wrong = try await CLIRunner.run(base + ["--proxy-user", "proxy", "--proxy-user-password", "pass:nope"])
        #expect(wrong.status == 4, "\(wrong.stderr)")
    }

    /// A TCP listener that never accepts: a proxy that holds every client until its timeout,
    /// so the process under test is alive while its argv is read.
    final class BlackHole {
        let descriptor: Int32
        let port: UInt16

        init() throws {
            let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, length) } }
            guard socketDescriptor >= 0, bound == 0, listen(socketDescriptor, 16) == 0 else {
                close(socketDescriptor)
                throw CocoaError(.fileWriteUnknown)
            }
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketDescriptor, $0, &length) } }
            descriptor = socketDescriptor
            port = UInt16(bigEndian: address.sin_port)
        }

        deinit { close(descriptor) }
    }

    /// What `ps` shows of a running process: its /proc/PID/cmdline, NULs as spaces.
    static func commandLine(_ pid: Int32) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
        return String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }

    @Test(
        "-u, --proxy-user, --cert FILE:PASS, --pass and the password sources are blanked in /proc/PID/cmdline while the request runs, as curl blanks them",
        arguments: [
            ["get", "URL", "-u", "alice:s3cret-user", "--proxy-user", "bob:s3cret-proxy", "--cert", "P12FILE:pw", "--cert-type", "P12"],
            ["get", "URL", "--user=alice:s3cret-user", "--proxy-user=bob:s3cret-proxy", "-E", "P12FILE", "--pass", "pw"],
            ["get", "URL", "-u", "alice", "--user-password", "pass:s3cret-user", "--proxy-user", "bob", "--proxy-user-password=pass:s3cret-proxy"],
            ["inspect", "URL", "--proxy-user", "bob:s3cret-proxy"],
            ["pins", "URL", "--proxy-user=bob:s3cret-proxy"],
        ])
    func secretsBlankedInArgv(_ template: [String]) async throws {
        let client = try CurlSpellingsTests.ClientSetup()
        let setup = client.setup
        defer { setup.server.stop() }
        let proxy = try BlackHole()
        let arguments =
            template.map { $0 == "URL" ? setup.url : $0 == "P12FILE" ? client.p12 : $0 == "P12FILE:pw" ? client.p12 + ":pw" : $0 }
            + ["--proxy", "http://127.0.0.1:\(proxy.port)"]
            + (template[0] == "get" ? ["--cacert", setup.root, "-m", "60", "--connect-timeout", "60"] : ["--timeout", "60"])
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let child = try LabChildProcess(CLIRunner.binary, arguments, adding: [:], stdoutPath: directory + "/out", stderrPath: directory + "/err")
        defer { _ = child.stop(grace: .seconds(2)) }
        let secrets = ["s3cret-user", "s3cret-proxy", ":pw", " pw "]
        // Parsing takes milliseconds; the request then waits on the proxy for up to 60 s. The
        // command line is polled on a thread of its own (a loaded cooperative pool could sleep
        // a task past the whole window), and a read counts only if the process still ran after it.
        let pid = child.pid
        let url = setup.url
        let (seen, runningAfterRead) = await withCheckedContinuation { (continuation: CheckedContinuation<(String, Bool), Never>) in
            Thread.detachNewThread {
                var last = ""
                let deadline = ContinuousClock.now + .seconds(45)
                while ContinuousClock.now < deadline {
                    last = Self.commandLine(pid) ?? ""
                    let running = child.isRunning
                    if !running || (last.contains(url) && !secrets.contains(where: { last.contains($0) })) {
                        continuation.resume(returning: (last, running))
                        return
                    }
                    usleep(20_000)
                }
                continuation.resume(returning: (last, child.isRunning))
            }
        }
        #expect(runningAfterRead, "the command ended early: \((try? String(contentsOfFile: directory + "/err", encoding: .utf8)) ?? "")")
        #expect(seen.contains(setup.url), "\(seen)")
        for secret in secrets {
            #expect(!seen.contains(secret), "\(template): '\(secret)' readable in /proc/\(child.pid)/cmdline: \(seen)")
        }
    }

}
