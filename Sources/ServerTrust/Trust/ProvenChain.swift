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
///   (``Basis/validatedPath``);
/// - when no path was validated (`allowInvalidCertificates`, default validation off), only the
///   leaf, whose key the handshake proves (``Basis/leafOnly``; curl's `--pinnedpubkey` never
///   looks further);
/// - except where AFNetworking's compat semantics read an unvalidated trust: there
///   `AFPublicKeyTrustChainForServerTrust` enumerates the chain `SecTrust` built, and that chain
///   is derived here as Apple's chain builder links it (``Basis/signatureChain``): the leaf, then
///   repeatedly a served certificate or anchor named as the issuer whose key verifies the
///   signature below, never the served list as sent.
public struct ProvenChain: Sendable {
    /// Why these certificates are proven.
    public enum Basis: String, Hashable, Sendable {
        /// The path of a successful chain validation, leaf to anchor.
        case validatedPath
        /// No path validated: the leaf alone.
        case leafOnly
        /// No path validated, AFNetworking compat: the leaf and the issuers whose signatures
        /// link it.
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
    /// same decision validated (``PeerTrust/validatedPath``), else the leaf (strict) or the
    /// signature chain (compat).
    init(trust: PeerTrust, evaluation: TrustResult?, semantics: PolicySemantics) {
        if let chain = evaluation?.chain ?? trust.validatedPath {
            self.init(validated: chain)
        } else if semantics == .compat {
            self = Self.signatureChain(of: trust)
        } else {
            self.init(leafOf: trust.served)
        }
    }

    /// The chain `SecTrust` builds for a trust that was not (or not successfully) validated:
    /// from the leaf, each next certificate is one the server sent or an anchor of the trust,
    /// whose subject is the current certificate's issuer and whose key verifies the current
    /// certificate's signature with an algorithm the trust's policy accepts. It ends at a
    /// self-issued certificate or an anchor, at a certificate no candidate signed, at a repeat, or after
    /// the policy's maximum number of intermediates and an anchor.
    ///
    /// Every key on it is proven as far as pinning needs: the leaf's by the handshake, each
    /// issuer's by a signature over the certificate below, so a pinned CA the server merely
    /// appends never joins it. Validity dates, host name and extensions are not checked: that
    /// is what AFNetworking's public-key mode with `allowInvalidCertificates` does not check.
    /// - Parameter trust: The trust.
    /// - Returns: The chain, leaf first.
    public static func signatureChain(of trust: PeerTrust) -> ProvenChain {
        guard let leaf = trust.certificates.first else { return ProvenChain([], .signatureChain) }
        let verifier = OpenSSLSignatureVerifier()
        let anchors = trust.effectiveAnchors
        let candidates = Array(trust.certificates.dropFirst()) + anchors.certificates
        var chain = [leaf]
        let limit = trust.policy.maximumIntermediates + 2
        while chain.count < limit, let current = chain.last, !current.isSelfIssued, !anchors.contains(current),
            trust.policy.acceptsSignatureAlgorithm(current.signatureAlgorithm)
        {
            let issuer = candidates.first { candidate in
                candidate.subject == current.issuer && !chain.contains(candidate)
                    && (try? verifier.makeKey(candidate.subjectPublicKeyInfo)).map { verifier.check(current, signedBy: $0).isValid } == true
            }
            guard let issuer else { break }
            chain.append(issuer)
        }
        return ProvenChain(chain, .signatureChain)
    }

    /// The leaf, when there is one.
    public var leaf: Certificate? { certificates.first }
}
