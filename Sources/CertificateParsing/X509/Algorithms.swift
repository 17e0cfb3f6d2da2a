/// An AlgorithmIdentifier (RFC 5280 §4.1.1.2) as encoded: the OID, the raw parameters, and
/// the whole element's bytes (used for the TBS/outer consistency check).
public struct AlgorithmIdentifier: Hashable, Sendable, CustomStringConvertible {
    /// The algorithm OID.
    public let algorithm: ASN1ObjectIdentifier
    /// The parameters element, if present.
    public let parameters: ASN1Node?
    /// The full DER encoding.
    public let derBytes: ArraySlice<UInt8>

    init(_ node: ASN1Node, _ name: @autoclosure () -> String) throws(DERError) {
        (algorithm, parameters) = try node.sequence(.sequence, name()) { nodes throws(DERError) in
            let oid = try nodes.next(.objectIdentifier, "\(name()) algorithm").objectIdentifier("\(name()) algorithm")
            let parameters = try nodes.next()
            return (oid, parameters)
        }
        derBytes = node.encodedBytes
    }

    init(_ raw: RawNode, _ input: DERInput, _ name: StaticString) throws(DERError) {
        (algorithm, parameters) = try input.sequence(raw, .sequence, name) { nodes throws(DERError) in
            let oid = try input.objectIdentifier(nodes.next(.objectIdentifier, name), name)
            let parameters = try nodes.next().map { input.node($0) }
            return (oid, parameters)
        }
        derBytes = input.slice(raw.range)
    }

    /// Whether the parameters are exactly a DER NULL.
    public var hasNullParameters: Bool {
        guard let parameters else { return false }
        return parameters.identifier == .null && parameters.content.isEmpty && !parameters.isConstructed
    }

    /// The algorithm OID in dotted decimal.
    public var description: String { algorithm.dotted }

    /// Equal when the whole encodings are byte-identical, parameters included: the comparison RFC
    /// 5280 §4.1.1.2 requires between a certificate's `signatureAlgorithm` and its TBS `signature`.
    public static func == (lhs: AlgorithmIdentifier, rhs: AlgorithmIdentifier) -> Bool {
        lhs.derBytes.bytesEqual(rhs.derBytes)
    }
    /// Hashes the algorithm OID (equal identifiers have equal OIDs).
    public func hash(into hasher: inout Hasher) { hasher.combine(algorithm) }
}

/// A message digest named by a signature or PSS algorithm.
public enum DigestAlgorithm: String, Hashable, Sendable, CaseIterable {
    /// MD5 (RFC 1321): broken, recognised so that its signatures can be refused by name.
    case md5 = "MD5"
    /// SHA-1 (FIPS 180-4): collision-broken; refused for signatures unless a policy allows it.
    case sha1 = "SHA-1"
    /// SHA-224 (FIPS 180-4).
    case sha224 = "SHA-224"
    /// SHA-256 (FIPS 180-4).
    case sha256 = "SHA-256"
    /// SHA-384 (FIPS 180-4).
    case sha384 = "SHA-384"
    /// SHA-512 (FIPS 180-4).
    case sha512 = "SHA-512"

    /// Digest output size in bytes.
    public var outputSize: Int {
        switch self {
        case .md5: return 16
        case .sha1: return 20
        case .sha224: return 28
        case .sha256: return 32
        case .sha384: return 48
        case .sha512: return 64
        }
    }

    init?(oid: ASN1ObjectIdentifier) {
        switch oid {
        case OID.md5: self = .md5
        case OID.sha1: self = .sha1
        case OID.sha224: self = .sha224
        case OID.sha256: self = .sha256
        case OID.sha384: self = .sha384
        case OID.sha512: self = .sha512
        default: return nil
        }
    }
}

/// RSASSA-PSS parameters (RFC 4055 §3.1), after the defaults are applied.
public struct RSAPSSParameters: Hashable, Sendable {
    /// The message digest.
    public let digest: DigestAlgorithm
    /// The digest MGF1 uses.
    public let mgf1Digest: DigestAlgorithm
    /// The salt length in bytes.
    public let saltLength: Int
}

/// A signature algorithm this library understands, with its parameters checked; anything else
/// is ``other(_:)`` and never verifies.
public enum SignatureAlgorithm: Hashable, Sendable, CustomStringConvertible {
    /// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2) with the digest.
    case rsaPKCS1(DigestAlgorithm)
    /// RSASSA-PSS (RFC 4055 §3) with explicit parameters.
    case rsaPSS(RSAPSSParameters)
    /// ECDSA (RFC 5758 §3.2) with the digest.
    case ecdsa(DigestAlgorithm)
    /// Ed25519 (RFC 8410).
    case ed25519
    /// Ed448 (RFC 8410).
    case ed448
    /// An algorithm not in the list above, or a known one with invalid parameters.
    case other(AlgorithmIdentifier)

    /// Reads the algorithm and validates its parameters.
    ///
    /// RFC 4055 §5 requires NULL parameters for the PKCS#1 v1.5 algorithms (absent parameters are
    /// tolerated, as OpenSSL and Go do, because some deployed CAs omit them); RFC 5758 §3.2 and
    /// RFC 8410 §3 require absent parameters for ECDSA and EdDSA.
    public init(_ identifier: AlgorithmIdentifier) {
        let nullOrAbsent = identifier.parameters == nil || identifier.hasNullParameters
        let absent = identifier.parameters == nil
        switch identifier.algorithm {
        case OID.md5WithRSAEncryption where nullOrAbsent: self = .rsaPKCS1(.md5)
        case OID.sha1WithRSAEncryption where nullOrAbsent: self = .rsaPKCS1(.sha1)
        case OID.sha224WithRSAEncryption where nullOrAbsent: self = .rsaPKCS1(.sha224)
        case OID.sha256WithRSAEncryption where nullOrAbsent: self = .rsaPKCS1(.sha256)
        case OID.sha384WithRSAEncryption where nullOrAbsent: self = .rsaPKCS1(.sha384)
        case OID.sha512WithRSAEncryption where nullOrAbsent: self = .rsaPKCS1(.sha512)
        case OID.ecdsaWithSHA1 where absent: self = .ecdsa(.sha1)
        case OID.ecdsaWithSHA224 where absent: self = .ecdsa(.sha224)
        case OID.ecdsaWithSHA256 where absent: self = .ecdsa(.sha256)
        case OID.ecdsaWithSHA384 where absent: self = .ecdsa(.sha384)
        case OID.ecdsaWithSHA512 where absent: self = .ecdsa(.sha512)
        case OID.ed25519 where absent: self = .ed25519
        case OID.ed448 where absent: self = .ed448
        case OID.rsassaPSS:
            if let parameters = identifier.parameters, let pss = try? SignatureAlgorithm.pssParameters(parameters) {
                self = .rsaPSS(pss)
            } else {
                self = .other(identifier)
            }
        default: self = .other(identifier)
        }
    }

    /// The digest, where the algorithm has one.
    public var digest: DigestAlgorithm? {
        switch self {
        case .rsaPKCS1(let d), .ecdsa(let d): return d
        case .rsaPSS(let p): return p.digest
        case .ed25519, .ed448, .other: return nil
        }
    }

    /// Name as OpenSSL prints it in `openssl x509 -text` ("sha256WithRSAEncryption", …).
    public var description: String {
        func rsa(_ d: DigestAlgorithm) -> String {
            switch d {
            case .md5: return "md5WithRSAEncryption"
            case .sha1: return "sha1WithRSAEncryption"
            case .sha224: return "sha224WithRSAEncryption"
            case .sha256: return "sha256WithRSAEncryption"
            case .sha384: return "sha384WithRSAEncryption"
            case .sha512: return "sha512WithRSAEncryption"
            }
        }
        switch self {
        case .rsaPKCS1(let d): return rsa(d)
        case .rsaPSS(let p): return "rsassaPss(\(p.digest.rawValue), MGF1-\(p.mgf1Digest.rawValue), salt \(p.saltLength))"
        case .ecdsa(let d): return "ecdsa-with-" + d.rawValue.filter { $0 != "-" }
        case .ed25519: return "ED25519"
        case .ed448: return "ED448"
        case .other(let id): return id.algorithm.dotted
        }
    }

    /// RSASSA-PSS-params ::= SEQUENCE { hashAlgorithm [0] DEFAULT sha1, maskGenAlgorithm [1]
    /// DEFAULT mgf1SHA1, saltLength [2] DEFAULT 20, trailerField [3] DEFAULT 1 } (RFC 4055 §3.1).
    /// The MGF1 digest must be a known digest and the trailer field 1.
    static func pssParameters(_ node: ASN1Node) throws(DERError) -> RSAPSSParameters {
        try node.sequence(.sequence, "RSASSA-PSS-params") { nodes throws(DERError) in
            var digest = DigestAlgorithm.sha1
            var mgfDigest = DigestAlgorithm.sha1
            var salt = 20
            if let explicit = try nodes.optional(.context(0)) {
                let inner = try explicit.sequence(.context(0), "hashAlgorithm") { n throws(DERError) in try n.next(.sequence, "hashAlgorithm") }
                let id = try AlgorithmIdentifier(inner, "hashAlgorithm")
                guard let d = DigestAlgorithm(oid: id.algorithm), id.parameters == nil || id.hasNullParameters else {
                    throw DERError(.invalidValue, at: inner.offset, "unsupported PSS hash algorithm \(id.algorithm)")
                }
                digest = d
            }
            if let explicit = try nodes.optional(.context(1)) {
                let inner = try explicit.sequence(.context(1), "maskGenAlgorithm") { n throws(DERError) in try n.next(.sequence, "maskGenAlgorithm") }
                let mgf = try AlgorithmIdentifier(inner, "maskGenAlgorithm")
                guard mgf.algorithm == OID.mgf1, let p = mgf.parameters else {
                    throw DERError(.invalidValue, at: inner.offset, "PSS mask generation must be MGF1")
                }
                let hash = try AlgorithmIdentifier(p, "MGF1 hash")
                guard let d = DigestAlgorithm(oid: hash.algorithm), hash.parameters == nil || hash.hasNullParameters else {
                    throw DERError(.invalidValue, at: p.offset, "unsupported MGF1 hash \(hash.algorithm)")
                }
                mgfDigest = d
            }
            if let explicit = try nodes.optional(.context(2)) {
                salt = try explicit.sequence(.context(2), "saltLength") { n throws(DERError) in
                    try n.next(.integer, "saltLength").integer("saltLength", in: 0...1024)
                }
            }
            if let explicit = try nodes.optional(.context(3)) {
                let trailer = try explicit.sequence(.context(3), "trailerField") { n throws(DERError) in
                    try n.next(.integer, "trailerField").integer("trailerField", in: 0...255)
                }
                guard trailer == 1 else { throw DERError(.invalidValue, at: explicit.offset, "PSS trailerField must be 1") }
            }
            return RSAPSSParameters(digest: digest, mgf1Digest: mgfDigest, saltLength: salt)
        }
    }
}

/// A named elliptic curve.
public enum NamedCurve: String, Hashable, Sendable {
    /// NIST P-256, secp256r1 (FIPS 186-4, RFC 5480).
    case p256 = "P-256"
    /// NIST P-384, secp384r1 (FIPS 186-4, RFC 5480).
    case p384 = "P-384"
    /// NIST P-521, secp521r1 (FIPS 186-4, RFC 5480).
    case p521 = "P-521"

    /// The field size in bits (the key size reported for EC keys).
    public var bits: Int {
        switch self {
        case .p256: return 256
        case .p384: return 384
        case .p521: return 521
        }
    }

    /// Bytes per coordinate.
    public var coordinateSize: Int { (bits + 7) / 8 }
}

/// The public key inside a SubjectPublicKeyInfo, decoded far enough to size and use it.
public enum PublicKey: Hashable, Sendable {
    /// RSA (RFC 8017 `RSAPublicKey`): modulus and exponent as unsigned big-endian bytes with no
    /// leading zero.
    case rsa(modulus: ArraySlice<UInt8>, exponent: ArraySlice<UInt8>)
    /// EC on a named curve (RFC 5480): the SEC1 point as encoded (uncompressed `04‖X‖Y` or
    /// compressed `02/03‖X`).
    case ec(curve: NamedCurve, point: ArraySlice<UInt8>)
    /// Ed25519 (RFC 8410): 32 bytes.
    case ed25519(ArraySlice<UInt8>)
    /// Ed448 (RFC 8410): 57 bytes.
    case ed448(ArraySlice<UInt8>)
    /// An algorithm this library does not decode (DSA, other curves, …): kept raw.
    case unsupported(algorithm: AlgorithmIdentifier, key: ASN1BitString)

    /// The algorithm family name: `RSA`, `EC`, `Ed25519`, `Ed448`, or the OID.
    public var algorithmName: String {
        switch self {
        case .rsa: return "RSA"
        case .ec: return "EC"
        case .ed25519: return "Ed25519"
        case .ed448: return "Ed448"
        case .unsupported(let algorithm, _):
            return algorithm.algorithm == OID.dsa ? "DSA" : algorithm.algorithm.dotted
        }
    }

    /// The key size in bits, as OpenSSL reports it (`Public-Key: (N bit)`).
    public var bitSize: Int {
        switch self {
        case .rsa(let modulus, _):
            guard let first = modulus.first else { return 0 }
            return (modulus.count - 1) * 8 + (8 - first.leadingZeroBitCount)
        case .ec(let curve, _): return curve.bits
        case .ed25519: return 253
        case .ed448: return 456
        case .unsupported(_, let key): return key.bitCount
        }
    }
}
