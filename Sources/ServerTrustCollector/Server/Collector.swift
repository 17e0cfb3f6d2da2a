package import CertificateParsing
import Foundation
import Synchronization
package import TrustEvaluation

/// A collector that will not start, and why (one line for the CLI).
package struct CollectorError: Error, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// The pin-failure report collector: `POST /report` in, the dashboard and the JSON API out.
///
/// A report is read as untrusted input (``ReportReader``), its chain classified
/// (``ChainClassifier``), and it is handed to the one writer thread (``GroupCommitWriter``);
/// the request is answered `201` only when the report's transaction has committed, `503` when
/// it did not (nothing acknowledged that is not stored), `400`/`413`/`415` for what is not a
/// report, `429` past the per-source rate.
///
/// Reading (`GET /`, `/api/summary`, `/api/chains`) needs the token when one is configured; a
/// collector without a token answers reads only when it listens on a loopback address and the
/// request did not come through a proxy (`X-Forwarded-For`, `Forwarded` or `X-Real-IP` present):
/// behind nginx on the same machine every request comes from 127.0.0.1, so loopback alone would
/// open the dashboard to the world. Posting reports never needs the token: devices cannot hold
/// a secret worth having.
package final class Collector: Sendable {
    /// Everything a collector is started with.
    package struct Configuration: Sendable {
        /// The address to listen on: an IPv4 or IPv6 literal, or `localhost`.
        package var host = "127.0.0.1"
        /// The port; 0 for any.
        package var port: UInt16 = 0
        /// The database.
        package var database: DatabaseLocation
        /// The token that reading requires (`Authorization: Bearer …` or `?token=`).
        package var token: String?
        /// Reports older than this many days are deleted (0 keeps everything).
        package var retainDays = 90
        /// Reports a source may post a minute (0: unlimited).
        package var rateLimitPerMinute = 120
        /// Seconds within which identical reports are counted in one row.
        package var deduplicationWindow: Int64 = 3600
        /// The roots a chain must reach to count as public; `nil` for the system store.
        package var publicRoots: TrustStore?
        /// The CAs the operator's certificates come from (classification).
        package var expectedCAs: [Certificate] = []
        /// HTTP limits (connections, idle time, header and body bytes).
        package var limits = HTTPServer.Limits()
        /// PEM certificate chain and key, to serve HTTPS directly.
        package var tls: (certificatePEM: String, keyPEM: String)?
        /// Take the source address of reports from the last `X-Forwarded-For` entry when the
        /// peer is a loopback proxy (nginx in front).
        package var trustForwardedFor = false
        /// A file to append one line per request to (`time source method path status`).
        package var accessLogPath: String?
        /// The clock (reception times, validation, retention, the rate limit).
        package var clock = TrustClock.system

        package init(database: DatabaseLocation) { self.database = database }
    }

    /// What happened so far, for tests and the shutdown line.
    package struct Statistics: Sendable, Hashable {
        package var acknowledged = 0
        package var refused = 0
        package var rateLimited = 0
        package var failed = 0
    }

    package let configuration: Configuration
    package let store: ReportStore
    package let classifier: ChainClassifier
    private let reader = ReportReader()
    private let limiter: SourceRateLimiter
    private let writer: GroupCommitWriter
    private let server: Mutex<HTTPServer?>
    private let counters = Mutex(Statistics())
    private let accessLog: Mutex<FileHandle?>
    private let isLoopback: Bool
    /// The port listened on.
    package let port: UInt16
    private let scheme: String

    /// Opens the database (migrating it), loads the public roots and starts listening.
    package init(_ configuration: Configuration) throws(CollectorError) {
        var configuration = configuration
        if configuration.host == "localhost" { configuration.host = "127.0.0.1" }
        // Behind a proxy every connection comes from its address: a per-address connection
        // limit would cap the whole service. The rate limit goes by X-Forwarded-For instead.
        if configuration.trustForwardedFor { configuration.limits.connectionsPerAddress = 0 }
        isLoopback = Self.isLoopback(configuration.host)
        guard isLoopback || configuration.token != nil else {
            throw CollectorError(
                "listening on \(configuration.host), which is not a loopback address, needs a token (--token-file) for the dashboard and API")
        }
        if let token = configuration.token, token.count < 16 {
            throw CollectorError("the token is shorter than 16 characters")
        }
        self.configuration = configuration
        do {
            store = try ReportStore(configuration.database, deduplicationWindow: configuration.deduplicationWindow, now: configuration.clock.now())
        } catch {
            throw CollectorError("\(configuration.database): \(error)")
        }
        let roots: TrustStore
        if let given = configuration.publicRoots {
            roots = given
        } else {
            do { roots = try TrustStore.system() } catch { throw CollectorError("the system trust store: \(error)") }
        }
        classifier = ChainClassifier(publicRoots: roots, expectedCAs: configuration.expectedCAs, clock: configuration.clock)
        limiter = SourceRateLimiter(perMinute: configuration.rateLimitPerMinute)
        let store = store
        let retainDays = configuration.retainDays
        let clock = configuration.clock
        writer = GroupCommitWriter(store: store) {
            guard retainDays > 0 else { return }
            _ = try? store.purge(receivedBefore: clock.now() - Int64(retainDays) * 86_400)
        }
        if let path = configuration.accessLogPath {
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            guard let handle = FileHandle(forWritingAtPath: path) else {
                writer.stop()
                throw CollectorError("cannot open the access log \(path)")
            }
            handle.seekToEndOfFile()
            accessLog = Mutex(handle)
        } else {
            accessLog = Mutex(nil)
        }
        scheme = configuration.tls == nil ? "http" : "https"
        server = Mutex(nil)
        // The server calls back into this collector, which is not fully made until the
        // server is: requests that arrive in between are answered 503 by the relay.
        let relay = RequestRelay()
        let started: HTTPServer
        do {
            started = try HTTPServer(address: configuration.host, port: configuration.port, limits: configuration.limits, tls: configuration.tls) {
                request in relay.handle(request)
            }
        } catch {
            writer.stop()
            throw CollectorError(error.description)
        }
        port = started.port
        server.withLock { $0 = started }
        relay.collector.withLock { $0 = WeakCollector(self) }
    }

    /// `http://HOST:PORT` (IPv6 in brackets).
    package var baseURL: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "\(scheme)://\(host):\(port)"
    }

    /// Counts so far.
    package var statistics: Statistics { counters.withLock { $0 } }

    /// Graceful shutdown (SIGTERM): stop accepting, let requests in progress finish (their
    /// reports are committed and acknowledged), close the connections, write what is queued,
    /// stop the writer. Idempotent.
    package func shutdown() {
        guard
            let running = server.withLock({ server -> HTTPServer? in
                defer { server = nil }
                return server
            })
        else { return }
        running.quiesce()
        running.stop()
        writer.stop()
        accessLog.withLock { handle in
            try? handle?.close()
            handle = nil
        }
    }

    deinit { shutdown() }

    static func isLoopback(_ host: String) -> Bool {
        host == "::1" || host.hasPrefix("127.") && host.split(separator: ".").count == 4
    }

    // MARK: - Requests

    fileprivate func handle(_ request: ServerRequest) -> ServerResponse {
        let response = route(request)
        log(request, response.status)
        return response
    }

    private func route(_ request: ServerRequest) -> ServerResponse {
        switch (request.method, request.path) {
        case ("POST", "/report"): return ingest(request)
        case (_, "/report"): return Self.methodNotAllowed("POST")
        case ("GET", "/healthz"), ("HEAD", "/healthz"): return Self.text(200, "ok\n")
        case ("GET", "/"), ("GET", "/api/summary"), ("GET", "/api/chains"):
            guard authorized(request) else { return Self.unauthorized }
            return read(request)
        case (_, "/"), (_, "/api/summary"), (_, "/api/chains"): return Self.methodNotAllowed("GET")
        default: return Self.text(404, "not found\n")
        }
    }

    private func ingest(_ request: ServerRequest) -> ServerResponse {
        let type = request.headers["content-type"]?.lowercased() ?? ""
        guard type == "application/json" || type.hasPrefix("application/json;") else {
            count(\.refused)
            return Self.json(415, #"{"error":"reports are application/json"}"#)
        }
        let source = source(of: request)
        let now = configuration.clock.now()
        guard limiter.admit(source, now: Double(now)) else {
            count(\.rateLimited)
            var response = Self.json(429, #"{"error":"too many reports from this address"}"#)
            response.headers.append(("Retry-After", String(limiter.retryAfterSeconds)))
            return response
        }
        let report: ReceivedReport
        do {
            report = try reader.read(request.body)
        } catch {
            count(\.refused)
            var text = ""
            JSONNode.writeString(error.description, to: &text)
            return Self.json(400, #"{"error":\#(text)}"#)
        }
        // The reporter chooses both the chain and the host: a chain whose leaf is not valid for
        // that host is another failure than the same chain reported for a host it covers, with
        // its own row, so neither report's verdict stands for the other.
        let coversHost = ChainClassifier.leaf(report.validatedChain[0], isValidFor: report.hostname)
        let fingerprint =
            coversHost ? report.chainFingerprint : Hex.encode(SHA256.hash(Array((report.chainFingerprint + " not valid for the host").utf8)))
        let verdict = classifier.classify(report.validatedChain, coversHost: coversHost, fingerprint: fingerprint)
        let incoming = IncomingReport(report: report, fingerprint: fingerprint, classification: verdict, receivedAt: now, source: source)
        switch writer.submit(incoming) {
        case .success:
            count(\.acknowledged)
            return Self.json(201, #"{"stored":true,"class":"\#(verdict.chainClass.rawValue)","chain":"\#(fingerprint)"}"#)
        case .failure:
            count(\.failed)
            var response = Self.json(503, #"{"error":"the report could not be stored; retry later"}"#)
            response.headers.append(("Retry-After", "5"))
            return response
        }
    }

    private func read(_ request: ServerRequest) -> ServerResponse {
        let filter: ReportFilter
        do { filter = try Self.filter(request.query) } catch { return Self.json(400, #"{"error":"\#(error.description)"}"#) }
        let limit = min(500, max(1, Int(request.query["limit"] ?? "") ?? 50))
        let now = configuration.clock.now()
        do {
            switch request.path {
            case "/api/summary":
                return Self.json(200, try Self.encode(try store.summary(filter, now: now)))
            case "/api/chains":
                return Self.json(200, try Self.encode(try store.chains(filter, limit: limit)))
            default:
                let summary = try store.summary(filter, now: now)
                let chains = try store.chains(filter, limit: limit)
                let hosts = try store.summary(ReportFilter(), now: now).byHost.map(\.host).sorted()
                let page = Dashboard.render(summary: summary, chains: chains, hosts: hosts, token: request.query["token"])
                return ServerResponse(
                    status: 200,
                    headers: Self.securityHeaders + [
                        ("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", Dashboard.contentSecurityPolicy),
                    ], body: Array(page.utf8))
            }
        } catch {
            return Self.json(503, #"{"error":"the database could not be read"}"#)
        }
    }

    /// The filter in a query: `host`, `app`, `since` and `until` (RFC 3339 or seconds since
    /// 1970). Empty values are no filter.
    package static func filter(_ query: [String: String]) throws(CollectorError) -> ReportFilter {
        func value(_ name: String) -> String? {
            guard let text = query[name]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
            return text
        }
        func time(_ name: String) throws(CollectorError) -> Int64? {
            guard let text = value(name) else { return nil }
            if let seconds = Int64(text) { return seconds }
            if let parsed = ASN1Time(rfc3339: text) { return parsed.secondsSince1970 }
            throw CollectorError("\(name) is neither RFC 3339 nor seconds since 1970")
        }
        // The host as reports are stored: lowercased, without one trailing dot (ReportReader).
        var host = value("host")?.lowercased()
        if let name = host, name.count > 1, name.hasSuffix(".") { host = String(name.dropLast()) }
        return ReportFilter(host: host, app: value("app"), since: try time("since"), until: try time("until"))
    }

    private func authorized(_ request: ServerRequest) -> Bool {
        if let token = configuration.token {
            var presented = request.query["token"]
            if let header = request.headers["authorization"], header.lowercased().hasPrefix("bearer ") {
                presented = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
            }
            guard let presented else { return false }
            return Self.constantTimeEqual(Array(presented.utf8), Array(token.utf8))
        }
        let proxied = request.headers["x-forwarded-for"] != nil || request.headers["forwarded"] != nil || request.headers["x-real-ip"] != nil
        return isLoopback && !proxied
    }

    /// The report's source for rate limiting and the record: the peer, or behind a trusted
    /// loopback proxy the last `X-Forwarded-For` hop (what nginx's
    /// `$proxy_add_x_forwarded_for` appended; earlier hops are the client's to forge).
    private func source(of request: ServerRequest) -> String {
        guard configuration.trustForwardedFor, Self.isLoopback(request.clientAddress),
            let forwarded = request.headers["x-forwarded-for"]?.split(separator: ",").last?.trimmingCharacters(in: .whitespaces),
            !forwarded.isEmpty, forwarded.count <= 45, forwarded.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == ":" })
        else { return request.clientAddress }
        return forwarded
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }

    private func count(_ field: WritableKeyPath<Statistics, Int>) { counters.withLock { $0[keyPath: field] += 1 } }

    private func log(_ request: ServerRequest, _ status: Int) {
        accessLog.withLock { handle in
            guard let handle else { return }
            // The path as libmicrohttpd decoded it may hold anything: escaped to one line. The
            // query is never logged (it may hold the token).
            let line = "\(configuration.clock.now()) \(request.clientAddress) \(request.method) \(HTMLText.terminal(request.path)) \(status)\n"
            handle.write(Data(line.utf8))
        }
    }

    // MARK: - Responses

    static let securityHeaders: [(String, String)] = [
        ("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-store"), ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
    ]

    static func json(_ status: Int, _ body: String) -> ServerResponse {
        ServerResponse(status: status, headers: securityHeaders + [("Content-Type", "application/json")], body: Array(body.utf8))
    }

    static func json(_ status: Int, _ body: [UInt8]) -> ServerResponse {
        ServerResponse(status: status, headers: securityHeaders + [("Content-Type", "application/json")], body: body)
    }

    static func text(_ status: Int, _ body: String) -> ServerResponse {
        ServerResponse(status: status, headers: securityHeaders + [("Content-Type", "text/plain; charset=utf-8")], body: Array(body.utf8))
    }

    static func methodNotAllowed(_ allowed: String) -> ServerResponse {
        var response = text(405, "method not allowed\n")
        response.headers.append(("Allow", allowed))
        return response
    }

    static let unauthorized: ServerResponse = {
        var response = json(401, #"{"error":"a token is needed: Authorization: Bearer TOKEN, or ?token=TOKEN"}"#)
        response.headers.append(("WWW-Authenticate", #"Bearer realm="servertrust-collector""#))
        return response
    }()

    static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }
}

/// Passes requests to the collector once it exists; holds it weakly, so the server it owns
/// does not keep it alive.
private final class RequestRelay: Sendable {
    let collector = Mutex<WeakCollector?>(nil)

    func handle(_ request: ServerRequest) -> ServerResponse {
        guard let target = collector.withLock({ $0?.value }) else { return Collector.json(503, #"{"error":"starting"}"#) }
        return target.handle(request)
    }
}

private struct WeakCollector: Sendable {
    weak var value: Collector?
    init(_ value: Collector) { self.value = value }
}
