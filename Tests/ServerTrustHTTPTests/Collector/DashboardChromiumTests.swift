import CertificateParsing
import Foundation
import ServerTrustCollector
import ServerTrustHTTP
import ServerTrustLab
import Testing

/// The dashboard as a person sees it: Debian's Chromium, headless, loads `GET /` from a real
/// collector. Every request the page makes is in Chromium's NetLog and in the collector's
/// access log, and none fails; the charts' SVG carries the counts the database holds; the
/// screenshot stays under /tmp as a CI artifact.
@Suite(
    "collector dashboard in headless Chromium",
    .enabled(if: IntegrationTools.chromiumSuiteEnabled, "chromium is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct DashboardChromiumTests {
    static let screenshot = "/tmp/servertrust-dashboard.png"

    /// Chromium, headless and offline: no background services, and every host name resolves
    /// to nothing (`--host-resolver-rules`), so the only address it can reach is the
    /// collector's literal 127.0.0.1.
    static func chromium(_ arguments: [String], profile: String) async throws -> LabProcessResult {
        let chromium = try IntegrationTools.require(IntegrationTools.chromium, "chromium", install: "apt-get install chromium")
        let base = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-pings", "--disable-default-apps",
            "--disable-extensions", "--disable-domain-reliability", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--user-data-dir=" + profile,
            "--enable-logging=stderr", "--v=0",
        ]
        return try await LabProcess.run(chromium, base + arguments)
    }

    @Test("the page loads with no failed request, its SVG carries the database's counts, and a screenshot is kept")
    func dashboard() async throws {
        let publicCA = try Lab.pki(host: "api.collector.test", keySlot: 88)
        let otherCA = try Lab.pki(host: "api.collector.test", keySlot: 89, algorithm: .p384)
        let directory = try Lab.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let running = try RunningCollector(.sqlite, publicRoots: [publicCA.root, otherCA.root], expected: [publicCA.intermediate]) { configuration in
            configuration.accessLogPath = directory + "/access.log"
        }
        defer { running.stop() }
        let charlesKey = try LabKey.shared(.p256, slot: 252)
        let charles = try LabCertificate.issue(
            LabCertificateSpec(
                subject: LabName([("CN", "Charles Proxy CA (dashboard)")]), notBefore: Lab.now - 365 * LabClock.day, notAfter: Lab.now + 365 * LabClock.day,
                extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]),
            subjectKey: charlesKey)
        let minted = try LabCertificate.issue(
            LabPKI.leafSpec(host: "cdn.collector.test", keyAlgorithm: .p256, notBefore: Lab.now - LabClock.day, notAfter: Lab.now + 30 * LabClock.day),
            subjectKey: try LabKey(.p256), issuer: LabIssuer(certificate: charles, key: charlesKey))
        let posts: [[UInt8]] =
            try (0..<3).map { try ReportBodies.trustKit(chain: publicCA.serverChain, vendor: "r\($0)", version: "2.\($0)") }
            + (0..<2).map { try ReportBodies.trustKit(chain: [minted, charles], host: "cdn.collector.test", vendor: "i\($0)", version: "<b>2.0</b>") }
            + [
                try ReportBodies.trustKit(
                    chain: [try Lab.identity(otherCA, host: "cdn.collector.test").chain[0], otherCA.intermediate], host: "cdn.collector.test",
                    vendor: "u0", version: "2.0")
            ]
        let session = try CollectorClient.session()
        defer { session.invalidate() }
        for body in posts { #expect(try await CollectorClient.post(session, running.reportURL, body).statusCode == 201) }
        let summary = try running.collector.store.summary(ReportFilter(), now: Lab.now)
        let chains = try running.collector.store.chains(ReportFilter())
        #expect(summary.reports(of: .rotation) == 3 && summary.reports(of: .interception) == 2 && summary.reports(of: .unexpectedCA) == 1)

        let url = running.collector.baseURL + "/"
        let netLog = directory + "/netlog.json"
        let dump = try await Self.chromium(["--log-net-log=" + netLog, "--dump-dom", url], profile: directory + "/profile-dom")
        #expect(dump.status == 0, "\(dump.stderrText.suffix(2000))")
        let dom = dump.stdoutText

        // No failed request: every request of the page's origin in the NetLog, none with a
        // network error; the collector served each with 200; the console saw no refusal.
        let requests = try Self.pageRequests(netLog: netLog, origin: running.collector.baseURL)
        #expect(requests.urls == [url], "the page fetched only itself: \(requests.urls)")
        #expect(requests.errors.isEmpty, "failed requests: \(requests.errors)")
        let served = ((try? String(contentsOfFile: directory + "/access.log", encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains(" GET ") }
        #expect(served.count == 1 && served.allSatisfy { $0.hasSuffix(" GET / 200") }, "\(served)")
        let console = dump.stderrText.split(separator: "\n").filter { $0.contains(":CONSOLE") }
        #expect(console.isEmpty, "console: \(console)")
        // Structurally: nothing in the page points anywhere but itself or a data: URL.
        for attribute in ["src=\"", "href=\""] {
            var rest = Substring(dom)
            while let range = rest.range(of: attribute) {
                rest = rest[range.upperBound...]
                #expect(rest.hasPrefix("data:"), "\(attribute)\(rest.prefix(40))")
            }
        }
        #expect(!dom.contains("<script") && !dom.contains("<b>2.0</b>") && dom.contains("&lt;b&gt;2.0&lt;/b&gt;"))

        // The charts carry the database's numbers.
        let classBar = try #require(Self.element(dom, id: "classes"))
        for count in summary.byClass {
            #expect(
                Self.attributes(classBar, tag: "rect").contains {
                    $0["data-class"] == count.classification.rawValue && $0["data-count"] == String(count.reports)
                }, "\(count)")
        }
        #expect(classBar.contains(#"data-total="\#(summary.reports)""#))
        for (index, host) in summary.byHost.enumerated() {
            let timeline = try #require(Self.element(dom, id: "timeline-\(index)"))
            #expect(timeline.contains(#"data-host="\#(host.host)""#) && timeline.contains(#"data-total="\#(host.reports)""#), "\(host)")
            let bars = Self.attributes(timeline, tag: "rect").compactMap { $0["data-count"].flatMap { Int64($0) } }
            #expect(bars.reduce(0, +) == host.reports)
        }
        let top = try #require(Self.element(dom, id: "top-chains"))
        let bars = Self.attributes(top, tag: "g")
        for chain in chains {
            #expect(
                bars.contains {
                    $0["data-fingerprint"] == chain.fingerprint && $0["data-count"] == String(chain.reports)
                        && $0["data-class"] == chain.classification.chainClass.rawValue
                })
        }
        #expect(Self.element(dom, id: "total-reports")?.contains(#"data-count="6""#) == true || dom.contains(#"id="total-reports" data-count="6""#))

        // The screenshot, kept for CI.
        try? FileManager.default.removeItem(atPath: Self.screenshot)
        let shot = try await Self.chromium(
            ["--screenshot=" + Self.screenshot, "--window-size=1280,2400", "--hide-scrollbars", url], profile: directory + "/profile-shot")
        #expect(shot.status == 0, "\(shot.stderrText.suffix(2000))")
        let png = FileManager.default.contents(atPath: Self.screenshot) ?? Data()
        #expect(png.count > 20_000 && png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "\(png.count) bytes")
    }

    /// The URLs of requests to `origin` in a Chromium NetLog, and the network errors of those
    /// requests (by NetLog source).
    static func pageRequests(netLog: String, origin: String) throws -> (urls: [String], errors: [String]) {
        guard let data = FileManager.default.contents(atPath: netLog),
            let log = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let constants = log["constants"] as? [String: Any], let types = constants["logEventTypes"] as? [String: Int],
            let events = log["events"] as? [[String: Any]]
        else { throw IntegrationError("unreadable NetLog \(netLog)") }
        let names = Dictionary(types.map { ($0.value, $0.key) }) { first, _ in first }
        var sources: Set<Int> = []
        var urls: [String] = []
        for event in events {
            guard names[event["type"] as? Int ?? -1] == "URL_REQUEST_START_JOB", let params = event["params"] as? [String: Any],
                let url = params["url"] as? String, url.hasPrefix(origin), let source = (event["source"] as? [String: Any])?["id"] as? Int
            else { continue }
            if sources.insert(source).inserted { urls.append(url) }
        }
        var errors: [String] = []
        for event in events {
            guard let source = (event["source"] as? [String: Any])?["id"] as? Int, sources.contains(source),
                let params = event["params"] as? [String: Any], let error = params["net_error"] as? Int, error < 0
            else { continue }
            errors.append("\(names[event["type"] as? Int ?? -1] ?? "?"): net_error \(error)")
        }
        return (urls, errors)
    }

    /// The markup of the element with `id` (up to its closing `</svg>` or `</div>`).
    static func element(_ dom: String, id: String) -> String? {
        guard let start = dom.range(of: #"id="\#(id)""#) else { return nil }
        let rest = dom[start.lowerBound...]
        guard let end = rest.range(of: "</svg>") ?? rest.range(of: "</div>") else { return String(rest) }
        return String(rest[..<end.upperBound])
    }

    /// The attributes of every `<tag …>` in `markup`.
    static func attributes(_ markup: String, tag: String) -> [[String: String]] {
        var result: [[String: String]] = []
        var rest = Substring(markup)
        while let open = rest.range(of: "<\(tag) ") {
            rest = rest[open.upperBound...]
            guard let close = rest.firstIndex(of: ">") else { break }
            var attributes: [String: String] = [:]
            var text = rest[..<close]
            while let equals = text.range(of: "=\"") {
                let name = text[..<equals.lowerBound].split(separator: " ").last.map(String.init) ?? ""
                let after = text[equals.upperBound...]
                guard let quote = after.firstIndex(of: "\"") else { break }
                attributes[name] = String(after[..<quote])
                text = after[after.index(after: quote)...]
            }
            result.append(attributes)
        }
        return result
    }
}
