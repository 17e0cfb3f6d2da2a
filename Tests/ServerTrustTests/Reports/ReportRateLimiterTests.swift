import CertificateParsing
import Foundation
import ServerTrust
import Testing

@Suite("Report rate limiting")
struct ReportRateLimiterTests {
    let f = PolicyFixtures.shared

    func report(_ host: String = PolicyFixtures.host) throws -> PinFailureReport {
        PinFailureReport(
            date: PolicyFixtures.now, hostname: host, port: 443,
            pinnedHost: PinnedHost(pattern: try HostPattern("**.example.test"), pins: [SPKIPin(certificate: f.root), f.backupPin]),
            served: f.validChain, validated: f.validChain, result: .failedNoMatchingPin)
    }

    @Test("an identical report at most once per 24 hours")
    func oncePerDay() throws {
        let clock = SteppingClock(PolicyFixtures.now)
        let limiter = ReportRateLimiter(storePath: nil, clock: clock.clock)
        #expect(limiter.shouldSend(try report()))
        #expect(!limiter.shouldSend(try report()))
        #expect(limiter.shouldSend(try report("www.example.test")), "a different report is not limited")
        clock.advance(by: 86_399)
        #expect(!limiter.shouldSend(try report()))
        clock.advance(by: 1)
        #expect(limiter.shouldSend(try report()))
        #expect(!limiter.shouldSend(try report()))
    }

    @Test("a man in the middle that serves a new leaf on every connection still gets one report per host and failure")
    func attackerChosenChainsShareOneKey() throws {
        let directory = try PolicyFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/reports.json"
        let clock = SteppingClock(PolicyFixtures.now)
        let limiter = ReportRateLimiter(storePath: path, clock: clock.clock)
        let pinnedHost = PinnedHost(pattern: try HostPattern("**.example.test"), pins: [SPKIPin(certificate: f.root), f.backupPin])
        var sent = 0
        for _ in 0..<50 {
            // The attacker's choice: a freshly minted leaf (new serial, same interception CA).
            let leaf = try Certificate(derEncoded: try f.pki.issueLeaf(host: PolicyFixtures.host).der)
            let report = PinFailureReport(
                date: clock.clock.now(), hostname: PolicyFixtures.host, port: 443, pinnedHost: pinnedHost,
                served: [leaf, f.intermediate], validated: [leaf, f.intermediate, f.root], result: .failedNoMatchingPin)
            if limiter.shouldSend(report) { sent += 1 }
            clock.advance(by: 1)
        }
        #expect(sent == 1, "the limiter let \(sent) of 50 reports through")
        let stored = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        #expect((stored?["sent"] as? [String: Any])?.count == 1, "the store grows with what the attacker serves")
        // What the attacker cannot choose still tells failures apart: another host, another result.
        let other = PinFailureReport(
            date: clock.clock.now(), hostname: "www.example.test", port: 443, pinnedHost: pinnedHost,
            served: f.validChain, validated: f.validChain, result: .failedNoMatchingPin)
        #expect(limiter.shouldSend(other))
        let invalid = PinFailureReport(
            date: clock.clock.now(), hostname: PolicyFixtures.host, port: 443, pinnedHost: pinnedHost,
            served: f.validChain, validated: f.validChain, result: .failedInvalidCertificateChain)
        #expect(limiter.shouldSend(invalid))
    }

    @Test("the store holds at most maximumEntries reports, the oldest dropped first")
    func storeBounded() throws {
        let clock = SteppingClock(PolicyFixtures.now)
        let limiter = ReportRateLimiter(storePath: nil, clock: clock.clock)
        for index in 0..<(ReportRateLimiter.maximumEntries + 10) {
            #expect(limiter.shouldSend(try report("h\(index).example.test")))
            clock.advance(by: 1)
        }
        #expect(limiter.entryCount == ReportRateLimiter.maximumEntries)
        #expect(limiter.shouldSend(try report("h0.example.test")), "the oldest entry was dropped")
        #expect(!limiter.shouldSend(try report("h\(ReportRateLimiter.maximumEntries + 9).example.test")))
    }

    @Test("remembered across restarts through the store file")
    func persistence() throws {
        let directory = try PolicyFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/reports.json"
        let clock = SteppingClock(PolicyFixtures.now)
        #expect(ReportRateLimiter(storePath: path, clock: clock.clock).shouldSend(try report()))
        clock.advance(by: 3600)
        #expect(!ReportRateLimiter(storePath: path, clock: clock.clock).shouldSend(try report()), "a new limiter reads the file")
        clock.advance(by: 86_400)
        #expect(ReportRateLimiter(storePath: path, clock: clock.clock).shouldSend(try report()))
        try "garbage".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(ReportRateLimiter(storePath: path, clock: clock.clock).shouldSend(try report()), "a corrupt store starts empty")
    }

    @Test("RateLimitedReporter passes on only what the limiter allows, from the evaluator")
    func throughEvaluator() throws {
        let collector = CollectingReporter()
        let clock = SteppingClock(PolicyFixtures.now)
        let reporter = RateLimitedReporter(wrapping: collector, limiter: ReportRateLimiter(storePath: nil, clock: clock.clock))
        let pins = try PinningConfiguration([
            PinnedHost(
                pattern: HostPattern("**.example.test"), pins: [SPKIPin(certificate: f.selfSigned), f.backupPin], reportURIs: ["https://r.example.test/"])
        ])
        let evaluator = SPKIPinsTrustEvaluator(configuration: pins, reporter: reporter)
        var trust = f.trust(f.validChain)
        trust.clock = clock.clock
        for _ in 0..<3 { #expect(!evaluator.decide(trust, forHost: PolicyFixtures.host).isTrusted) }
        #expect(collector.reports.all.count == 1)
        #expect(collector.reports.all.first?.1 == ["https://r.example.test/"])
        clock.advance(by: 86_400)
        _ = evaluator.decide(trust, forHost: PolicyFixtures.host)
        #expect(collector.reports.all.count == 2)
    }
}
