import Foundation
import ServerTrustLab
import Testing

/// Certificate names reach the terminal: whoever issues a certificate, a man in the middle
/// minting one included, chooses them. A name with ESC, BEL, CR/LF or a C1 control must come
/// out escaped in every command that prints it, never drive the terminal or forge a line.
@Suite("terminal output of certificate names is escaped")
struct TerminalEscapingTests {
    static let host = "www.example.test"
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }
    /// An OSC that retitles the terminal, then a forged line of `inspect https://` output.
    static let hostileCN = "evil\u{1B}]0;owned\u{07}\r\n  Verified  yes, forged"
    /// A C1 CSI (U+009B) that turns text red, and a bidi override.
    static let hostileOrganization = "Org\u{9B}31m\u{202E}moc.elgoog"
    static let hostileSAN = "x\u{1B}[2J.example.test"

    struct Hostile {
        let pki: LabPKI
        let leaf: LabCertificate
        let directory: String
        var chainPath: String { directory + "/chain.pem" }
        var rootPath: String { directory + "/root.pem" }

        init() throws {
            pki = try LabPKI.webChain(
                host: TerminalEscapingTests.host, leafNotBefore: TerminalEscapingTests.now - LabClock.day,
                leafNotAfter: TerminalEscapingTests.now + 30 * LabClock.day, keySlot: 58)
            var spec = LabPKI.leafSpec(
                host: TerminalEscapingTests.host, keyAlgorithm: pki.leafKey.algorithm,
                subjectAltNames: [.dns(TerminalEscapingTests.host), .dns(TerminalEscapingTests.hostileSAN)],
                notBefore: TerminalEscapingTests.now - LabClock.day, notAfter: TerminalEscapingTests.now + 30 * LabClock.day)
            spec.subject = LabName([("O", TerminalEscapingTests.hostileOrganization), ("CN", TerminalEscapingTests.hostileCN)])
            leaf = try LabCertificate.issue(spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer)
            directory = try CLIRunner.temporaryDirectory()
            try LabPEM.bundle([leaf, pki.intermediate]).write(toFile: chainPath, atomically: true, encoding: .utf8)
            _ = try LabFiles.write(pki.root.pem, to: rootPath)
        }
    }

    /// Every control character but line feed and tab, every C1 control, and the bidi and
    /// line-separator characters, found in `text`.
    static func terminalControls(_ text: String) -> [String] {
        text.unicodeScalars.filter { scalar in
            switch scalar.value {
            case 0x0A, 0x09: return false
            case 0x00..<0x20, 0x7F..<0xA0, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
            default: return false
            }
        }.map { String(format: "U+%04X", $0.value) }
    }

    static func check(_ result: CLIRunner.Result, _ what: String) {
        #expect(terminalControls(result.stdout).isEmpty, "\(what) stdout: \(terminalControls(result.stdout))")
        #expect(terminalControls(result.stderr).isEmpty, "\(what) stderr: \(terminalControls(result.stderr))")
        let lines = (result.stdout + "\n" + result.stderr).split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("  Verified  yes, forged") }, "\(what): a forged line")
    }

    @Test("inspect FILE, pins FILE and evaluate print the names escaped")
    func offline() async throws {
        let hostile = try Hostile()
        defer { try? FileManager.default.removeItem(atPath: hostile.directory) }
        let inspect = try await CLIRunner.run(["inspect", hostile.chainPath])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        Self.check(inspect, "inspect")
        #expect(inspect.stdout.contains(#"evil\1B]0\;owned\07\0D\0A  Verified  yes"#), "\(inspect.stdout)")
        #expect(inspect.stdout.contains(#"DNS:x\1B[2J.example.test"#), "\(inspect.stdout)")

        let pins = try await CLIRunner.run(["pins", hostile.chainPath, "--host", Self.host])
        #expect(pins.status == 0, "\(pins.stderr)")
        Self.check(pins, "pins")

        for extra in [[], ["--explain"]] {
            let evaluate = try await CLIRunner.run(["evaluate", hostile.chainPath, "--host", "api.example.test", "--cacert", hostile.rootPath] + extra)
            #expect(evaluate.status == 1, "\(evaluate.stdout) \(evaluate.stderr)")
            Self.check(evaluate, "evaluate \(extra)")
        }
    }

    @Test("inspect https://, pins https:// and get's rejection print the served names escaped")
    func served() async throws {
        let hostile = try Hostile()
        defer { try? FileManager.default.removeItem(atPath: hostile.directory) }
        var configuration = LabTLSServer.Configuration(
            identity: LabTLSServer.Identity(chain: [hostile.leaf, hostile.pki.intermediate], key: hostile.pki.leafKey), name: "hostile")
        configuration.handler = { _ in .text("hello") }
        let server = try LabTLSServer.started(configuration)
        defer { server.stop() }
        // Another name for the same address: the certificate does not name it, so the
        // rejection lists the names it does carry.
        let other = "api.example.test"
        let inspect = try await CLIRunner.run(["inspect", server.url(host: other), "--resolve", "\(other):\(server.port):127.0.0.1"])
        #expect(inspect.status == 1, "\(inspect.stderr)")
        Self.check(inspect, "inspect https://")
        let pins = try await CLIRunner.run(["pins", server.url(host: Self.host), "--resolve", "\(Self.host):\(server.port):127.0.0.1"])
        #expect(pins.status == 0, "\(pins.stderr)")
        Self.check(pins, "pins https://")
        let get = try await CLIRunner.run(["get", server.url(host: other), "--cacert", hostile.rootPath, "--resolve", "\(other):\(server.port):127.0.0.1"])
        #expect(get.status == 1, "\(get.stderr)")
        Self.check(get, "get")
        #expect(get.stderr.contains(#"x\1B[2J.example.test"#), "\(get.stderr)")
    }
}
