import CertificateParsing
import Foundation
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

/// The staple-timing experiment, kept as a test: nginx staples a response from
/// `ssl_stapling_file`; a handshake made as the transport makes it (libcurl, our `SSL_CTX`
/// hooks, status_request asked for) records what the certificate-verify callback and the
/// status callback can read. TLS 1.3 carries the staple in the Certificate message, so both see
/// it; TLS 1.2 sends it in CertificateStatus after the Certificate message, so only the status
/// callback sees it. The staple read there verifies with ``OCSPResponseVerifier``: good, revoked,
/// and a staple signed by an undelegated key ignored (unknown).
@Suite(
    "stapled OCSP over TLS 1.2 and 1.3 from nginx: where the staple is readable",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct StapleTimingTests {
    static let host = "staple.lab.test"
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// nginx with one server per staple (good, revoked, undelegated) and one without stapling.
    struct Setup: Sendable {
        /// Stapling servers, one without stapling, and a plain-HTTP one (a TLS client there fails).
        enum Site: Int, CaseIterable { case good, revoked, undelegated, none, plain }
        let pki: LabPKI
        let staples: [Site: [UInt8]]
        let nginx: NginxInstance
        let directory: String

        init() throws {
            let now = StapleTimingTests.now
            directory = NSTemporaryDirectory() + "servertrust-staple-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            pki = try LabPKI.webChain(host: StapleTimingTests.host, leafNotBefore: now - LabClock.day, leafNotAfter: now + 30 * LabClock.day, keySlot: 144)
            let undelegated = try LabOCSP.responderCertificate(
                issuer: pki.intermediateIssuer, key: try LabKey.shared(.p256, slot: 3 * 144 + 3), extendedKeyUsage: ["serverAuth"],
                notBefore: now - LabClock.day, notAfter: now + 30 * LabClock.day)
            staples = [
                .good: try LabOCSP.response(for: pki.leaf, issuer: pki.intermediateIssuer, now: now),
                .revoked: try LabOCSP.response(
                    for: pki.leaf, issuer: pki.intermediateIssuer, status: .revoked(time: now - LabClock.day, reason: 1), now: now, digest: .sha256),
                .undelegated: try LabOCSP.response(for: pki.leaf, issuer: pki.intermediateIssuer, now: now, signer: try undelegated.asIssuer()),
            ]
            let chain = try LabFiles.writeBundle(pki.serverChain, to: directory + "/chain.pem")
            let key = try LabFiles.write(try pki.leafKey.privateKeyPEM(), to: directory + "/leaf.key")
            var files: [Site: String] = [:]
            for (site, der) in staples { files[site] = try LabFiles.write(der, to: directory + "/\(site).der") }
            let root = directory
            nginx = try NginxInstance.start(prefix: directory + "/nginx", portCount: Site.allCases.count) { ports in
                zip(Site.allCases, ports).map { site, port in
                    guard site != .plain else {
                        return "        server { listen 127.0.0.1:\(port); access_log \(root)/nginx/logs/plain.log servertrust; return 200 \"plain\\n\"; }\n"
                    }
                    let stapling = files[site].map { "ssl_stapling on; ssl_stapling_file \($0);" } ?? ""
                    return """
                                server {
                                    listen 127.0.0.1:\(port) ssl;
                                    server_name \(StapleTimingTests.host);
                                    ssl_certificate \(chain);
                                    ssl_certificate_key \(key);
                                    ssl_protocols TLSv1.2 TLSv1.3;
                                    \(stapling)
                                    access_log \(root)/nginx/logs/staple.log servertrust;
                                    location / { return 200 "ok\\n"; }
                                }

                        """
                }.joined()
            }
        }

        func port(_ site: Site) -> Int { Int(nginx.ports[site.rawValue]) }

        func observe(_ site: Site, _ version: StapleTimingProbe.Version, during: (@Sendable () -> Void)? = nil) throws -> StapleTimingProbe.Observation {
            try StapleTimingProbe.observe(
                host: StapleTimingTests.host, port: port(site), address: "127.0.0.1", version: version, duringStatusCallback: during
            ).get()
        }

        func stop() {
            nginx.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func started() async throws -> Setup { try await offPool { try Setup() } }

    @Test("TLS 1.3: the staple is in the Certificate message, so the verify callback already sees it")
    func tls13() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        let seen = try await offPool { try setup.observe(.good, .tls13) }
        #expect(seen.tlsVersion == "TLSv1.3")
        #expect(seen.verifyCallbackRan && seen.statusCallbackRan)
        #expect(seen.inVerifyCallback == setup.staples[.good])
        #expect(seen.inStatusCallback == setup.staples[.good])
    }

    @Test("TLS 1.2: CertificateStatus follows the Certificate message, so only the status callback sees the staple")
    func tls12() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        let seen = try await offPool { try setup.observe(.good, .tls12) }
        #expect(seen.tlsVersion == "TLSv1.2")
        #expect(seen.verifyCallbackRan && seen.statusCallbackRan)
        #expect(seen.inVerifyCallback == nil)
        #expect(seen.inStatusCallback == setup.staples[.good])
    }

    @Test("without stapling the status callback still runs, with no response, in both versions")
    func noStaple() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        for version in [StapleTimingProbe.Version.tls12, .tls13] {
            let seen = try await offPool { try setup.observe(.none, version) }
            #expect(seen.statusCallbackRan && seen.inStatusCallback == nil && seen.inVerifyCallback == nil)
        }
    }

    @Test("the staple read in the status callback verifies: good, revoked, and an undelegated signer ignored, over TLS 1.2 and 1.3")
    func stapleVerifies() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        let leaf = try Certificate(derEncoded: setup.pki.leaf.der)
        let issuer = try Certificate(derEncoded: setup.pki.intermediate.der)
        let verifier = OCSPResponseVerifier()
        for version in [StapleTimingProbe.Version.tls12, .tls13] {
            var statuses: [Setup.Site: OCSPStatus] = [:]
            for site in [Setup.Site.good, .revoked, .undelegated] {
                let staple = try #require(try await offPool { try setup.observe(site, version) }.inStatusCallback)
                statuses[site] = verifier.check(staple, for: leaf, issuedBy: issuer, at: Self.now).status
            }
            #expect(statuses[.good] == .good)
            guard case .revoked(.keyCompromise, _)? = statuses[.revoked] else {
                Issue.record("\(version): a revoked staple gave \(String(describing: statuses[.revoked]))")
                continue
            }
            guard case .unknown(.unauthorizedResponder)? = statuses[.undelegated] else {
                Issue.record("\(version): an undelegated staple gave \(String(describing: statuses[.undelegated]))")
                continue
            }
        }
    }

    @Test("a CRL fetch inside the status callback, even one whose own TLS fails, leaves the handshake it runs in intact")
    func fetchInsideTheHandshake() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        let fetcher = CRLFetcher(maximumSize: 1 << 20, maximumRedirects: 0)
        let plain = "https://127.0.0.1:\(setup.port(.plain))/"
        let outcomes = Mutex<[Result<CRLFetcher.Reply, CRLUnavailable>]>([])
        for version in [StapleTimingProbe.Version.tls12, .tls13] {
            // TLS spoken to a plain-HTTP server: that handshake fails and fills the thread's
            // OpenSSL error queue, which the outer handshake reads when it next returns.
            let seen = try await offPool {
                try setup.observe(.good, version) {
                    let outcome = fetcher.fetch(plain, until: .now + .seconds(5))
                    outcomes.withLock { $0.append(outcome) }
                }
            }
            #expect(seen.statusCallbackRan && seen.inStatusCallback == setup.staples[.good], "\(version)")
        }
        let fetched = outcomes.withLock { $0 }
        #expect(fetched.count == 2)
        #expect(fetched.allSatisfy { if case .failure(.unreachable) = $0 { return true } else { return false } }, "\(fetched)")
    }
}
