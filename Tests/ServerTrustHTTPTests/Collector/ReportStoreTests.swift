import CertificateParsing
import Foundation
import ServerTrustCollector
import ServerTrustLab
import Testing
import TrustEvaluation

/// The store, the same tests on SQLite and on PostgreSQL: migrations, deduplication, the
/// summary's counts, filters, retention, and two collectors sharing one database.
@Suite("collector: the store on SQLite and PostgreSQL")
struct ReportStoreTests {
    static let now: Int64 = 1_780_272_000

    /// An incoming report for `chain`, from `vendor`, received at `time`.
    static func incoming(
        _ chain: [LabCertificate], vendor: String, host: String = "api.collector.test", version: String = "1.0", at time: Int64 = now,
        as chainClass: ChainClass = .rotation
    ) throws -> IncomingReport {
        let report = try ReportReader().read(try ReportBodies.trustKit(chain: chain, host: host, vendor: vendor, version: version))
        let verdict = ChainClassification(
            chainClass: chainClass, reason: "test", validatesAgainstPublicRoots: chainClass == .rotation, root: "CN=root", issuer: "CN=issuer",
            leafSubject: "CN=leaf", leafPin: "sha256/x")
        return IncomingReport(report: report, classification: verdict, receivedAt: time, source: "127.0.0.1")
    }

    @Test("migrations run once, are recorded, and a database from a newer collector is refused", arguments: CollectorBackend.enabled)
    func migrations(_ backend: CollectorBackend) throws {
        let database = try TestDatabase(backend)
        defer { database.drop() }
        let store = try database.store()
        #expect(try store.schemaVersion() == Schema.currentVersion)
        let connection = try database.location.connect()
        #expect(try Schema.migrate(connection, now: Self.now).isEmpty, "a second start applies nothing")
        let rows = try connection.execute("SELECT version, description FROM collector_schema_migrations ORDER BY version")
        #expect(rows.map { $0.int(0) } == Schema.migrations.map(\.version))
        _ = try connection.execute(
            "INSERT INTO collector_schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
            [.integer(Schema.currentVersion + 1), .text("from the future"), .integer(Self.now)])
        #expect(throws: StoreError.self) { try ReportStore(database.location, now: Self.now) }
    }

    @Test("identical reports within the window are counted in one row; another device, chain or window adds a row", arguments: CollectorBackend.enabled)
    func deduplication(_ backend: CollectorBackend) throws {
        let database = try TestDatabase(backend)
        defer { database.drop() }
        let store = try database.store(window: 3600)
        let pki = try Lab.pki(host: "api.collector.test", keySlot: 84)
        let other = try Lab.pki(host: "api.collector.test", keySlot: 85)
        let start = Self.now - Self.now % 3600
        try store.record([try Self.incoming(pki.serverChain, vendor: "d1", at: start + 10), try Self.incoming(pki.serverChain, vendor: "d1", at: start + 20)])
        try store.record([try Self.incoming(pki.serverChain, vendor: "d1", at: start + 3599)])
        try store.record([try Self.incoming(pki.serverChain, vendor: "d2", at: start + 30)])
        try store.record([try Self.incoming(other.serverChain, vendor: "d1", at: start + 40, as: .interception)])
        try store.record([try Self.incoming(pki.serverChain, vendor: "d1", at: start + 3600)])
        let summary = try store.summary(ReportFilter(), now: Self.now)
        #expect(summary.reports == 6 && summary.storedRows == 4 && summary.chains == 2 && summary.devices == 2, "\(summary)")
        #expect(summary.reports(of: .rotation) == 5 && summary.reports(of: .interception) == 1)
        #expect(try store.vendorIDs() == ["d1": 5, "d2": 1])
        let chains = try store.chains(ReportFilter())
        #expect(
            chains.map(\.reports) == [5, 1] && chains.first?.devices == 2 && chains.first?.firstSeen == start + 10 && chains.first?.lastSeen == start + 3600)
        #expect(chains.first?.certificates == pki.serverChain.map(\.pem).joined())
    }

    @Test("summary and chains honour host, app and time filters; values are bound, never spliced", arguments: CollectorBackend.enabled)
    func filters(_ backend: CollectorBackend) throws {
        let database = try TestDatabase(backend)
        defer { database.drop() }
        let store = try database.store()
        let pki = try Lab.pki(host: "api.collector.test", keySlot: 84)
        try store.record([
            try Self.incoming(pki.serverChain, vendor: "a", host: "api.collector.test", version: "1.0", at: Self.now - 7200),
            try Self.incoming(pki.serverChain, vendor: "b", host: "cdn.collector.test", version: "1.1", at: Self.now - 60),
            try Self.incoming(pki.serverChain, vendor: "c", host: "cdn.collector.test", version: "1.1", at: Self.now - 30),
        ])
        #expect(try store.summary(ReportFilter(host: "cdn.collector.test"), now: Self.now).reports == 2)
        #expect(try store.summary(ReportFilter(since: Self.now - 3600), now: Self.now).reports == 2)
        #expect(try store.summary(ReportFilter(until: Self.now - 3600), now: Self.now).reports == 1)
        #expect(try store.summary(ReportFilter(app: "com.example.app"), now: Self.now).reports == 3)
        #expect(try store.summary(ReportFilter(host: "x' OR '1'='1"), now: Self.now).reports == 0)
        #expect(try store.summary(ReportFilter(app: "'; DROP TABLE reports; --"), now: Self.now).reports == 0)
        let all = try store.summary(ReportFilter(), now: Self.now)
        #expect(all.reports == 3 && all.byHost.map(\.host) == ["cdn.collector.test", "api.collector.test"])
        #expect(all.appVersions.map(\.version) == ["1.1", "1.0"])
        #expect(all.timeline.reduce(0) { $0 + $1.reports } == 3 && all.bucketSeconds == 300)
        let chain = try #require(try store.chains(ReportFilter()).first)
        #expect(chain.hosts == ["cdn.collector.test", "api.collector.test"] && chain.appVersions == ["com.example.app 1.1", "com.example.app 1.0"])
    }

    @Test("retention deletes old reports and the chains no report refers to", arguments: CollectorBackend.enabled)
    func retention(_ backend: CollectorBackend) throws {
        let database = try TestDatabase(backend)
        defer { database.drop() }
        let store = try database.store()
        let pki = try Lab.pki(host: "api.collector.test", keySlot: 84)
        let other = try Lab.pki(host: "api.collector.test", keySlot: 85)
        try store.record([try Self.incoming(pki.serverChain, vendor: "old", at: Self.now - 100 * 86_400)])
        try store.record([try Self.incoming(other.serverChain, vendor: "new", at: Self.now)])
        #expect(try store.purge(receivedBefore: Self.now - 90 * 86_400) == 1)
        let summary = try store.summary(ReportFilter(), now: Self.now)
        #expect(summary.reports == 1 && summary.chains == 1)
        // The purged chain can come back: its cached id was dropped with it.
        try store.record([try Self.incoming(pki.serverChain, vendor: "again", at: Self.now)])
        #expect(try store.summary(ReportFilter(), now: Self.now).chains == 2)
    }

    @Test("two stores on one database (two collectors behind a load balancer) count together, concurrently", arguments: CollectorBackend.enabled)
    func sharedDatabase(_ backend: CollectorBackend) async throws {
        let database = try TestDatabase(backend)
        defer { database.drop() }
        let first = try database.store()
        let second = try database.store()
        let pki = try Lab.pki(host: "api.collector.test", keySlot: 84)
        let chain = pki.serverChain
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in [first, second].enumerated() {
                group.addTask {
                    for round in 0..<20 {
                        try store.record([
                            try Self.incoming(chain, vendor: "shared", at: Self.now), try Self.incoming(chain, vendor: "s\(index)-\(round)", at: Self.now),
                        ])
                    }
                }
            }
            try await group.waitForAll()
        }
        let summary = try first.summary(ReportFilter(), now: Self.now)
        #expect(summary.reports == 80 && summary.storedRows == 41 && summary.chains == 1, "\(summary)")
        #expect(try second.vendorIDs()["shared"] == 40)
    }
}
