import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

/// Issue 5's "done when" against a real server: Debian's nginx with a generated PKI, started by
/// each test on free loopback ports and stopped at its end. Every situation is checked through
/// ``HTTPSession`` and through the built `servertrust get`.
@Suite(
    "nginx integration: each situation behaves as the policy says",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct NginxIntegrationTests {
    static let host = NginxLab.host

    /// A session with `decider`, every nginx host resolved to 127.0.0.1.
    func session(
        _ lab: NginxLab, _ decider: ServerTrustDecider,
        configure: (inout HTTPSessionConfiguration) -> Void = { _ in }
    ) throws -> HTTPSession {
        var configuration = HTTPSessionConfiguration(serverTrust: decider)
        configuration.resolve = lab.resolve
        configuration.timeout = 30
        configure(&configuration)
        return try HTTPSession(configuration: configuration)
    }

    /// The lab's roots as custom anchors, nothing else.
    func trusting(_ lab: NginxLab, pins: [SPKIPin] = [], validatesDomainName: Bool = true) throws -> ServerTrustDecider {
        if !validatesDomainName { return ServerTrustDecider(DefaultTrustEvaluator(validateHost: false), anchors: try lab.anchors()) }
        return try Lab.decider(anchors: try lab.anchors(), pins: pins)
    }

    /// A `ServerTrust` evaluator with the system roots plus the lab's roots.
    func policy(_ lab: NginxLab, _ evaluator: any ServerTrustEvaluating) throws -> ServerTrustDecider {
        ServerTrustDecider(evaluator, anchors: try TrustStore.system() + lab.anchors())
    }

    /// `servertrust get URL` with every host resolved to 127.0.0.1.
    func get(_ lab: NginxLab, _ site: NginxLab.Site, _ path: String = "/", _ options: [String] = []) async throws -> ServertrustCLI.Result {
        try await ServertrustCLI.run(["get", lab.url(site, path)] + lab.resolve.flatMap { ["--resolve", $0] } + options)
    }

    /// Waits (up to 5 s) until nginx has logged `count` requests for `site`: the access log line
    /// is written just after the response goes out.
    func loggedRequests(_ lab: NginxLab, _ site: NginxLab.Site, count: Int) async throws -> [String] {
        for _ in 0..<250 where lab.requests(site).count < count { try await Task.sleep(nanoseconds: 20_000_000) }
        return lab.requests(site)
    }

    // MARK: - Server trust

    @Test("a valid chain: accepted with its root as anchor, refused by the system roots alone before any request")
    func validChain() async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        let url = lab.url(.valid)

        let response = try await session(lab, try trusting(lab)).get(url)
        #expect(response.statusCode == 200 && response.text == NginxLab.index)
        #expect(response.tlsVersion == "TLSv1.3")
        let decision = try #require(response.trustDecision)
        #expect(decision.isTrusted && decision.host == Self.host && decision.port == Int(lab.port(.valid)))
        #expect(decision.servedChain == [try lab.certificate(lab.pki.leaf), try lab.certificate(lab.pki.intermediate)])
        #expect(decision.verifiedChain?.last == (try lab.certificate(lab.pki.root)))

        // The AFNetworking policy and SPKI pins accept the genuine chain too.
        let intermediatePin = try SPKIPin(certificate: lab.certificate(lab.pki.intermediate))
        let backupPin = try SPKIPin(certificate: lab.certificate(lab.otherPKI.intermediate))
        let pinSet = try PinningConfiguration([PinnedHost(pattern: try HostPattern(Self.host), pins: [intermediatePin, backupPin])])
        for evaluator: any ServerTrustEvaluating in [
            SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try lab.certificate(lab.pki.intermediate)]),
            SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [try lab.certificate(lab.pki.leaf)]),
            SPKIPinsTrustEvaluator(configuration: pinSet),
        ] {
            let pinned = try await session(lab, try policy(lab, evaluator)).get(url)
            #expect(pinned.statusCode == 200 && pinned.text == NginxLab.index, "\(evaluator)")
        }

        // The system roots alone: untrusted, and nginx logs no request for it.
        let error = await failure { try await session(lab, try ServerTrustDecider.system()).get(lab.url(.valid, "/?system")) }
        #expect(error?.rejection?.validationFailure?.kind == .untrustedRoot, "\(String(describing: error))")

        // The CLI: trusted with --anchors, JSON with the decision; exit 1 on the system roots.
        let cli = try await get(lab, .valid, "/", ["--anchors", lab.rootPath])
        #expect(cli.status == 0 && cli.stdout == NginxLab.index, "\(cli)")
        let json = try await get(lab, .valid, "/", ["--anchors", lab.rootPath, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json)")
        #expect(object["status"] as? Int == 200)
        #expect((object["decision"] as? [String: Any])?["verdict"] as? String == "accepted")
        #expect(((object["decision"] as? [String: Any])?["verifiedChain"] as? [String])?.last == "CN=ServerTrust Lab Root CA P-256,O=ServerTrust Lab,C=US")
        let system = try await get(lab, .valid, "/?cli-system")
        #expect(system.status == 1 && system.stderr.contains("untrustedRoot"), "\(system)")

        let logged = try await loggedRequests(lab, .valid, count: 6)
        #expect(logged.count == 6, "\(logged)")
        #expect(!logged.contains { $0.contains("system") }, "a rejected chain must not reach nginx: \(logged)")
    }

    @Test("a certificate for another host: hostnameMismatch, accepted only without the host check")
    func wrongHost() async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        let error = await failure { try await session(lab, try trusting(lab)).get(lab.url(.wrongHost, "/?checked")) }
        let decision = try #require(error?.rejection, "\(String(describing: error))")
        #expect(decision.validationFailure?.kind == .hostnameMismatch)
        #expect(decision.servedChain.first?.subjectAlternativeNames == [.dnsName("wrong.nginx.test")])
        let unchecked = try await session(lab, try trusting(lab, validatesDomainName: false)).get(lab.url(.wrongHost, "/?unchecked"))
        #expect(unchecked.statusCode == 200 && unchecked.text == NginxLab.index)
        // AFNetworking's validatesDomainName = NO, through the ServerTrust policy.
        var noDomain = SecurityPolicy()
        noDomain.validatesDomainName = false
        #expect(try await session(lab, try policy(lab, noDomain)).get(lab.url(.wrongHost, "/?policy")).statusCode == 200)
        #expect(await failure { try await session(lab, try policy(lab, SecurityPolicy())).get(lab.url(.wrongHost, "/?strict")) }?.rejection != nil)

        let cli = try await get(lab, .wrongHost, "/?cli-checked", ["--anchors", lab.rootPath])
        #expect(cli.status == 1 && cli.stderr.contains("hostnameMismatch"), "\(cli)")
        let cliUnchecked = try await get(lab, .wrongHost, "/?cli-unchecked", ["--anchors", lab.rootPath, "--no-validate-domain"])
        #expect(cliUnchecked.status == 0 && cliUnchecked.stdout == NginxLab.index, "\(cliUnchecked)")

        let logged = try await loggedRequests(lab, .wrongHost, count: 3)
        #expect(logged.count == 3 && logged.allSatisfy { $0.contains("unchecked") || $0.contains("policy") }, "\(logged)")
    }

    @Test("an expired certificate: refused as expired; AFNetworking's compat public-key quirk accepts it, strict does not")
    func expired() async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        let error = await failure { try await session(lab, try trusting(lab)).get(lab.url(.expired, "/?refused")) }
        #expect(error?.rejection?.validationFailure?.kind == .expired, "\(String(describing: error))")

        let intermediate = try lab.certificate(lab.pki.intermediate)
        let compat = SecurityPolicy(
            pinningMode: .publicKey, pinnedCertificates: [intermediate], allowInvalidCertificates: true,
            semantics: .compat)
        let quirk = try await session(lab, try policy(lab, compat)).get(lab.url(.expired, "/?compat"))
        #expect(quirk.statusCode == 200, "AFNetworking accepts an expired pinned chain with allowInvalidCertificates")
        let strict = SecurityPolicy(
            pinningMode: .publicKey, pinnedCertificates: [intermediate], allowInvalidCertificates: true,
            semantics: .strict)
        let strictError = await failure { try await session(lab, try policy(lab, strict)).get(lab.url(.expired, "/?strict")) }
        #expect(strictError?.rejection?.reason.contains("expired") == true, "\(String(describing: strictError))")

        let cli = try await get(lab, .expired, "/?cli", ["--anchors", lab.rootPath])
        #expect(cli.status == 1 && cli.stderr.contains("expired"), "\(cli)")

        let logged = try await loggedRequests(lab, .expired, count: 1)
        #expect(logged.count == 1 && logged.first?.contains("compat") == true, "\(logged)")
    }

    @Test("a pinned self-signed certificate: untrusted by default, accepted by certificate pinning and by its SPKI pin")
    func pinnedSelfSigned() async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        let pinned = try lab.certificate(lab.selfSigned)
        let error = await failure { try await session(lab, try trusting(lab)).get(lab.url(.pinnedSelfSigned, "/?default")) }
        #expect(error?.rejection?.validationFailure?.kind == .untrustedRoot, "\(String(describing: error))")

        // AFNetworking's way: certificate mode, the pinned certificate becomes the anchor.
        let certificateMode = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [pinned], allowInvalidCertificates: true)
        let byCertificate = try await session(lab, try policy(lab, certificateMode)).get(lab.url(.pinnedSelfSigned, "/?certificate"))
        #expect(byCertificate.statusCode == 200 && byCertificate.text == NginxLab.index)
        // curl's way: -k with --pinnedpubkey.
        let pin = SPKIPin(certificate: pinned)
        let byPin = try await session(lab, try Lab.decider(anchors: .empty, pins: [pin], validates: false))
            .get(lab.url(.pinnedSelfSigned, "/?pin"))
        #expect(byPin.statusCode == 200 && byPin.trustDecision?.evaluator == "SPKIPinsTrustEvaluator")
        // Another key pinned: refused.
        let wrongPin = SPKIPin(certificate: try lab.certificate(lab.pki.leaf))
        let wrong = await failure {
            try await session(lab, try Lab.decider(anchors: .empty, pins: [wrongPin], validates: false))
                .get(lab.url(.pinnedSelfSigned, "/?wrong-pin"))
        }
        #expect(wrong?.rejection?.evaluator == "SPKIPinsTrustEvaluator")

        let cliDefault = try await get(lab, .pinnedSelfSigned, "/?cli-default", ["--anchors", lab.rootPath])
        #expect(cliDefault.status == 1 && cliDefault.stderr.contains("untrustedRoot"), "\(cliDefault)")
        let cliCertificate = try await get(
            lab, .pinnedSelfSigned, "/?cli-certificate",
            ["--mode", "certificate", "--pinned-cert", lab.pinnedPath, "--allow-invalid"])
        #expect(cliCertificate.status == 0 && cliCertificate.stdout == NginxLab.index, "\(cliCertificate)")
        let cliPin = try await get(lab, .pinnedSelfSigned, "/?cli-pin", ["--allow-invalid", "--pin", pin.description])
        #expect(cliPin.status == 0 && cliPin.stdout == NginxLab.index, "\(cliPin)")

        let logged = try await loggedRequests(lab, .pinnedSelfSigned, count: 4)
        #expect(logged.count == 4, "\(logged)")
        #expect(!logged.contains { $0.contains("default") || $0.contains("wrong-pin") }, "\(logged)")
    }

    // MARK: - HTTP features on the trusted server

    @Test("Basic authentication: 401 with the realm, 200 with the credential, 401 for a wrong password")
    func basicAuthentication() async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        let session = try session(lab, try trusting(lab))
        let url = lab.url(.valid, "/private/")

        let anonymous = try await session.get(url)
        #expect(anonymous.statusCode == 401)
        #expect(anonymous.headers["WWW-Authenticate"] == "Basic realm=\"\(NginxLab.realm)\"")

        let realms = Recorder<String?>()
        var request = HTTPRequest(.get, url)
        request.challengeHandler = { challenge, _ in
            if challenge.protectionSpace.authenticationMethod != .serverTrust { realms.append(challenge.protectionSpace.realm) }
            return .credential(.user(NginxLab.user, password: NginxLab.password, persistence: .none))
        }
        let authenticated = try await session.send(request)
        #expect(authenticated.statusCode == 200 && authenticated.text == "welcome to the private area\n")
        #expect(realms.all == [NginxLab.realm])

        var wrong = HTTPRequest(.get, url)
        wrong.credential = .user(NginxLab.user, password: "wrong", persistence: .none)
        wrong.sendsCredentialPreemptively = true
        #expect(try await session.send(wrong).statusCode == 401)

        let cli = try await get(lab, .valid, "/private/", ["--anchors", lab.rootPath, "-u", "\(NginxLab.user):\(NginxLab.password)"])
        #expect(cli.status == 0 && cli.stdout == "welcome to the private area\n", "\(cli)")
        let cliAnonymous = try await get(lab, .valid, "/private/", ["--anchors", lab.rootPath])
        #expect(cliAnonymous.status == 3, "\(cliAnonymous)")
        let cliWrong = try await get(lab, .valid, "/private/", ["--anchors", lab.rootPath, "-u", "\(NginxLab.user):nope"])
        #expect(cliWrong.status == 3 && cliWrong.stderr.contains("HTTP 401"), "\(cliWrong)")

        // Two successes (HTTPSession's answered challenge, the CLI's -u); every other request got 401.
        let logged = try await loggedRequests(lab, .valid, count: 7)
        #expect(logged.filter { $0.contains(" 200 \"alice\"") }.count == 2, "\(logged)")
        #expect(logged.filter { $0.contains(" 200 ") }.count == 2, "\(logged)")
        #expect(logged.filter { $0.contains(" 401 ") }.count >= 5, "\(logged)")
    }

    @Test("ssl_verify_client on: 400 without a client certificate, 200 with a preset, PEM or PKCS#12 identity")
    func clientCertificate() async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        let url = lab.url(.clientCertificate, "/whoami")
        let anonymous = try await session(lab, try trusting(lab)).get(url)
        #expect(anonymous.statusCode == 400 && anonymous.text.contains("No required SSL certificate was sent"), "\(anonymous.text)")

        let identity = try lab.clientIdentity()
        let authenticated = try await session(lab, try trusting(lab)) { $0.clientIdentities = [Self.host: identity] }.get(url)
        #expect(authenticated.statusCode == 200)
        #expect(authenticated.text == "client CN=nginx client,O=ServerTrust Lab verify=SUCCESS\n")

        // Answered through a client-certificate challenge, which names the acceptable CA.
        let names = Recorder<[String]>()
        let challenged = try session(lab, try trusting(lab)) { configuration in
            configuration.sessionChallengeHandler = { challenge in
                guard challenge.protectionSpace.authenticationMethod == .clientCertificate else { return .performDefaultHandling }
                names.append(challenge.protectionSpace.distinguishedNames)
                return .useCredential(.identity(identity, persistence: .none))
            }
        }
        #expect(try await challenged.get(url).statusCode == 200)
        #expect(names.all == [[try lab.certificate(lab.clientPKI.root).subject.rfc4514]])

        let cli = try await get(
            lab, .clientCertificate, "/whoami",
            [
                "--anchors", lab.rootPath, "--cert", lab.clientCertificatePath,
                "--key", lab.clientKeyPath,
            ])
        #expect(cli.status == 0 && cli.stdout.hasPrefix("client CN=nginx client"), "\(cli)")
        let pfx = try LabPKCS12.create(
            certificate: lab.clientLeaf, key: lab.clientPKI.leafKey, chain: [lab.clientPKI.intermediate],
            password: "pfx")
        let pfxPath = try LabFiles.write(pfx, to: lab.directory + "/client.p12")
        let cliPKCS12 = try await get(lab, .clientCertificate, "/whoami", ["--anchors", lab.rootPath, "--cert", pfxPath, "--pass", "pfx"])
        #expect(cliPKCS12.status == 0 && cliPKCS12.stdout.hasSuffix("verify=SUCCESS\n"), "\(cliPKCS12)")
        let cliAnonymous = try await get(lab, .clientCertificate, "/whoami", ["--anchors", lab.rootPath])
        #expect(cliAnonymous.status == 3 && cliAnonymous.stderr.contains("HTTP 400"), "\(cliAnonymous)")

        let logged = try await loggedRequests(lab, .clientCertificate, count: 6)
        #expect(logged.filter { $0.hasSuffix("\"SUCCESS\"") }.count == 4, "\(logged)")
        #expect(logged.filter { $0.hasSuffix("\"NONE\"") }.count == 2, "\(logged)")
    }

    @Test("a gzip response and a chunked response of unknown length are decoded")
    func gzipAndChunked() async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        let session = try session(lab, try trusting(lab))
        let compressed = try await session.get(lab.url(.valid, "/large.txt"))
        #expect(compressed.statusCode == 200)
        #expect(compressed.headers["Content-Encoding"] == "gzip")
        #expect(compressed.headers["Transfer-Encoding"] == "chunked", "gzip output is streamed in chunks")
        #expect(compressed.body == Array(lab.largeText.utf8))

        let identity = try await self.session(lab, try trusting(lab)) { $0.acceptsCompressedResponses = false }.get(lab.url(.valid, "/large.txt"))
        #expect(identity.headers["Content-Encoding"] == nil)
        #expect(identity.headers["Content-Length"] == String(lab.largeText.utf8.count))
        #expect(identity.body == compressed.body)

        let chunked = try await session.get(lab.url(.valid, "/chunked"))
        #expect(chunked.statusCode == 200)
        #expect(chunked.headers["Transfer-Encoding"] == "chunked")
        #expect(chunked.headers["Content-Length"] == nil)
        if IntegrationTools.nginxEchoModule != nil {
            #expect(chunked.text == "first chunk\nsecond chunk\n")
        } else {
            #expect(chunked.text == "start TLSv1.3 end\n")
        }

        // get asks for compression only with --compressed (curl's default), and decodes it then.
        let output = lab.directory + "/large.out"
        let cli = try await get(lab, .valid, "/large.txt", ["--anchors", lab.rootPath, "--compressed", "-o", output, "--json"])
        #expect(cli.status == 0, "\(cli)")
        #expect(FileManager.default.contents(atPath: output) == Data(lab.largeText.utf8))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [String: Any], "\(cli)")
        let headers = (object["headers"] as? [[String]]) ?? []
        #expect(headers.contains(["Content-Encoding", "gzip"]), "\(headers)")
        let plain = try await get(lab, .valid, "/large.txt", ["--anchors", lab.rootPath, "-o", output, "--json"])
        #expect(FileManager.default.contents(atPath: output) == Data(lab.largeText.utf8), "\(plain)")
        let plainHeaders = ((try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [String: Any])?["headers"] as? [[String]]) ?? []
        #expect(!plainHeaders.contains { $0.first?.lowercased() == "content-encoding" }, "nothing asked, nothing encoded: \(plainHeaders)")
        let cliChunked = try await get(lab, .valid, "/chunked", ["--anchors", lab.rootPath, "--json"])
        let chunkedObject = try #require(try JSONSerialization.jsonObject(with: Data(cliChunked.stdout.utf8)) as? [String: Any], "\(cliChunked)")
        #expect(((chunkedObject["headers"] as? [[String]]) ?? []).contains(["Transfer-Encoding", "chunked"]))
        #expect(chunkedObject["body"] as? String == chunked.text)
        let logged = try await loggedRequests(lab, .valid, count: 6)
        #expect(logged.count == 6, "\(logged)")
    }

    @Test("a redirect to another host with another certificate: decided again, Authorization dropped; a pin for the first host refuses it")
    func redirectToOtherHost() async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        let session = try session(lab, try trusting(lab))
        var request = HTTPRequest(.get, lab.url(.valid, "/redirect"))
        request.headers["Authorization"] = "Bearer secret-token"
        let response = try await session.send(request)
        #expect(response.statusCode == 200)
        #expect(response.text == "landed on \(NginxLab.otherHost) from=www authorization=[]\n")
        #expect(response.url == lab.url(.other, "/landing?from=www"))
        #expect(response.redirects.map(\.statusCode) == [302])
        let decision = try #require(response.trustDecision)
        let otherRoot = try lab.certificate(lab.otherPKI.root)
        #expect(decision.host == NginxLab.otherHost && decision.verifiedChain?.last == otherRoot)

        // Pinning the first host's CA key applies to every hop: the other host's chain is refused.
        let pin = SPKIPin(certificate: try lab.certificate(lab.pki.intermediate))
        let error = await failure { try await self.session(lab, try trusting(lab, pins: [pin])).get(lab.url(.valid, "/redirect")) }
        let rejection = try #require(error?.rejection, "\(String(describing: error))")
        #expect(rejection.host == NginxLab.otherHost && rejection.evaluator == "SPKIPinsTrustEvaluator")

        let cli = try await get(
            lab, .valid, "/redirect",
            [
                "--anchors", lab.rootPath, "--anchors", lab.otherRootPath, "-H", "Authorization: Bearer x",
                "--json",
            ])
        #expect(cli.status == 0, "\(cli)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [String: Any], "\(cli)")
        #expect(object["body"] as? String == "landed on \(NginxLab.otherHost) from=www authorization=[]\n")
        #expect((object["redirects"] as? [[String: Any]])?.first?["location"] as? String == lab.url(.other, "/landing?from=www"))
        let cliUntrusted = try await get(lab, .valid, "/redirect", ["--anchors", lab.rootPath])
        #expect(
            cliUntrusted.status == 1 && cliUntrusted.stderr.contains(NginxLab.otherHost)
                && cliUntrusted.stderr.contains("untrustedRoot"), "\(cliUntrusted)")

        #expect(try await loggedRequests(lab, .valid, count: 4).count == 4)
        #expect(try await loggedRequests(lab, .other, count: 2).count == 2, "the refused hops never reached the other host")
    }

    // MARK: - Concurrency

    @Test("256 concurrent requests complete over a few keep-alive connections")
    func manyConcurrentRequests() async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        let session = try session(lab, try trusting(lab))
        let base = lab.url(.valid, "/item")
        let bodies = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<256 {
                group.addTask {
                    let response = try await session.get(base, parameters: [("n", String(index))])
                    return (index, "\(response.statusCode) \(response.text)")
                }
            }
            var result: [Int: String] = [:]
            for try await (index, text) in group { result[index] = text }
            return result
        }
        #expect(bodies.count == 256)
        #expect(bodies.allSatisfy { $0.value == "200 item \($0.key)\n" })
        #expect(session.transferThreadCount == 1)
        let logged = try await loggedRequests(lab, .valid, count: 256)
        #expect(logged.count == 256)
        // `$connection $connection_requests …`: few connections, most carrying many requests.
        let connections = Set(logged.compactMap { $0.split(separator: " ").first.map(String.init) })
        // At most 8 connections per host are open at once; under load one may be replaced, so
        // allow a few more in total while still requiring that nearly every request rode an
        // existing connection.
        #expect(connections.count <= 16, "\(connections.count) connections")
        let reused = logged.filter { line in (line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) > 1 }
        #expect(reused.count >= 256 - connections.count)
    }
}
