package import CertificateParsing
package import TrustEvaluation

/// A policy's pins against what a server serves today: every valid path, which configured pin
/// matches on which path, whether each pin set is satisfied now, and whether it still would be
/// if the leaf were renewed with a new key tomorrow (and if, besides, the CA issued it from
/// another intermediate). What `servertrust pins check` prints.
package struct PinHealth: Sendable {
    /// Where one pin matched.
    package struct Match: Hashable, Sendable {
        /// The valid path, 0-based.
        package let path: Int
        /// The position on it (0 = the leaf).
        package let position: Int
        /// The certificate there.
        package let subject: String
    }

    /// One configured pin.
    package struct PinReport: Sendable {
        package let pin: SPKIPin
        /// What configures it: `SPKI pins` or an evaluator's name.
        package let source: String
        /// Where it matches now, on every valid path.
        package let matches: [Match]
    }

    /// One pin set (an SPKI pin set, or what an evaluator pins).
    package struct SetReport: Sendable {
        package let hosts: String
        package let source: String
        /// Whether it is enforced (an SPKI pin set may be report-only).
        package let enforced: Bool
        /// The valid paths that carry it now (0-based).
        package let pathsNow: [Int]
        /// Whether some valid path would still carry it tomorrow with the leaf renewed on a new key.
        package let afterLeafRenewal: Bool
        /// … and with the leaf issued from another intermediate of the same root.
        package let afterIntermediateChange: Bool
    }

    /// The host checked.
    package let host: String
    /// The host pattern of the policy's rule that applies (`nil`: the policy for unmatched hosts).
    package let rule: String?
    /// Every valid path found, leaf first.
    package let paths: [[Certificate]]
    /// Why there is none, when there is none.
    package let failure: ValidationFailure?
    package let pins: [PinReport]
    package let sets: [SetReport]

    /// Checks `policy`'s pins for `host` against `chain`.
    /// - Parameters:
    ///   - policy: The policy.
    ///   - chain: What the server sent, leaf first.
    ///   - host: The host connected to.
    ///   - roots: The roots clients have; the host policy's anchors are added as a decision adds them.
    ///   - time: "Now".
    /// - Returns: `nil` when no rule of the policy covers the host.
    package init?(policy: TrustPolicy, chain: [Certificate], host: String, roots: TrustStore, at time: Int64) {
        let resolution = policy.resolve(host, at: time)
        guard let hostPolicy = resolution.policy, let leaf = chain.first else { return nil }
        self.host = host
        rule = resolution.pattern?.description
        let anchors = hostPolicy.anchors
        let store = anchors.only ? anchors.store : (anchors.store.count == 0 ? roots : anchors.store + roots)
        let found = Verifier(anchors: store, policy: .sslServer(host: host)).validPaths(
            leaf: leaf, intermediates: Array(chain.dropFirst()), at: time,
            checks: hostPolicy.revocation.pathChecks(for: ServedChain(certificates: chain, host: host)))
        let paths = found.paths.map(\.certificates)
        self.paths = paths
        failure = found.failure
        let sets = TrustPolicy.pinSets(of: hostPolicy, pattern: resolution.pattern)
        var pins: [PinReport] = []
        for set in sets {
            for pin in set.pins {
                var matches: [Match] = []
                for (index, path) in paths.enumerated() {
                    for (position, certificate) in path.enumerated() where pin.matches(certificate) {
                        matches.append(Match(path: index, position: position, subject: certificate.subject.rfc4514))
                    }
                }
                pins.append(PinReport(pin: pin, source: set.source, matches: matches))
            }
        }
        self.pins = pins
        let tomorrow = time + 86_400
        self.sets = sets.map { set in
            SetReport(
                hosts: set.hosts, source: set.source, enforced: set.enforced,
                pathsNow: paths.indices.filter { set.isMet(by: paths[$0], host: host, at: time) },
                afterLeafRenewal: paths.contains { set.isMet(by: $0, host: host, at: tomorrow, renewing: [0]) },
                afterIntermediateChange: paths.contains { set.isMet(by: $0, host: host, at: tomorrow, renewing: Array(0..<max(1, $0.count - 1))) })
        }
    }
}
