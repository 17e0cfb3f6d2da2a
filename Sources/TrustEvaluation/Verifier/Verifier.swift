public import CertificateParsing
import Synchronization

/// RFC 5280 path building and validation: what `SecTrustEvaluate` does.
///
/// Chain building is a depth-first search from the leaf through the certificates the peer sent
/// (in any order; duplicates, strays, expired and cyclic ones tolerated) to any trust anchor,
/// trying anchors before intermediates and, within each, issuers whose subjectKeyIdentifier
/// matches the child's authorityKeyIdentifier first (Go's `findPotentialParents`, pyca's
/// `potential_issuers`). Issuer and subject names chain as RFC 5280 §7.1 compares them. Each
/// step holds the candidate to the certificate rules for its position (leaf, intermediate or
/// trust anchor, under the ``ValidationPolicy/profile``) and checks its signature before descending; a failed step backtracks, so cross-signed
/// alternatives are found. A certificate that is itself an anchor ends the path, which then
/// goes through the part of RFC 5280 §6.1 that needs the whole path, certificate-policy
/// processing (in RFC 9618's policy-graph form), and then through the whole-path checks the
/// caller asks for (``PathCheck``: revocation (§6.3) with ``CRLCheck``, and the checks that
/// build on the same hook). A budget bounds the work; running out ends the search at once.
///
/// When every candidate path fails, the failure reported is that of the most promising path:
/// one that reached a trust anchor before it failed, else the longest (Go's and pyca's choice),
/// so a dead end tried along the way does not hide the real cause.
public struct Verifier<SignatureCheck: SignatureVerifier>: Sendable {
    /// The trust anchors.
    public let anchors: TrustStore
    /// What to check.
    public let policy: ValidationPolicy
    /// The crypto backend.
    public let signatureVerifier: SignatureCheck
    /// The certificate rules, built once per verifier rather than per validation.
    let profile: CertificateProfile
    /// The policy's peer name, validated once.
    let reference: ServerIdentity.Reference?

    /// Creates a verifier.
    /// - Parameters:
    ///   - anchors: The trust anchors.
    ///   - policy: What to check.
    ///   - signatureVerifier: The crypto backend.
    public init(anchors: TrustStore, policy: ValidationPolicy, signatureVerifier: SignatureCheck) {
        self.anchors = anchors
        self.policy = policy
        self.signatureVerifier = signatureVerifier
        self.profile = CertificateProfile(policy)
        self.reference = policy.peerName.map(ServerIdentity.Reference.init)
    }

    /// Validates `leaf` using `intermediates` (the rest of what the peer sent).
    /// - Parameters:
    ///   - leaf: The end-entity certificate, the first one the peer sent.
    ///   - intermediates: The other certificates the peer sent, in any order; those that do not
    ///     chain are ignored.
    ///   - time: The validation instant, seconds since 1970: the reading of the decision's one
    ///     ``TrustClock`` (`clock.now()`), so every check of one decision sees the same instant.
    ///   - checks: The whole-path checks every candidate path must also pass (``PathCheck``:
    ///     revocation, and the checks that build on the same hook), in order.
    ///   - trace: Record every path tried, for explanations.
    /// - Returns: The validated path with what its checks found, or the most telling failure.
    @_specialize(where SignatureCheck == OpenSSLSignatureVerifier)
    public func validate(
        leaf: Certificate, intermediates: [Certificate], at time: Int64, checks: [any PathCheck] = [], trace: Bool = false
    ) -> ValidationOutcome {
        var search = Search(verifier: self, intermediates: intermediates, time: time, checks: checks, tracing: trace)
        return outcome(of: &search, leaf: leaf)
    }

    /// Validates `leaf` as ``validate(leaf:intermediates:at:checks:trace:)`` does, and among its
    /// valid paths returns one that `preference` accepts (the one its pins are on).
    ///
    /// The search does not stop at the first valid path that the preference refuses: it
    /// backtracks to the other candidates, as it does after a failure, within the same work
    /// budget. A certificate the server sent that the store also holds as an anchor (an
    /// intermediate made an anchor) ends one path as the anchor and, as the intermediate it also
    /// is, may continue to its own issuer on another. Every path returned is valid (it reached
    /// an anchor and passed RFC 5280 §6.1 and every check); the chain says how it was chosen
    /// (``VerifiedChain/selection``) and which other valid paths were seen
    /// (``VerifiedChain/otherValidPaths``). When no valid path is preferred (or the budget runs
    /// out after a valid path was found), the first valid path is returned with
    /// ``VerifiedChain/Selection/noPreferredPath``.
    /// - Parameters:
    ///   - leaf: The end-entity certificate.
    ///   - intermediates: The other certificates the peer sent, in any order.
    ///   - time: The validation instant, seconds since 1970.
    ///   - checks: The whole-path checks every candidate path must also pass.
    ///   - preference: Which valid path the caller wants; `nil` validates as
    ///     ``validate(leaf:intermediates:at:checks:trace:)``.
    ///   - trace: Record every path tried, for explanations.
    /// - Returns: The validated path with how it was chosen, or the most telling failure.
    @_specialize(where SignatureCheck == OpenSSLSignatureVerifier)
    public func validate(
        leaf: Certificate, intermediates: [Certificate], at time: Int64, checks: [any PathCheck] = [], preferring preference: (any PathPreference)?,
        trace: Bool = false
    ) -> ValidationOutcome {
        var search = Search(verifier: self, intermediates: intermediates, time: time, checks: checks, tracing: trace)
        if let preference { search.selection = .preferring(preference) }
        return outcome(of: &search, leaf: leaf)
    }

    /// Every valid path of `leaf` that the search finds within its work budget, in the order it
    /// finds them: what a tool that compares pins with every path (`servertrust pins check`)
    /// or proposes pins for every path needs. A decision uses
    /// ``validate(leaf:intermediates:at:checks:preferring:trace:)`` instead, which stops at the
    /// path it wants.
    /// - Parameters:
    ///   - leaf: The end-entity certificate.
    ///   - intermediates: The other certificates the peer sent, in any order.
    ///   - time: The validation instant, seconds since 1970.
    ///   - checks: The whole-path checks every path must also pass.
    /// - Returns: The valid paths, or the most telling failure when there is none.
    public func validPaths(leaf: Certificate, intermediates: [Certificate], at time: Int64, checks: [any PathCheck] = []) -> ValidPaths {
        var search = Search(verifier: self, intermediates: intermediates, time: time, checks: checks, tracing: false)
        search.selection = .all
        var failure: ValidationFailure?
        if case .failure(let found) = search.run(leaf: leaf) { failure = found }
        let paths = search.validPaths
        return ValidPaths(
            paths: paths, failure: paths.isEmpty ? failure : nil, isIncomplete: search.budget.signatureChecks == 0 || failure?.kind == .budgetExhausted)
    }

    func outcome(of search: inout Search<SignatureCheck>, leaf: Certificate) -> ValidationOutcome {
        let result = search.run(leaf: leaf)
        let spent = Budget()
        return ValidationOutcome(
            result: result, trace: search.trace, signatureChecks: spent.signatureChecks - search.budget.signatureChecks,
            policyGraphWork: spent.policyGraphWork - search.budget.policyGraphWork)
    }
}

extension Verifier where SignatureCheck == OpenSSLSignatureVerifier {
    /// A verifier using OpenSSL's libcrypto for signatures.
    /// - Parameters:
    ///   - anchors: The trust anchors.
    ///   - policy: What to check.
    public init(anchors: TrustStore, policy: ValidationPolicy) {
        self.init(anchors: anchors, policy: policy, signatureVerifier: OpenSSLSignatureVerifier())
    }

    /// The verifier for `anchors` and `policy`, built once and then shared by every evaluation
    /// with the same anchors and the same policy (the instant and the whole-path checks are
    /// given to each ``validate(leaf:intermediates:at:checks:trace:)``).
    ///
    /// A verifier's rule tables and its parsed reference name are built when it is made; a
    /// client that decides every connection to a host with the same policy pays that once, not
    /// per handshake. The cache holds its stores strongly, so an entry's store identity is never
    /// reused by another store while the entry exists; it is bounded and starts over when full.
    /// - Parameters:
    ///   - anchors: The trust anchors.
    ///   - policy: What to check.
    /// - Returns: The verifier.
    public static func shared(anchors: TrustStore, policy: ValidationPolicy) -> Verifier {
        VerifierCache.shared.verifier(anchors: anchors, policy: policy)
    }
}

/// The verifiers of ``Verifier/shared(anchors:policy:)``.
final class VerifierCache: Sendable {
    static let shared = VerifierCache()
    /// More (store, policy) pairs than a process decides with; reaching it starts over, so the
    /// memory stays bounded even if every connection brought a new policy.
    static let capacity = 256

    private struct Key: Hashable {
        let anchors: ObjectIdentifier
        let policy: ValidationPolicy
    }

    private let verifiers = Mutex<[Key: Verifier<OpenSSLSignatureVerifier>]>([:])

    func verifier(anchors: TrustStore, policy: ValidationPolicy) -> Verifier<OpenSSLSignatureVerifier> {
        let key = Key(anchors: ObjectIdentifier(anchors), policy: policy)
        if let cached = verifiers.withLock({ $0[key] }) { return cached }
        let made = Verifier(anchors: anchors, policy: policy)
        verifiers.withLock { cache in
            if cache.count >= Self.capacity { cache.removeAll() }
            cache[key] = made
        }
        return made
    }
}

/// The state of one validation.
struct Search<SignatureCheck: SignatureVerifier> {
    let verifier: Verifier<SignatureCheck>
    let intermediates: [Certificate]
    let tracing: Bool
    let time: Int64
    /// The whole-path checks every complete path must pass.
    let checks: [any PathCheck]
    var budget = Budget()
    var trace: [PathAttempt] = []
    /// Keys of the untrusted intermediates, built at most once per validation.
    var intermediateKeys: [Int: SignatureCheck.Key] = [:]
    /// CRL signers whose own paths are being validated by the searches that started this one
    /// (RFC 5280 §6.3.3 (f)); a signer met again is taken as established, which ends the
    /// circular case of a CRL issuer whose status is given by the CRL it signs.
    var signerStack: [Certificate] = []
    /// Which valid path ends the search.
    var selection = Selection.first
    /// The valid paths found that did not end the search (with a preference: those it refused;
    /// for ``Verifier/validPaths(leaf:intermediates:at:checks:)``: all of them), without repeats.
    var validPaths: [VerifiedChain] = []

    /// Which valid path ends the search.
    enum Selection {
        /// The first one (a decision without pins: no extra work).
        case first
        /// The first one the preference accepts.
        case preferring(any PathPreference)
        /// None: every valid path is collected.
        case all
    }

    init(verifier: Verifier<SignatureCheck>, intermediates: [Certificate], time: Int64, checks: [any PathCheck], tracing: Bool) {
        self.verifier = verifier
        // Exact duplicates can only waste budget.
        var seen = Set<Certificate>()
        self.intermediates = intermediates.filter { seen.insert($0).inserted }
        self.tracing = tracing
        self.time = time
        self.checks = checks
    }

    /// A path that failed, and how far it got.
    struct DeadEnd: Error {
        let failure: ValidationFailure
        /// The path reached a trust anchor and failed a whole-path check (policy, a ``PathCheck``).
        let reachedAnchor: Bool
        /// Certificates in the path when it failed.
        let length: Int
        /// The path is valid but did not end the search (``Selection``): the search goes on.
        var isValid = false

        /// Whether this dead end says more about the chain than `other`: reaching an anchor
        /// beats not reaching one, then the longer path wins; ties keep the earlier (better
        /// ranked) candidate.
        func isMorePromising(than other: DeadEnd) -> Bool {
            if reachedAnchor != other.reachedAnchor { return reachedAnchor }
            return length > other.length
        }
    }

    func context(_ role: CertificateProfile.Context.Role, depth: Int, isAnchor: Bool) -> CertificateProfile.Context {
        CertificateProfile.Context(role: role, depth: depth, isAnchor: isAnchor, time: time)
    }

    mutating func run(leaf: Certificate) -> Result<VerifiedChain, ValidationFailure> {
        // The leaf first: its certificate rules, then the policy's name.
        var path = [Node(certificate: leaf, isAnchor: false, source: nil)]
        let directlyTrusted = verifier.anchors.contains(leaf)
        let leafContext = context(.endEntity, depth: 0, isAnchor: directlyTrusted)
        if let failure = verifier.profile.permits(leaf, leafContext)
            ?? ServerIdentity.violation(leaf, policy: verifier.policy, reference: verifier.reference)
        {
            return .failure(record(path, failure.at(0, leaf)))
        }
        var names = [NameConstraintChecker.Names(sans: leaf.subjectAlternativeNames, subject: leaf.subject)]
        switch extend(&path, names: &names, depth: 0) {
        case .success(let chain): return .success(chain)
        case .failure(let deadEnd):
            // No valid path was preferred, or the budget ran out after one was found: the
            // first valid path, said to be no preferred one (the caller's pins refuse it).
            if case .preferring = selection, var first = validPaths.first {
                first.choice = PathChoice(.noPreferredPath, otherValidPaths: validPaths.dropFirst().map(\.certificates))
                return .success(first)
            }
            return .failure(deadEnd.failure)
        }
    }

    /// Tries to complete `path` (whose last element is the working certificate) to an anchor.
    mutating func extend(_ path: inout [Node], names: inout [NameConstraintChecker.Names], depth: Int)
        -> Result<VerifiedChain, DeadEnd>
    {
        let working = path[path.count - 1].certificate
        let index = path.count - 1
        // RFC 5280 §6.1.3 (b)–(c), §6.1.4 (g): the working certificate's name constraints bind
        // every name below it.
        if index > 0, let constraints = working.extensions.nameConstraints {
            if let failure = NameConstraintChecker.check(.init(constraints), names: names.dropLast(), budget: &budget) {
                return .failure(deadEnd(path, failure.at(index, working)))
            }
        }
        // A certificate that is itself an anchor ends the path.
        if path[index].isAnchor || verifier.anchors.contains(working) {
            let completed = complete(path)
            // When the search is looking for more valid paths, a certificate the peer sent that
            // the store also holds as an anchor (an intermediate made an anchor) continues, as
            // the intermediate it is (its rules for that position were checked when it was
            // chosen), to its own issuers: the path through it to the root is valid too, and
            // may be the one the pins are on (Brave #52059).
            guard case .failure(let deadEnd) = completed, deadEnd.isValid, index > 0, !path[index].isAnchor, !working.isSelfIssued else {
                return completed
            }
        }
        // RFC 5280 §6.1.4 (l) and limbo's max_chain_depth: self-issued intermediates do not
        // count towards the depth; the path's absolute length is still capped (loops are
        // excluded below, so this only bounds long chains of distinct self-issued keys).
        if depth > verifier.policy.maximumIntermediates || path.count > maximumPathLength {
            return .failure(
                deadEnd(path, ValidationFailure(.chainTooLong, "more than \(verifier.policy.maximumIntermediates) intermediates").at(index, working)))
        }
        var best: DeadEnd?
        func note(_ candidate: DeadEnd) {
            if best.map({ candidate.isMorePromising(than: $0) }) ?? true { best = candidate }
        }
        for candidate in candidates(for: working) {
            let (issuer, isAnchor) = certificate(candidate)
            // RFC 4158 §5.2 loop detection: the same subject, key and SAN already in the path.
            if path.contains(where: { sameEntity($0.certificate, issuer) }) { continue }
            path.append(Node(certificate: issuer, isAnchor: isAnchor, source: candidate))
            defer { path.removeLast() }
            if let failure = validIssuer(candidate, issuer, for: working, depth: depth) {
                if failure.kind == .budgetExhausted { return .failure(deadEnd(path, failure)) }
                note(deadEnd(path, failure.at(path.count - 1, issuer)))
                continue
            }
            // RFC 5280 §6.1.3 (b)/(c): names of self-issued intermediates are not subject to
            // constraints; everything else below a constraining CA is.
            let selfIssued = issuer.isSelfIssued
            names.append(NameConstraintChecker.Names(sans: selfIssued ? [] : issuer.subjectAlternativeNames, subject: selfIssued ? nil : issuer.subject))
            defer { names.removeLast() }
            switch extend(&path, names: &names, depth: depth + (selfIssued ? 0 : 1)) {
            case .success(let chain): return .success(chain)
            case .failure(let deadEnd):
                if deadEnd.failure.kind == .budgetExhausted { return .failure(deadEnd) }
                note(deadEnd)
            }
        }
        if let best { return .failure(best) }
        return .failure(
            deadEnd(path, ValidationFailure(.untrustedRoot, "no trusted issuer found for \"\(working.issuer.rfc4514)\"").at(index, working)))
    }

    /// The checks that need the complete path, once it reaches an anchor: certificate-policy
    /// processing (RFC 5280 §6.1.3 (d)–(f), §6.1.4 (a)–(b), (h)–(j), §6.1.5 (a)–(b), (g)), then
    /// each whole-path check the caller gave (``PathCheck``), in order.
    mutating func complete(_ path: [Node]) -> Result<VerifiedChain, DeadEnd> {
        let certificates = path.map(\.certificate)
        let inputs = verifier.policy.policyInputs
        // Policy processing can reject a path only when explicit_policy reaches 0, which needs
        // initial-explicit-policy or a requireExplicitPolicy in a path certificate (the anchor
        // is not one, §6.1.1 (d)): without either, explicit_policy stays above 0 through
        // §6.1.3 (f) and §6.1.5 (g), whatever the graph. The outputs are then computed when
        // asked for (VerifiedChain.policies), not on every validation.
        if inputs.initialExplicitPolicy || path.dropLast().contains(where: { $0.certificate.extensions.policyConstraints?.requireExplicitPolicy != nil }) {
            switch PolicyGraph.process(certificates, inputs, outputs: false, budget: &budget) {
            case .valid: break
            case .invalid(let failure, let index):
                return .failure(deadEnd(path, failure.at(index, certificates[index]), reachedAnchor: true))
            case .budgetExhausted:
                return .failure(deadEnd(path, Budget.exhaustedFailure))
            }
        }
        var findings: [PathCheckFinding] = []
        if !checks.isEmpty {
            let candidate = CandidatePath(certificates: certificates, sources: path.map(\.source))
            for check in checks {
                let result = runCheck(check, candidate)
                findings += result.findings
                if let failure = result.failure {
                    // The refusal carries what the checks found, so the record can say why.
                    let found = failure.kind == .budgetExhausted ? failure : failure.with(findings: findings)
                    return .failure(deadEnd(path, found, reachedAnchor: failure.kind != .budgetExhausted))
                }
            }
        }
        if tracing { trace.append(PathAttempt(subjects: certificates.map { $0.subject.rfc4514 }, failure: nil)) }
        var chain = VerifiedChain(certificates: certificates, policyInputs: inputs, findings: findings)
        switch selection {
        case .first:
            return .success(chain)
        case .preferring(let preference):
            if preference.prefers(CandidatePath(certificates: certificates, sources: path.map(\.source)), at: time) {
                chain.choice = PathChoice(.preferred, otherValidPaths: validPaths.map(\.certificates))
                return .success(chain)
            }
        case .all:
            break
        }
        // Valid but not the one wanted: kept (once: the same certificates may be reached as an
        // anchor and as a sent intermediate), and the search goes on.
        if !validPaths.contains(where: { $0.certificates == certificates }) { validPaths.append(chain) }
        var deadEnd = DeadEnd(
            failure: ValidationFailure(.untrustedRoot, "a valid path the preference does not accept"), reachedAnchor: true, length: path.count)
        deadEnd.isValid = true
        return .failure(deadEnd)
    }

    /// Runs one whole-path check on this search's state (its budget, its intermediates' keys),
    /// handing the state to the check and taking it back.
    mutating func runCheck(_ check: any PathCheck, _ path: CandidatePath) -> PathCheckResult {
        var context = PathCheckContext(search: self)
        let result = check.check(path, context: &context)
        self = context.search
        return result
    }

    /// Issuer candidates for `certificate`: anchors, then intermediates, each ordered by how
    /// well their SKI matches the child's AKI (match, unknown, mismatch). Names match as RFC
    /// 5280 §7.1 compares them.
    func candidates(for certificate: Certificate) -> [Candidate] {
        let wanted = certificate.extensions.authorityKeyIdentifier?.keyIdentifier
        func rank(_ candidate: Certificate) -> Int {
            guard let wanted, let have = candidate.extensions.subjectKeyIdentifier else { return 1 }
            return wanted.bytesEqual(have) ? 0 : 2
        }
        var ranked: [(Int, Candidate)] = []
        for i in verifier.anchors.candidates(issuedTo: certificate.issuer) {
            ranked.append((rank(verifier.anchors.certificates[i]), .anchor(i)))
        }
        for (i, intermediate) in intermediates.enumerated() where intermediate.subject.matches(certificate.issuer) {
            ranked.append((rank(intermediate) + 3, .intermediate(i)))
        }
        // Anchors before intermediates within a likelihood bucket (stable: pyca keeps trusted
        // candidates first in each bucket).
        return ranked.enumerated().sorted { a, b in
            let ka = (a.element.0 % 3, a.element.0 / 3, a.offset)
            let kb = (b.element.0 % 3, b.element.0 / 3, b.offset)
            return ka < kb
        }.map(\.element.1)
    }

    func certificate(_ candidate: Candidate) -> (Certificate, Bool) {
        switch candidate {
        case .anchor(let i): return (verifier.anchors.certificates[i], true)
        case .intermediate(let i): return (intermediates[i], false)
        }
    }

    func sameEntity(_ a: Certificate, _ b: Certificate) -> Bool {
        a.subject.matches(b.subject) && a.subjectPublicKeyInfo.derBytes.bytesEqual(b.subjectPublicKeyInfo.derBytes)
            && (a.extensions[OID.subjectAltName]?.value ?? []).elementsEqual(b.extensions[OID.subjectAltName]?.value ?? [])
    }

    /// `issuer` may issue `child` at `depth` (0 = issuing the leaf): the certificate rules for
    /// its position, then the signature (§6.1.3 (a)(1)).
    mutating func validIssuer(_ candidate: Candidate, _ issuer: Certificate, for child: Certificate, depth: Int) -> ValidationFailure? {
        let role: CertificateProfile.Context.Role = candidate.isAnchor ? .trustAnchor : .intermediate
        if let failure = verifier.profile.permits(issuer, context(role, depth: depth, isAnchor: candidate.isAnchor)) { return failure }
        guard budget.spendSignatureCheck() else { return Budget.exhaustedFailure }
        let key: SignatureCheck.Key
        switch keyFor(candidate, issuer) {
        case .success(let k): key = k
        case .failure(let failure): return failure
        }
        guard verifier.signatureVerifier.verify(signature: child.signature, over: child.tbsBytes, algorithm: child.signatureAlgorithm, key: key) else {
            return ValidationFailure(.badSignature, "signature on \"\(child.subject.rfc4514)\" does not verify with this issuer's key")
        }
        return nil
    }

    mutating func keyFor(_ candidate: Candidate, _ issuer: Certificate) -> Result<SignatureCheck.Key, ValidationFailure> {
        switch candidate {
        case .anchor(let i):
            return verifier.anchors.keys.key(at: i, of: verifier.signatureVerifier, spki: issuer.subjectPublicKeyInfo)
        case .intermediate(let i):
            if let key = intermediateKeys[i] { return .success(key) }
            do {
                let key = try verifier.signatureVerifier.makeKey(issuer.subjectPublicKeyInfo)
                intermediateKeys[i] = key
                return .success(key)
            } catch {
                return .failure(ValidationFailure(.weakKey, "issuer public key is unusable: \(error)"))
            }
        }
    }

    mutating func record(_ path: [Node], _ failure: ValidationFailure) -> ValidationFailure {
        if tracing { trace.append(PathAttempt(subjects: path.map { $0.certificate.subject.rfc4514 }, failure: failure)) }
        return failure
    }

    mutating func deadEnd(_ path: [Node], _ failure: ValidationFailure, reachedAnchor: Bool = false) -> DeadEnd {
        DeadEnd(failure: record(path, failure), reachedAnchor: reachedAnchor, length: path.count)
    }
}

/// A candidate issuer: an anchor (index into the store) or a peer-sent intermediate (index
/// into the search's intermediates).
enum Candidate: Equatable, Sendable {
    case anchor(Int)
    case intermediate(Int)

    var isAnchor: Bool {
        if case .anchor = self { return true }
        return false
    }
}

/// One element of the path being built.
struct Node {
    let certificate: Certificate
    let isAnchor: Bool
    /// Where the certificate came from (`nil` for the leaf).
    let source: Candidate?
}

/// No path is longer than this many certificates, whatever the policy: loops are excluded,
/// and no real chain comes close; this bounds chains of distinct self-issued keys.
let maximumPathLength = 64

extension KeyCache {
    /// The anchor key at `index`, a key that cannot be made reported as the path's failure.
    func key<V: SignatureVerifier>(at index: Int, of verifier: V, spki: SubjectPublicKeyInfo) -> Result<V.Key, ValidationFailure> {
        verificationKey(at: index, of: verifier, spki: spki).mapError { ValidationFailure(.weakKey, "trust anchor public key is unusable: \($0)") }
    }
}
