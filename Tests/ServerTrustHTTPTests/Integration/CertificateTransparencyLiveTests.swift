import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

/// Certificate Transparency on the wire (issue 26's Done-when), with a log list of Lab logs:
///
/// - nginx serving certificates with embedded SCTs, one server per shape, through HTTPSession
///   and `servertrust get`: the decision is made inside the handshake, so a refusal means no
///   request byte reached nginx;
/// - SCTs in a stapled OCSP response (nginx's `ssl_stapling_file`) and in the TLS extension (the
///   Lab's TLS server, as `openssl s_server -serverinfo` sends them), captured from the wire by
///   the Lab's OpenSSL client (`LabTLSCapture`) and decided through the same `ServerTrustDecider`
///   the session uses. (The transport's own capture of those bytes, and the tests that go
///   through HTTPSession for them, are in CertificateTransparencyTransportTests.)
///
/// Every SCT verdict is also checked against OpenSSL's own `SCT_validate` (`LabCTOracle`).
@Suite(
    "CT live: nginx with embedded SCTs, stapled SCTs, and the Lab server's TLS-extension SCTs",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct CertificateTransparencyLiveTests {
    @Test("nginx: a compliant chain passes require under both policies; each non-compliant shape is refused before any request")
    func nginxRequire() async throws {
        let lab = try await offPool { try CTNginx() }
        defer { lab.stop() }
        for policy in CTPolicy.allCases {
            let session = try lab.session(lab.ct.decider(try lab.ct.settings(.require, policy)))
            let good = try await session.get(lab.url(.shape(.compliant), "/?\(policy)"))
            #expect(good.statusCode == 200 && good.text == CTNginx.index, "\(policy)")
            let record = try #require(good.trustDecision).explanation
            #expect(record.contains("Certificate Transparency: passed: compliant with the \(policy) policy"), "\(record)")
            #expect(record.contains("embedded SCT from Live Alpha") && record.contains("embedded SCT from Live Beta"), "\(record)")
            for shape in CTLab.Shape.nonCompliant {
                let refused = await failure { try await session.get(lab.url(.shape(shape), "/?\(policy)")) }
                guard case .serverTrustRejected(let decision)? = refused else {
                    Issue.record("\(shape) under \(policy): not refused: \(String(describing: refused))")
                    continue
                }
                #expect(decision.validationFailure?.kind == .certificateTransparencyNotCompliant, "\(shape) \(policy): \(decision)")
                #expect(
                    decision.record.steps.contains { $0.description.hasPrefix("Certificate Transparency: failed: not compliant") }, "\(decision.explanation)")
                #expect(lab.requests(.shape(shape)).isEmpty, "\(shape): a request reached nginx")
            }
        }
    }

    @Test("nginx: under report each non-compliant shape is accepted with a note, and the session's event monitors are told once per connection")
    func nginxReport() async throws {
        let lab = try await offPool { try CTNginx() }
        defer { lab.stop() }
        for policy in CTPolicy.allCases {
            let recorder = ViolationRecorder()
            let session = try lab.session(lab.ct.decider(try lab.ct.settings(.report, policy))) { $0.eventMonitors = [recorder] }
            for shape in CTLab.Shape.allCases {
                let response = try await session.get(lab.url(.shape(shape), "/?report-\(policy)"))
                #expect(response.statusCode == 200, "\(shape) \(policy)")
                let decision = try #require(response.trustDecision)
                let noted = decision.record.notes.contains { $0.hasPrefix("Certificate Transparency, report only: not compliant with the \(policy) policy") }
                #expect(noted == (shape != .compliant), "\(shape) \(policy): \(decision.explanation)")
            }
            let reports = recorder.reports
            #expect(reports.count == CTLab.Shape.nonCompliant.count, "\(policy): \(reports.map { $0.violations.map(\.detail) })")
            #expect(reports.allSatisfy { $0.host == CTLab.host && $0.violations.first?.reportedFailure?.kind == .certificateTransparencyNotCompliant })
            // A request that reuses a connection carries that handshake's decision, and tells
            // the monitors nothing new.
            let again = try await session.get(lab.url(.shape(.tooFew), "/?again"))
            let reused = try #require(again.trustDecision).isFromEarlierHandshake
            #expect(recorder.reports.count == reports.count + (reused ? 0 : 1), "reused: \(reused)")
        }
        #expect(!lab.requests(.shape(.tooFew)).isEmpty)
    }

    @Test("nginx: a chain from a private anchor with no SCT passes require, with the exemption in the record; a stale list stops enforcement")
    func nginxExemptAndStale() async throws {
        let lab = try await offPool { try CTNginx() }
        defer { lab.stop() }
        let exempt = try await lab.session(lab.ct.decider(try lab.ct.settings(.require, .chrome), hostAnchors: true)).get(lab.url(.plain, "/?private"))
        #expect(exempt.statusCode == 200)
        let record = try #require(exempt.trustDecision).explanation
        #expect(
            record.contains("Certificate Transparency: noted: exempt: the path ends at an anchor that is not a root of the system trust store"), "\(record)")
        // The same server, its root a system root: refused for want of SCTs.
        let refused = await failure { try await lab.session(lab.ct.decider(try lab.ct.settings(.require, .chrome))).get(lab.url(.plain, "/?public")) }
        guard case .serverTrustRejected(let decision)? = refused else {
            Issue.record("a chain without SCTs from a system root was accepted: \(String(describing: refused))")
            return
        }
        #expect(decision.validationFailure?.kind == .certificateTransparencyNotCompliant)

        let stale = try await lab.session(lab.ct.decider(try lab.ct.settings(.require, .apple, stale: true))).get(lab.url(.shape(.tooFew), "/?stale"))
        #expect(stale.statusCode == 200)
        let staleRecord = try #require(stale.trustDecision).explanation
        #expect(staleRecord.contains("Certificate Transparency: noted: not enforced: the log list from"), "\(staleRecord)")
        #expect(staleRecord.contains("is older than the maximum age of 70 days"), "\(staleRecord)")
    }

    @Test("nginx: SCTs in a stapled OCSP response count once the response verifies")
    func nginxStaple() async throws {
        let lab = try await offPool { try CTNginx() }
        defer { lab.stop() }
        let capture = try await offPool { try LabTLSCapture.capture(port: lab.port(.staple), serverName: CTLab.host) }
        let staple = try #require(capture.ocspResponse, "nginx stapled nothing")
        let chain = try capture.chain.map { try Certificate(derEncoded: $0.der) }
        for policy in CTPolicy.allCases {
            let decider = lab.ct.decider(try lab.ct.settings(.require, policy))
            let decision = decider.decide(ServedChain(certificates: chain, host: CTLab.host, port: Int(lab.port(.staple)), stapledOCSPResponse: staple))
            #expect(decision.isTrusted, "\(policy): \(decision.explanation)")
            #expect(decision.explanation.contains("stapled OCSP response for the leaf verified (signed by the issuer"), "\(decision.explanation)")
            #expect(decision.explanation.contains("OCSP response SCT from Live Alpha"), "\(decision.explanation)")
            #expect(!decider.decide(ServedChain(certificates: chain, host: CTLab.host)).isTrusted, "without the staple there is no SCT")
        }
    }

    @Test("servertrust get --ct: require refuses a non-compliant server (exit 1), report accepts it and says so on stderr")
    func cli() async throws {
        let lab = try await offPool { try CTNginx() }
        defer { lab.stop() }
        let environment = ["SSL_CERT_FILE": lab.directory + "/root.pem"]
        func get(_ site: CTNginx.Site, _ options: [String]) async throws -> ServertrustCLI.Result {
            try await ServertrustCLI.run(
                ["get", lab.url(site, "/?cli"), "--resolve", lab.resolve(site), "--ct-log-list", lab.directory + "/logs.json"] + options,
                environment: environment)
        }
        let good = try await get(.shape(.compliant), ["--ct", "require", "--ct-policy", "chrome"])
        #expect(good.status == 0 && good.stdout == CTNginx.index, "\(good)")
        let refused = try await get(.shape(.oneOperator), ["--ct", "require", "--ct-policy", "chrome"])
        #expect(refused.status == 1, "\(refused)")
        #expect(
            refused.stderr.contains("Certificate Transparency: the server's certificate is not compliant with the chrome policy: chrome.embedded-operators"),
            "\(refused)")
        let reported = try await get(.shape(.oneOperator), ["--ct", "report", "--ct-policy", "chrome"])
        #expect(reported.status == 0 && reported.stdout == CTNginx.index, "\(reported)")
        #expect(
            reported.stderr.contains(
                "servertrust: get: \(CTLab.host):\(lab.port(.shape(.oneOperator))): Certificate Transparency, report only: not compliant with the chrome policy"
            ), "\(reported)")
        // With --cacert the root is the user's own: exempt.
        let own = try await get(.plain, ["--ct", "require", "--cacert", lab.directory + "/root.pem"])
        #expect(own.status == 0, "\(own)")
    }

    @Test("every embedded SCT nginx served is judged as OpenSSL's SCT_validate judges it")
    func embeddedOracle() async throws {
        let lab = try await offPool { try CTNginx() }
        defer { lab.stop() }
        let list = try lab.ct.logList()
        var checked = 0
        for shape in CTLab.Shape.allCases {
            let capture = try await offPool { try LabTLSCapture.capture(port: lab.port(.shape(shape)), serverName: CTLab.host) }
            let leaf = try Certificate(derEncoded: capture.chain[0].der)
            let issuer = try Certificate(derEncoded: capture.chain[1].der)
            let evaluation = CertificateTransparency.evaluate(leaf: leaf, issuer: issuer, logList: list, policy: .chrome, at: lab.ct.now)
            for result in evaluation.scts {
                let sct = try #require(result.sct)
                let oracle = try LabCTOracle.validate(
                    sct: sct.serialized, embedded: true, certificate: capture.chain[0].der, issuer: capture.chain[1].der, logKeys: lab.ct.listedKeys,
                    at: UInt64(lab.ct.now) * 1000 + 999)
                #expect(CTOracleAgreement.agrees(result.status, oracle), "\(shape): ours \(result.status), OpenSSL \(oracle)")
                checked += 1
            }
        }
        #expect(checked == 13)
    }
}

/// The Lab's TLS server sending SCTs in the TLS extension, the bytes captured from the wire and
/// decided offline by the decider a session would use.
@Suite("CT live: the Lab TLS server's SCTs in the TLS extension")
struct CertificateTransparencyTLSExtensionTests {
    /// A server for `shape` (or one sending no SCTs), its capture, and the ServedChain.
    static func served(_ lab: CTLab, _ shape: CTLab.Shape?, version: LabTLSVersion) throws -> (ServedChain, LabTLSCapture) {
        let leaf = try lab.plainLeaf()
        let scts = try shape.map { LabSCT.list(try lab.deliveredSCTs($0, for: leaf)) }
        var configuration = LabTLSServer.Configuration(
            identity: .init(chain: [leaf, lab.pki.intermediate], key: lab.pki.leafKey, signedCertificateTimestamps: scts), name: CTLab.host)
        configuration.minimumTLSVersion = version
        configuration.maximumTLSVersion = version
        let server = try LabTLSServer.started(configuration)
        defer { server.stop() }
        let capture = try LabTLSCapture.capture(port: server.port, serverName: CTLab.host, version: version)
        #expect(capture.tlsVersion == version.description)
        #expect(capture.signedCertificateTimestamps == scts, "the extension's bytes as the server sent them")
        let chain = try capture.chain.map { try Certificate(derEncoded: $0.der) }
        return (
            ServedChain(certificates: chain, host: CTLab.host, port: Int(server.port), signedCertificateTimestamps: capture.signedCertificateTimestamps),
            capture
        )
    }

    @Test("require and report, under both policies, in TLS 1.2 and 1.3", arguments: [LabTLSVersion.tls1_2, .tls1_3])
    func shapes(version: LabTLSVersion) async throws {
        let lab = try CTLab()
        for shape in CTLab.Shape.allCases {
            let (served, _) = try await offPool { try Self.served(lab, shape, version: version) }
            for policy in CTPolicy.allCases {
                let required = lab.decider(try lab.settings(.require, policy)).decide(served)
                let refused = shape.refusedDelivered(under: policy)
                #expect(required.isTrusted == !refused, "\(shape) \(policy) \(version): \(required.explanation)")
                #expect(required.explanation.contains("TLS extension SCT from Live Alpha"), "\(required.explanation)")
                if refused { #expect(required.validationFailure?.kind == .certificateTransparencyNotCompliant) }
                let reported = lab.decider(try lab.settings(.report, policy)).decide(served)
                #expect(reported.isTrusted, "\(shape) \(policy)")
                #expect(reported.record.reportedViolations.count == (refused ? 1 : 0), "\(shape) \(policy): \(reported.explanation)")
            }
        }
    }

    @Test("a private anchor with no SCT passes require, exempt; a stale list stops enforcement")
    func exemptAndStale() async throws {
        let lab = try CTLab()
        let (bare, capture) = try await offPool { try Self.served(lab, nil, version: .tls1_3) }
        #expect(capture.signedCertificateTimestamps == nil)
        let exempt = lab.decider(try lab.settings(.require, .apple), hostAnchors: true).decide(bare)
        #expect(exempt.isTrusted && exempt.explanation.contains("noted: exempt"), "\(exempt.explanation)")
        #expect(!lab.decider(try lab.settings(.require, .apple)).decide(bare).isTrusted)
        let (oneSCT, _) = try await offPool { try Self.served(lab, .tooFew, version: .tls1_2) }
        let stale = lab.decider(try lab.settings(.require, .chrome, stale: true)).decide(oneSCT)
        #expect(stale.isTrusted && stale.explanation.contains("noted: not enforced: the log list from"), "\(stale.explanation)")
    }

    @Test("every SCT the Lab server sent in the extension is judged as OpenSSL's SCT_validate judges it")
    func oracle() async throws {
        let lab = try CTLab()
        let list = try lab.logList()
        for shape in CTLab.Shape.allCases {
            let (served, capture) = try await offPool { try Self.served(lab, shape, version: .tls1_3) }
            let evaluation = CertificateTransparency.evaluate(
                leaf: served.certificates[0], issuer: served.certificates[1], tlsSCTList: served.signedCertificateTimestamps, logList: list, policy: .apple,
                at: lab.now)
            #expect(evaluation.scts.count == lab.logs(shape).count)
            for result in evaluation.scts {
                let sct = try #require(result.sct)
                let oracle = try LabCTOracle.validate(
                    sct: sct.serialized, embedded: false, certificate: capture.chain[0].der, issuer: nil, logKeys: lab.listedKeys,
                    at: UInt64(lab.now) * 1000 + 999)
                #expect(CTOracleAgreement.agrees(result.status, oracle), "\(shape): ours \(result.status), OpenSSL \(oracle)")
            }
        }
    }
}

/// How our SCT status maps onto OpenSSL's: a valid SCT is valid to both; an unknown log is
/// unknown to both; a bad signature or a future timestamp is invalid to OpenSSL. (A log's state,
/// which decides whether a valid SCT counts, is the policy's business, not SCT_validate's.)
enum CTOracleAgreement {
    static func agrees(_ ours: CTSCTStatus, _ openSSL: LabCTOracle.Status) -> Bool {
        switch ours {
        case .valid: return openSSL == .valid
        case .unknownLog: return openSSL == .unknownLog
        case .badSignature, .futureTimestamp: return openSSL == .invalid
        default: return false
        }
    }
}

/// nginx with one server per CT shape (embedded SCTs), one without SCTs, and one stapling an OCSP
/// response that carries two SCTs, all for one host.
final class CTNginx: Sendable {
    enum Site: Hashable, Sendable {
        case shape(CTLab.Shape)
        case plain
        case staple

        static var all: [Site] { CTLab.Shape.allCases.map(Site.shape) + [.plain, .staple] }
        var name: String {
            switch self {
            case .shape(let shape): return shape.rawValue
            case .plain: return "plain"
            case .staple: return "staple"
            }
        }
    }

    static let index = "logged\n"
    let ct: CTLab
    let directory: String
    let nginx: NginxInstance

    init() throws {
        ct = try CTLab()
        let directory = NSTemporaryDirectory() + "servertrust-ct-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/html", withIntermediateDirectories: true)
        self.directory = directory
        do {
            let key = try LabFiles.write(try ct.pki.leafKey.privateKeyPEM(), to: directory + "/leaf.key")
            _ = try LabFiles.write(ct.pki.root.pem, to: directory + "/root.pem")
            _ = try LabFiles.write(ct.logListJSON, to: directory + "/logs.json")
            var chains: [String: String] = [:]
            for shape in CTLab.Shape.allCases {
                chains[shape.rawValue] = try LabFiles.writeBundle([try ct.embeddedLeaf(shape), ct.pki.intermediate], to: directory + "/\(shape).pem")
            }
            chains["plain"] = try LabFiles.writeBundle([try ct.plainLeaf(), ct.pki.intermediate], to: directory + "/plain.pem")
            let stapled = try ct.plainLeaf()
            chains["staple"] = try LabFiles.writeBundle([stapled, ct.pki.intermediate], to: directory + "/staple.pem")
            let staple = try LabFiles.write(try ct.staple(for: stapled, scts: ct.deliveredSCTs(.compliant, for: stapled)), to: directory + "/staple.der")
            try Data(Self.index.utf8).write(to: URL(fileURLWithPath: directory + "/html/index.txt"))
            let sites = Site.all
            nginx = try NginxInstance.start(prefix: directory, portCount: sites.count) { ports in
                zip(sites, ports).map { site, port in
                    """
                            server {
                                listen 127.0.0.1:\(port) ssl;
                                server_name \(CTLab.host);
                                ssl_certificate \(chains[site.name] ?? "");
                                ssl_certificate_key \(key);
                                ssl_protocols TLSv1.2 TLSv1.3;
                                \(site == .staple ? "ssl_stapling on; ssl_stapling_file \(staple);" : "")
                                root \(directory)/html;
                                index index.txt;
                                access_log \(directory)/logs/\(site.name).log servertrust;
                            }

                    """
                }.joined()
            }
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    func stop() {
        nginx.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func port(_ site: Site) -> UInt16 { nginx.ports[Site.all.firstIndex(of: site) ?? 0] }
    func url(_ site: Site, _ path: String) -> String { "https://\(CTLab.host):\(port(site))\(path)" }
    func resolve(_ site: Site) -> String { "\(CTLab.host):\(port(site)):127.0.0.1" }
    func requests(_ site: Site) -> [String] { nginx.accessLog(site.name) }

    func session(_ decider: ServerTrustDecider, configure: (inout HTTPSessionConfiguration) -> Void = { _ in }) throws -> HTTPSession {
        var configuration = HTTPSessionConfiguration(serverTrust: decider)
        configuration.resolve = Site.all.map(resolve)
        configuration.timeout = 30
        configure(&configuration)
        return try HTTPSession(configuration: configuration)
    }
}
