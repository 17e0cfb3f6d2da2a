import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustCollector
import ServerTrustHTTP
import ServerTrustLab
import TrustEvaluation

#if canImport(Glibc)
    import Glibc
#endif

// Support for the collector's tests (issue 28): the PostgreSQL server `.ci/run` starts
// (SERVERTRUST_POSTGRES_URL), headless Chromium, a fresh database per test on either backend,
// and report bodies in both senders' shapes.

extension IntegrationTools {
    /// `SERVERTRUST_POSTGRES_URL`: the server `scripts/postgres-test-server.sh` starts.
    static var postgresURL: String? {
        guard let url = environment["SERVERTRUST_POSTGRES_URL"], !url.isEmpty else { return nil }
        return url
    }

    /// `SERVERTRUST_CHROMIUM`, else Debian's `/usr/bin/chromium`.
    static var chromium: String? {
        let candidates = [environment["SERVERTRUST_CHROMIUM"], "/usr/bin/chromium", "/usr/bin/chromium-browser"].compactMap { $0 }
        return candidates.first { !$0.isEmpty && FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether the Chromium suite runs: Chromium is installed, or the environment requires it.
    static var chromiumSuiteEnabled: Bool { isRequired || chromium != nil }
}

/// The collector's two stores. SQLite always runs; PostgreSQL runs when its URL is set, and
/// with `SERVERTRUST_REQUIRE_INTEGRATION=1` a missing URL fails the PostgreSQL cases.
enum CollectorBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    var description: String { rawValue }

    /// The backends a parameterized test runs on.
    static var enabled: [CollectorBackend] { IntegrationTools.isRequired || IntegrationTools.postgresURL != nil ? allCases : [.sqlite] }
}

/// An empty database of its own for one test: an SQLite file in a temporary folder, or a
/// PostgreSQL schema of its own (selected through the URL's `search_path`), dropped after.
final class TestDatabase: Sendable {
    let backend: CollectorBackend
    /// What `--db` takes.
    let url: String
    let location: DatabaseLocation
    private let directory: String?
    private let schema: String?

    init(_ backend: CollectorBackend) throws {
        self.backend = backend
        switch backend {
        case .sqlite:
            let directory = NSTemporaryDirectory() + "servertrust-collector-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            self.directory = directory
            self.schema = nil
            url = "sqlite:" + directory + "/reports.db"
        case .postgres:
            let base = try IntegrationTools.require(
                IntegrationTools.postgresURL, "PostgreSQL (SERVERTRUST_POSTGRES_URL)",
                install: "apt-get install postgresql; eval \"export SERVERTRUST_POSTGRES_URL=$(scripts/postgres-test-server.sh start)\"")
            let schema = "collector_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
            let admin = try PostgresConnection(url: base)
            _ = try admin.execute("CREATE SCHEMA \(schema)")
            self.schema = schema
            self.directory = nil
            url = base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D" + schema
        }
        location = try DatabaseLocation(url)
    }

    /// A store on this database (migrated).
    func store(window: Int64 = 3600) throws -> ReportStore { try ReportStore(location, deduplicationWindow: window, now: Lab.now) }

    /// Removes the file or the schema.
    func drop() {
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
        if let schema, let base = IntegrationTools.postgresURL, let admin = try? PostgresConnection(url: base) {
            _ = try? admin.execute("DROP SCHEMA \(schema) CASCADE")
        }
    }
}

/// Report bodies as the two senders write them.
enum ReportBodies {
    /// A TrustKit `TSKPinFailureReport` (its `json` method's keys, with app fields).
    static func trustKit(
        chain: [LabCertificate], host: String = "api.collector.test", port: Int = 443, noted: String = "collector.test",
        vendor: String = "vendor-1", bundle: String = "com.example.app", version: String = "1.0",
        pins: [String] = ["pin-sha256=\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\""], extra: [String: Any] = [:]
    ) throws -> [UInt8] {
        var object: [String: Any] = [
            "app-bundle-id": bundle, "app-version": version, "app-vendor-id": vendor, "app-platform": "IOS", "app-platform-version": "17.4",
            "trustkit-version": "3.0.4", "date-time": "2026-01-02T03:04:05Z", "hostname": host, "port": port, "noted-hostname": noted,
            "include-subdomains": true, "enforce-pinning": false, "validated-certificate-chain": chain.map(\.pem), "known-pins": pins,
            "validation-result": 1,
        ]
        for (key, value) in extra { object[key] = value }
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }
}

/// A plain-HTTP client for a collector on loopback.
enum CollectorClient {
    static func session() throws -> HTTPSession {
        var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(DefaultTrustEvaluator(), anchors: .empty))
        configuration.timeout = 30
        configuration.maximumRedirects = 0
        return try HTTPSession(configuration: configuration)
    }

    static func post(_ session: HTTPSession, _ url: String, _ body: [UInt8], contentType: String = "application/json") async throws -> HTTPResponse {
        try await session.send(HTTPRequest(.post, url, headers: ["Content-Type": contentType], body: body))
    }
}

/// A collector in this process on a fresh database, its "public roots" the system store plus
/// `publicRoots` (lab roots standing in for public CAs).
struct RunningCollector: Sendable {
    let collector: Collector
    let database: TestDatabase

    init(
        _ backend: CollectorBackend, publicRoots: [LabCertificate] = [], expected: [LabCertificate] = [],
        configure: (inout Collector.Configuration) -> Void = { _ in }
    ) throws {
        let database = try TestDatabase(backend)
        do {
            var configuration = Collector.Configuration(database: database.location)
            configuration.publicRoots = try TrustStore.system() + TrustStore(try publicRoots.map(Lab.certificate))
            configuration.expectedCAs = try expected.map(Lab.certificate)
            configuration.rateLimitPerMinute = 0
            configure(&configuration)
            collector = try Collector(configuration)
        } catch {
            database.drop()
            throw error
        }
        self.database = database
    }

    var reportURL: String { collector.baseURL + "/report" }

    func stop() {
        collector.shutdown()
        database.drop()
    }
}

/// Raw bytes to a loopback port and what comes back until the server closes or `timeout`
/// passes: for requests HTTPSession would never send (chunked floods, smuggling shapes).
enum RawHTTP {
    static func exchange(port: UInt16, _ request: [UInt8], timeout: Double = 10) throws -> String {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw IntegrationError("socket(): errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw IntegrationError("connect(): errno \(errno)") }
        var time = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }  // the server may close early (a refused upload): read what it said
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(descriptor, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
