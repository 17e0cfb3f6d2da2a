import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// Path building: what the peer sends is an unordered bag (duplicates, strays, expired and
/// cyclic certificates included) and the verifier must find the chain to an anchor, backtracking
/// past dead ends, and say exactly which chain it found.
@Suite("Verifier path building")
struct VerifierPathBuildingTests {
    /// Root → CA 0 → CA 1 → CA 2 → leaf (no pathLen limits).
    struct DeepChain {
        let root: TrustCA
        let cas: [TrustCA]
        let leaf: LabCertificate

        init() throws {
            root = try TrustPKI.root()
            var issuer = root
            var cas: [TrustCA] = []
            for i in 0..<3 {
                issuer = try issuer.issueCA("Trust Test CA \(i)", slot: TrustSlot.meshBase + i)
                cas.append(issuer)
            }
            self.cas = cas
            leaf = try issuer.issueLeaf()
        }

        /// The expected chain: leaf, CA 2, CA 1, CA 0, root.
        var chain: [LabCertificate] { [leaf] + cas.reversed().map(\.certificate) + [root.certificate] }
    }

    // MARK: - Ordering, duplicates, strays

    @Test(
        "intermediates are found in any order",
        arguments: [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]])
    func anyOrder(order: [Int]) throws {
        let deep = try DeepChain()
        let outcome = try TrustPKI.validate(deep.leaf, order.map { deep.cas[$0].certificate }, anchors: [deep.root.certificate])
        try expectTrusted(outcome, chain: deep.chain)
    }

    @Test("duplicate intermediates are harmless and cost no extra signature checks")
    func duplicates() throws {
        let deep = try DeepChain()
        let sent = deep.cas.map(\.certificate)
        let outcome = try TrustPKI.validate(deep.leaf, sent + sent.reversed() + sent, anchors: [deep.root.certificate])
        try expectTrusted(outcome, chain: deep.chain)
        // One check per link: leaf←CA2, CA2←CA1, CA1←CA0, CA0←root.
        #expect(outcome.signatureChecks == 4)
    }

    @Test("irrelevant and expired extra intermediates are skipped")
    func straysAndExpired() throws {
        let chain = try TrustChain.make()
        // Same subject and key as the real intermediate, but expired: tried first, then passed over.
        let expiredTwin = try chain.root.issueCA(
            TrustPKI.caSpec(
                "Trust Test Issuing CA", pathLength: 0, notBefore: TrustPKI.now - 3 * LabClock.year,
                notAfter: TrustPKI.now - LabClock.year),
            key: TrustPKI.key(TrustSlot.intermediate))
        let unrelatedRoot = try TrustPKI.root("Trust Test Unrelated Root", slot: TrustSlot.untrustedRoot)
        let unrelated = try unrelatedRoot.issueCA("Trust Test Unrelated CA", slot: TrustSlot.otherIntermediate)
        let outcome = try TrustPKI.validate(
            chain.leaf, [unrelated.certificate, expiredTwin.certificate, unrelatedRoot.certificate, chain.intermediate.certificate],
            anchors: [chain.root.certificate], trace: true)
        try expectTrusted(outcome, chain: [chain.leaf, chain.intermediate.certificate, chain.root.certificate])
        // The expired twin was attempted and rejected as expired at position 1.
        #expect(outcome.trace.count == 2)
        #expect(outcome.trace.first?.failure?.kind == .expired)
        #expect(outcome.trace.first?.failure?.certificateIndex == 1)
    }

    @Test("an expired intermediate with no alternative is expired at its index")
    func expiredOnly() throws {
        let chain = try TrustChain.make()
        let expired = try chain.root.issueCA(
            TrustPKI.caSpec(
                "Trust Test Issuing CA", pathLength: 0, notBefore: TrustPKI.now - 3 * LabClock.year,
                notAfter: TrustPKI.now - LabClock.year),
            key: TrustPKI.key(TrustSlot.intermediate))
        expectRejected(try TrustPKI.validate(chain.leaf, [expired.certificate], anchors: [chain.root.certificate]), .expired, at: 1)
    }

    // MARK: - Cross-signing and backtracking

    /// How the first (failing) cross-sign of "New Root" fails.
    enum DeadEnd: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Cross-signed by a trusted root, but expired.
        case expiredCrossSign
        /// Valid, but cross-signed by a root nobody trusts.
        case untrustedCrossSigner
        /// Valid names, but signed by the wrong key.
        case forgedCrossSign
        var testDescription: String { rawValue }

        var failure: ValidationFailure.Kind {
            switch self {
            case .expiredCrossSign: return .expired
            case .untrustedCrossSigner: return .untrustedRoot
            case .forgedCrossSign: return .badSignature
            }
        }

        /// Index the dead end is reported at: the cross-sign itself, or (bad signature) its issuer.
        var index: Int { self == .forgedCrossSign ? 3 : 2 }
    }

    /// Leaf ← Issuing CA ← "New Root" (not an anchor), cross-signed twice: first the dead end,
    /// then by the trusted "Other Root".
    struct CrossSigned {
        let leaf: LabCertificate
        let issuing: LabCertificate
        let deadEnd: LabCertificate
        let good: LabCertificate
        let anchors: [LabCertificate]
        let otherRoot: LabCertificate

        init(_ kind: DeadEnd) throws {
            let newRootKey = try TrustPKI.key(TrustSlot.crossRoot)
            let newRootHandle = TrustCA(
                certificate: try LabCertificate.issue(TrustPKI.caSpec("Trust Test New Root", selfSigned: true), subjectKey: newRootKey),
                key: newRootKey)
            let issuing = try newRootHandle.issueCA("Trust Test Issuing CA", slot: TrustSlot.intermediate, pathLength: 0)
            leaf = try issuing.issueLeaf()
            self.issuing = issuing.certificate
            let oldRoot = try TrustPKI.root("Trust Test Old Root", slot: TrustSlot.root)
            let otherRoot = try TrustPKI.root("Trust Test Other Root", slot: TrustSlot.otherRoot)
            let untrusted = try TrustPKI.root("Trust Test Untrusted Root", slot: TrustSlot.untrustedRoot)
            switch kind {
            case .expiredCrossSign:
                deadEnd = try oldRoot.issue(
                    TrustPKI.caSpec("Trust Test New Root", notBefore: TrustPKI.now - 3 * LabClock.year, notAfter: TrustPKI.now - LabClock.day),
                    key: newRootKey)
            case .untrustedCrossSigner:
                deadEnd = try untrusted.issue(TrustPKI.caSpec("Trust Test New Root"), key: newRootKey)
            case .forgedCrossSign:
                deadEnd = try oldRoot.issue(TrustPKI.caSpec("Trust Test New Root"), key: newRootKey, signingKey: TrustPKI.key(TrustSlot.wrong))
            }
            good = try otherRoot.issue(TrustPKI.caSpec("Trust Test New Root"), key: newRootKey)
            self.otherRoot = otherRoot.certificate
            anchors = [oldRoot.certificate, otherRoot.certificate]
        }
    }

    @Test("a failing first cross-sign is backtracked to the good one", arguments: DeadEnd.allCases)
    func crossSignBacktracking(_ kind: DeadEnd) throws {
        let pki = try CrossSigned(kind)
        let outcome = try TrustPKI.validate(pki.leaf, [pki.issuing, pki.deadEnd, pki.good], anchors: pki.anchors, trace: true)
        try expectTrusted(outcome, chain: [pki.leaf, pki.issuing, pki.good, pki.otherRoot])
        // The trace holds the dead end first, with its failure, then the accepted path.
        try #require(outcome.trace.count == 2)
        #expect(outcome.trace[0].failure?.kind == kind.failure)
        #expect(outcome.trace[0].failure?.certificateIndex == kind.index)
        #expect(outcome.trace[1].failure == nil)
    }

    @Test("with only the dead-end cross-sign, its failure is the result", arguments: DeadEnd.allCases)
    func crossSignDeadEndOnly(_ kind: DeadEnd) throws {
        let pki = try CrossSigned(kind)
        let outcome = try TrustPKI.validate(pki.leaf, [pki.issuing, pki.deadEnd], anchors: pki.anchors)
        expectRejected(outcome, kind.failure, at: kind.index)
    }

    // MARK: - AKI/SKI ordering

    @Test("the issuer whose SKI matches the AKI is tried first, whatever the order sent")
    func akiOrdering() throws {
        let root = try TrustPKI.root()
        let wrong = try root.issueCA("Trust Test Issuing CA", slot: TrustSlot.otherIntermediate)
        let right = try root.issueCA("Trust Test Issuing CA", slot: TrustSlot.intermediate)
        let leaf = try right.issueLeaf()
        let outcome = try TrustPKI.validate(leaf, [wrong.certificate, right.certificate], anchors: [root.certificate], trace: true)
        try expectTrusted(outcome, chain: [leaf, right.certificate, root.certificate])
        #expect(outcome.signatureChecks == 2)
        #expect(outcome.trace.count == 1)
    }

    @Test("without an AKI, candidates are tried in the order sent and a bad signature backtracks")
    func noAKIBacktracks() throws {
        let root = try TrustPKI.root()
        let wrong = try root.issueCA("Trust Test Issuing CA", slot: TrustSlot.otherIntermediate)
        let right = try root.issueCA("Trust Test Issuing CA", slot: TrustSlot.intermediate)
        let spec = TrustPKI.leafSpec(extensions: [
            .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .subjectAltName([.dns(TrustPKI.host)]),
        ])
        let leaf = try right.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        // basicX509 does not require the end-entity AKI.
        let outcome = try TrustPKI.validate(
            leaf, [wrong.certificate, right.certificate], anchors: [root.certificate], policy: .basicX509, trace: true)
        try expectTrusted(outcome, chain: [leaf, right.certificate, root.certificate])
        #expect(outcome.signatureChecks == 3)
        try #require(outcome.trace.count == 2)
        #expect(outcome.trace[0].failure?.kind == .badSignature)
        #expect(outcome.trace[0].failure?.certificateIndex == 1)
    }

    // MARK: - Cycles

    /// Cycle CA A and Cycle CA B, each issued by the other; the leaf is issued by A.
    struct Cycle {
        let a: TrustCA
        let b: LabCertificate
        let leaf: LabCertificate

        init() throws {
            let keyA = try TrustPKI.key(TrustSlot.cycleA)
            let keyB = try TrustPKI.key(TrustSlot.cycleB)
            // Self-signed handles only supply the issuer names and key identifiers.
            let handleA = TrustCA(
                certificate: try LabCertificate.issue(TrustPKI.caSpec("Cycle CA A", selfSigned: true), subjectKey: keyA), key: keyA)
            let handleB = TrustCA(
                certificate: try LabCertificate.issue(TrustPKI.caSpec("Cycle CA B", selfSigned: true), subjectKey: keyB), key: keyB)
            a = try handleB.issueCA(TrustPKI.caSpec("Cycle CA A"), key: keyA)
            b = try handleA.issue(TrustPKI.caSpec("Cycle CA B"), key: keyB)
            leaf = try a.issueLeaf()
        }
    }

    @Test("two intermediates issued by each other terminate as untrustedRoot")
    func cycleTerminates() throws {
        let cycle = try Cycle()
        let root = try TrustPKI.root()
        let outcome = try TrustPKI.validate(cycle.leaf, [cycle.a.certificate, cycle.b], anchors: [root.certificate])
        expectRejected(outcome, .untrustedRoot, at: 2)
        #expect(outcome.signatureChecks == 2)
    }

    @Test("a cycle with an exit to an anchor finds the exit")
    func cycleWithExit() throws {
        let cycle = try Cycle()
        let root = try TrustPKI.root()
        let exit = try root.issue(TrustPKI.caSpec("Cycle CA B"), key: TrustPKI.key(TrustSlot.cycleB))
        let outcome = try TrustPKI.validate(cycle.leaf, [cycle.a.certificate, cycle.b, exit], anchors: [root.certificate])
        try expectTrusted(outcome, chain: [cycle.leaf, cycle.a.certificate, exit, root.certificate])
    }

    // MARK: - Anchors inside the path

    /// A self-signed end-entity certificate (a pinned server certificate).
    static func selfSignedLeaf() throws -> LabCertificate {
        let spec = TrustPKI.leafSpec(extensions: [
            .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["serverAuth"]),
            .subjectAltName([.dns(TrustPKI.host)]), .subjectKeyIdentifier(),
        ])
        return try LabCertificate.issue(spec, subjectKey: TrustPKI.key(TrustSlot.selfSignedLeaf))
    }

    @Test("a leaf that is itself an anchor is the whole chain")
    func leafIsAnchor() throws {
        let leaf = try Self.selfSignedLeaf()
        let outcome = try TrustPKI.validate(leaf, [], anchors: [leaf])
        try expectTrusted(outcome, chain: [leaf])
        #expect(outcome.signatureChecks == 0)
        // Not an anchor: the same certificate is untrusted.
        expectRejected(try TrustPKI.validate(leaf, [], anchors: []), .untrustedRoot, at: 0)
        // An anchor leaf still has to match the name.
        expectRejected(
            try TrustPKI.validate(leaf, [], anchors: [leaf], policy: TrustPKI.serverPolicy(host: "other.example.com")),
            .hostnameMismatch, at: 0)
    }

    @Test("an intermediate that is itself an anchor ends the path")
    func intermediateIsAnchor() throws {
        let chain = try TrustChain.make()
        let expected = [chain.leaf, chain.intermediate.certificate]
        try expectTrusted(
            try TrustPKI.validate(chain.leaf, [chain.intermediate.certificate], anchors: [chain.intermediate.certificate]),
            chain: expected)
        try expectTrusted(
            try TrustPKI.validate(
                chain.leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate, chain.intermediate.certificate]),
            chain: expected)
        try expectTrusted(try TrustPKI.validate(chain.leaf, [], anchors: [chain.intermediate.certificate]), chain: expected)
    }

    @Test("a root sent by the peer ends at the anchor copy")
    func peerSentRoot() throws {
        let chain = try TrustChain.make()
        let outcome = try TrustPKI.validate(
            chain.leaf, [chain.root.certificate, chain.intermediate.certificate], anchors: [chain.root.certificate])
        try expectTrusted(outcome, chain: [chain.leaf, chain.intermediate.certificate, chain.root.certificate])
        #expect(outcome.signatureChecks == 2)
    }

    // MARK: - Self-issued intermediates

    /// Root → Rollover CA (old key, pathLen 0) → Rollover CA (new key, self-issued) → leaf.
    struct Rollover {
        let root: TrustCA
        let old: TrustCA
        let link: TrustCA
        let leaf: LabCertificate

        init(selfIssued: Bool) throws {
            root = try TrustPKI.root()
            old = try root.issueCA("Rollover CA", slot: TrustSlot.intermediate, pathLength: 0)
            link = try old.issueCA(
                TrustPKI.caSpec(selfIssued ? "Rollover CA" : "Rollover Sub CA"), key: TrustPKI.key(TrustSlot.rollover))
            leaf = try link.issueLeaf()
        }

        var chain: [LabCertificate] { [leaf, link.certificate, old.certificate, root.certificate] }
    }

    @Test("a self-issued intermediate (key rollover) does not count towards pathLenConstraint")
    func selfIssuedPathLength() throws {
        let rollover = try Rollover(selfIssued: true)
        #expect(try TrustPKI.parse(rollover.link.certificate).isSelfIssued)
        try expectTrusted(
            try TrustPKI.validate(rollover.leaf, [rollover.link.certificate, rollover.old.certificate], anchors: [rollover.root.certificate]),
            chain: rollover.chain)

        // The same shape with a differently named (not self-issued) CA exceeds pathLen 0.
        let plain = try Rollover(selfIssued: false)
        expectRejected(
            try TrustPKI.validate(plain.leaf, [plain.link.certificate, plain.old.certificate], anchors: [plain.root.certificate]),
            .pathLengthExceeded, at: 2)
    }

    @Test("a self-issued intermediate does not count towards maximumIntermediates")
    func selfIssuedDepth() throws {
        let rollover = try Rollover(selfIssued: true)
        var policy = TrustPKI.serverPolicy()
        policy.maximumIntermediates = 1
        try expectTrusted(
            try TrustPKI.validate(
                rollover.leaf, [rollover.old.certificate, rollover.link.certificate], anchors: [rollover.root.certificate], policy: policy),
            chain: rollover.chain)
    }

    // MARK: - Clock and trace

    @Test("the injected clock decides: valid at the reference time, expired two years later")
    func injectedClock() throws {
        let chain = try TrustChain.make()
        try expectTrusted(
            try chain.validate(at: TrustPKI.now),
            chain: [chain.leaf, chain.intermediate.certificate, chain.root.certificate])
        expectRejected(try chain.validate(at: TrustPKI.now + 2 * LabClock.year), .expired, at: 0)
        // Before the leaf existed.
        expectRejected(try chain.validate(at: TrustPKI.now - LabClock.year), .notYetValid, at: 0)
    }

    @Test("the trace records every attempted path with its failure")
    func traceRecordsAttempts() throws {
        let pki = try CrossSigned(.expiredCrossSign)
        let subjects = try [pki.leaf, pki.issuing, pki.deadEnd, pki.otherRoot].map { try TrustPKI.parse($0).subject.rfc4514 }
        let outcome = try TrustPKI.validate(pki.leaf, [pki.issuing, pki.deadEnd, pki.good], anchors: pki.anchors, trace: true)
        try #require(outcome.trace.count == 2)
        #expect(outcome.trace[0].subjects == Array(subjects.prefix(3)))
        #expect(outcome.trace[0].failure?.kind == .expired)
        #expect(outcome.trace[0].failure?.certificateIndex == 2)
        #expect(outcome.trace[0].failure?.subject == subjects[2])
        #expect(outcome.trace[1].subjects == subjects)
        #expect(outcome.trace[1].failure == nil)
        #expect(outcome.trace[1].description.hasSuffix(": trusted"))

        // Without tracing, nothing is recorded.
        let quiet = try TrustPKI.validate(pki.leaf, [pki.issuing, pki.deadEnd, pki.good], anchors: pki.anchors)
        #expect(quiet.trace.isEmpty)
        #expect(quiet.isTrusted)
    }

    @Test("a rejected validation's trace lists each dead end, the last one being the result")
    func traceOfRejection() throws {
        let pki = try CrossSigned(.untrustedCrossSigner)
        // Only the dead-end cross-sign is sent.
        let outcome = try TrustPKI.validate(pki.leaf, [pki.issuing, pki.deadEnd], anchors: pki.anchors, trace: true)
        expectRejected(outcome, .untrustedRoot, at: 2)
        try #require(outcome.trace.count == 1)
        #expect(outcome.trace[0].failure == outcome.failure)
        #expect(outcome.trace[0].subjects.count == 3)
    }
}
