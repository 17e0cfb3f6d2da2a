import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustCollector
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

/// The whole loop, live: apps (real `HTTPSession` clients) with report-only pins connect to
/// nginx directly (the server moved to a key the pins do not cover: a rotation) and through
/// the Lab's MITM relay with a user-installed interception CA (an interception); each failure
/// is posted by `HTTPPinFailureReporter` to a real collector on SQLite and on PostgreSQL, which
/// must put each in the right class with the right counts.
@Suite(
    "collector integration: report-only pins at nginx and at a MITM relay",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct CollectorIntegrationTests {
    @Test("the rotation and the interception land in their classes with their counts", arguments: CollectorBackend.enabled)
    func rotationAndInterception(_ backend: CollectorBackend) async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        // The collector's public store: the system roots plus the lab root (the operator's
        // public CA), and the operator says which CA issues its certificates.
        let running = try RunningCollector(backend, publicRoots: [lab.pki.root], expected: [lab.pki.intermediate])
        defer { running.stop() }

        // A user-installed interception CA and a relay in front of nginx minting leaves with it.
        let now = Lab.now
        let charlesKey = try LabKey.shared(.p256, slot: 251)
        let charles = try LabCertificate.issue(
            LabCertificateSpec(
                subject: LabName([("O", "Charles Proxy"), ("CN", "Charles Proxy CA (collector test)")]), notBefore: now - 365 * LabClock.day,
                notAfter: now + 365 * LabClock.day, extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]),
            subjectKey: charlesKey)
        var relayConfiguration = LabMITMRelay.Configuration(
            mode: .transparent(upstreamHost: "127.0.0.1", upstreamPort: lab.port(.valid)),
            interceptionCA: LabIssuer(certificate: charles, key: charlesKey), name: "collector-mitm")
        relayConfiguration.fallbackServerName = NginxLab.host
        let relay = try LabMITMRelay.started(relayConfiguration)
        defer { relay.stop() }

        // The app: pins from before the server's key changed (two keys it no longer uses),
        // report-only, reporting to the collector. The device trusts the lab root and, on the
        // intercepted device, the installed Charles CA.
        let deliveries = Recorder<HTTPPinFailureReporter.Delivery>()
        let reporter = HTTPPinFailureReporter(anchors: .empty, timeout: 30) { deliveries.append($0) }
        let oldPins = try [
            SPKIPin(certificate: try lab.certificate(lab.otherPKI.intermediate)), SPKIPin(algorithm: .sha256, digest: Array(repeating: 0x5A, count: 32)),
        ]
        let pinSet = try PinningConfiguration([
            PinnedHost(pattern: try HostPattern("**.nginx.test"), pins: oldPins, enforcePinning: false, reportURIs: [running.reportURL])
        ])
        let evaluator = SPKIPinsTrustEvaluator(configuration: pinSet, reporter: reporter)
        func session(anchors: TrustStore, port: UInt16) throws -> HTTPSession {
            var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(evaluator, anchors: anchors))
            configuration.resolve = ["\(NginxLab.host):\(port):127.0.0.1"]
            configuration.timeout = 30
            return try HTTPSession(configuration: configuration)
        }
        let direct = try session(anchors: try lab.anchors(), port: lab.port(.valid))
        defer { direct.invalidate() }
        let intercepted = try session(anchors: try lab.anchors() + TrustStore([try Lab.certificate(charles)]), port: relay.port)
        defer { intercepted.invalidate() }
        var fresh = HTTPRequest(.get, lab.url(.valid, "/?collector"))
        fresh.usesFreshConnection = true
        for _ in 0..<3 {
            let response = try await direct.send(fresh)
            #expect(response.statusCode == 200 && response.text == NginxLab.index, "report-only: the request goes through")
        }
        var relayed = HTTPRequest(.get, "https://\(NginxLab.host):\(relay.port)/?collector-mitm")
        relayed.usesFreshConnection = true
        for _ in 0..<2 {
            let response = try await intercepted.send(relayed)
            #expect(try response.statusCode == 200 && response.trustDecision?.verifiedChain?.last == Lab.certificate(charles))
        }
        #expect(await reporter.waitUntilIdle(timeout: 60))
        #expect(
            deliveries.all.count == 5 && deliveries.all.allSatisfy { if case .success(201) = $0.result { true } else { false } },
            "\(deliveries.all.map(\.result))")

        let summary = try running.collector.store.summary(ReportFilter(), now: Lab.now)
        #expect(summary.reports == 5 && summary.hosts == 1, "\(summary)")
        #expect(summary.reports(of: .rotation) == 3 && summary.reports(of: .interception) == 2, "\(summary.byClass)")
        #expect(summary.reports(of: .unexpectedCA) == 0 && summary.reports(of: .invalid) == 0)
        let chains = try running.collector.store.chains(ReportFilter())
        let rotation = try #require(chains.first { $0.classification.chainClass == .rotation })
        #expect(rotation.reports == 3 && rotation.hosts == [NginxLab.host])
        #expect(rotation.classification.root == (try lab.certificate(lab.pki.root)).subject.rfc4514)
        #expect(rotation.classification.issuer == (try lab.certificate(lab.pki.intermediate)).subject.rfc4514)
        #expect(rotation.classification.leafPin == "sha256/" + (try lab.certificate(lab.pki.leaf)).spkiSHA256Base64)
        let interceptions = chains.filter { $0.classification.chainClass == .interception }
        #expect(interceptions.reduce(0) { $0 + $1.reports } == 2)
        #expect(
            interceptions.allSatisfy {
                $0.classification.root.contains("Charles Proxy CA (collector test)") && $0.classification.reason.contains("no public trust store")
            })
        #expect(running.collector.statistics.acknowledged == 5)

        // The API says the same.
        let client = try CollectorClient.session()
        defer { client.invalidate() }
        let api = try JSONDecoder().decode(Summary.self, from: Data(try await client.get(running.collector.baseURL + "/api/summary?host=www.nginx.test").body))
        #expect(api.reports(of: .rotation) == 3 && api.reports(of: .interception) == 2)
    }
}
