import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing

/// Time limits are caller configuration in seconds, and any `Double` is one: `.infinity` (the
/// natural spelling of "no limit"), a finite value too large for whole milliseconds or
/// nanoseconds, NaN, zero or less. Each is a limit the client applies, never a trap in a
/// conversion to an integer that crashes the process.
@Suite("time limits of any size: no limit, or the shortest, never a crash")
struct TimeLimitTests {
    let host = "www.example.test"

    @Test(
        "seconds become a wait: NaN and non-positive are none, anything past the longest wait is the longest",
        arguments: [
            (Double.infinity, Duration.longestWait), (.greatestFiniteMagnitude, .longestWait), (1e300, .longestWait),
            (1e12, .longestWait), (86_400, .seconds(86_400)), (0.25, .milliseconds(250)), (1e-12, .nanoseconds(1)),
            (0, .zero), (-1, .zero), (-.infinity, .zero), (.nan, .zero),
        ] as [(Double, Duration)])
    func waits(seconds: Double, expected: Duration) {
        #expect(Duration.wait(seconds: seconds) == expected)
    }

    @Test(
        "a session whose limits are infinite or huge completes its request; NaN ones are the shortest limit, a typed timeout",
        arguments: [Double.infinity, .greatestFiniteMagnitude, 1e300, .nan])
    func sessionLimits(seconds: Double) async throws {
        let pki = try Lab.pki(host: host)
        let server = try Lab.server(.init(pki: pki)) { $0.handler = { _ in .text("in time") } }
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)]) {
            $0.timeout = seconds
            $0.connectTimeout = seconds
            $0.maximumConnectionAge = seconds
        }
        var request = HTTPRequest(.get, server.url(host: host))
        request.timeout = seconds
        do {
            let response = try await session.send(request)
            // A NaN limit is 1 ms, which loopback may still beat.
            #expect(response.text == "in time")
        } catch {
            // Only NaN (1 ms) may run out; the others are limits no request reaches.
            guard seconds.isNaN, case .timedOut = error else {
                Issue.record("\(seconds): \(error)")
                return
            }
        }
    }

    @Test("backoff, request and report waits past the longest wait are the longest wait")
    func hookWaits() async {
        let policy = RetryPolicy(exponentialBackoffBase: 1e300, exponentialBackoffScale: 1e300, jitter: { 1 })
        #expect(policy.backoff(3) == .retry(after: .longestWait))
        #expect(RetryPolicy(exponentialBackoffScale: .nan, jitter: { 0 }).backoff(1) == .retry(after: .zero))
        var request = HTTPRequest(.get, "https://\(host)/")
        for seconds in [Double.infinity, 1e300, .nan] {
            request.timeout = seconds
            #expect(request.timeoutDuration == .wait(seconds: seconds))
        }
        // Nothing pending: idle at once, whatever the limit.
        let reporter = HTTPPinFailureReporter()
        #expect(await reporter.waitUntilIdle(timeout: .infinity))
        #expect(await reporter.waitUntilIdle(timeout: .nan))
    }
}
