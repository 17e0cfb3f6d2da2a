import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// Name chaining under RFC 5280 §7.1 (PKITS 4.3): a child's issuer name finds its issuer when
/// the two differ only in case, insignificant spaces or string type, at every position (an
/// intermediate sent by the peer, a trust anchor in the store), and directoryName constraints
/// compare the same way. Names that really differ still do not chain.
@Suite("Name chaining (RFC 5280 7.1)")
struct NameChainingTests {
    static let caName = LabName(rdns: [[LabAttribute("C", "US")], [LabAttribute("O", "Chaining Tests")], [LabAttribute("CN", "Issuing CA")]])

    /// How the child spells its issuer's name.
    enum Spelling: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case identical, otherCase, extraSpaces, utf8InsteadOfPrintable, otherWord
        var testDescription: String { rawValue }

        var name: LabName {
            switch self {
            case .identical: return NameChainingTests.caName
            case .otherCase:
                return LabName(rdns: [[LabAttribute("C", "us")], [LabAttribute("O", "CHAINING tests")], [LabAttribute("CN", "issuing ca")]])
            case .extraSpaces:
                return LabName(rdns: [[LabAttribute("C", "US")], [LabAttribute("O", "  Chaining   Tests ")], [LabAttribute("CN", "Issuing  CA")]])
            case .utf8InsteadOfPrintable:
                return LabName(rdns: [
                    [LabAttribute("C", "US", stringType: .utf8)], [LabAttribute("O", "Chaining Tests", stringType: .printable)],
                    [LabAttribute("CN", "Issuing CA", stringType: .printable)],
                ])
            case .otherWord:
                return LabName(rdns: [[LabAttribute("C", "US")], [LabAttribute("O", "Chaining Tests")], [LabAttribute("CN", "Issuing CB")]])
            }
        }

        var chains: Bool { self != .otherWord }
    }

    enum Position: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The renamed issuer is an intermediate the peer sends.
        case intermediate
        /// The renamed issuer is the trust anchor.
        case anchor
        var testDescription: String { rawValue }
    }

    @Test("an issuer name that matches under 7.1 chains; one that differs does not", arguments: Spelling.allCases, Position.allCases)
    func chaining(_ spelling: Spelling, _ position: Position) throws {
        let root = try TrustPKI.root()
        let spec = LabCertificateSpec(
            subject: Self.caName, notBefore: TrustPKI.caValidity.notBefore, notAfter: TrustPKI.caValidity.notAfter,
            extensions: TrustPKI.caExtensions())
        let ca = try root.issueCA(spec, key: TrustPKI.key(TrustSlot.intermediate))
        var leafSpec = TrustPKI.leafSpec()
        leafSpec.issuerNameOverride = spelling.name
        let leaf = try ca.issue(leafSpec, key: TrustPKI.key(TrustSlot.leaf))
        let outcome: ValidationOutcome
        let expectedChain: [LabCertificate]
        switch position {
        case .intermediate:
            outcome = try TrustPKI.validate(leaf, [ca.certificate], anchors: [root.certificate])
            expectedChain = [leaf, ca.certificate, root.certificate]
        case .anchor:
            // The CA itself is trusted: found in the store by its (differently spelled) name.
            outcome = try TrustPKI.validate(leaf, [], anchors: [root.certificate, ca.certificate])
            expectedChain = [leaf, ca.certificate]
        }
        if spelling.chains {
            try expectTrusted(outcome, chain: expectedChain)
        } else {
            expectRejected(outcome, .untrustedRoot, at: 0)
        }
    }

    @Test("a store with two encodings of one name finds the anchor the child was signed by")
    func mixedEncodingsInTheStore() throws {
        // Two roots whose subjects match under 7.1 but differ in bytes, with different keys.
        let spelledA = LabName(rdns: [[LabAttribute("CN", "Twin Root")]])
        let spelledB = LabName(rdns: [[LabAttribute("CN", "twin root", stringType: .printable)]])
        func root(_ name: LabName, slot: Int) throws -> TrustCA {
            let key = try TrustPKI.key(slot)
            let spec = LabCertificateSpec(
                subject: name, notBefore: TrustPKI.rootValidity.notBefore, notAfter: TrustPKI.rootValidity.notAfter,
                extensions: TrustPKI.caExtensions(selfSigned: true))
            return TrustCA(certificate: try LabCertificate.issue(spec, subjectKey: key), key: key)
        }
        let a = try root(spelledA, slot: TrustSlot.root)
        let b = try root(spelledB, slot: TrustSlot.otherRoot)
        // The leaf names root A's spelling but is signed by root B.
        var spec = TrustPKI.leafSpec()
        spec.issuerNameOverride = spelledA
        let leaf = try LabCertificate.issue(spec, subjectKey: TrustPKI.key(TrustSlot.leaf), issuer: b.issuer)
        try expectTrusted(try TrustPKI.validate(leaf, [], anchors: [a.certificate, b.certificate]), chain: [leaf, b.certificate])
    }

    @Test("directoryName constraints compare as 7.1 does: a re-cased name is inside a permitted and an excluded subtree")
    func directoryNameConstraints() throws {
        let subtree = LabName(rdns: [[LabAttribute("C", "US")], [LabAttribute("O", "Permitted Org")]])
        let leafName = LabName(rdns: [
            [LabAttribute("C", "us")], [LabAttribute("O", "PERMITTED  org", stringType: .printable)], [LabAttribute("CN", TrustPKI.host)],
        ])
        for excluded in [false, true] {
            let root = try TrustPKI.root()
            let constraint: LabExtension =
                excluded
                ? .nameConstraints(permitted: [], excluded: [.directoryName(subtree)])
                : .nameConstraints(permitted: [.directoryName(subtree)], excluded: [])
            let ca = try root.issueCA(
                TrustPKI.caSpec("Constrained CA", extensions: TrustPKI.caExtensions() + [constraint]), key: TrustPKI.key(TrustSlot.intermediate))
            var spec = TrustPKI.leafSpec()
            spec.subject = leafName
            let leaf = try ca.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
            let outcome = try TrustPKI.validate(leaf, [ca.certificate], anchors: [root.certificate])
            if excluded {
                expectRejected(outcome, .nameConstraintViolation, at: 1)
            } else {
                try expectTrusted(outcome, chain: [leaf, ca.certificate, root.certificate])
            }
        }
    }
}
