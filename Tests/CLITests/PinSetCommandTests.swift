import CertificateParsing
import Foundation
import ServerTrustLab
import Testing

/// `servertrust pinset keygen|sign|verify|serve`, run as an operator would (key slots 297-299:
/// keySlot 97 for the endpoint's TLS identity).
@Suite("servertrust pinset", .serialized)
struct PinSetCommandTests {
    static let policy =
        #"{"version": 1, "hosts": [{"host": "api.example.test", "pins": ["sha256/C5+lpZ7tcVwmwQIMcRtPbsQtWLABXhQzejna0wHFr8M=", "sha256/diGVwiVYbubAI3RW4hB9xU8e/CH2GnkuvVFZE8zmgzI="]}]}"#

    /// Two signing keys made by `keygen`, and the public keys it printed.
    struct Keys {
        let directory: String
        let publicKeys: [String]
        var paths: [String] { [directory + "/one.pem", directory + "/two.pem"] }

        init() async throws {
            directory = try CLIRunner.temporaryDirectory()
            var printed: [String] = []
            for (name, algorithm) in [("one", "ed25519"), ("two", "p256")] {
                let result = try await CLIRunner.run(["pinset", "keygen", "--out", directory + "/\(name).pem", "--algorithm", algorithm])
                #expect(result.status == 0, "\(result.stderr)")
                let line = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("public key: ") })
                printed.append(String(line.dropFirst("public key: ".count)))
            }
            publicKeys = printed
            try Data(PinSetCommandTests.policy.utf8).write(to: URL(fileURLWithPath: directory + "/policy.json"))
        }

        func verify(_ document: String, _ extra: [String] = []) async throws -> CLIRunner.Result {
            try await CLIRunner.run(["pinset", "verify", document] + publicKeys.flatMap { ["--key", $0] } + extra)
        }
    }

    @Test("keygen writes a 0600 PKCS #8 key, prints the embedded form, and never overwrites a file")
    func keygen() async throws {
        let keys = try await Keys()
        defer { try? FileManager.default.removeItem(atPath: keys.directory) }
        for (path, publicKey) in zip(keys.paths, keys.publicKeys) {
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            let pem = try String(contentsOfFile: path, encoding: .utf8)
            #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
            // The printed key is the file's public half, as OpenSSL's own reader derives it.
            let spki = try #require(Base64.decode(Array(publicKey.utf8)))
            #expect(try LabKey(privateKeyPEM: pem).publicKeyInfoDER == spki)
            _ = try SubjectPublicKeyInfo(derEncoded: spki)
        }
        let again = try await CLIRunner.run(["pinset", "keygen", "--out", keys.paths[0]])
        #expect(again.status == 2 && again.stderr.split(separator: "\n").count == 1 && again.stderr.contains("File exists"))
    }

    @Test("sign then verify: accepted with its serial; refused with the reason (exit 1) for a replayed serial, an expired window, a stranger's key")
    func signAndVerify() async throws {
        let keys = try await Keys()
        defer { try? FileManager.default.removeItem(atPath: keys.directory) }
        let document = keys.directory + "/set4.json"
        let signed = try await CLIRunner.run([
            "pinset", "sign", keys.directory + "/policy.json", "--key", keys.paths[1], "--serial", "4", "--expires-in", "30", "--out", document,
        ])
        #expect(signed.status == 0, "\(signed.stderr)")
        let ok = try await keys.verify(document, ["--json"])
        #expect(ok.status == 0, "\(ok.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(ok.stdout.utf8)) as? [String: Any])
        #expect(object["accepted"] as? Bool == true && object["serial"] as? Int == 4 && object["hosts"] as? [String] == ["api.example.test"])

        let cases: [(arguments: [String], reason: String)] = [
            (["--after-serial", "4"], "serialNotIncreasing"),
            (["--at", "2099-01-01"], "expired"),
            (["--at", "2000-01-01"], "notYetValid"),
        ]
        for (arguments, reason) in cases {
            let refused = try await keys.verify(document, arguments)
            #expect(refused.status == 1 && refused.stderr.contains("refused: \(reason)"), "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1)
        }
        let stranger = try await CLIRunner.run(["pinset", "keygen", "--out", keys.directory + "/stranger.pem"])
        let strangerKey = String(try #require(stranger.stdout.split(separator: "\n").first { $0.hasPrefix("public key: ") }).dropFirst(12))
        let unknown = try await CLIRunner.run(["pinset", "verify", document, "--key", keys.publicKeys[0], "--key", strangerKey])
        #expect(unknown.status == 1 && unknown.stderr.contains("refused: unknownKey"), "\(unknown.stderr)")
        // A tampered copy: one payload byte changed in the base64.
        var text = try String(contentsOfFile: document, encoding: .utf8)
        let marker = try #require(text.range(of: "\"payload\": \""))
        let index = text.index(marker.upperBound, offsetBy: 40)
        text.replaceSubrange(index...index, with: text[index] == "A" ? "B" : "A")
        try Data(text.utf8).write(to: URL(fileURLWithPath: keys.directory + "/tampered.json"))
        let tampered = try await keys.verify(keys.directory + "/tampered.json")
        #expect(tampered.status == 1 && (tampered.stderr.contains("badSignature") || tampered.stderr.contains("malformed")), "\(tampered.stderr)")
    }

    @Test("bad input: one key for verify, a policy with file paths, a bad serial, an RSA key, a directory; one line and exit 2")
    func badInput() async throws {
        let keys = try await Keys()
        defer { try? FileManager.default.removeItem(atPath: keys.directory) }
        let rsa = try LabKey.shared(.rsa(bits: 2048), slot: 297)
        try Data(try rsa.privateKeyPEM().utf8).write(to: URL(fileURLWithPath: keys.directory + "/rsa.pem"))
        try Data(#"{"version": 1, "anchors": ["/etc/ssl/certs"], "hosts": [{"host": "a.test"}]}"#.utf8).write(
            to: URL(fileURLWithPath: keys.directory + "/paths.json"))
        let runs: [[String]] = [
            ["pinset", "verify", keys.directory + "/policy.json", "--key", keys.publicKeys[0]],
            ["pinset", "sign", keys.directory + "/paths.json", "--key", keys.paths[0], "--serial", "1"],
            ["pinset", "sign", keys.directory + "/policy.json", "--key", keys.paths[0], "--serial", "9007199254740992"],
            ["pinset", "sign", keys.directory + "/policy.json", "--key", keys.directory + "/rsa.pem", "--serial", "1"],
            ["pinset", "sign", keys.directory, "--key", keys.paths[0], "--serial", "1"],
            ["pinset", "frobnicate"],
        ]
        for arguments in runs {
            let result = try await CLIRunner.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.hasPrefix("servertrust: pinset: "), "\(arguments): \(result.stderr)")
        }
    }

    @Test("the worked example of docs/pinset-format.md verifies with its published keys, and not after its window")
    func workedExample() async throws {
        let examples = repositoryRoot().appendingPathComponent("examples/pinsets").path
        let keys = try String(contentsOfFile: examples + "/signing-keys.txt", encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(keys.count == 2)
        let arguments = ["pinset", "verify", examples + "/pinset-2.json"] + keys.flatMap { ["--key", $0] }
        let ok = try await CLIRunner.run(arguments + ["--at", "2027-01-01"])
        #expect(ok.status == 0 && ok.stdout.contains("pin set 2 verifies"), "\(ok.stdout) \(ok.stderr)")
        let late = try await CLIRunner.run(arguments + ["--at", "2027-03-02"])
        #expect(late.status == 1 && late.stderr.contains("expired"))
    }

    @Test("serve: the document over HTTPS on loopback with an ETag, 304 for If-None-Match, a replaced file served at once")
    func serve() async throws {
        let keys = try await Keys()
        defer { try? FileManager.default.removeItem(atPath: keys.directory) }
        let pki = try LabPKI.webChain(
            host: "pins.example.test", leafNotBefore: Int64(Date().timeIntervalSince1970) - LabClock.day,
            leafNotAfter: Int64(Date().timeIntervalSince1970) + 30 * LabClock.day, keySlot: 97)
        try pki.write(to: keys.directory)
        let document = keys.directory + "/set.json"
        #expect(
            try await CLIRunner.run(["pinset", "sign", keys.directory + "/policy.json", "--key", keys.paths[0], "--serial", "1", "--out", document]).status == 0
        )
        // A long-lived child: spawned by LabChildProcess (it inherits no other test's descriptors),
        // its first line (the URL) read from its output file without holding a pool thread.
        let outputPath = keys.directory + "/serve.out"
        let serve = try LabChildProcess(
            CLIRunner.binary, ["pinset", "serve", document, "--cert", keys.directory + "/chain.pem", "--key", keys.directory + "/leaf.key"],
            stdoutPath: outputPath, stderrPath: outputPath)
        defer { serve.stop() }
        var lines: [String] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, serve.isRunning {
            let text = String(decoding: FileManager.default.contents(atPath: outputPath) ?? Data(), as: UTF8.self)
            if text.split(separator: "\n").count >= 2 {
                lines = text.split(separator: "\n").map(String.init)
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        // The URL names the host the certificate is for (a 127.0.0.1 URL fails every client's
        // host check); the next line says how to reach it. Both are used exactly as printed.
        let url = try #require(lines.first?.split(separator: " ").last.map(String.init))
        #expect(url.hasPrefix("https://pins.example.test:") && url.hasSuffix("/pinset.json"), "\(lines)")
        let resolve = try #require(lines.dropFirst().first?.split(separator: " ").last.map(String.init), "\(lines)")
        #expect(lines.count == 2 && lines[1].contains("--resolve"), "\(lines)")
        let printedGet = try await CLIRunner.run(["get", url, "--cacert", keys.directory + "/root.pem", "--resolve", resolve])
        let served = try String(contentsOfFile: document, encoding: .utf8)
        #expect(printedGet.status == 0 && printedGet.stdout == served, "\(printedGet.stderr)")
        func curl(_ extra: [String] = []) async throws -> CLIRunner.Result {
            try await CLIRunner.run(
                ["-s", "-D", "-", "--cacert", keys.directory + "/root.pem", "--resolve", resolve] + extra + [url], executable: "/usr/bin/curl")
        }
        let first = try await curl()
        #expect(first.status == 0 && first.stdout.hasPrefix("HTTP/1.1 200"), "\(first.stdout) \(first.stderr)")
        #expect(first.stdout.hasSuffix(try String(contentsOfFile: document, encoding: .utf8)))
        let etag = try #require(first.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag: ") }).dropFirst(6)
        let conditional = try await curl(["-H", "If-None-Match: \(etag)"])
        #expect(conditional.stdout.hasPrefix("HTTP/1.1 304"), "\(conditional.stdout)")
        // Publishing = replacing the file: the next request gets it, with a new tag.
        #expect(
            try await CLIRunner.run(["pinset", "sign", keys.directory + "/policy.json", "--key", keys.paths[0], "--serial", "2", "--out", document]).status == 0
        )
        let second = try await curl(["-H", "If-None-Match: \(etag)"])
        #expect(second.stdout.hasPrefix("HTTP/1.1 200"), "\(second.stdout)")
        await #expect(try keys.verify(document, ["--after-serial", "1"]).status == 0)
    }
}
