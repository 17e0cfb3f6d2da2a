import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// RFC 5280 §4.2.1.10 name constraints: DNS, IP, email, directory name and URI subtrees,
/// permitted and excluded, applied to every name below the constraining CA.
@Suite("Name constraints")
struct NameConstraintTests {
    /// The constraining intermediate's subtrees, the leaf's SAN and subject, and whether the
    /// chain is within them.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let permitted: [LabGeneralName]
        let excluded: [LabGeneralName]
        let sans: [LabGeneralName]
        let subject: LabName
        let allowed: Bool

        init(
            _ name: String, permitted: [LabGeneralName] = [], excluded: [LabGeneralName] = [], sans: [LabGeneralName],
            subject: LabName = .cn("Constrained Leaf"), _ allowed: Bool
        ) {
            self.name = name
            self.permitted = permitted
            self.excluded = excluded
            self.sans = sans
            self.subject = subject
            self.allowed = allowed
        }

        var testDescription: String { name }
    }

    static let good = LabName([("C", "US"), ("O", "Good Org")])
    static let goodLeaf = LabName([("C", "US"), ("O", "Good Org"), ("CN", "www.example.com")])
    static let badLeaf = LabName([("C", "US"), ("O", "Bad Org"), ("CN", "www.example.com")])

    /// The standard server leaf, with subject C=US, O=Good Org, CN=www.example.com.
    static func goodLeafSpec() -> LabCertificateSpec {
        var spec = TrustPKI.leafSpec()
        spec.subject = goodLeaf
        return spec
    }

    static let table: [Case] = [
        // dNSName: the constraint and every name below it, on label boundaries.
        Case("DNS permitted: subdomain", permitted: [.dns("example.com")], sans: [.dns("www.example.com")], true),
        Case("DNS permitted: the domain itself", permitted: [.dns("example.com")], sans: [.dns("example.com")], true),
        Case("DNS permitted: case-insensitive", permitted: [.dns("Example.COM")], sans: [.dns("WWW.example.com")], true),
        Case("DNS permitted: wildcard inside", permitted: [.dns("example.com")], sans: [.dns("*.example.com")], true),
        Case("DNS permitted: other domain", permitted: [.dns("example.com")], sans: [.dns("www.example.org")], false),
        Case("DNS permitted: not on a label boundary", permitted: [.dns("example.com")], sans: [.dns("wwwexample.com")], false),
        Case("DNS permitted: wildcard wider than the subtree", permitted: [.dns("www.example.com")], sans: [.dns("*.example.com")], false),
        Case(
            "DNS permitted: every SAN is checked", permitted: [.dns("example.com")],
            sans: [.dns("www.example.com"), .dns("www.evil.test")], false),
        Case(
            "DNS permitted: one of several subtrees", permitted: [.dns("example.org"), .dns("example.com")],
            sans: [.dns("www.example.com")], true),
        Case(
            "DNS permitted: the CN is not a DNS name to constrain", permitted: [.dns("example.com")],
            sans: [.dns("www.example.com")], subject: .cn("www.evil.test"), true),
        Case("DNS permitted: IP SAN is another type", permitted: [.dns("example.com")], sans: [.ipAddress("192.0.2.1")], true),
        // dNSName excluded.
        Case("DNS excluded: subdomain", excluded: [.dns("evil.example.com")], sans: [.dns("www.evil.example.com")], false),
        Case("DNS excluded: the domain itself", excluded: [.dns("evil.example.com")], sans: [.dns("evil.example.com")], false),
        Case("DNS excluded: sibling is fine", excluded: [.dns("evil.example.com")], sans: [.dns("www.example.com")], true),
        Case("DNS excluded: wildcard overlapping the subtree", excluded: [.dns("evil.example.com")], sans: [.dns("*.example.com")], false),
        Case(
            "DNS permitted and excluded: excluded wins", permitted: [.dns("example.com")], excluded: [.dns("evil.example.com")],
            sans: [.dns("a.evil.example.com")], false),
        Case(
            "DNS permitted and excluded: outside the exclusion", permitted: [.dns("example.com")],
            excluded: [.dns("evil.example.com")], sans: [.dns("good.example.com")], true),
        // IDNA: A-labels are ordinary labels (RFC 5890); a U-label cannot be a dNSName at all.
        Case("DNS permitted: A-label subtree", permitted: [.dns("xn--bcher-kva.example")], sans: [.dns("www.xn--bcher-kva.example")], true),
        Case("DNS permitted: A-label is not its ASCII look-alike", permitted: [.dns("xn--bcher-kva.example")], sans: [.dns("www.bucher.example")], false),
        Case("DNS excluded: A-label subtree", excluded: [.dns("xn--bcher-kva.example")], sans: [.dns("XN--BCHER-KVA.example")], false),
        // iPAddress: address and mask.
        Case("IP permitted: inside IPv4 range", permitted: [.ipSubnet("10.0.0.0/8")], sans: [.ipAddress("10.1.2.3")], true),
        Case("IP permitted: outside IPv4 range", permitted: [.ipSubnet("10.0.0.0/8")], sans: [.ipAddress("192.168.0.1")], false),
        Case("IP permitted: inside IPv6 range", permitted: [.ipSubnet("2001:db8::/32")], sans: [.ipAddress("2001:db8::1")], true),
        Case("IP permitted: outside IPv6 range", permitted: [.ipSubnet("2001:db8::/32")], sans: [.ipAddress("2001:db9::1")], false),
        Case("IP permitted: IPv6 address against IPv4 range", permitted: [.ipSubnet("10.0.0.0/8")], sans: [.ipAddress("::ffff:10.0.0.1")], false),
        Case("IP permitted: DNS SAN is another type", permitted: [.ipSubnet("10.0.0.0/8")], sans: [.dns("www.example.com")], true),
        Case("IP excluded: inside", excluded: [.ipSubnet("192.168.0.0/16")], sans: [.ipAddress("192.168.1.1")], false),
        Case("IP excluded: outside", excluded: [.ipSubnet("192.168.0.0/16")], sans: [.ipAddress("192.169.1.1")], true),
        // rfc822Name: mailbox, host, or (leading dot) subdomains.
        Case("email permitted: host", permitted: [.email("example.com")], sans: [.email("alice@example.com")], true),
        Case("email permitted: host is exact", permitted: [.email("example.com")], sans: [.email("alice@mail.example.com")], false),
        Case("email permitted: subdomains", permitted: [.email(".example.com")], sans: [.email("alice@mail.example.com")], true),
        Case("email permitted: subdomains exclude the domain", permitted: [.email(".example.com")], sans: [.email("alice@example.com")], false),
        Case("email permitted: mailbox", permitted: [.email("alice@example.com")], sans: [.email("alice@example.com")], true),
        Case("email permitted: other mailbox", permitted: [.email("alice@example.com")], sans: [.email("bob@example.com")], false),
        Case("email excluded: host", excluded: [.email("evil.test")], sans: [.email("alice@evil.test")], false),
        // directoryName: applies to the subject and to directoryName SANs.
        Case("directoryName permitted: subject inside", permitted: [.directoryName(good)], sans: [.dns("www.example.com")], subject: goodLeaf, true),
        Case("directoryName permitted: subject outside", permitted: [.directoryName(good)], sans: [.dns("www.example.com")], subject: badLeaf, false),
        Case(
            "directoryName permitted: subject without the prefix", permitted: [.directoryName(good)], sans: [.dns("www.example.com")],
            subject: .cn("www.example.com"), false),
        Case(
            "directoryName permitted: directoryName SAN outside", permitted: [.directoryName(good)],
            sans: [.dns("www.example.com"), .directoryName(LabName([("C", "US"), ("O", "Bad Org")]))], subject: goodLeaf, false),
        Case(
            "directoryName excluded: subject inside", excluded: [.directoryName(LabName([("C", "US"), ("O", "Bad Org")]))],
            sans: [.dns("www.example.com")], subject: badLeaf, false),
        Case(
            "directoryName excluded: subject outside", excluded: [.directoryName(LabName([("C", "US"), ("O", "Bad Org")]))],
            sans: [.dns("www.example.com")], subject: goodLeaf, true),
        // uniformResourceIdentifier: the host part.
        Case("URI permitted: host in domain", permitted: [.uri(".example.com")], sans: [.dns("www.example.com"), .uri("https://www.example.com/x")], true),
        Case("URI permitted: host outside", permitted: [.uri(".example.com")], sans: [.dns("www.example.com"), .uri("https://www.evil.test/")], false),
    ]

    /// Which CA of root → intermediate → leaf carries the constraints.
    enum ConstrainedAt: Int, CaseIterable, Sendable, CustomTestStringConvertible {
        case intermediate = 1
        case anchor = 2
        var testDescription: String { "\(self)" }
    }

    @Test("subtrees on the issuing intermediate or on the trust anchor", arguments: table, ConstrainedAt.allCases)
    func constraints(_ c: Case, at position: ConstrainedAt) throws {
        let constraint = LabExtension.nameConstraints(permitted: c.permitted, excluded: c.excluded)
        let root = try TrustPKI.root(extensions: TrustPKI.caExtensions(selfSigned: true) + (position == .anchor ? [constraint] : []))
        let intermediate = try root.issueCA(
            TrustPKI.caSpec(
                "Trust Test Constrained CA",
                extensions: TrustPKI.caExtensions(pathLength: 0) + (position == .intermediate ? [constraint] : [])),
            key: TrustPKI.key(TrustSlot.intermediate))
        var spec = TrustPKI.leafSpec(extensions: TrustPKI.leafExtensions(sans: c.sans))
        spec.subject = c.subject
        let leaf = try intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        let outcome = try TrustPKI.validate(
            leaf, [intermediate.certificate], anchors: [root.certificate], policy: TrustPKI.serverPolicy(host: nil))
        // An anchor's constraints also bind the intermediate's subject, which the directoryName
        // rows do not expect ("Trust Test Constrained CA" is outside them).
        let intermediateOutside =
            position == .anchor
            && !c.permitted.filter({
                if case .directoryName = $0 { return true }
                return false
            }).isEmpty
        if c.allowed && !intermediateOutside {
            try expectTrusted(outcome, chain: [leaf, intermediate.certificate, root.certificate])
        } else {
            // The constraining CA is the certificate named.
            expectRejected(outcome, .nameConstraintViolation, at: position.rawValue)
        }
    }

    @Test(
        "without a SAN, rfc822Name constraints apply to the subject's emailAddress (RFC 5280 §4.2.1.10)",
        arguments: [("alice@example.com", true), ("alice@evil.test", false)])
    func subjectEmailAddress(email: String, allowed: Bool) throws {
        let root = try TrustPKI.root()
        let intermediate = try root.issueCA(
            TrustPKI.caSpec(
                "Trust Test Constrained CA",
                extensions: TrustPKI.caExtensions() + [.nameConstraints(permitted: [.email("example.com")], excluded: [])]),
            key: TrustPKI.key(TrustSlot.intermediate))
        let spec = LabCertificateSpec(
            subject: LabName([("CN", "Alice"), ("emailAddress", email)]), notBefore: TrustPKI.leafValidity.notBefore,
            notAfter: TrustPKI.leafValidity.notAfter,
            extensions: [.basicConstraints(ca: false), .keyUsage([.digitalSignature]), .subjectKeyIdentifier(), .authorityKeyIdentifier()])
        let leaf = try intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        // basicX509 does not require a SAN, so the subject is the only place the address is.
        let outcome = try TrustPKI.validate(leaf, [intermediate.certificate], anchors: [root.certificate], policy: .basicX509)
        if allowed {
            try expectTrusted(outcome, chain: [leaf, intermediate.certificate, root.certificate])
        } else {
            // "the rfc822Name constraint MUST be applied to the attribute of type emailAddress in
            // the subject distinguished name" (it is not enough to compare the directoryName).
            expectRejected(outcome, .nameConstraintViolation, at: 1)
        }
    }

    @Test("a trust anchor's constraints apply to everything below it")
    func anchorConstraints() throws {
        let root = try TrustPKI.root(
            extensions: TrustPKI.caExtensions(selfSigned: true) + [.nameConstraints(permitted: [.dns("example.com")], excluded: [])])
        let intermediate = try root.issueCA("Trust Test Issuing CA", slot: TrustSlot.intermediate, pathLength: 0)
        let inside = try intermediate.issueLeaf("www.example.com")
        let outside = try intermediate.issueLeaf("www.evil.test")
        try expectTrusted(
            try TrustPKI.validate(inside, [intermediate.certificate], anchors: [root.certificate]),
            chain: [inside, intermediate.certificate, root.certificate])
        expectRejected(
            try TrustPKI.validate(
                outside, [intermediate.certificate], anchors: [root.certificate], policy: TrustPKI.serverPolicy(host: "www.evil.test")),
            .nameConstraintViolation, at: 2)
    }

    @Test("an intermediate's own subject is constrained by the CA above it, not by itself")
    func intermediateSubject() throws {
        let root = try TrustPKI.root(
            extensions: TrustPKI.caExtensions(selfSigned: true) + [.nameConstraints(permitted: [.directoryName(Self.good)], excluded: [])])
        // Outside the root's subtree.
        let outsider = try root.issueCA("Trust Test Issuing CA", slot: TrustSlot.intermediate)
        let leaf = try outsider.issue(
            Self.goodLeafSpec(), key: TrustPKI.key(TrustSlot.leaf))
        expectRejected(
            try TrustPKI.validate(leaf, [outsider.certificate], anchors: [root.certificate]), .nameConstraintViolation, at: 2)

        // Inside it: the intermediate's subject and the leaf's are both within C=US, O=Good Org.
        let insider = try root.issueCA(
            LabCertificateSpec(
                subject: LabName([("C", "US"), ("O", "Good Org"), ("CN", "Good Issuing CA")]), notBefore: TrustPKI.caValidity.notBefore,
                notAfter: TrustPKI.caValidity.notAfter, extensions: TrustPKI.caExtensions()),
            key: TrustPKI.key(TrustSlot.otherIntermediate))
        let goodLeaf = try insider.issue(
            Self.goodLeafSpec(), key: TrustPKI.key(TrustSlot.leaf))
        try expectTrusted(
            try TrustPKI.validate(goodLeaf, [insider.certificate], anchors: [root.certificate]),
            chain: [goodLeaf, insider.certificate, root.certificate])
    }

    @Test("constraints of two CAs in a path both apply")
    func stackedConstraints() throws {
        let root = try TrustPKI.root(
            extensions: TrustPKI.caExtensions(selfSigned: true) + [.nameConstraints(permitted: [.dns("example.com")], excluded: [])])
        let intermediate = try root.issueCA(
            TrustPKI.caSpec(
                "Trust Test Issuing CA",
                extensions: TrustPKI.caExtensions() + [.nameConstraints(permitted: [], excluded: [.dns("internal.example.com")])]),
            key: TrustPKI.key(TrustSlot.intermediate))
        let fine = try intermediate.issueLeaf("www.example.com")
        let excludedBelow = try intermediate.issueLeaf("db.internal.example.com")
        let outsideAbove = try intermediate.issueLeaf("www.example.org")
        try expectTrusted(
            try TrustPKI.validate(fine, [intermediate.certificate], anchors: [root.certificate]),
            chain: [fine, intermediate.certificate, root.certificate])
        let nameless = TrustPKI.serverPolicy(host: nil)
        expectRejected(
            try TrustPKI.validate(excludedBelow, [intermediate.certificate], anchors: [root.certificate], policy: nameless),
            .nameConstraintViolation, at: 1)
        expectRejected(
            try TrustPKI.validate(outsideAbove, [intermediate.certificate], anchors: [root.certificate], policy: nameless),
            .nameConstraintViolation, at: 2)
    }
}
