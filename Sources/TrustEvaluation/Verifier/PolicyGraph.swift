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
/// every other). Every node, edge and comparison still spends one unit of
/// ``Budget/policyGraphWork``, so a hostile certificate with thousands of policies ends the
/// validation instead of occupying it.
struct PolicyGraph {
    /// A node of the graph at some depth (RFC 5280 §6.1.2 (a)).
    struct Node {
        /// valid_policy.
        let policy: ASN1ObjectIdentifier
        /// qualifier_set: the qualifiers the certificate at this depth gave the policy.
        let qualifiers: [PolicyQualifier]
        /// expected_policy_set: the policies that satisfy this one in the next certificate.
        var expected: [ASN1ObjectIdentifier]
        /// Indices of the parent nodes at the previous depth.
        var parents: [Int]
        /// Nodes are deleted in place, so that parent indices stay valid.
        var alive = true
        /// Created by §6.1.3 (d)(2) (anyPolicy in the certificate), so later parents expecting
        /// the same policy join it.
        var fromAnyPolicy = false
    }

    /// What processing concluded.
    enum Outcome {
        case valid(ValidPolicies)
        /// The path fails policy processing at `index` (an index into the path as built, leaf
        /// first).
        case invalid(ValidationFailure, index: Int)
        case budgetExhausted
    }

    /// levels[i] holds the nodes of depth i; `nil` once the graph is NULL.
    private(set) var levels: [[Node]]? = [[Node(policy: OID.anyPolicy, qualifiers: [], expected: [OID.anyPolicy], parents: [])]]

    /// Processes `path` (leaf first, as the path builder holds it; the last element is the trust
    /// anchor and is not processed) with the §6.1.1 inputs of `inputs`.
    static func process(_ path: [Certificate], _ inputs: CertificatePolicyInputs, budget: inout Budget) -> Outcome {
        var graph = PolicyGraph()
        // Certificates 1…n of §6.1, top-down: certificate 1 is the one the anchor issued.
        let n = path.count - 1
        guard n > 0 else {
            // The leaf is itself the trust anchor: nothing constrains the policies.
            let any = [ValidPolicy(identifier: OID.anyPolicy, qualifiers: [])]
            return .valid(ValidPolicies(authoritiesConstrained: any, userConstrained: inputs.userPolicies(orAny: any)))
        }
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
            if let policies = certificate.extensions.certificatePolicies {
                let allowAny = inhibitAnyPolicy > 0 || (i < n && selfIssued)
                guard graph.addLevel(policies, anyPolicyAllowed: allowAny, budget: &budget) else { return .budgetExhausted }
            } else {
                graph.levels = nil
            }
            // §6.1.3 (f): explicit_policy > 0 or a non-NULL graph.
            if explicitPolicy == 0 && graph.levels == nil {
                return .invalid(ValidationFailure(.policyViolation, "no valid certificate policy, and an explicit policy is required (RFC 5280 6.1.3 (f))"), index: pathIndex)
            }
            guard i < n else { break }
            // §6.1.4 (a), (b): policy mappings. Mappings to or from anyPolicy are refused by the
            // certificate rules (CertificateProfile, §6.1.4 (a)) before the path gets here.
            if let mappings = certificate.extensions.policyMappings {
                guard graph.applyMappings(mappings, mappingAllowed: policyMapping > 0, budget: &budget) else { return .budgetExhausted }
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
        guard let authorities = graph.validPolicies(budget: &budget) else { return .budgetExhausted }
        // §6.1.5 (g): the intersection with the user-initial-policy-set.
        var user = authorities
        if !inputs.initialPolicySet.contains(OID.anyPolicy) {
            guard graph.intersect(with: inputs.initialPolicySet, budget: &budget), let intersected = graph.validPolicies(budget: &budget) else {
                return .budgetExhausted
            }
            user = intersected
        }
        if explicitPolicy == 0 && user.isEmpty {
            let detail = authorities.isEmpty
                ? "no certificate policy is valid for the whole path, and an explicit policy is required (RFC 5280 6.1.5 (g))"
                : "none of the path's policies (\(authorities.map(\.identifier.dotted).joined(separator: ", "))) is acceptable, and an explicit policy is required (RFC 5280 6.1.5 (g))"
            return .invalid(ValidationFailure(.policyViolation, detail), index: 0)
        }
        return .valid(ValidPolicies(authoritiesConstrained: authorities, userConstrained: user))
    }

    // MARK: - §6.1.3 (d)

    /// Adds the level for one certificate's policies (§6.1.3 (d)(1), (2)) and prunes what
    /// then has no child (§6.1.3 (d)(3)). Returns false when the budget runs out.
    mutating func addLevel(_ policies: [PolicyInformation], anyPolicyAllowed: Bool, budget: inout Budget) -> Bool {
        guard let previous = levels?.last else { return true }
        var level: [Node] = []
        var anyQualifiers: [PolicyQualifier]?
        let anyParent = previous.firstIndex { $0.alive && $0.policy == OID.anyPolicy }
        for information in policies {
            let policy = information.policyIdentifier
            if policy == OID.anyPolicy {
                anyQualifiers = information.qualifiers
                continue
            }
            // (d)(1)(i): every parent that expects the policy; (ii) else the anyPolicy parent.
            var parents: [Int] = []
            for (index, node) in previous.enumerated() where node.alive {
                guard budget.spendPolicyGraphWork(node.expected.count) else { return false }
                if node.expected.contains(policy) { parents.append(index) }
            }
            if parents.isEmpty, let anyParent { parents = [anyParent] }
            guard !parents.isEmpty else { continue }
            guard budget.spendPolicyGraphWork(parents.count) else { return false }
            level.append(Node(policy: policy, qualifiers: information.qualifiers, expected: [policy], parents: parents))
        }
        // (d)(2): anyPolicy in the certificate carries every expected policy not yet present.
        if let anyQualifiers, anyPolicyAllowed {
            for (index, node) in previous.enumerated() where node.alive {
                for expected in node.expected {
                    guard budget.spendPolicyGraphWork(level.count + 1) else { return false }
                    if let existing = level.firstIndex(where: { $0.policy == expected }) {
                        if level[existing].fromAnyPolicy { level[existing].parents.append(index) }
                    } else {
                        var child = Node(policy: expected, qualifiers: anyQualifiers, expected: [expected], parents: [index])
                        child.fromAnyPolicy = true
                        level.append(child)
                    }
                }
            }
        }
        levels?.append(level)
        return prune(budget: &budget)
    }

    /// §6.1.3 (d)(3): deletes, level by level upwards, every node left without a living child;
    /// the graph is NULL when the newest level is empty.
    mutating func prune(budget: inout Budget) -> Bool {
        guard var all = levels else { return true }
        var depth = all.count - 1
        guard all[depth].contains(where: \.alive) else {
            levels = nil
            return true
        }
        while depth > 0 {
            var hasChild = [Bool](repeating: false, count: all[depth - 1].count)
            for node in all[depth] where node.alive {
                guard budget.spendPolicyGraphWork(node.parents.count) else { return false }
                for parent in node.parents { hasChild[parent] = true }
            }
            var changed = false
            for index in all[depth - 1].indices where all[depth - 1][index].alive && !hasChild[index] {
                all[depth - 1][index].alive = false
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
    /// its nodes are deleted (§6.1.4 (b)(2)).
    mutating func applyMappings(_ mappings: [PolicyMapping], mappingAllowed: Bool, budget: inout Budget) -> Bool {
        guard var all = levels else { return true }
        let depth = all.count - 1
        // The issuer-domain policies, each with every subject-domain policy it maps to, in
        // the order the certificate lists them.
        var mapped: [(issuer: ASN1ObjectIdentifier, subjects: [ASN1ObjectIdentifier])] = []
        for mapping in mappings {
            guard budget.spendPolicyGraphWork(mapped.count + 1) else { return false }
            if let index = mapped.firstIndex(where: { $0.issuer == mapping.issuerDomainPolicy }) {
                if !mapped[index].subjects.contains(mapping.subjectDomainPolicy) { mapped[index].subjects.append(mapping.subjectDomainPolicy) }
            } else {
                mapped.append((mapping.issuerDomainPolicy, [mapping.subjectDomainPolicy]))
            }
        }
        let anyNode = all[depth].firstIndex { $0.alive && $0.policy == OID.anyPolicy }
        for (issuerPolicy, subjects) in mapped {
            guard budget.spendPolicyGraphWork(all[depth].count + subjects.count) else { return false }
            let existing = all[depth].firstIndex { $0.alive && $0.policy == issuerPolicy }
            if mappingAllowed {
                if let existing {
                    all[depth][existing].expected = subjects
                } else if let anyNode {
                    // §6.1.4 (b)(1): mapped through anyPolicy: a node with the anyPolicy node's
                    // parents and qualifiers.
                    let source = all[depth][anyNode]
                    all[depth].append(Node(policy: issuerPolicy, qualifiers: source.qualifiers, expected: subjects, parents: source.parents))
                }
            } else if let existing {
                all[depth][existing].alive = false
            }
        }
        levels = all
        return mappingAllowed || prune(budget: &budget)
    }

    // MARK: - §6.1.5 (g)

    /// §6.1.5 (g)(iii): keeps the branches whose policy (in the trust anchor's domain) is in
    /// `userSet`, expands a depth-n anyPolicy into the user's policies, and prunes.
    mutating func intersect(with userSet: Set<ASN1ObjectIdentifier>, budget: inout Budget) -> Bool {
        guard var all = levels else { return true }
        let n = all.count - 1
        // 1–2. The valid_policy_node_set: nodes (not anyPolicy) whose parents are anyPolicy.
        // Those outside the user set are deleted with every node only reachable through them.
        var nodeSetPolicies: [ASN1ObjectIdentifier] = []
        for depth in 1..<all.count {
            for index in all[depth].indices where all[depth][index].alive {
                let node = all[depth][index]
                guard budget.spendPolicyGraphWork(node.parents.count + 1) else { return false }
                let parentsAlive = node.parents.filter { all[depth - 1][$0].alive }
                if parentsAlive.isEmpty {
                    all[depth][index].alive = false
                    continue
                }
                guard node.policy != OID.anyPolicy, all[depth - 1][node.parents[0]].policy == OID.anyPolicy else { continue }
                if userSet.contains(node.policy) {
                    nodeSetPolicies.append(node.policy)
                } else {
                    all[depth][index].alive = false
                }
            }
        }
        // 3. A depth-n anyPolicy node stands for every user policy not already present.
        if n > 0, let anyLeaf = all[n].firstIndex(where: { $0.alive && $0.policy == OID.anyPolicy }) {
            let source = all[n][anyLeaf]
            for policy in userSet.sorted(by: { $0.dotted < $1.dotted }) where policy != OID.anyPolicy && !nodeSetPolicies.contains(policy) {
                guard budget.spendPolicyGraphWork(1) else { return false }
                all[n].append(Node(policy: policy, qualifiers: source.qualifiers, expected: [policy], parents: source.parents))
            }
            all[n][anyLeaf].alive = false
        }
        levels = all
        // 4. Prune.
        return prune(budget: &budget)
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
        // Top-down: for every node, the valid_policy_node_set members it descends from (as
        // indices into `tops`), so that shared ancestors are visited once per edge.
        var tops: [ASN1ObjectIdentifier] = []
        var above: [[Int]] = [[]]
        for depth in 1...n {
            var current = [[Int]](repeating: [], count: all[depth].count)
            for (index, node) in all[depth].enumerated() where node.alive && node.policy != OID.anyPolicy {
                let parents = node.parents.filter { all[depth - 1][$0].alive }
                guard let first = parents.first else { continue }
                if all[depth - 1][first].policy == OID.anyPolicy {
                    if let known = tops.firstIndex(of: node.policy) {
                        current[index] = [known]
                    } else {
                        current[index] = [tops.count]
                        tops.append(node.policy)
                    }
                    continue
                }
                for parent in parents {
                    guard budget.spendPolicyGraphWork(above[parent].count + 1) else { return nil }
                    for top in above[parent] where !current[index].contains(top) { current[index].append(top) }
                }
            }
            above = current
        }
        var result: [ValidPolicy] = []
        func add(_ identifier: ASN1ObjectIdentifier, _ qualifiers: [PolicyQualifier]) {
            if let index = result.firstIndex(where: { $0.identifier == identifier }) {
                let merged = result[index].qualifiers + qualifiers.filter { !result[index].qualifiers.contains($0) }
                result[index] = ValidPolicy(identifier: identifier, qualifiers: merged)
            } else {
                result.append(ValidPolicy(identifier: identifier, qualifiers: qualifiers))
            }
        }
        for (index, leaf) in all[n].enumerated() where leaf.alive {
            if leaf.policy == OID.anyPolicy {
                add(OID.anyPolicy, leaf.qualifiers)
            } else {
                for top in above[index] { add(tops[top], leaf.qualifiers) }
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
