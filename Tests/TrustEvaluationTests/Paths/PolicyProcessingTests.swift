import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// RFC 5280 §6.1 certificate-policy processing on generated paths root → CA 1 → CA 2 → leaf:
/// the valid_policy_tree, the explicit_policy / inhibit_anyPolicy / policy_mapping counters,
/// the four §6.1.1 inputs, the policy sets a verified chain carries, and the budget that keeps
/// the CVE-2023-0464 shape (every policy mapped to every other) bounded.
@Suite("Certificate policies (RFC 5280 6.1)")
struct PolicyProcessingTests {
    static let p1 = "1.3.6.1.4.1.99999.1.1"
    static let p2 = "1.3.6.1.4.1.99999.1.2"
    static let p3 = "1.3.6.1.4.1.99999.1.3"
    static let any = "2.5.29.32.0"

    static func oid(_ dotted: String) -> ASN1ObjectIdentifier { ASN1ObjectIdentifier(dotted)! }

    /// A path whose CAs and leaf carry `ca1`, `ca2` and `leaf` on top of the standard profile.
    struct PolicyPath {
        let root: TrustCA
        let cas: [TrustCA]
        let leaf: LabCertificate

        init(_ extras: [[LabExtension]], leaf leafExtras: [LabExtension], selfIssuedLast: Bool = false) throws {
            root = try TrustPKI.root()
            var issuer = root
            var cas: [TrustCA] = []
            for (i, extra) in extras.enumerated() {
                // A self-issued CA keeps its issuer's name (a key rollover).
                let name = selfIssuedLast && i == extras.count - 1 ? "Policy CA \(i - 1)" : "Policy CA \(i)"
                let spec = TrustPKI.caSpec(name, extensions: TrustPKI.caExtensions() + extra)
                issuer = try issuer.issueCA(spec, key: TrustPKI.key(TrustSlot.meshBase + i))
                cas.append(issuer)
            }
            self.cas = cas
            leaf = try issuer.issue(
                TrustPKI.leafSpec(extensions: TrustPKI.leafExtensions(sans: [.dns(TrustPKI.host)]) + leafExtras), key: TrustPKI.key(TrustSlot.leaf))
        }

        func validate(_ inputs: CertificatePolicyInputs = .init(), profile: ValidationPolicy.Profile = .rfc5280) throws -> ValidationOutcome {
            var policy = ValidationPolicy.basicX509
            policy.profile = profile
            policy.policyInputs = inputs
            return try TrustPKI.validate(leaf, cas.map(\.certificate), anchors: [root.certificate], policy: policy)
        }
    }

    static func policies(_ oids: String...) -> LabExtension { .certificatePolicies(oids.map { LabPolicy($0) }) }

    static func explicit(_ set: [String] = [any]) -> CertificatePolicyInputs {
        CertificatePolicyInputs(initialPolicySet: Set(set.map(oid)), initialExplicitPolicy: true)
    }

    /// One row: a path, the inputs, and either the user-constrained set or the failure.
    struct Row: Sendable, CustomTestStringConvertible {
        let label: String
        let cas: [[LabExtension]]
        let leaf: [LabExtension]
        var selfIssuedLast = false
        let inputs: CertificatePolicyInputs
        /// The user-constrained policy set when the path is valid, else nil.
        let valid: [String]?
        /// The certificate index of the failure when invalid (0 = leaf).
        var failureIndex: Int? = nil
        var testDescription: String { label }
    }

    static let rows: [Row] = [
        Row(label: "one policy throughout", cas: [[policies(p1)], [policies(p1)]], leaf: [policies(p1)], inputs: explicit(), valid: [p1]),
        Row(
            label: "the user set picks among the path's policies",
            cas: [[policies(p1, p2)], [policies(p1, p2)]], leaf: [policies(p1, p2)], inputs: explicit([p2]), valid: [p2]),
        Row(
            label: "a policy the user does not accept is no policy (6.1.5 (g))",
            cas: [[policies(p1)], [policies(p1)]], leaf: [policies(p1)], inputs: explicit([p2]), valid: nil, failureIndex: 0),
        Row(label: "without explicit policy an empty tree is fine", cas: [[], [policies(p1)]], leaf: [policies(p1)], inputs: .init(), valid: []),
        Row(
            label: "a CA without policies empties the tree (6.1.3 (e)) and fails an explicit policy at that CA",
            cas: [[], [policies(p1)]], leaf: [policies(p1)], inputs: explicit(), valid: nil, failureIndex: 2),
        Row(
            label: "different policies do not chain (6.1.3 (d))",
            cas: [[policies(p1)], [policies(p2)]], leaf: [policies(p2)], inputs: explicit(), valid: nil, failureIndex: 1),
        Row(
            label: "requireExplicitPolicy 0 in CA 1 needs a policy through the leaf",
            cas: [[policies(p1), .policyConstraints(requireExplicitPolicy: 0, inhibitPolicyMapping: nil)], [policies(p1)]], leaf: [],
            inputs: .init(), valid: nil, failureIndex: 0),
        Row(
            label: "requireExplicitPolicy 2 in CA 1 counts CA 2 and the leaf (6.1.4 (h), 6.1.5 (a))",
            cas: [[policies(p1), .policyConstraints(requireExplicitPolicy: 2, inhibitPolicyMapping: nil)], [policies(p1)]], leaf: [],
            inputs: .init(), valid: nil, failureIndex: 0),
        Row(
            label: "requireExplicitPolicy 3 in CA 1 lies beyond the leaf",
            cas: [[policies(p1), .policyConstraints(requireExplicitPolicy: 3, inhibitPolicyMapping: nil)], [policies(p1)]], leaf: [],
            inputs: .init(), valid: []),
        Row(
            label: "a self-issued CA does not count towards requireExplicitPolicy (6.1.4 (h))",
            cas: [[policies(p1), .policyConstraints(requireExplicitPolicy: 3, inhibitPolicyMapping: nil)], [policies(p1)], [policies(p1)]],
            leaf: [], selfIssuedLast: true, inputs: .init(), valid: []),
        Row(
            label: "the same path without the self-issued CA's exemption would need a policy",
            cas: [[policies(p1), .policyConstraints(requireExplicitPolicy: 3, inhibitPolicyMapping: nil)], [policies(p1)], [policies(p1)]],
            leaf: [], inputs: .init(), valid: nil, failureIndex: 0),
        Row(
            label: "the leaf's own requireExplicitPolicy 0 (6.1.5 (b))",
            cas: [[policies(p1)], [policies(p1)]], leaf: [policies(p2), .policyConstraints(requireExplicitPolicy: 0, inhibitPolicyMapping: nil)],
            inputs: .init(), valid: nil, failureIndex: 0),
        Row(
            label: "a mapping P1 → P2 in CA 1: the path is valid for P1 in the anchor's domain (6.1.4 (b)(1))",
            cas: [[policies(p1), .policyMappings([LabPolicyMapping(p1, p2)])], [policies(p2)]], leaf: [policies(p2)],
            inputs: explicit([p1]), valid: [p1]),
        Row(
            label: "initial-policy-mapping-inhibit deletes the mapped policy (6.1.4 (b)(2))",
            cas: [[policies(p1), .policyMappings([LabPolicyMapping(p1, p2)])], [policies(p2)]], leaf: [policies(p2)],
            inputs: CertificatePolicyInputs(initialExplicitPolicy: true, initialPolicyMappingInhibit: true), valid: nil, failureIndex: 1),
        Row(
            label: "inhibitPolicyMapping 0 in CA 1 disables CA 2's mappings",
            cas: [
                [policies(p1), .policyConstraints(requireExplicitPolicy: nil, inhibitPolicyMapping: 0)],
                [policies(p1), .policyMappings([LabPolicyMapping(p1, p2)])],
            ],
            leaf: [policies(p2)], inputs: explicit(), valid: nil, failureIndex: 0),
        Row(
            label: "a mapping through anyPolicy (6.1.4 (b)(1), second case)",
            cas: [[policies(any), .policyMappings([LabPolicyMapping(p1, p2)])], [policies(p2)]], leaf: [policies(p2)],
            inputs: explicit([p1]), valid: [p1]),
        Row(
            label: "anyPolicy in the CAs carries the leaf's policy", cas: [[policies(any)], [policies(any)]], leaf: [policies(p1)],
            inputs: explicit([p1]), valid: [p1]),
        Row(
            label: "initial-any-policy-inhibit: anyPolicy in a CA matches nothing (6.1.3 (d)(2))",
            cas: [[policies(any)], [policies(any)]], leaf: [policies(p1)],
            inputs: CertificatePolicyInputs(initialExplicitPolicy: true, initialAnyPolicyInhibit: true), valid: nil, failureIndex: 2),
        Row(
            label: "inhibitAnyPolicy 0 in CA 1 stops anyPolicy in CA 2 (6.1.4 (j))",
            cas: [[policies(p1), .inhibitAnyPolicy(0)], [policies(any)]], leaf: [policies(p1)], inputs: explicit(), valid: nil, failureIndex: 1),
        Row(
            label: "anyPolicy all the way: valid for any policy, and for each user policy",
            cas: [[policies(any)], [policies(any)]], leaf: [policies(any)], inputs: explicit([p3]), valid: [p3]),
    ]

    @Test("the policy tree, its counters and inputs", arguments: rows)
    func tree(_ row: Row) throws {
        let path = try PolicyPath(row.cas, leaf: row.leaf, selfIssuedLast: row.selfIssuedLast)
        let outcome = try path.validate(row.inputs)
        if let valid = row.valid {
            let chain = try #require(outcome.chain, "rejected: \(outcome.failure.map(\.description) ?? "")")
            #expect(Set(chain.policies.userConstrained.map(\.identifier)) == Set(valid.map(Self.oid)))
        } else {
            expectRejected(outcome, .policyViolation, at: row.failureIndex)
        }
    }

    @Test("the chain carries both sets: authorities-constrained and user-constrained, with the leaf's qualifiers")
    func outputs() throws {
        let notice = LabPolicy(Self.p1, cpsURI: "https://cps.example/p1")
        let path = try PolicyPath(
            [[Self.policies(Self.p1, Self.p2)], [Self.policies(Self.p1, Self.p2)]], leaf: [.certificatePolicies([notice, LabPolicy(Self.p2)])])
        let chain = try #require(try path.validate(CertificatePolicyInputs(initialPolicySet: [Self.oid(Self.p1)])).chain)
        #expect(Set(chain.policies.authoritiesConstrained.map(\.identifier)) == [Self.oid(Self.p1), Self.oid(Self.p2)])
        #expect(chain.policies.userConstrained.map(\.identifier) == [Self.oid(Self.p1)])
        #expect(chain.policies.userConstrained.first?.qualifiers.first?.cpsURI == "https://cps.example/p1")
        // Processed during validation (explicit policy) or on request: the same sets.
        var explicitInputs = CertificatePolicyInputs(initialPolicySet: [Self.oid(Self.p1)])
        explicitInputs.initialExplicitPolicy = true
        let processed = try #require(try path.validate(explicitInputs).chain)
        #expect(processed.policies == chain.policies)
    }

    @Test("policyConstraints and inhibitAnyPolicy must be critical under the Web PKI, either under RFC 5280 (PKITS 4.8, 4.12)")
    func criticality() throws {
        let soft = try PolicyPath(
            [[Self.policies(Self.p1), .policyConstraints(requireExplicitPolicy: 0, inhibitPolicyMapping: nil, critical: false)], [Self.policies(Self.p1)]],
            leaf: [Self.policies(Self.p1)])
        try expectTrusted(try soft.validate(), chain: [soft.leaf] + soft.cas.reversed().map(\.certificate) + [soft.root.certificate])
        expectRejected(try soft.validate(profile: .webPKI), .extensionProfileViolation, at: 2)
        let inhibit = try PolicyPath(
            [[Self.policies(Self.p1), .inhibitAnyPolicy(1, critical: false)], [Self.policies(Self.p1)]], leaf: [Self.policies(Self.p1)])
        #expect(try inhibit.validate().isTrusted)
        expectRejected(try inhibit.validate(profile: .webPKI), .extensionProfileViolation, at: 2)
    }

    @Test("a mapping to or from anyPolicy is a policyViolation at the mapping CA (6.1.4 (a))", arguments: [true, false])
    func mappingAnyPolicy(toAny: Bool) throws {
        let mapping = toAny ? LabPolicyMapping(Self.p1, Self.any) : LabPolicyMapping(Self.any, Self.p1)
        let path = try PolicyPath([[Self.policies(Self.p1), .policyMappings([mapping])], [Self.policies(Self.p1)]], leaf: [Self.policies(Self.p1)])
        expectRejected(try path.validate(), .policyViolation, at: 2)
    }

    // MARK: - Bounded work (CVE-2023-0464)

    /// `levels` CAs, each asserting `width` policies and mapping every one of them to every
    /// other: the RFC 5280 tree has width^levels leaves; the graph has width nodes per level.
    static func mesh(levels: Int, width: Int) throws -> PolicyPath {
        let oids = (1...width).map { "1.3.6.1.4.1.99999.9.\($0)" }
        let mappings = oids.flatMap { a in oids.map { b in LabPolicyMapping(a, b) } }
        let ca: [LabExtension] = [.certificatePolicies(oids.map { LabPolicy($0) }), .policyMappings(mappings)]
        return try PolicyPath(Array(repeating: ca, count: levels), leaf: [.certificatePolicies(oids.map { LabPolicy($0) })])
    }

    @Test("the CVE-2023-0464 shape stays polynomial: 8 levels × 40 policies each mapped to all 40 (a 40^8-node tree)")
    func exponentialShapeIsBounded() throws {
        let path = try Self.mesh(levels: 8, width: 40)
        let outcome = try path.validate(Self.explicit())
        #expect(outcome.isTrusted, "\(outcome.failure.map(\.description) ?? "")")
        // The tree would need 6.5·10^12 nodes; the graph spends a few units per edge (40² per
        // level), well inside the 2^18 budget that bounds any shape to a few milliseconds.
        #expect(outcome.policyGraphWork > 8 * 40 * 40)
        #expect(outcome.policyGraphWork < 100_000, "policy graph work \(outcome.policyGraphWork)")
        // The chain's policy sets come from the same graph: every one of the 40 policies.
        #expect(try #require(outcome.chain).policies.userConstrained.count == 40)
    }

    @Test("a hostile width exhausts the policy budget and stops: budgetExhausted, never unbounded work")
    func hostileWidthExhaustsBudget() throws {
        // 10,000 policies in CA 1, carried by anyPolicy through six more CAs and the leaf:
        // each level costs a few units per policy, together more than the budget.
        let wide: [LabExtension] = [.certificatePolicies((1...10_000).map { LabPolicy("1.3.6.1.4.1.99999.8.\($0)") })]
        let carry: [LabExtension] = [Self.policies(Self.any)]
        let path = try PolicyPath([wide] + Array(repeating: carry, count: 6), leaf: carry)
        let outcome = try path.validate(Self.explicit())
        #expect(outcome.failure?.kind == .budgetExhausted, "\(outcome.failure.map(\.description) ?? "trusted")")
        // Stopped when the whole budget was spent, and not a unit later.
        #expect(outcome.policyGraphWork == 1 << 18)
    }
}
