import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

/// The signature memo makes a resumed connection's re-made decision cheap, and changes nothing
/// in it: with every signature of the kept chain memoized, a resumed connection after a pin
/// change or after the leaf expired is refused, as it is with no memo (ConnectionTrustTests).
@Suite("a resumed connection is decided anew with the signature memo warm")
struct ResumptionSignatureMemoTests {
    static let host = "www.example.test"

    /// Whether the process-wide memo holds both signatures of `pki`'s served chain (leaf by the
    /// intermediate, intermediate by the root): the memo is warm for this server.
    static func memoHoldsChain(_ pki: LabPKI) throws -> Bool {
        let leaf = try Lab.certificate(pki.leaf)
        let intermediate = try Lab.certificate(pki.intermediate)
        let root = try Lab.certificate(pki.root)
        func holds(_ certificate: Certificate, by issuer: Certificate) throws -> Bool {
            SignatureMemo.shared.holds(
                signature: certificate.signature, over: certificate.tbsBytes, algorithm: certificate.signatureAlgorithm,
                key: try VerificationKey(issuer.subjectPublicKeyInfo))
        }
        return try holds(leaf, by: intermediate) && holds(intermediate, by: root)
    }

    /// Waits for the server's thread to record `count` resumed handshakes (it records them after
    /// the client has moved on).
    static func resumedHandshakes(_ server: LabTLSServer, reach count: Int) async throws -> Bool {
        let deadline = Date().addingTimeInterval(3)
        while server.statistics.handshakesResumed < count && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        return server.statistics.handshakesResumed >= count
    }

    @Test("after a pin change, a resumed connection over a memoized chain is refused by the new pins")
    func pinChange() async throws {
        let pki = try Lab.pki(host: Self.host, keySlot: 50)
        let server = try Lab.server(.init(pki: pki), name: "memo-pin-change")
        defer { server.stop() }
        let anchors = try Lab.anchors(pki)
        let genuinePin = SPKIPin(certificate: try Lab.certificate(pki.leaf))
        let otherPin = SPKIPin(certificate: try Lab.certificate(try Lab.pki(host: Self.host, keySlot: 48).leaf))
        var configuration = HTTPSessionConfiguration(serverTrust: try Lab.decider(anchors: anchors, pins: [genuinePin]))
        configuration.resolve = ["\(Self.host):\(server.port):127.0.0.1"]
        configuration.tlsSessionResumption = true
        let session = try HTTPSession(configuration: configuration)
        defer { session.invalidate() }
        var fresh = HTTPRequest(.get, server.url(host: Self.host))
        fresh.usesFreshConnection = true

        // A full handshake, then a resumed one decided anew: the chain's signatures are memoized.
        #expect(try await session.send(fresh).statusCode == 200)
        let resumed = try await session.send(fresh)
        #expect(resumed.tlsSessionResumed && resumed.trustDecision?.isFromEarlierHandshake == false)
        #expect(try Self.memoHoldsChain(pki), "the memo is warm for this chain")
        let served = server.statistics.requestsServed
        let resumedBefore = server.statistics.handshakesResumed

        // The pins change: the next connection resumes the same TLS session over the same,
        // memoized chain, and the new pins refuse it before any request is sent.
        session.replaceServerTrust(try Lab.decider(anchors: anchors, pins: [otherPin]))
        let refused = await failure { try await session.send(fresh) }
        #expect(refused?.rejection?.evaluator == "SPKIPinsTrustEvaluator", "\(String(describing: refused))")
        #expect(try await Self.resumedHandshakes(server, reach: resumedBefore + 1), "the refused connection resumed the session")
        #expect(server.statistics.requestsServed == served, "nothing was sent on it")
        #expect(try Self.memoHoldsChain(pki), "the memo stayed warm throughout")
    }

    @Test("after the leaf expired, a resumed connection over a memoized chain is refused as expired")
    func expiry() async throws {
        let pki = try Lab.pki(host: Self.host, keySlot: 51)
        let notAfter = Lab.now + 3600
        let identity = try Lab.identity(pki, host: Self.host, notBefore: Lab.now - LabClock.day, notAfter: notAfter)
        let server = try Lab.server(identity, name: "memo-expiry")
        defer { server.stop() }
        let instant = Mutex<Int64>(notAfter - 60)
        let clock = TrustClock { instant.withLock { $0 } }
        var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(DefaultTrustEvaluator(), anchors: try Lab.anchors(pki), clock: clock))
        configuration.resolve = ["\(Self.host):\(server.port):127.0.0.1"]
        configuration.tlsSessionResumption = true
        let session = try HTTPSession(configuration: configuration)
        defer { session.invalidate() }
        var fresh = HTTPRequest(.get, server.url(host: Self.host))
        fresh.usesFreshConnection = true

        #expect(try await session.send(fresh).statusCode == 200)
        #expect(try await session.send(fresh).tlsSessionResumed)
        let leaf = try Certificate(derEncoded: identity.chain[0].der)
        let intermediate = try Lab.certificate(pki.intermediate)
        #expect(
            SignatureMemo.shared.holds(
                signature: leaf.signature, over: leaf.tbsBytes, algorithm: leaf.signatureAlgorithm,
                key: try VerificationKey(intermediate.subjectPublicKeyInfo)),
            "the memo is warm for this leaf")
        let served = server.statistics.requestsServed
        let resumedBefore = server.statistics.handshakesResumed

        instant.withLock { $0 = notAfter + 60 }
        let error = await failure { try await session.send(fresh) }
        let rejection = try #require(error?.rejection, "\(String(describing: error))")
        #expect(rejection.validationFailure?.kind == .expired)
        #expect(try await Self.resumedHandshakes(server, reach: resumedBefore + 1), "the refused connection resumed the session")
        #expect(server.statistics.requestsServed == served)
    }
}
