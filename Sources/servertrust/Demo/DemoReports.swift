import CertificateParsing
import Dispatch
import Foundation
import ServerTrust
import ServerTrustCollector
import ServerTrustHTTP
import Synchronization
import TrustEvaluation

/// The demo's report-only scene: an app rolling out pins in report-only mode connects to
/// `api.demo.test` directly (its server moved to a key the pins do not cover) and through the
/// Charles-style relay; both requests go through, both failures are posted by
/// `HTTPPinFailureReporter` to a collector the demo starts (issue 28), which classifies the
/// first as a likely rotation and the second as a likely interception. The collector's SQLite
/// database is kept after the demo, so its dashboard can be opened again.
enum DemoReports {
    static let host = DemoCommand.host

    struct Outcome: Sendable {
        let steps: [DemoRotation.Step]
        /// The dashboard's URL while the demo ran.
        let dashboard: String
        /// The kept database.
        let database: String
    }

    /// Where the demo's reports are kept (replaced by every run): outside the demo's
    /// temporary folder, which is deleted at exit.
    static var databasePath: String { NSTemporaryDirectory() + "servertrust-collector-demo.db" }

    static func runBlocking(_ lab: DemoLab) throws -> Outcome {
        let result = Mutex<Result<Outcome, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let outcome = try await run(lab)
                result.withLock { $0 = .success(outcome) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        guard let outcome = result.withLock({ $0 }) else { throw CLIError("the report-only scene did not finish") }
        return try outcome.get()
    }

    static func run(_ lab: DemoLab) async throws -> Outcome {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: databasePath + suffix) }
        var configuration = Collector.Configuration(database: .sqlite(path: databasePath))
        configuration.port = 0
        configuration.publicRoots = TrustStore([lab.publicRoot], sources: ["the demo's public root"])
        configuration.expectedCAs = [lab.issuingCA]
        let collector: Collector
        do { collector = try Collector(configuration) } catch { throw CLIError("the demo's collector: \(error)") }
        defer { collector.shutdown() }

        // Report-only pins for keys the server no longer uses (the rotation was forgotten).
        let reporter = HTTPPinFailureReporter(anchors: .empty, timeout: 10)
        let retired = try ["retired key", "backup key"].map { try SPKIPin(algorithm: .sha256, digest: SHA256.hash(Array($0.utf8))) }
        let pins = try PinningConfiguration([
            PinnedHost(pattern: try HostPattern(host), pins: retired, enforcePinning: false, reportURIs: [collector.baseURL + "/report"])
        ])
        let decider = ServerTrustDecider(SPKIPinsTrustEvaluator(configuration: pins, reporter: reporter), anchors: lab.systemAnchors)
        func call(_ situation: DemoCommand.Situation) async -> (String, String) {
            let port = lab.port(for: situation)
            var sessionConfiguration = HTTPSessionConfiguration(serverTrust: decider)
            sessionConfiguration.resolve = ["\(host):\(port):127.0.0.1"]
            sessionConfiguration.timeout = 10
            sessionConfiguration.connectTimeout = 5
            do {
                let session = try HTTPSession(configuration: sessionConfiguration)
                defer { session.invalidate() }
                let response = try await session.get("https://\(host):\(port)/")
                return response.statusCode == 200 ? ("accepted", "HTTP 200, failure reported") : ("refused", "HTTP \(response.statusCode)")
            } catch {
                return ("refused", DemoCommand.shortReason(error))
            }
        }
        var steps: [DemoRotation.Step] = []
        func record(_ title: String, _ expected: String, _ result: (String, String)) {
            steps.append(DemoRotation.Step(title: title, expected: expected, actual: result.0, detail: result.1))
        }
        record("\(host) on a key its report-only pins do not cover: the request goes through", "accepted", await call(.genuine))
        record("the same app behind the Charles-style relay (its CA installed): the request goes through", "accepted", await call(.mitm))
        _ = await reporter.waitUntilIdle(timeout: 10)
        let summary = try? collector.store.summary(ReportFilter(), now: Int64(Date().timeIntervalSince1970))
        let chains = (try? collector.store.chains(ReportFilter())) ?? []
        func verdict(_ chainClass: ChainClass) -> (String, String) {
            guard let chain = chains.first(where: { $0.classification.chainClass == chainClass }) else { return ("missing", "no report in this class") }
            return (chainClass.rawValue, "\(chain.reports) report(s), chain ending at \(chain.classification.root)")
        }
        record("the collector files the direct failure under", "rotation", verdict(.rotation))
        record("the collector files the relayed failure under", "interception", verdict(.interception))
        record(
            "reports received and stored", "2", (String(summary?.reports ?? 0), "\(collector.statistics.acknowledged) acknowledged"))
        return Outcome(steps: steps, dashboard: collector.baseURL + "/", database: databasePath)
    }

    static func print(_ outcome: Outcome, elapsed: Double) {
        Swift.print("")
        Swift.print("Report-only pins, and the collector that receives their reports")
        for (index, step) in outcome.steps.enumerated() {
            let mark = step.matches ? "" : "  MISMATCH (expected \(step.expected))"
            Swift.print("  \(index + 1). \(step.title): \(step.actual) (\(step.detail))\(mark)")
        }
        let good = outcome.steps.filter(\.matches).count
        Swift.print(String(format: "\(good) of \(outcome.steps.count) report steps as expected (%.1f s)", elapsed))
        Swift.print("")
        Swift.print("The dashboard was at \(outcome.dashboard) while the demo ran; its reports are kept in \(outcome.database).")
        Swift.print("See them again: swift run servertrust collect --db sqlite:\(outcome.database), then open http://127.0.0.1:8470/")
    }
}
