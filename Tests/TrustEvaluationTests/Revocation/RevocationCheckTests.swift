import CertificateParsing
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

/// The revocation check on the whole-path hook: which source settles each certificate (the
/// staple for the leaf, the caller's CRLs, CRLs from the distribution points), what soft-fail
/// and hard-fail do with a status no source establishes, what the depth covers, the short-lived
/// exemption, and what the record names. Fetched CRLs go through the same RFC 5280 §6.3 rules
/// as the caller's (RevocationTests has them row by row); here a forged, stale or out-of-scope
/// fetched CRL gives "status unknown", and the provider is told to forget a forged one.
@Suite("Revocation check: sources, modes, depth, exemption")
struct RevocationCheckTests {
    static let now = TrustPKI.now
    static let leafURL = "http://crl.test/issuing.crl"
    static let rootURL = "http://crl.test/root.crl"

    /// root → issuing CA (distribution point: the root's CRL) → leaf (the issuing CA's CRL).
    struct Setup {
        let root: TrustCA
        let intermediate: TrustCA
        let leaf: LabCertificate

        init(leafDistributionPoints: [String]? = [RevocationCheckTests.leafURL], leafOCSP: [String] = [], leafValidity: (Int64, Int64)? = nil) throws {
            root = try TrustPKI.root("Revocation Check Root", slot: TrustSlot.root)
            intermediate = try root.issueCA(
                TrustPKI.caSpec(
                    "Revocation Check Issuing CA", extensions: TrustPKI.caExtensions(pathLength: 0) + [.crlDistributionPoints([RevocationCheckTests.rootURL])]),
                key: TrustPKI.key(TrustSlot.intermediate))
            var extensions = TrustPKI.leafExtensions(sans: [.dns(TrustPKI.host)])
            if let leafDistributionPoints { extensions.append(.crlDistributionPoints(leafDistributionPoints)) }
            if !leafOCSP.isEmpty { extensions.append(.authorityInfoAccess(ocsp: leafOCSP, caIssuers: [])) }
            let validity = leafValidity ?? TrustPKI.leafValidity
            leaf = try intermediate.issue(
                TrustPKI.leafSpec(notBefore: validity.0, notAfter: validity.1, extensions: extensions), key: TrustPKI.key(TrustSlot.leaf))
        }

        /// The issuing CA's CRL (revoking `serials`), as its distribution point serves it.
        func issuingCRL(
            revoking serials: [[UInt8]] = [], thisUpdate: Int64 = RevocationCheckTests.now - 3600, nextUpdate: Int64? = RevocationCheckTests.now + 86_400,
            signingKey: LabKey? = nil
        ) throws
            -> CertificateRevocationList
        {
            try TrustPKI.crl(from: intermediate, revoking: serials, thisUpdate: thisUpdate, nextUpdate: nextUpdate, signingKey: signingKey)
        }

        func rootCRL(revoking serials: [[UInt8]] = []) throws -> CertificateRevocationList {
            try TrustPKI.crl(from: root, revoking: serials, thisUpdate: RevocationCheckTests.now - 3600, nextUpdate: RevocationCheckTests.now + 86_400)
        }

        func staple(_ status: LabOCSPStatus = .good, signer: LabIssuer? = nil) throws -> [UInt8] {
            try LabOCSP.response(for: leaf, issuer: intermediate.issuer, status: status, now: RevocationCheckTests.now, signer: signer)
        }

        func validate(_ check: RevocationCheck) throws -> ValidationOutcome {
            try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate], checks: [check])
        }
    }

    /// A CRL source over fixed answers per URL: the provider seam as the check calls it, with
    /// what was asked, discarded and confirmed.
    final class FixedCRLs: CRLProvider, CRLConfirming {
        let answers: [String: Result<CertificateRevocationList, CRLUnavailable>]
        private let state = Mutex<(lookups: [String], discarded: [String], confirmed: [String])>(([], [], []))

        init(_ answers: [String: Result<CertificateRevocationList, CRLUnavailable>]) { self.answers = answers }

        var lookups: [String] { state.withLock { $0.lookups } }
        var discarded: [String] { state.withLock { $0.discarded } }
        var confirmed: [String] { state.withLock { $0.confirmed } }

        func confirm(_ crl: FetchedCRL) { state.withLock { $0.confirmed.append(crl.url) } }

        /// The confirmed answers for `certificate`'s URLs, as a provider holds them.
        func verifiedCRLs(for certificate: Certificate, at time: Int64) -> [FetchedCRL] {
            let confirmed = self.confirmed
            return CRLLocations(certificate).urls.filter(confirmed.contains).compactMap { url in
                guard case .success(let crl)? = answers[url] else { return nil }
                return FetchedCRL(crl: crl, url: url, origin: .cache, fetchedAt: time, validatedAt: time)
            }
        }

        func crls(for certificate: Certificate, at time: Int64, until deadline: ContinuousClock.Instant) -> CRLLookup {
            var crls: [FetchedCRL] = []
            var failures: [CRLFetchFailure] = []
            for url in CRLLocations(certificate).urls {
                state.withLock { $0.lookups.append(url) }
                switch answers[url] ?? .failure(.httpStatus(404)) {
                case .success(let crl): crls.append(FetchedCRL(crl: crl, url: url, origin: .network, fetchedAt: time, validatedAt: time))
                case .failure(let reason): failures.append(CRLFetchFailure(url: url, reason: reason))
                }
            }
            return CRLLookup(crls: crls, failures: failures, ignored: CRLLocations(certificate).ignored)
        }

        func discard(_ crl: FetchedCRL) { state.withLock { $0.discarded.append(crl.url) } }
    }

    static func check(
        _ mode: RevocationMode, depth: RevocationDepth = .chain, crls: [CertificateRevocationList] = [], provider: (any CRLProvider)? = nil,
        staple: [UInt8]? = nil
    ) -> RevocationCheck {
        RevocationCheck(
            mode: mode, depth: depth, revocationLists: crls, provider: provider, stapledOCSPResponse: staple, deadline: .now + .seconds(5))
    }

    static let modes: [RevocationMode] = [.softFail, .hardFail]

    @Test("the genuine chain: every certificate settled by a fetched CRL, named by URL, number, thisUpdate, age and origin", arguments: modes)
    func genuine(mode: RevocationMode) throws {
        let setup = try Setup()
        let provider = FixedCRLs([Self.leafURL: .success(try setup.issuingCRL()), Self.rootURL: .success(try setup.rootCRL())])
        let outcome = try setup.validate(Self.check(mode, provider: provider))
        #expect(outcome.failure == nil, "\(String(describing: outcome.failure))")
        let findings = outcome.chain?.findings ?? []
        #expect(findings.map(\.outcome) == [.passed, .passed] && findings.map(\.certificateIndex) == [0, 1])
        #expect(findings[0].detail.contains("CRL \(Self.leafURL) (cRLNumber 01, thisUpdate "), "\(findings[0])")
        #expect(findings[0].detail.contains("age 1 h, fetched now"), "\(findings[0])")
        #expect(findings[1].detail.contains("CRL \(Self.rootURL)"), "\(findings[1])")
        #expect(provider.lookups == [Self.leafURL, Self.rootURL])
        #expect(provider.confirmed == [Self.leafURL, Self.rootURL], "each verified CRL is confirmed to the provider")
    }

    @Test("a revoked leaf and a revoked intermediate are refused in soft-fail and hard-fail, naming the CRL", arguments: modes)
    func revoked(mode: RevocationMode) throws {
        let setup = try Setup()
        let leafRevoked = FixedCRLs([
            Self.leafURL: .success(try setup.issuingCRL(revoking: [setup.leaf.serialNumber])), Self.rootURL: .success(try setup.rootCRL()),
        ])
        let outcome = try setup.validate(Self.check(mode, provider: leafRevoked))
        expectRejected(outcome, .revoked, at: 0)
        #expect(outcome.failure?.detail.contains("by the CRL \(Self.leafURL)") == true, "\(String(describing: outcome.failure))")

        let caRevoked = FixedCRLs([
            Self.leafURL: .success(try setup.issuingCRL()), Self.rootURL: .success(try setup.rootCRL(revoking: [setup.intermediate.certificate.serialNumber])),
        ])
        expectRejected(try setup.validate(Self.check(mode, provider: caRevoked)), .revoked, at: 1)
        // Depth leaf does not look at the intermediate.
        let leafOnly = try setup.validate(Self.check(mode, depth: .leaf, provider: caRevoked))
        #expect(leafOnly.failure == nil && leafOnly.chain?.findings.count == 1)
        #expect(caRevoked.lookups.filter { $0 == Self.rootURL }.count == 1, "depth leaf asked for no CA CRL: \(caRevoked.lookups)")
    }

    /// Each way a fetched CRL can fail to establish the leaf's status.
    enum Unknown: String, CaseIterable, CustomTestStringConvertible {
        case serverDown, signedByAnotherKey, pastNextUpdate, partitionNotCoveringTheCertificate, tooLarge, timedOut, noDistributionPoint, noFetcher
        var testDescription: String { rawValue }
    }

    static func unknownCase(_ c: Unknown, _ setup: Setup) throws -> (provider: FixedCRLs?, detail: String) {
        let root = Result<CertificateRevocationList, CRLUnavailable>.success(try setup.rootCRL())
        switch c {
        case .serverDown:
            return (FixedCRLs([Self.leafURL: .failure(.unreachable("connection refused")), Self.rootURL: root]), "unreachable (connection refused)")
        case .signedByAnotherKey:
            let forged = try setup.issuingCRL(signingKey: try TrustPKI.key(TrustSlot.wrong))
            return (FixedCRLs([Self.leafURL: .success(forged), Self.rootURL: root]), "its signature does not verify")
        case .pastNextUpdate:
            let stale = try setup.issuingCRL(thisUpdate: Self.now - 8 * 86_400, nextUpdate: Self.now - 86_400)
            return (FixedCRLs([Self.leafURL: .success(stale), Self.rootURL: root]), "is out of date")
        case .partitionNotCoveringTheCertificate:
            var point = LabIssuingDistributionPoint(name: .fullName([.uri("http://crl.test/issuing-partition-2.crl")]))
            point.onlyContainsUserCerts = true
            var spec = LabCRLSpec(thisUpdate: Self.now - 3600, nextUpdate: Self.now + 86_400, number: 9)
            spec.issuingDistributionPoint = point
            let other = try TrustPKI.crl(spec, signedBy: setup.intermediate)
            return (FixedCRLs([Self.leafURL: .success(other), Self.rootURL: root]), "its issuingDistributionPoint names another distribution point")
        case .tooLarge:
            return (FixedCRLs([Self.leafURL: .failure(.tooLarge(limit: 1024)), Self.rootURL: root]), "exceeds the 1024-byte limit")
        case .timedOut:
            return (FixedCRLs([Self.leafURL: .failure(.timedOut), Self.rootURL: root]), "the time budget ran out")
        case .noDistributionPoint:
            return (FixedCRLs([Self.rootURL: root]), "names no CRL distribution point")
        case .noFetcher:
            return (nil, "CRLs are not fetched")
        }
    }

    @Test("status unknown: soft-fail accepts with a noted finding saying why, hard-fail refuses with revocationStatusUnknown", arguments: Unknown.allCases)
    func unknown(_ c: Unknown) throws {
        let setup = try c == .noDistributionPoint ? Setup(leafDistributionPoints: nil) : Setup()
        let (provider, detail) = try Self.unknownCase(c, setup)
        let soft = try setup.validate(Self.check(.softFail, provider: provider))
        #expect(soft.failure == nil, "\(c): soft-fail refused: \(String(describing: soft.failure))")
        let noted = soft.chain?.findings.first { $0.certificateIndex == 0 }
        #expect(noted?.outcome == .noted && noted?.code == .revocationStatusUnknown, "\(c): \(String(describing: noted))")
        #expect(noted?.detail.contains(detail) == true, "\(c): \(String(describing: noted?.detail))")
        #expect(noted?.detail.hasPrefix("revocation status unknown, accepted (soft-fail)") == true)

        let hard = try setup.validate(Self.check(.hardFail, provider: provider))
        expectRejected(hard, .revocationStatusUnknown, at: 0)
        #expect(hard.failure?.detail.contains(detail) == true, "\(c): \(String(describing: hard.failure))")
        if c == .signedByAnotherKey {
            #expect(provider?.discarded.contains(Self.leafURL) == true, "a forged CRL is handed back to be forgotten")
            #expect(provider?.confirmed.contains(Self.leafURL) == false, "a forged CRL is never confirmed")
        } else {
            #expect(provider?.discarded.isEmpty ?? true)
        }
    }

    @Test("the staple settles the leaf: good with no CRL lookup for it, revoked refused in both modes, an undelegated signer ignored")
    func staple() throws {
        let setup = try Setup()
        let provider = FixedCRLs([Self.leafURL: .success(try setup.issuingCRL()), Self.rootURL: .success(try setup.rootCRL())])
        let good = try setup.validate(Self.check(.hardFail, provider: provider, staple: try setup.staple()))
        #expect(good.failure == nil)
        #expect(good.chain?.findings.first?.detail.hasPrefix("not revoked: the stapled OCSP response says good (signed by the issuer") == true)
        #expect(provider.lookups == [Self.rootURL], "the leaf's CRL was not fetched: \(provider.lookups)")

        for mode in Self.modes {
            let revoked = try setup.validate(Self.check(mode, provider: provider, staple: try setup.staple(.revoked(time: Self.now - 86_400, reason: 1))))
            expectRejected(revoked, .revoked, at: 0)
            #expect(revoked.failure?.detail.contains("by the stapled OCSP response") == true)
        }

        // Signed by a certificate the issuer never delegated OCSP to: ignored, so the CRL decides.
        let undelegated = try LabOCSP.responderCertificate(
            issuer: setup.intermediate.issuer, key: try TrustPKI.key(TrustSlot.otherIntermediate), extendedKeyUsage: ["serverAuth"])
        let forgedStaple = try setup.staple(.revoked(time: Self.now, reason: 1), signer: try undelegated.asIssuer())
        let ignored = try setup.validate(Self.check(.hardFail, provider: provider, staple: forgedStaple))
        #expect(ignored.failure == nil, "\(String(describing: ignored.failure))")
        #expect(ignored.chain?.findings.first?.detail.contains("CRL \(Self.leafURL)") == true)
        // Without CRLs that staple alone gives "status unknown", saying why it was ignored.
        let alone = try setup.validate(Self.check(.hardFail, staple: forgedStaple))
        expectRejected(alone, .revocationStatusUnknown, at: 0)
        #expect(
            alone.failure?.detail.contains("the stapled OCSP response is ignored: its signer is not authorized") == true, "\(String(describing: alone.failure))"
        )
    }

    /// An attacker holding a revoked leaf's key staples a `good` response from before the
    /// revocation, still in its window: the caller's CRL that lists the leaf is later news.
    @Test("a stapled good does not outweigh a caller's CRL that revokes the leaf; one that does not list it leaves the staple settling", arguments: modes)
    func stapleGoodDoesNotOverrideCallersRevocation(mode: RevocationMode) throws {
        let setup = try Setup()
        let provider = FixedCRLs([Self.rootURL: .success(try setup.rootCRL())])
        let revoking = try setup.issuingCRL(revoking: [setup.leaf.serialNumber])
        let outcome = try setup.validate(Self.check(mode, crls: [revoking], provider: provider, staple: try setup.staple()))
        expectRejected(outcome, .revoked, at: 0)
        #expect(outcome.failure?.detail.contains("given by the caller") == true, "\(String(describing: outcome.failure))")

        let notListing = try setup.validate(Self.check(mode, crls: [try setup.issuingCRL()], provider: provider, staple: try setup.staple()))
        #expect(notListing.failure == nil, "\(String(describing: notListing.failure))")
        #expect(notListing.chain?.findings.first?.detail.hasPrefix("not revoked: the stapled OCSP response says good") == true)
        // A caller's CRL that cannot speak for the leaf (another CA's) leaves the staple settling it.
        let otherCA = try TrustPKI.root("Revocation Check Other Root", slot: TrustSlot.otherRoot)
        let unrelated = try TrustPKI.crl(from: otherCA, revoking: [setup.leaf.serialNumber])
        let ignored = try setup.validate(Self.check(mode, crls: [unrelated], provider: provider, staple: try setup.staple()))
        #expect(ignored.failure == nil, "\(String(describing: ignored.failure))")
        #expect(provider.lookups.allSatisfy { $0 == Self.rootURL }, "the leaf's CRL was not fetched: \(provider.lookups)")
    }

    /// The same replayed staple against a CRL the provider fetched and verified for an earlier
    /// decision and still holds: read without a fetch, it outweighs the staple.
    @Test("a stapled good does not outweigh a verified CRL the provider holds that revokes the leaf", arguments: modes)
    func stapleGoodDoesNotOverrideHeldRevocation(mode: RevocationMode) throws {
        let setup = try Setup()
        let provider = FixedCRLs([
            Self.leafURL: .success(try setup.issuingCRL(revoking: [setup.leaf.serialNumber])), Self.rootURL: .success(try setup.rootCRL()),
        ])
        expectRejected(try setup.validate(Self.check(mode, provider: provider)), .revoked, at: 0)
        #expect(provider.confirmed.contains(Self.leafURL))
        let lookups = provider.lookups.count
        let outcome = try setup.validate(Self.check(mode, provider: provider, staple: try setup.staple()))
        expectRejected(outcome, .revoked, at: 0)
        #expect(outcome.failure?.detail.contains("by the CRL \(Self.leafURL)") == true, "\(String(describing: outcome.failure))")
        #expect(!provider.lookups.dropFirst(lookups).contains(Self.leafURL), "nothing fetched for the leaf: \(provider.lookups)")

        // A provider holding nothing verified for the leaf: the staple settles it, unfetched.
        let fresh = FixedCRLs([Self.leafURL: .success(try setup.issuingCRL()), Self.rootURL: .success(try setup.rootCRL())])
        let good = try setup.validate(Self.check(mode, provider: fresh, staple: try setup.staple()))
        #expect(good.failure == nil && fresh.lookups == [Self.rootURL], "\(String(describing: good.failure)) \(fresh.lookups)")
    }

    @Test("the caller's CRLs come before fetching; what they do not cover is fetched")
    func callerCRLs() throws {
        let setup = try Setup()
        let provider = FixedCRLs([Self.leafURL: .success(try setup.issuingCRL()), Self.rootURL: .success(try setup.rootCRL())])
        let outcome = try setup.validate(Self.check(.hardFail, crls: [try setup.issuingCRL(revoking: [[0x7F]])], provider: provider))
        #expect(outcome.failure == nil)
        #expect(outcome.chain?.findings.first?.detail.hasSuffix("given by the caller") == true)
        #expect(provider.lookups == [Self.rootURL], "only the CA's CRL was fetched: \(provider.lookups)")
        // A caller's CRL that revokes wins without a fetch.
        let revoked = try setup.validate(Self.check(.softFail, crls: [try setup.issuingCRL(revoking: [setup.leaf.serialNumber])], provider: provider))
        expectRejected(revoked, .revoked, at: 0)
    }

    @Test("a short-lived leaf without a revocation pointer is exempt (noted) in both modes; with a pointer, or over 7 days, it is checked")
    func shortLived() throws {
        let sevenDays = try Setup(leafDistributionPoints: nil, leafValidity: (Self.now - 86_400, Self.now + 6 * 86_400))
        let provider = FixedCRLs([Self.rootURL: .success(try sevenDays.rootCRL())])
        for mode in Self.modes {
            let outcome = try sevenDays.validate(Self.check(mode, provider: provider))
            #expect(outcome.failure == nil, "\(mode): \(String(describing: outcome.failure))")
            let finding = outcome.chain?.findings.first
            #expect(finding?.outcome == .noted && finding?.code == .shortLivedExemption, "\(String(describing: finding))")
            #expect(finding?.detail.contains("short-lived certificate (valid 7 d") == true, "\(String(describing: finding))")
        }
        // Eight days: no exemption, so hard-fail refuses a leaf that names no CRL.
        let eightDays = try Setup(leafDistributionPoints: nil, leafValidity: (Self.now - 86_400, Self.now + 7 * 86_400))
        expectRejected(try eightDays.validate(Self.check(.hardFail, provider: provider)), .revocationStatusUnknown, at: 0)
        // An OCSP URL is a pointer: no exemption (and the responder is not queried).
        let withOCSP = try Setup(leafDistributionPoints: nil, leafOCSP: ["http://ocsp.test"], leafValidity: (Self.now - 86_400, Self.now + 6 * 86_400))
        let refused = try withOCSP.validate(Self.check(.hardFail, provider: provider))
        expectRejected(refused, .revocationStatusUnknown, at: 0)
        #expect(refused.failure?.detail.contains("only an OCSP URL, which is not queried") == true)
        // A short-lived leaf that names a CRL is checked, and refused when revoked.
        let named = try Setup(leafValidity: (Self.now - 86_400, Self.now + 6 * 86_400))
        let revoking = FixedCRLs([
            Self.leafURL: .success(try named.issuingCRL(revoking: [named.leaf.serialNumber])), Self.rootURL: .success(try named.rootCRL()),
        ])
        expectRejected(try named.validate(Self.check(.softFail, provider: revoking)), .revoked, at: 0)
    }

    @Test("a CRL issued a little in the future is current within the five-minute skew; beyond it, not")
    func skew() throws {
        let setup = try Setup()
        func outcome(thisUpdate: Int64) throws -> ValidationOutcome {
            let provider = FixedCRLs([
                Self.leafURL: .success(try setup.issuingCRL(thisUpdate: thisUpdate)), Self.rootURL: .success(try setup.rootCRL()),
            ])
            return try setup.validate(Self.check(.hardFail, provider: provider))
        }
        #expect(try outcome(thisUpdate: Self.now + 120).failure == nil)
        expectRejected(try outcome(thisUpdate: Self.now + 600), .revocationStatusUnknown, at: 0)
    }

    @Test("off passes every path without looking")
    func off() throws {
        let setup = try Setup()
        let provider = FixedCRLs([:])
        let outcome = try setup.validate(Self.check(.off, provider: provider))
        #expect(outcome.failure == nil && outcome.chain?.findings.isEmpty == true && provider.lookups.isEmpty)
    }
}
