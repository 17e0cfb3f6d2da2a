public import CertificateParsing
import Synchronization

/// RFC 5280 path building and validation: what `SecTrustEvaluate` does.
///
/// Chain building is a depth-first search from the leaf through the certificates the peer sent
/// (in any order; duplicates, strays, expired and cyclic ones tolerated) to any trust anchor,
/// trying anchors before intermediates and, within each, issuers whose subjectKeyIdentifier
/// matches the child's authorityKeyIdentifier first (Go's `findPotentialParents`, pyca's
/// `potential_issuers`). Each step checks the candidate as an issuer (CA profile, path length,
/// key strength, algorithm, signature) before descending; a failed step backtracks, so
/// cross-signed alternatives are found. A certificate that is itself an anchor ends the path.
/// A budget bounds the work; running out ends the search at once.
public struct Verifier<SignatureCheck: SignatureVerifier>: Sendable {
    /// The trust anchors.
    public let anchors: TrustStore
    /// What to check.
    public let policy: ValidationPolicy
    /// The crypto backend.
    public let signatureVerifier: SignatureCheck
    /// "Now", when neither the policy nor the caller fixes the validation instant.
    public let clock: TrustClock
    /// The extension rule tables, built once per verifier rather than per validation.
    let caProfile: CertificateProfile
    let eeProfile: CertificateProfile
    let anchoredLeafProfile: CertificateProfile
    /// The policy's peer name, validated once.
    let reference: ServerIdentity.Reference?

    /// Creates a verifier.
    /// - Parameters:
    ///   - anchors: The trust anchors.
    ///   - policy: What to check.
    ///   - signatureVerifier: The crypto backend.
    ///   - clock: "Now" when `policy` has no ``ValidationPolicy/validationTime``.
    public init(anchors: TrustStore, policy: ValidationPolicy, signatureVerifier: SignatureCheck, clock: TrustClock = .system) {
        self.anchors = anchors
        self.policy = policy
        self.signatureVerifier = signatureVerifier
        self.clock = clock
        self.caProfile = CertificateProfile.certificateAuthority(policy)
        self.eeProfile = CertificateProfile.endEntity(policy)
        self.anchoredLeafProfile = CertificateProfile.endEntity(policy, directlyTrusted: true)
        self.reference = policy.peerName.map(ServerIdentity.Reference.init)
    }

    /// Validates `leaf` using `intermediates` (the rest of what the peer sent).
    /// - Parameters:
    ///   - time: The validation instant (seconds since 1970); `nil` means the policy's
    ///     ``ValidationPolicy/validationTime``, else ``clock``. A verifier shared across
    ///     evaluations (``shared(anchors:policy:)``) is given the instant here.
    ///   - trace: Record every path tried, for explanations.
    @_specialize(where SignatureCheck == OpenSSLSignatureVerifier)
    public func validate(leaf: Certificate, intermediates: [Certificate], at time: Int64? = nil, trace: Bool = false) -> ValidationOutcome {
        var search = Search(verifier: self, intermediates: intermediates, time: time ?? policy.validationTime ?? clock.now(), tracing: trace)
        let result = search.run(leaf: leaf)
        return ValidationOutcome(result: result, trace: search.trace, signatureChecks: 128 - search.budget.signatureChecks)
    }
}

extension Verifier where SignatureCheck == OpenSSLSignatureVerifier {
    /// A verifier using OpenSSL's libcrypto for signatures.
    /// - Parameters:
    ///   - anchors: The trust anchors.
    ///   - policy: What to check.
    ///   - clock: "Now" when `policy` has no ``ValidationPolicy/validationTime``.
    public init(anchors: TrustStore, policy: ValidationPolicy, clock: TrustClock = .system) {
        self.init(anchors: anchors, policy: policy, signatureVerifier: OpenSSLSignatureVerifier(), clock: clock)
    }

    /// The verifier for `anchors` and `policy`, built once and then shared by every evaluation
    /// with the same anchors and the same policy (its validation instant aside: pass that to
    /// ``validate(leaf:intermediates:at:trace:)``).
    ///
    /// A verifier's rule tables and its parsed reference name are built when it is made; a
    /// client that decides every connection to a host with the same policy pays that once, not
    /// per handshake. The cache holds its stores strongly, so an entry's store identity is never
    /// reused by another store while the entry exists; it is bounded and starts over when full.
    /// - Parameters:
    ///   - anchors: The trust anchors.
    ///   - policy: What to check; its ``ValidationPolicy/validationTime`` is ignored.
    /// - Returns: The verifier, with the system clock.
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
        var timeless = policy
        timeless.validationTime = nil
        let key = Key(anchors: ObjectIdentifier(anchors), policy: timeless)
        if let cached = verifiers.withLock({ $0[key] }) { return cached }
        let made = Verifier(anchors: anchors, policy: timeless)
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
    let caProfile: CertificateProfile
    let eeProfile: CertificateProfile
    var budget = Budget()
    var trace: [PathAttempt] = []
    /// Keys of the untrusted intermediates, built at most once per validation.
    var intermediateKeys: [Int: SignatureCheck.Key] = [:]

    init(verifier: Verifier<SignatureCheck>, intermediates: [Certificate], time: Int64, tracing: Bool) {
        self.verifier = verifier
        // Exact duplicates can only waste budget.
        var seen = Set<Certificate>()
        self.intermediates = intermediates.filter { seen.insert($0).inserted }
        self.tracing = tracing
        self.time = time
        self.caProfile = verifier.caProfile
        self.eeProfile = verifier.eeProfile
    }

    /// A candidate issuer: an anchor (index into the store) or a peer-sent intermediate.
    enum Candidate {
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
    }

    mutating func run(leaf: Certificate) -> Result<VerifiedChain, ValidationFailure> {
        // The leaf first: basic rules, the end-entity profile, the name.
        var path = [Node(certificate: leaf, isAnchor: false)]
        // CA/B BR 7.1.4.3: the CN's encoding is checked, its SAN membership is not (see
        // CommonNameRules for the x509-limbo conflict that forces this).
        let directlyTrusted = verifier.anchors.contains(leaf)
        let profile = directlyTrusted ? verifier.anchoredLeafProfile : eeProfile
        let commonName = verifier.policy.kind == .sslServer && !directlyTrusted ? CommonNameRules.violation(in: leaf.subject) : nil
        if let failure = permitsBasic(leaf) ?? profile.permits(leaf) ?? commonName ?? permitsKey(leaf) ?? checkName(leaf) {
            return .failure(record(path, failure.at(0, leaf)))
        }
        var names = [NameConstraintChecker.Names(sans: leaf.subjectAlternativeNames, subject: leaf.subject)]
        switch extend(&path, names: &names, depth: 0) {
        case .success(let chain): return .success(chain)
        case .failure(let failure): return .failure(failure)
        }
    }

    /// Tries to complete `path` (whose last element is the working certificate) to an anchor.
    mutating func extend(_ path: inout [Node], names: inout [NameConstraintChecker.Names], depth: Int)
        -> Result<VerifiedChain, ValidationFailure>
    {
        let working = path[path.count - 1].certificate
        let index = path.count - 1
        // The working certificate's own name constraints bind every name below it.
        if index > 0, let constraints = working.extensions.nameConstraints {
            if let failure = NameConstraintChecker.check(.init(constraints), names: names.dropLast(), budget: &budget) {
                return .failure(record(path, failure.at(index, working)))
            }
        }
        // A certificate that is itself an anchor ends the path.
        if path[index].isAnchor || verifier.anchors.contains(working) {
            if let failure = checkRevocation(path) {
                return .failure(record(path, failure))
            }
            if tracing { trace.append(PathAttempt(subjects: path.map { $0.certificate.subject.rfc4514 }, failure: nil)) }
            return .success(VerifiedChain(certificates: path.map(\.certificate)))
        }
        // RFC 5280 §6.1.4 (l) and limbo's max_chain_depth: self-issued intermediates do not
        // count towards the depth; the path's absolute length is still capped (loops are
        // excluded above, so this only bounds long chains of distinct self-issued keys).
        if depth > verifier.policy.maximumIntermediates || path.count > maximumPathLength {
            return .failure(
                record(path, ValidationFailure(.chainTooLong, "more than \(verifier.policy.maximumIntermediates) intermediates").at(index, working)))
        }
        // CA/B BR §7.1.3.2: the signature on the working certificate must use an allowed
        // algorithm, whoever issued it (so the failure names this certificate, not an issuer).
        guard verifier.policy.permits(working.signatureAlgorithm) else {
            return .failure(
                record(path, ValidationFailure(.algorithmNotAllowed, "signature algorithm \(working.signatureAlgorithm) is not allowed").at(index, working)))
        }
        var lastFailure: ValidationFailure?
        for candidate in candidates(for: working) {
            let (issuer, isAnchor) = certificate(candidate)
            // RFC 4158 §5.2 loop detection: the same subject, key and SAN already in the path.
            if path.contains(where: { sameEntity($0.certificate, issuer) }) { continue }
            path.append(Node(certificate: issuer, isAnchor: isAnchor))
            defer { path.removeLast() }
            if let failure = validIssuer(candidate, issuer, for: working, depth: depth) {
                if failure.kind == .budgetExhausted { return .failure(record(path, failure)) }
                lastFailure = record(path, failure.at(path.count - 1, issuer))
                continue
            }
            // RFC 5280 §6.1.3 (b)/(c): names of self-issued intermediates are not subject to
            // constraints; everything else below a constraining CA is.
            let selfIssued = issuer.isSelfIssued
            names.append(NameConstraintChecker.Names(sans: selfIssued ? [] : issuer.subjectAlternativeNames, subject: selfIssued ? nil : issuer.subject))
            defer { names.removeLast() }
            switch extend(&path, names: &names, depth: depth + (selfIssued ? 0 : 1)) {
            case .success(let chain): return .success(chain)
            case .failure(let failure):
                if failure.kind == .budgetExhausted { return .failure(failure) }
                lastFailure = failure
            }
        }
        if let lastFailure { return .failure(lastFailure) }
        return .failure(
            record(path, ValidationFailure(.untrustedRoot, "no trusted issuer found for \"\(working.issuer.rfc4514)\"").at(index, working)))
    }

    /// Issuer candidates for `certificate`: anchors, then intermediates, each ordered by how
    /// well their SKI matches the child's AKI (match, unknown, mismatch).
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
        for (i, intermediate) in intermediates.enumerated() where intermediate.subject == certificate.issuer {
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
        a.subject == b.subject && a.subjectPublicKeyInfo.derBytes.bytesEqual(b.subjectPublicKeyInfo.derBytes)
            && (a.extensions[OID.subjectAltName]?.value ?? []).elementsEqual(b.extensions[OID.subjectAltName]?.value ?? [])
    }

    // MARK: - Per-certificate rules

    /// Rules for every certificate in a path (RFC 5280 §4.1.2, CA/B BR §7.1).
    func permitsBasic(_ c: Certificate) -> ValidationFailure? {
        // CA/B BR §7.1.1: certificates MUST be X.509 v3.
        guard c.version == .v3 else { return ValidationFailure(.invalidCertificate, "certificate is \(c.version), not v3 (CA/B BR 7.1.1)") }
        // RFC 5280 §4.1.2.2: positive, at most 20 octets. NOTE: 21 octets are tolerated because
        // CAs that draw 20 random bytes sometimes need a sign byte (as pyca tolerates them).
        if c.serialNumber.isNegative { return ValidationFailure(.invalidCertificate, "serial number is negative (RFC 5280 4.1.2.2)") }
        if c.serialNumber.bytes.count > 21 {
            return ValidationFailure(.invalidCertificate, "serial number is \(c.serialNumber.bytes.count) octets (RFC 5280 4.1.2.2 allows 20)")
        }
        // RFC 5280 §4.1.2.4: the issuer MUST be a non-empty name.
        if c.issuer.isEmpty { return ValidationFailure(.invalidCertificate, "issuer name is empty (RFC 5280 4.1.2.4)") }
        // RFC 5280 §4.1.2.5: dates through 2049 as UTCTime, from 2050 as GeneralizedTime.
        for (name, t) in [("notBefore", c.notBefore), ("notAfter", c.notAfter)] where (1950...2049).contains(t.year) && t.encoding == .generalizedTime {
            return ValidationFailure(.invalidCertificate, "\(name) in \(t.year) must be UTCTime (RFC 5280 4.1.2.5)")
        }
        // RFC 5280 §6.1.3 (a)(2): the validation time lies within the validity period (both ends inclusive).
        if time < c.notBefore.secondsSince1970 {
            return ValidationFailure(.notYetValid, "not valid before \(c.notBefore.rfc3339)")
        }
        if time > c.notAfter.secondsSince1970 {
            return ValidationFailure(.expired, "expired at \(c.notAfter.rfc3339)")
        }
        return nil
    }

    /// Key rules (CA/B BR §6.1.5, §7.1.3.1): RSA of at least the policy's size; EC on P-256/384/521;
    /// Ed25519/Ed448.
    func permitsKey(_ c: Certificate) -> ValidationFailure? {
        switch c.subjectPublicKeyInfo.key {
        case .rsa:
            let bits = c.subjectPublicKeyInfo.key.bitSize
            if bits < verifier.policy.minimumRSAKeyBits {
                return ValidationFailure(.weakKey, "RSA key of \(bits) bits is below \(verifier.policy.minimumRSAKeyBits)")
            }
            // CA/B BR 7.1.3.1.1: the RSA SPKI algorithm parameters are exactly NULL.
            if !c.subjectPublicKeyInfo.algorithm.hasNullParameters {
                return ValidationFailure(.weakKey, "RSA key algorithm parameters must be NULL (CA/B BR 7.1.3.1.1)")
            }
            return nil
        case .ec, .ed25519, .ed448: return nil
        case .unsupported(let algorithm, _):
            return ValidationFailure(.weakKey, "public key algorithm \(algorithm.algorithm) is not supported")
        }
    }

    /// `issuer` may issue `child` at `depth` (0 = issuing the leaf): CA profile, path length,
    /// algorithms, key, and the signature.
    mutating func validIssuer(_ candidate: Candidate, _ issuer: Certificate, for child: Certificate, depth: Int) -> ValidationFailure? {
        if let failure = permitsBasic(issuer) ?? caProfile.permits(issuer) ?? permitsKey(issuer) { return failure }
        // RFC 5280 §4.2.1.9 / §6.1.4 (l)(m): pathLenConstraint counts the non-self-issued
        // intermediates below this CA (`depth`); self-issued ones (key rollover) are free. pyca
        // and Go count every intermediate and fail limbo `pathlen::self-issued-certs-pathlen`;
        // here loop detection and the signature budget keep self-issued certificates from
        // extending a path without bound instead.
        if let failure = checkKeyIdentifiers(issuer, isAnchor: candidate.isAnchor) {
            return failure
        }
        if let limit = issuer.extensions.basicConstraints?.pathLengthConstraint, depth > limit {
            return ValidationFailure(.pathLengthExceeded, "path length constraint \(limit) exceeded by \(depth) intermediates below")
        }
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

    /// The policy's name requirements on the leaf (RFC 6125 for servers; every expected name
    /// for clients).
    func checkName(_ leaf: Certificate) -> ValidationFailure? {
        let policy = verifier.policy
        switch policy.kind {
        case .sslServer:
            guard let name = policy.peerName, let reference = verifier.reference else { return nil }
            if !ServerIdentity.matches(leaf.subjectAlternativeNames, reference) {
                let names = ServerIdentity.names(of: leaf)
                return ValidationFailure(
                    .hostnameMismatch,
                    "certificate is valid for \(names.isEmpty ? "no names" : names.joined(separator: ", ")), not \(name)")
            }
        case .sslClient:
            for name in policy.expectedClientNames where !ServerIdentity.matches(leaf, name: name) {
                return ValidationFailure(.hostnameMismatch, "certificate is not valid for \(name)")
            }
        case .basicX509:
            break
        }
        return nil
    }

    /// With CRLs supplied, every certificate below the anchor must be covered by a CRL from
    /// its issuer that verifies with the issuer's key, and must not be listed (RFC 5280 §6.3,
    /// simplified: complete CRLs only, no delta or indirect CRLs).
    mutating func checkRevocation(_ path: [Node]) -> ValidationFailure? {
        guard let crls = verifier.policy.revocationLists else { return nil }
        for index in 0..<(path.count - 1) {
            let certificate = path[index].certificate
            let issuer = path[index + 1].certificate
            let fromIssuer = crls.filter { $0.issuer == certificate.issuer }
            guard !fromIssuer.isEmpty else {
                return ValidationFailure(.revoked, "no CRL from \"\(certificate.issuer.rfc4514)\" to check revocation").at(index, certificate)
            }
            var checked = false
            // RFC 5280 §6.3.3 (f): if the CRL issuer's certificate has a keyUsage extension,
            // cRLSign must be set.
            if let ku = issuer.extensions.keyUsage, !ku.cRLSign {
                return ValidationFailure(.revoked, "CRL issuer \"\(issuer.subject.rfc4514)\" may not sign CRLs (keyUsage lacks cRLSign)").at(index, certificate)
            }
            for crl in fromIssuer {
                // The algorithm rules for certificates apply to CRLs too (a SHA-1 CRL proves nothing).
                guard verifier.policy.permits(crl.signatureAlgorithm) else { continue }
                // RFC 5280 §5.2.3: cRLNumber MUST be present and non-critical; a CRL that breaks
                // this is not a conforming CRL and is not used.
                guard let number = crl.extensions.first(where: { $0.oid == OID.crlNumber }), !number.critical else { continue }
                guard budget.spendSignatureCheck() else { return Budget.exhaustedFailure }
                guard let key = try? verifier.signatureVerifier.makeKey(issuer.subjectPublicKeyInfo),
                    verifier.signatureVerifier.verify(signature: crl.signature, over: crl.tbsBytes, algorithm: crl.signatureAlgorithm, key: key)
                else { continue }
                if let next = crl.nextUpdate, time > next.secondsSince1970 { continue }
                if time < crl.thisUpdate.secondsSince1970 { continue }
                checked = true
                if crl.isRevoked(certificate.serialNumber) {
                    return ValidationFailure(.revoked, "serial \(certificate.serialNumber) is revoked").at(index, certificate)
                }
            }
            if !checked {
                return ValidationFailure(.revoked, "no valid, current CRL from \"\(certificate.issuer.rfc4514)\"").at(index, certificate)
            }
        }
        return nil
    }


    /// Key identifier rules for CAs (RFC 5280 §4.2.1.1, §4.2.1.2; CA/B BR 7.1.2.1.3).
    func checkKeyIdentifiers(_ ca: Certificate, isAnchor: Bool) -> ValidationFailure? {
        let aki = ca.extensions.authorityKeyIdentifier
        let ski = ca.extensions.subjectKeyIdentifier
        // RFC 5280 §4.2.1.1: AKI keyIdentifier is required in every certificate except a
        // self-signed one (limbo rfc5280::aki::intermediate-missing-aki). A trust anchor is
        // trusted for itself, not for how it was issued, so its AKI may be absent (limbo
        // cve::cve-2024-0567 trusts a cross-signed CA that has none).
        if !isAnchor && !ca.isSelfIssued && aki?.keyIdentifier == nil {
            return ValidationFailure(.extensionProfileViolation, "CA certificate has no authorityKeyIdentifier keyIdentifier (RFC 5280 4.2.1.1)")
        }
        // RFC 5280 §4.2.1.2: SKI "MUST appear in all conforming CA certificates". Required of
        // intermediates; tolerated on trust anchors, where many old roots lack it and the
        // trust decision does not depend on it (limbo rfc5280::ski::intermediate-missing-ski).
        if !isAnchor && ski == nil {
            return ValidationFailure(.extensionProfileViolation, "CA certificate has no subjectKeyIdentifier (RFC 5280 4.2.1.2)")
        }
        // CA/B BR 7.1.2.1.3: a root's AKI, if present, names its own key (limbo
        // webpki::aki::root-with-aki-ski-mismatch). Self-issued intermediates may legitimately
        // differ (key rollover), so this applies to self-issued anchors only.
        if isAnchor && ca.isSelfIssued, let keyID = aki?.keyIdentifier, let ski, !keyID.bytesEqual(ski) {
            return ValidationFailure(.extensionProfileViolation, "root authorityKeyIdentifier does not match its subjectKeyIdentifier (CA/B BR 7.1.2.1.3)")
        }
        return nil
    }

    mutating func record(_ path: [Node], _ failure: ValidationFailure) -> ValidationFailure {
        if tracing { trace.append(PathAttempt(subjects: path.map { $0.certificate.subject.rfc4514 }, failure: failure)) }
        return failure
    }

}

/// No path is longer than this many certificates, whatever the policy: loops are excluded,
/// and no real chain comes close; this bounds chains of distinct self-issued keys.
let maximumPathLength = 64

/// Lazily built anchor keys, shared by every validation against one store.
final class KeyCache: Sendable {
    private let keys: Mutex<[ObjectIdentifier: [Int: any Sendable]]>

    init(count: Int) { keys = Mutex([:]) }

    func key<V: SignatureVerifier>(at index: Int, of verifier: V, spki: SubjectPublicKeyInfo) -> Result<V.Key, ValidationFailure> {
        let type = ObjectIdentifier(V.self)
        if let cached = keys.withLock({ $0[type]?[index] }) as? V.Key { return .success(cached) }
        do {
            let key = try verifier.makeKey(spki)
            keys.withLock { $0[type, default: [:]][index] = key }
            return .success(key)
        } catch {
            return .failure(ValidationFailure(.weakKey, "trust anchor public key is unusable: \(error)"))
        }
    }
}
