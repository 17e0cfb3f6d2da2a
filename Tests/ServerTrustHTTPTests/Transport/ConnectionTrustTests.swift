import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

/// A trust decision belongs to its connection: a connection or TLS session serves a request
/// only when that request would reach the same decision, and every new connection, resumed
/// or not, is decided at the current time.
@Suite("a trust decision belongs to its connection: reuse, resumption, time")
struct ConnectionTrustTests {
    static let host = "www.example.test"

    /// A server whose root the session does not trust: the session's policy rejects it.
    struct Fixture {
        let pki: LabPKI
        let server: LabTLSServer

        init() throws {
            pki = try Lab.pki(host: ConnectionTrustTests.host, keySlot: 47)
            server = try Lab.server(.init(pki: pki), name: "untrusted-by-policy")
        }

        func session(resumption: Bool) throws -> HTTPSession {
            // The session trusts another root only: its own decision refuses this server.
            let other = try Lab.pki(host: ConnectionTrustTests.host, keySlot: 48)
            var configuration = HTTPSessionConfiguration(serverTrust: try Lab.decider(anchors: try Lab.anchors(other)))
            configuration.resolve = ["\(ConnectionTrustTests.host):\(server.port):127.0.0.1"]
            configuration.tlsSessionResumption = resumption
            configuration.timeout = 10
            return try HTTPSession(configuration: configuration)
        }

        var url: String { server.url(host: ConnectionTrustTests.host) }
    }

    /// A request whose own handler trusts whatever it is shown.
    static func trusting(_ url: String, asked: Recorder<String>) -> HTTPRequest {
        var request = HTTPRequest(.get, url)
        request.challengeHandler = { challenge, _ in
            asked.append("trust")
            return challenge.protectionSpace.authenticationMethod == .serverTrust
                ? .disposition(.useCredential(Credential(.serverTrust))) : .disposition(.performDefaultHandling)
        }
        return request
    }

    @Test("a request's own handler that trusts the server lends its trust to no later request", arguments: [true, false])
    func handlerTrustDoesNotLeak(resumption: Bool) async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let session = try fixture.session(resumption: resumption)
        defer { session.invalidate() }
        let asked = Recorder<String>()

        // 1. The request's own handler trusts the server: it passes.
        let first = try await session.send(Self.trusting(fixture.url, asked: asked))
        #expect(first.statusCode == 200)
        #expect(first.trustDecision?.evaluator == "challenge handler")
        // Twice, keep-alive or resumption would have applied if the connection were pooled.
        #expect(try await session.send(Self.trusting(fixture.url, asked: asked)).statusCode == 200)
        let served = fixture.server.statistics.requestsServed

        // 2. No handler: the session's decision, which refuses the server, decides. Neither the
        //    handler's connection (keep-alive) nor its TLS session (resumption) serves it.
        let second = await failure { try await session.get(fixture.url) }
        let rejection = try #require(second?.rejection, "\(String(describing: second))")
        #expect(rejection.evaluator == "DefaultTrustEvaluator" && [.untrustedRoot, .badSignature].contains(rejection.validationFailure?.kind))

        // 3. A handler that cancels every server-trust challenge: it is asked, and the request fails.
        let cancelled = Recorder<String>()
        var third = HTTPRequest(.get, fixture.url)
        third.challengeHandler = { challenge, _ in
            cancelled.append(challenge.protectionSpace.authenticationMethod == .serverTrust ? "trust" : "other")
            return .disposition(.cancelAuthenticationChallenge)
        }
        let thirdError = await failure { try await session.send(third) }
        guard case .challengeCancelled? = thirdError else {
            Issue.record("expected the handler's cancellation, got \(String(describing: thirdError))")
            return
        }
        #expect(cancelled.all == ["trust"], "the handler is asked in a full handshake")

        // Nothing after the first two requests reached the server, and no session was resumed.
        #expect(fixture.server.statistics.requestsServed == served)
        #expect(fixture.server.statistics.handshakesResumed == 0)
        #expect(asked.all == ["trust", "trust"], "each trusting request had its own full handshake")
    }

    @Test("a session-policy connection is not handed to a request with its own handler, which is asked in a full handshake")
    func handlerRequestsGetTheirOwnConnection() async throws {
        let pki = try Lab.pki(host: Self.host, keySlot: 47)
        let server = try Lab.server(.init(pki: pki), name: "trusted")
        defer { server.stop() }
        for resumption in [true, false] {
            let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)]) { $0.tlsSessionResumption = resumption }
            defer { session.invalidate() }
            let url = server.url(host: Self.host)
            _ = try await session.get(url)
            _ = try await session.get(url)
            let before = server.statistics.handshakesCompleted
            let asked = Recorder<String>()
            let answer = try await session.send(Self.trusting(url, asked: asked))
            #expect(answer.statusCode == 200 && answer.usedNewConnection && !answer.tlsSessionResumed)
            #expect(asked.all == ["trust"])
            #expect(server.statistics.handshakesCompleted == before + 1)
            // And the session's own requests still reuse their connection afterwards.
            let again = try await session.get(url)
            #expect(!again.usedNewConnection && again.trustDecision?.isFromEarlierHandshake == true)
        }
    }

    @Test(
        "a leaf that expires between two requests is refused on the next new connection, resumption on and off",
        arguments: [true, false])
    func expiryBetweenRequests(resumption: Bool) async throws {
        let pki = try Lab.pki(host: Self.host, keySlot: 49)
        let notAfter = Lab.now + 3600
        let identity = try Lab.identity(pki, host: Self.host, notBefore: Lab.now - LabClock.day, notAfter: notAfter)
        let server = try Lab.server(identity, name: "expiring")
        defer { server.stop() }
        let instant = Mutex<Int64>(notAfter - 60)
        let clock = TrustClock { instant.withLock { $0 } }
        var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(DefaultTrustEvaluator(), anchors: try Lab.anchors(pki), clock: clock))
        configuration.resolve = ["\(Self.host):\(server.port):127.0.0.1"]
        configuration.tlsSessionResumption = resumption
        let session = try HTTPSession(configuration: configuration)
        defer { session.invalidate() }
        let url = server.url(host: Self.host)

        #expect(try await session.get(url).statusCode == 200)
        instant.withLock { $0 = notAfter + 60 }
        var fresh = HTTPRequest(.get, url)
        fresh.usesFreshConnection = true
        let error = await failure { try await session.send(fresh) }
        let rejection = try #require(error?.rejection, "\(String(describing: error))")
        #expect(rejection.validationFailure?.kind == .expired)
        #expect(server.statistics.requestsServed == 1)
        if resumption {
            // The refused connection did resume the session: no handshake decided it, so it was
            // decided before the request, on the chain the session kept.
            // (The server's thread records the handshake after the client has moved on.)
            let deadline = Date().addingTimeInterval(3)
            while server.statistics.handshakesResumed == 0 && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
            #expect(server.statistics.handshakesResumed == 1)
        }
        // The refusal is the decision of that moment, not a mark on the server: back before
        // the expiry, the next new connection is accepted again.
        instant.withLock { $0 = notAfter - 60 }
        #expect(try await session.send(fresh).statusCode == 200)
    }

    @Test("usesFreshConnection and maximumConnectionAge mean a new decision, also when the TLS session resumes")
    func freshConnectionIsANewDecision() async throws {
        let pki = try Lab.pki(host: Self.host, keySlot: 47)
        let server = try Lab.server(.init(pki: pki), name: "fresh")
        defer { server.stop() }
        let decisions = Recorder<String>()
        let evaluator = RecordingDefault(seen: decisions)
        var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(evaluator, anchors: try Lab.anchors(pki)))
        configuration.resolve = ["\(Self.host):\(server.port):127.0.0.1"]
        configuration.maximumConnectionAge = 1
        let session = try HTTPSession(configuration: configuration)
        defer { session.invalidate() }
        let url = server.url(host: Self.host)
        _ = try await session.get(url)
        var fresh = HTTPRequest(.get, url)
        fresh.usesFreshConnection = true
        let resumed = try await session.send(fresh)
        #expect(resumed.tlsSessionResumed && !(resumed.trustDecision?.isFromEarlierHandshake ?? true))
        #expect(decisions.all.count == 2)
        try await Task.sleep(nanoseconds: 2_100_000_000)
        let aged = try await session.get(url)
        #expect(aged.usedNewConnection)
        #expect(decisions.all.count == 3, "a connection past maximumConnectionAge is replaced, and the replacement decided")
    }
}

extension ConnectionTrustTests {
    @Test("replacing the session's decider: new, kept-alive and resumed connections are all decided by the new one")
    func hotSwap() async throws {
        let pki = try Lab.pki(host: Self.host, keySlot: 47)
        let server = try Lab.server(.init(pki: pki), name: "swap")
        defer { server.stop() }
        let anchors = try Lab.anchors(pki)
        let genuinePin = SPKIPin(certificate: try Lab.certificate(pki.leaf))
        let otherPin = SPKIPin(certificate: try Lab.certificate(try Lab.pki(host: Self.host, keySlot: 48).leaf))
        var configuration = HTTPSessionConfiguration(serverTrust: try Lab.decider(anchors: anchors, pins: [genuinePin]))
        configuration.resolve = ["\(Self.host):\(server.port):127.0.0.1"]
        let session = try HTTPSession(configuration: configuration)
        defer { session.invalidate() }
        let url = server.url(host: Self.host)
        #expect(try await session.get(url).statusCode == 200)
        let served = server.statistics.requestsServed

        // The pins change: the kept-alive connection is decided again, and refused.
        session.replaceServerTrust(try Lab.decider(anchors: anchors, pins: [otherPin]))
        let refused = await failure { try await session.get(url) }
        #expect(refused?.rejection?.evaluator == "SPKIPinsTrustEvaluator", "\(String(describing: refused))")
        #expect(server.statistics.requestsServed == served, "nothing was sent on the connection the old pins accepted")
        // A new connection (resumed or full) is refused too.
        var fresh = HTTPRequest(.get, url)
        fresh.usesFreshConnection = true
        #expect(await failure { try await session.send(fresh) }?.rejection != nil)

        // Back to the genuine pin: accepted again, on a connection decided by it.
        session.replaceServerTrust(try Lab.decider(anchors: anchors, pins: [genuinePin]))
        let again = try await session.get(url)
        #expect(again.statusCode == 200 && again.trustDecision?.isTrusted == true)
    }

    @Test("a swap under concurrent requests: every request is decided by one whole decider, old or new")
    func hotSwapUnderLoad() async throws {
        let pki = try Lab.pki(host: Self.host, keySlot: 47)
        let server = try Lab.server(.init(pki: pki), name: "swap-load")
        defer { server.stop() }
        let anchors = try Lab.anchors(pki)
        let pin = SPKIPin(certificate: try Lab.certificate(pki.leaf))
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)])
        defer { session.invalidate() }
        let url = server.url(host: Self.host)
        // Two deciders that both accept, told apart by their evaluator's name.
        let named = { (name: String) throws -> ServerTrustDecider in
            if name == "pins" { return try Lab.decider(anchors: anchors, pins: [pin]) }
            return ServerTrustDecider(DefaultTrustEvaluator(), anchors: anchors)
        }
        try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<200 {
                group.addTask {
                    var request = HTTPRequest(.get, url)
                    request.usesFreshConnection = index % 3 == 0
                    return try await session.send(request).trustDecision?.evaluator
                }
                if index % 20 == 0 { session.replaceServerTrust(try named(index % 40 == 0 ? "pins" : "default")) }
            }
            for try await evaluator in group {
                #expect(evaluator == "SPKIPinsTrustEvaluator" || evaluator == "DefaultTrustEvaluator", "\(String(describing: evaluator))")
            }
        }
    }
}

/// Default validation that records each decision it makes.
private struct RecordingDefault: ServerTrustEvaluating {
    let seen: Recorder<String>

    func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) { try decide(trust, forHost: host).get() }

    func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        seen.append(host)
        return DefaultTrustEvaluator().decide(trust, forHost: host)
    }
}
