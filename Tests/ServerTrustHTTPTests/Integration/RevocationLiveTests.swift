import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

/// Revocation on the wire (RFC 5280 §6.3, curl's `--crlfile`): CRLs given to the decider, to a
/// policy file or to `servertrust get --crl` reach the decision made inside the TLS handshake,
/// against a real nginx. A revoked leaf and a revoked intermediate are refused before any
/// request, the decision naming the CRL; without the CRLs the same servers are accepted, and a
/// certificate no CRL covers is refused (hard-fail).
@Suite(
    "revocation live: revoked leaf and intermediate refused by nginx's clients, naming the CRL",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct RevocationLiveTests {
    @Test("HTTPSession with CRLs: the good chain passes, a revoked leaf and a revoked intermediate are refused before any request")
    func session() async throws {
        let lab = try await offPool { try RevocationLab() }
        defer { lab.stop() }
        let crls = try lab.allCRLs()

        let good = try await lab.session(crls).get(lab.url(.good, "/"))
        #expect(good.statusCode == 200 && good.text == RevocationLab.index)
        let record = "\(try #require(good.trustDecision).record)"
        // The record says the CRL check ran on the path through the whole-path hook, and which
        // CRL settled each certificate below the anchor.
        #expect(record.contains("checks:    revocation: 2 passed on the validated path"), "the record says CRLs were checked: \(record)")
        #expect(good.trustDecision?.record.steps.filter { $0.description.hasPrefix("revocation: passed: not revoked: CRL from") }.count == 2, "\(record)")

        let revokedLeaf = await failure { try await lab.session(crls).get(lab.url(.revokedLeaf, "/")) }
        guard case .serverTrustRejected(let leafDecision)? = revokedLeaf else {
            Issue.record("a revoked leaf was not refused: \(String(describing: revokedLeaf))")
            return
        }
        #expect(leafDecision.validationFailure?.kind == .revoked)
        #expect(leafDecision.validationFailure?.certificateIndex == 0)
        let leafText = "\(leafDecision)"
        #expect(leafText.contains("by the CRL from \"CN=ServerTrust Lab Issuing CA P-256"), "\(leafText)")
        #expect(leafText.contains("cRLNumber 07"), "names the CRL's number: \(leafText)")

        let revokedCA = await failure { try await lab.session(crls).get(lab.url(.revokedIntermediate, "/")) }
        guard case .serverTrustRejected(let caDecision)? = revokedCA else {
            Issue.record("a revoked intermediate was not refused: \(String(describing: revokedCA))")
            return
        }
        #expect(caDecision.validationFailure?.kind == .revoked)
        #expect(caDecision.validationFailure?.certificateIndex == 1)
        #expect("\(caDecision)".contains("by the CRL from \"CN=ServerTrust Lab Root CA P-256"), "\(caDecision)")
        #expect("\(caDecision)".contains("cRLNumber 03"), "\(caDecision)")

        // nginx saw no request on either refused server.
        #expect(lab.requests(.revokedLeaf).isEmpty && lab.requests(.revokedIntermediate).isEmpty)

        // The refusals are the CRLs' doing: without them all three are accepted.
        for site in RevocationLab.Site.allCases {
            let response = try await lab.session(nil).get(lab.url(site, "/?no-crls"))
            #expect(response.statusCode == 200, "\(site) without CRLs")
        }

        // Hard-fail: without the intermediate's CRL, nothing says whether the leaf is revoked.
        let uncovered = await failure { try await lab.session([lab.rootCRL]).get(lab.url(.good, "/?root-crl-only")) }
        guard case .serverTrustRejected(let unknown)? = uncovered else {
            Issue.record("a leaf no CRL covers was accepted: \(String(describing: uncovered))")
            return
        }
        #expect(unknown.validationFailure?.kind == .revocationStatusUnknown, "\(unknown)")
    }

    @Test("a policy file's crls reach the decision; servertrust get --crl refuses what curl --crlfile refuses")
    func policyFileAndCLI() async throws {
        let lab = try await offPool { try RevocationLab() }
        defer { lab.stop() }
        let policyPath = lab.directory + "/policy.json"
        let policy: [String: Any] = [
            "version": 1, "anchors": ["root.pem"], "anchorsOnly": true,
            "hosts": [["host": RevocationLab.host, "crls": ["root.crl", "intermediate.crl", "revoked-ca.crl"]]],
        ]
        try JSONSerialization.data(withJSONObject: policy).write(to: URL(fileURLWithPath: policyPath))
        let manager = try PolicyFile.load(contentsOf: policyPath)
        let decider = ServerTrustDecider(manager, anchors: TrustStore([]))
        let good = try await lab.session(decider: decider).get(lab.url(.good, "/?policy"))
        #expect(good.statusCode == 200)
        for site in [RevocationLab.Site.revokedLeaf, .revokedIntermediate] {
            let refused = await failure { try await lab.session(decider: decider).get(lab.url(site, "/?policy")) }
            guard case .serverTrustRejected(let decision)? = refused else {
                Issue.record("\(site) accepted through the policy file: \(String(describing: refused))")
                continue
            }
            #expect(decision.validationFailure?.kind == .revoked, "\(site): \(decision)")
        }

        // The CLI, beside curl with the same CRL for the leaf.
        let crlOptions = [
            "--crl", lab.directory + "/root.crl", "--crl", lab.directory + "/intermediate.crl",
            "--crl", lab.directory + "/revoked-ca.crl",
        ]
        func get(_ site: RevocationLab.Site, _ options: [String]) async throws -> ServertrustCLI.Result {
            try await ServertrustCLI.run(
                [
                    "get", lab.url(site, "/?cli"), "--cacert", lab.directory + "/root.pem",
                    "--resolve", lab.resolve(site),
                ] + options)
        }
        let cliGood = try await get(.good, crlOptions)
        #expect(cliGood.status == 0 && cliGood.stdout == RevocationLab.index, "\(cliGood)")
        let cliLeaf = try await get(.revokedLeaf, crlOptions)
        #expect(cliLeaf.status == 1 && cliLeaf.stderr.contains("revoked"), "\(cliLeaf)")
        #expect(cliLeaf.stderr.contains("by the CRL from"), "\(cliLeaf)")
        let cliCA = try await get(.revokedIntermediate, crlOptions)
        #expect(cliCA.status == 1 && cliCA.stderr.contains("revoked"), "\(cliCA)")
        let cliWithout = try await get(.revokedLeaf, [])
        #expect(cliWithout.status == 0, "without --crl the revoked leaf is not known to be revoked: \(cliWithout)")
        let cliBadFile = try await get(.good, ["--crl", lab.directory + "/root.pem"])
        #expect(
            cliBadFile.status == 2
                && cliBadFile.stderr.hasPrefix("servertrust: get: --crl \(lab.directory)/root.pem: not a CRL (PEM or DER): looks like a certificate"),
            "\(cliBadFile)")

        // curl --crlfile with the same CRLs in one PEM file (curl sets OpenSSL's CRL_CHECK and
        // CRL_CHECK_ALL: the whole path, hard-fail): the same three verdicts.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") {
            let crlFile = try LabFiles.write(lab.allCRLsPEM, to: lab.directory + "/all-crls.pem")
            func curlStatus(_ site: RevocationLab.Site) throws -> Int32 {
                try RecipesTests.execute(
                    "/usr/bin/curl",
                    [
                        "-s", "-o", "/dev/null", "--cacert", lab.directory + "/root.pem", "--crlfile", crlFile,
                        "--resolve", lab.resolve(site), lab.url(site, "/?curl"),
                    ], environment: [:], timeout: 60
                ).status
            }
            #expect(try curlStatus(.good) == 0)
            #expect(try curlStatus(.revokedLeaf) == 60)
            #expect(try curlStatus(.revokedIntermediate) == 60)
        }
    }
}

/// nginx with three servers for one host: a good chain, a revoked leaf (listed on the
/// intermediate's CRL), and a chain through a second intermediate that the root's CRL revokes.
final class RevocationLab: Sendable {
    enum Site: String, CaseIterable, Sendable {
        case good
        case revokedLeaf = "revoked-leaf"
        case revokedIntermediate = "revoked-intermediate"
    }

    static let host = "crl.nginx.test"
    static let index = "not revoked\n"

    let directory: String
    let nginx: NginxInstance
    let root: Certificate
    let rootCRL: CertificateRevocationList
    let intermediateCRL: CertificateRevocationList
    let revokedCACRL: CertificateRevocationList
    /// The three CRLs in one PEM file, as curl's `--crlfile` takes them.
    let allCRLsPEM: String

    init() throws {
        let now = Int64(Date().timeIntervalSince1970)
        let day = LabClock.day
        let directory = NSTemporaryDirectory() + "servertrust-crl-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/html", withIntermediateDirectories: true)
        self.directory = directory
        do {
            let pki = try LabPKI.webChain(host: Self.host, leafNotBefore: now - day, leafNotAfter: now + 30 * day, keySlot: 113)
            let revokedLeaf = try pki.issueLeaf(host: Self.host, notBefore: now - day, notAfter: now + 30 * day)
            // A second issuing CA under the same root, which the root's CRL revokes.
            let revokedCAKey = try LabKey.shared(.p256, slot: 3 * 114)
            let revokedCA = try LabCertificate.issue(
                LabCertificateSpec(
                    subject: LabName([("O", "ServerTrust Lab"), ("CN", "Revoked Issuing CA")]),
                    notBefore: now - 30 * day, notAfter: now + 365 * day,
                    extensions: [
                        .basicConstraints(ca: true, pathLength: 0), .keyUsage([.digitalSignature, .keyCertSign, .cRLSign]),
                        .subjectKeyIdentifier(), .authorityKeyIdentifier(),
                    ]),
                subjectKey: revokedCAKey, issuer: pki.rootIssuer)
            let revokedCAIssuer = LabIssuer(certificate: revokedCA, key: revokedCAKey)
            let leafUnderRevokedCA = try LabCertificate.issue(
                LabPKI.leafSpec(host: Self.host, keyAlgorithm: .p256, notBefore: now - day, notAfter: now + 30 * day),
                subjectKey: pki.leafKey, issuer: revokedCAIssuer)

            // The CRLs, current at the real time (the connection is decided on the system clock).
            func crl(_ serials: [[UInt8]], number: Int, signer: LabIssuer) throws -> [UInt8] {
                try LabCRL.issue(
                    LabCRLSpec(
                        entries: serials.map { LabRevokedEntry(serial: $0, revocationDate: now - day, reason: 1) },
                        thisUpdate: now - day, nextUpdate: now + 7 * day, number: number), signer: signer)
            }
            let rootDER = try crl([revokedCA.serialNumber], number: 3, signer: pki.rootIssuer)
            let intermediateDER = try crl([revokedLeaf.serialNumber], number: 7, signer: pki.intermediateIssuer)
            let revokedCADER = try crl([], number: 1, signer: revokedCAIssuer)
            _ = try LabFiles.write(rootDER, to: directory + "/root.crl")
            _ = try LabFiles.write(intermediateDER, to: directory + "/intermediate.crl")
            _ = try LabFiles.write(revokedCADER, to: directory + "/revoked-ca.crl")
            allCRLsPEM = [rootDER, intermediateDER, revokedCADER].map { LabPEM.encode($0, label: "X509 CRL") }.joined()
            rootCRL = try CertificateRevocationList(derEncoded: rootDER)
            intermediateCRL = try CertificateRevocationList(derEncoded: intermediateDER)
            revokedCACRL = try CertificateRevocationList(derEncoded: revokedCADER)
            root = try Certificate(derEncoded: pki.root.der)
            _ = try LabFiles.write(pki.root.pem, to: directory + "/root.pem")

            let key = try LabFiles.write(try pki.leafKey.privateKeyPEM(), to: directory + "/leaf.key")
            let chains: [Site: String] = [
                .good: try LabFiles.writeBundle(pki.serverChain, to: directory + "/good.pem"),
                .revokedLeaf: try LabFiles.writeBundle([revokedLeaf, pki.intermediate], to: directory + "/revoked-leaf.pem"),
                .revokedIntermediate: try LabFiles.writeBundle([leafUnderRevokedCA, revokedCA], to: directory + "/revoked-intermediate.pem"),
            ]
            try Data(Self.index.utf8).write(to: URL(fileURLWithPath: directory + "/html/index.txt"))
            nginx = try NginxInstance.start(prefix: directory, portCount: Site.allCases.count) { ports in
                zip(Site.allCases, ports).map { site, port in
                    """
                            server {
                                listen 127.0.0.1:\(port) ssl;
                                server_name \(Self.host);
                                ssl_certificate \(chains[site] ?? "");
                                ssl_certificate_key \(key);
                                root \(directory)/html;
                                index index.txt;
                                access_log \(directory)/logs/\(site.rawValue).log servertrust;
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

    func allCRLs() throws -> [CertificateRevocationList] { [rootCRL, intermediateCRL, revokedCACRL] }

    func port(_ site: Site) -> UInt16 { nginx.ports[Site.allCases.firstIndex(of: site) ?? 0] }
    func url(_ site: Site, _ path: String) -> String { "https://\(Self.host):\(port(site))\(path)" }
    func resolve(_ site: Site) -> String { "\(Self.host):\(port(site)):127.0.0.1" }
    func requests(_ site: Site) -> [String] { nginx.accessLog(site.rawValue) }

    /// A session trusting only the lab's root, with these CRLs (`nil`: no revocation checking).
    func session(_ crls: [CertificateRevocationList]?) throws -> HTTPSession {
        try session(
            decider: ServerTrustDecider(
                policy: TrustPolicy(HostTrustPolicy(revocation: RevocationPolicy(revocationLists: crls ?? []))), anchors: TrustStore([root])))
    }

    func session(decider: ServerTrustDecider) throws -> HTTPSession {
        var configuration = HTTPSessionConfiguration(serverTrust: decider)
        configuration.resolve = Site.allCases.map(resolve)
        configuration.timeout = 30
        return try HTTPSession(configuration: configuration)
    }
}
