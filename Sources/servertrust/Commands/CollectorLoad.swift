import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustCollector
import ServerTrustHTTP
import ServerTrustLab
import Synchronization

/// `servertrust reports load`: the collector's load benchmark. It starts `servertrust collect`
/// as a child process on the given database (rate limit off, retention off), posts distinct
/// TrustKit-format reports (one `app-vendor-id` each, so none is deduplicated) through
/// `HTTPSession` over a fixed number of keep-alive connections, stops the collector with
/// SIGTERM, and counts in the database the reports it acknowledged.
enum CollectorLoad {
    struct Outcome: Sendable {
        var acknowledged = 0
        var failed = 0
        var firstFailure: String?
        var latencies: [Double] = []
        var seconds = 0.0
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments, flags: ["--help", "--json"], values: ["--db", "--reports", "--connections"])
        if options.flags.contains("--help") {
            print(ReportsCommand.usage)
            return ExitCode.success
        }
        guard let db = options.value("--db") else { throw CLIError("load: --db is required") }
        let location: DatabaseLocation
        do { location = try DatabaseLocation(db) } catch { throw CLIError(error.description) }
        let total = max(1, try options.int("--reports", default: 20_000))
        let connections = max(1, try options.int("--connections", default: 16))

        let directory = NSTemporaryDirectory() + "servertrust-load-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = UUID().uuidString.prefix(8).lowercased()
        let template = try reportTemplate()
        let collector = try LabChildProcess(
            "/proc/self/exe", ["collect", "--listen", "127.0.0.1:0", "--db", db, "--rate-limit", "0", "--retain-days", "0"],
            stdoutPath: directory + "/collect.out", stderrPath: directory + "/collect.err")
        guard let url = waitForURL(directory + "/collect.out", collector) else {
            collector.stop()
            let errors = (try? String(contentsOfFile: directory + "/collect.err", encoding: .utf8)) ?? ""
            throw CLIError("the collector did not start: \(errors.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        Console.writeProgress("posting \(total) reports over \(connections) keep-alive connections to \(url)\n")
        let outcome = try post(total: total, connections: connections, url: url, run: String(run), template: template)
        // The collector's own CPU time (user + system) per acknowledged report: a figure the
        // other processes on the machine do not move much, unlike reports per second.
        let cpuSeconds = cpuTime(of: collector.pid)
        let stopped = collector.stop(grace: .seconds(60))
        let stored: Int64
        do {
            let store = try ReportStore(location, now: Int64(Date().timeIntervalSince1970))
            stored = try store.vendorIDs().filter { $0.key.hasPrefix("load-\(run)-") }.values.reduce(0, +)
        } catch {
            throw CLIError("counting stored reports: \(error)")
        }
        let sorted = outcome.latencies.sorted()
        func percentile(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)] }
        let rate = Double(outcome.acknowledged) / max(outcome.seconds, 0.001)
        let backend: String
        if case .sqlite = location { backend = "sqlite" } else { backend = "postgres" }
        if options.flags.contains("--json") {
            let object = JSON.object([
                ("backend", .string(backend)), ("reports", .int(total)), ("connections", .int(connections)),
                ("acknowledged", .int(outcome.acknowledged)), ("failed", .int(outcome.failed)), ("stored", .int(Int(stored))),
                ("seconds", .double(outcome.seconds)), ("reportsPerSecond", .double(rate)), ("p50Milliseconds", .double(percentile(0.5) * 1000)),
                ("p99Milliseconds", .double(percentile(0.99) * 1000)), ("maxMilliseconds", .double((sorted.last ?? 0) * 1000)),
                ("collectorExit", .int(Int(stopped))), ("collectorCPUMicrosecondsPerReport", .double(cpuSeconds / Double(max(1, outcome.acknowledged)) * 1e6)),
            ])
            print(object.rendered)
        } else {
            print(
                String(
                    format: "%@: %d reports over %d keep-alive connections in %.2f s: %.0f reports/s; latency p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                    backend, total, connections, outcome.seconds, rate, percentile(0.5) * 1000, percentile(0.99) * 1000, (sorted.last ?? 0) * 1000))
            print(
                String(
                    format: "acknowledged %d, stored %lld, failed %d; collector exit %d, its CPU %.0f µs per report",
                    outcome.acknowledged, stored, outcome.failed, stopped, cpuSeconds / Double(max(1, outcome.acknowledged)) * 1e6))
            if let failure = outcome.firstFailure { print("first failure: \(failure)") }
        }
        return Int64(outcome.acknowledged) == stored && outcome.failed == 0 && stopped == 0 ? ExitCode.success : ExitCode.rejected
    }

    /// User plus system CPU seconds `pid` has used (`/proc/PID/stat` fields 14 and 15).
    static func cpuTime(of pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The first line's URL, once the collector printed it.
    static func waitForURL(_ path: String, _ process: LabChildProcess) -> String? {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, process.isRunning {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first, let start = line.range(of: "http://"), let end = line[start.lowerBound...].firstIndex(of: " ") {
                return String(line[start.lowerBound..<end])
            }
            usleep(20_000)
        }
        return nil
    }

    /// A TrustKit report body with `VENDOR` where each report's `app-vendor-id` goes.
    static func reportTemplate() throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        let pki = try LabPKI.webChain(host: "load.collector.test", algorithm: .p256, leafNotBefore: now - 86_400, leafNotAfter: now + 30 * 86_400, keySlot: 72)
        var chain = ""
        JSONNode.writeString(pki.leaf.pem, to: &chain)
        var intermediate = ""
        JSONNode.writeString(pki.intermediate.pem, to: &intermediate)
        // Two pins the chain does not match: the failure every report describes.
        var pins = ""
        for (index, seed) in ["spare key 1", "spare key 2"].enumerated() {
            if index > 0 { pins += "," }
            JSONNode.writeString(try SPKIPin(algorithm: .sha256, digest: SHA256.hash(Array(seed.utf8))).rfc7469, to: &pins)
        }
        return """
            {"app-bundle-id":"test.servertrust.load","app-version":"1.0","app-vendor-id":"VENDOR","app-platform":"IOS","app-platform-version":"17.4",\
            "trustkit-version":"3.0.4","date-time":"\(ASN1Time(secondsSince1970: now).rfc3339)","hostname":"load.collector.test","port":443,\
            "noted-hostname":"collector.test","include-subdomains":true,"enforce-pinning":false,"validated-certificate-chain":[\(chain),\(intermediate)],\
            "known-pins":[\(pins)],\
            "validation-result":1}
            """
    }

    static func post(total: Int, connections: Int, url: String, run: String, template: String) throws -> Outcome {
        var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(DefaultTrustEvaluator(), anchors: .empty))
        configuration.maximumTransferThreads = connections
        configuration.maximumConnectionsPerHost = connections
        configuration.timeout = 60
        let session = try HTTPSession(configuration: configuration)
        defer { session.invalidate() }
        let next = Ticker()
        return Blocking.run { () -> Outcome in
            let started = ContinuousClock.now
            var outcome = await withTaskGroup(of: Outcome.self) { group in
                for _ in 0..<connections {
                    group.addTask {
                        var part = Outcome()
                        while true {
                            let index = next.take()
                            guard index < total else { break }
                            let body = Array(template.replacingOccurrences(of: "VENDOR", with: "load-\(run)-\(index)").utf8)
                            let request = HTTPRequest(.post, url, headers: ["Content-Type": "application/json"], body: body)
                            let sent = ContinuousClock.now
                            do {
                                let response = try await session.send(request)
                                let elapsed = ContinuousClock.now - sent
                                if response.statusCode == 201 {
                                    part.acknowledged += 1
                                    part.latencies.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                                } else {
                                    part.failed += 1
                                    if part.firstFailure == nil { part.firstFailure = "HTTP \(response.statusCode): \(response.text.prefix(200))" }
                                }
                            } catch {
                                part.failed += 1
                                if part.firstFailure == nil { part.firstFailure = "\(error)" }
                            }
                        }
                        return part
                    }
                }
                var merged = Outcome()
                for await part in group {
                    merged.acknowledged += part.acknowledged
                    merged.failed += part.failed
                    merged.firstFailure = merged.firstFailure ?? part.firstFailure
                    merged.latencies += part.latencies
                }
                return merged
            }
            let elapsed = ContinuousClock.now - started
            outcome.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return outcome
        }
    }
}

/// Hands out 0, 1, 2… to concurrent posters.
private final class Ticker: Sendable {
    private let value = Mutex(0)

    func take() -> Int {
        value.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}
