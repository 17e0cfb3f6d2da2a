public import CertificateParsing
public import TrustEvaluation

extension TrustPolicy {
    /// Checks the policy's pins for the shapes that break at a renewal or a change of CA, and
    /// says for each what to do (``PinLintFinding``). What `servertrust pins lint` prints and
    /// what a policy file's load reports as warnings (``PolicyFile/load(contentsOf:at:warnings:)``).
    ///
    /// Every pin set is checked: each rule's SPKI pins, the signed pin set laid over them, and
    /// the keys and certificates pinned by the rules' evaluators (``PublicKeysTrustEvaluator``,
    /// ``PinnedCertificatesTrustEvaluator``, ``SecurityPolicy`` in a pinning mode). The rules:
    ///
    /// - ``PinLintFinding/Rule/leafOnly``: only leaf keys are pinned (error; a warning when a
    ///   pin names a key outside the chain, which may be the next leaf's);
    /// - ``PinLintFinding/Rule/noSpareKey``: no pin names a key outside the current chain;
    /// - ``PinLintFinding/Rule/singleIntermediate``: the only CA key pinned is one intermediate's
    ///   (error for a CA known to rotate intermediates: Let's Encrypt, Google Trust Services,
    ///   Amazon);
    /// - ``PinLintFinding/Rule/certificatesExpireFirst``: every certificate known to carry a
    ///   pinned key expires before the pin set does;
    /// - ``PinLintFinding/Rule/crossSignedSuccessorNotPinned``: a pinned root's cross-signed
    ///   successor is in the trust store but not pinned;
    /// - ``PinLintFinding/Rule/expiryPassed`` (error) and ``PinLintFinding/Rule/expiryTooFar``;
    /// - with a chain: ``PinLintFinding/Rule/noMatchToday`` (error when enforced) when no valid
    ///   path of the chain carries the pins, ``PinLintFinding/Rule/chainNotValid`` and
    ///   ``PinLintFinding/Rule/chainNotCovered``.
    ///
    /// The rules that need the server's chain (which keys are the leaf's, the intermediates',
    /// the roots') run only when `chain` is given, on the entries whose host pattern covers a
    /// name of its leaf, and read every valid path of it (``/TrustEvaluation/Verifier/validPaths(leaf:intermediates:at:checks:)``)
    /// against `anchors` and the entry's own anchors.
    /// - Parameters:
    ///   - chain: What the server sends today, leaf first; `nil` for the rules that need none.
    ///   - anchors: The roots clients have (the system store, or `--cacert`'s).
    ///   - time: "Now", seconds since 1970.
    /// - Returns: The findings, entry by entry, in rule order.
    public func lint(chain: [Certificate]? = nil, anchors: TrustStore = .empty, at time: Int64) -> [PinLintFinding] {
        var lint = PinLint(roots: anchors, time: time)
        let sets = lintedPinSets
        var findings: [PinLintFinding] = []
        var covered = false
        for set in sets {
            let view = chain.flatMap { chain in set.covers(chain) ? lint.view(of: chain, anchors: set.anchors) : nil }
            covered = covered || view != nil
            findings += lint.findings(for: set, chain: view)
        }
        if let chain, let leaf = chain.first, !covered {
            let names = ServerIdentity.names(of: leaf)
            findings.append(
                PinLintFinding(
                    .chainNotCovered, .warning, hosts: "*",
                    "the chain's leaf (\(names.isEmpty ? leaf.subject.rfc4514 : names.joined(separator: ", "))) is for no pinned entry of the policy",
                    fix: "give the chain of a pinned host, or add an entry with pins for it"))
        }
        return findings
    }

    /// The pin sets the lint reads, in policy order.
    var lintedPinSets: [LintedPinSet] {
        var sets: [LintedPinSet] = []
        let hostPolicies = rules.map { ($0.pattern as HostPattern?, $0.policy) } + (unmatched.map { [(nil, $0)] } ?? [])
        for (pattern, policy) in hostPolicies { sets += Self.pinSets(of: policy, pattern: pattern) }
        for entry in signedPins?.document.pins.hosts ?? [] where !entry.pins.isEmpty {
            sets.append(
                LintedPinSet(
                    hosts: entry.pattern.description, pattern: entry.pattern, kind: .spki(entry), pins: entry.pins, certificates: [],
                    anchors: .none))
        }
        return sets
    }

    /// The pin sets of one host's policy: its SPKI pins, and what its evaluator pins.
    static func pinSets(of policy: HostTrustPolicy, pattern: HostPattern?) -> [LintedPinSet] {
        let hosts = pattern?.description ?? "*"
        var sets: [LintedPinSet] = []
        if let pins = policy.pins, !pins.isExcluded, !pins.pins.isEmpty {
            sets.append(LintedPinSet(hosts: hosts, pattern: pattern, kind: .spki(pins), pins: pins.pins, certificates: [], anchors: policy.anchors))
        }
        for pinned in pinnedByEvaluator(policy.evaluator) {
            sets.append(
                LintedPinSet(
                    hosts: hosts, pattern: pattern, kind: .evaluator(pinned.name, pinned.keys), pins: pinned.pins, certificates: pinned.certificates,
                    anchors: policy.anchors))
        }
        return sets
    }

    /// The keys and certificates an evaluator pins (a composite's, each of its evaluators').
    static func pinnedByEvaluator(_ evaluator: any ServerTrustEvaluating) -> [(name: String, pins: [SPKIPin], certificates: [Certificate], keys: Set<[UInt8]>)]
    {
        func keyPins(_ keys: [[UInt8]]) -> [SPKIPin] {
            keys.compactMap { try? SPKIPin(algorithm: .sha256, digest: SHA256.hash($0)) }
        }
        switch evaluator {
        case let composite as CompositeTrustEvaluator:
            return composite.evaluators.flatMap(pinnedByEvaluator)
        case let publicKeys as PublicKeysTrustEvaluator:
            return [("PublicKeysTrustEvaluator", keyPins(publicKeys.keys), [], Set(publicKeys.keys))]
        case let pinned as PinnedCertificatesTrustEvaluator:
            return [
                (
                    "PinnedCertificatesTrustEvaluator", pinned.certificates.map { SPKIPin(certificate: $0) }, pinned.certificates,
                    Set(pinned.certificates.map { Array($0.subjectPublicKeyInfo.derBytes) })
                )
            ]
        case let policy as SecurityPolicy where policy.pinningMode != .none && !policy.pinnedCertificates.isEmpty:
            return [
                (
                    "SecurityPolicy (\(policy.pinningMode.rawValue))", policy.pinnedCertificates.map { SPKIPin(certificate: $0) },
                    policy.pinnedCertificates, Set(policy.pinnedCertificates.map { Array($0.subjectPublicKeyInfo.derBytes) })
                )
            ]
        default:
            return []
        }
    }
}

/// One pin set as the lint reads it: an SPKI pin set, or what an evaluator pins.
struct LintedPinSet {
    enum Kind {
        case spki(PinnedHost)
        /// An evaluator's pins: its name and the SPKI encodings it matches.
        case evaluator(String, Set<[UInt8]>)
    }

    let hosts: String
    /// `nil`: the policy for hosts no rule covers.
    let pattern: HostPattern?
    let kind: Kind
    let pins: [SPKIPin]
    /// The pinned certificates, when the pins are certificates.
    let certificates: [Certificate]
    /// The entry's own anchors (with the lint's roots unless they are the only ones).
    let anchors: TrustAnchors

    var expiry: Int64? {
        if case .spki(let pins) = kind { return pins.expirationDate }
        return nil
    }

    var enforced: Bool {
        if case .spki(let pins) = kind { return pins.enforcePinning }
        return true
    }

    /// Whether the entry applies to the chain's leaf (the policy for unmatched hosts applies to
    /// any chain).
    func covers(_ chain: [Certificate]) -> Bool {
        guard let leaf = chain.first else { return false }
        guard let pattern else { return true }
        return ServerIdentity.names(of: leaf).contains { pattern.matches($0) }
    }

    /// What the pins are, in records: `SPKI pins` or the evaluator's name.
    var source: String {
        switch kind {
        case .spki: return "SPKI pins"
        case .evaluator(let name, _): return name
        }
    }

    /// Whether `path` (a proven chain) carries the pins as the decision would judge them; the
    /// `renewed` positions as if renewed with a new key.
    func isMet(by path: [Certificate], host: String, at time: Int64, renewing renewed: [Int] = []) -> Bool {
        switch kind {
        case .spki(let pins):
            let check =
                renewed.isEmpty
                ? PinningConfiguration.check(pins, certificates: path, forHost: host, at: time)
                : PinningConfiguration.check(pins, certificates: path, forHost: host, at: time, renewing: renewed)
            return check.outcome == .matched
        case .evaluator(_, let keys):
            return path.indices.contains { !renewed.contains($0) && keys.contains(Array(path[$0].subjectPublicKeyInfo.derBytes)) }
        }
    }
}

/// The server's chain as the lint reads it: its valid paths, or the chain as served when none
/// validates.
struct LintChainView {
    let served: [Certificate]
    let paths: [[Certificate]]
    let isValid: Bool
    let store: TrustStore

    var leaf: Certificate { served[0] }
    /// The CA certificates between the leaf and the root of each path.
    var intermediates: [Certificate] { unique(paths.flatMap { $0.dropFirst().dropLast() }) }
    /// The last certificate of each path (an anchor when the path is valid).
    var roots: [Certificate] { unique(paths.compactMap { $0.count > 1 ? $0.last : nil }) }
    /// Every certificate of the chain and its paths.
    var all: [Certificate] { unique(served + paths.flatMap { $0 }) }
    /// The host the chain is for (its leaf's first name).
    var host: String { ServerIdentity.names(of: leaf).first ?? leaf.subject.commonName ?? "" }

    func unique(_ certificates: [Certificate]) -> [Certificate] {
        var seen = Set<Certificate>()
        return certificates.filter { seen.insert($0).inserted }
    }
}

/// The rules of ``TrustPolicy/lint(chain:anchors:at:)``, one function each.
struct PinLint {
    /// The roots clients have.
    let roots: TrustStore
    let time: Int64
    /// The chain was reported as not validating once already.
    var reportedInvalidChain = false

    static let day: Int64 = 86_400
    /// Organizations known to issue from several intermediates at once and switch between them
    /// at renewals (Let's Encrypt's "to discourage key pinning", 2024-03; CloudFront's M01–M04;
    /// Google Trust Services' WR/WE series).
    static let rotatingCAs = ["Let's Encrypt", "Internet Security Research Group", "Google Trust Services", "Amazon"]

    init(roots: TrustStore, time: Int64) {
        self.roots = roots
        self.time = time
    }

    /// The chain's valid paths against the roots clients have and the entry's anchors.
    func view(of chain: [Certificate], anchors: TrustAnchors) -> LintChainView? {
        guard let leaf = chain.first else { return nil }
        let store: TrustStore
        if anchors.only {
            store = anchors.store
        } else {
            store = anchors.store.count == 0 ? roots : anchors.store + roots
        }
        let found = Verifier(anchors: store, policy: .sslServer(host: nil)).validPaths(leaf: leaf, intermediates: Array(chain.dropFirst()), at: time)
        let paths = found.paths.map(\.certificates)
        return LintChainView(served: chain, paths: paths.isEmpty ? [chain] : paths, isValid: !paths.isEmpty, store: store)
    }

    mutating func findings(for set: LintedPinSet, chain: LintChainView?) -> [PinLintFinding] {
        var findings: [PinLintFinding] = []
        if let chain, !chain.isValid, !reportedInvalidChain {
            reportedInvalidChain = true
            findings.append(
                PinLintFinding(
                    .chainNotValid, .warning, hosts: set.hosts,
                    "the chain does not validate against the roots given (\(chain.store.count) anchors); its certificates are read as served",
                    fix: "give the roots clients have (SSL_CERT_FILE or --cacert) and the chain the server sends, leaf first"))
        }
        findings += expiry(set)
        if let chain { findings += noMatchToday(set, chain) }
        findings += leafOnly(set, chain)
        if let chain {
            findings += noSpareKey(set, chain)
            findings += singleIntermediate(set, chain)
        }
        findings += certificatesExpireFirst(set, chain)
        findings += crossSignedSuccessor(set, chain)
        return findings
    }

    // MARK: - The rules

    func expiry(_ set: LintedPinSet) -> [PinLintFinding] {
        guard let expiry = set.expiry else { return [] }
        if expiry < time {
            return [
                PinLintFinding(
                    .expiryPassed, .error, hosts: set.hosts,
                    "the pin set expired at \(ASN1TimeText.rfc3339(expiry)): its pins are not enforced, and the host is treated as unpinned",
                    fix: "ship the pins for today's keys with a new expirationDate, at most a year out")
            ]
        }
        if expiry > time + 365 * Self.day {
            return [
                PinLintFinding(
                    .expiryTooFar, .warning, hosts: set.hosts,
                    "the pin set expires at \(ASN1TimeText.rfc3339(expiry)), more than a year from now: clients that never update stay pinned "
                        + "to keys the CA may have replaced by then",
                    fix: "set expirationDate at most a year out and ship updated pins before it (signed pin sets: servertrust pinset)")
            ]
        }
        return []
    }

    func noMatchToday(_ set: LintedPinSet, _ chain: LintChainView) -> [PinLintFinding] {
        guard chain.isValid, !chain.paths.contains(where: { set.isMet(by: $0, host: chain.host, at: time) }) else { return [] }
        return [
            PinLintFinding(
                .noMatchToday, set.enforced ? .error : .warning, hosts: set.hosts,
                "no valid path of the chain carries the pins (\(chain.paths.count) valid path\(chain.paths.count == 1 ? "" : "s")): "
                    + (set.enforced ? "every client is refused today" : "every connection is reported today"),
                fix: "pin the root of each valid path: " + chain.roots.map(Self.describe).joined(separator: ", "))
        ]
    }

    func leafOnly(_ set: LintedPinSet, _ chain: LintChainView?) -> [PinLintFinding] {
        let fix =
            chain.map { "pin the CA: the root of each valid path (" + $0.roots.map(Self.describe).joined(separator: ", ") + "), and a spare key" }
            ?? "pin your CA's root keys (servertrust pins https://HOST lists the roots of every valid path) and a spare key"
        // Leaf-scoped pins, and pinned certificates that are not CAs, name leaves whatever the chain.
        let leafScoped = set.pins.allSatisfy { $0.scope == .leaf }
        let leafCertificates = !set.certificates.isEmpty && set.certificates.allSatisfy { !$0.isCertificateAuthority }
        if leafScoped || leafCertificates {
            // A self-signed server's own certificate is renewed when its operator says, not by a
            // CA's schedule: a warning.
            let selfSigned = leafCertificates && set.certificates.allSatisfy(\.isSelfIssued)
            return [
                PinLintFinding(
                    .leafOnly, selfSigned ? .warning : .error, hosts: set.hosts, pin: set.pins.first?.description,
                    "every pin names a leaf\(leafScoped ? " (leaf scope)" : " certificate"): the first renewal with a new key or certificate "
                        + "(every 47 days by 2029, and ACME clients make a new key by default) locks every client out",
                    fix: fix)
            ]
        }
        guard let chain else { return [] }
        let cas = chain.intermediates + chain.roots
        let onCA = set.pins.contains { pin in cas.contains(where: pin.matches) }
        let onLeaf = set.pins.filter { $0.matches(chain.leaf) }
        guard !onCA, let leafPin = onLeaf.first else { return [] }
        let outside = set.pins.filter { pin in !chain.all.contains(where: pin.matches) && !chain.store.certificates.contains(where: pin.matches) }
        return [
            PinLintFinding(
                .leafOnly, outside.isEmpty ? .error : .warning, hosts: set.hosts, pin: leafPin.description,
                "the pins name the leaf's key and no CA key of any valid path: the first renewal with a new key locks every client out"
                    + (outside.isEmpty ? "" : " unless it uses the key of \(outside.map(\.description).joined(separator: ", "))"),
                fix: fix)
        ]
    }

    func noSpareKey(_ set: LintedPinSet, _ chain: LintChainView) -> [PinLintFinding] {
        let inChain = set.pins.filter { pin in chain.all.contains(where: pin.matches) }
        guard inChain.count == set.pins.count else { return [] }
        return [
            PinLintFinding(
                .noSpareKey, .warning, hosts: set.hosts,
                "every pin names a key of the server's current chain: no spare key is held in reserve, so a change of CA or of its key "
                    + "locks every client out until an update ships (RFC 7469 §4.3)",
                fix: "make a key you keep offline (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out spare.key) and pin "
                    + "it (openssl pkey -in spare.key -pubout -outform DER | openssl dgst -sha256 -binary | openssl base64)")
        ]
    }

    func singleIntermediate(_ set: LintedPinSet, _ chain: LintChainView) -> [PinLintFinding] {
        let onRoot = set.pins.contains { pin in chain.roots.contains(where: pin.matches) }
        let intermediateKeys = Set(
            chain.intermediates.filter { certificate in set.pins.contains { $0.matches(certificate) } }.map { Array($0.subjectPublicKeyInfo.derBytes) })
        guard !onRoot, intermediateKeys.count == 1,
            let intermediate = chain.intermediates.first(where: { intermediateKeys.contains(Array($0.subjectPublicKeyInfo.derBytes)) }),
            let pin = set.pins.first(where: { $0.matches(intermediate) })
        else { return [] }
        let organizations = [intermediate.subject, intermediate.issuer].flatMap { $0.values(of: "2.5.4.10") }
        let rotating = Self.rotatingCAs.first { name in organizations.contains { $0.localizedLowercase.contains(name.localizedLowercase) } }
        return [
            PinLintFinding(
                .singleIntermediate, rotating == nil ? .warning : .error, hosts: set.hosts, pin: pin.description,
                "the only CA key pinned is the intermediate \(Self.describe(intermediate))"
                    + (rotating.map { ": \($0) issues from several intermediates and switches at renewals" }
                        ?? ": a CA that issues from several intermediates switches at renewals"),
                fix: "pin the root of each valid path instead, or beside it: " + chain.roots.map(Self.describe).joined(separator: ", "))
        ]
    }

    func certificatesExpireFirst(_ set: LintedPinSet, _ chain: LintChainView?) -> [PinLintFinding] {
        guard let expiry = set.expiry, expiry >= time else { return [] }
        let known = set.certificates + (chain?.all ?? []) + (chain?.store.certificates ?? roots.certificates) + set.anchors.store.certificates
        var findings: [PinLintFinding] = []
        for pin in set.pins {
            let carriers = known.filter(pin.matches)
            guard let last = carriers.map(\.notAfter.secondsSince1970).max(), last < expiry else { continue }
            findings.append(
                PinLintFinding(
                    .certificatesExpireFirst, .warning, hosts: set.hosts, pin: pin.description,
                    "every certificate known to carry this key expires by \(ASN1TimeText.rfc3339(last)), before the pin set (\(ASN1TimeText.rfc3339(expiry)))"
                        + " (\(carriers.map { $0.subject.rfc4514 }.joined(separator: "; ")))",
                    fix: "pin a key that outlives the pin set (the CA's root) or move expirationDate before \(ASN1TimeText.rfc3339(last))"))
        }
        return findings
    }

    func crossSignedSuccessor(_ set: LintedPinSet, _ chain: LintChainView?) -> [PinLintFinding] {
        let store = chain?.store ?? (set.anchors.only ? set.anchors.store : set.anchors.store + roots)
        let pool = (chain?.all ?? []) + store.certificates + set.certificates
        let pinnedRoots = store.certificates.filter { root in root.isSelfIssued && set.pins.contains { $0.matches(root) } }
        guard !pinnedRoots.isEmpty else { return [] }
        let verifier = OpenSSLSignatureVerifier()
        var findings: [PinLintFinding] = []
        var reported = Set<Certificate>()
        for root in pinnedRoots {
            guard let key = try? verifier.makeKey(root.subjectPublicKeyInfo) else { continue }
            for successor in store.certificates where successor.isSelfIssued && !reported.contains(successor) {
                guard !set.pins.contains(where: { $0.matches(successor) }),
                    !successor.subjectPublicKeyInfo.derBytes.elementsEqual(root.subjectPublicKeyInfo.derBytes)
                else { continue }
                // A cross-sign: the successor's name and key, issued (and signed) by the pinned root.
                let crossSigned = pool.contains { certificate in
                    certificate != successor && certificate.subject == successor.subject && certificate.issuer == root.subject
                        && certificate.subjectPublicKeyInfo.derBytes.elementsEqual(successor.subjectPublicKeyInfo.derBytes)
                        && verifier.check(certificate, signedBy: key).isValid
                }
                // Or the chain validates both to the pinned root and to the other one.
                let alsoAValidPath = chain.map { $0.isValid && $0.roots.contains(root) && $0.roots.contains(successor) } ?? false
                guard crossSigned || alsoAValidPath else { continue }
                reported.insert(successor)
                findings.append(
                    PinLintFinding(
                        .crossSignedSuccessorNotPinned, .warning, hosts: set.hosts, pin: SPKIPin(certificate: root).description,
                        (crossSigned
                            ? "the pinned root \(Self.describe(root)) cross-signed \(Self.describe(successor)), which the trust store also holds: "
                            : "the chain validates to the pinned root \(Self.describe(root)) and also to \(Self.describe(successor)): ")
                            + "clients that build the path to \(successor.subject.rfc4514) (and servers that move to it) are refused",
                        fix: "pin \(SPKIPin(certificate: successor)) as well"))
            }
        }
        return findings
    }

    /// `sha256/… (CN=…)`.
    static func describe(_ certificate: Certificate) -> String {
        "\(SPKIPin(certificate: certificate)) (\(certificate.subject.rfc4514))"
    }
}

extension Certificate {
    /// Whether basicConstraints says this is a CA.
    var isCertificateAuthority: Bool { extensions.basicConstraints?.isCertificateAuthority ?? false }
}
