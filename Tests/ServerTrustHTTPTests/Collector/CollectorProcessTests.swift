import CertificateParsing
import Foundation
import ServerTrustCollector
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `servertrust collect` as a real child process under load: SIGKILL loses no acknowledged
/// report, SIGTERM stops it gracefully; `servertrust reports summary` reads what it stored.
@Suite("collector process: SIGKILL and SIGTERM under load, reports summary")
struct CollectorProcessTests {
    /// A collector child and its output file.
    struct Child {
        let process: LabChildProcess
        let output: String
        let url: String

        init(database: TestDatabase, directory: String) throws {
            output = directory + "/collect.out"
            process = try LabChildProcess(
                try ServertrustCLI.binary(), ["collect", "--listen", "127.0.0.1:0", "--db", database.url, "--rate-limit", "0"],
                stdoutPath: output, stderrPath: directory + "/collect.err")
            let deadline = Date().addingTimeInterval(60)
            var found: String?
            while found == nil, Date() < deadline, process.isRunning {
                let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                if let line = text.split(separator: "\n").first, let range = line.range(of: #"http://127\.0\.0\.1:[0-9]+/report"#, options: .regularExpression)
                {
                    found = String(line[range])
                }
                usleep(20_000)
            }
            guard let found else {
                let errors = (try? String(contentsOfFile: directory + "/collect.err", encoding: .utf8)) ?? ""
                throw IntegrationError("servertrust collect did not print its URL: \(errors)")
            }
            url = found
        }

        var stdout: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
    }

    /// Posts distinct reports (vendor `prefix-N`) from `connections` tasks until `stop` is set
    /// and a post fails, or `limit` are sent; returns the vendor ids acknowledged (201).
    static func load(url: String, prefix: String, connections: Int, limit: Int, acknowledged: Recorder<String>) async throws {
        let pki = try Lab.pki(host: "api.collector.test", keySlot: 87)
        let session = try CollectorClient.session()
        defer { session.invalidate() }
        let counter = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<connections {
                group.addTask {
                    while true {
                        let index = counter.next()
                        guard index < limit else { return }
                        let vendor = "\(prefix)-\(index)"
                        let body = try ReportBodies.trustKit(chain: pki.serverChain, vendor: vendor)
                        guard let response = try? await CollectorClient.post(session, url, body) else { return }
                        if response.statusCode == 201 { acknowledged.append(vendor) } else { return }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    final class Counter: Sendable {
        private let value = Mutex(0)
        func next() -> Int {
            value.withLock { value in
                defer { value += 1 }
                return value
            }
        }
    }

    @Test("SIGKILL mid-load: every report acknowledged before the kill is in the database", arguments: CollectorBackend.enabled)
    func sigkill(_ backend: CollectorBackend) async throws {
        let database = try TestDatabase(backend)
        defer { database.drop() }
        let directory = try Lab.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let child = try await offPool { try Child(database: database, directory: directory) }
        let acknowledged = Recorder<String>()
        async let posting: Void = Self.load(url: child.url, prefix: "kill", connections: 8, limit: 100_000, acknowledged: acknowledged)
        #expect(await eventually(within: 60) { acknowledged.all.count >= 300 }, "the load got going")
        kill(child.process.pid, SIGKILL)
        try await posting
        let status = try await offPool { child.process.waitUntilExit() }
        #expect(status == SIGKILL, "killed, not exited: \(status)")
        let acked = Set(acknowledged.all)
        let stored = try database.store().vendorIDs()
        let lost = acked.filter { stored[$0] == nil }
        #expect(acked.count >= 300 && lost.isEmpty, "\(lost.count) of \(acked.count) acknowledged reports lost: \(lost.sorted().prefix(5))")
        #expect(stored.values.allSatisfy { $0 == 1 }, "no report stored twice")
    }

    @Test("SIGTERM mid-load: requests in progress finish, the process exits 0 and says what it stored", arguments: CollectorBackend.enabled)
    func sigterm(_ backend: CollectorBackend) async throws {
        let database = try TestDatabase(backend)
        defer { database.drop() }
        let directory = try Lab.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let child = try await offPool { try Child(database: database, directory: directory) }
        let acknowledged = Recorder<String>()
        async let posting: Void = Self.load(url: child.url, prefix: "term", connections: 8, limit: 100_000, acknowledged: acknowledged)
        #expect(await eventually(within: 60) { acknowledged.all.count >= 200 })
        kill(child.process.pid, SIGTERM)
        try await posting
        let status = try await offPool { child.process.waitUntilExit() }
        #expect(status == 0, "\(child.stdout)")
        let stored = try database.store().vendorIDs()
        #expect(Set(acknowledged.all).isSubset(of: Set(stored.keys)), "an acknowledged report is missing")
        let last = child.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.hasPrefix("stopped: \(stored.count) reports acknowledged and stored"), "\(last) vs \(stored.count) stored")

        // The terminal summary reads the same database.
        let summary = try await ServertrustCLI.run(["reports", "summary", "--db", database.url])
        #expect(
            summary.status == 0 && summary.stdout.hasPrefix("\(stored.count) reports (\(stored.count) rows) of 1 distinct chains from 1 hosts"), "\(summary)")
        #expect(summary.stdout.contains("com.example.app 1.0") && summary.stdout.contains("why:"))
        let json = try await ServertrustCLI.run(["reports", "summary", "--db", database.url, "--json", "--host", "api.collector.test"])
        #expect(json.status == 0 && json.stdout.contains(#""reports":\#(stored.count)"#), "\(json)")
        let missing = try await ServertrustCLI.run(["reports", "summary", "--db", "sqlite:/nonexistent/reports.db"])
        #expect(missing.status == 2 && missing.stderr.hasPrefix("servertrust: reports: ") && missing.stderr.split(separator: "\n").count == 1, "\(missing)")
        let badDB = try await ServertrustCLI.run(["collect", "--db", "mysql://x"])
        #expect(badDB.status == 2 && badDB.stderr.contains("sqlite:PATH or postgres://"), "\(badDB)")
        let exposed = try await ServertrustCLI.run(["collect", "--db", database.url, "--listen", "0.0.0.0:0"])
        #expect(exposed.status == 2 && exposed.stderr.contains("needs a token"), "\(exposed)")
    }
}
