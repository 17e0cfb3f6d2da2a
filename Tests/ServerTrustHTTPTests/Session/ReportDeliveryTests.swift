import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

/// Pin-failure reports posted through the HTTPS client (issue 5 item 7), to a LabTLSServer
/// report collector.
@Suite("pin-failure reports through the client")
struct ReportDeliveryTests {
    static let host = "www.example.test"
    static let collectorHost = "report.example.test"

    /// A collector that records each request and answers 204 once `gate` opens (or after 120 s).
    struct Collector {
        let server: LabTLSServer
        let received: Recorder<LabHTTPRequest>
        let gate: DispatchSemaphore

        init(_ identity: LabTLSServer.Identity) throws {
            let received = Recorder<LabHTTPRequest>()
            let gate = DispatchSemaphore(value: 0)
            self.received = received
            self.gate = gate
            server = try Lab.server(identity, name: "report-collector") { configuration in
                configuration.handler = { request in
                    received.append(request)
                    _ = gate.wait(timeout: .now() + 120)
                    return LabHTTPResponse(status: 204)
                }
            }
        }

        func open() { for _ in 0..<16 { gate.signal() } }
        var url: String { server.url(host: ReportDeliveryTests.collectorHost, path: "/pkp-report") }
        var resolve: String { "\(ReportDeliveryTests.collectorHost):\(server.port):127.0.0.1" }
    }

    /// A pin set for every host under example.test (the collector's too) that the lab chain fails.
    static func failingPins(reportURIs: [String]) throws -> PinnedHost {
        let strangers = try [Lab.pki(host: host, keySlot: 65), Lab.pki(host: host, keySlot: 66, algorithm: .p384)]
        return PinnedHost(
            pattern: try HostPattern("**.example.test"),
            pins: try strangers.map { SPKIPin(certificate: try Lab.certificate($0.intermediate)) },
            reportURIs: reportURIs)
    }

    @Test("a pin failure is posted as TrustKit JSON without delaying the rejection; the report session ignores the pins")
    func postsReport() async throws {
        let pki = try Lab.pki(host: Self.host, keySlot: 64)
        let origin = try Lab.server(.init(pki: pki), name: "pinned-origin")
        defer { origin.stop() }
        let collector = try Collector(try Lab.identity(pki, host: Self.collectorHost))
        defer {
            collector.open()
            collector.server.stop()
        }
        let root = try Lab.certificate(pki.root)
        let deliveries = Recorder<HTTPPinFailureReporter.Delivery>()
        let reporter = HTTPPinFailureReporter(anchors: TrustStore([root]), resolve: [collector.resolve], timeout: 150) { deliveries.append($0) }
        let pinned = try Self.failingPins(reportURIs: [collector.url])
        let evaluator = SPKIPinsTrustEvaluator(configuration: try PinningConfiguration([pinned]), reporter: reporter)
        var configuration = HTTPSessionConfiguration(
            serverTrust: ServerTrustDecider(evaluator, anchors: TrustStore([root])))
        configuration.resolve = ["\(Self.host):\(origin.port):127.0.0.1", collector.resolve]
        configuration.timeout = 20
        let session = try HTTPSession(configuration: configuration)

        // The collector holds its answer until the test opens the gate: the rejection is back,
        // and the report is still being uploaded. Had the evaluation waited for the upload,
        // the rejection could only come after a delivery.
        let error = await failure { try await session.get(origin.url(host: Self.host)) }
        let rejection = try #require(error?.rejection, "\(String(describing: error))")
        #expect(rejection.reason.contains("spkiPinningFailed"), "\(rejection)")
        #expect(deliveries.all.isEmpty)
        #expect(await eventually(within: 60) { collector.received.all.count == 1 }, "the upload reached the collector")
        #expect(deliveries.all.isEmpty && reporter.pendingUploads == 1, "the upload is still waiting for the collector's answer")
        #expect(origin.statistics.requestsServed == 0)

        // The same pinned session refuses the collector's own host (it is under the pinned
        // pattern), and that failure is reported too, to that very host: report traffic is
        // not subject to the pins it reports on.
        let refused = await failure { try await session.get(collector.url) }
        #expect(refused?.rejection?.host == Self.collectorHost)

        collector.open()
        #expect(await reporter.waitUntilIdle(timeout: 20))
        #expect(deliveries.all.count == 2 && deliveries.all.allSatisfy { $0.succeeded && $0.reportURI == collector.url })
        #expect(deliveries.all.allSatisfy { if case .success(204) = $0.result { true } else { false } }, "\(deliveries.all.map(\.result))")
        let requests = collector.received.all
        #expect(requests.count == 2 && requests.allSatisfy { $0.method == "POST" && $0.path == "/pkp-report" })
        let reports = try requests.map { request in
            #expect(request.header("Content-Type") == "application/json")
            #expect(request.header("User-Agent")?.contains("pin-failure-report") == true)
            return try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        }
        #expect(Set(reports.compactMap { $0["hostname"] as? String }) == [Self.host, Self.collectorHost])
        let json = try #require(reports.first { $0["hostname"] as? String == Self.host })
        #expect(json["port"] as? Int == Int(origin.port))
        #expect(json["noted-hostname"] as? String == "**.example.test")
        #expect(json["include-subdomains"] as? Bool == true)
        #expect(json["enforce-pinning"] as? Bool == true)
        #expect(json["validation-result"] as? Int == PinFailureReport.ValidationResult.failedNoMatchingPin.rawValue)
        #expect((json["known-pins"] as? [String])?.count == 2)
        #expect((json["served-certificate-chain"] as? [String])?.first == pki.leaf.pem)
        #expect((json["validated-certificate-chain"] as? [String])?.last == pki.root.pem)
        #expect(reporter.finishedUploads == 2 && reporter.pendingUploads == 0 && reporter.droppedReports == 0)
    }

    @Test("undeliverable reports fail on their own: bad URI, refused connection, an untrusted collector, a full queue")
    func undeliverable() async throws {
        let pki = try Lab.pki(host: Self.host, keySlot: 64)
        let collector = try Collector(try Lab.identity(pki, host: Self.collectorHost))
        defer {
            collector.open()
            collector.server.stop()
        }
        let closed = try LabClosedPort()
        defer { closed.close() }
        let closedPort = closed.port
        let report = PinFailureReport(
            date: Lab.now, hostname: Self.host, port: 443, pinnedHost: try Self.failingPins(reportURIs: []),
            served: [try Lab.certificate(pki.leaf)], validated: [try Lab.certificate(pki.leaf)],
            result: .failedNoMatchingPin)
        let deliveries = Recorder<HTTPPinFailureReporter.Delivery>()
        // The system roots do not know the lab root: the default decision refuses the collector.
        let untrusting = HTTPPinFailureReporter(resolve: [collector.resolve]) { deliveries.append($0) }
        untrusting.send(
            report,
            to: [
                "ftp://report.example.test/x", collector.url,
                "https://closed.example.test:\(closedPort)/x",
            ])
        let closedResolve = "closed.example.test:\(closedPort):127.0.0.1"
        let trusting = HTTPPinFailureReporter(anchors: TrustStore([try Lab.certificate(pki.root)]), resolve: [closedResolve]) { deliveries.append($0) }
        trusting.send(report, to: ["https://closed.example.test:\(closedPort)/x"])
        #expect(await untrusting.waitUntilIdle(timeout: 20))
        #expect(await trusting.waitUntilIdle(timeout: 20))

        let byURI = Dictionary(grouping: deliveries.all, by: \.reportURI)
        #expect(deliveries.all.count == 4 && deliveries.all.allSatisfy { !$0.succeeded })
        if case .failure(.invalidURL) = byURI["ftp://report.example.test/x"]?.first?.result {
        } else {
            Issue.record("ftp: \(String(describing: byURI["ftp://report.example.test/x"]?.first?.result))")
        }
        if case .failure(.serverTrustRejected(let decision)) = byURI[collector.url]?.first?.result {
            #expect(decision.validationFailure?.kind == .untrustedRoot)
        } else {
            Issue.record("untrusted collector: \(String(describing: byURI[collector.url]?.first?.result))")
        }
        let refused = byURI["https://closed.example.test:\(closedPort)/x"] ?? []
        #expect(refused.count == 2 && refused.allSatisfy { if case .failure(.transport) = $0.result { true } else { false } }, "\(refused)")
        #expect(collector.received.all.isEmpty)

        // A full queue drops reports instead of piling up tasks.
        let small = HTTPPinFailureReporter(
            anchors: TrustStore([try Lab.certificate(pki.root)]), resolve: [collector.resolve],
            maximumPendingUploads: 1)
        small.send(report, to: [collector.url, collector.url, collector.url])
        #expect(small.droppedReports == 2 && small.pendingUploads == 1)
        collector.open()
        #expect(await small.waitUntilIdle(timeout: 20))
        #expect(small.finishedUploads == 1 && collector.received.all.count == 1)
        await small.waitUntilIdle()
    }
}
