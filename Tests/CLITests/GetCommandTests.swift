import CertificateParsing
import Foundation
import ServerTrustLab
import Synchronization
import Testing

/// `servertrust get` against loopback Lab servers, run as a separate process.
@Suite("servertrust get")
struct GetCommandTests {
    static let host = "www.example.test"
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    struct Fixture {
        let pki: LabPKI
        let server: LabTLSServer
        let directory: String
        let rootPath: String

        init(
            identity: ((LabPKI) throws -> LabTLSServer.Identity)? = nil,
            configure: (inout LabTLSServer.Configuration) -> Void = { _ in }
        ) throws {
            pki = try LabPKI.webChain(
                host: GetCommandTests.host, leafNotBefore: GetCommandTests.now - LabClock.day,
                leafNotAfter: GetCommandTests.now + 30 * LabClock.day, keySlot: 50)
            var configuration = LabTLSServer.Configuration(identity: try identity?(pki) ?? .init(pki: pki), name: "cli")
            configuration.handler = { request in
                switch request.path {
                case "/missing": return .text("gone", status: 404)
                case "/echo":
                    let text = "\(request.method) auth=\(request.header("Authorization") ?? "-") x=\(request.header("X-Test") ?? "-") body="
                    return LabHTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: .bytes(Array(text.utf8) + request.body))
                default: return .text("hello from cli")
                }
            }
            configure(&configuration)
            server = try LabTLSServer.started(configuration)
            directory = try CLIRunner.temporaryDirectory()
            rootPath = try LabFiles.write(pki.root.pem, to: directory + "/root.pem")
        }

        var resolve: [String] { ["--resolve", "\(GetCommandTests.host):\(server.port):127.0.0.1"] }
        func url(_ path: String = "/") -> String { server.url(host: GetCommandTests.host, path: path) }
        func get(_ path: String = "/", _ extra: [String] = []) async throws -> CLIRunner.Result {
            try await CLIRunner.run(["get", url(path), "--anchors", rootPath] + resolve + extra)
        }
    }

    @Test("exit 0 and the body for a trusted server; --json carries the decision")
    func success() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let plain = try await fixture.get()
        #expect(plain.status == 0 && plain.stdout == "hello from cli", "\(plain.stderr)")
        let json = try await fixture.get("/", ["--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["status"] as? Int == 200)
        #expect(object["tlsVersion"] as? String == "TLSv1.3")
        #expect(object["body"] as? String == "hello from cli")
        let decision = try #require(object["decision"] as? [String: Any])
        #expect(decision["verdict"] as? String == "accepted")
        #expect(decision["host"] as? String == Self.host)
        #expect((decision["servedChain"] as? [Any])?.count == 2)
        #expect((object["timing"] as? [String: Any])?["total"] != nil)
    }

    @Test("exit 1 when trust is rejected, and nothing reaches the server")
    func rejected() async throws {
        let fixture = try Fixture { pki in
            let leaf = try pki.issueLeaf(
                host: "other.example.test", notBefore: GetCommandTests.now - LabClock.day,
                notAfter: GetCommandTests.now + LabClock.day)
            return LabTLSServer.Identity(chain: [leaf, pki.intermediate], key: pki.leafKey)
        }
        defer { fixture.server.stop() }
        let result = try await fixture.get("/", ["--json"])
        #expect(result.status == 1, "\(result.stderr)")
        // The first line in words (UserMessages); the decision record after it keeps the kind.
        #expect(
            result.stderr.hasPrefix(
                "servertrust: get: server trust rejected: www.example.test:\(fixture.server.port): "
                    + "certificate is not valid for www.example.test (it is for other.example.test)\n"), "\(result.stderr)")
        #expect(result.stderr.contains("evaluator: DefaultTrustEvaluator") && result.stderr.contains("hostValidationFailed"))
        #expect(result.stdout.contains("\"failureKind\":\"hostnameMismatch\""))
        // Without the host check it passes.
        await #expect(try fixture.get("/", ["--no-validate-domain"]).status == 0)
        // The system roots alone do not know the Lab root.
        let system = try await CLIRunner.run(["get", fixture.url()] + fixture.resolve + ["--no-validate-domain"])
        #expect(system.status == 1 && system.stderr.contains("untrustedRoot"), "\(system.stderr)")
        #expect(fixture.server.statistics.requestsServed == 1)
    }

    @Test("SPKI pins, --allow-invalid and AFNetworking modes")
    func pins() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let leaf = try Certificate(derEncoded: fixture.pki.leaf.der)
        await #expect(try fixture.get("/", ["--pin", "sha256/" + leaf.spkiSHA256Base64]).status == 0)
        let wrong = try await fixture.get("/", ["--pin", "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="])
        #expect(
            wrong.status == 1
                && wrong.stderr.contains("server trust rejected: www.example.test:\(fixture.server.port): public key does not match the pinned public key"),
            "\(wrong.stderr)")
        #expect(wrong.stderr.contains("evaluator: SPKIPinsTrustEvaluator") && wrong.stderr.contains("spkiPinningFailed"), "\(wrong.stderr)")
        // Pins hold even with --allow-invalid and no anchors.
        let invalidPinned = try await CLIRunner.run(["get", fixture.url(), "--allow-invalid", "--pin", "sha256/" + leaf.spkiSHA256Base64] + fixture.resolve)
        #expect(invalidPinned.status == 0, "\(invalidPinned.stderr)")
        // ServerTrust.SecurityPolicy through --mode: pinned certificate in certificate mode.
        let leafPath = try LabFiles.write(fixture.pki.leaf.pem, to: fixture.directory + "/leaf.pem")
        let stranger = try LabPKI.webChain(host: GetCommandTests.host, algorithm: .p384, keySlot: 54)
        let otherPath = try LabFiles.write(stranger.root.pem, to: fixture.directory + "/other.pem")
        let byPolicy = try await fixture.get("/", ["--mode", "public-key", "--pinned-cert", leafPath, "--strict"])
        #expect(byPolicy.status == 0, "\(byPolicy.stderr)")
        let policyRejects = try await fixture.get("/", ["--mode", "certificate", "--pinned-cert", otherPath])
        #expect(policyRejects.status == 1, "\(policyRejects.stderr)")
        #expect(policyRejects.stderr.contains("decision:  rejected"), "\(policyRejects.stderr)")
    }

    @Test("exit 3 for HTTP errors; -X, -d, -H, -u and -o")
    func requestOptions() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let missing = try await fixture.get("/missing")
        #expect(missing.status == 3 && missing.stdout == "gone")
        let echo = try await fixture.get("/echo", ["-X", "PUT", "-d", "a=1", "-d", "b=2", "-H", "X-Test: yes", "-u", "alice:secret"])
        #expect(echo.status == 0, "\(echo.stderr)")
        #expect(echo.stdout == "PUT auth=Basic YWxpY2U6c2VjcmV0 x=yes body=a=1&b=2")
        let output = fixture.directory + "/out.txt"
        let saved = try await fixture.get("/", ["-o", output])
        #expect(saved.status == 0 && saved.stdout.isEmpty)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "hello from cli")
        // With -o and --json, bodyBytes is what was written to the file.
        let savedJSON = try await fixture.get("/", ["-o", output, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(savedJSON.stdout.utf8)) as? [String: Any]
        #expect(object?["bodyBytes"] as? Int == "hello from cli".utf8.count)
        let posted = try await fixture.get("/echo", ["--data=x"])
        #expect(posted.stdout == "POST auth=- x=- body=x")
        // -T streams a file as a PUT (curl's --upload-file); -X changes the method.
        let upload = try LabFiles.write("file body\n", to: fixture.directory + "/upload.txt")
        let put = try await fixture.get("/echo", ["-T", upload])
        #expect(put.status == 0 && put.stdout == "PUT auth=- x=- body=file body\n", "\(put.stderr)")
        let uploadPost = try await fixture.get("/echo", ["--upload-file", upload, "-X", "POST"])
        #expect(uploadPost.stdout == "POST auth=- x=- body=file body\n", "\(uploadPost.stderr)")
        let missingUpload = try await fixture.get("/echo", ["-T", fixture.directory + "/nope"])
        #expect(missingUpload.status == 2 && missingUpload.stderr.contains("nope"), "\(missingUpload.stderr)")
        let both = try await fixture.get("/echo", ["-T", upload, "-d", "x"])
        #expect(both.status == 2 && both.stderr.contains("-T and -d"), "\(both.stderr)")
        // -F builds a multipart form (file parts streamed), as curl's --form.
        let form = try await fixture.get("/echo", ["-F", "title=hi", "-F", "doc=@\(upload);type=text/plain"])
        #expect(form.status == 0, "\(form.stderr)")
        #expect(form.stdout.hasPrefix("POST auth=- x=- body=--ServerTrust-"), "\(form.stdout)")
        #expect(form.stdout.contains("name=\"title\"\r\n\r\nhi\r\n"), "\(form.stdout)")
        #expect(form.stdout.contains("name=\"doc\"; filename=\"upload.txt\"\r\nContent-Type: text/plain\r\n\r\nfile body\n\r\n"), "\(form.stdout)")
        let badForm = try await fixture.get("/echo", ["-F", "doc=@" + fixture.directory + "/nope"])
        #expect(badForm.status == 2 && badForm.stderr.contains("-F doc:"), "\(badForm.stderr)")
        let mixed = try await fixture.get("/echo", ["-F", "a=b", "-d", "x"])
        #expect(mixed.status == 2 && mixed.stderr.contains("-F cannot be combined"), "\(mixed.stderr)")
    }

    @Test("exit 2 for bad input")
    func badInput() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        for arguments in [
            ["get"], ["get", "ftp://example.test/"], ["get", fixture.url(), "--resolve", "nonsense"],
            ["get", fixture.url(), "--anchors", fixture.directory + "/absent.pem"],
            ["get", fixture.url(), "--pin", "md5/abc"], ["get", fixture.url(), "--bogus"],
            ["get", fixture.url(), "-u", "nocolon"], ["get", fixture.url(), "--cert", fixture.rootPath],
        ] {
            let result = try await CLIRunner.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("servertrust: get: "), "\(arguments): \(result.stderr)")
        }
        #expect(fixture.server.statistics.connectionsAccepted == 0)
    }

    /// A request field with a line break (or not a token): what is given, and what the one
    /// line on stderr must name. (A NUL cannot be passed in an argument.)
    struct SmugglingRow: Sendable, CustomTestStringConvertible {
        let name: String
        let names: String
        let arguments: @Sendable (Fixture) throws -> [String]
        var testDescription: String { name }
    }

    static let smugglingRows: [SmugglingRow] = [
        SmugglingRow(name: "-H value with CRLF", names: "invalid request: header \"X-Test\" value: CR (0x0D) at byte 1") { _ in
            ["-H", "X-Test: 1\r\nX-Injected: 1"]
        },
        SmugglingRow(name: "-H value with LF", names: "header \"X-Test\" value: LF") { _ in ["-H", "X-Test: 1\nX-Injected: 1"] },
        SmugglingRow(name: "-H name with CRLF", names: "header name \"X-Test\\r\\nX-Injected\" is not a token") { _ in ["-H", "X-Test\r\nX-Injected: 1"] },
        SmugglingRow(name: "-H name with a space", names: "header name \"X Test\" is not a token") { _ in ["-H", "X Test: 1"] },
        SmugglingRow(name: "-X with CRLF", names: "-X 'GET / HTTP/1.1\\r\\nX-Injected: 1\\r\\n\\r\\nGET' is not a method") { _ in
            ["-X", "GET / HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET"]
        },
        SmugglingRow(name: "-X not a token", names: "method \"GÉT\" is not a token") { _ in ["-X", "GÉT"] },
        SmugglingRow(name: "-u user with CRLF", names: "credential user name: CR") { _ in ["-u", "alice\r\nX-Injected: 1:pw"] },
        SmugglingRow(name: "-u password with LF", names: "credential password: LF") { _ in ["-u", "alice:pw\nX"] },
        SmugglingRow(name: "--proxy-user with CRLF", names: "proxy credential user name: CR") { fixture in
            ["--proxy", "http://127.0.0.1:\(fixture.server.port)", "--proxy-user", "p\r\nX-Injected: 1:pw"]
        },
        SmugglingRow(name: "-F name with CRLF", names: "multipart part 1 (\"a\\r\\nContent-Type: text/html\") name: CR") { _ in
            ["-F", "a\r\nContent-Type: text/html=x"]
        },
        SmugglingRow(name: "-F type with CRLF", names: "multipart part 1 (\"doc\") header \"Content-Type\" value: CR") { fixture in
            let file = try LabFiles.write("part\n", to: fixture.directory + "/part.txt")
            return ["-F", "doc=@\(file);type=text/plain\r\nX-Injected: 1"]
        },
    ]

    @Test("CR or LF in -H, -X, -u, --proxy-user, -F: exit 2, one line naming the field, nothing reaches the server", arguments: smugglingRows)
    func smugglingRefused(_ row: SmugglingRow) async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let result = try await fixture.get("/echo", try row.arguments(fixture))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty && !result.stderr.contains("\r"), "one line: \(result.stderr.debugDescription)")
        #expect(result.stderr.hasPrefix("servertrust: get: "), "\(result.stderr)")
        #expect(result.stderr.contains(row.names), "\(result.stderr)")
        #expect(fixture.server.statistics.connectionsAccepted == 0)
    }

    @Test(
        "a URL with CR or LF is bad input (exit 2), not a transport failure; nothing reaches the server",
        arguments: ["/a\r\nX-Injected: 1", "/a?b=\n", "host%0D%0A"])
    func smugglingURL(_ change: String) async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let url =
            change.hasPrefix("/")
            ? fixture.url() + String(change.dropFirst())
            : fixture.url().replacingOccurrences(of: "www.", with: "www%0D%0A.")
        let result = try await CLIRunner.run(["get", url, "--anchors", fixture.rootPath] + fixture.resolve)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1 && !result.stderr.contains("\r"), "\(result.stderr.debugDescription)")
        #expect(result.stderr.hasPrefix("servertrust: get: invalid request: URL"), "\(result.stderr)")
        #expect(fixture.server.statistics.connectionsAccepted == 0)
    }

    @Test("a -d body with CR LF is a body, sent as given")
    func bodyWithLineBreaks() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let result = try await fixture.get("/echo", ["-d", "a=1\r\nX-Injected: 1"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "POST auth=- x=- body=a=1\r\nX-Injected: 1")
    }

    @Test("exit 4 for network and TLS failures")
    func networkFailure() async throws {
        let clientRoot = try LabPKI.webChain(host: "client.example.test", keySlot: 51).root
        let fixture = try Fixture(configure: { configuration in
            configuration.clientAuthentication = .init(trustedCertificates: [clientRoot])
        })
        defer { fixture.server.stop() }
        let noClientCertificate = try await fixture.get()
        #expect(noClientCertificate.status == 4, "\(noClientCertificate.stderr)")
        #expect(noClientCertificate.stderr.contains("transport failure: "), "\(noClientCertificate.stderr)")
        let closed = try LabClosedPort()
        defer { closed.close() }
        let refusedPort = closed.port
        let refused = try await CLIRunner.run([
            "get", "https://\(Self.host):\(refusedPort)/", "--anchors", fixture.rootPath,
            "--resolve", "\(Self.host):\(refusedPort):127.0.0.1",
        ])
        #expect(refused.status == 4 && refused.stderr.contains("curl 7"), "\(refused.stderr)")
    }

    @Test("--cert with a PEM certificate and key, or PKCS#12 with --pass")
    func clientCertificates() async throws {
        let clientPKI = try LabPKI.webChain(
            host: "client.example.test", leafNotBefore: Self.now - LabClock.day,
            leafNotAfter: Self.now + 30 * LabClock.day, keySlot: 52)
        let spec = LabCertificateSpec(
            subject: LabName([("CN", "cli client")]), notBefore: Self.now - LabClock.day, notAfter: Self.now + 30 * LabClock.day,
            extensions: [
                .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["clientAuth"]),
                .subjectKeyIdentifier(), .authorityKeyIdentifier(),
            ])
        let clientLeaf = try LabCertificate.issue(spec, subjectKey: clientPKI.leafKey, issuer: clientPKI.intermediateIssuer)
        let fixture = try Fixture(configure: { configuration in
            configuration.clientAuthentication = .init(trustedCertificates: [clientPKI.root])
        })
        defer { fixture.server.stop() }
        let certificate = try LabFiles.write(LabPEM.bundle([clientLeaf, clientPKI.intermediate]), to: fixture.directory + "/client.pem")
        let key = try LabFiles.write(try clientPKI.leafKey.privateKeyPEM(), to: fixture.directory + "/client.key")
        let pem = try await fixture.get("/", ["--cert", certificate, "--key", key])
        #expect(pem.status == 0 && pem.stdout == "hello from cli", "\(pem.stderr)")
        let pfx = try LabPKCS12.create(certificate: clientLeaf, key: clientPKI.leafKey, chain: [clientPKI.intermediate], password: "pw")
        let pfxPath = try LabFiles.write(pfx, to: fixture.directory + "/client.p12")
        await #expect(try fixture.get("/", ["--cert", pfxPath, "--pass", "pw"]).status == 0)
        let wrongPassword = try await fixture.get("/", ["--cert", pfxPath, "--pass", "nope"])
        #expect(wrongPassword.status == 2 && wrongPassword.stderr.contains("--cert"), "\(wrongPassword.stderr)")
    }

    @Test("--proxy through an intercepting relay: trusted root passes, a pin fails before any byte is forwarded")
    func proxy() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let interception = try LabPKI.webChain(host: "mitm.invalid", keySlot: 53)
        var configuration = LabMITMRelay.Configuration(mode: .httpProxy, interceptionCA: interception.rootIssuer)
        configuration.hostOverrides = [Self.host: "127.0.0.1"]
        configuration.proxyCredentials = .init(user: "proxy", password: "pw")
        let relay = try LabMITMRelay.started(configuration)
        defer { relay.stop() }
        let interceptionRoot = try LabFiles.write(interception.root.pem, to: fixture.directory + "/mitm.pem")
        let base = ["get", fixture.url(), "--proxy", relay.proxyURL, "--anchors", interceptionRoot]
        let unauthenticated = try await CLIRunner.run(base)
        #expect(unauthenticated.status == 4, "\(unauthenticated.stderr)")
        let through = try await CLIRunner.run(base + ["--proxy-user", "proxy:pw"])
        #expect(through.status == 0 && through.stdout == "hello from cli", "\(through.stderr)")
        let leaf = try Certificate(derEncoded: fixture.pki.leaf.der)
        let bytesBefore = relay.statistics.bytesClientToUpstream
        let pinned = try await CLIRunner.run(base + ["--proxy-user", "proxy:pw", "--pin", "sha256/" + leaf.spkiSHA256Base64])
        #expect(pinned.status == 1 && pinned.stderr.contains("public key does not match the pinned public key"), "\(pinned.stderr)")
        #expect(pinned.stderr.contains("evaluator: SPKIPinsTrustEvaluator"), "\(pinned.stderr)")
        #expect(relay.statistics.bytesClientToUpstream == bytesBefore)
    }

    @Test(
        "NO_PROXY in the environment does not route around --proxy (proxy variables are ignored): the request goes through the proxy",
        arguments: ["*", GetCommandTests.host, "127.0.0.1,www.example.test,localhost"])
    func noProxyEnvironmentIgnored(_ noProxy: String) async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        // The configured proxy is the one that inspects egress; whoever sets NO_PROXY must not
        // be able to send the request past it to whatever the host name resolves to.
        let interception = try LabPKI.webChain(host: "mitm.invalid", keySlot: 54)
        var configuration = LabMITMRelay.Configuration(mode: .httpProxy, interceptionCA: interception.rootIssuer)
        configuration.hostOverrides = [Self.host: "127.0.0.1"]
        let relay = try LabMITMRelay.started(configuration)
        defer { relay.stop() }
        let interceptionRoot = try LabFiles.write(interception.root.pem, to: fixture.directory + "/mitm.pem")
        let result = try await CLIRunner.run(
            ["get", fixture.url(), "--proxy", relay.proxyURL, "--cacert", interceptionRoot] + fixture.resolve,
            environment: ["NO_PROXY": noProxy, "no_proxy": noProxy])
        #expect(result.status == 0 && result.stdout == "hello from cli", "went around the proxy: \(result.stderr)")
        #expect(relay.statistics.connectRequests.count == 1, "\(relay.statistics.connectRequests)")
    }

    @Test("-o writes the body as received (a server's gzip stays gzip, as curl writes it); --compressed asks for and decodes it")
    func compressedOptIn() async throws {
        let text = String(repeating: "ServerTrust compresses well. ", count: 4096)
        let gzip = try await LabProcess.run("/bin/gzip", ["-c", "-9", "-n"], input: Array(text.utf8))
        #expect(gzip.status == 0)
        let acceptEncodings = LockedList()
        // A server that sends gzip whether asked or not (an attacker's bomb is sent so).
        let fixture = try Fixture(configure: { configuration in
            configuration.handler = { request in
                acceptEncodings.append(request.header("Accept-Encoding") ?? "-")
                return LabHTTPResponse(status: 200, headers: [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")], body: .bytes(gzip.stdout))
            }
        })
        defer { fixture.server.stop() }
        let raw = fixture.directory + "/raw.gz"
        let plain = try await fixture.get("/", ["-o", raw])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: raw))) == gzip.stdout, "the body was decoded without --compressed")
        let decoded = fixture.directory + "/decoded.txt"
        let compressed = try await fixture.get("/", ["--compressed", "-o", decoded])
        #expect(compressed.status == 0, "\(compressed.stderr)")
        #expect(try String(contentsOfFile: decoded, encoding: .utf8) == text)
        let stdout = try await fixture.get("/", ["--compressed"])
        #expect(stdout.status == 0 && stdout.stdout == text, "\(stdout.stderr)")
        let seen = acceptEncodings.all
        #expect(seen.count == 3 && seen[0] == "-" && seen[1] != "-" && seen[2] != "-", "Accept-Encoding sent: \(seen)")
    }

    @Test("-v: request and response lines and the trust decision on stderr, credentials redacted; -i and -I: the head on stdout")
    func verboseIncludeHead() async throws {
        let methods = LockedList()
        let fixture = try Fixture(configure: { configuration in
            guard let previous = configuration.handler else { return }
            configuration.handler = { request in
                methods.append(request.method)
                return previous(request)
            }
        })
        defer { fixture.server.stop() }
        let authority = "\(Self.host):\(fixture.server.port)"
        let verbose = try await fixture.get("/echo?q=1", ["-v", "-u", "alice:s3cret", "-H", "X-Test: yes"])
        #expect(verbose.status == 0, "\(verbose.stderr)")
        #expect(verbose.stdout.hasPrefix("GET auth=Basic "), "the body alone on stdout: \(verbose.stdout)")
        let lines = verbose.stderr.split(separator: "\n").map(String.init)
        for expected in ["> GET /echo?q=1 HTTP/1.1", "> Host: \(authority)", "> X-Test: yes", "> User-Agent: ServerTrust/0.1", ">", "< HTTP/1.1 200"] {
            #expect(lines.contains(expected), "'\(expected)' not in:\n\(verbose.stderr)")
        }
        #expect(lines.contains { $0.hasPrefix("> Authorization: [redacted]") }, "\(verbose.stderr)")
        #expect(lines.contains { $0.hasPrefix("< Content-Type: text/plain") }, "\(verbose.stderr)")
        #expect(lines.contains("* server trust for \(authority): accepted by DefaultTrustEvaluator (checked: chain)"), "\(verbose.stderr)")
        #expect(lines.contains { $0.hasPrefix("*   verified path: CN=\(Self.host)") }, "\(verbose.stderr)")
        let basic = Data("alice:s3cret".utf8).base64EncodedString()
        #expect(!verbose.stderr.contains("s3cret") && !verbose.stderr.contains(basic), "a credential echoed: \(verbose.stderr)")

        let include = try await fixture.get("/", ["-i"])
        #expect(include.status == 0, "\(include.stderr)")
        #expect(include.stdout.hasPrefix("HTTP/1.1 200\r\n") && include.stdout.hasSuffix("\r\n\r\nhello from cli"), "\(include.stdout.debugDescription)")
        let head = try await fixture.get("/", ["-I"])
        #expect(head.status == 0, "\(head.stderr)")
        #expect(
            head.stdout.hasPrefix("HTTP/1.1 200\r\n") && head.stdout.hasSuffix("\r\n\r\n") && !head.stdout.contains("hello"), "\(head.stdout.debugDescription)")
        #expect(methods.all == ["GET", "GET", "HEAD"], "\(methods.all)")
        let bundled = try await fixture.get("/", ["-sSIk"])
        #expect(bundled.status == 0 && bundled.stdout.hasPrefix("HTTP/1.1 200\r\n"), "\(bundled.stderr)")
        let conflicting = try await fixture.get("/", ["-i", "--json"])
        #expect(conflicting.status == 2 && conflicting.stderr.contains("-i prints the head on stdout"), "\(conflicting.stderr)")
    }

    @Test("an interception proxy that appends the genuine pinned intermediate is refused by --pin and --mode, as by curl --pinnedpubkey")
    func proxyAppendingPinnedIntermediate() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let interception = try LabPKI.webChain(host: "mitm.invalid", keySlot: 53)
        var configuration = LabMITMRelay.Configuration(mode: .httpProxy, interceptionCA: interception.rootIssuer)
        configuration.hostOverrides = [Self.host: "127.0.0.1"]
        configuration.interceptionChain = [fixture.pki.intermediate]
        let relay = try LabMITMRelay.started(configuration)
        defer { relay.stop() }
        let interceptionRoot = try LabFiles.write(interception.root.pem, to: fixture.directory + "/mitm.pem")
        let intermediatePath = try LabFiles.write(fixture.pki.intermediate.pem, to: fixture.directory + "/intermediate.pem")
        let intermediatePin = "sha256/" + (try Certificate(derEncoded: fixture.pki.intermediate.der)).spkiSHA256Base64
        let base = ["get", fixture.url(), "--proxy", relay.proxyURL, "--anchors", interceptionRoot, "--anchors", fixture.rootPath]
        // The proxy's chain validates (its root is installed): without pins it passes.
        #expect(try await CLIRunner.run(base).status == 0)
        let bytesBefore = relay.statistics.bytesClientToUpstream
        for options in [
            ["--pin", intermediatePin],
            ["--pin", intermediatePin.replacingOccurrences(of: "sha256/", with: "sha256//")],
            ["--pin", String(intermediatePin.dropFirst("sha256/".count))],
            ["--mode", "public-key", "--pinned-cert", intermediatePath],
            ["--mode", "public-key", "--pinned-cert", intermediatePath, "--compat"],
            ["--mode", "certificate", "--pinned-cert", intermediatePath],
        ] {
            let result = try await CLIRunner.run(base + options)
            #expect(result.status == 1 && result.stderr.contains("server trust rejected"), "\(options): \(result.stderr)")
            // The same pins pass the genuine server directly.
            let direct = try await fixture.get("/", options)
            #expect(direct.status == 0, "\(options) direct: \(direct.stderr)")
        }
        #expect(relay.statistics.bytesClientToUpstream == bytesBefore, "no pinned attempt sent a byte upstream")
        // curl refuses the same proxy with the same pin (exit 90, CURLE_SSL_PINNEDPUBKEYNOTMATCH).
        let bundle = try LabFiles.write(interception.root.pem + fixture.pki.root.pem, to: fixture.directory + "/curl-roots.pem")
        let curl = try await CLIRunner.run(
            ["-sS", "--proxy", relay.proxyURL, "--cacert", bundle, "--pinnedpubkey", "sha256//" + intermediatePin.dropFirst("sha256/".count), fixture.url()],
            executable: "/usr/bin/curl")
        #expect(curl.status == 90, "curl: \(curl.stderr)")
    }

    @Test("an attacker with no trusted CA appending the genuine pinned intermediate is refused even with --allow-invalid")
    func attackerAppendingPinnedIntermediate() async throws {
        let attackerKey = try LabKey.shared(.p256, slot: 55)
        var attackerPKI: LabPKI?
        let fixture = try Fixture(identity: { pki in
            attackerPKI = pki
            let attacker = try LabCertificate.issue(
                LabPKI.leafSpec(
                    host: GetCommandTests.host, keyAlgorithm: .p256, notBefore: GetCommandTests.now - LabClock.day,
                    notAfter: GetCommandTests.now + LabClock.day), subjectKey: attackerKey)
            return LabTLSServer.Identity(chain: [attacker, pki.intermediate], key: attackerKey)
        })
        defer { fixture.server.stop() }
        let pki = try #require(attackerPKI)
        let intermediatePin = "sha256/" + (try Certificate(derEncoded: pki.intermediate.der)).spkiSHA256Base64
        let intermediatePath = try LabFiles.write(pki.intermediate.pem, to: fixture.directory + "/intermediate.pem")
        for options in [
            ["--allow-invalid", "--pin", intermediatePin],
            ["--allow-invalid", "--no-validate-domain", "--pin", intermediatePin],
            ["--allow-invalid", "--mode", "public-key", "--pinned-cert", intermediatePath, "--compat"],
            ["--allow-invalid", "--mode", "public-key", "--pinned-cert", intermediatePath],
        ] {
            let result = try await fixture.get("/", options)
            #expect(result.status == 1, "\(options): \(result.stderr)")
        }
        #expect(fixture.server.statistics.requestsServed == 0)
    }

    @Test("a 2 GB body: -o and stdout stay under 64 MB resident; --json stops at the in-memory limit under 128 MB")
    func hugeBody() async throws {
        let size = 2 << 30
        let fixture = try Fixture(configure: { $0.handler = { _ in LabHTTPResponse(body: .repeated(0x42, count: size)) } })
        defer { fixture.server.stop() }
        let output = fixture.directory + "/huge.bin"
        let base = ["get", fixture.url(), "--anchors", fixture.rootPath] + fixture.resolve + ["--timeout", "300"]
        let toFile = try await CLIRunner.runMeasuringPeak(base + ["-o", output])
        #expect(toFile.status == 0, "\(toFile.stderr)")
        var info = stat()
        #expect(stat(output, &info) == 0 && Int(info.st_size) == size)
        #expect(toFile.peakKiB > 0 && toFile.peakKiB < 64 << 10, "-o peak \(toFile.peakKiB) KiB")
        unlink(output)
        let toStdout = try await CLIRunner.runMeasuringPeak(base)
        #expect(toStdout.status == 0, "\(toStdout.stderr)")
        #expect(toStdout.peakKiB > 0 && toStdout.peakKiB < 64 << 10, "stdout peak \(toStdout.peakKiB) KiB")
        let inMemory = try await CLIRunner.runMeasuringPeak(base + ["--json"])
        #expect(inMemory.status == 4 && inMemory.stderr.contains("response body larger than"), "\(inMemory.stderr)")
        #expect(inMemory.peakKiB > 0 && inMemory.peakKiB < 128 << 10, "--json peak \(inMemory.peakKiB) KiB")
    }

    @Test("a failed -o download leaves the existing file byte-identical")
    func failedDownloadKeepsFile() async throws {
        let fixture = try Fixture(configure: { $0.behavior = .cutResponse(.midBody, then: .closeWithoutNotify) })
        defer { fixture.server.stop() }
        let output = try LabFiles.write("precious\n", to: fixture.directory + "/keep.txt")
        let result = try await fixture.get("/", ["-o", output])
        #expect(result.status == 4, "\(result.stderr)")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "precious\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory).filter { $0.contains("servertrust-") }.isEmpty)
        // And a rejected certificate: nothing is written either.
        let rejected = try await CLIRunner.run(["get", fixture.url(), "-o", output] + fixture.resolve)
        #expect(rejected.status == 1)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "precious\n")
    }

    @Test("--proxy https:// with --proxy-cacert: the proxy's root trusted passes; without it the proxy is rejected (exit 1)")
    func httpsProxy() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let proxyHost = "proxy.example.test"
        let proxyPKI = try LabPKI.webChain(
            host: proxyHost, leafNotBefore: Self.now - LabClock.day, leafNotAfter: Self.now + 30 * LabClock.day,
            keySlot: 54)
        let interception = try LabPKI.webChain(host: "mitm.invalid", keySlot: 53)
        var configuration = LabMITMRelay.Configuration(mode: .httpProxy, interceptionCA: interception.rootIssuer)
        configuration.hostOverrides = [Self.host: "127.0.0.1"]
        configuration.proxyTLS = (proxyPKI.serverChain, proxyPKI.leafKey)
        let relay = try LabMITMRelay.started(configuration)
        defer { relay.stop() }
        let proxyRoot = try LabFiles.write(proxyPKI.root.pem, to: fixture.directory + "/proxy-root.pem")
        let base = [
            "get", fixture.url(), "--anchors", fixture.rootPath, "--proxy", "https://\(proxyHost):\(relay.port)",
            "--resolve", "\(proxyHost):\(relay.port):127.0.0.1",
        ]
        let through = try await CLIRunner.run(base + ["--proxy-cacert", proxyRoot, "--json"])
        #expect(through.status == 0, "\(through.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(through.stdout.utf8)) as? [String: Any])
        #expect((object["decision"] as? [String: Any])?["host"] as? String == Self.host)
        let proxyDecision = try #require(object["proxyDecision"] as? [String: Any])
        #expect(proxyDecision["host"] as? String == proxyHost && proxyDecision["verdict"] as? String == "accepted", "\(proxyDecision)")
        let rejected = try await CLIRunner.run(base)
        #expect(
            rejected.status == 1 && rejected.stderr.hasPrefix("servertrust: get: proxy trust rejected: \(proxyHost):\(relay.port): certificate not trusted: "),
            "\(rejected.stderr)")
        #expect(rejected.stderr.contains("add the issuing CA with --proxy-cacert FILE"), "\(rejected.stderr)")
        let rejectedJSON = try await CLIRunner.run(base + ["--json"])
        let rejectedObject = try #require(try JSONSerialization.jsonObject(with: Data(rejectedJSON.stdout.utf8)) as? [String: Any])
        #expect(
            rejectedJSON.status == 1 && (rejectedObject["proxyDecision"] as? [String: Any])?["host"] as? String == proxyHost,
            "\(rejectedJSON.stdout)")
        #expect(relay.statistics.connectRequests.count == 1)
        let plainProxy = try await CLIRunner.run(["get", fixture.url(), "--proxy", "http://127.0.0.1:9", "--proxy-cacert", proxyRoot])
        #expect(plainProxy.status == 2 && plainProxy.stderr.contains("--proxy-cacert needs an https:// --proxy"), "\(plainProxy.stderr)")
    }
}

extension GetCommandTests {
    /// Writes a policy file (docs/policy-schema.md) into the fixture's directory.
    static func policyFile(_ object: [String: Any], named name: String, in directory: String) throws -> String {
        let path = directory + "/" + name
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("--policy FILE: the policy file decides per host; pin failures are posted to its reportUris")
    func policyFile() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let received = Mutex<[LabHTTPRequest]>([])
        var collectorConfiguration = LabTLSServer.Configuration(
            identity: try LabTLSServer.Identity(
                chain: [
                    fixture.pki.issueLeaf(
                        host: "report.example.test", notBefore: Self.now - LabClock.day,
                        notAfter: Self.now + LabClock.day), fixture.pki.intermediate,
                ],
                key: fixture.pki.leafKey),
            name: "report-collector")
        collectorConfiguration.handler = { request in
            received.withLock { $0.append(request) }
            return LabHTTPResponse(status: 204)
        }
        let collector = try LabTLSServer.started(collectorConfiguration)
        defer { collector.stop() }
        let reportURI = collector.url(host: "report.example.test", path: "/pkp")
        let leafPin = "sha256/" + (try Certificate(derEncoded: fixture.pki.leaf.der)).spkiSHA256Base64
        let strangers = try [55, 56].map { slot in
            "sha256/" + (try Certificate(derEncoded: LabPKI.webChain(host: Self.host, keySlot: slot).intermediate.der)).spkiSHA256Base64
        }
        // The collector is trusted through the "system" roots (SSL_CERT_FILE), as reports are.
        let environment = ["SSL_CERT_FILE": fixture.rootPath]
        let reportResolve = ["--resolve", "report.example.test:\(collector.port):127.0.0.1"]
        let servedBefore = fixture.server.statistics.requestsServed

        // Pinned with a backup pin: trusted.
        let good = try Self.policyFile(
            [
                "version": 1, "anchors": ["root.pem"], "anchorsOnly": true,
                "hosts": [["host": Self.host, "pins": [leafPin, strangers[0]]]],
            ],
            named: "good.json", in: fixture.directory)
        let trusted = try await CLIRunner.run(["get", fixture.url(), "--policy", good] + fixture.resolve, environment: environment)
        #expect(trusted.status == 0 && trusted.stdout == "hello from cli", "\(trusted.stderr)")
        #expect(!trusted.stderr.contains("pin-failure report"))

        // Pins that do not match: refused before the request, and the report is posted.
        let bad = try Self.policyFile(
            [
                "version": 1, "anchors": ["root.pem"], "reportUris": [reportURI],
                "hosts": [["host": "**.example.test", "pins": strangers]],
            ],
            named: "bad.json", in: fixture.directory)
        let refused = try await CLIRunner.run(
            ["get", fixture.url(), "--policy", bad, "--json"] + fixture.resolve + reportResolve,
            environment: environment)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("spkiPinningFailed"), "\(refused.stderr)")
        #expect(refused.stderr.contains("pin-failure report for \(Self.host) sent to \(reportURI): HTTP 204"), "\(refused.stderr)")
        let reports = received.withLock { $0 }
        #expect(reports.count == 1 && reports.first?.method == "POST" && reports.first?.path == "/pkp")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(reports.first?.body ?? [])) as? [String: Any])
        #expect(report["hostname"] as? String == Self.host && report["noted-hostname"] as? String == "**.example.test")
        #expect(report["validation-result"] as? Int == 1)
        #expect(fixture.server.statistics.requestsServed == servedBefore + 1, "only the trusted request reached the server")

        // A host the file does not cover is refused (allHostsMustBeEvaluated defaults to true).
        let elsewhere = try Self.policyFile(
            [
                "version": 1, "anchors": ["root.pem"],
                "hosts": [["host": "api.example.test", "evaluator": "default"]],
            ],
            named: "elsewhere.json", in: fixture.directory)
        let uncovered = try await CLIRunner.run(["get", fixture.url(), "--policy", elsewhere] + fixture.resolve, environment: environment)
        #expect(uncovered.status == 1 && uncovered.stderr.contains("noRequiredEvaluator"), "\(uncovered.stderr)")

        // Bad input: a malformed file, and options the file replaces.
        let broken = try Self.policyFile(
            ["version": 1, "hosts": [["host": Self.host, "pins": ["md5/abc"]]]],
            named: "broken.json", in: fixture.directory)
        let malformed = try await CLIRunner.run(["get", fixture.url(), "--policy", broken] + fixture.resolve)
        #expect(malformed.status == 2 && malformed.stderr.contains("$.hosts[0]"), "\(malformed.stderr)")
        let combined = try await CLIRunner.run(["get", fixture.url(), "--policy", good, "--pin", leafPin] + fixture.resolve)
        #expect(combined.status == 2 && combined.stderr.contains("--policy cannot be combined with --pin"), "\(combined.stderr)")
        #expect(received.withLock { $0.count } == 1)
    }
}
/// Strings appended from the server's threads.
final class LockedList: Sendable {
    private let items = Mutex<[String]>([])
    func append(_ item: String) { items.withLock { $0.append(item) } }
    var all: [String] { items.withLock { $0 } }
}
