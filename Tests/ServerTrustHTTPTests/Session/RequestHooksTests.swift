import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

/// The production hooks: interceptors (adapt and retry), the retry policy, event monitors and
/// the cookie store, against live Lab servers.
@Suite("request hooks: interceptors, retries, event monitors, cookies")
struct RequestHooksTests {
    static let host = "www.example.test"

    @Test("one token refresh for 20 concurrent 401s; every request then succeeds with the new token")
    func tokenRefreshOnce() async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                request.header("Authorization") == "Bearer fresh" ? .text("ok") : .text("who are you?", status: 401)
            }
        }
        defer { server.stop() }
        let refreshes = Atomic<Int>(0)
        let interceptor = BearerTokenInterceptor(token: "stale") { refused in
            #expect(refused == "stale")
            refreshes.add(1, ordering: .relaxed)
            try await Task.sleep(nanoseconds: 50_000_000)  // long enough for every 401 to arrive meanwhile
            return "fresh"
        }
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)]) { $0.interceptor = interceptor }
        defer { session.invalidate() }
        let url = server.url(host: Self.host)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { try await session.get(url).statusCode } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 20))
        #expect(refreshes.load(ordering: .relaxed) == 1)
        let refreshCount = await interceptor.refreshCount
        let token = await interceptor.token
        #expect(refreshCount == 1 && token == "fresh")
        // A refresh that fails leaves the 401 as the answer, and no loop.
        let failing = BearerTokenInterceptor(token: "stale") { _ in throw CancellationError() }
        let other = try Lab.session(trusting: pki, resolving: [(Self.host, server)]) { $0.interceptor = failing }
        defer { other.invalidate() }
        #expect(try await other.get(url).statusCode == 401)
    }

    @Test("a 401 from another origin reached by a redirect does not refresh the token: that origin never saw it")
    func noRefreshForAnotherOrigin() async throws {
        let pki = try Lab.pki(host: Self.host)
        // The attacker's side: an origin the app's token was never sent to answers 401 to make
        // the client refresh (and so spend, or leak through a logging refresh hook) its token.
        let seenByOther = Recorder<String>()
        let other = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                seenByOther.append(request.header("Authorization") ?? "none")
                return .text("not yours", status: 401)
            }
        }
        defer { other.stop() }
        let otherURL = other.url(host: Self.host, path: "/elsewhere")
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                switch request.path {
                case "/moved": return LabHTTPResponse(status: 302, headers: [("Location", otherURL)])
                default: return request.header("Authorization") == "Bearer fresh" ? .text("ok") : .text("who are you?", status: 401)
                }
            }
        }
        defer { server.stop() }
        let refreshes = Atomic<Int>(0)
        let interceptor = BearerTokenInterceptor(token: "stale") { _ in
            refreshes.add(1, ordering: .relaxed)
            return "fresh"
        }
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server), (Self.host, other)]) { $0.interceptor = interceptor }
        defer { session.invalidate() }
        let response = try await session.get(server.url(host: Self.host, path: "/moved"))
        #expect(response.statusCode == 401 && response.url == otherURL)
        #expect(refreshes.load(ordering: .relaxed) == 0, "the refresh hook ran for a 401 of an origin that never saw the token")
        #expect(seenByOther.all == ["none"], "the token crossed origins: \(seenByOther.all)")
        // The token's own origin still refreshes on its 401.
        #expect(try await session.get(server.url(host: Self.host, path: "/own")).statusCode == 200)
        #expect(refreshes.load(ordering: .relaxed) == 1)
    }

    /// A server answering 503 `failures` times per path, then 200.
    static func flaky(_ pki: LabPKI, failures: Int, retryAfter: String? = nil) throws -> (LabTLSServer, Recorder<String>) {
        let seen = Recorder<String>()
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                seen.append(request.method + " " + request.path)
                let count = seen.all.filter { $0 == request.method + " " + request.path }.count
                guard count > failures else {
                    return LabHTTPResponse(status: 503, headers: retryAfter.map { [("Retry-After", $0)] } ?? [], body: .bytes(Array("busy".utf8)))
                }
                return .text("done")
            }
        }
        return (server, seen)
    }

    @Test("the retry policy retries idempotent methods on 503 and network errors, never a POST, a trust rejection or a 404")
    func retryPolicy() async throws {
        let pki = try Lab.pki(host: Self.host)
        let (server, seen) = try Self.flaky(pki, failures: 2)
        defer { server.stop() }
        let clock = RecordingClock()
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)]) { configuration in
            configuration.retryPolicy = RetryPolicy(jitter: { 0.5 })
            configuration.retryClock = clock
        }
        defer { session.invalidate() }
        let get = try await session.get(server.url(host: Self.host, path: "/get"))
        #expect(get.statusCode == 200 && seen.all.filter { $0 == "GET /get" }.count == 3)
        var put = HTTPRequest(.put, server.url(host: Self.host, path: "/put"), body: Array("x".utf8))
        put.timeout = 10
        #expect(try await session.send(put).statusCode == 200)
        // POST is not idempotent: one attempt, the 503 is the answer.
        let post = try await session.send(HTTPRequest(.post, server.url(host: Self.host, path: "/post"), body: Array("x".utf8)))
        #expect(post.statusCode == 503 && seen.all.filter { $0 == "POST /post" }.count == 1)
        // Backoff with the jitter at 0.5: 0.5 s × 2^(n−1), from the upper half of each.
        #expect(clock.sleeps.prefix(2) == [.milliseconds(375), .milliseconds(750)])

        // A trust rejection is never retried.
        let untrusting = try Lab.session(trusting: try Lab.pki(host: Self.host, keySlot: 41, algorithm: .p384), resolving: [(Self.host, server)]) {
            $0.retryPolicy = RetryPolicy(jitter: { 0 })
            $0.retryClock = clock
        }
        defer { untrusting.invalidate() }
        let before = clock.sleeps.count
        #expect(await failure { try await untrusting.get(server.url(host: Self.host, path: "/trust")) }?.rejection != nil)
        #expect(clock.sleeps.count == before)

        // A refused connection is retried (then fails), the monitor counts the attempts.
        let stopped = try Lab.server(.init(pki: pki))
        let port = stopped.port
        stopped.stop()
        let attempts = Recorder<Int>()
        let refusing = try Lab.session(trusting: pki, resolving: [(Self.host, stopped)]) {
            $0.retryPolicy = RetryPolicy(jitter: { 0 })
            $0.retryClock = clock
            $0.eventMonitors = [CallbackMonitor(started: { attempts.append($0) })]
        }
        defer { refusing.invalidate() }
        #expect(await failure { try await refusing.get("https://\(Self.host):\(port)/") } != nil)
        #expect(attempts.all == [1, 2, 3])
    }

    @Test("Retry-After is honoured (seconds and HTTP-date on the injected clock); one longer than the cap is not waited for")
    func retryAfter() async throws {
        let pki = try Lab.pki(host: Self.host)
        let clock = RecordingClock()
        let (server, _) = try Self.flaky(pki, failures: 1, retryAfter: "2")
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)]) { configuration in
            configuration.retryPolicy = RetryPolicy(jitter: { 0 })
            configuration.retryClock = clock
        }
        defer { session.invalidate() }
        #expect(try await session.get(server.url(host: Self.host, path: "/a")).statusCode == 200)
        #expect(clock.sleeps.last == .seconds(2))
        // The HTTP-date form, against the policy's clock, and the cap.
        let policy = RetryPolicy(maximumRetryAfter: .seconds(60), clock: .fixed(784_111_777), jitter: { 0 })
        #expect(policy.retryAfter("Sun, 06 Nov 1994 08:49:37 GMT") == .seconds(0))
        let earlier = RetryPolicy(clock: .fixed(784_111_777 - 30))
        #expect(earlier.retryAfter("Sun, 06 Nov 1994 08:49:37 GMT") == .seconds(30))
        let (slow, _) = try Self.flaky(pki, failures: 1, retryAfter: "3600")
        defer { slow.stop() }
        let capped = try Lab.session(trusting: pki, resolving: [(Self.host, slow)]) {
            $0.retryPolicy = RetryPolicy(jitter: { 0 })
            $0.retryClock = clock
        }
        defer { capped.invalidate() }
        #expect(try await capped.get(slow.url(host: Self.host, path: "/b")).statusCode == 503)
    }

    @Test("event monitors see each start, the trust decision (accepted, reused, rejected), redirects, retries and the outcome")
    func eventMonitor() async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                request.path == "/start" ? LabHTTPResponse(status: 302, headers: [("Location", "/end")]) : .text("end")
            }
        }
        defer { server.stop() }
        let events = Recorder<String>()
        let decisions = Recorder<TrustDecision>()
        let monitor = CallbackMonitor(
            started: { events.append("start \($0)") },
            decided: {
                decisions.append($0)
                events.append("trust \($0.isTrusted)")
            },
            redirected: { events.append("redirect \($0)") },
            finished: { result, metrics in
                events.append("finish \((try? result.get())?.statusCode ?? -1) attempts=\(metrics.attempts) redirects=\(metrics.redirects)")
            })
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)]) { $0.eventMonitors = [monitor] }
        defer { session.invalidate() }
        _ = try await session.get(server.url(host: Self.host, path: "/start"))
        #expect(events.all == ["start 1", "trust true", "redirect 302", "trust true", "finish 200 attempts=1 redirects=1"])
        #expect(decisions.all.first?.evaluator == "DefaultTrustEvaluator" && decisions.all.first?.isFromEarlierHandshake == false)
        #expect(decisions.all.last?.isFromEarlierHandshake == true, "the redirect reused the connection")

        let rejecting = try Lab.session(trusting: try Lab.pki(host: Self.host, keySlot: 41, algorithm: .p384), resolving: [(Self.host, server)]) {
            $0.eventMonitors = [monitor]
        }
        defer { rejecting.invalidate() }
        _ = await failure { try await rejecting.get(server.url(host: Self.host)) }
        #expect(decisions.all.last?.isTrusted == false)
        #expect(events.all.last == "finish -1 attempts=1 redirects=0")
    }

    @Test("cookies are kept only when asked, sent back to their site only, never set for a public suffix")
    func cookies() async throws {
        let pki = try Lab.pki(host: Self.host)
        let sent = Recorder<String>()
        let otherIdentity = try Lab.identity(pki, host: "api.other.test")
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.serverNameIdentities = ["api.other.test": otherIdentity]
            configuration.handler = { request in
                sent.append("\(request.serverName ?? "?") \(request.path) cookie=\(request.header("Cookie") ?? "-")")
                switch request.path {
                case "/login":
                    return LabHTTPResponse(
                        headers: [
                            ("Set-Cookie", "session=abc; Path=/; Secure; HttpOnly"),
                            ("Set-Cookie", "suffix=1; Domain=test; Path=/"),
                        ], body: .bytes([]))
                default: return .text("ok")
                }
            }
        }
        defer { server.stop() }
        let other = "api.other.test"
        let entries = [(Self.host, server), (other, server)]
        let session = try Lab.session(trusting: pki, resolving: entries) { $0.storesCookies = true }
        defer { session.invalidate() }
        _ = try await session.get(server.url(host: Self.host, path: "/login"))
        _ = try await session.get(server.url(host: Self.host, path: "/again"))
        _ = try await session.get(server.url(host: other, path: "/elsewhere"))
        #expect(sent.all.contains("\(Self.host) /again cookie=session=abc"), "\(sent.all)")
        #expect(sent.all.contains("\(other) /elsewhere cookie=-"), "a cookie goes to its own site only, and none for the suffix: \(sent.all)")
        // Off by default.
        let plain = try Lab.session(trusting: pki, resolving: entries)
        defer { plain.invalidate() }
        _ = try await plain.get(server.url(host: Self.host, path: "/login"))
        _ = try await plain.get(server.url(host: Self.host, path: "/plain"))
        #expect(sent.all.contains("\(Self.host) /plain cookie=-"))
    }
}

/// A clock whose sleeps return at once and are recorded.
final class RecordingClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let state = Mutex<(now: Duration, sleeps: [Duration])>((.zero, []))
    var now: Instant { Instant(offset: state.withLock { $0.now }) }
    var minimumResolution: Duration { .zero }
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        state.withLock { state in
            state.sleeps.append(deadline.offset - state.now)
            state.now = max(state.now, deadline.offset)
        }
    }
}

/// An event monitor made of closures.
struct CallbackMonitor: EventMonitor {
    var started: @Sendable (Int) -> Void = { _ in }
    var decided: @Sendable (TrustDecision) -> Void = { _ in }
    var redirected: @Sendable (Int) -> Void = { _ in }
    var finished: @Sendable (Result<HTTPResponse, HTTPError>, HTTPRequestMetrics) -> Void = { _, _ in }

    func requestDidStart(_ request: HTTPRequest, attempt: Int) { started(attempt) }
    func request(_ request: HTTPRequest, didDecideTrust decision: TrustDecision) { decided(decision) }
    func request(_ request: HTTPRequest, willRedirectFrom url: String, to location: String, statusCode: Int) { redirected(statusCode) }
    func request(_ request: HTTPRequest, didFinishWith result: Result<HTTPResponse, HTTPError>, metrics: HTTPRequestMetrics) {
        finished(result, metrics)
    }
}
