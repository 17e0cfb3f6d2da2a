public import CertificateParsing
public import TrustEvaluation

/// The certificates a pin may match: those whose key the evaluation proved. This is the one
/// pin rule of the library; every matcher (SPKI pin sets, pinned public keys, pinned
/// certificates, ``SecurityPolicy`` in both semantics) compares pins with a `ProvenChain` and
/// with nothing else.
///
/// Why: a man in the middle controls every certificate it sends except for the private keys
/// behind them. It can append the genuine, public, pinned intermediate or root to its own
/// chain (OkHttp's CVE-2016-2402); a pin matched on the served list would accept it. So:
///
/// - when a path validated, the certificates of that path, anchor included: the leaf's key is
///   proven by the handshake and each issuer's by its signature on the one below
///   (``Basis/validatedPath``). With pins, the path is one the pins are on when any valid path
///   is (``PeerTrust/evaluate(trace:)``);
/// - when no path was validated (`allowInvalidCertificates`, `performDefaultValidation: false`
///   without `validateHost`, an `spkiPins` entry with validation off), the signature chain
///   (``Basis/signatureChain``): the leaf, whose key the handshake proves, then each
///   certificate that verifiably signed the one before it, in order, never one merely present
///   in what the server sent. An attacker's leaf with the genuine intermediate appended keeps
///   the leaf alone: the genuine intermediate did not sign it. This is the chain `SecTrust`
///   reports for an unevaluated or untrusted trust, so pins compare with what
///   Alamofire's evaluators and AFNetworking's `AFPublicKeyTrustChainForServerTrust` compare
///   them with on Apple platforms.
public struct ProvenChain: Sendable {
    /// Why these certificates are proven.
    public enum Basis: String, Hashable, Sendable {
        /// The path of a successful chain validation, leaf to anchor.
        case validatedPath
        /// The leaf alone (``ProvenChain/init(leafOf:)``; no longer what the rule gives an
        /// unvalidated trust, which is ``signatureChain``).
        case leafOnly
        /// No path validated: the leaf and the certificates that verifiably signed it, in order.
        case signatureChain
    }

    /// The proven certificates, leaf first.
    public let certificates: [Certificate]
    /// Why they are proven.
    public let basis: Basis

    private init(_ certificates: [Certificate], _ basis: Basis) {
        self.certificates = certificates
        self.basis = basis
    }

    /// The path of a validation (only the verifier makes a ``/TrustEvaluation/VerifiedChain``).
    /// - Parameter chain: The validated path.
    public init(validated chain: VerifiedChain) {
        self.init(chain.certificates, .validatedPath)
    }

    /// The leaf of a served chain, alone.
    /// - Parameter served: What the server sent.
    public init(leafOf served: ServedChain) {
        self.init(Array(served.certificates.prefix(1)), .leafOnly)
    }

    /// The rule: the evaluator's own validated path, else a path an earlier evaluator of the
    /// same decision validated (``PeerTrust/validatedPath``), else the signature chain.
    init(trust: PeerTrust, evaluation: TrustResult?) {
        if let chain = evaluation?.chain ?? trust.validatedPath {
            self.init(validated: chain)
        } else {
            self = Self.signatureChain(of: trust)
        }
    }

    /// The signature chain of a trust that was not (or not successfully) validated: the leaf,
    /// then repeatedly a certificate the server sent or an anchor of the trust whose subject is
    /// the current certificate's issuer and whose key verifies the current certificate's
    /// signature, with an algorithm the trust's policy accepts. It ends at a self-issued
    /// certificate or an anchor, at a certificate no candidate signed, at a repeat, or after the
    /// policy's maximum number of intermediates and an anchor.
    ///
    /// When several candidates verify (a cross-signed intermediate, the same key issued twice),
    /// the first is taken, as `SecTrust`'s chain builder does; when the trust's pins
    /// (``PeerTrust/evaluate(trace:)`` explains where they come from) are on no chain taken so,
    /// the other signature-linked chains are tried, within the verifier's budget of signature
    /// checks, and the first one the pins are on is returned.
    ///
    /// Every key on it is proven as far as pinning needs: the leaf's by the handshake, each
    /// issuer's by a signature over the certificate below, so a pinned CA the server merely
    /// appends never joins it. Validity dates, host name and extensions are not checked: that is
    /// what turning validation off means.
    /// - Parameter trust: The trust.
    /// - Returns: The chain, leaf first.
    public static func signatureChain(of trust: PeerTrust) -> ProvenChain {
        guard let leaf = trust.certificates.first else { return ProvenChain([], .signatureChain) }
        var builder = SignatureChainBuilder(trust: trust)
        return ProvenChain(builder.chain(from: leaf), .signatureChain)
    }

    /// The leaf, when there is one.
    public var leaf: Certificate? { certificates.first }
}

/// The depth-first search behind ``ProvenChain/signatureChain(of:)``: candidates in the order
/// served, then the anchors; the first complete chain is the greedy one, and with pins the
/// search goes on to the first complete chain they are on.
struct SignatureChainBuilder {
    let candidates: [Certificate]
    let anchors: TrustStore
    let policy: ValidationPolicy
    let preference: PinPreference?
    let time: Int64
    /// At most this many certificates (the leaf, the intermediates a policy allows, an anchor).
    let limit: Int
    let verifier = OpenSSLSignatureVerifier()
    /// Signature checks left: the verifier's budget, so that many same-named candidates cannot
    /// make the search expensive.
    var budget = 128
    /// Keys made so far, by candidate index (`nil`: unusable).
    var keys: [Int: OpenSSLSignatureVerifier.Key?] = [:]
    /// The first complete chain, kept while the search looks for one the pins are on.
    var first: [Certificate]?

    init(trust: PeerTrust) {
        anchors = trust.effectiveAnchors
        var seen = Set<Certificate>()
        candidates = (Array(trust.certificates.dropFirst()) + anchors.certificates).filter { seen.insert($0).inserted }
        policy = trust.policy
        preference = trust.pinPreference
        time = trust.evaluationTime()
        limit = trust.policy.maximumIntermediates + 2
    }

    mutating func chain(from leaf: Certificate) -> [Certificate] {
        var chain = [leaf]
        if let found = extend(&chain) { return found }
        return first ?? [leaf]
    }

    /// The first complete chain below `chain` that ends the search (the pins are on it, or
    /// there are no pins), or `nil` to try the next candidate.
    private mutating func extend(_ chain: inout [Certificate]) -> [Certificate]? {
        let current = chain[chain.count - 1]
        var extended = false
        if chain.count < limit, !current.isSelfIssued, !anchors.contains(current), policy.acceptsSignatureAlgorithm(current.signatureAlgorithm) {
            for (index, candidate) in candidates.enumerated() where candidate.subject == current.issuer && !chain.contains(candidate) {
                guard budget > 0 else { break }
                budget -= 1
                guard let key = key(index), verifier.check(current, signedBy: key).isValid else { continue }
                extended = true
                chain.append(candidate)
                defer { chain.removeLast() }
                if let found = extend(&chain) { return found }
            }
        }
        guard !extended else { return nil }
        // No candidate signed `current`: the chain ends here.
        if first == nil { first = chain }
        guard let preference else { return chain }
        return preference.isMet(by: chain, at: time) ? chain : nil
    }

    private mutating func key(_ index: Int) -> OpenSSLSignatureVerifier.Key? {
        if let known = keys[index] { return known }
        let made = try? verifier.makeKey(candidates[index].subjectPublicKeyInfo)
        keys[index] = made
        return made
    }
}
