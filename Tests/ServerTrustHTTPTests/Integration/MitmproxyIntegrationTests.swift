import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

/// A real man in the middle: mitmdump as an HTTP proxy in front of nginx, its CA installed as a
/// user-trusted anchor. The default policy lets it read the traffic (what pinning exists to
/// stop); every pinning policy refuses its certificate before a request is sent, and its flow
/// log shows that no request reached it.
@Suite(
    "mitmproxy integration: an interception proxy with a user-installed CA",
    .enabled(
        if: IntegrationTools.mitmproxySuiteEnabled,
        "mitmdump or nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct MitmproxyIntegrationTests {
    /// Lab and proxy, started together and stopped together.
    struct Fixture: Sendable {
        let lab: NginxLab
        let mitm: MitmdumpInstance
        /// mitmproxy's CA, as the user installed it.
        let mitmCA: Certificate

        /// Starts both off the cooperative pool.
        static func start() async throws -> Fixture { try await offPool { try Fixture() } }

        init() throws {
            let lab = try NginxLab()
            let mitm: MitmdumpInstance
            do {
                mitm = try MitmdumpInstance.start(hosts: [NginxLab.host, NginxLab.otherHost])
            } catch {
                lab.stop()
                throw error
            }
            do {
                mitmCA = try mitm.caCertificate()
            } catch {
                mitm.stop()
                lab.stop()
                throw error
            }
            self.lab = lab
            self.mitm = mitm
        }

        func stop() {
            mitm.stop()
            lab.stop()
        }

        /// The "system" roots of a device whose user installed the proxy CA, plus the lab's
        /// roots standing in for the public CA of the genuine server.
        func deviceAnchors() throws -> TrustStore {
            try TrustStore.system() + TrustStore([mitmCA]) + lab.anchors()
        }

        /// A session through the proxy (or direct, with the hosts resolved to nginx).
        func session(_ decider: ServerTrustDecider, throughProxy: Bool = true) throws -> HTTPSession {
            var configuration = HTTPSessionConfiguration(serverTrust: decider)
            if throughProxy {
                configuration.proxy = ProxyConfiguration(url: mitm.proxyURL)
            } else {
                configuration.resolve = lab.resolve
            }
            configuration.timeout = 30
            return try HTTPSession(configuration: configuration)
        }

        /// An evaluator of module `ServerTrust` on the device's anchors.
        func policy(_ evaluator: any ServerTrustEvaluating) throws -> ServerTrustDecider {
            ServerTrustDecider(evaluator, anchors: try deviceAnchors())
        }

        func cli(_ path: String, _ options: [String]) async throws -> ServertrustCLI.Result {
            let anchors = lab.directory + "/device-anchors.pem"
            if !FileManager.default.fileExists(atPath: anchors) {
                let pem = [mitmCA.pemString, lab.pki.root.pem, lab.otherPKI.root.pem].joined(separator: "\n")
                try Data(pem.utf8).write(to: URL(fileURLWithPath: anchors))
            }
            return try await ServertrustCLI.run(["get", lab.url(.valid, path), "--proxy", mitm.proxyURL, "--anchors", anchors] + options)
        }
    }

    @Test("the default policy (system roots plus the installed mitmproxy CA) accepts the interception")
    func defaultPolicyIsIntercepted() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }
        let lab = fixture.lab

        let response = try await fixture.session(try Lab.decider(anchors: try fixture.deviceAnchors())).get(lab.url(.valid, "/?intercepted"))
        #expect(response.statusCode == 200 && response.text == NginxLab.index)
        let decision = try #require(response.trustDecision)
        #expect(decision.isTrusted)
        #expect(decision.verifiedChain?.last == fixture.mitmCA, "the chain ends at mitmproxy's CA, not the lab root")
        let servedLeaf = try #require(decision.servedChain.first)
        #expect(servedLeaf.subjectPublicKeyInfo != (try lab.certificate(lab.pki.leaf)).subjectPublicKeyInfo)
        #expect(servedLeaf.subjectAlternativeNames.contains(.dnsName(NginxLab.host)))

        // AFNetworking's default policy too.
        let byPolicy = try await fixture.session(try fixture.policy(SecurityPolicy.default)).get(lab.url(.valid, "/?intercepted-policy"))
        #expect(byPolicy.statusCode == 200 && byPolicy.trustDecision?.servedChain.first?.issuer == fixture.mitmCA.subject)

        let cli = try await fixture.cli("/?intercepted-cli", [])
        #expect(cli.status == 0 && cli.stdout == NginxLab.index, "\(cli)")

        // mitmdump saw (and could have read or changed) every request; nginx got them from it.
        let requests = fixture.mitm.events("request").compactMap { $0.fields["url"] }
        #expect(requests.filter { $0.contains("intercepted") }.count == 3, "\(fixture.mitm.events())")
        #expect(fixture.mitm.events("response").count == 3)
        #expect(await eventually { lab.requests(.valid).filter { $0.contains("intercepted") }.count == 3 }, "\(lab.requests(.valid))")
    }

    @Test("every pinning policy refuses mitmproxy's certificate; no request reaches it")
    func pinningStopsTheInterception() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }
        let lab = fixture.lab
        let leaf = try lab.certificate(lab.pki.leaf)
        let intermediate = try lab.certificate(lab.pki.intermediate)
        let backup = try lab.certificate(lab.otherPKI.intermediate)
        let pinSet = try PinningConfiguration([
            PinnedHost(pattern: try HostPattern(NginxLab.host), pins: [SPKIPin(certificate: intermediate), SPKIPin(certificate: backup)])
        ])
        let policies: [(name: String, decider: ServerTrustDecider)] = [
            ("SecurityPolicy publicKey (leaf, strict)", try fixture.policy(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [leaf]))),
            (
                "SecurityPolicy publicKey (intermediate, compat)",
                try fixture.policy(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [intermediate], semantics: .compat))
            ),
            (
                "SecurityPolicy certificate (intermediate)",
                try fixture.policy(SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [intermediate]))
            ),
            (
                "SecurityPolicy certificate (leaf, allowInvalid, compat)",
                try fixture.policy(
                    SecurityPolicy(
                        pinningMode: .certificate, pinnedCertificates: [leaf], allowInvalidCertificates: true,
                        semantics: .compat))
            ),
            ("SPKIPinsTrustEvaluator", try fixture.policy(SPKIPinsTrustEvaluator(configuration: pinSet))),
            ("PublicKeysTrustEvaluator", try fixture.policy(PublicKeysTrustEvaluator(certificates: [intermediate]))),
            ("PinnedCertificatesTrustEvaluator", try fixture.policy(PinnedCertificatesTrustEvaluator(certificates: [leaf]))),
            ("SPKI pins (the test decider)", try Lab.decider(anchors: try fixture.deviceAnchors(), pins: [SPKIPin(certificate: leaf)])),
        ]
        for (index, policy) in policies.enumerated() {
            // Direct to nginx the pins hold: the policy is right for the genuine server.
            let direct = try await fixture.session(policy.decider, throughProxy: false).get(lab.url(.valid, "/?direct-\(index)"))
            #expect(direct.statusCode == 200, "\(policy.name) refused the genuine server")
            // Through the proxy: a trust error before any request byte.
            let error = await failure { try await fixture.session(policy.decider).get(lab.url(.valid, "/?pinned-\(index)")) }
            let rejection = try #require(error?.rejection, "\(policy.name): \(String(describing: error))")
            #expect(rejection.host == NginxLab.host && rejection.servedChain.first?.issuer == fixture.mitmCA.subject, "\(policy.name)")
        }

        // The CLI's pins and AFNetworking modes, through the same proxy.
        let pinPath = try LabFiles.write(lab.pki.leaf.pem, to: lab.directory + "/genuine-leaf.pem")
        let cliPin = try await fixture.cli("/?pinned-cli", ["--pin", "sha256/" + leaf.spkiSHA256Base64])
        // The CLI's first line is in words (UserMessages); the decision record after it names the evaluator.
        #expect(
            cliPin.status == 1 && cliPin.stderr.contains("server trust rejected: ") && cliPin.stderr.contains("public key does not match the pinned public key")
                && cliPin.stderr.contains("evaluator: SPKIPinsTrustEvaluator"), "\(cliPin)")
        let cliMode = try await fixture.cli("/?pinned-cli-mode", ["--mode", "public-key", "--pinned-cert", pinPath, "--strict"])
        #expect(cliMode.status == 1 && cliMode.stderr.contains("server trust rejected"), "\(cliMode)")
        let cliDefault = try await fixture.cli("/?open-cli", [])
        #expect(cliDefault.status == 0, "the same proxy passes without pins: \(cliDefault)")

        // The proxy saw a CONNECT for every attempt, and only the unpinned request.
        let connects = fixture.mitm.events("connect")
        #expect(connects.count >= policies.count + 3, "\(fixture.mitm.events())")
        #expect(connects.allSatisfy { $0.fields["host"] == NginxLab.host })
        let requests = fixture.mitm.events("request").compactMap { $0.fields["url"] }
        #expect(requests == [lab.url(.valid, "/?open-cli")], "requests that reached mitmdump: \(requests)")
        #expect(!fixture.mitm.events("client-tls-failed").isEmpty, "the client aborted mitmdump's handshakes: \(fixture.mitm.events())")
        #expect(await eventually { lab.requests(.valid).contains { $0.contains("open-cli") } })
        let logged = lab.requests(.valid)
        #expect(!logged.contains { $0.contains("pinned") }, "\(logged)")
        #expect(logged.filter { $0.contains("direct-") }.count == policies.count, "\(logged)")
    }
}
