internal import COpenSSL
internal import CServerTrustShims
public import CertificateParsing

/// A public key ready for signature checks, built from a parsed SubjectPublicKeyInfo.
///
/// Keys are built from the components the project's DER reader already extracted, never by
/// handing the SPKI DER back to OpenSSL: `d2i_PUBKEY` goes through OpenSSL 3.0's provider
/// decoders and costs about 90–110 µs per key, several times a whole signature check. What
/// each type costs instead, measured on the project machine (release build, OpenSSL 3.0.19):
///
/// - RSA: n and e validated here, imported as `BIGNUM`s with a precomputed Montgomery
///   context (about 6 µs) on the key's first check, so a key whose checks the
///   ``SignatureMemo`` answers never pays it (see `RSAPublicKeyMaterial`).
/// - EC: an `EC_KEY` on a copy of a per-curve template group plus `EC_KEY_oct2key`, about
///   1.9 µs for P-256, checked with `ECDSA_verify`. That API is deprecated in OpenSSL 3 but kept
///   for all of 3.x, and it is the very code `EVP_PKEY_verify` ends in, without the provider
///   dispatch around it: building the key through EVP (`EVP_PKEY_copy_parameters` plus
///   `EVP_PKEY_set1_encoded_public_key`) costs 4.3 µs and each check another 2.3 µs for its
///   `EVP_PKEY_CTX`, about 7 µs per P-256 chain in all (`EVP_PKEY_fromdata` with a group name
///   costs 16 µs, as it rebuilds the curve group each time). The EVP path is still used when
///   libcrypto lacks the deprecated API or its default properties ask for FIPS, since the
///   EC_KEY functions bypass provider selection. Either way decoding the point checks that it
///   lies on the curve.
/// - Ed25519/Ed448: `EVP_PKEY_new_raw_public_key_ex`, about 2 µs.
///
/// A key is immutable and may be used from any number of threads at once; every check makes
/// its own short-lived libcrypto contexts.
public final class VerificationKey: Sendable, CustomStringConvertible {
    enum Storage: Sendable {
        case rsa(RSAPublicKeyMaterial)
        case ec(ECKeyHandle, NamedCurve)
        case ed25519(OwnedEVPKey)
        case ed448(OwnedEVPKey)
    }

    let storage: Storage

    /// The SubjectPublicKeyInfo DER the key was built from: the signer's identity in the
    /// ``SignatureMemo``'s fingerprints.
    let publicKeyInfoDER: ArraySlice<UInt8>

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
    public convenience init(_ publicKeyInfo: SubjectPublicKeyInfo) throws(SignatureError) {
        try self.init(publicKeyInfo, ecdsaBackend: ECCurveTemplate.preferredBackend)
    }

    /// Builds a key whose ECDSA checks go through `backend` (tests compare the two paths).
    ///
    /// - Parameters:
    ///   - publicKeyInfo: The SubjectPublicKeyInfo.
    ///   - ecdsaBackend: For EC keys, the libcrypto API that checks signatures; if
    ///     ``ECDSABackend/ecKey`` is unavailable the EVP path is used. Ignored for other keys.
    /// - Throws: As ``init(_:)``.
    package init(_ publicKeyInfo: SubjectPublicKeyInfo, ecdsaBackend: ECDSABackend) throws(SignatureError) {
        let key = publicKeyInfo.key
        publicKeyInfoDER = publicKeyInfo.derBytes
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
            storage = .ec(try VerificationKey.makeECKey(curve: curve, point: point, backend: ecdsaBackend), curve)
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

    /// For an EC key, the libcrypto API its ECDSA checks use; `nil` for other keys.
    package var ecdsaBackend: ECDSABackend? {
        guard case .ec(let handle, _) = storage else { return nil }
        switch handle {
        case .ecKey: return .ecKey
        case .evp: return .evp
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

    /// An EC key on the curve template's group: an `EC_KEY` for `ECDSA_verify` when `backend`
    /// asks for it and libcrypto has it, else an `EVP_PKEY` with the template's parameters.
    private static func makeECKey(
        curve: NamedCurve,
        point: ArraySlice<UInt8>,
        backend: ECDSABackend
    ) throws(SignatureError) -> ECKeyHandle {
        guard let template = ECCurveTemplate.for(curve) else {
            throw SignatureError(.unsupportedKey, "libcrypto does not offer the curve \(curve.rawValue)")
        }
        if backend == .ecKey, let group = template.group {
            switch OwnedECKey.make(group: group.pointer, point: point) {
            case .success(let key):
                return .ecKey(key)
            case .failure(.invalidPoint(let error)):
                throw SignatureError(.invalidKey, "\(curve.rawValue) public key is not a valid curve point (\(error))")
            case .failure(.unavailable):
                break  // the EVP path below decides
            }
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
        return .evp(owned)
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

/// Which libcrypto API checks ECDSA signatures (see ``VerificationKey``).
package enum ECDSABackend: Sendable, Equatable {
    /// `EC_KEY` and `ECDSA_verify` (deprecated in OpenSSL 3, faster).
    case ecKey
    /// `EVP_PKEY` and `EVP_PKEY_verify` (provider-aware).
    case evp
}

/// The libcrypto object behind an EC ``VerificationKey``.
enum ECKeyHandle: Sendable {
    case ecKey(OwnedECKey)
    case evp(OwnedEVPKey)
}

/// The single Swift owner of one `EC_GROUP`, shared read-only by the keys copied from it.
final class OwnedECGroup: @unchecked Sendable {
    // @unchecked Sendable: never modified after EC_GROUP_new_by_curve_name; EC_KEY_set_group
    // only reads it (EC_GROUP_dup), which openssl-threads(7) allows from many threads.

    /// The owned `EC_GROUP *`.
    let pointer: OpaquePointer

    init?(curveNID: Int32) {
        guard let group = EC_GROUP_new_by_curve_name(curveNID) else {
            OpenSSLError.clear()
            return nil
        }
        pointer = group
    }

    deinit { EC_GROUP_free(pointer) }
}

/// One parameters-only `EVP_PKEY` and one `EC_GROUP` per NIST curve, built once per process.
/// Copying from them duplicates an already-built group instead of constructing the group (and
/// its precomputation tables) from the curve name again.
final class ECCurveTemplate: Sendable {
    let key: OwnedEVPKey
    /// The curve's group for `EC_KEY`s; `nil` when libcrypto lacks the deprecated EC_KEY API.
    /// Built even when FIPS properties make ``preferredBackend`` `.evp`: one object per curve,
    /// and tests still compare both paths there.
    let group: OwnedECGroup?

    private init?(_ groupName: String, nid: Int32) {
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
        group = CServerTrustShims_has_EC_KEY() == 1 ? OwnedECGroup(curveNID: nid) : nil
    }

    /// ``ECDSABackend/ecKey`` unless libcrypto lacks the deprecated EC_KEY API or its default
    /// properties ask for FIPS (`EC_KEY` functions bypass provider selection, so a FIPS
    /// configuration must keep the provider path). Decided once per process.
    static let preferredBackend: ECDSABackend =
        CServerTrustShims_has_EC_KEY() == 1 && EVP_default_properties_is_fips_enabled(nil) == 0 ? .ecKey : .evp

    private static let p256 = ECCurveTemplate("P-256", nid: NID_X9_62_prime256v1)
    private static let p384 = ECCurveTemplate("P-384", nid: NID_secp384r1)
    private static let p521 = ECCurveTemplate("P-521", nid: NID_secp521r1)

    /// The template for `curve`, or `nil` if libcrypto lacks the curve.
    static func `for`(_ curve: NamedCurve) -> ECCurveTemplate? {
        switch curve {
        case .p256: return p256
        case .p384: return p384
        case .p521: return p521
        }
    }
}
