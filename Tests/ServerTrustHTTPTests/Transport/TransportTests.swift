import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

@Suite("transport: concurrency, redirects, cancellation, timeouts")
struct TransportTests {
    let host = "www.example.test"

    @Test("256 concurrent requests complete over a few keep-alive connections")
    func manyConcurrentRequests() async throws {
        let pki = try Lab.pki(host: host)
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in .text("echo \(request.target)") }
        }
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        let bodies = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<256 {
                group.addTask {
                    let response = try await session.get(server.url(host: host, path: "/item"), parameters: [("n", String(index))])
                    return (index, response.text)
                }
            }
            var result: [Int: String] = [:]
            for try await (index, text) in group { result[index] = text }
            return result
        }
        #expect(bodies.count == 256)
        #expect(bodies.allSatisfy { $0.value == "echo /item?n=\($0.key)" })
        let statistics = server.statistics
        #expect(statistics.requestsServed == 256)
        // At most 8 at once (maximumConnectionsPerHost); over the run a few more may open,
        // because libcurl's pool (four connections per transfer in the multi handle) shrinks as
        // transfers finish and closes idle ones that later transfers then reopen: 11 were seen
        // on a loaded machine. 256 requests on a few dozen connections is still keep-alive.
        #expect(statistics.connectionsAccepted <= 24, "\(statistics.connectionsAccepted) connections")
        #expect(session.transferThreadCount == 1)
    }

    @Test("a slow server-trust handler for one request does not delay the others")
    func slowHandlerDoesNotBlock() async throws {
        let pki = try Lab.pki(host: host)
        // The fast server's handler signals; the slow challenge handler waits for that signal
        // (up to 10 s). If a handler blocked the whole session, the fast request could not be
        // served while it waits, and the handler would time out.
        let fastServed = DispatchSemaphore(value: 0)
        let outcome = Recorder<Bool>()
        let slowServer = try Lab.server(try Lab.identity(pki, host: "slow.example.test"), name: "slow")
        let fastServer = try Lab.server(.init(pki: pki), name: "fast") { configuration in
            configuration.handler = { _ in
                fastServed.signal()
                return .text("hello from fast")
            }
        }
        defer {
            slowServer.stop()
            fastServer.stop()
        }
        let session = try Lab.session(trusting: pki, resolving: [("slow.example.test", slowServer), (host, fastServer)]) { configuration in
            configuration.sessionChallengeHandler = { challenge in
                if challenge.protectionSpace.host == "slow.example.test" {
                    outcome.append(fastServed.wait(timeout: .now() + 10) == .success)
                }
                return .performDefaultHandling
            }
        }
        async let slow = session.get(slowServer.url(host: "slow.example.test"))
        // Wait until the slow handshake is inside its handler, then send the fast request.
        while slowServer.statistics.connectionsAccepted == 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        try await Task.sleep(nanoseconds: 100_000_000)
        let fast = try await session.get(fastServer.url(host: host))
        #expect(fast.text == "hello from fast")
        let slowResponse = try await slow
        #expect(slowResponse.text == "hello from slow")
        #expect(outcome.all == [true], "the fast request was not served while the slow handler ran")
        #expect(session.transferThreadCount == 2)
    }

    @Test("a redirect to another host runs the decision again and drops Authorization")
    func redirectAcrossHosts() async throws {
        let pki = try Lab.pki(host: host)
        let other = "api.example.test"
        let seen = Recorder<(String, String?)>()
        let target = try Lab.server(try Lab.identity(pki, host: other), name: "target") { configuration in
            configuration.handler = { request in
                seen.append((request.target, request.header("Authorization")))
                return .text("arrived")
            }
        }
        defer { target.stop() }
        let origin = try Lab.server(.init(pki: pki), name: "origin") { configuration in
            configuration.handler = { request in
                seen.append((request.target, request.header("Authorization")))
                if request.path == "/same" { return LabHTTPResponse(status: 307, headers: [("Location", "/landing")]) }
                if request.path == "/landing" { return .text("same origin") }
                return LabHTTPResponse(status: 302, headers: [("Location", target.url(host: other, path: "/moved"))])
            }
        }
        defer { origin.stop() }
        let hosts = Recorder<String>()
        let anchors = try Lab.anchors(pki)
        let validating = DefaultTrustEvaluator()
        var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(RecordingEvaluator(hosts: hosts, then: validating), anchors: anchors))
        configuration.resolve = ["\(host):\(origin.port):127.0.0.1", "\(other):\(target.port):127.0.0.1"]
        let session = try HTTPSession(configuration: configuration)

        let response = try await session.get(origin.url(host: host, path: "/start"), headers: ["Authorization": "Bearer secret"])
        #expect(response.text == "arrived")
        #expect(response.url == target.url(host: other, path: "/moved"))
        #expect(response.redirects.map(\.statusCode) == [302])
        #expect(response.trustDecision?.host == other)
        #expect(hosts.all == [host, other])
        let requests = seen.all
        #expect(requests.count == 2)
        #expect(requests.first?.1 == "Bearer secret")
        #expect(requests.last?.0 == "/moved" && requests.last?.1 == nil)

        // Same origin: Authorization is kept.
        let same = try await session.get(origin.url(host: host, path: "/same"), headers: ["Authorization": "Bearer secret"])
        #expect(same.text == "same origin")
        #expect(seen.all.last?.1 == "Bearer secret")

        // If the new host's chain is rejected, the redirect fails with that decision.
        var strict = configuration
        strict.serverTrust = Lab.decider("test") { trust in trust.host == other ? "not this one" : nil }
        let servedBefore = target.statistics.requestsServed
        let error = await failure { try await HTTPSession(configuration: strict).get(origin.url(host: host, path: "/start")) }
        #expect(error?.rejection?.host == other)
        #expect(target.statistics.requestsServed == servedBefore)
    }

    /// A `Host` field the caller wrote names the host it was written for; libcurl also picks
    /// the cookies it sends by it. curl's own redirects send a custom `Host` only to the first
    /// host (http.c, `first_host`); ours must not carry it, and that host's cookies, elsewhere.
    /// And libcurl 7.88 keeps that cookie host on the easy handle after the transfer (one lane
    /// here, so every request runs on the same handle): a later request without a `Host`
    /// field, to any host, must not get the cookies it selects.
    @Test("a custom Host field and the cookies it selects stay with its host: not across a redirect, not on a later request")
    func redirectDropsCustomHost() async throws {
        let pki = try Lab.pki(host: host)
        let other = "api.other.test"
        let seen = Recorder<String>()
        let otherIdentity = try Lab.identity(pki, host: other)
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.serverNameIdentities = [other: otherIdentity]
            configuration.handler = { request in
                seen.append("\(request.serverName ?? "?") \(request.path) host=\(request.header("Host") ?? "-") cookie=\(request.header("Cookie") ?? "-")")
                guard request.path == "/login" else { return .text("landed") }
                let port = request.header("Host")?.split(separator: ":").last ?? ""
                return LabHTTPResponse(
                    status: 302, headers: [("Set-Cookie", "session=secret; Path=/; Secure"), ("Location", "https://\(other):\(port)/landing")])
            }
        }
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(host, server), (other, server)]) { configuration in
            configuration.storesCookies = true
            configuration.maximumTransferThreads = 1
        }
        defer { session.invalidate() }
        let response = try await session.get(server.url(host: host, path: "/login"), headers: ["Host": "\(host):\(server.port)"])
        #expect(response.text == "landed")
        #expect(seen.all.last == "\(other) /landing host=\(other):\(server.port) cookie=-", "\(seen.all)")

        // Without a redirect: the next request, to another host and without a Host field.
        _ = try await session.get(server.url(host: host, path: "/login"), headers: ["Host": "\(host):\(server.port)"])
        _ = try await session.get(server.url(host: other, path: "/later"))
        #expect(seen.all.last == "\(other) /later host=\(other):\(server.port) cookie=-", "\(seen.all)")
        // The cookie still goes to its own host, with or without a Host field.
        _ = try await session.get(server.url(host: host, path: "/again"))
        #expect(seen.all.last == "\(host) /again host=\(host):\(server.port) cookie=session=secret", "\(seen.all)")
    }

    /// A server whose handler records that a request arrived and answers only when `release`
    /// is signalled (or after 20 s), so the test decides what happens while a request runs.
    static func heldServer(_ pki: LabPKI) throws -> (LabTLSServer, DispatchSemaphore, Recorder<Bool>) {
        let release = DispatchSemaphore(value: 0)
        let entered = Recorder<Bool>()
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { _ in
                entered.append(true)
                _ = release.wait(timeout: .now() + 20)
                return .text("late")
            }
        }
        return (server, release, entered)
    }

    @Test("task cancellation aborts a running request")
    func cancellation() async throws {
        let pki = try Lab.pki(host: host)
        // The server answers only when the test releases it, after the request has ended.
        let (server, release, entered) = try Self.heldServer(pki)
        defer {
            release.signal()
            server.stop()
        }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        let task = Task { try await session.get(server.url(host: host)) }
        while entered.all.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        task.cancel()
        let result = await task.result
        guard case .failure(let error) = result, case .cancelled? = error as? HTTPError else {
            Issue.record("expected cancellation, got \(result)")
            return
        }
        // The session keeps working after a cancellation.
        let quick = try Lab.server(.init(pki: pki), name: "quick")
        defer { quick.stop() }
        let other = try Lab.session(trusting: pki, resolving: [(host, quick)])
        #expect(try await other.get(quick.url(host: host)).statusCode == 200)
        #expect(server.statistics.requestsServed == 0)
    }

    enum LaterChallenge: String, CaseIterable, Sendable {
        case serverTrust, clientCertificate
    }

    /// The wait is timed from `cancel()` to the moment the server sees the handshake fail
    /// (the client gives up as soon as the wait ends), watched from a thread of its own: the
    /// whole test run keeps the two-thread cooperative pool busy for seconds at a time (sync
    /// CLI tests wait for child processes on it), so neither the test's nor the request's task
    /// can time it. For the same reason the timeouts are long: the request may take long to
    /// reach its handshake, and a wait that timed out first would prove nothing.
    @Test(
        "cancelling the task ends a connection-level challenge's .later wait within 100 ms",
        arguments: LaterChallenge.allCases, [false, true])
    func laterChallengeCancellation(_ kind: LaterChallenge, onTransferExecutor: Bool) async throws {
        let pki = try Lab.pki(host: host)
        let clientRoot = try LabPKI.webChain(host: "client.example.test", keySlot: 44).root
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handshakeTimeout = 300
            if kind == .clientCertificate { configuration.clientAuthentication = .init(trustedCertificates: [clientRoot], mode: .required) }
        }
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)]) { $0.challengeTimeout = 120 }
        defer { session.invalidate() }
        let asked = Recorder<ProtectionSpace.AuthenticationMethod>()
        let awaited: ProtectionSpace.AuthenticationMethod = kind == .serverTrust ? .serverTrust : .clientCertificate
        var request = HTTPRequest(.get, server.url(host: host))
        request.challengeHandler = { challenge, _ in
            asked.append(challenge.protectionSpace.authenticationMethod)
            // Never answered: the transfer thread waits inside the handshake.
            return challenge.protectionSpace.authenticationMethod == awaited ? .later : .disposition(.performDefaultHandling)
        }
        let task = Task(executorPreference: onTransferExecutor ? session.transferExecutor : nil) {
            await failure { try await session.send(request) }
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(120)
        while !asked.all.contains(awaited) && clock.now < deadline { try await Task.sleep(nanoseconds: 2_000_000) }
        try #require(asked.all.contains(awaited))
        // The handler has returned `.later`; give the lane a moment to be inside the wait.
        try await Task.sleep(nanoseconds: 20_000_000)
        #expect(server.statistics.handshakesFailed == 0)
        let handshakeFailed = Watch(for: 10) { server.statistics.handshakesFailed > 0 }
        let cancelled = clock.now
        task.cancel()
        let error = await task.value
        guard case .cancelled? = error else {
            Issue.record("expected cancellation, got \(String(describing: error))")
            return
        }
        let ended = try #require(await handshakeFailed.instant(within: 10))
        #expect(ended - cancelled < .milliseconds(100), "the wait ended \(ended - cancelled) after the cancellation")
        #expect(server.statistics.requestsServed == 0)
        // The transfer thread is free again: the next request goes through (without a client
        // certificate, the server that requires one refuses the handshake).
        if kind == .serverTrust {
            #expect(try await session.get(server.url(host: host, path: "/next")).statusCode == 200)
        } else {
            guard case .transport? = await failure({ try await session.get(server.url(host: host, path: "/next")) }) else {
                Issue.record("expected the handshake to be refused")
                return
            }
        }
    }

    @Test("requests from a task on the transfer executor: keep-alive alongside other tasks, cancellation, timeout")
    func transferExecutorRequests() async throws {
        let pki = try Lab.pki(host: host)
        let release = DispatchSemaphore(value: 0)
        let entered = Recorder<Bool>()
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                if request.target == "/hold" {
                    entered.append(true)
                    _ = release.wait(timeout: .now() + 20)
                    return .text("late")
                }
                if request.target == "/slow" {
                    Thread.sleep(forTimeInterval: 2)
                    return .text("late")
                }
                return .text("echo \(request.target)")
            }
        }
        defer {
            release.signal()
            server.stop()
        }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        let executor = session.transferExecutor
        let url = server.url(host: host, path: "/seq")

        // A sequential keep-alive loop on the transfer thread (the requests run there, without
        // suspending when nothing else waits) while other tasks send requests through the
        // same lane: every request completes with its own response.
        let others = Task {
            try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<32 { group.addTask { try await session.get(url, parameters: [("other", String(index))]).text } }
                var texts: [String] = []
                for try await text in group { texts.append(text) }
                return texts.sorted()
            }
        }
        let sequential = try await withTaskExecutorPreference(executor) {
            var responses: [HTTPResponse] = []
            for index in 0..<50 { responses.append(try await session.get(url, parameters: [("n", String(index))])) }
            return responses
        }
        #expect(sequential.map(\.text) == (0..<50).map { "echo /seq?n=\($0)" })
        #expect(sequential.dropFirst().contains { !$0.usedNewConnection })
        #expect(sequential.allSatisfy { $0.trustDecision?.isTrusted == true })
        #expect(try await others.value == (0..<32).map { "echo /seq?other=\($0)" }.sorted())

        // Cancelling such a task aborts its request.
        let held = Task(executorPreference: executor) { try await session.get(server.url(host: host, path: "/hold")) }
        while entered.all.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        held.cancel()
        let heldResult = await held.result
        guard case .failure(let error) = heldResult, case .cancelled? = error as? HTTPError else {
            Issue.record("expected cancellation, got \(heldResult)")
            return
        }

        // Timeouts apply as usual.
        var slow = HTTPRequest(.get, server.url(host: host, path: "/slow"))
        slow.timeout = 0.3
        let request = slow
        let timedOut = await Task(executorPreference: executor) { await failure { try await session.send(request) } }.value
        guard case .timedOut? = timedOut else {
            Issue.record("expected a timeout, got \(String(describing: timedOut))")
            return
        }
        let after = try await withTaskExecutorPreference(executor) { try await session.get(url) }
        #expect(after.text == "echo /seq")
    }

    @Test("a request that takes too long times out")
    func timeouts() async throws {
        let pki = try Lab.pki(host: host)
        let slow = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { _ in
                Thread.sleep(forTimeInterval: 2)
                return .text("late")
            }
        }
        defer { slow.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(host, slow)])
        var request = HTTPRequest(.get, slow.url(host: host))
        request.timeout = 0.3
        let error = await failure { try await session.send(request) }
        guard case .timedOut(let transport)? = error else {
            Issue.record("expected a timeout, got \(String(describing: error))")
            return
        }
        #expect(transport.kind == .timedOut)
        // The transport's own words and code, as diagnostic text.
        #expect("\(error!)".hasPrefix("timed out: Operation timed out after "), "\(error!)")
        #expect("\(error!)".hasSuffix(" (curl 28)"), "\(error!)")

        // A server that never answers the handshake: the connect timeout.
        let stalled = try Lab.server(.init(pki: pki), name: "stall") { $0.behavior = .stall }
        defer { stalled.stop() }
        let connectLimited = try Lab.session(trusting: pki, resolving: [(host, stalled)]) { $0.connectTimeout = 0.3 }
        let connectError = await failure { try await connectLimited.get(stalled.url(host: host)) }
        guard case .timedOut? = connectError else {
            Issue.record("expected a connect timeout, got \(String(describing: connectError))")
            return
        }
    }

    @Test("a handshake failure that is not a trust decision is a transport error")
    func handshakeFailure() async throws {
        let pki = try Lab.pki(host: host)
        let server = try Lab.server(.init(pki: pki)) { $0.behavior = .sendAlert(40) }
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        let error = await failure { try await session.get(server.url(host: host)) }
        guard case .transport(let transport)? = error else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(transport.kind == .tlsHandshakeFailed, "\(transport)")
    }

    @Test("a per-host TLS minimum refuses an older server")
    func perHostMinimumVersion() async throws {
        let pki = try Lab.pki(host: host)
        let server = try Lab.server(.init(pki: pki)) { $0.maximumTLSVersion = .tls1_2 }
        defer { server.stop() }
        let relaxed = try Lab.session(trusting: pki, resolving: [(host, server)])
        #expect(try await relaxed.get(server.url(host: host)).tlsVersion == "TLSv1.2")
        // Host keys match in any case (RFC 4343), as the host they name does.
        for key in [host, host.uppercased(), "Www.Example.Test"] {
            let strict = try Lab.session(trusting: pki, resolving: [(host, server)]) { $0.minimumTLSVersionByHost = [key: .tls1_3] }
            let error = await failure { try await strict.get(server.url(host: host)) }
            guard case .transport? = error else {
                Issue.record("\(key): expected a handshake failure, got \(String(describing: error))")
                continue
            }
        }
        // The absolute form of the name (one trailing dot, RFC 1034 §3.1) is the same host, as
        // to its policy rule and its certificate's name: its minimum applies too.
        let both = [(host, server), (host + ".", server)]
        #expect(try await Lab.session(trusting: pki, resolving: both).get(server.url(host: host + ".")).tlsVersion == "TLSv1.2")
        let strict = try Lab.session(trusting: pki, resolving: both) { $0.minimumTLSVersionByHost = [host: .tls1_3] }
        let absolute = await failure { try await strict.get(server.url(host: host + ".")) }
        if case .transport? = absolute {} else { Issue.record("\(host).: expected a handshake failure, got \(String(describing: absolute))") }
        let conflicting = #expect(throws: HTTPError.self) {
            try Lab.session(trusting: pki, resolving: [(host, server)]) { $0.minimumTLSVersionByHost = [host: .tls1_3, host.uppercased(): .tls1_2] }
        }
        guard case .invalidRequest(let reason)? = conflicting else {
            Issue.record("expected invalidRequest, got \(String(describing: conflicting))")
            return
        }
        #expect(reason.contains("minimumTLSVersionByHost") && reason.contains("differ only in case"), "\(reason)")
    }

    /// libcurl connects to 127.0.0.1 for every one of these spellings (urlapi.c
    /// `ipv4_normalize`; `getaddrinfo` for the percent-encoded one): the decision is about that
    /// address, under its rule and its iPAddress name, never about the spelling under the
    /// policy for unmatched hosts.
    @Test(
        "an IPv4 address spelled as libcurl also reads it is decided under that address's rule",
        arguments: ["127.0.0.1", "127.1", "127.0.1", "0x7f.0.0.1", "0X7F.0.0.1", "0177.0.0.1", "2130706433", "0x7f000001", "%31%32%37.1"])
    func numericIPv4Spellings(_ spelling: String) async throws {
        let pki = try Lab.pki(host: "127.0.0.1")
        let server = try Lab.server(.init(pki: pki))
        defer { server.stop() }
        let stranger = try Lab.pki(host: "127.0.0.1", keySlot: 41)
        let address = try HostPattern("127.0.0.1")
        func session(pinning leaf: LabCertificate) throws -> HTTPSession {
            let pinned = HostTrustPolicy(pins: PinnedHost(pattern: address, pins: [SPKIPin(certificate: try Lab.certificate(leaf))], requiresBackupPin: false))
            let policy = TrustPolicy(rules: [.init(address, pinned)], unmatched: HostTrustPolicy())
            return try HTTPSession(configuration: HTTPSessionConfiguration(serverTrust: ServerTrustDecider(policy: policy, anchors: try Lab.anchors(pki))))
        }
        let url = "https://\(spelling):\(server.port)/"
        func ruleApplied(_ decision: TrustDecision?) -> Bool {
            decision?.record.steps.contains { step in
                if case .hostPolicy(let pattern, _) = step { return pattern == "127.0.0.1" }
                return false
            } == true
        }

        // Pinned to another key: refused by the address's pins, before a request is sent.
        let error = await failure { try await session(pinning: stranger.leaf).get(url) }
        #expect(error?.rejection?.host == "127.0.0.1", "\(String(describing: error))")
        #expect(ruleApplied(error?.rejection), "\(String(describing: error?.rejection?.record.steps))")
        #expect(server.statistics.requestsServed == 0)

        // Pinned to its own key: accepted, under the same rule and for the same name.
        let response = try await session(pinning: pki.leaf).get(url)
        #expect(response.statusCode == 200)
        #expect(response.trustDecision?.host == "127.0.0.1")
        #expect(ruleApplied(response.trustDecision))
    }

    /// libcurl connects to the A-labels libidn2 makes of an internationalized host (UTS #46:
    /// `BÜCHER` folded, a soft hyphen mapped away, percent-encoded or not): the rule and the
    /// certificate's name are about that host, not about Foundation's decoding of the URL.
    @Test(
        "an internationalized host is decided as the A-labels libcurl connects to",
        arguments: [
            ("https://bücher.example", "xn--bcher-kva.example"), ("https://BÜCHER.example", "xn--bcher-kva.example"),
            ("https://b%C3%BCcher.example", "xn--bcher-kva.example"), ("https://www.exam%C2%ADple.test", "www.example.test"),
            ("https://www.exam\u{AD}ple.test", "www.example.test"), ("https://ｗｗｗ.example.test", "www.example.test"),
        ])
    func internationalizedHost(_ url: String, _ connected: String) async throws {
        // libidn2 reads the host in the locale's encoding (idn2_lookup_ul): in the C locale
        // curl converts no internationalized host, and the request fails before it connects;
        // an app that sets a UTF-8 locale (setlocale(LC_ALL, "")) gets the conversion.
        let previous = setlocale(LC_CTYPE, nil).map { String(cString: $0) } ?? "C"
        guard setlocale(LC_CTYPE, "C.UTF-8") != nil else {
            Issue.record("the C.UTF-8 locale is not available")
            return
        }
        defer { setlocale(LC_CTYPE, previous) }
        let pki = try Lab.pki(host: connected)
        let server = try Lab.server(.init(pki: pki))
        defer { server.stop() }
        let stranger = try Lab.pki(host: connected, keySlot: 41)
        let rule = try HostPattern(connected)
        func session(pinning leaf: LabCertificate) throws -> HTTPSession {
            let pinned = HostTrustPolicy(pins: PinnedHost(pattern: rule, pins: [SPKIPin(certificate: try Lab.certificate(leaf))], requiresBackupPin: false))
            let policy = TrustPolicy(rules: [.init(rule, pinned)], unmatched: HostTrustPolicy())
            var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(policy: policy, anchors: try Lab.anchors(pki)))
            configuration.resolve = ["\(connected):\(server.port):127.0.0.1"]
            return try HTTPSession(configuration: configuration)
        }
        let target = "\(url):\(server.port)/"

        // Pinned to another key: refused by the connected host's pins.
        let error = await failure { try await session(pinning: stranger.leaf).get(target) }
        #expect(error?.rejection?.host == connected, "\(String(describing: error))")
        #expect(server.statistics.requestsServed == 0)

        // Pinned to its own key: accepted, for the name its certificate carries.
        let response = try await session(pinning: pki.leaf).get(target)
        #expect(response.statusCode == 200)
        #expect(response.trustDecision?.host == connected)
    }

    /// RFC 6874: `[::1%25lo]` is ::1 reached through `lo` (libcurl sets the zone as the
    /// socket's scope); the rule for ::1 and the certificate's iPAddress ::1 are about it.
    @Test("an IPv6 address with a zone identifier is decided under the address's rule")
    func ipv6ZoneIdentifier() async throws {
        let pki = try Lab.pki(host: "::1")
        let server = try Lab.server(.init(pki: pki)) { $0.address = .ipv6 }
        defer { server.stop() }
        let address = try HostPattern("::1")
        let pinned = HostTrustPolicy(pins: PinnedHost(pattern: address, pins: [SPKIPin(certificate: try Lab.certificate(pki.leaf))], requiresBackupPin: false))
        let policy = TrustPolicy(rules: [.init(address, pinned)], unmatched: nil)
        let session = try HTTPSession(configuration: HTTPSessionConfiguration(serverTrust: ServerTrustDecider(policy: policy, anchors: try Lab.anchors(pki))))
        let response = try await session.get("https://[::1%25lo]:\(server.port)/")
        #expect(response.statusCode == 200)
        #expect(response.trustDecision?.host == "::1")
    }

    @Test("a per-host TLS minimum for an IP address applies to every spelling of it (RFC 5952)")
    func perAddressMinimumVersion() async throws {
        let pki = try Lab.pki(host: "::1")
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.address = .ipv6
            configuration.maximumTLSVersion = .tls1_2
        }
        defer { server.stop() }
        for key in ["::1", "0:0:0:0:0:0:0:1", "[::1]"] {
            let strict = try Lab.session(trusting: pki, resolving: []) { $0.minimumTLSVersionByHost = [key: .tls1_3] }
            for url in ["https://[::1]:\(server.port)/", "https://[0:0:0:0:0:0:0:1]:\(server.port)/", "https://[0::1]:\(server.port)/"] {
                let error = await failure { try await strict.get(url) }
                if case .transport? = error {} else { Issue.record("\(key), \(url): expected a handshake failure, got \(String(describing: error))") }
            }
        }
    }

    @Test("the session is invalidated: running and later requests fail")
    func invalidation() async throws {
        let pki = try Lab.pki(host: host)
        // The server answers only after the session was invalidated.
        let (server, release, entered) = try Self.heldServer(pki)
        defer {
            release.signal()
            server.stop()
        }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        async let running = failure { try await session.get(server.url(host: host)) }
        while entered.all.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        session.invalidate()
        let outcome = await running
        guard case .sessionInvalidated? = outcome else {
            Issue.record("expected sessionInvalidated, got \(String(describing: outcome))")
            return
        }
        guard case .sessionInvalidated? = await failure({ try await session.get(server.url(host: host)) }) else {
            Issue.record("expected sessionInvalidated after invalidate()")
            return
        }
    }
}

/// Records the host of every chain it is asked about, then lets `then` decide.
private struct RecordingEvaluator: ServerTrustEvaluating {
    let hosts: Recorder<String>
    let then: any ServerTrustEvaluating

    func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) { try decide(trust, forHost: host).get() }

    func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        hosts.append(host)
        return then.decide(trust, forHost: host)
    }
}
