internal import COpenSSL
public import CertificateParsing

/// A public key ready for signature checks, built from a parsed SubjectPublicKeyInfo.
///
/// Keys are built from the components the project's DER reader already extracted, never by
/// handing the SPKI DER back to OpenSSL: `d2i_PUBKEY` goes through OpenSSL 3.0's provider
/// decoders and costs about 90–110 µs per key, several times a whole signature check
/// (performance-anchors.md, "What the anchors say" item 3). What each type costs instead,
/// measured on the project machine (release build, OpenSSL 3.0.19):
///
/// - RSA: n and e as `BIGNUM`s with a precomputed Montgomery context, about 6 µs
///   (see `RSAPublicKeyMaterial`).
/// - EC: `EVP_PKEY_copy_parameters` from a per-curve template plus
///   `EVP_PKEY_set1_encoded_public_key`, about 4.5 µs for P-256, where `EVP_PKEY_fromdata`
///   with a group name costs 16 µs because it rebuilds the curve group each time.
///   Decoding the point checks that it lies on the curve.
/// - Ed25519/Ed448: `EVP_PKEY_new_raw_public_key_ex`, about 2 µs.
///
/// A key is immutable and may be used from any number of threads at once; every check makes
/// its own short-lived libcrypto contexts.
public final class VerificationKey: Sendable, CustomStringConvertible {
    enum Storage: Sendable {
        case rsa(RSAPublicKeyMaterial)
        case ec(OwnedEVPKey, NamedCurve)
        case ed25519(OwnedEVPKey)
        case ed448(OwnedEVPKey)
    }

    let storage: Storage

    /// The key algorithm: `RSA`, `EC`, `Ed25519` or `Ed448`.
    public let algorithmName: String

    /// The key size in bits as OpenSSL reports it (modulus bits for RSA, field bits for EC,
    /// 253 for Ed25519 and 456 for Ed448).
    public let bitSize: Int

    /// Builds a key from a parsed SubjectPublicKeyInfo.
    ///
    /// RSA moduli must have between ``OpenSSLSignatureVerifier/minimumRSAModulusBits`` and
    /// ``OpenSSLSignatureVerifier/maximumRSAModulusBits`` bits.
    ///
    /// - Parameter publicKeyInfo: The SubjectPublicKeyInfo.
    /// - Throws: ``SignatureError`` with ``SignatureError/Code/unsupportedKey``,
    ///   ``SignatureError/Code/invalidKey`` or ``SignatureError/Code/keySizeOutOfRange``.
    public init(_ publicKeyInfo: SubjectPublicKeyInfo) throws(SignatureError) {
        let key = publicKeyInfo.key
        algorithmName = key.algorithmName
        bitSize = key.bitSize
        switch key {
        case .rsa(let modulus, let exponent):
            storage = .rsa(
                try RSAPublicKeyMaterial.make(
                    modulus: modulus,
                    exponent: exponent,
                    minimumModulusBits: OpenSSLSignatureVerifier.minimumRSAModulusBits,
                    maximumModulusBits: OpenSSLSignatureVerifier.maximumRSAModulusBits
                )
            )
        case .ec(let curve, let point):
            storage = .ec(try VerificationKey.makeECKey(curve: curve, point: point), curve)
        case .ed25519(let bytes):
            storage = .ed25519(try VerificationKey.makeRawKey("ED25519", bytes))
        case .ed448(let bytes):
            storage = .ed448(try VerificationKey.makeRawKey("ED448", bytes))
        case .unsupported(let algorithm, _):
            throw SignatureError(
                .unsupportedKey,
                "public key algorithm \(key.algorithmName) (\(algorithm.algorithm)) is not supported"
            )
        }
    }

    /// `"RSA-2048 verification key"` and similar.
    public var description: String {
        switch storage {
        case .ec(_, let curve): return "EC \(curve.rawValue) verification key"
        case .rsa: return "RSA-\(bitSize) verification key"
        case .ed25519, .ed448: return "\(algorithmName) verification key"
        }
    }

    /// An EC key: a copy of the curve template's parameters plus the encoded point.
    private static func makeECKey(curve: NamedCurve, point: ArraySlice<UInt8>) throws(SignatureError) -> OwnedEVPKey {
        guard let template = ECCurveTemplate.for(curve) else {
            throw SignatureError(.unsupportedKey, "libcrypto does not offer the curve \(curve.rawValue)")
        }
        OpenSSLError.clear()
        guard let pkey = EVP_PKEY_new() else { throw .openSSL(OpenSSLError.drain("EVP_PKEY_new")) }
        let owned = OwnedEVPKey(takingOwnershipOf: pkey)
        guard EVP_PKEY_copy_parameters(pkey, template.key.pointer) == 1 else {
            throw .openSSL(OpenSSLError.drain("EVP_PKEY_copy_parameters(\(curve.rawValue))"))
        }
        // SEC 1 §2.3.4 decoding, including the on-curve check (ossl_ec_GFp_simple_oct2point).
        let set = point.withUnsafeBufferPointer { EVP_PKEY_set1_encoded_public_key(pkey, $0.baseAddress, $0.count) }
        guard set == 1 else {
            let error = OpenSSLError.drain("EVP_PKEY_set1_encoded_public_key")
            throw SignatureError(.invalidKey, "\(curve.rawValue) public key is not a valid curve point (\(error))")
        }
        return owned
    }

    /// An Ed25519/Ed448 key from its raw 32/57 bytes (RFC 8410 §3).
    private static func makeRawKey(_ type: String, _ bytes: ArraySlice<UInt8>) throws(SignatureError) -> OwnedEVPKey {
        OpenSSLError.clear()
        let pkey = bytes.withUnsafeBufferPointer {
            EVP_PKEY_new_raw_public_key_ex(nil, type, nil, $0.baseAddress, $0.count)
        }
        guard let pkey else {
            throw SignatureError(.invalidKey, OpenSSLError.drain("EVP_PKEY_new_raw_public_key_ex(\(type))").description)
        }
        return OwnedEVPKey(takingOwnershipOf: pkey)
    }
}

/// One parameters-only `EVP_PKEY` per NIST curve, built once per process. Copying its
/// parameters into a new key duplicates the already-built `EC_GROUP` instead of constructing
/// the group (and its precomputation tables) from the curve name again.
final class ECCurveTemplate: Sendable {
    let key: OwnedEVPKey

    private init?(_ groupName: String) {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            OpenSSLError.clear()
            return nil
        }
        defer { EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_paramgen_init(context) == 1,
            EVP_PKEY_CTX_set_group_name(context, groupName) == 1,
            EVP_PKEY_paramgen(context, &pkey) == 1,
            let pkey
        else {
            OpenSSLError.clear()
            return nil
        }
        key = OwnedEVPKey(takingOwnershipOf: pkey)
    }

    private static let p256 = ECCurveTemplate("P-256")
    private static let p384 = ECCurveTemplate("P-384")
    private static let p521 = ECCurveTemplate("P-521")

    /// The template for `curve`, or `nil` if libcrypto lacks the curve.
    static func `for`(_ curve: NamedCurve) -> ECCurveTemplate? {
        switch curve {
        case .p256: return p256
        case .p384: return p384
        case .p521: return p521
        }
    }
}
