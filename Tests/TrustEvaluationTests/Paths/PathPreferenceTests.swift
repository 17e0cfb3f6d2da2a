import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// A ``PathPreference`` makes the search keep looking, within its budget, for a valid path the
/// caller wants (its pins are on it), for every shape that gives one served chain several valid
/// paths: a cross-signed intermediate (one key, two issuers), a root that is also sent as an
/// intermediate cross-signed by an older root, and an intermediate that the store also holds as
/// an anchor (Brave #52059). It never returns an invalid path, and without a preference the
/// search is what it was.
@Suite("path preference: the valid path the pins are on, among every valid path")
struct PathPreferenceTests {
    /// Prefers paths that carry `certificate`'s key.
    struct CarriesKey: PathPreference {
        let key: [UInt8]
        init(_ certificate: LabCertificate) { key = certificate.subjectPublicKeyInfoDER }
        func prefers(_ path: CandidatePath, at time: Int64) -> Bool {
            path.certificates.contains { Array($0.subjectPublicKeyInfo.derBytes) == key }
        }
    }

    /// Leaf ← intermediate I (one key) issued twice: by new root B and by old root A; both
    /// roots trusted.
    struct CrossSignedIntermediate {
        let rootA: TrustCA
        let rootB: TrustCA
        let intermediateByA: LabCertificate
        let intermediateByB: LabCertificate
        let leaf: LabCertificate

        init(expiredCrossSign: Bool = false) throws {
            rootA = try TrustPKI.root("Old Root A", slot: TrustSlot.root)
            rootB = try TrustPKI.root("New Root B", slot: TrustSlot.otherRoot)
            let key = try TrustPKI.key(TrustSlot.intermediate)
            let byB = try rootB.issueCA(TrustPKI.caSpec("Issuing CA I", pathLength: 0), key: key)
            intermediateByB = byB.certificate
            intermediateByA = try rootA.issue(
                TrustPKI.caSpec(
                    "Issuing CA I", pathLength: 0, notBefore: TrustPKI.caValidity.notBefore,
                    notAfter: expiredCrossSign ? TrustPKI.now - LabClock.day : TrustPKI.caValidity.notAfter), key: key)
            leaf = try byB.issueLeaf()
        }
    }

    static func validate(
        _ leaf: LabCertificate, _ intermediates: [LabCertificate], anchors: [LabCertificate], preferring preference: (any PathPreference)?
    ) throws -> ValidationOutcome {
        let verifier = Verifier(anchors: TrustStore(try anchors.map(TrustPKI.parse)), policy: TrustPKI.serverPolicy())
        return verifier.validate(
            leaf: try TrustPKI.parse(leaf), intermediates: try intermediates.map(TrustPKI.parse), at: TrustPKI.now, preferring: preference)
    }

    @Test(
        "a cross-signed intermediate: either root is found, whatever the order sent and the order of the store",
        arguments: [false, true], [false, true])
    func crossSignedIntermediate(servedAFirst: Bool, storeAFirst: Bool) throws {
        let pki = try CrossSignedIntermediate()
        let served = servedAFirst ? [pki.intermediateByA, pki.intermediateByB] : [pki.intermediateByB, pki.intermediateByA]
        let anchors = storeAFirst ? [pki.rootA.certificate, pki.rootB.certificate] : [pki.rootB.certificate, pki.rootA.certificate]
        for (wanted, intermediate, other) in [
            (pki.rootA.certificate, pki.intermediateByA, pki.rootB.certificate), (pki.rootB.certificate, pki.intermediateByB, pki.rootA.certificate),
        ] {
            let outcome = try Self.validate(pki.leaf, served, anchors: anchors, preferring: CarriesKey(wanted))
            let chain = try #require(outcome.chain, "\(outcome.failure.map(String.init(describing:)) ?? "")")
            #expect(chain.certificates == [try TrustPKI.parse(pki.leaf), try TrustPKI.parse(intermediate), try TrustPKI.parse(wanted)])
            #expect(chain.selection == .preferred)
            // Any valid path seen before the preferred one is named, never an invalid one.
            for seen in chain.otherValidPaths { #expect(seen.last == (try TrustPKI.parse(other))) }
        }
        // A preference no valid path meets: the first valid path, said to be none preferred,
        // with the other valid path named.
        let stranger = try TrustPKI.root("Stranger", slot: TrustSlot.untrustedRoot)
        let none = try Self.validate(pki.leaf, served, anchors: anchors, preferring: CarriesKey(stranger.certificate))
        let chain = try #require(none.chain)
        #expect(chain.selection == .noPreferredPath)
        #expect(chain.otherValidPaths.count == 1)
        #expect(
            Set([chain.anchor, chain.otherValidPaths[0].last]) == Set([try TrustPKI.parse(pki.rootA.certificate), try TrustPKI.parse(pki.rootB.certificate)]))
    }

    @Test("without a preference the first valid path is returned, with nothing more searched")
    func withoutPreference() throws {
        let pki = try CrossSignedIntermediate()
        let served = [pki.intermediateByB, pki.intermediateByA]
        let anchors = [pki.rootA.certificate, pki.rootB.certificate]
        let outcome = try Self.validate(pki.leaf, served, anchors: anchors, preferring: nil)
        let chain = try #require(outcome.chain)
        #expect(chain.selection == .first && chain.otherValidPaths.isEmpty)
        #expect(outcome.signatureChecks == 2)
        let plain = try TrustPKI.validate(pki.leaf, served, anchors: anchors)
        #expect(plain.chain?.certificates == chain.certificates && plain.signatureChecks == 2)
    }

    @Test("a path that is not valid is never preferred: an expired cross-sign leaves only the other root")
    func neverInvalid() throws {
        let pki = try CrossSignedIntermediate(expiredCrossSign: true)
        let outcome = try Self.validate(
            pki.leaf, [pki.intermediateByA, pki.intermediateByB], anchors: [pki.rootA.certificate, pki.rootB.certificate],
            preferring: CarriesKey(pki.rootA.certificate))
        let chain = try #require(outcome.chain)
        #expect(chain.selection == .noPreferredPath)
        #expect(chain.anchor == (try TrustPKI.parse(pki.rootB.certificate)))
        #expect(chain.otherValidPaths.isEmpty)
        // Nor does a preference rescue a chain with no valid path.
        let only = try Self.validate(pki.leaf, [pki.intermediateByA], anchors: [pki.rootA.certificate], preferring: CarriesKey(pki.rootA.certificate))
        #expect(only.failure?.kind == .expired)
    }

    @Test("a root also sent as an intermediate cross-signed by an older root: the path to the older root is found")
    func rootAlsoIntermediate() throws {
        // Leaf ← I ← root B, and B's key also as "B cross-signed by A" (ISRG Root X2 under X1).
        let rootA = try TrustPKI.root("Old Root A", slot: TrustSlot.root)
        let rootB = try TrustPKI.root("New Root B", slot: TrustSlot.otherRoot)
        let crossB = try rootA.issue(TrustPKI.caSpec("New Root B"), key: rootB.key)
        let intermediate = try rootB.issueCA("Issuing CA I", slot: TrustSlot.intermediate, pathLength: 0)
        let leaf = try intermediate.issueLeaf()
        for anchors in [[rootA.certificate, rootB.certificate], [rootB.certificate, rootA.certificate]] {
            let toA = try Self.validate(leaf, [intermediate.certificate, crossB], anchors: anchors, preferring: CarriesKey(rootA.certificate))
            #expect(toA.chain?.certificates == [leaf, intermediate.certificate, crossB, rootA.certificate].map { try! TrustPKI.parse($0) })
            let toB = try Self.validate(leaf, [intermediate.certificate, crossB], anchors: anchors, preferring: CarriesKey(rootB.certificate))
            #expect(toB.chain?.selection == .preferred)
            #expect(toB.chain?.anchor == (try TrustPKI.parse(rootB.certificate)))
        }
    }

    @Test("an intermediate the store also holds as an anchor continues to its root when the root is wanted (Brave #52059)")
    func intermediateAlsoAnchor() throws {
        let chain = try TrustChain.make()
        let anchors = [chain.intermediate.certificate, chain.root.certificate]
        // Without a preference, the path ends at the intermediate, an anchor.
        let plain = try Self.validate(chain.leaf, [chain.intermediate.certificate], anchors: anchors, preferring: nil)
        #expect(plain.chain?.certificates.count == 2)
        let outcome = try Self.validate(chain.leaf, [chain.intermediate.certificate], anchors: anchors, preferring: CarriesKey(chain.root.certificate))
        let found = try #require(outcome.chain)
        #expect(found.certificates == [chain.leaf, chain.intermediate.certificate, chain.root.certificate].map { try! TrustPKI.parse($0) })
        #expect(found.selection == .preferred)
        #expect(found.otherValidPaths == [[chain.leaf, chain.intermediate.certificate].map { try! TrustPKI.parse($0) }])
    }

    @Test("validPaths lists every valid path, and none when there is none")
    func everyValidPath() throws {
        let pki = try CrossSignedIntermediate()
        let verifier = Verifier(
            anchors: TrustStore([pki.rootA.certificate, pki.rootB.certificate].map { try! TrustPKI.parse($0) }), policy: TrustPKI.serverPolicy())
        let all = verifier.validPaths(
            leaf: try TrustPKI.parse(pki.leaf), intermediates: [pki.intermediateByA, pki.intermediateByB].map { try! TrustPKI.parse($0) }, at: TrustPKI.now)
        #expect(all.paths.count == 2 && all.failure == nil && !all.isIncomplete)
        #expect(Set(all.paths.map(\.anchor)) == Set([pki.rootA.certificate, pki.rootB.certificate].map { try! TrustPKI.parse($0) }))
        let none = verifier.validPaths(leaf: try TrustPKI.parse(pki.leaf), intermediates: [], at: TrustPKI.now)
        #expect(none.paths.isEmpty && none.failure?.kind == .untrustedRoot)
    }
}
