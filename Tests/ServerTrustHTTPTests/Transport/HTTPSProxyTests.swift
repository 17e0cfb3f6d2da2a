import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

/// `https://` proxies: TLS to the proxy itself, `CONNECT` inside it, the origin's TLS end to
/// end inside the tunnel. Two deciders, two chains: the proxy's certificate is decided by
/// `ProxyConfiguration.serverTrust` against the proxy's name, the origin's by the session.
@Suite("HTTPS proxies: the proxy's own certificate and the origin's, each decided by its own decider")
struct HTTPSProxyTests {
    static let originHost = "www.example.test"
    static let proxyHost = "proxy.example.test"

    /// An origin server, and a Lab HTTPS proxy (pass-through) whose certificate names
    /// `proxyCertificateHost`, from its own PKI.
    struct Fixture {
        let origin: LabPKI
        let proxyPKI: LabPKI
        let server: LabTLSServer
        let relay: LabMITMRelay

        init(
            proxyCertificateHost: String = HTTPSProxyTests.proxyHost,
            configure: (inout LabMITMRelay.Configuration) -> Void = { _ in },
            configureOrigin: (inout LabTLSServer.Configuration) -> Void = { _ in }
        ) throws {
            origin = try Lab.pki(host: HTTPSProxyTests.originHost)
            proxyPKI = try Lab.pki(host: proxyCertificateHost, keySlot: 46)
            server = try Lab.server(.init(pki: origin), name: "origin", configure: configureOrigin)
            let unusedInterception = try Lab.pki(host: "mitm.invalid", keySlot: 45)
            var configuration = LabMITMRelay.Configuration(mode: .httpProxy, interceptionCA: unusedInterception.rootIssuer, name: "lab https proxy")
            configuration.hostOverrides = [HTTPSProxyTests.originHost: "127.0.0.1"]
            configuration.proxyTLS = (proxyPKI.serverChain, proxyPKI.leafKey)
            configure(&configuration)
            relay = try LabMITMRelay.started(configuration)
        }

        func stop() {
            relay.stop()
            server.stop()
        }

        var proxyURL: String { "https://\(HTTPSProxyTests.proxyHost):\(relay.port)" }
        var url: String { server.url(host: HTTPSProxyTests.originHost) }

        /// A session whose own decider pins the origin's leaf key (which the proxy's chain does
        /// not carry) and whose proxy decider is `proxyTrust`.
        func session(
            proxyTrust: ServerTrustDecider?, originPin: SPKIPin? = nil,
            credential: Credential? = nil,
            configure: (inout HTTPSessionConfiguration) -> Void = { _ in }
        ) throws -> HTTPSession {
            let pin = try originPin ?? SPKIPin(certificate: Lab.certificate(origin.leaf))
            var configuration = HTTPSessionConfiguration(serverTrust: try Lab.decider(anchors: try Lab.anchors(origin), pins: [pin]))
            // The client resolves only the proxy's name; the proxy resolves the origin's.
            configuration.resolve = ["\(HTTPSProxyTests.proxyHost):\(relay.port):127.0.0.1"]
            configuration.timeout = 20
            configuration.proxy = ProxyConfiguration(url: proxyURL, credential: credential, serverTrust: proxyTrust)
            configure(&configuration)
            return try HTTPSession(configuration: configuration)
        }

        /// The relay's counters once its connection thread has recorded `condition` (the
        /// client may return before the relay's thread has finished its bookkeeping).
        func statistics(within seconds: Double = 5, until condition: (LabMITMRelay.Statistics) -> Bool) async throws -> LabMITMRelay.Statistics {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                let statistics = relay.statistics
                if condition(statistics) { return statistics }
                try await Task.sleep(for: .milliseconds(20))
            }
            return relay.statistics
        }
    }

    @Test("through a trusted HTTPS proxy: the origin answers, decided by the session's pins, the tunnel passed through")
    func throughTrustedProxy() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let session = try fixture.session(proxyTrust: try Lab.decider(anchors: try Lab.anchors(fixture.proxyPKI)))
        let first = try await session.get(fixture.url)
        #expect(first.text == "hello from origin")
        let decision = try #require(first.trustDecision)
        #expect(decision.isTrusted && decision.host == Self.originHost && decision.evaluator == "SPKIPinsTrustEvaluator")
        // The proxy's own decision comes with the response, separate from the origin's.
        let proxyDecision = try #require(first.proxyTrustDecision)
        #expect(proxyDecision.isTrusted && proxyDecision.host == Self.proxyHost && proxyDecision.port == Int(fixture.relay.port))
        #expect(proxyDecision.evaluator == "DefaultTrustEvaluator" && !proxyDecision.isFromEarlierHandshake)
        let second = try await session.get(fixture.url)
        #expect(second.text == "hello from origin" && !second.usedNewConnection)
        // A reused tunnel had no proxy handshake: the session's last proxy decision, marked so.
        #expect(second.proxyTrustDecision?.host == Self.proxyHost && second.proxyTrustDecision?.isFromEarlierHandshake == true)
        // A fresh connection runs both handshakes again, each with its own decider (the
        // handshake count restarts with every new socket).
        var fresh = HTTPRequest(.get, fixture.url)
        fresh.usesFreshConnection = true
        let third = try await session.send(fresh)
        #expect(third.text == "hello from origin" && third.usedNewConnection && third.trustDecision?.host == Self.originHost)
        // Its proxy handshake is a full one (proxy TLS sessions are never resumed), decided anew.
        #expect(third.proxyTrustDecision?.host == Self.proxyHost && third.proxyTrustDecision?.isTrusted == true)
        #expect(third.proxyTrustDecision?.isFromEarlierHandshake == false)
        let statistics = fixture.relay.statistics
        #expect(statistics.proxyHandshakesCompleted == 2 && statistics.tunnelsPassedThrough == 2)
        let target = "\(Self.originHost):\(fixture.server.port)"
        #expect(statistics.connectRequests == [target, target])
        #expect(statistics.connectionsIntercepted == 0 && statistics.bytesClientToUpstream > 0)
    }

    enum ProxyTrustCase: String, CaseIterable, CustomTestStringConvertible {
        /// No decider given: the system store, which does not hold the Lab root.
        case systemRootsByDefault
        /// A decider trusting another root with the same name as the proxy's (the origin's
        /// Lab root: same subject, another key).
        case sameNameOtherKey
        /// The proxy's root trusted, but its certificate names another host.
        case wrongName

        var testDescription: String { rawValue }
    }

    @Test("an untrusted proxy certificate fails with proxyTrustRejected before CONNECT is sent", arguments: ProxyTrustCase.allCases)
    func untrustedProxy(_ trustCase: ProxyTrustCase) async throws {
        let fixture = try Fixture(proxyCertificateHost: trustCase == .wrongName ? "other.example.test" : Self.proxyHost)
        defer { fixture.stop() }
        let decider: ServerTrustDecider?
        switch trustCase {
        case .systemRootsByDefault: decider = nil
        case .sameNameOtherKey: decider = try Lab.decider(anchors: try Lab.anchors(fixture.origin))
        case .wrongName: decider = try Lab.decider(anchors: try Lab.anchors(fixture.proxyPKI))
        }
        let session = try fixture.session(proxyTrust: decider)
        guard case .proxyTrustRejected(let decision)? = await failure({ try await session.get(fixture.url) }) else {
            Issue.record("expected the proxy's certificate to be rejected")
            return
        }
        #expect(decision.host == Self.proxyHost && decision.port == Int(fixture.relay.port) && decision.evaluator == "DefaultTrustEvaluator")
        let expected: ValidationFailure.Kind
        switch trustCase {
        case .systemRootsByDefault: expected = .untrustedRoot
        case .sameNameOtherKey: expected = .badSignature
        case .wrongName: expected = .hostnameMismatch
        }
        #expect(decision.validationFailure?.kind == expected, "\(decision)")
        let statistics = try await fixture.statistics { $0.clientHandshakesFailed == 1 }
        #expect(statistics.clientHandshakesFailed == 1 && statistics.connectRequests.isEmpty && statistics.bytesRelayed == 0)
    }

    @Test("a trusted proxy does not make an unpinned origin trusted: the session's pins still reject, nothing forwarded after the handshake")
    func originPinsStillApply() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let strangerPin = try SPKIPin(certificate: Lab.certificate(fixture.proxyPKI.leaf))
        let session = try fixture.session(
            proxyTrust: try Lab.decider(anchors: try Lab.anchors(fixture.proxyPKI)),
            originPin: strangerPin)
        let error = await failure { try await session.get(fixture.url) }
        let decision = try #require(error?.rejection, "\(String(describing: error))")
        #expect(decision.host == Self.originHost && decision.evaluator == "SPKIPinsTrustEvaluator")
        let statistics = try await fixture.statistics { $0.tunnelsPassedThrough == 1 }
        // The tunnel carried the origin's handshake (both ways), and no request: the origin's
        // server saw no HTTP request at all.
        #expect(statistics.proxyHandshakesCompleted == 1 && statistics.tunnelsPassedThrough == 1)
        #expect(fixture.server.statistics.requestsServed == 0)
    }

    @Test("proxy credentials travel inside the proxy's TLS; wrong ones get a 407 proxy refusal")
    func proxyCredentials() async throws {
        let fixture = try Fixture { $0.proxyCredentials = .init(user: "proxy", password: "pw") }
        defer { fixture.stop() }
        let trust = try Lab.decider(anchors: try Lab.anchors(fixture.proxyPKI))
        let session = try fixture.session(proxyTrust: trust, credential: .user("proxy", password: "pw", persistence: .none))
        let response = try await session.get(fixture.url)
        #expect(response.text == "hello from origin")
        let refused = try fixture.session(proxyTrust: trust, credential: .user("proxy", password: "wrong", persistence: .none))
        guard case .proxyRefused(407, _)? = await failure({ try await refused.get(fixture.url) }) else {
            Issue.record("expected a 407 refusal for wrong proxy credentials")
            return
        }
        #expect(fixture.relay.statistics.proxyAuthenticationFailures >= 1)
    }

    /// How a proxy credential is given, and where the request goes.
    enum ProxyCredentialCase: String, CaseIterable, CustomTestStringConvertible {
        /// A request's `Proxy-Authorization` field, to a proxy that asks for credentials.
        case fieldToAskingProxy
        /// The same field, to a proxy that asks for none.
        case fieldToOpenProxy
        /// The same field, to an asking proxy, on a request redirected to another origin (the
        /// same proxy tunnels to both).
        case fieldAcrossRedirect
        /// `ProxyConfiguration.credential`, to an asking proxy.
        case configuredCredential

        var testDescription: String { rawValue }
    }

    /// A proxy credential is the proxy's (RFC 9110 §11.7.2). libcurl sends a request's fields
    /// inside the tunnel, to the origin (`CURLHEADER_SEPARATE`); a caller's
    /// `Proxy-Authorization` field goes to the `CONNECT` request instead, as the configured
    /// credential does, so the proxy that asks for it gets it and no origin ever sees it.
    @Test("a proxy credential goes to the proxy's CONNECT, never to an origin inside the tunnel", arguments: ProxyCredentialCase.allCases)
    func proxyCredentialStaysWithProxy(_ credentialCase: ProxyCredentialCase) async throws {
        let seen = Recorder<(String, String?)>()
        let second = try Lab.server(.init(pki: try Lab.pki(host: Self.originHost)), name: "second origin") {
            $0.handler = { request in
                seen.append((request.path, request.header("Proxy-Authorization")))
                return .text("hello from the second origin")
            }
        }
        defer { second.stop() }
        let fixture = try Fixture {
            if credentialCase != .fieldToOpenProxy { $0.proxyCredentials = .init(user: "proxy", password: "pw") }
        } configureOrigin: {
            $0.handler = { request in
                seen.append((request.path, request.header("Proxy-Authorization")))
                if request.path == "/start" { return LabHTTPResponse(status: 302, headers: [("Location", second.url(host: Self.originHost, path: "/moved"))]) }
                return .text("hello from origin")
            }
        }
        defer { fixture.stop() }
        let proxyTrust = try Lab.decider(anchors: try Lab.anchors(fixture.proxyPKI))
        let field = "Basic " + Data("proxy:pw".utf8).base64EncodedString()
        let session: HTTPSession
        var request = HTTPRequest(.get, fixture.url)
        switch credentialCase {
        case .configuredCredential:
            session = try fixture.session(proxyTrust: proxyTrust, credential: .user("proxy", password: "pw", persistence: .none))
        case .fieldToAskingProxy, .fieldToOpenProxy, .fieldAcrossRedirect:
            session = try fixture.session(proxyTrust: proxyTrust)
            request.headers["Proxy-Authorization"] = field
        }
        if credentialCase == .fieldAcrossRedirect {
            // The same Lab PKI (same keys) serves the second origin: the session's pin holds.
            request = HTTPRequest(.get, fixture.server.url(host: Self.originHost, path: "/start"), headers: request.headers)
        }
        let response = try await session.send(request)
        #expect(response.statusCode == 200)
        #expect(!seen.all.isEmpty && seen.all.allSatisfy { $0.1 == nil }, "an origin received the proxy's credential: \(seen.all)")
        #expect(fixture.relay.statistics.proxyAuthenticationFailures == 0)
        if credentialCase == .fieldAcrossRedirect {
            #expect(seen.all.map(\.0) == ["/start", "/moved"] && fixture.relay.statistics.connectRequests.count == 2)
        }
    }

    /// Every new connection to the proxy is decided by the proxy's decider, as every new origin
    /// connection is (``ConnectionTrust``): a proxy whose certificate the decider refuses now
    /// (a pin changed, the leaf expired or was revoked since) is not let in again by resuming
    /// the TLS session of an earlier handshake, which brings no certificate to decide.
    @Test("a new proxy connection is decided again: a proxy the decider now refuses is not let in by resuming its TLS session")
    func proxyDecidedOnEveryNewConnection() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let refusing = Recorder<Bool>()
        let proxyTrust = Lab.decider("proxy gate") { _ in refusing.all.isEmpty ? nil : "the proxy's certificate is no longer trusted" }
        let session = try fixture.session(proxyTrust: proxyTrust)
        let first = try await session.get(fixture.url)
        #expect(first.text == "hello from origin" && first.proxyTrustDecision?.isTrusted == true)
        refusing.append(true)
        var fresh = HTTPRequest(.get, fixture.url)
        fresh.usesFreshConnection = true
        guard case .proxyTrustRejected(let decision)? = await failure({ try await session.send(fresh) }) else {
            Issue.record("a new connection to the proxy was not decided by the proxy's decider")
            return
        }
        #expect(decision.host == Self.proxyHost && decision.evaluator == "proxy gate")
        #expect(fixture.server.statistics.requestsServed == 1)
    }

    @Test("a per-host TLS minimum that names the proxy holds for the proxy's own handshake; one naming the origin does not")
    func proxyHostMinimumVersion() async throws {
        let fixture = try Fixture(configure: { $0.maximumTLSVersion = .tls1_2 })
        defer { fixture.stop() }
        let proxyTrust = try Lab.decider(anchors: try Lab.anchors(fixture.proxyPKI))
        // The proxy speaks TLS 1.2 at most; a rule for the origin's name is not the proxy's.
        let originRule = try fixture.session(proxyTrust: proxyTrust) { $0.minimumTLSVersionByHost = [Self.originHost: .tls1_2] }
        #expect(try await originRule.get(fixture.url).text == "hello from origin")
        for key in [Self.proxyHost, Self.proxyHost.uppercased()] {
            let strict = try fixture.session(proxyTrust: proxyTrust) { $0.minimumTLSVersionByHost = [key: .tls1_3] }
            let error = await failure { try await strict.get(fixture.url) }
            #expect(error != nil && error?.rejection == nil, "\(key): \(String(describing: error))")
        }
        #expect(fixture.server.statistics.requestsServed == 1)
    }

    @Test("a proxy URL that is neither http:// nor https:// is refused when the session is made")
    func otherSchemesRefused() throws {
        var configuration = HTTPSessionConfiguration(serverTrust: try Lab.decider(anchors: .empty))
        configuration.proxy = ProxyConfiguration(url: "socks5://127.0.0.1:1080")
        #expect(throws: HTTPError.self) { _ = try HTTPSession(configuration: configuration) }
    }
}
