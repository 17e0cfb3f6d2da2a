import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import ServerTrustURLSession
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How `URLSession` requests through `ServerTrustURLProtocol` fail: `URLError` codes as Apple's
/// URLSession uses them, live against nginx, and the whole `HTTPError` table.
@Suite(
    "URLSession drop-in: errors as URLError codes",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct URLProtocolErrorTests {
    func request(_ url: URL, timeout: TimeInterval) -> URLRequest {
        URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
    }

    @Test("timeoutInterval is an idle limit: a silent server times out, a trickling one does not")
    func idleTimeout() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())

        // The idle limit fired (its own message), not nginx's answer after 10 s nor the session's 30 s
        // (a loaded machine may wake the watchdog late, so the time is bounded loosely).
        var start = ContinuousClock.now
        let silent = await urlError { try await urlSession.data(for: request(lab.extrasURL("/slow"), timeout: 1)) }
        #expect(silent?.code == .timedOut, "\(String(describing: silent))")
        #expect(silent?.localizedDescription.contains("nothing was sent or received for 1.0 s") == true)
        #expect(ContinuousClock.now - start < .seconds(25))

        let stalled = await urlError { try await urlSession.data(for: request(lab.extrasURL("/stall-body"), timeout: 1)) }
        #expect(stalled?.code == .timedOut, "the body stopped after its first chunk: \(String(describing: stalled))")
        #expect(stalled?.localizedDescription.contains("URLRequest.timeoutInterval") == true)

        // Six chunks 0.5 s apart: 2.5 s in all, never 2 s without data.
        start = ContinuousClock.now
        let (data, _) = try await urlSession.data(for: request(lab.extrasURL("/trickle"), timeout: 2))
        #expect(String(decoding: data, as: UTF8.self) == (1...6).map { "tick \($0)\n" }.joined())
        #expect(ContinuousClock.now - start > .seconds(2.4))
    }

    @Test("a timeoutInterval too long to count in milliseconds is no limit, never a crash", arguments: [1e300, .greatestFiniteMagnitude])
    func uncountableTimeout(seconds: TimeInterval) async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())
        let (data, _) = try await urlSession.data(for: request(lab.extrasURL("/trickle"), timeout: seconds))
        #expect(String(decoding: data, as: UTF8.self) == (1...6).map { "tick \($0)\n" }.joined())
    }

    @Test("refused certificates: serverCertificateUntrusted with the decision, nothing sent")
    func untrusted() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())
        for (site, kind) in [
            (NginxLab.Site.wrongHost, TrustEvaluationError.Kind.hostValidationFailed), (.expired, .chainValidationFailed),
            (.pinnedSelfSigned, .chainValidationFailed),
        ] {
            let url = lab.url(site, "/?refused")
            let error = try #require(await urlError { try await urlSession.data(from: url) }, "\(site)")
            #expect(error.code == .serverCertificateUntrusted, "\(site): \(error)")
            #expect(error.serverTrustDecision?.failure?.kind == kind, "\(site): \(String(describing: error.serverTrustDecision))")
            #expect(error.serverTrustDecision?.servedChain.isEmpty == false)
            #expect(error.failingURL == url)
            #expect(error.localizedDescription.hasPrefix("server trust rejected: rejected"), "\(error.localizedDescription)")
        }
        try await Task.sleep(for: .milliseconds(200))
        for site in [NginxLab.Site.wrongHost, .expired, .pinnedSelfSigned] { #expect(lab.lab.requests(site).isEmpty) }
    }

    @Test("cannot connect, cannot find the host, a bad header, a WebSocket URL: each its code")
    func connectionAndRequestErrors() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let closedPort = try LabClosedPort()
        defer { closedPort.close() }
        let closed = closedPort.port
        let session = try lab.httpSession { $0.resolve.append("\(NginxLab.host):\(closed):127.0.0.1") }
        let urlSession = lab.urlSession(session)
        PortRoutedURLProtocol.route([closed, 443], to: session)
        defer { PortRoutedURLProtocol.unroute([closed, 443]) }

        let refused = await urlError { try await urlSession.data(from: try #require(URL(string: "https://\(NginxLab.host):\(closed)/"))) }
        #expect(refused?.code == .cannotConnectToHost, "\(String(describing: refused))")
        let unknown = await urlError { try await urlSession.data(from: try #require(URL(string: "https://no-such-host.invalid:443/"))) }
        #expect(unknown?.code == .cannotFindHost, "\(String(describing: unknown))")

        // `setValue(_:forHTTPHeaderField:)` drops such a value; `allHTTPHeaderFields` keeps it.
        var injected = URLRequest(url: lab.url(.valid, "/?injected"))
        injected.allHTTPHeaderFields = ["X-Note": "a\r\nX-Injected: 1"]
        let bad = await urlError { try await urlSession.data(for: injected) }
        #expect(bad?.code == .badURL && bad?.localizedDescription.contains("X-Note") == true, "\(String(describing: bad))")

        let wss = try #require(URL(string: "wss://\(NginxLab.host):\(lab.extrasPort)/socket"))
        let socket = await urlError { try await urlSession.data(from: wss) }
        #expect(socket?.code == .unsupportedURL, "\(String(describing: socket))")
        let recorder = DelegateRecorder()
        lab.urlSession(session, delegate: recorder).webSocketTask(with: wss).resume()
        #expect(await recorder.waitForCompletion())
        #expect(recorder.events == [.complete(.unsupportedURL)], "\(recorder.events)")
        #expect(!lab.extrasRequests.contains { $0.contains("/socket") })
        try await Task.sleep(for: .milliseconds(200))
        #expect(!lab.lab.requests(.valid).contains { $0.contains("injected") })
    }

    @Test("a 401 completes (its challenge renamed) instead of being handed to Foundation's own HTTP")
    func unauthorized() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())
        let result = await urlSession.completion { $0.dataTask(with: lab.extrasURL("/unauthorized"), completionHandler: $1) }
        #expect(result.error == nil && result.http?.statusCode == 401 && result.text == "token expired\n")
        #expect(result.http?.value(forHTTPHeaderField: "WWW-Authenticate") == nil)
        #expect(result.http?.value(forHTTPHeaderField: ServerTrustURLProtocol.withheldChallengeField) == #"Bearer realm="api", error="invalid_token""#)

        // Basic auth answered by the session's own credential handling, before the app sees anything.
        let answering = lab.urlSession(
            try lab.httpSession { configuration in
                configuration.taskChallengeHandler = { _, _ in .credential(Credential(.password(user: NginxLab.user, password: NginxLab.password))) }
            })
        let (page, response) = try await answering.data(from: lab.url(.valid, "/private/"))
        #expect((response as? HTTPURLResponse)?.statusCode == 200 && String(decoding: page, as: UTF8.self) == "welcome to the private area\n")
    }

    @Test("a body past maximumResponseBodySize fails with dataLengthExceedsMaximum")
    func tooLarge() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession { $0.maximumResponseBodySize = 100_000 })
        let error = await urlError { try await urlSession.data(from: lab.extrasURL("/big.txt")) }
        #expect(error?.code == .dataLengthExceedsMaximum, "\(String(describing: error))")
        let (small, _) = try await urlSession.data(from: lab.url(.valid))
        #expect(String(decoding: small, as: UTF8.self) == NginxLab.index)
    }

    @Test("every HTTPError maps to a URLError code, with the error and the failing URL in the user info")
    func table() throws {
        let url = try #require(URL(string: "https://api.example.test/x"))
        let decision = TrustDecision.rejected(ServedChain(certificates: [], host: "api.example.test"), by: "test", .spkiPinningFailed, "no pin")
        let space = ProtectionSpace(host: "api.example.test", port: 443, protocol: "https", authenticationMethod: .httpBasic)
        func transport(_ kind: TransportError.Kind) -> HTTPError { .transport(TransportError(kind, message: "\(kind)")) }
        let kinds: [TransportError.Kind: URLError.Code] = [
            .hostNotFound: .cannotFindHost, .cannotConnect: .cannotConnectToHost, .timedOut: .timedOut,
            .tlsHandshakeFailed: .secureConnectionFailed, .clientCertificateRequired: .clientCertificateRequired,
            .clientCertificateRejected: .clientCertificateRejected, .proxyFailed: .cannotConnectToHost,
            .connectionLost: .networkConnectionLost, .invalidResponse: .badServerResponse,
            .responseHeadersTooLarge: .dataLengthExceedsMaximum, .contentDecodingFailed: .cannotDecodeContentData, .other: .unknown,
        ]
        #expect(Set(kinds.keys) == Set(TransportError.Kind.allCases), "every kind has its code")
        let cases: [(HTTPError, URLError.Code)] =
            kinds.map { (transport($0.key), $0.value) } + [
                (.serverTrustRejected(decision), .serverCertificateUntrusted),
                (.proxyTrustRejected(decision), .serverCertificateUntrusted),
                (.timedOut(TransportError(.timedOut, message: "Operation timed out")), .timedOut),
                (.proxyRefused(statusCode: 403, TransportError(.proxyFailed, message: "CONNECT tunnel failed, response 403")), .cannotConnectToHost),
                (.invalidURL("ht!tp://"), .badURL), (.invalidRequest("header"), .badURL),
                (.cancelled, .cancelled), (.sessionInvalidated, .cancelled),
                (.tooManyRedirects(11), .httpTooManyRedirects), (.redirectRefused("leaves HTTPS"), .redirectToNonExistentLocation),
                (.challengeCancelled(space), .userCancelledAuthentication),
                (.challengeFailed(space, CancellationError()), .userAuthenticationRequired),
                (.responseBodyTooLarge(limit: 10), .dataLengthExceedsMaximum), (.fileError(path: "/x", reason: "gone"), .cannotOpenFile),
            ]
        for (httpError, code) in cases {
            let error = ServerTrustURLProtocol.urlError(for: httpError, url: url)
            #expect(error.code == code, "\(httpError)")
            #expect(error.failingURL == url)
            #expect(error.localizedDescription == httpError.description)
            #expect(error.serverTrustHTTPError?.description == httpError.description)
        }
        let refused = ServerTrustURLProtocol.urlError(for: .serverTrustRejected(decision), url: url)
        #expect(refused.serverTrustDecision?.failure?.kind == .spkiPinningFailed)
        #expect(ServerTrustURLProtocol.urlError(for: .cancelled, url: url).serverTrustDecision == nil)
    }
}
