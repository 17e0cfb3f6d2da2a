import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

@Suite("server trust on live TLS connections")
struct ServerTrustTests {
    let host = "www.example.test"

    @Test("accepts a valid chain and reports the decision")
    func acceptsValidChain() async throws {
        let pki = try Lab.pki(host: host)
        let server = try Lab.server(.init(pki: pki))
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        let response = try await session.get(server.url(host: host, path: "/hello"))
        #expect(response.statusCode == 200)
        #expect(response.text == "hello from lab")
        #expect(response.tlsVersion == "TLSv1.3")
        #expect(response.httpVersion == "HTTP/1.1")
        let decision = try #require(response.trustDecision)
        #expect(decision.isTrusted && decision.evaluator == "DefaultTrustEvaluator" && decision.host == host && !decision.isFromEarlierHandshake)
        #expect(decision.servedChain.count == 2)
        #expect(decision.verifiedChain?.last == (try Lab.certificate(pki.root)))
        #expect(server.statistics.serverNamesSeen == [host])
        // A second request reuses the connection: no new handshake, the earlier decision.
        let again = try await session.get(server.url(host: host))
        #expect(again.trustDecision?.isFromEarlierHandshake == true)
        #expect(!again.usedNewConnection, "\(server.statistics.connections)")
        #expect(server.statistics.handshakesCompleted == 1)
    }

    enum BadChain: String, CaseIterable, Sendable {
        case wrongHost, expired, untrusted
    }

    @Test("rejects a bad chain before any request byte is sent", arguments: BadChain.allCases)
    func rejectsBadChain(_ kind: BadChain) async throws {
        let pki = try Lab.pki(host: host)
        let identity: LabTLSServer.Identity
        var anchorsPKI = pki
        switch kind {
        case .wrongHost: identity = try Lab.identity(pki, host: "other.example.test")
        case .expired: identity = try Lab.identity(pki, host: host, notBefore: Lab.now - 60 * LabClock.day, notAfter: Lab.now - LabClock.day)
        case .untrusted:
            identity = .init(pki: pki)
            // Another root with another name (the same name would be a bad signature).
            anchorsPKI = try Lab.pki(host: host, keySlot: 41, algorithm: .p384)
        }
        let server = try Lab.server(identity)
        defer { server.stop() }
        let session = try Lab.session(trusting: anchorsPKI, resolving: [(host, server)])
        let error = await failure { try await session.get(server.url(host: host, path: "/secret?token=1")) }
        let decision = try #require(error?.rejection, "\(String(describing: error))")
        #expect(!decision.isTrusted && decision.evaluator == "DefaultTrustEvaluator" && decision.servedChain.count == 2)
        let expected: ValidationFailure.Kind = kind == .wrongHost ? .hostnameMismatch : kind == .expired ? .expired : .untrustedRoot
        #expect(decision.validationFailure?.kind == expected)
        #expect("\(error!)".hasPrefix("server trust rejected: rejected www.example.test:\(server.port) by DefaultTrustEvaluator: "))
        #expect("\(error!)".contains(": \(expected.rawValue): "))
        #expect(server.statistics.requestsServed == 0)
        #expect(server.statistics.handshakesCompleted == 0)
    }

    @Test("accepts a pinned self-signed certificate through a custom decision")
    func acceptsPinnedSelfSigned() async throws {
        let key = try LabKey.shared(.p256, slot: 130)
        let spec = LabPKI.leafSpec(host: host, keyAlgorithm: .p256, notBefore: Lab.now - LabClock.day, notAfter: Lab.now + LabClock.day)
        let selfSigned = try LabCertificate.issue(spec, subjectKey: key)
        let server = try Lab.server(.init(chain: [selfSigned], key: key))
        defer { server.stop() }
        let pin = SPKIPin(certificate: try Lab.certificate(selfSigned))
        let decider = Lab.decider("self-signed pin") { trust in
            guard let leaf = trust.certificates.first, pin.matches(leaf), trust.host == "www.example.test" else { return "not the pinned key" }
            return nil
        }
        var configuration = HTTPSessionConfiguration(serverTrust: decider)
        configuration.resolve = ["\(host):\(server.port):127.0.0.1"]
        let session = try HTTPSession(configuration: configuration)
        let response = try await session.get(server.url(host: host))
        #expect(response.statusCode == 200)
        #expect(response.trustDecision?.evaluator == "self-signed pin")
        // The same pin as an SPKI pin set without validation: it matches the leaf, whose key the
        // handshake proves.
        var c = HTTPSessionConfiguration(serverTrust: try Lab.decider(anchors: .empty, pins: [pin], validates: false))
        c.resolve = configuration.resolve
        let pinned = try HTTPSession(configuration: c)
        #expect(try await pinned.get(server.url(host: host)).trustDecision?.evaluator == "SPKIPinsTrustEvaluator")
        // Without the pin, the chain is untrusted.
        let strict = try HTTPSession(
            configuration: {
                var c = HTTPSessionConfiguration(serverTrust: try Lab.decider(anchors: .empty))
                c.resolve = configuration.resolve
                return c
            }())
        let error = await failure { try await strict.get(server.url(host: host)) }
        #expect(error?.rejection?.validationFailure?.kind == .untrustedRoot)
    }

    @Test("a man in the middle passes the default decision with its root installed, and fails every pin")
    func manInTheMiddle() async throws {
        let pki = try Lab.pki(host: host)
        let server = try Lab.server(.init(pki: pki), name: "origin")
        defer { server.stop() }
        let interception = try Lab.pki(host: "mitm.invalid", keySlot: 42)
        var relayConfiguration = LabMITMRelay.Configuration(mode: .httpProxy, interceptionCA: interception.rootIssuer)
        relayConfiguration.hostOverrides = [host: "127.0.0.1"]
        let interceptionRoot = try Lab.certificate(interception.root)

        // Default policy: system anchors plus the user-installed interception root.
        let relay = try LabMITMRelay.started(relayConfiguration)
        defer { relay.stop() }
        var open = HTTPSessionConfiguration(serverTrust: try Lab.decider(anchors: try TrustStore.system() + TrustStore([interceptionRoot])))
        open.proxy = ProxyConfiguration(url: relay.proxyURL)
        let intercepted = try await HTTPSession(configuration: open).get(server.url(host: host, path: "/through"))
        #expect(intercepted.statusCode == 200 && intercepted.text == "hello from origin")
        #expect(intercepted.trustDecision?.verifiedChain?.last == interceptionRoot)
        #expect(relay.statistics.forwardedApplicationData)

        // Pinning the origin's key: the minted leaf fails, and nothing reaches the origin.
        let pinnedRelay = try LabMITMRelay.started(relayConfiguration)
        defer { pinnedRelay.stop() }
        let servedBefore = server.statistics.requestsServed
        let pin = SPKIPin(certificate: try Lab.certificate(pki.leaf))
        var pinned = HTTPSessionConfiguration(
            serverTrust: try Lab.decider(
                anchors: try TrustStore.system() + TrustStore([interceptionRoot]), pins: [pin]))
        pinned.proxy = ProxyConfiguration(url: pinnedRelay.proxyURL)
        let error = await failure { try await HTTPSession(configuration: pinned).get(server.url(host: host, path: "/secret")) }
        let decision = try #require(error?.rejection, "\(String(describing: error))")
        #expect(decision.evaluator == "SPKIPinsTrustEvaluator")
        #expect(decision.servedChain.first?.subjectPublicKeyInfo != (try Lab.certificate(pki.leaf)).subjectPublicKeyInfo)
        #expect(!pinnedRelay.statistics.forwardedApplicationData)
        #expect(pinnedRelay.statistics.upstreamHandshakesCompleted == 0)
        #expect(server.statistics.requestsServed == servedBefore)
    }

    @Test("connections and TLS sessions never cross sessions")
    func connectionReuseIsolation() async throws {
        let pki = try Lab.pki(host: host)
        let server = try Lab.server(.init(pki: pki))
        defer { server.stop() }
        let acceptedHosts = Recorder<String>()
        var trusting = HTTPSessionConfiguration(
            serverTrust: Lab.decider("open") { trust in
                acceptedHosts.append(trust.host ?? "")
                return nil
            })
        trusting.resolve = ["\(host):\(server.port):127.0.0.1"]
        let first = try HTTPSession(configuration: trusting)
        let url = server.url(host: host)
        _ = try await first.get(url)
        _ = try await first.get(url)
        #expect(server.statistics.handshakesCompleted == 1, "\(server.statistics.connections)")
        #expect(acceptedHosts.all.count == 1)

        // Within the session a new connection resumes the TLS session; no certificate is
        // presented, and the connection is decided again, on the chain the session kept.
        var fresh = HTTPRequest(.get, url)
        fresh.usesFreshConnection = true
        let resumed = try await first.send(fresh)
        #expect(resumed.tlsSessionResumed && resumed.usedNewConnection)
        #expect(resumed.trustDecision?.isFromEarlierHandshake == false)
        #expect(resumed.trustDecision?.servedChain.count == 2)
        #expect(server.statistics.handshakesResumed == 1)
        #expect(acceptedHosts.all.count == 2)

        // A second session with a rejecting policy gets neither the open connection nor the
        // TLS session: it makes its own full handshake, and its own decision rejects it.
        var rejecting = trusting
        rejecting.serverTrust = Lab.decider("closed") { _ in "rejects all" }
        let second = try HTTPSession(configuration: rejecting)
        let error = await failure { try await second.get(url) }
        #expect(error?.rejection?.evaluator == "closed")
        #expect(server.statistics.requestsServed == 3)
        #expect(server.statistics.handshakesResumed == 1)
        #expect(server.statistics.connections.last?.resumed == false)

        // And the first session is still served over its own connection.
        let still = try await first.get(url)
        #expect(!still.usedNewConnection && still.statusCode == 200)
    }

    @Test("a ServerTrust.SecurityPolicy decides on the wire, with its decision record")
    func securityPolicyAdapter() async throws {
        let pki = try Lab.pki(host: host)
        let server = try Lab.server(.init(pki: pki))
        defer { server.stop() }
        let root = try Lab.certificate(pki.root)
        let leaf = try Lab.certificate(pki.leaf)
        func session(_ policy: SecurityPolicy) throws -> HTTPSession {
            var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(policy, anchors: TrustStore([root])))
            configuration.resolve = ["\(host):\(server.port):127.0.0.1"]
            return try HTTPSession(configuration: configuration)
        }
        let pinned = try session(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [leaf]))
        let response = try await pinned.get(server.url(host: host))
        #expect(response.statusCode == 200)
        #expect(response.trustDecision?.explanation.contains("decision:  trusted") == true)

        let otherKey = try Lab.certificate(try Lab.pki(host: host, keySlot: 43).leaf)
        let wrongPin = try session(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [otherKey]))
        let error = await failure { try await wrongPin.get(server.url(host: host)) }
        let decision = try #require(error?.rejection)
        #expect(decision.explanation.contains("decision:  rejected"))
        #expect(server.statistics.requestsServed == 1)
    }
}
