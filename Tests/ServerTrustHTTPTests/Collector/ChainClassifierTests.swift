import CertificateParsing
import Foundation
import ServerTrustCollector
import ServerTrustLab
import Testing
import TrustEvaluation

/// The collector's classification of failing chains, against the system roots plus a lab root
/// standing in for a public CA, on a fixed clock.
@Suite("collector: classifying failing chains")
struct ChainClassifierTests {
    /// 2026-06-01, inside every lab certificate's validity below.
    static let now: Int64 = 1_780_272_000
    static let day: Int64 = 86_400

    struct World {
        /// The operator's public CA: its root is in the "public" store.
        let publicCA: LabPKI
        /// Another public CA (also in the store), not the operator's.
        let otherCA: LabPKI
        let roots: TrustStore

        init() throws {
            publicCA = try LabPKI.webChain(
                host: "api.collector.test", leafNotBefore: ChainClassifierTests.now - 10 * ChainClassifierTests.day,
                leafNotAfter: ChainClassifierTests.now + 80 * ChainClassifierTests.day, keySlot: 81)
            otherCA = try LabPKI.webChain(
                host: "api.collector.test", algorithm: .p384, leafNotBefore: ChainClassifierTests.now - 10 * ChainClassifierTests.day,
                leafNotAfter: ChainClassifierTests.now + 80 * ChainClassifierTests.day, keySlot: 82)
            roots = try TrustStore.system() + TrustStore([try Lab.certificate(publicCA.root), try Lab.certificate(otherCA.root)])
        }

        func classifier(expecting expected: [LabCertificate]) throws -> ChainClassifier {
            ChainClassifier(publicRoots: roots, expectedCAs: try expected.map(Lab.certificate), clock: .fixed(ChainClassifierTests.now))
        }
    }

    static func certificates(_ chain: [LabCertificate]) throws -> [Certificate] { try chain.map(Lab.certificate) }

    @Test("a new key from the expected CA, validating to the public root: a rotation, with the pin to add")
    func rotation() throws {
        let world = try World()
        let newKey = try LabKey(.p256)
        let moved = try LabCertificate.issue(
            LabPKI.leafSpec(host: "api.collector.test", keyAlgorithm: .p256, notBefore: Self.now - Self.day, notAfter: Self.now + 60 * Self.day),
            subjectKey: newKey, issuer: world.publicCA.intermediateIssuer)
        let chain = try Self.certificates([moved, world.publicCA.intermediate, world.publicCA.root])
        for expected in [[world.publicCA.intermediate], [world.publicCA.root]] {
            let verdict = try world.classifier(expecting: expected).classify(chain)
            #expect(verdict.chainClass == .rotation && verdict.validatesAgainstPublicRoots, "\(verdict)")
            #expect(verdict.root == (try Lab.certificate(world.publicCA.root)).subject.rfc4514)
            #expect(verdict.issuer == (try Lab.certificate(world.publicCA.intermediate)).subject.rfc4514)
            #expect(verdict.leafPin == "sha256/" + chain[0].spkiSHA256Base64 && verdict.reason.contains(verdict.leafPin))
            #expect(verdict.reason.contains("a CA you expect"))
        }
        // The served order does not matter, nor a missing root (the store has it).
        let unordered = try Self.certificates([moved, world.publicCA.intermediate])
        #expect(try world.classifier(expecting: [world.publicCA.intermediate]).classify(unordered).chainClass == .rotation)
        // Without expectations it is still a rotation, and the reason says what was not checked.
        let unchecked = try world.classifier(expecting: []).classify(chain)
        #expect(unchecked.chainClass == .rotation && unchecked.reason.contains("--expected-ca"))
    }

    @Test(
        "a rotation's reason gives the pins' mismatch as the report's claim, which the collector does not check, never as a finding",
        arguments: [true, false])
    func rotationReasonSaysWhatWasChecked(_ withExpectedCA: Bool) throws {
        let world = try World()
        let chain = try Self.certificates(world.publicCA.serverChain)
        let verdict = try world.classifier(expecting: withExpectedCA ? [world.publicCA.intermediate] : []).classify(chain)
        #expect(verdict.chainClass == .rotation)
        #expect(!verdict.reason.contains("None of the known pins matches"), "\(verdict.reason)")
        #expect(verdict.reason.contains("The report says none of its known pins matched (a claim the collector does not check)"))
        #expect(verdict.reason.contains("validates against the public roots"))
    }

    @Test("a publicly valid chain whose leaf is not valid for the reported host: invalid, naming the leaf's names, with no pin to add")
    func anotherHostsLeaf() throws {
        let world = try World()
        let other = try world.publicCA.issueLeaf(host: "attacker.example", notBefore: Self.now - Self.day, notAfter: Self.now + 30 * Self.day)
        let chain = try Self.certificates([other, world.publicCA.intermediate])
        #expect(ChainClassifier.leaf(chain[0], isValidFor: "attacker.example") && !ChainClassifier.leaf(chain[0], isValidFor: "api.collector.test"))
        let verdict = try world.classifier(expecting: [world.publicCA.intermediate]).classify(chain, coversHost: false)
        #expect(verdict.chainClass == .invalid && !verdict.validatesAgainstPublicRoots, "\(verdict)")
        #expect(verdict.reason.contains("valid for attacker.example, not for the host the report names") && !verdict.reason.contains("add sha256/"))
    }

    @Test("a valid public chain through a CA the operator does not use: an unexpected CA")
    func unexpectedCA() throws {
        let world = try World()
        let chain = try Self.certificates(world.otherCA.serverChain)
        let verdict = try world.classifier(expecting: [world.publicCA.intermediate]).classify(chain)
        #expect(verdict.chainClass == .unexpectedCA && verdict.validatesAgainstPublicRoots, "\(verdict)")
        #expect(verdict.reason.contains("Certificate Transparency"))
    }

    @Test("a chain ending at a root no public store holds (a Charles-style CA): an interception, whatever the pins")
    func interception() throws {
        let world = try World()
        let charlesKey = try LabKey.shared(.p256, slot: 250)
        let charles = try LabCertificate.issue(
            LabCertificateSpec(
                subject: LabName([("O", "Charles Proxy"), ("CN", "Charles Proxy CA")]), notBefore: Self.now - 365 * Self.day,
                notAfter: Self.now + 365 * Self.day, extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]),
            subjectKey: charlesKey)
        let minted = try LabCertificate.issue(
            LabPKI.leafSpec(host: "api.collector.test", keyAlgorithm: .p256, notBefore: Self.now - Self.day, notAfter: Self.now + 30 * Self.day),
            subjectKey: try LabKey(.p256), issuer: LabIssuer(certificate: charles, key: charlesKey))
        for chain in [[minted, charles], [minted]] {
            let verdict = try world.classifier(expecting: [world.publicCA.intermediate]).classify(try Self.certificates(chain))
            #expect(verdict.chainClass == .interception && !verdict.validatesAgainstPublicRoots, "\(verdict)")
            #expect(verdict.reason.contains("Charles Proxy CA") && verdict.reason.contains("no public trust store"), "\(verdict.reason)")
        }
        // The genuine intermediate appended to the interceptor's chain changes nothing.
        let appended = try Self.certificates([minted, charles, world.publicCA.intermediate])
        #expect(try world.classifier(expecting: [world.publicCA.intermediate]).classify(appended).chainClass == .interception)
    }

    @Test("a root named like a public root but with another key: an interception that says it impersonates the public root")
    func impostorRoot() throws {
        let world = try World()
        // Same algorithm, another key slot: the same root name as the operator's public CA.
        let impostor = try LabPKI.webChain(
            host: "api.collector.test", leafNotBefore: Self.now - Self.day, leafNotAfter: Self.now + 30 * Self.day, keySlot: 83)
        let chain = try Self.certificates([impostor.leaf, impostor.intermediate, impostor.root])
        #expect(chain[2].subject == (try Lab.certificate(world.publicCA.root)).subject)
        let verdict = try world.classifier(expecting: [world.publicCA.intermediate]).classify(chain)
        #expect(verdict.chainClass == .interception && verdict.reason.contains("named like the public root"), "\(verdict)")
    }

    @Test("a publicly rooted chain that fails for another reason (expired at the collector's clock): invalid, with the verifier's reason")
    func invalid() throws {
        let world = try World()
        let expired = try world.publicCA.issueLeaf(host: "api.collector.test", notBefore: Self.now - 60 * Self.day, notAfter: Self.now - Self.day)
        let verdict = try world.classifier(expecting: [world.publicCA.intermediate]).classify(
            try Self.certificates([expired, world.publicCA.intermediate]))
        #expect(verdict.chainClass == .invalid && verdict.reason.contains("expired"), "\(verdict)")
    }

    @Test("a classification is computed once per distinct chain")
    func cached() throws {
        let world = try World()
        let classifier = try world.classifier(expecting: [])
        let chain = try Self.certificates(world.publicCA.serverChain)
        let first = classifier.classify(chain, fingerprint: "f")
        // The same fingerprint answers from the cache even for another chain: the key is the
        // chain's own digest in production, so this only shows the cache is consulted.
        let cached = classifier.classify(try Self.certificates(world.otherCA.serverChain), fingerprint: "f")
        #expect(first == cached)
    }
}
