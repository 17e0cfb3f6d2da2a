import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

/// The CRL provider a decision's revocation check calls: a certificate's distribution points
/// fetched from nginx and cached. A warm cache makes no request (nginx's access log proves it),
/// an expired entry is revalidated (a 304 counts), 100 concurrent lookups of a cold URL make one
/// request, a restart finds the folder's entries, and what is not a CRL for the certificate is
/// reported and never cached.
@Suite(
    "CRL provider: distribution points, fetched and cached",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct FetchingCRLProviderTests {
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }
    static func deadline(_ seconds: Double = 20) -> ContinuousClock.Instant { .now + .milliseconds(Int64(seconds * 1000)) }

    /// nginx, a CA, and leaves whose distribution points name the server.
    struct Setup: Sendable {
        let server: CRLServer
        let pki: LabPKI

        init() throws {
            server = try CRLServer.start()
            pki = try LabPKI.webChain(host: "provider.example", keySlot: 140)
        }

        /// A leaf whose single distribution point names `urls`.
        func leaf(_ urls: [String]) throws -> Certificate {
            let leaf = try pki.issueLeaf(
                host: "provider.example", extraExtensions: [.distributionPoints([LabDistributionPoint(name: .fullName(urls.map { .uri($0) }))])])
            return try Certificate(derEncoded: leaf.der)
        }

        /// Publishes the intermediate's CRL `number` as `files/crl/NAME`, valid for `validity`.
        @discardableResult
        func publish(_ name: String = "issuing.crl", number: Int = 1, validity: Int64 = 3600, signer: LabIssuer? = nil, age: Int = 0) throws
            -> CertificateRevocationList
        {
            let spec = LabCRLSpec(thisUpdate: FetchingCRLProviderTests.now - 60, nextUpdate: FetchingCRLProviderTests.now + validity, number: number)
            let der = try LabCRL.issue(spec, signer: signer ?? pki.intermediateIssuer)
            try server.publish(der, as: name, age: age)
            return try CertificateRevocationList(derEncoded: der)
        }

        func stop() { server.stop() }
    }

    static func started() async throws -> Setup { try await offPool { try Setup() } }

    static func lookup(_ provider: FetchingCRLProvider, _ certificate: Certificate, at time: Int64 = now, seconds: Double = 20) async throws -> CRLLookup {
        try await offPool { provider.crls(for: certificate, at: time, until: deadline(seconds)) }
    }

    @Test("cold: fetched with its provenance; warm: from the cache with no request; LDAP noted")
    func warmCacheMakesNoRequest() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        let crl = try setup.publish(number: 7)
        let url = setup.server.url("/crl/issuing.crl")
        let leaf = try setup.leaf(["ldap://ldap.example/cn=Issuing%20CA?certificateRevocationList", url])
        let provider = FetchingCRLProvider(cache: try CRLCache())
        let cold = try await Self.lookup(provider, leaf)
        #expect(cold.crls.map(\.crl) == [crl] && cold.failures.isEmpty)
        let fetched = try #require(cold.crls.first)
        #expect(fetched.origin == .network && fetched.url == url && fetched.number?.description == "07")
        #expect(fetched.thisUpdate == crl.thisUpdate && fetched.age(at: Self.now) >= 60)
        #expect("\(fetched)".contains("cRLNumber 07") && "\(fetched)".contains("fetched"))
        #expect(cold.ignored == [.ldap("ldap://ldap.example/cn=Issuing%20CA?certificateRevocationList")])
        for _ in 0..<3 {
            let warm = try await Self.lookup(provider, leaf)
            #expect(warm.crls.map(\.origin) == [.cache])
        }
        #expect(await eventually { setup.server.requests(for: "/crl/issuing.crl").count == 1 })
        try await Task.sleep(for: .milliseconds(200))
        #expect(setup.server.requests(for: "/crl/issuing.crl").count == 1, "\(setup.server.requests)")
    }

    @Test("after nextUpdate the entry is revalidated: a 304 counts as fresh again; a new CRL replaces it")
    func revalidation() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        try setup.publish(number: 1, validity: 3600, age: 600)
        let leaf = try setup.leaf([setup.server.url("/crl/issuing.crl")])
        let provider = FetchingCRLProvider(cache: try CRLCache())
        #expect(try await Self.lookup(provider, leaf).crls.map(\.origin) == [.network])
        let later = Self.now + 3600 + 301
        let revalidated = try await Self.lookup(provider, leaf, at: later)
        #expect(revalidated.crls.map(\.origin) == [.revalidated])
        #expect(revalidated.crls.first?.validatedAt == later)
        #expect(try await Self.lookup(provider, leaf, at: later + 10).crls.map(\.origin) == [.cache], "the 304 counts as fresh")
        #expect(await eventually { setup.server.requests(for: "/crl/issuing.crl").map { $0.contains("\" 304 ") } == [false, true] })
        // The CA publishes CRL 2: the next revalidation gets it.
        try setup.publish(number: 2, validity: 7200)
        let renewed = try await Self.lookup(provider, leaf, at: later + 600)
        #expect(renewed.crls.map(\.origin) == [.network] && renewed.crls.first?.number?.description == "02")
    }

    @Test("100 concurrent lookups of a cold URL make one request, and all get its CRL")
    func concurrentLookupsShareOneFetch() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        let crl = try setup.publish(number: 3)
        // /slow/ sends 256 bytes a second: the fetch lasts long enough for every caller to join it.
        let leaf = try setup.leaf([setup.server.url("/slow/issuing.crl")])
        let provider = FetchingCRLProvider(cache: try CRLCache())
        let results = Mutex<[CRLLookup]>([])
        let time = Self.now
        try await offPool {
            let group = DispatchGroup()
            let start = DispatchSemaphore(value: 0)
            for _ in 0..<100 {
                group.enter()
                Thread.detachNewThread {
                    start.wait()
                    let lookup = provider.crls(for: leaf, at: time, until: Self.deadline(30))
                    results.withLock { $0.append(lookup) }
                    group.leave()
                }
            }
            for _ in 0..<100 { start.signal() }
            group.wait()
        }
        let lookups = results.withLock { $0 }
        #expect(lookups.count == 100)
        #expect(lookups.allSatisfy { $0.crls.map(\.crl) == [crl] }, "\(lookups.flatMap(\.failures))")
        #expect(await eventually { setup.server.requests(for: "/slow/issuing.crl").count == 1 })
        try await Task.sleep(for: .milliseconds(200))
        #expect(setup.server.requests(for: "/slow/issuing.crl").count == 1, "\(setup.server.requests)")
    }

    @Test("a restarted process finds the folder's entries and makes no request")
    func diskCacheSurvivesRestart() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        let folder = setup.server.directory + "/cache"
        try setup.publish()
        let leaf = try setup.leaf([setup.server.url("/crl/issuing.crl")])
        #expect(try await Self.lookup(FetchingCRLProvider(cache: try CRLCache(directory: folder)), leaf).crls.map(\.origin) == [.network])
        let restarted = FetchingCRLProvider(cache: try CRLCache(directory: folder))
        #expect(try await Self.lookup(restarted, leaf).crls.map(\.origin) == [.cache])
        try await Task.sleep(for: .milliseconds(200))
        #expect(setup.server.requests(for: "/crl/issuing.crl").count == 1)
    }

    @Test("the server down: unreachable, unless a cached CRL's own window is still current")
    func serverDown() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        try setup.publish(validity: 7 * 86_400)
        let leaf = try setup.leaf([setup.server.url("/crl/issuing.crl")])
        let provider = FetchingCRLProvider(cache: try CRLCache(limits: CRLCache.Limits(maximumAge: 60)))
        #expect(try await Self.lookup(provider, leaf).crls.count == 1)
        setup.server.nginx.stop()
        // Past the cache's maximum age, within the CRL's nextUpdate: the revalidation fails, the CRL serves.
        let stale = try await Self.lookup(provider, leaf, at: Self.now + 120)
        #expect(stale.crls.map(\.origin) == [.cache])
        // Past the CRL's window: nothing.
        let gone = try await Self.lookup(provider, leaf, at: Self.now + 8 * 86_400)
        #expect(gone.crls.isEmpty)
        guard case .unreachable? = gone.failures.first?.reason else {
            Issue.record("\(gone.failures)")
            return
        }
        let closed = try LabClosedPort()
        defer { closed.close() }
        let cold = try await Self.lookup(FetchingCRLProvider(cache: try CRLCache()), try setup.leaf(["http://127.0.0.1:\(closed.port)/crl/issuing.crl"]))
        #expect(cold.crls.isEmpty && cold.failures.count == 1)
    }

    @Test("a distribution point's second URL serves when the first fails; each failure is reported")
    func fallbackWithinAPoint() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        try setup.publish()
        let leaf = try setup.leaf([setup.server.url("/error"), setup.server.httpsURL("/crl/issuing.crl")])
        let lookup = try await Self.lookup(FetchingCRLProvider(cache: try CRLCache()), leaf)
        #expect(lookup.crls.map(\.url) == [setup.server.httpsURL("/crl/issuing.crl")])
        #expect(lookup.failures == [CRLFetchFailure(url: setup.server.url("/error"), reason: .httpStatus(500))])
    }

    @Test("what is not a CRL for the certificate is reported and never cached")
    func notCached() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        try setup.server.publish(Array("<html>maintenance</html>".utf8), as: "html.crl")
        let otherCA = try LabPKI.webChain(host: "other.example", algorithm: .p384, keySlot: 142)
        try setup.publish("other.crl", signer: otherCA.intermediateIssuer)
        var deltaSpec = LabCRLSpec(thisUpdate: Self.now - 60, nextUpdate: Self.now + 3600, number: 5)
        deltaSpec.deltaBase = 4
        try setup.server.publish(try LabCRL.issue(deltaSpec, signer: setup.pki.intermediateIssuer), as: "delta.crl")
        let provider = FetchingCRLProvider(cache: try CRLCache())
        for (name, expected) in [("html.crl", "not a CRL"), ("other.crl", "not by"), ("delta.crl", "delta")] {
            let leaf = try setup.leaf([setup.server.url("/crl/\(name)")])
            for _ in 0..<2 {
                let lookup = try await Self.lookup(provider, leaf)
                #expect(lookup.crls.isEmpty, "\(name)")
                #expect(lookup.failures.first.map { "\($0)".contains(expected) } == true, "\(name): \(lookup.failures)")
            }
            #expect(await eventually { setup.server.requests(for: "/crl/\(name)").count == 2 }, "\(name) was cached")
        }
    }

    @Test("discard forgets a CRL the check refused: the next lookup fetches again")
    func discard() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        // A CRL with the issuer's name, signed by another key: well-formed, so cached, until discarded.
        let forger = LabIssuer(certificate: setup.pki.intermediate, key: try LabKey.shared(.p256, slot: 3 * 140 + 3))
        try setup.publish(signer: forger)
        let leaf = try setup.leaf([setup.server.url("/crl/issuing.crl")])
        let provider = FetchingCRLProvider(cache: try CRLCache())
        let first = try #require(try await Self.lookup(provider, leaf).crls.first)
        #expect(try await Self.lookup(provider, leaf).crls.map(\.origin) == [.cache])
        provider.discard(first)
        #expect(try await Self.lookup(provider, leaf).crls.map(\.origin) == [.network])
        #expect(await eventually { setup.server.requests(for: "/crl/issuing.crl").count == 2 })
    }

    /// RFC 5280 §5.2.3: cRLNumber increases with each CRL of a scope. An on-path attacker
    /// answering the plain-HTTP revalidation with the CA's CRL from before a revocation (still
    /// in its window) must not roll the provider back from the verified CRL that lists the
    /// leaf, not even after flushing the cache with a forged CRL; and a forged CRL with a high
    /// number, never verified, must not hold back the CA's next one.
    @Test("an older CRL fetched after a newer verified one (a replay from before a revocation) is not used while the newer is current")
    func olderCRLDoesNotRollBack() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        let url = setup.server.url("/crl/issuing.crl")
        let leaf = try setup.leaf([url])
        let now = Self.now
        func issue(_ number: Int, revoking: Bool, thisUpdate: Int64, signer: LabIssuer? = nil) throws -> [UInt8] {
            let entries = revoking ? [LabRevokedEntry(serial: Array(leaf.serialNumber.bytes), revocationDate: now - 600, reason: 1)] : []
            let spec = LabCRLSpec(entries: entries, thisUpdate: thisUpdate, nextUpdate: now + 7 * 86_400, number: number)
            return try LabCRL.issue(spec, signer: signer ?? setup.pki.intermediateIssuer)
        }
        let before = try issue(1, revoking: false, thisUpdate: now - 7200)
        try setup.server.publish(try issue(2, revoking: true, thisUpdate: now - 600), as: "issuing.crl")
        let provider = FetchingCRLProvider(cache: try CRLCache(limits: CRLCache.Limits(maximumAge: 60)))
        let first = try #require(try await Self.lookup(provider, leaf).crls.first)
        #expect(first.origin == .network && first.crl.isRevoked(leaf.serialNumber))
        provider.confirm(first)  // as the revocation check does once its signer verified

        // Past the cache's maximum age the entry is fetched again; the attacker serves CRL 1.
        try setup.server.publish(before, as: "issuing.crl", age: 7200)
        let replayed = try await Self.lookup(provider, leaf, at: now + 120)
        #expect(replayed.crls.map { $0.number?.description } == ["02"], "\(replayed.crls)")
        #expect(replayed.crls.first?.crl.isRevoked(leaf.serialNumber) == true)

        // A forged CRL 99 (the CA's name, another key) replaces the cache entry and is
        // discarded, as the check discards it; CRL 1 served next still does not serve.
        let forger = LabIssuer(certificate: setup.pki.intermediate, key: try LabKey.shared(.p256, slot: 3 * 140 + 3))
        try setup.server.publish(try issue(99, revoking: false, thisUpdate: now - 60, signer: forger), as: "issuing.crl", age: 60)
        let forged = try #require(try await Self.lookup(provider, leaf, at: now + 240).crls.first)
        #expect(forged.number?.description == "63")
        provider.discard(forged)
        try setup.server.publish(before, as: "issuing.crl", age: 7200)
        let afterFlush = try await Self.lookup(provider, leaf, at: now + 241)
        #expect(afterFlush.crls.map { $0.number?.description } == ["02"], "\(afterFlush.crls)")

        // The forged CRL 99 was never verified: the CA's CRL 3 still replaces CRL 2.
        try setup.server.publish(try issue(3, revoking: true, thisUpdate: now - 30), as: "issuing.crl", age: 30)
        let renewed = try await Self.lookup(provider, leaf, at: now + 242)
        #expect(renewed.crls.map(\.origin) == [.network] && renewed.crls.first?.number?.description == "03")
    }

    /// The server down already falls back to a current cached CRL; an on-path attacker who
    /// answers with something that is not a CRL, or lets the budget run out, must not do better
    /// (soft-fail would accept the leaf the verified CRL revokes).
    @Test("what is not a CRL, or no time left, falls back to the newest verified CRL while it is current")
    func failureFallsBackToVerifiedCRL() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        let leaf = try setup.leaf([setup.server.url("/crl/issuing.crl")])
        let now = Self.now
        let revoked = LabRevokedEntry(serial: Array(leaf.serialNumber.bytes), revocationDate: now - 600, reason: 1)
        let spec = LabCRLSpec(entries: [revoked], thisUpdate: now - 600, nextUpdate: now + 7 * 86_400, number: 2)
        try setup.server.publish(try LabCRL.issue(spec, signer: setup.pki.intermediateIssuer), as: "issuing.crl")
        let provider = FetchingCRLProvider(cache: try CRLCache(limits: CRLCache.Limits(maximumAge: 60)))
        let first = try #require(try await Self.lookup(provider, leaf).crls.first)
        provider.confirm(first)
        // What the check reads after a good staple: held, current, no request.
        #expect(provider.verifiedCRLs(for: leaf, at: now + 60).map { $0.number?.description } == ["02"])
        #expect(provider.verifiedCRLs(for: leaf, at: now + 8 * 86_400).isEmpty)

        try setup.server.publish(Array("<html>maintenance</html>".utf8), as: "issuing.crl", age: 3600)
        let junk = try await Self.lookup(provider, leaf, at: now + 120)
        #expect(junk.crls.map { $0.number?.description } == ["02"] && junk.crls.first?.origin == .cache, "\(junk.failures)")
        let noTime = try await Self.lookup(provider, leaf, at: now + 180, seconds: -1)
        #expect(noTime.crls.map { $0.number?.description } == ["02"], "\(noTime.failures)")
        // Past the verified CRL's window, the failure stands.
        let later = try await Self.lookup(provider, leaf, at: now + 8 * 86_400)
        #expect(later.crls.isEmpty && later.failures.count == 1)
    }

    @Test("a spent budget tries nothing")
    func noTimeLeft() async throws {
        let setup = try await Self.started()
        defer { setup.stop() }
        try setup.publish()
        let leaf = try setup.leaf([setup.server.url("/crl/issuing.crl")])
        let lookup = try await Self.lookup(FetchingCRLProvider(cache: try CRLCache()), leaf, seconds: -1)
        #expect(lookup.failures.map(\.reason) == [.noTimeLeft])
        try await Task.sleep(for: .milliseconds(200))
        #expect(setup.server.requests.isEmpty)
    }
}
