import CertificateParsing

/// RFC 5280 §6.1 certificate-policy processing: the valid_policy_tree with its qualifiers and
/// the explicit_policy, inhibit_anyPolicy and policy_mapping state variables, run over a
/// complete path from the certificate the trust anchor issued (certificate 1) down to the leaf
/// (certificate n). The trust anchor itself is an input of §6.1.1, not a path certificate, so
/// its own policy extensions are not processed.
///
/// The tree is kept in the graph form of RFC 9618 ("Updates to X.509 Policy Validation"): a
/// policy that several parents expect becomes one node with several parents instead of one
/// copy per parent. The graph accepts exactly the paths the tree accepts and yields the same
/// policy sets, but grows with the number of policies per certificate instead of exponentially
/// with the path length (the CVE-2023-0464 shape: every certificate mapping every policy to
/// every other).
///
/// The work is bounded twice. Structurally: policy OIDs are numbered once per path, levels are
/// flat arrays indexed by those numbers, and the parents expecting each policy are found by a
/// counting sort, so a level costs in proportion to its nodes and edges. And by budget: every
/// node, edge and index entry spends one unit of ``Budget/policyGraphWork``, so a hostile
/// certificate with tens of thousands of policies ends the validation within milliseconds.
struct PolicyGraph {
    /// A node of the graph at some depth (RFC 5280 §6.1.2 (a)).
    struct Node {
        /// valid_policy, as a policy number.
        let policy: Int32
        /// qualifier_set: an index into ``qualifierSets``.
        let qualifiers: Int32
        /// expected_policy_set: -1 for the node's own policy alone (the usual case), else an
        /// index into ``expectedSets``.
        var expected: Int32
        /// The node's parents at the previous depth: a range of the level's ``Level/parents``.
        let parentStart: Int32
        let parentCount: Int32
        /// Nodes are deleted in place, so that parent indices stay valid.
        var alive = true
    }

    /// One depth of the graph.
    struct Level {
        var nodes: [Node] = []
        /// Parent indices of every node, node by node.
        var parents: [Int32] = []
        /// Policy number → index of its (only) node at this depth, or -1.
        var byPolicy: [Int32]

        init(policies: Int) {
            byPolicy = [Int32](repeating: -1, count: policies)
        }

        /// The living node for `policy`, if any.
        func node(for policy: Int32) -> Int? {
            let index = byPolicy[Int(policy)]
            guard index >= 0, nodes[Int(index)].alive else { return nil }
            return Int(index)
        }

        func parents(of node: Node) -> ArraySlice<Int32> {
            parents[Int(node.parentStart)..<Int(node.parentStart + node.parentCount)]
        }

        mutating func append(policy: Int32, qualifiers: Int32, expected: Int32 = -1, parents nodeParents: ArraySlice<Int32>) {
            let start = Int32(parents.count)
            for parent in nodeParents { parents.append(parent) }
            byPolicy[Int(policy)] = Int32(nodes.count)
            nodes.append(Node(policy: policy, qualifiers: qualifiers, expected: expected, parentStart: start, parentCount: Int32(nodeParents.count)))
        }

        mutating func append(policy: Int32, qualifiers: Int32, parent: Int32) {
            byPolicy[Int(policy)] = Int32(nodes.count)
            nodes.append(Node(policy: policy, qualifiers: qualifiers, expected: -1, parentStart: Int32(parents.count), parentCount: 1))
            parents.append(parent)
        }

        var isEmpty: Bool { !nodes.contains(where: \.alive) }
    }

    /// What processing concluded.
    enum Outcome {
        /// The path is valid for policies; the sets are filled only when outputs were asked for.
        case valid(ValidPolicies)
        /// The path fails policy processing at `index` (an index into the path as built, leaf
        /// first).
        case invalid(ValidationFailure, index: Int)
        case budgetExhausted
    }

    /// An OID as a dictionary key, hashed with one FNV-1a pass over its bytes: numbering the
    /// policies of a path is one lookup per policy read, and must stay cheap for a
    /// certificate listing thousands.
    struct Key: Hashable {
        let oid: ASN1ObjectIdentifier

        func hash(into hasher: inout Hasher) {
            var digest: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in oid.bytes { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01B3 }
            hasher.combine(digest)
        }

        static func == (lhs: Key, rhs: Key) -> Bool { lhs.oid == rhs.oid }
    }

    /// Policy number → OID; number 0 is anyPolicy.
    private(set) var oids: [ASN1ObjectIdentifier] = [OID.anyPolicy]
    private var numbers: [Key: Int32] = [Key(oid: OID.anyPolicy): 0]
    /// Qualifier sets by index; index 0 is the empty set.
    private var qualifierSets: [[PolicyQualifier]] = [[]]
    /// Mapped expected_policy_sets by index.
    private var expectedSets: [[Int32]] = []
    /// levels[i] holds the nodes of depth i; `nil` once the graph is NULL.
    private(set) var levels: [Level]?

    static let anyPolicy: Int32 = 0

    // MARK: - The state machine

    /// Processes `path` (leaf first, as the path builder holds it; the last element is the trust
    /// anchor and is not processed) with the §6.1.1 inputs of `inputs`. With `outputs`, a valid
    /// path's authorities- and user-constrained sets are computed too (§6.1.6).
    static func process(_ path: [Certificate], _ inputs: CertificatePolicyInputs, outputs: Bool, budget: inout Budget) -> Outcome {
        // Certificates 1…n of §6.1, top-down: certificate 1 is the one the anchor issued.
        let n = path.count - 1
        guard n > 0 else {
            // The leaf is itself the trust anchor: nothing constrains the policies.
            let any = [ValidPolicy(identifier: OID.anyPolicy, qualifiers: [])]
            return .valid(ValidPolicies(authoritiesConstrained: any, userConstrained: inputs.userPolicies(orAny: any)))
        }
        var graph = PolicyGraph()
        // Number every policy OID of the path and the user set once.
        var certificatePolicies: [[(policy: Int32, qualifiers: Int32)]?] = []
        var certificateMappings: [[(issuer: Int32, subject: Int32)]] = []
        graph.numbers.reserveCapacity(
            path.dropLast().reduce(1) { $0 + ($1.extensions.certificatePolicies?.count ?? 0) + 2 * ($1.extensions.policyMappings?.count ?? 0) })
        for i in 1...n {
            let extensions = path[n - i].extensions
            let policies = extensions.certificatePolicies ?? []
            let mappings = extensions.policyMappings ?? []
            guard budget.spendPolicyGraphWork(policies.count + 2 * mappings.count) else { return .budgetExhausted }
            certificatePolicies.append(
                extensions.certificatePolicies.map { list in list.map { (graph.number($0.policyIdentifier), graph.qualifierIndex($0.qualifiers)) } })
            certificateMappings.append(mappings.map { (graph.number($0.issuerDomainPolicy), graph.number($0.subjectDomainPolicy)) })
        }
        let userSet = inputs.initialPolicySet.contains(OID.anyPolicy) ? nil : inputs.initialPolicySet.sorted { $0.dotted < $1.dotted }.map { graph.number($0) }
        var root = Level(policies: graph.oids.count)
        root.append(policy: anyPolicy, qualifiers: 0, parents: [][...])
        graph.levels = [root]

        // §6.1.2 (d), (e), (f): explicit_policy, inhibit_anyPolicy and policy_mapping start at
        // n+1 unless the corresponding initial input is set.
        var explicitPolicy = inputs.initialExplicitPolicy ? 0 : n + 1
        var inhibitAnyPolicy = inputs.initialAnyPolicyInhibit ? 0 : n + 1
        var policyMapping = inputs.initialPolicyMappingInhibit ? 0 : n + 1
        for i in 1...n {
            let pathIndex = n - i
            let certificate = path[pathIndex]
            let selfIssued = certificate.isSelfIssued
            // §6.1.3 (d), (e): the certificate's policies extend the graph, or make it NULL.
            if let policies = certificatePolicies[i - 1] {
                let allowAny = inhibitAnyPolicy > 0 || (i < n && selfIssued)
                guard graph.addLevel(policies, anyPolicyAllowed: allowAny, budget: &budget) else { return .budgetExhausted }
            } else {
                graph.levels = nil
            }
            // §6.1.3 (f): explicit_policy > 0 or a non-NULL graph.
            if explicitPolicy == 0 && graph.levels == nil {
                return .invalid(
                    ValidationFailure(.policyViolation, "no valid certificate policy, and an explicit policy is required (RFC 5280 6.1.3 (f))"),
                    index: pathIndex)
            }
            guard i < n else { break }
            // §6.1.4 (a), (b): policy mappings. Mappings to or from anyPolicy are refused by the
            // certificate rules (CertificateProfile, §6.1.4 (a)) before the path gets here.
            if !certificateMappings[i - 1].isEmpty {
                guard graph.applyMappings(certificateMappings[i - 1], mappingAllowed: policyMapping > 0, budget: &budget) else { return .budgetExhausted }
            }
            // §6.1.4 (h): the counters count non-self-issued certificates only.
            if !selfIssued {
                if explicitPolicy > 0 { explicitPolicy -= 1 }
                if policyMapping > 0 { policyMapping -= 1 }
                if inhibitAnyPolicy > 0 { inhibitAnyPolicy -= 1 }
            }
            // §6.1.4 (i), (j): constraints can only tighten the counters.
            if let constraints = certificate.extensions.policyConstraints {
                if let require = constraints.requireExplicitPolicy, require < explicitPolicy { explicitPolicy = require }
                if let inhibit = constraints.inhibitPolicyMapping, inhibit < policyMapping { policyMapping = inhibit }
            }
            if let skip = certificate.extensions.inhibitAnyPolicy, skip < inhibitAnyPolicy { inhibitAnyPolicy = skip }
        }
        // §6.1.5 (a), (b): the leaf's own constraint counts.
        if explicitPolicy > 0 { explicitPolicy -= 1 }
        if path[0].extensions.policyConstraints?.requireExplicitPolicy == 0 { explicitPolicy = 0 }
        // The authorities-constrained set is needed for the outputs, and to explain a failure
        // of the intersection (which only an explicit policy and a user set can cause).
        var authorities: [ValidPolicy] = []
        if outputs || (explicitPolicy == 0 && graph.levels != nil && userSet != nil) {
            guard let valid = graph.validPolicies(budget: &budget) else { return .budgetExhausted }
            authorities = valid
        }
        // §6.1.5 (g): the intersection with the user-initial-policy-set.
        if let userSet {
            guard graph.intersect(with: userSet, budget: &budget) else { return .budgetExhausted }
        }
        if explicitPolicy == 0 && graph.levels == nil {
            let detail =
                authorities.isEmpty
                ? "no certificate policy is valid for the whole path, and an explicit policy is required (RFC 5280 6.1.5 (g))"
                : "none of the path's policies (\(authorities.map(\.identifier.dotted).joined(separator: ", "))) is acceptable, and an explicit policy is required (RFC 5280 6.1.5 (g))"
            return .invalid(ValidationFailure(.policyViolation, detail), index: 0)
        }
        guard outputs else { return .valid(ValidPolicies(authoritiesConstrained: [], userConstrained: [])) }
        var user = authorities
        if userSet != nil {
            guard let intersected = graph.validPolicies(budget: &budget) else { return .budgetExhausted }
            user = intersected
        }
        return .valid(ValidPolicies(authoritiesConstrained: authorities, userConstrained: user))
    }

    mutating func number(_ oid: ASN1ObjectIdentifier) -> Int32 {
        let next = Int32(oids.count)
        let key = Key(oid: oid)
        let known = numbers[key, default: next]
        if known == next {
            numbers[key] = next
            oids.append(oid)
        }
        return known
    }

    mutating func qualifierIndex(_ qualifiers: [PolicyQualifier]) -> Int32 {
        guard !qualifiers.isEmpty else { return 0 }
        qualifierSets.append(qualifiers)
        return Int32(qualifierSets.count - 1)
    }

    /// Calls `body` for each policy of `node`'s expected_policy_set.
    @inline(__always)
    func forEachExpected(_ node: Node, _ body: (Int32) -> Void) {
        if node.expected < 0 {
            body(node.policy)
        } else {
            for policy in expectedSets[Int(node.expected)] { body(policy) }
        }
    }

    func expectedCount(_ node: Node) -> Int { node.expected < 0 ? 1 : expectedSets[Int(node.expected)].count }

    // MARK: - §6.1.3 (d)

    /// Adds the level for one certificate's policies (§6.1.3 (d)(1), (2)) and prunes what
    /// then has no child (§6.1.3 (d)(3)). Returns false when the budget runs out.
    mutating func addLevel(_ policies: [(policy: Int32, qualifiers: Int32)], anyPolicyAllowed: Bool, budget: inout Budget) -> Bool {
        guard var all = levels, let previous = all.last else { return true }
        levels = nil
        let count = oids.count
        // The nodes of the previous level expecting each policy, by a counting sort:
        // expecting[start[p] ..< start[p + 1]] are the parents expecting policy p.
        var start = [Int32](repeating: 0, count: count + 1)
        for node in previous.nodes where node.alive {
            guard budget.spendPolicyGraphWork(expectedCount(node)) else { return false }
            forEachExpected(node) { start[Int($0) + 1] += 1 }
        }
        for p in 0..<count { start[p + 1] += start[p] }
        var fill = start
        var expecting = [Int32](repeating: 0, count: Int(start[count]))
        for (index, node) in previous.nodes.enumerated() where node.alive {
            forEachExpected(node) { policy in
                expecting[Int(fill[Int(policy)])] = Int32(index)
                fill[Int(policy)] += 1
            }
        }
        let anyParent = previous.node(for: PolicyGraph.anyPolicy)
        var level = Level(policies: count)
        var anyQualifiers: Int32?
        for (policy, qualifiers) in policies {
            if policy == PolicyGraph.anyPolicy {
                anyQualifiers = qualifiers
                continue
            }
            // (d)(1)(i): every parent that expects the policy; (ii) else the anyPolicy parent.
            let parents = expecting[Int(start[Int(policy)])..<Int(start[Int(policy) + 1])]
            if !parents.isEmpty {
                guard budget.spendPolicyGraphWork(parents.count + 1) else { return false }
                level.append(policy: policy, qualifiers: qualifiers, parents: parents)
            } else if let anyParent {
                guard budget.spendPolicyGraphWork(2) else { return false }
                level.append(policy: policy, qualifiers: qualifiers, parent: Int32(anyParent))
            }
        }
        // (d)(2): anyPolicy in the certificate carries every expected policy not yet present,
        // as one node whose parents are all the nodes expecting it (in the order they appear).
        if let anyQualifiers, anyPolicyAllowed {
            for node in previous.nodes where node.alive {
                var ok = true
                forEachExpected(node) { policy in
                    guard ok, level.byPolicy[Int(policy)] < 0 else { return }
                    let parents = expecting[Int(start[Int(policy)])..<Int(start[Int(policy) + 1])]
                    guard budget.spendPolicyGraphWork(parents.count + 1) else {
                        ok = false
                        return
                    }
                    level.append(policy: policy, qualifiers: anyQualifiers, parents: parents)
                }
                guard ok else { return false }
            }
        }
        all.append(level)
        return prune(&all, budget: &budget)
    }

    /// §6.1.3 (d)(3): deletes, level by level upwards, every node left without a living child;
    /// the graph is NULL when the newest level is empty. Stores the result in ``levels``.
    mutating func prune(_ all: inout [Level], budget: inout Budget) -> Bool {
        var depth = all.count - 1
        guard !all[depth].isEmpty else {
            levels = nil
            return true
        }
        while depth > 0 {
            var hasChild = [Bool](repeating: false, count: all[depth - 1].nodes.count)
            for node in all[depth].nodes where node.alive {
                guard budget.spendPolicyGraphWork(Int(node.parentCount)) else { return false }
                let start = Int(node.parentStart)
                for i in start..<(start + Int(node.parentCount)) { hasChild[Int(all[depth].parents[i])] = true }
            }
            var changed = false
            for index in all[depth - 1].nodes.indices where all[depth - 1].nodes[index].alive && !hasChild[index] {
                all[depth - 1].nodes[index].alive = false
                changed = true
            }
            if !changed { break }
            depth -= 1
        }
        levels = all
        return true
    }

    // MARK: - §6.1.4 (b)

    /// Applies a certificate's policyMappings to the newest level: each issuer-domain policy
    /// expects its subject-domain policies (§6.1.4 (b)(1)), or, when mapping is inhibited,
    /// its node is deleted (§6.1.4 (b)(2)).
    mutating func applyMappings(_ mappings: [(issuer: Int32, subject: Int32)], mappingAllowed: Bool, budget: inout Budget) -> Bool {
        guard var all = levels else { return true }
        levels = nil
        let depth = all.count - 1
        // The issuer-domain policies in the order the certificate lists them, each with the
        // subject-domain policies it maps to.
        guard budget.spendPolicyGraphWork(mappings.count) else { return false }
        // A repeated pair only repeats an expected policy, which costs its units and changes
        // nothing, so pairs are not de-duplicated.
        var slot = [Int32](repeating: -1, count: oids.count)
        var order: [Int32] = []
        var subjects: [[Int32]] = []
        for (issuer, subject) in mappings {
            if slot[Int(issuer)] < 0 {
                slot[Int(issuer)] = Int32(order.count)
                order.append(issuer)
                subjects.append([])
            }
            subjects[Int(slot[Int(issuer)])].append(subject)
        }
        let anyNode = all[depth].node(for: PolicyGraph.anyPolicy)
        for (k, issuerPolicy) in order.enumerated() {
            guard budget.spendPolicyGraphWork(subjects[k].count + 1) else { return false }
            let existing = all[depth].node(for: issuerPolicy)
            if mappingAllowed {
                expectedSets.append(subjects[k])
                let expected = Int32(expectedSets.count - 1)
                if let existing {
                    all[depth].nodes[existing].expected = expected
                } else if let anyNode {
                    // §6.1.4 (b)(1): mapped through anyPolicy: a node with the anyPolicy node's
                    // parents and qualifiers.
                    let source = all[depth].nodes[anyNode]
                    let parents = Array(all[depth].parents(of: source))
                    all[depth].append(policy: issuerPolicy, qualifiers: source.qualifiers, expected: expected, parents: parents[...])
                }
            } else if let existing {
                all[depth].nodes[existing].alive = false
            }
        }
        if mappingAllowed {
            levels = all
            return true
        }
        return prune(&all, budget: &budget)
    }

    // MARK: - §6.1.5 (g)

    /// §6.1.5 (g)(iii): keeps the branches whose policy (in the trust anchor's domain) is in
    /// `userSet`, expands a depth-n anyPolicy into the user's policies, and prunes.
    mutating func intersect(with userSet: [Int32], budget: inout Budget) -> Bool {
        guard var all = levels else { return true }
        levels = nil
        let n = all.count - 1
        var inUserSet = [Bool](repeating: false, count: oids.count)
        for policy in userSet { inUserSet[Int(policy)] = true }
        // 1–2. The valid_policy_node_set: nodes (not anyPolicy) whose parents are anyPolicy.
        // Those outside the user set are deleted with every node only reachable through them.
        var inNodeSet = [Bool](repeating: false, count: oids.count)
        for depth in 1..<all.count {
            for index in all[depth].nodes.indices where all[depth].nodes[index].alive {
                let node = all[depth].nodes[index]
                guard budget.spendPolicyGraphWork(Int(node.parentCount) + 1) else { return false }
                guard let parent = all[depth].parents(of: node).first(where: { all[depth - 1].nodes[Int($0)].alive }) else {
                    all[depth].nodes[index].alive = false
                    continue
                }
                guard node.policy != PolicyGraph.anyPolicy, all[depth - 1].nodes[Int(parent)].policy == PolicyGraph.anyPolicy else { continue }
                if inUserSet[Int(node.policy)] {
                    inNodeSet[Int(node.policy)] = true
                } else {
                    all[depth].nodes[index].alive = false
                }
            }
        }
        // 3. A depth-n anyPolicy node stands for every user policy not already present.
        if let anyLeaf = all[n].node(for: PolicyGraph.anyPolicy) {
            let source = all[n].nodes[anyLeaf]
            let parents = Array(all[n].parents(of: source))
            all[n].nodes[anyLeaf].alive = false
            for policy in userSet where policy != PolicyGraph.anyPolicy && !inNodeSet[Int(policy)] {
                guard budget.spendPolicyGraphWork(parents.count + 1) else { return false }
                all[n].append(policy: policy, qualifiers: source.qualifiers, parents: parents[...])
            }
        }
        // 4. Prune.
        return prune(&all, budget: &budget)
    }

    /// The policies the (possibly intersected) graph leaves valid, expressed in the trust
    /// anchor's domain: the valid_policy of every living node whose parents are anyPolicy (the
    /// valid_policy_node_set of §6.1.5 (g)) that has a depth-n descendant, plus anyPolicy when
    /// an anyPolicy chain reaches depth n (the path is then valid for any policy). Each carries
    /// the qualifiers of its depth-n descendants (the leaf's qualifiers). Empty for a NULL
    /// graph; `nil` when the budget runs out.
    func validPolicies(budget: inout Budget) -> [ValidPolicy]? {
        guard let all = levels else { return [] }
        let n = all.count - 1
        if n == 0 { return [ValidPolicy(identifier: OID.anyPolicy, qualifiers: [])] }
        func isTop(_ node: Node, depth: Int) -> Bool {
            guard node.policy != PolicyGraph.anyPolicy, let parent = all[depth].parents(of: node).first else { return false }
            return all[depth - 1].nodes[Int(parent)].policy == PolicyGraph.anyPolicy
        }
        // The valid_policy_node_set, numbered.
        var topOf = [Int32](repeating: -1, count: oids.count)
        var tops: [Int32] = []
        for depth in 1...n {
            for node in all[depth].nodes where node.alive && isTop(node, depth: depth) && topOf[Int(node.policy)] < 0 {
                topOf[Int(node.policy)] = Int32(tops.count)
                tops.append(node.policy)
            }
        }
        // Top-down, the members each node descends from, as bit sets (`words` per node), so
        // that a level costs one union per edge whatever the fan-in.
        let words = max(1, (tops.count + 63) / 64)
        var above = [UInt64](repeating: 0, count: all[0].nodes.count * words)
        for depth in 1...n {
            var current = [UInt64](repeating: 0, count: all[depth].nodes.count * words)
            for (index, node) in all[depth].nodes.enumerated() where node.alive && node.policy != PolicyGraph.anyPolicy {
                guard budget.spendPolicyGraphWork(Int(node.parentCount) * words + 1) else { return nil }
                if isTop(node, depth: depth) {
                    let top = Int(topOf[Int(node.policy)])
                    current[index * words + top / 64] |= 1 << UInt64(top % 64)
                    continue
                }
                for parent in all[depth].parents(of: node) where all[depth - 1].nodes[Int(parent)].alive {
                    for w in 0..<words { current[index * words + w] |= above[Int(parent) * words + w] }
                }
            }
            above = current
        }
        var result: [ValidPolicy] = []
        var resultIndex = [Int32](repeating: -1, count: oids.count)
        func add(_ policy: Int32, _ qualifiers: Int32) {
            let leafQualifiers = qualifierSets[Int(qualifiers)]
            if resultIndex[Int(policy)] >= 0 {
                let index = Int(resultIndex[Int(policy)])
                let merged = result[index].qualifiers + leafQualifiers.filter { !result[index].qualifiers.contains($0) }
                result[index] = ValidPolicy(identifier: oids[Int(policy)], qualifiers: merged)
            } else {
                resultIndex[Int(policy)] = Int32(result.count)
                result.append(ValidPolicy(identifier: oids[Int(policy)], qualifiers: leafQualifiers))
            }
        }
        for (index, leaf) in all[n].nodes.enumerated() where leaf.alive {
            if leaf.policy == PolicyGraph.anyPolicy {
                add(PolicyGraph.anyPolicy, leaf.qualifiers)
                continue
            }
            guard budget.spendPolicyGraphWork(words) else { return nil }
            for w in 0..<words {
                var bits = above[index * words + w]
                while bits != 0 {
                    add(tops[w * 64 + bits.trailingZeroBitCount], leaf.qualifiers)
                    bits &= bits - 1
                }
            }
        }
        return result
    }
}

extension CertificatePolicyInputs {
    /// The user-constrained set when the graph says `authorities` and no intersection is
    /// needed (the user set is anyPolicy), or the user's own set.
    func userPolicies(orAny authorities: [ValidPolicy]) -> [ValidPolicy] {
        if initialPolicySet.contains(OID.anyPolicy) { return authorities }
        return initialPolicySet.sorted { $0.dotted < $1.dotted }.map { ValidPolicy(identifier: $0, qualifiers: []) }
    }
}
