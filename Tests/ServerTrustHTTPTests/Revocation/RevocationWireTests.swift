import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

/// Revocation end to end, against nginx TLS servers and a CRL distribution point on 127.0.0.1
/// (``RevocationWireLab``): CRLs fetched from the certificates' distribution points and cached,
/// stapled OCSP over TLS 1.2 and TLS 1.3, soft-fail and hard-fail. Refusals happen in the
/// handshake: the server never sees the request.
@Suite(
    "revocation on the wire: fetched CRLs, the cache, stapled OCSP, soft-fail and hard-fail",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct RevocationWireTests {
    typealias Site = RevocationWireLab.Site
    static let modes: [RevocationMode] = [.softFail, .hardFail]

    /// Collects the soft-fail events of a session's monitor.
    final class UnknownStatusMonitor: EventMonitor {
        let events = Recorder<[PathCheckFinding]>()
        func request(_ request: HTTPRequest, didAcceptWithUnknownRevocationStatus findings: [PathCheckFinding], decision: TrustDecision) {
            events.append(findings)
        }
    }

    @Test(
        "a revoked leaf and a revoked intermediate are refused in soft-fail and hard-fail; the genuine chain is accepted, each certificate named by the CRL that settled it"
    )
    func revokedAndGenuine() async throws {
        let lab = try await RevocationWireLab.started()
        defer { lab.stop() }
        for mode in Self.modes {
            let provider = try RevocationWireLab.provider()
            let session = try lab.session(RevocationWireLab.revocation(mode, provider: provider))
            defer { session.invalidate() }
            let good = try await session.get(lab.url(.good, "/?\(mode)"))
            #expect(good.statusCode == 200 && good.text == RevocationWireLab.index)
            let steps = try #require(good.trustDecision).record.steps.map(\.description)
            let leafURL = lab.crl.url("/crl/issuing.crl")
            #expect(
                steps.contains { $0.hasPrefix("revocation: passed: not revoked: CRL \(leafURL) (cRLNumber 07, thisUpdate ") && $0.contains("fetched now") },
                "\(steps)")
            #expect(steps.contains { $0.contains("CRL \(lab.crl.url("/crl/root.crl")) (cRLNumber 03") && $0.contains("(certificate 1") }, "\(steps)")

            let leaf = await failure { try await session.get(lab.url(.revokedLeaf, "/?\(mode)")) }
            let leafDecision = try #require(leaf?.rejection, "\(mode): a revoked leaf was not refused: \(String(describing: leaf))")
            #expect(leafDecision.validationFailure?.kind == .revoked && leafDecision.validationFailure?.certificateIndex == 0, "\(leafDecision)")
            #expect("\(leafDecision)".contains("by the CRL \(leafURL) (cRLNumber 07"), "\(leafDecision)")

            let ca = await failure { try await session.get(lab.url(.revokedIntermediate, "/?\(mode)")) }
            let caDecision = try #require(ca?.rejection, "\(mode): a revoked intermediate was not refused: \(String(describing: ca))")
            #expect(caDecision.validationFailure?.kind == .revoked && caDecision.validationFailure?.certificateIndex == 1, "\(caDecision)")
        }
        #expect(lab.requests(.revokedLeaf).isEmpty && lab.requests(.revokedIntermediate).isEmpty, "a refused server saw a request")
        // The same servers with revocation off: all accepted, nothing fetched for them.
        let fetchedBefore = lab.crl.requests.count
        let off = try lab.session(.off)
        defer { off.invalidate() }
        for site in [Site.good, .revokedLeaf, .revokedIntermediate] {
            let response = try await off.get(lab.url(site, "/?off"))
            #expect(response.statusCode == 200 && response.trustDecision?.record.validatedPath?.findings.isEmpty == true, "\(site)")
        }
        #expect(lab.crl.requests.count == fetchedBefore)
    }

    /// The ways a distribution point can fail to establish the leaf's status.
    static let unknown: [(Site, String)] = [
        (.serverDown, "unreachable"),
        (.forged, "its signature does not verify with the key of"),
        (.stale, "is out of date"),
        (.partition, "its issuingDistributionPoint names another distribution point"),
        (.oversizedAnnounced, "exceeds the 65536-byte limit"),
        (.oversized, "exceeds the 65536-byte limit"),
        (.neverEnding, "the time budget ran out during the fetch"),
    ]

    @Test(
        "status unknown (server down, another key, past nextUpdate, another partition, oversized, never-ending): soft-fail accepts with a note and an event, hard-fail refuses, both within the budget"
    )
    func unknownStatus() async throws {
        let lab = try await RevocationWireLab.started()
        defer { lab.stop() }
        for mode in Self.modes {
            let provider = try RevocationWireLab.provider()
            let monitor = UnknownStatusMonitor()
            let session = try lab.session(RevocationWireLab.revocation(mode, provider: provider)) { $0.eventMonitors = [monitor] }
            defer { session.invalidate() }
            for (site, why) in Self.unknown {
                let started = ContinuousClock.now
                let result: Result<HTTPResponse, HTTPError>
                do { result = .success(try await session.get(lab.url(site, "/?\(mode)"))) } catch { result = .failure(error) }
                let elapsed = ContinuousClock.now - started
                // The 3 s budget bounds the fetches; the rest is the handshake on a loaded machine.
                #expect(elapsed < .seconds(8), "\(site) \(mode) took \(elapsed)")
                switch (mode, result) {
                case (.softFail, .success(let response)):
                    let noted = try #require(response.trustDecision).record.unknownRevocationStatus
                    #expect(noted.count == 1 && noted.first?.certificateIndex == 0, "\(site): \(noted)")
                    #expect(noted.first?.detail.contains(why) == true, "\(site): \(noted.first?.detail ?? "")")
                case (.hardFail, .failure(let error)):
                    let decision = try #require(error.rejection, "\(site): \(error)")
                    #expect(decision.validationFailure?.kind == .revocationStatusUnknown, "\(site): \(decision)")
                    #expect("\(decision)".contains(why), "\(site): \(decision)")
                default:
                    Issue.record("\(site) in \(mode): \(result)")
                }
            }
            if mode == .softFail {
                #expect(monitor.events.all.count == Self.unknown.count, "one event per soft-fail acceptance: \(monitor.events.all)")
            } else {
                #expect(monitor.events.all.isEmpty)
                for (site, _) in Self.unknown { #expect(lab.requests(site).filter { $0.contains("hardFail") }.isEmpty, "\(site) saw a request") }
            }
        }
        // The forged CRL was forgotten each time, so it was fetched by each decision that
        // needed it (one per mode), never served from the cache.
        #expect(lab.fetches("/crl/forged.crl").count == 2, "\(lab.fetches("/crl/forged.crl"))")
    }

    @Test("a warm cache makes no fetch; after the cache's day a 304 revalidates it; after nextUpdate the new CRL is fetched")
    func cache() async throws {
        let lab = try await RevocationWireLab.started()
        defer { lab.stop() }
        let provider = try RevocationWireLab.provider()
        let now = Int64(Date().timeIntervalSince1970)
        func get(at time: Int64, _ tag: String) async throws -> HTTPResponse {
            let session = try lab.session(RevocationWireLab.revocation(.hardFail, provider: provider), clock: .fixed(time))
            defer { session.invalidate() }
            return try await session.get(lab.url(.good, "/?\(tag)"))
        }
        func leafStep(_ response: HTTPResponse) -> String {
            response.trustDecision?.record.steps.map(\.description).first { $0.contains("(certificate 0") } ?? ""
        }
        let cold = try await get(at: now, "cold")
        #expect(leafStep(cold).contains("fetched now"), "\(leafStep(cold))")
        let warm = try await get(at: now + 60, "warm")
        #expect(leafStep(warm).contains("from the cache)"), "\(leafStep(warm))")
        #expect(lab.fetches("/crl/issuing.crl").count == 1 && lab.fetches("/crl/root.crl").count == 1, "\(lab.crl.requests)")

        // A day after the last confirmation the entry is asked about again: 304.
        let revalidated = try await get(at: now + 86_400 + 600, "day")
        #expect(leafStep(revalidated).contains("from the cache, revalidated (304)"), "\(leafStep(revalidated))")
        let issuing = lab.fetches("/crl/issuing.crl")
        #expect(issuing.count == 2 && issuing.last?.contains("\" 304 ") == true, "\(issuing)")

        // After nextUpdate (three days) the CAs have published new CRLs: fetched and used.
        let next = try LabCRL.issue(
            LabCRLSpec(thisUpdate: now + 3 * 86_400 - 600, nextUpdate: now + 6 * 86_400, number: 8), signer: lab.issuingCA)
        try lab.crl.publish(next, as: "issuing.crl")
        try lab.crl.publish(
            try LabCRL.issue(LabCRLSpec(thisUpdate: now + 3 * 86_400 - 600, nextUpdate: now + 6 * 86_400, number: 4), signer: lab.rootIssuer),
            as: "root.crl")
        let renewed = try await get(at: now + 3 * 86_400 + 600, "renewed")
        #expect(leafStep(renewed).contains("(cRLNumber 08") && leafStep(renewed).contains("fetched now"), "\(leafStep(renewed))")
        #expect(lab.fetches("/crl/issuing.crl").last?.contains(" 200 ") == true, "\(lab.fetches("/crl/issuing.crl"))")
    }

    @Test("100 concurrent requests that need the same cold CRL cause one fetch")
    func oneFetch() async throws {
        let lab = try await RevocationWireLab.started()
        defer { lab.stop() }
        let provider = try RevocationWireLab.provider()
        // Four sessions of eight transfer threads: up to 32 handshakes decide at once, each a new
        // connection, while the one fetch trickles in at 256 bytes a second.
        var sessions: [HTTPSession] = []
        for _ in 0..<4 {
            sessions.append(
                try lab.session(RevocationPolicy(mode: .hardFail, depth: .leaf, fetching: .provider(provider), timeBudget: .seconds(20))) {
                    $0.maximumTransferThreads = 8
                    $0.maximumConnectionsPerHost = 32
                    $0.timeout = 60
                })
        }
        defer { for session in sessions { session.invalidate() } }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<100 {
                let session = sessions[index % sessions.count]
                group.addTask {
                    var request = HTTPRequest(.get, lab.url(.slow, "/?n=\(index)"))
                    request.usesFreshConnection = true
                    return try await session.send(request).statusCode
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.count == 100 && statuses.allSatisfy { $0 == 200 })
        #expect(lab.fetches("/slow/issuing.crl").count == 1, "\(lab.fetches("/slow/issuing.crl"))")
    }

    @Test(
        "stapled OCSP over TLS 1.2 and TLS 1.3: revoked refused in both modes, good accepted with no CRL fetch for the leaf, an undelegated signer ignored (status unknown)"
    )
    func stapled() async throws {
        let lab = try await RevocationWireLab.started()
        defer { lab.stop() }
        for (good, revoked, undelegated, version) in [
            (Site.stapleGood12, Site.stapleRevoked12, Site.stapleUndelegated12, "TLSv1.2"), (.stapleGood13, .stapleRevoked13, .stapleUndelegated13, "TLSv1.3"),
        ] {
            for mode in Self.modes {
                let session = try lab.session(RevocationWireLab.revocation(mode, depth: .leaf, provider: try RevocationWireLab.provider()))
                defer { session.invalidate() }
                let accepted = try await session.get(lab.url(good, "/?\(mode)"))
                #expect(accepted.statusCode == 200 && accepted.tlsVersion == version)
                let decision = try #require(accepted.trustDecision)
                #expect(
                    decision.record.steps.contains {
                        $0.description.hasPrefix("revocation: passed: not revoked: the stapled OCSP response says good (signed by the issuer")
                    }, "\(decision.explanation)")

                let refused = await failure { try await session.get(lab.url(revoked, "/?\(mode)")) }
                let refusal = try #require(refused?.rejection, "\(version) \(mode): a revoked staple was not refused: \(String(describing: refused))")
                #expect(refusal.validationFailure?.kind == .revoked, "\(refusal)")
                #expect("\(refusal)".contains("by the stapled OCSP response") && "\(refusal)".contains("keyCompromise"), "\(refusal)")

                let ignored: Result<HTTPResponse, HTTPError>
                do { ignored = .success(try await session.get(lab.url(undelegated, "/?\(mode)"))) } catch { ignored = .failure(error) }
                switch (mode, ignored) {
                case (.softFail, .success(let response)):
                    let noted = try #require(response.trustDecision).record.unknownRevocationStatus
                    #expect(noted.first?.detail.contains("the stapled OCSP response is ignored: its signer is not authorized") == true, "\(noted)")
                case (.hardFail, .failure(let error)):
                    let decision = try #require(error.rejection)
                    #expect(decision.validationFailure?.kind == .revocationStatusUnknown, "\(decision)")
                    #expect("\(decision)".contains("lacks id-kp-OCSPSigning"), "\(decision)")
                default:
                    Issue.record("\(version) \(mode), undelegated staple: \(ignored)")
                }
            }
            #expect(lab.requests(revoked).isEmpty)
        }
        // The good staple settled the leaf: its own CRL was fetched only for the undelegated
        // staples (4 decisions: two versions, two modes), never for a good one.
        #expect(lab.fetches(RevocationWireLab.Point.missing.rawValue).count == 4, "\(lab.fetches(RevocationWireLab.Point.missing.rawValue))")
    }

    @Test("a client certificate is asked for only after the server was accepted: a revoked staple ends the handshake before, over TLS 1.2 and 1.3")
    func clientCertificateAfterTheDecision() async throws {
        let lab = try await RevocationWireLab.started()
        defer { lab.stop() }
        let identity = lab.clientIdentity
        for (good, revoked) in [(Site.stapleGoodClientAuth12, Site.stapleRevokedClientAuth12), (.stapleGoodClientAuth13, .stapleRevokedClientAuth13)] {
            let asked = Recorder<String>()
            let session = try lab.session(RevocationWireLab.revocation(.hardFail, depth: .leaf, provider: try RevocationWireLab.provider())) {
                $0.sessionChallengeHandler = { challenge in
                    guard challenge.protectionSpace.authenticationMethod == .clientCertificate else { return .performDefaultHandling }
                    asked.append("\(challenge.protectionSpace.port)")
                    return .useCredential(.identity(identity, persistence: .none))
                }
            }
            defer { session.invalidate() }
            let refused = await failure { try await session.get(lab.url(revoked)) }
            #expect(refused?.rejection?.validationFailure?.kind == .revoked, "\(String(describing: refused))")
            #expect(asked.all.isEmpty, "\(revoked): the client certificate was asked for before the refusal")
            let accepted = try await session.get(lab.url(good))
            #expect(accepted.statusCode == 200)
            #expect(asked.all == ["\(lab.port(good))"], "\(good): asked once, after the server was accepted")
        }
    }

    @Test(
        "a resumed TLS session is decided again, before the request, on its kept chain with the staple its first handshake brought",
        arguments: [Site.stapleGood12, .stapleGood13])
    func resumed(site: Site) async throws {
        let lab = try await RevocationWireLab.started()
        defer { lab.stop() }
        // Hard-fail on the leaf, whose only source is the staple (its CRL URL is never
        // published): a resumed connection without the staple would be "status unknown".
        let session = try lab.session(RevocationWireLab.revocation(.hardFail, depth: .leaf, provider: try RevocationWireLab.provider()))
        defer { session.invalidate() }
        var request = HTTPRequest(.get, lab.url(site, "/?first"))
        request.usesFreshConnection = true
        let first = try await session.send(request)
        #expect(first.statusCode == 200 && first.tlsSessionResumed == false)
        request = HTTPRequest(.get, lab.url(site, "/?resumed"))
        request.usesFreshConnection = true
        let resumed = try await session.send(request)
        #expect(resumed.statusCode == 200 && resumed.tlsSessionResumed == true, "the second connection resumed")
        let steps = try #require(resumed.trustDecision).record.steps.map(\.description)
        #expect(steps.contains { $0.hasPrefix("revocation: passed: not revoked: the stapled OCSP response says good") }, "\(steps)")
        #expect(lab.fetches(RevocationWireLab.Point.missing.rawValue).isEmpty)
    }

    @Test("servertrust get and evaluate check revocation with --revocation and with a policy file's revocation object; a staple refuses over the CLI too")
    func commandLine() async throws {
        let lab = try await RevocationWireLab.started()
        defer { lab.stop() }
        let root = try LabFiles.write(lab.rootIssuer.certificate.pem, to: lab.directory + "/root.pem")
        func get(_ site: Site, _ options: [String]) async throws -> ServertrustCLI.Result {
            try await ServertrustCLI.run(["get", lab.url(site, "/?cli"), "--cacert", root] + lab.resolve.flatMap { ["--resolve", $0] } + options)
        }
        let good = try await get(.good, ["--revocation", "hard-fail"])
        #expect(good.status == 0 && good.stdout == RevocationWireLab.index, "\(good)")
        let revoked = try await get(.revokedLeaf, ["--revocation", "soft-fail", "--revocation-depth", "leaf"])
        #expect(
            revoked.status == 1 && revoked.stderr.contains("revoked") && revoked.stderr.contains("by the CRL \(lab.crl.url("/crl/issuing.crl"))"), "\(revoked)")
        let stapled = try await get(.stapleRevoked13, ["--revocation", "soft-fail"])
        #expect(stapled.status == 1 && stapled.stderr.contains("by the stapled OCSP response"), "\(stapled)")
        let down = try await get(.serverDown, ["--revocation", "soft-fail"])
        #expect(down.status == 0, "soft-fail: \(down)")
        let downHard = try await get(.serverDown, ["--revocation", "hard-fail", "--crl-cache", lab.directory + "/cli-cache"])
        #expect(downHard.status == 1 && downHard.stderr.contains("revocationStatusUnknown"), "\(downHard)")
        let cached = try await get(.good, ["--revocation", "hard-fail", "--crl-cache", lab.directory + "/cli-cache"])
        #expect(cached.status == 0, "\(cached)")
        let files = try FileManager.default.contentsOfDirectory(atPath: lab.directory + "/cli-cache").filter { $0.hasSuffix(".crl") }
        #expect(files.count == 2, "the leaf's and the CA's CRLs were kept on disk: \(files)")

        // A policy file's revocation object, at the top level.
        let policy = lab.directory + "/policy.json"
        try Data(
            #"{"version": 1, "anchors": ["root.pem"], "anchorsOnly": true, "revocation": {"mode": "hard-fail"}, "hosts": [{"host": "\#(RevocationWireLab.host)"}]}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: policy))
        let filed = try await ServertrustCLI.run(
            ["get", lab.url(.revokedIntermediate, "/?policy"), "--policy", policy] + lab.resolve.flatMap { ["--resolve", $0] })
        #expect(filed.status == 1 && filed.stderr.contains("revoked"), "\(filed)")

        // evaluate fetches the chain's CRLs as a connection would; --offline does not.
        let chain = lab.directory + "/revoked-leaf.pem"
        let evaluated = try await ServertrustCLI.run(["evaluate", chain, "--host", RevocationWireLab.host, "--cacert", root, "--revocation", "hard-fail"])
        #expect(evaluated.status == 1 && evaluated.stdout.contains("revoked"), "\(evaluated)")
        let offline = try await ServertrustCLI.run(
            ["evaluate", chain, "--host", RevocationWireLab.host, "--cacert", root, "--revocation", "hard-fail", "--offline"])
        #expect(offline.status == 1 && offline.stdout.contains("revocationStatusUnknown") && offline.stdout.contains("CRLs are not fetched"), "\(offline)")
    }
}
