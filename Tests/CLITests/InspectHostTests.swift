import CertificateParsing
import Foundation
import ServerTrustLab
import Testing

/// `servertrust inspect https://HOST[:PORT]` against loopback Lab servers, with a generated
/// SSL_CERT_FILE as the "system roots" (key slots 270-278: keySlot 90-92).
@Suite("servertrust inspect https://HOST")
struct InspectHostTests {
    static let host = "www.inspect.test"
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// A server for `host` whose chain is valid on today's wall clock, and two root bundles:
    /// one holding its root (verifies) and one holding a stranger's root (does not).
    struct Fixture {
        let pki: LabPKI
        let server: LabTLSServer
        let directory: String
        let trustedRoots: String
        let strangerRoots: String

        init(chain: ((LabPKI) -> [LabCertificate])? = nil) throws {
            pki = try LabPKI.webChain(
                host: InspectHostTests.host, leafNotBefore: InspectHostTests.now - LabClock.day,
                leafNotAfter: InspectHostTests.now + 90 * LabClock.day, keySlot: 90)
            // Another CA, named differently (a same-named root would be a badSignature, not an unknown root).
            let stranger = try LabPKI.webChain(host: InspectHostTests.host, algorithm: .p384, keySlot: 91)
            let served = chain?(pki) ?? pki.serverChain
            server = try LabTLSServer.started(LabTLSServer.Configuration(identity: .init(chain: served, key: pki.leafKey), name: "cli-inspect"))
            directory = try CLIRunner.temporaryDirectory()
            trustedRoots = try LabFiles.writeBundle([pki.root], to: directory + "/trusted-roots.pem")
            strangerRoots = try LabFiles.writeBundle([stranger.root], to: directory + "/stranger-roots.pem")
        }

        func stop() {
            server.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }

        func url(_ host: String = InspectHostTests.host) -> String { "https://\(host):\(server.port)" }
        func resolve(_ host: String = InspectHostTests.host) -> [String] { ["--resolve", "\(host):\(server.port):127.0.0.1"] }

        func inspect(_ extra: [String] = [], host: String = InspectHostTests.host, roots: String? = nil) async throws -> CLIRunner.Result {
            try await CLIRunner.run(
                ["inspect", url(host)] + resolve(host) + extra,
                environment: ["SSL_CERT_FILE": roots ?? trustedRoots, "SSL_CERT_DIR": directory + "/no-such-dir"])
        }
    }

    static func pin(_ certificate: LabCertificate) throws -> String { try Certificate(derEncoded: certificate.der).spkiSHA256Base64 }

    @Test("a chain that verifies: protocol, ALPN, every certificate with days left and pins; exit 0")
    func verifiedHuman() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let result = try await fixture.inspect()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let out = result.stdout
        #expect(out.hasPrefix("Connected to \(Self.host):\(fixture.server.port) (127.0.0.1, from --resolve)"), "\(out)")
        #expect(out.contains("Protocol  TLSv1.3"), "\(out)")
        #expect(out.contains("ALPN      http/1.1 (HEAD / answered 200)"), "\(out)")
        // The negotiated suite, read in the verify callback (TLS 1.3: one of the TLS_* suites).
        #expect(out.contains("Cipher    TLS_"), "\(out)")
        #expect(out.contains("Verified  yes, for \(Self.host) against the system roots"), "\(out)")
        #expect(out.contains("Served chain: 2 certificates"))
        #expect(out.contains("CN=\(Self.host)"))
        #expect(out.contains("CN=ServerTrust Lab Issuing CA"))
        #expect(out.contains("DNS:\(Self.host)"))
        #expect(out.contains("89 days left") || out.contains("90 days left"), "\(out)")
        #expect(out.contains("sha256/" + (try Self.pin(fixture.pki.leaf))))
        #expect(out.contains("sha256/" + (try Self.pin(fixture.pki.intermediate))))
        #expect(out.contains("SHA-256"))
        // One HEAD request was sent, over TLS 1.3 with ALPN http/1.1.
        #expect(fixture.server.statistics.requestsServed == 1)
        #expect(fixture.server.statistics.connections.first?.alpnProtocol == "http/1.1")
    }

    @Test("--json: the connection facts, and the certificates in the file form's schema")
    func verifiedJSON() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let result = try await fixture.inspect(["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["host"] as? String == Self.host)
        #expect(object["port"] as? Int == Int(fixture.server.port))
        #expect(object["url"] as? String == "https://\(Self.host):\(fixture.server.port)/")
        #expect(object["connectTo"] as? String == "127.0.0.1")
        #expect(object["tlsVersion"] as? String == "TLSv1.3")
        #expect((object["cipher"] as? String)?.hasPrefix("TLS_") == true, "a TLS 1.3 suite name")
        #expect(object["alpn"] as? String == "http/1.1")
        #expect(object["httpStatus"] as? Int == 200)
        #expect(object["verified"] as? Bool == true)
        #expect(object["verification"] is NSNull)
        #expect(object["failureKind"] is NSNull)
        #expect((object["verifiedChain"] as? [String])?.count == 3)
        let certificates = try #require(object["certificates"] as? [[String: Any]])
        #expect(certificates.count == 2)
        #expect(certificates[0]["spkiSHA256"] as? String == (try Self.pin(fixture.pki.leaf)))
        #expect(certificates[1]["index"] as? Int == 1)

        // Same per-certificate keys as `inspect FILE --json`, minus "file".
        let path = try LabFiles.writeBundle(fixture.pki.serverChain, to: fixture.directory + "/chain.pem")
        let file = try await CLIRunner.run(["inspect", path, "--json"])
        let fileItems = try #require(try JSONSerialization.jsonObject(with: Data(file.stdout.utf8)) as? [[String: Any]])
        #expect(Set(certificates[0].keys) == Set(fileItems[0].keys).subtracting(["file"]))
        #expect(certificates[0]["sha256"] as? String == fileItems[0]["sha256"] as? String)
    }

    @Test("a chain the system roots do not anchor: exit 1, everything shown, and why")
    func untrustedRoot() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let human = try await fixture.inspect(roots: fixture.strangerRoots)
        #expect(human.status == 1, "\(human.stderr)")
        #expect(human.stdout.contains("Verified  NO, for \(Self.host) against the system roots: untrustedRoot"), "\(human.stdout)")
        #expect(human.stdout.contains("Served chain: 2 certificates"))
        let json = try await fixture.inspect(["--json"], roots: fixture.strangerRoots)
        #expect(json.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["verified"] as? Bool == false)
        #expect(object["failureKind"] as? String == "untrustedRoot")
        #expect((object["verification"] as? String)?.hasPrefix("untrustedRoot") == true)
        #expect(object["verifiedChain"] is NSNull)
        #expect((object["certificates"] as? [Any])?.count == 2)
    }

    @Test("a private CA: --cacert FILE decides as get does and shows the validated path; a pin that does not match is refused")
    func privateCA() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        // The system roots are a stranger's; the server's root is given with --cacert.
        let caFile = try LabFiles.writeBundle([fixture.pki.root], to: fixture.directory + "/ca.pem")
        let human = try await fixture.inspect(["--cacert", caFile], roots: fixture.strangerRoots)
        #expect(human.status == 0, "\(human.stdout) \(human.stderr)")
        #expect(human.stdout.contains("Verified  yes, for \(Self.host) against the roots in \(caFile)"), "\(human.stdout)")
        #expect(human.stdout.contains("Path      CN=\(Self.host)  <-  CN=ServerTrust Lab Issuing CA"), "\(human.stdout)")
        let json = try await fixture.inspect(["--cacert", caFile, "--json"], roots: fixture.strangerRoots)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["verified"] as? Bool == true && (object["verifiedChain"] as? [String])?.count == 3, "\(json.stdout)")
        let wrongPin = try Self.pin(try LabPKI.webChain(host: "other.test", keySlot: 92).leaf)
        let pinned = try await fixture.inspect(["--cacert", caFile, "--pin", "sha256/" + wrongPin], roots: fixture.strangerRoots)
        #expect(
            pinned.status == 1 && pinned.stdout.contains("Verified  NO, for \(Self.host) against the roots in \(caFile) with the pins given: "),
            "\(pinned.stdout)")
        let files = try await CLIRunner.run(["inspect", caFile, "--cacert", caFile])
        #expect(files.status == 2 && files.stderr.contains("--cacert is for an https:// URL"), "\(files.stderr)")
    }

    @Test("a certificate for another host: hostnameMismatch")
    func wrongHost() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let result = try await fixture.inspect(["--json"], host: "other.inspect.test")
        #expect(result.status == 1, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["host"] as? String == "other.inspect.test")
        #expect(object["failureKind"] as? String == "hostnameMismatch")
    }

    @Test("an incomplete chain (leaf only) does not verify, and is shown as served")
    func incompleteChain() async throws {
        let fixture = try Fixture(chain: { [$0.leaf] })
        defer { fixture.stop() }
        let result = try await fixture.inspect(["--json"])
        #expect(result.status == 1, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect((object["certificates"] as? [Any])?.count == 1)
        #expect(object["verified"] as? Bool == false)
        #expect(object["failureKind"] as? String == "untrustedRoot")
    }

    @Test("--handshake-only: the chain arrives and nothing is sent; ALPN and cipher still show")
    func handshakeOnly() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let result = try await fixture.inspect(["--handshake-only", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["tlsVersion"] as? String == "TLSv1.3")
        // ALPN is settled before the certificate arrives, so even a handshake-only probe knows it.
        #expect(object["alpn"] as? String == "http/1.1")
        #expect((object["certificates"] as? [Any])?.count == 2)
        #expect(fixture.server.statistics.requestsServed == 0)
        let human = try await fixture.inspect(["--handshake-only"])
        #expect(human.stdout.contains("ALPN      http/1.1"), "\(human.stdout)")
        #expect(human.stdout.contains("Cipher    TLS_"), "\(human.stdout)")
    }

    @Test("connection failures exit 4 with one line naming the URL")
    func connectionFailure() async throws {
        let fixture = try Fixture()
        let port = fixture.server.port
        fixture.stop()
        let result = try await CLIRunner.run(["inspect", "https://\(Self.host):\(port)", "--resolve", "\(Self.host):\(port):127.0.0.1", "--timeout", "5"])
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.hasPrefix("servertrust: inspect: https://\(Self.host):\(port)/: transport failure: cannot connect: "), "\(result.stderr)")
    }

    @Test("--proxy through an intercepting relay: the minted chain is shown, and verifies only with the interception root among the system roots")
    func throughAnInterceptingProxy() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        // A differently named CA (P-384), so an untrusted interception root is unknown, not a clash.
        let interception = try LabPKI.webChain(host: "charles.example.test", algorithm: .p384, keySlot: 92)
        var configuration = LabMITMRelay.Configuration(mode: .httpProxy, interceptionCA: interception.rootIssuer, name: "corporate inspector")
        configuration.hostOverrides = [Self.host: "127.0.0.1"]
        let relay = try LabMITMRelay.started(configuration)
        defer { relay.stop() }
        let interceptionRoots = try LabFiles.writeBundle([interception.root], to: fixture.directory + "/interception-roots.pem")
        let arguments = ["inspect", fixture.url(), "--proxy", relay.proxyURL]
        let environment = ["SSL_CERT_DIR": fixture.directory + "/no-such-dir"]
        let intercepted = try await CLIRunner.run(arguments, environment: environment.merging(["SSL_CERT_FILE": fixture.trustedRoots]) { $1 })
        #expect(intercepted.status == 1, "\(intercepted.stderr)")
        let out = intercepted.stdout
        #expect(out.hasPrefix("Connected to \(Self.host):\(fixture.server.port) through the proxy \(relay.proxyURL)"), "\(out)")
        #expect(out.contains("Verified  NO, for \(Self.host) against the system roots: untrustedRoot"), "\(out)")
        let interceptionName = try Certificate(derEncoded: interception.root.der).subject.rfc4514
        #expect(out.contains("Issuer          \(interceptionName)"), "the minted leaf names the interception root: \(out)")
        let genuinePin = try Self.pin(fixture.pki.leaf)
        #expect(!out.contains("sha256/" + genuinePin), "the genuine leaf was never served")
        // The relay intercepted the connection and forwarded the HEAD to the genuine server.
        #expect(relay.statistics.connectionsIntercepted == 1 && fixture.server.statistics.requestsServed == 1)
        let trusted = try await CLIRunner.run(arguments + ["--json"], environment: environment.merging(["SSL_CERT_FILE": interceptionRoots]) { $1 })
        #expect(trusted.status == 0, "\(trusted.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(trusted.stdout.utf8)) as? [String: Any])
        #expect(object["proxy"] as? String == relay.proxyURL && object["verified"] as? Bool == true)
        // pins through the same proxy: the minted leaf's key, not the genuine one.
        let pins = try await CLIRunner.run(
            ["pins", fixture.url(), "--proxy", relay.proxyURL, "--format", "curl"],
            environment: environment.merging(["SSL_CERT_FILE": interceptionRoots]) { $1 })
        let minted = try #require(relay.mintedCertificates[Self.host])
        let mintedPin = try Self.pin(minted)
        #expect(pins.status == 0 && pins.stdout.contains("sha256//" + mintedPin), "\(pins.stdout) \(pins.stderr)")
        let pinsFromFile = try await CLIRunner.run(["pins", fixture.trustedRoots, "--proxy", relay.proxyURL])
        #expect(
            pinsFromFile.status == 2 && pinsFromFile.stderr == "servertrust: pins: --proxy is for an https:// URL, not a file\n",
            "\(pinsFromFile.stderr)")
    }

    @Test("bad input exits 2 with one line and connects nowhere")
    func badInput() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let url = fixture.url()
        let cases: [[String]] = [
            ["inspect", "http://\(Self.host)/"],
            ["inspect", "https://"],
            ["inspect", url, "--resolve", "nonsense"],
            ["inspect", url, "--resolve", "elsewhere.test:\(fixture.server.port):127.0.0.1"],
            ["inspect", url, "--resolve", "\(Self.host):1:127.0.0.1"],
            ["inspect", url, "--timeout", "0"],
            ["inspect", url, "--timeout"],
            ["inspect", url, "https://second.test/"],
            ["inspect", url, fixture.trustedRoots],
            ["inspect", fixture.trustedRoots, "--resolve", "\(Self.host):1:127.0.0.1"],
            ["inspect", fixture.trustedRoots, "--handshake-only"],
            ["inspect", "https://\(Self.host):99999/"],
            ["inspect", url, "--proxy", "socks5://127.0.0.1:1080"],
            ["inspect", url, "--proxy-user", "a:b"],
            ["inspect", url, "--proxy", "http://127.0.0.1:9", "--proxy-cacert", fixture.trustedRoots],
            ["inspect", url, "--proxy", "http://127.0.0.1:9"] + fixture.resolve(),
            ["inspect", fixture.trustedRoots, "--proxy", "http://127.0.0.1:9"],
        ]
        for arguments in cases {
            let result = try await CLIRunner.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("servertrust: inspect: "), "\(arguments): \(result.stderr)")
        }
        #expect(fixture.server.statistics.connectionsAccepted == 0)
    }
}
