public import CertificateParsing

/// The name a server certificate must be valid for.
public enum PeerName: Hashable, Sendable, CustomStringConvertible {
    /// A DNS host name, matched against SAN dNSName entries only.
    case dns(String)
    /// An IP address, matched against SAN iPAddress entries only (RFC 6125 Appendix B.2).
    case ip(String)
    /// An email address, matched against SAN rfc822Name entries (client validation).
    case email(String)

    /// Classifies a host as a URL would carry it: an IPv4 or (bracketed) IPv6 literal becomes
    /// `.ip`, anything else `.dns`.
    public static func host(_ host: String) -> PeerName {
        IPAddressText.parse(host) != nil ? .ip(host) : .dns(host)
    }

    /// The name as given, without its kind.
    public var description: String {
        switch self {
        case .dns(let s): return s
        case .ip(let s): return s
        case .email(let s): return s
        }
    }
}

/// What a validation checks (SecPolicy in spirit): the purpose, the name and the certificate
/// and algorithm rules.
///
/// It holds no instant and no revocation input: the instant is read from the decision's one
/// ``TrustClock`` and handed to ``Verifier/validate(leaf:intermediates:at:checks:trace:)``, and
/// whole-path checks such as revocation come through that call's ``PathCheck`` list. So equal
/// policies check the same things at any time, and a policy is the key under which verifiers
/// are shared (``Verifier/shared(anchors:policy:)``).
public struct ValidationPolicy: Hashable, Sendable {
    /// The three policies SecTrust users know.
    public enum Kind: Hashable, Sendable {
        /// A TLS server's chain: EKU serverAuth and (when a name is given) the name (SecPolicyCreateSSL(true, host)).
        case sslServer
        /// A TLS client's chain: EKU clientAuth (SecPolicyCreateSSL(false, …)).
        case sslClient
        /// Path validation only: no name and no EKU requirement (SecPolicyCreateBasicX509).
        case basicX509
    }

    /// The certificate rules a path is held to.
    public enum Profile: Hashable, Sendable {
        /// RFC 5280 as the CA/Browser Forum Baseline Requirements narrow it: the stricter
        /// reading wherever the two differ (v3 only, critical basicConstraints and
        /// policyConstraints in CAs, key identifiers in intermediates, no CA or policy
        /// constraints in a leaf, UTCTime through 2049, no negative serials).
        case webPKI
        /// RFC 5280 §6 path validation alone: what the RFC requires of a certificate-using
        /// system rather than of issuing CAs (NIST PKITS's reading). Non-critical
        /// basicConstraints and policyConstraints are processed, a CA certificate may be the
        /// leaf, and issuing-CA rules that §6 does not check are not applied.
        case rfc5280
    }

    /// The policy kind.
    public var kind: Kind
    /// The certificate rules (``Profile/webPKI`` unless set).
    public var profile: Profile = .webPKI
    /// For `.sslServer`: the name the leaf must be valid for; `nil` skips the name check.
    public var peerName: PeerName?
    /// For `.sslClient`: names that must all appear in the leaf's SAN.
    public var expectedClientNames: [PeerName] = []
    /// The most intermediates a path may have (pyca's default; OpenSSL's 100 is far beyond any
    /// real Web PKI chain, and a small bound limits path-building work).
    public var maximumIntermediates: Int = 8
    /// EKUs the leaf must allow; empty means the kind's default (serverAuth / clientAuth / none).
    public var requiredExtendedKeyUsages: [ASN1ObjectIdentifier] = []
    /// keyUsage bits the leaf must assert (RFC 5280 names), e.g. `digitalSignature`.
    public var requiredKeyUsages: [String] = []
    /// The smallest RSA modulus accepted, in bits (CA/B BR §6.1.5; Apple's TLS rules).
    public var minimumRSAKeyBits: Int = 2048
    /// Whether SHA-1 (and MD5) signatures are accepted. Never by default: Apple, Go and the
    /// CA/B Forum reject them. A trust anchor's own self-signature is never checked anyway.
    public var allowsSHA1Signatures: Bool = false
    /// The certificate-policy inputs of RFC 5280 §6.1.1; the defaults are the RFC's (any
    /// policy, nothing required, nothing inhibited).
    public var policyInputs = CertificatePolicyInputs()

    /// Creates a policy.
    /// - Parameters:
    ///   - kind: The purpose.
    ///   - peerName: For `.sslServer`, the name the leaf must be valid for.
    public init(kind: Kind, peerName: PeerName? = nil) {
        self.kind = kind
        self.peerName = peerName
    }

    /// SSL server policy for `host` (SecPolicyCreateSSL(true, host)).
    /// - Parameter host: The name the leaf must be valid for; `nil` checks no name.
    /// - Returns: The policy.
    public static func sslServer(host: String?) -> ValidationPolicy {
        ValidationPolicy(kind: .sslServer, peerName: host.map(PeerName.host))
    }

    /// SSL client policy.
    public static var sslClient: ValidationPolicy { ValidationPolicy(kind: .sslClient) }

    /// Basic X.509 policy (SecPolicyCreateBasicX509).
    public static var basicX509: ValidationPolicy { ValidationPolicy(kind: .basicX509) }

    /// Whether `algorithm` may sign a certificate in a path under this policy (the rule the
    /// verifier applies to every signature link), for code outside the verifier that checks a
    /// signature link itself.
    /// - Parameter algorithm: The certificate's signature algorithm.
    /// - Returns: `true` when the algorithm is acceptable.
    public func acceptsSignatureAlgorithm(_ algorithm: SignatureAlgorithm) -> Bool { permits(algorithm) }

    /// The EKUs in force.
    var effectiveExtendedKeyUsages: [ASN1ObjectIdentifier] {
        if !requiredExtendedKeyUsages.isEmpty { return requiredExtendedKeyUsages }
        switch kind {
        case .sslServer: return [OID.serverAuth]
        case .sslClient: return [OID.clientAuth]
        case .basicX509: return []
        }
    }

    /// Whether `algorithm` may sign a certificate or CRL in a path (CA/B BR §7.1.3.2; see
    /// ``AlgorithmRule``).
    func permits(_ algorithm: SignatureAlgorithm) -> Bool {
        AlgorithmRule(allowsSHA1: allowsSHA1Signatures).permits(algorithm)
    }
}

/// The certificate-policy inputs of RFC 5280 §6.1.1 (c), (e), (f), (g).
public struct CertificatePolicyInputs: Hashable, Sendable {
    /// user-initial-policy-set: the policies the application accepts; `[anyPolicy]` (the
    /// default) accepts any.
    public var initialPolicySet: Set<ASN1ObjectIdentifier>
    /// initial-explicit-policy: the path must be valid for at least one policy of
    /// ``initialPolicySet``.
    public var initialExplicitPolicy: Bool
    /// initial-policy-mapping-inhibit: policy mappings are not allowed.
    public var initialPolicyMappingInhibit: Bool
    /// initial-any-policy-inhibit: anyPolicy in a certificate does not match other policies.
    public var initialAnyPolicyInhibit: Bool

    /// Creates the inputs; the defaults are RFC 5280's.
    public init(
        initialPolicySet: Set<ASN1ObjectIdentifier> = [OID.anyPolicy],
        initialExplicitPolicy: Bool = false,
        initialPolicyMappingInhibit: Bool = false,
        initialAnyPolicyInhibit: Bool = false
    ) {
        self.initialPolicySet = initialPolicySet
        self.initialExplicitPolicy = initialExplicitPolicy
        self.initialPolicyMappingInhibit = initialPolicyMappingInhibit
        self.initialAnyPolicyInhibit = initialAnyPolicyInhibit
    }
}
