import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustCollector
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

/// The collector's HTTP face, in this process, through real HTTPSession clients and raw
/// sockets: what is refused and how, who may read, what the page and the API show.
@Suite("collector: HTTP, limits, access and the page")
struct CollectorHTTPTests {
    static func pki() throws -> LabPKI { try Lab.pki(host: "api.collector.test", keySlot: 86) }

    @Test(
        "malformed, oversized, mistyped, broken-certificate and markup-everywhere reports are refused; nothing of them is stored",
        arguments: CollectorBackend.enabled)
    func refusals(_ backend: CollectorBackend) async throws {
        let running = try RunningCollector(backend)
        defer { running.stop() }
        let pki = try Self.pki()
        let session = try CollectorClient.session()
        defer { session.invalidate() }
        let url = running.reportURL

        let malformed = try await CollectorClient.post(session, url, Array(#"{"hostname": "a.test", "#.utf8))
        #expect(malformed.statusCode == 400 && malformed.text.contains("invalid JSON"), "\(malformed.text)")
        let big = try await CollectorClient.post(session, url, Array(repeating: UInt8(ascii: " "), count: 70_000) + Array("{}".utf8))
        #expect(big.statusCode == 413, "\(big.statusCode) \(big.text)")
        let typed = try await CollectorClient.post(session, url, try ReportBodies.trustKit(chain: pki.serverChain), contentType: "text/plain")
        #expect(typed.statusCode == 415)
        var broken = pki.leaf.der
        broken[4] ^= 0xFF
        let brokenBody = try ReportBodies.trustKit(
            chain: pki.serverChain, extra: ["validated-certificate-chain": [PEMDocument(label: "CERTIFICATE", derBytes: broken).pemString]])
        let brokenResponse = try await CollectorClient.post(session, url, brokenBody)
        #expect(brokenResponse.statusCode == 400 && brokenResponse.text.contains("validated-certificate-chain"), "\(brokenResponse.text)")
        let markup = "<script>alert(1)</script>\r\n"
        var everything: [String: Any] = [:]
        for name in [
            "hostname", "noted-hostname", "app-bundle-id", "app-version", "app-vendor-id", "app-platform", "app-platform-version", "trustkit-version",
            "date-time",
        ] {
            everything[name] = markup
        }
        let hostile = try await CollectorClient.post(session, url, try ReportBodies.trustKit(chain: pki.serverChain, extra: everything))
        #expect(hostile.statusCode == 400 && !hostile.text.contains("<script>"), "\(hostile.text)")
        #expect(hostile.headers["X-Content-Type-Options"] == "nosniff" && hostile.headers["Content-Type"] == "application/json")
        let get = try await session.get(url)
        #expect(get.statusCode == 405 && get.headers["Allow"] == "POST")
        #expect(try await session.get(running.collector.baseURL + "/nope").statusCode == 404)

        #expect(try running.collector.store.summary(ReportFilter(), now: Lab.now).reports == 0)
        #expect(running.collector.statistics.refused == 4 && running.collector.statistics.acknowledged == 0)
        let good = try await CollectorClient.post(session, url, try ReportBodies.trustKit(chain: pki.serverChain))
        #expect(good.statusCode == 201 && good.text.contains(#""stored":true"#), "\(good.text)")
    }

    @Test("libmicrohttpd's limits: a chunked flood is cut at the body cap, an announced one answered 413, huge headers and a smuggling shape refused")
    func transportLimits() throws {
        let running = try RunningCollector(.sqlite)
        defer { running.stop() }
        let port = running.collector.port
        // No Content-Length: the cap applies to the bytes as they come.
        var chunked = Array("POST /report HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for _ in 0..<17 { chunked += Array("1000\r\n".utf8) + Array(repeating: UInt8(ascii: "a"), count: 4096) + Array("\r\n".utf8) }
        chunked += Array("0\r\n\r\n".utf8)
        let flood = try RawHTTP.exchange(port: port, chunked)
        #expect(flood.isEmpty, "the connection is closed, unanswered: \(flood.prefix(200))")
        var announced = Array("POST /report HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 70000\r\n\r\n".utf8)
        announced += Array(repeating: UInt8(ascii: " "), count: 70_000)
        let tooLarge = try RawHTTP.exchange(port: port, announced)
        #expect(tooLarge.hasPrefix("HTTP/1.1 413"), "\(tooLarge.prefix(200))")
        let huge = Array(("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: " + String(repeating: "b", count: 64 * 1024) + "\r\n\r\n").utf8)
        let headers = try RawHTTP.exchange(port: port, huge)
        #expect(
            headers.isEmpty || headers.hasPrefix("HTTP/1.1 431") || headers.hasPrefix("HTTP/1.1 413") || headers.hasPrefix("HTTP/1.1 400"),
            "\(headers.prefix(200))")
        #expect(!headers.contains("200 OK"))
        let smuggle = Array(
            "POST /report HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                .utf8)
        let smuggled = try RawHTTP.exchange(port: port, smuggle, timeout: 5)
        #expect(smuggled.hasPrefix("HTTP/1.1 400") && smuggled.lowercased().contains("connection: close"), "\(smuggled.prefix(300))")
        #expect(!smuggled.contains("<!doctype html>"), "a request smuggled behind the body reached the dashboard: \(smuggled.prefix(300))")
        #expect(running.collector.statistics.acknowledged == 0)
        #expect(try running.collector.store.summary(ReportFilter(), now: Lab.now).reports == 0)
        let healthy = try RawHTTP.exchange(port: port, Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
        #expect(healthy.hasPrefix("HTTP/1.1 200"), "the collector still serves: \(healthy.prefix(100))")
    }

    @Test("the per-source rate limit answers 429 with Retry-After, and the store never sees the excess")
    func rateLimit() async throws {
        // A fixed clock: no token comes back during the test, however slow the machine.
        let running = try RunningCollector(.sqlite) { configuration in
            configuration.rateLimitPerMinute = 6
            configuration.clock = .fixed(Lab.now)
        }
        defer { running.stop() }
        let pki = try Self.pki()
        let session = try CollectorClient.session()
        defer { session.invalidate() }
        var statuses: [Int] = []
        for index in 0..<14 {
            let response = try await CollectorClient.post(session, running.reportURL, try ReportBodies.trustKit(chain: pki.serverChain, vendor: "d\(index)"))
            statuses.append(response.statusCode)
            if response.statusCode == 429 { #expect(response.headers["Retry-After"] == "10") }
        }
        #expect(statuses.prefix(10).allSatisfy { $0 == 201 } && statuses.dropFirst(10).allSatisfy { $0 == 429 }, "\(statuses)")
        #expect(try running.collector.store.summary(ReportFilter(), now: Lab.now).reports == 10)
    }

    @Test("reading: open on loopback without a token, closed to proxied requests; with a token, closed without it; posting never needs it")
    func access() async throws {
        let session = try CollectorClient.session()
        defer { session.invalidate() }
        let pki = try Self.pki()
        let open = try RunningCollector(.sqlite)
        defer { open.stop() }
        #expect(try await session.get(open.collector.baseURL + "/").statusCode == 200)
        #expect(try await session.get(open.collector.baseURL + "/api/summary").statusCode == 200)
        for header in ["X-Forwarded-For", "Forwarded", "X-Real-IP"] {
            let proxied = try await session.send(HTTPRequest(.get, open.collector.baseURL + "/", headers: [header: "203.0.113.9"]))
            #expect(proxied.statusCode == 401, "\(header)")
        }

        let token = "collector-token-" + UUID().uuidString
        let closed = try RunningCollector(.sqlite) { $0.token = token }
        defer { closed.stop() }
        let base = closed.collector.baseURL
        let anonymous = try await session.get(base + "/")
        #expect(anonymous.statusCode == 401 && anonymous.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
        #expect(try await session.get(base + "/api/chains?token=wrong-" + token).statusCode == 401)
        #expect(try await session.send(HTTPRequest(.get, base + "/api/chains", headers: ["Authorization": "Bearer " + token])).statusCode == 200)
        let page = try await session.get(base + "/?token=" + token)
        #expect(page.statusCode == 200 && page.text.contains(#"name="token" value="\#(token)""#))
        #expect(try await CollectorClient.post(session, base + "/report", try ReportBodies.trustKit(chain: pki.serverChain)).statusCode == 201)
        #expect(try await session.get(base + "/healthz").statusCode == 200)

        let database = try TestDatabase(.sqlite)
        defer { database.drop() }
        var exposed = Collector.Configuration(database: database.location)
        exposed.host = "0.0.0.0"
        #expect(throws: CollectorError.self, "a non-loopback collector without a token must not start") { try Collector(exposed) }
        exposed.host = "127.0.0.1"
        exposed.token = "short"
        #expect(throws: CollectorError.self) { try Collector(exposed) }
    }

    @Test("markup from reports is inert on the page and in the API; the page carries its CSP and fetches nothing", arguments: CollectorBackend.enabled)
    func inertMarkup(_ backend: CollectorBackend) async throws {
        let running = try RunningCollector(backend)
        defer { running.stop() }
        let pki = try Self.pki()
        let session = try CollectorClient.session()
        defer { session.invalidate() }
        let markup = "<img src=x onerror=alert(1)>\"'&"
        let posted = try await CollectorClient.post(
            session, running.reportURL,
            try ReportBodies.trustKit(chain: pki.serverChain, vendor: markup, bundle: markup, version: markup, extra: ["x-extra": "<svg onload=alert(2)>"]))
        #expect(posted.statusCode == 201)
        let page = try await session.get(running.collector.baseURL + "/")
        #expect(page.statusCode == 200 && page.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(page.headers["Content-Security-Policy"]?.hasPrefix("default-src 'none'") == true && page.headers["X-Content-Type-Options"] == "nosniff")
        #expect(!page.text.contains("<img src=x") && !page.text.contains("<svg onload") && !page.text.contains("<script"))
        #expect(page.text.contains("&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;"))
        #expect(!page.text.contains("src=\"http") && !page.text.contains("href=\"http") && page.text.contains(#"<link rel="icon" href="data:,">"#))
        let api = try await session.get(running.collector.baseURL + "/api/summary")
        #expect(api.headers["Content-Type"] == "application/json")
        let summary = try JSONDecoder().decode(Summary.self, from: Data(api.body))
        #expect(summary.appVersions.first?.version == markup && summary.reports == 1)
        #expect(try running.collector.store.unknownFields(host: "api.collector.test") == [#"{"x-extra":"\u003csvg onload=alert(2)\u003e"}"#])
    }

    /// A reported host and the names of the leaf in the reported chain (all from the operator's
    /// expected public CA), with the class the report must get.
    struct HostCase: Sendable, CustomTestStringConvertible {
        let reported: String
        let leafNames: [String]
        let expected: ChainClass
        var testDescription: String { "\(reported) with a leaf for \(leafNames.joined(separator: ", ")): \(expected.rawValue)" }
    }

    static let hostCases: [HostCase] = [
        // Another server's publicly valid certificate from the same CA is no new key of this one.
        HostCase(reported: "api.collector.test", leafNames: ["attacker.example"], expected: .invalid),
        HostCase(reported: "api.collector.test.", leafNames: ["attacker.example"], expected: .invalid),
        HostCase(reported: "a.b.collector.test", leafNames: ["*.collector.test"], expected: .invalid),
        HostCase(reported: "api.collector.test", leafNames: ["api.collector.test.attacker.example"], expected: .invalid),
        // Case and one trailing dot are the same host (RFC 6125 §6.4.1, RFC 1034 §3.1).
        HostCase(reported: "API.Collector.Test.", leafNames: ["api.collector.test"], expected: .rotation),
        HostCase(reported: "api.collector.test", leafNames: ["*.collector.test"], expected: .rotation),
        HostCase(reported: "127.0.0.1", leafNames: ["127.0.0.1"], expected: .rotation),
    ]

    @Test(
        "a publicly valid chain from the expected CA is a rotation only when its leaf is valid for the reported host; its verdict for another host is its own",
        arguments: hostCases)
    func chainOfAnotherHost(_ row: HostCase) async throws {
        let pki = try Self.pki()
        let running = try RunningCollector(.sqlite, publicRoots: [pki.root], expected: [pki.intermediate]) { $0.clock = .fixed(Lab.now) }
        defer { running.stop() }
        let session = try CollectorClient.session()
        defer { session.invalidate() }
        let leaf = try pki.issueLeaf(
            host: row.leafNames[0], key: LabKey.shared(.p256, slot: 241), subjectAltNames: row.leafNames.map(LabGeneralName.forHost),
            notBefore: Lab.now - LabClock.day, notAfter: Lab.now + 30 * LabClock.day)
        let chain = [leaf, pki.intermediate]
        // The attacker's own host first: for it the chain is a rotation, and that verdict must
        // not stand for the victim's report of the same chain.
        if let own = row.leafNames.first(where: { !$0.hasPrefix("*") }), row.expected != .rotation {
            let first = try await CollectorClient.post(session, running.reportURL, try ReportBodies.trustKit(chain: chain, host: own, vendor: "own"))
            #expect(first.statusCode == 201 && first.text.contains(#""class":"rotation""#), "\(first.text)")
        }
        let response = try await CollectorClient.post(session, running.reportURL, try ReportBodies.trustKit(chain: chain, host: row.reported))
        #expect(response.statusCode == 201 && response.text.contains(#""class":"\#(row.expected.rawValue)""#), "\(response.text)")
        let chains = try running.collector.store.chains(try Collector.filter(["host": row.reported]))
        #expect(chains.map(\.classification.chainClass) == [row.expected])
        if row.expected != .rotation {
            #expect(!chains[0].classification.reason.contains("add sha256/") && chains[0].classification.reason.contains("not for the host"))
        }
    }

    @Test("HTTPS directly: a client that trusts the collector's CA posts over TLS (libmicrohttpd with GnuTLS)")
    func directTLS() async throws {
        let pki = try Self.pki()
        let identity = try Lab.identity(pki, host: "collector.example.test")
        let key = try identity.key.privateKeyPEM()
        let running = try RunningCollector(.sqlite) { $0.tls = (identity.chain.map(\.pem).joined(), key) }
        defer { running.stop() }
        #expect(running.collector.baseURL.hasPrefix("https://"))
        var configuration = HTTPSessionConfiguration(serverTrust: try Lab.decider(anchors: try Lab.anchors(pki)))
        configuration.resolve = ["collector.example.test:\(running.collector.port):127.0.0.1"]
        configuration.timeout = 20
        let session = try HTTPSession(configuration: configuration)
        defer { session.invalidate() }
        let url = "https://collector.example.test:\(running.collector.port)/report"
        let response = try await CollectorClient.post(session, url, try ReportBodies.trustKit(chain: pki.serverChain))
        #expect(response.statusCode == 201 && response.trustDecision?.isTrusted == true)
    }
}
