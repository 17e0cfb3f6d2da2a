import CertificateParsing
import Foundation
import ServerTrustLab
import Testing

/// `servertrust pins FILE|https://HOST`, run as a user runs it; every form is checked by the
/// tool that reads it where one is at hand: the ServerTrust and TrustKit forms by
/// `servertrust evaluate --policy` (PolicyFile.load), the ATS form by the property-list
/// parser, the curl form by curl itself (key slots 279-290: keySlot 93-96).
@Suite("servertrust pins")
struct PinsCommandTests {
    static let host = "www.pins.test"
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }
    /// A spare key's pin, as `openssl pkey -pubout -outform DER | openssl dgst -sha256 -binary | base64` prints it.
    static let sparePin = "IKOvAC5GbNlBN8FCd8u8d3I4riNIMX5c7w5L/wR+ytQ="

    struct Fixture {
        let pki: LabPKI
        let directory: String
        let roots: String
        let chain: String
        var environment: [String: String] { ["SSL_CERT_FILE": roots, "SSL_CERT_DIR": directory + "/no-such-dir"] }

        init(leafDays: Int64 = 90, keySlot: Int = 93) throws {
            pki = try LabPKI.webChain(
                host: PinsCommandTests.host, leafNotBefore: PinsCommandTests.now - LabClock.day,
                leafNotAfter: PinsCommandTests.now + leafDays * LabClock.day, keySlot: keySlot)
            directory = try CLIRunner.temporaryDirectory()
            roots = try LabFiles.writeBundle([pki.root], to: directory + "/roots.pem")
            chain = try LabFiles.writeBundle(pki.serverChain, to: directory + "/chain.pem")
        }

        func pins(_ arguments: [String]) async throws -> CLIRunner.Result {
            try await CLIRunner.run(["pins"] + arguments, environment: environment)
        }

        func evaluate(_ chain: String, policy: String) async throws -> CLIRunner.Result {
            try await CLIRunner.run(["evaluate", chain, "--host", PinsCommandTests.host, "--policy", policy], environment: environment)
        }

        func write(_ text: String, _ name: String) throws -> String { try LabFiles.write(text, to: directory + "/" + name) }
        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    static func pin(_ certificate: LabCertificate) throws -> String { try Certificate(derEncoded: certificate.der).spkiSHA256Base64 }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("the ServerTrust form loads with PolicyFile and decides: enforcing with the leaf and CA pins, a warning without a spare")
    func serverTrustPolicy() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let intermediatePin = try Self.pin(fixture.pki.intermediate)
        let rootPin = try Self.pin(fixture.pki.root)

        let withoutSpare = try await fixture.pins([fixture.chain, "--format", "json"])
        #expect(withoutSpare.status == 0, "\(withoutSpare.stderr)")
        #expect(withoutSpare.stderr.contains("servertrust: pins: warning: no pin is a true spare"), "\(withoutSpare.stderr)")
        let document = try Self.object(withoutSpare.stdout)
        #expect(document["version"] as? Int == 1)
        let entry = try #require((document["hosts"] as? [[String: Any]])?.first)
        #expect(entry["host"] as? String == Self.host)
        // CA keys, not the leaf's: the root of the valid path (found among the system roots),
        // then the intermediate on it. Two distinct pins: the set enforces (the backup-pin rule
        // is decided from the pins alone).
        #expect(entry["pins"] as? [String] == ["sha256/" + rootPin, "sha256/" + intermediatePin])
        #expect(entry["enforcePinning"] as? Bool == true)
        let withoutSparePath = try fixture.write(withoutSpare.stdout, "without-spare.json")
        let loaded = try await fixture.evaluate(fixture.chain, policy: withoutSparePath)
        #expect(loaded.status == 0, "\(loaded.stdout) \(loaded.stderr)")

        let enforcing = try await fixture.pins([fixture.chain, "--format", "json", "--backup-pin", Self.sparePin])
        #expect(enforcing.status == 0, "\(enforcing.stderr)")
        #expect(!enforcing.stderr.contains("true spare"), "\(enforcing.stderr)")
        let enforcingEntry = try #require((try Self.object(enforcing.stdout)["hosts"] as? [[String: Any]])?.first)
        #expect(enforcingEntry["pins"] as? [String] == ["sha256/" + rootPin, "sha256/" + intermediatePin, "sha256/" + Self.sparePin])
        #expect(enforcingEntry["enforcePinning"] as? Bool == true)
        let policy = try fixture.write(enforcing.stdout, "policy.json")
        let trusted = try await fixture.evaluate(fixture.chain, policy: policy)
        #expect(trusted.status == 0, "\(trusted.stdout) \(trusted.stderr)")
        #expect(trusted.stdout.hasPrefix("trusted: \(Self.host)"), "\(trusted.stdout)")

        // The pins hold: a chain from another CA, trusted by the system roots, is refused.
        let stranger = try LabPKI.webChain(
            host: Self.host, leafNotBefore: Self.now - LabClock.day,
            leafNotAfter: Self.now + 30 * LabClock.day, keySlot: 94)
        let strangerChain = try LabFiles.writeBundle(stranger.serverChain, to: fixture.directory + "/stranger.pem")
        let bothRoots = try LabFiles.writeBundle([fixture.pki.root, stranger.root], to: fixture.directory + "/both.pem")
        let refused = try await CLIRunner.run(
            ["evaluate", strangerChain, "--host", Self.host, "--policy", policy],
            environment: ["SSL_CERT_FILE": bothRoots, "SSL_CERT_DIR": fixture.directory + "/no-such-dir"])
        #expect(refused.status == 1, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stdout.contains("spkiPinningFailed"), "\(refused.stdout)")
    }

    @Test("the json and trustkit forms evaluate trusted against the chain they were made from, however the server sends it")
    func formsTrustTheirOwnChain() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let pki = fixture.pki
        let variations = [
            ("as made", pki.serverChain),
            ("with its root", pki.serverChain + [pki.root]),
            ("reordered, with its root", [pki.leaf, pki.root, pki.intermediate]),
        ]
        for format in ["json", "trustkit"] {
            for spare in [[], ["--backup-pin", Self.sparePin]] {
                let made = try await fixture.pins([fixture.chain, "--format", format] + spare)
                #expect(made.status == 0, "\(made.stderr)")
                let policy = try fixture.write(made.stdout, "\(format)-\(spare.count).json")
                for (label, chain) in variations {
                    let path = try LabFiles.writeBundle(chain, to: fixture.directory + "/chain-\(format)-\(spare.count)-\(label.count).pem")
                    // The root as the anchor, and as the only anchor.
                    for anchors in [[], ["--anchors", fixture.roots, "--anchors-only"]] {
                        let result = try await CLIRunner.run(
                            ["evaluate", path, "--host", Self.host, "--policy", policy] + anchors, environment: fixture.environment)
                        #expect(result.status == 0, "\(format) \(spare) \(label) \(anchors): \(result.stdout)\(result.stderr)")
                    }
                }
                // Without a spare, --explain warns that none of the pins is one.
                let explained = try await CLIRunner.run(
                    ["evaluate", fixture.chain, "--host", Self.host, "--policy", policy, "--explain"], environment: fixture.environment)
                #expect(explained.stdout.contains("none is a spare") == spare.isEmpty, "\(format) \(spare): \(explained.stdout)")
            }
        }
    }

    @Test("from a live server: every form, the backup explained, nothing sent")
    func fromServer() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let server = try LabTLSServer.started(LabTLSServer.Configuration(identity: .init(pki: fixture.pki), name: "cli-pins"))
        defer { server.stop() }
        let url = "https://\(Self.host):\(server.port)"
        let result = try await fixture.pins([url, "--resolve", "\(Self.host):\(server.port):127.0.0.1"])
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        let leafPin = try Self.pin(fixture.pki.leaf)
        let rootPin = try Self.pin(fixture.pki.root)
        let intermediatePin = try Self.pin(fixture.pki.intermediate)
        #expect(out.hasPrefix("Pins for \(Self.host) (served by \(url)/, 2 certificates)"), "\(out)")
        #expect(out.contains("Pin:     sha256/\(rootPin)  (the root's key"), "\(out)")
        #expect(out.contains("Pin:     sha256/\(intermediatePin)  (the intermediate's key"), "\(out)")
        #expect(!out.contains("Pin:     sha256/\(leafPin)"), "\(out)")
        #expect(out.contains("Why CA keys:"))
        #expect(out.contains("intermediate  sha256/\(intermediatePin)"))
        #expect(out.contains("from the system roots"))
        for section in ["== ServerTrust policy", "== TrustKit", "== OkHttp (Kotlin) ==", "== App Transport Security (Info.plist) ==", "== curl =="] {
            #expect(out.contains(section), "missing \(section)")
        }
        #expect(!out.contains(".add(\"\(Self.host)\", \"sha256/\(leafPin)\")"))
        #expect(out.contains(".add(\"\(Self.host)\", \"sha256/\(rootPin)\")"))
        #expect(out.contains("<string>\(rootPin)</string>"))
        #expect(out.contains("curl --pinnedpubkey 'sha256//\(leafPin)' \(url)/"))
        // The handshake was aborted once the chain arrived.
        #expect(server.statistics.requestsServed == 0)
    }

    @Test("the TrustKit form is a TrustKit dictionary PolicyFile reads")
    func trustKit() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let result = try await fixture.pins([fixture.chain, "--format", "trustkit", "--backup-pin", "sha256//" + Self.sparePin])
        #expect(result.status == 0, "\(result.stderr)")
        let document = try Self.object(result.stdout)
        #expect(document["kTSKSwizzleNetworkDelegates"] as? Bool == false)
        let domain = try #require((document["kTSKPinnedDomains"] as? [String: Any])?[Self.host] as? [String: Any])
        #expect(domain["kTSKPublicKeyHashes"] as? [String] == [try Self.pin(fixture.pki.root), try Self.pin(fixture.pki.intermediate), Self.sparePin])
        #expect(domain["kTSKEnforcePinning"] as? Bool == true)
        #expect(domain["kTSKDisableDefaultReportUri"] as? Bool == true)
        let path = try fixture.write(result.stdout, "trustkit.json")
        let evaluated = try await fixture.evaluate(fixture.chain, policy: path)
        #expect(evaluated.status == 0, "\(evaluated.stdout) \(evaluated.stderr)")
    }

    @Test("the ATS form is a valid property list with NSPinnedDomains")
    func ats() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let caOnly = try await fixture.pins([fixture.chain, "--format", "ats"])
        #expect(caOnly.status == 0, "\(caOnly.stderr)")
        func parse(_ fragment: String) throws -> [String: Any] {
            let document = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n" + fragment + "\n</dict>\n</plist>\n"
            let plist = try PropertyListSerialization.propertyList(from: Data(document.utf8), format: nil)
            let ats = try #require((plist as? [String: Any])?["NSAppTransportSecurity"] as? [String: Any])
            return try #require((ats["NSPinnedDomains"] as? [String: Any])?[Self.host] as? [String: Any])
        }
        let domain = try parse(caOnly.stdout)
        #expect(domain["NSIncludesSubdomains"] as? Bool == false)
        let ca = try #require(domain["NSPinnedCAIdentities"] as? [[String: String]])
        // The CA keys of the valid path: the root's, then the intermediate's.
        #expect(ca.map { $0["SPKI-SHA256-BASE64"] } == [try Self.pin(fixture.pki.root), try Self.pin(fixture.pki.intermediate)])
        #expect(domain["NSPinnedLeafIdentities"] == nil, "ATS requires both sets to match: the leaf is pinned only with a spare")
        let withSpare = try await parse(try fixture.pins([fixture.chain, "--format", "ats", "--backup-pin", Self.sparePin]).stdout)
        let leaf = try #require(withSpare["NSPinnedLeafIdentities"] as? [[String: String]])
        #expect(leaf.map { $0["SPKI-SHA256-BASE64"] } == [try Self.pin(fixture.pki.leaf), Self.sparePin])
    }

    @Test("the OkHttp and curl forms; curl accepts its own line against the server")
    func okHttpAndCurl() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let leafPin = try Self.pin(fixture.pki.leaf)
        let rootPin = try Self.pin(fixture.pki.root)
        let okhttp = try await fixture.pins([fixture.chain, "--format", "okhttp"])
        #expect(okhttp.status == 0)
        #expect(okhttp.stdout.contains("CertificatePinner.Builder()"))
        #expect(
            okhttp.stdout.contains("    .add(\"\(Self.host)\", \"sha256/\(rootPin)\") // root: CN=ServerTrust Lab Root CA"),
            "\(okhttp.stdout)")
        #expect(okhttp.stdout.contains(".build()"))

        let server = try LabTLSServer.started(LabTLSServer.Configuration(identity: .init(pki: fixture.pki), name: "cli-pins-curl"))
        defer { server.stop() }
        let url = "https://\(Self.host):\(server.port)"
        let curl = try await fixture.pins([url, "--resolve", "\(Self.host):\(server.port):127.0.0.1", "--format", "curl"])
        #expect(curl.status == 0, "\(curl.stderr)")
        let line = try #require(curl.stdout.split(separator: "\n").first { $0.hasPrefix("curl ") })
        #expect(line == "curl --pinnedpubkey 'sha256//\(leafPin)' \(url)/")
        let pinned = try #require(line.split(separator: "'").dropFirst().first.map(String.init))
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else { return }
        let run = try await CLIRunner.run(
            [
                "-sS", "-o", "/dev/null", "--cacert", fixture.roots, "--resolve", "\(Self.host):\(server.port):127.0.0.1",
                "--pinnedpubkey", pinned, url + "/",
            ], executable: "/usr/bin/curl")
        #expect(run.status == 0, "curl refused its own --pinnedpubkey line: \(run.stderr)")
    }

    @Test("warnings: a pinned certificate expiring within 30 days, an incomplete served chain")
    func warnings() async throws {
        let fixture = try Fixture(leafDays: 10, keySlot: 95)
        defer { fixture.remove() }
        let server = try LabTLSServer.started(
            LabTLSServer.Configuration(
                identity: .init(chain: [fixture.pki.leaf], key: fixture.pki.leafKey), name: "cli-pins-incomplete"))
        defer { server.stop() }
        let result = try await fixture.pins([
            "https://\(Self.host):\(server.port)", "--resolve", "\(Self.host):\(server.port):127.0.0.1",
            "--format", "json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("servertrust: pins: warning: the pinned leaf CN=\(Self.host) expires in 9 days")
                || result.stderr.contains("servertrust: pins: warning: the pinned leaf CN=\(Self.host) expires in 10 days"), "\(result.stderr)")
        #expect(result.stderr.contains("servertrust: pins: warning: the chain is incomplete"), "\(result.stderr)")
        // The config is still printed, and still loads.
        let path = try fixture.write(result.stdout, "policy.json")
        let loaded = try await CLIRunner.run(["evaluate", fixture.chain, "--host", Self.host, "--policy", path], environment: fixture.environment)
        #expect(loaded.status == 0, "\(loaded.stdout) \(loaded.stderr)")
        // In the full report the warnings come with the analysis, on stdout. With the
        // intermediate the pins are CA keys, so the leaf's short life is no warning.
        let report = try await fixture.pins([fixture.chain])
        #expect(report.stdout.contains("warning: no pin is a true spare"), "\(report.stdout)")
        #expect(!report.stdout.contains("warning: the pinned leaf"), "\(report.stdout)")
        #expect(!report.stdout.contains("incomplete"), "the file holds the intermediate")

        // A complete chain valid for 90 days warns about neither.
        let healthy = try Fixture(keySlot: 93)
        defer { healthy.remove() }
        let quiet = try await healthy.pins([healthy.chain, "--format", "json", "--backup-pin", Self.sparePin])
        #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
    }

    @Test("a private-CA server: pins https://HOST --cacert ca.pem proposes the private root and the intermediate, a set that enforces and refuses an impostor")
    func privateCA() async throws {
        // The server sends leaf + intermediate; its root is private (not among the system roots).
        let fixture = try Fixture(keySlot: 94)
        defer { fixture.remove() }
        // Another CA with a certificate for the same name: the impostor below.
        let stranger = try LabPKI.webChain(
            host: Self.host, algorithm: .p384, leafNotBefore: Self.now - LabClock.day, leafNotAfter: Self.now + 90 * LabClock.day, keySlot: 96)
        let systemRoots = try LabFiles.writeBundle([stranger.root], to: fixture.directory + "/system.pem")
        let environment = ["SSL_CERT_FILE": systemRoots, "SSL_CERT_DIR": fixture.directory + "/no-such-dir"]
        let caFile = try LabFiles.writeBundle([fixture.pki.root], to: fixture.directory + "/ca.pem")
        let server = try LabTLSServer.started(LabTLSServer.Configuration(identity: .init(pki: fixture.pki), name: "cli-pins-private"))
        defer { server.stop() }
        let url = "https://\(Self.host):\(server.port)"
        let resolve = ["--resolve", "\(Self.host):\(server.port):127.0.0.1"]
        let rootPin = try Self.pin(fixture.pki.root)
        let intermediatePin = try Self.pin(fixture.pki.intermediate)

        let report = try await CLIRunner.run(["pins", url, "--cacert", caFile] + resolve, environment: environment)
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.contains("Verified for \(Self.host) against the roots in \(caFile): CN=\(Self.host)"), "\(report.stdout)")
        #expect(report.stdout.contains("Pin:     sha256/\(rootPin)  (the root's key"), "\(report.stdout)")
        #expect(report.stdout.contains("Pin:     sha256/\(intermediatePin)  (the intermediate's key"), "\(report.stdout)")
        #expect(report.stdout.contains("from the --cacert roots"), "\(report.stdout)")
        #expect(!report.stdout.contains("incomplete") && !report.stdout.contains("make the server send"), "\(report.stdout)")

        // The json form is a working pin set: get with it and the private root accepts the server...
        let json = try await CLIRunner.run(["pins", url, "--cacert", caFile, "--format", "json"] + resolve, environment: environment)
        #expect(json.status == 0 && json.stderr.contains("no pin is a true spare"), "\(json.stderr)")
        let hosts = try #require(try Self.object(json.stdout)["hosts"] as? [[String: Any]])
        #expect(hosts.first?["pins"] as? [String] == ["sha256/" + rootPin, "sha256/" + intermediatePin] && hosts.first?["enforcePinning"] as? Bool == true)
        let policy = try fixture.write(json.stdout, "private-policy.json")
        let accepted = try await CLIRunner.run(["get", url, "--cacert", caFile, "--policy", policy] + resolve, environment: environment)
        #expect(accepted.status == 0, "\(accepted.stderr)")
        // ...and refuses an impostor for the same name from another CA that the client also trusts.
        let impostor = try LabTLSServer.started(LabTLSServer.Configuration(identity: .init(pki: stranger), name: "cli-pins-impostor"))
        defer { impostor.stop() }
        let refused = try await CLIRunner.run(
            [
                "get", "https://\(Self.host):\(impostor.port)", "--cacert", caFile, "--cacert", systemRoots, "--policy", policy,
                "--resolve", "\(Self.host):\(impostor.port):127.0.0.1",
            ], environment: environment)
        #expect(refused.status == 1 && refused.stderr.contains("pin"), "\(refused.stderr)")

        // Without --cacert: not verified, the intermediate is the only CA key, and the advice
        // names --cacert for a missing root rather than only "send the intermediates".
        let plain = try await CLIRunner.run(["pins", url] + resolve, environment: environment)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.contains("NOT verified for \(Self.host) against the system roots: untrustedRoot"), "\(plain.stdout)")
        #expect(plain.stdout.contains("if it is your private root CA, give it with --cacert FILE"), "\(plain.stdout)")

        // The same from the chain file.
        let file = try await CLIRunner.run(["pins", fixture.chain, "--cacert", caFile, "--format", "json"], environment: environment)
        #expect(file.status == 0 && file.stdout == json.stdout, "\(file.stderr)")
    }

    @Test("a self-signed leaf: no CA key, the leaf is pinned and the spare is required")
    func selfSigned() async throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = try LabKey.shared(.p256, slot: 290)
        let certificate = try LabCertificate.issue(
            LabPKI.leafSpec(host: Self.host, keyAlgorithm: .p256, notBefore: Self.now - LabClock.day, notAfter: Self.now + 365 * LabClock.day),
            subjectKey: key)
        let path = try LabFiles.writeBundle([certificate], to: directory + "/self.pem")
        let result = try await CLIRunner.run(["pins", path, "--format", "trustkit"], environment: ["SSL_CERT_FILE": path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("the leaf is self-signed"), "\(result.stderr)")
        let domain = try #require((try Self.object(result.stdout)["kTSKPinnedDomains"] as? [String: Any])?[Self.host] as? [String: Any])
        #expect((domain["kTSKPublicKeyHashes"] as? [String])?.count == 1)
        #expect(domain["kTSKEnforcePinning"] as? Bool == false)
        let report = try await CLIRunner.run(["pins", path], environment: ["SSL_CERT_FILE": path])
        #expect(report.stdout.contains("(the server's own key: there is no CA"), "\(report.stdout)")
    }

    @Test("bad input exits 2 with one line; an unreachable server exits 4")
    func badInput() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let cases: [[String]] = [
            ["pins"],
            ["pins", fixture.chain, fixture.chain],
            ["pins", fixture.chain, "--format", "yaml"],
            ["pins", fixture.chain, "--backup-pin", "not-a-pin"],
            ["pins", fixture.chain, "--backup-pin", "sha1/AAAA"],
            ["pins", fixture.chain, "--backup-pin", "sha384/" + String(repeating: "A", count: 64)],
            ["pins", fixture.chain, "--host", "*.pins.test"],
            ["pins", fixture.chain, "--host", "bad host"],
            ["pins", fixture.chain, "--resolve", "\(Self.host):443:127.0.0.1"],
            ["pins", fixture.chain, "--bogus"],
            ["pins", fixture.directory + "/absent.pem"],
            ["pins", fixture.roots + "-garbage"],
            ["pins", "https://\(Self.host)/", "--host", "other.test"],
            ["pins", "https://\(Self.host)/", "--resolve", "nonsense"],
            ["pins", "http://\(Self.host)/"],
        ]
        _ = try fixture.write("not a certificate", "roots.pem-garbage")
        for arguments in cases {
            let result = try await fixture.pins(Array(arguments.dropFirst()))
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("servertrust: pins: "), "\(arguments): \(result.stderr)")
        }
        let server = try LabTLSServer.started(LabTLSServer.Configuration(identity: .init(pki: fixture.pki), name: "cli-pins-gone"))
        let port = server.port
        server.stop()
        let unreachable = try await fixture.pins(["https://\(Self.host):\(port)", "--resolve", "\(Self.host):\(port):127.0.0.1", "--timeout", "5"])
        #expect(unreachable.status == 4, "\(unreachable.stderr)")
        #expect(unreachable.stderr.hasPrefix("servertrust: pins: https://\(Self.host):\(port)/: "), "\(unreachable.stderr)")
    }
}
