import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

/// Certificate Transparency through HTTPSession for SCTs that arrive outside the certificate:
/// in the TLS extension (the Lab's TLS server) and in a stapled OCSP response (nginx). These
/// need the transport to put the handshake's `signed_certificate_timestamp` bytes and staple on
/// the `ServedChain` it decides (`ServedChain.signedCertificateTimestamps`, `.stapledOCSPResponse`),
/// and to decide once the staple has arrived (the policy's `HandshakeEvidence` asks for both
/// when CT is on). The same shapes are decided from wire captures, without the transport, in
/// CertificateTransparencyLiveTests.
@Suite(
    "CT through the transport: TLS-extension and stapled SCTs reach the session's decision",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct CertificateTransparencyTransportTests {
    /// A Lab TLS server sending `shape`'s SCTs in the extension, for `version`.
    static func server(_ lab: CTLab, _ shape: CTLab.Shape, version: LabTLSVersion) throws -> LabTLSServer {
        let leaf = try lab.plainLeaf()
        var configuration = LabTLSServer.Configuration(
            identity: .init(
                chain: [leaf, lab.pki.intermediate], key: lab.pki.leafKey, signedCertificateTimestamps: LabSCT.list(try lab.deliveredSCTs(shape, for: leaf))),
            name: CTLab.host)
        configuration.minimumTLSVersion = version
        configuration.maximumTLSVersion = version
        return try LabTLSServer.started(configuration)
    }

    static func session(_ decider: ServerTrustDecider, _ server: LabTLSServer, monitors: [any EventMonitor] = []) throws -> HTTPSession {
        var configuration = HTTPSessionConfiguration(serverTrust: decider)
        configuration.resolve = ["\(CTLab.host):\(server.port):127.0.0.1"]
        configuration.timeout = 20
        configuration.eventMonitors = monitors
        return try HTTPSession(configuration: configuration)
    }

    @Test(
        "TLS-extension SCTs: require passes a compliant server and refuses each non-compliant shape; report tells the monitors",
        arguments: [LabTLSVersion.tls1_2, .tls1_3])
    func tlsExtension(version: LabTLSVersion) async throws {
        let lab = try CTLab()
        for shape in CTLab.Shape.allCases {
            let server = try await offPool { try Self.server(lab, shape, version: version) }
            defer { server.stop() }
            let url = "https://\(CTLab.host):\(server.port)/"
            for policy in CTPolicy.allCases {
                let required = try Self.session(lab.decider(try lab.settings(.require, policy)), server)
                if shape.refusedDelivered(under: policy) {
                    let refused = await failure { try await required.get(url) }
                    guard case .serverTrustRejected(let decision)? = refused else {
                        Issue.record("\(shape) \(policy) \(version): not refused: \(String(describing: refused))")
                        continue
                    }
                    #expect(decision.validationFailure?.kind == .certificateTransparencyNotCompliant)
                    #expect(decision.served.signedCertificateTimestamps != nil, "the transport captured the extension")
                } else {
                    let response = try await required.get(url)
                    #expect(response.statusCode == 200)
                    #expect(try #require(response.trustDecision).explanation.contains("TLS extension SCT from Live Alpha"))
                }
                let recorder = ViolationRecorder()
                let reported = try await Self.session(lab.decider(try lab.settings(.report, policy)), server, monitors: [recorder]).get(url)
                #expect(reported.statusCode == 200)
                #expect(recorder.reports.count == (shape.refusedDelivered(under: policy) ? 1 : 0), "\(shape) \(policy)")
            }
        }
    }

    @Test("a resumed connection to a server whose SCTs come only in the TLS extension is still compliant")
    func resumption() async throws {
        let lab = try CTLab()
        let server = try await offPool { try Self.server(lab, .compliant, version: .tls1_3) }
        defer { server.stop() }
        // A new session per request would not resume; one session with fresh connections does.
        var configuration = HTTPSessionConfiguration(serverTrust: lab.decider(try lab.settings(.require, .chrome)))
        configuration.resolve = ["\(CTLab.host):\(server.port):127.0.0.1"]
        let session = try HTTPSession(configuration: configuration)
        for attempt in 0..<3 {
            var request = HTTPRequest(.get, "https://\(CTLab.host):\(server.port)/?\(attempt)")
            request.usesFreshConnection = true
            let response = try await session.send(request)
            #expect(response.statusCode == 200, "attempt \(attempt): a resumed session has no Certificate message, so its SCTs must be kept")
        }
    }

    @Test("stapled SCTs reach the session's decision (nginx ssl_stapling_file)")
    func staple() async throws {
        let lab = try await offPool { try CTNginx() }
        defer { lab.stop() }
        for policy in CTPolicy.allCases {
            let response = try await lab.session(lab.ct.decider(try lab.ct.settings(.require, policy))).get(lab.url(.staple, "/?\(policy)"))
            #expect(response.statusCode == 200)
            #expect(try #require(response.trustDecision).explanation.contains("OCSP response SCT from Live Alpha"))
        }
    }

    @Test("servertrust get --ct require against the Lab server's extension SCTs")
    func cli() async throws {
        let lab = try CTLab()
        let directory = NSTemporaryDirectory() + "servertrust-ct-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let root = try LabFiles.write(lab.pki.root.pem, to: directory + "/root.pem")
        let list = try LabFiles.write(lab.logListJSON, to: directory + "/logs.json")
        for (shape, status) in [(CTLab.Shape.compliant, Int32(0)), (.tooFew, 1)] {
            let server = try await offPool { try Self.server(lab, shape, version: .tls1_2) }
            defer { server.stop() }
            let result = try await ServertrustCLI.run(
                [
                    "get", "https://\(CTLab.host):\(server.port)/", "--resolve", "\(CTLab.host):\(server.port):127.0.0.1", "--ct", "require",
                    "--ct-log-list", list,
                ], environment: ["SSL_CERT_FILE": root])
            #expect(result.status == status, "\(shape): \(result)")
        }
    }
}
