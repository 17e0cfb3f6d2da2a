internal import COpenSSL
internal import CServerTrustShims
public import CertificateParsing

/// Signature verification with OpenSSL's libcrypto (and, for RSASSA-PKCS1-v1_5, libcrypto's
/// big-number arithmetic plus an exact encoded-message comparison in Swift).
///
/// Supported, each only with the matching key type:
///
/// | algorithm | key | notes |
/// |---|---|---|
/// | RSASSA-PKCS1-v1_5 with MD5, SHA-1, SHA-224, SHA-256, SHA-384, SHA-512 | RSA | RFC 8017 §8.2 |
/// | RSASSA-PSS with its parsed parameters | RSA (`rsaEncryption`) | RFC 4055 §3.1, parameters enforced |
/// | ECDSA with SHA-1, SHA-224, SHA-256, SHA-384, SHA-512 | P-256, P-384, P-521 | RFC 5758 §3.2, DER `ECDSA-Sig-Value` |
/// | Ed25519, Ed448 | Ed25519, Ed448 | RFC 8410 §6 |
///
/// This layer checks cryptography only: whether MD5 or SHA-1 signatures are acceptable is the
/// validation policy's decision. ECDSA accepts any digest with any of the three curves (a
/// P-384 key with ecdsa-with-SHA256 verifies), as RFC 5480 §4, OpenSSL and Go do; the digest
/// is truncated to the curve order as FIPS 186-4 §6.4 specifies. The CA/Browser Forum's
/// matching requirement (BR §7.1.3.2.2) belongs to policy as well.
///
/// Successful checks are remembered in a ``SignatureMemo`` (by default the process-wide
/// ``SignatureMemo/shared``), so a signature met again costs a digest and a look-up; failures
/// are never remembered. `OpenSSLSignatureVerifier(memo: nil)` checks every signature afresh.
public struct OpenSSLSignatureVerifier: SignatureVerifier {
    /// The key type: libcrypto-backed public keys.
    public typealias Key = VerificationKey

    /// The smallest RSA modulus a key may have before any check is attempted (512 bits).
    /// Policy normally demands far more (2048); this floor only keeps nonsense out of libcrypto.
    public static let minimumRSAModulusBits = 512

    /// The largest RSA modulus accepted (16384 bits, OpenSSL's `OPENSSL_RSA_MAX_MODULUS_BITS`):
    /// the cost of a check grows with the square of the modulus size, so an absurd key in a
    /// hostile chain must not be able to stall the verifier.
    public static let maximumRSAModulusBits = 16384

    /// The memo of successful checks this verifier consults and fills; `nil` for none.
    public let memo: SignatureMemo?

    /// Creates a verifier whose successful checks are remembered in ``SignatureMemo/shared``
    /// (which follows the process-wide ``SignatureMemo/isEnabled`` switch).
    public init() {
        self.memo = .shared
    }

    /// Creates a verifier with a memo of its own choosing.
    ///
    /// - Parameter memo: Where successful checks are remembered: ``SignatureMemo/shared``, a
    ///   memo of the caller's, or `nil` to verify every signature afresh.
    public init(memo: SignatureMemo?) {
        self.memo = memo
    }

    /// Builds a ``VerificationKey`` (see there for how each type is imported and what it costs).
    ///
    /// - Parameter publicKeyInfo: The SubjectPublicKeyInfo.
    /// - Returns: The key.
    /// - Throws: ``SignatureError`` if the key is unsupported, invalid or of an unacceptable size.
    public func makeKey(_ publicKeyInfo: SubjectPublicKeyInfo) throws(SignatureError) -> VerificationKey {
        try VerificationKey(publicKeyInfo)
    }

    /// Checks `signature` over `data`, through ``memo`` when it has one and is enabled.
    ///
    /// - Parameters:
    ///   - signature: The signature value.
    ///   - data: The signed bytes.
    ///   - algorithm: The signature algorithm; ``/CertificateParsing/SignatureAlgorithm/other(_:)``
    ///     never verifies.
    ///   - key: The signer's key.
    /// - Returns: ``SignatureCheckResult/valid``, or why not.
    public func check(
        signature: ArraySlice<UInt8>,
        over data: ArraySlice<UInt8>,
        algorithm: SignatureAlgorithm,
        key: VerificationKey
    ) -> SignatureCheckResult {
        let memo = self.memo.flatMap { $0.isEnabled ? $0 : nil }
        switch (algorithm, key.storage) {
        case (.rsaPKCS1(let digest), .rsa(let rsa)):
            return Self.withDigest(digest, of: data) { hash in
                Self.remembered(in: memo, algorithm, key, hash, signature) {
                    rsa.verifyPKCS1(signature: signature, messageDigest: hash, digest: digest)
                }
            }
        case (.rsaPSS(let parameters), .rsa(let rsa)):
            return Self.withDigest(parameters.digest, of: data) { hash in
                Self.remembered(in: memo, algorithm, key, hash, signature) {
                    rsa.verifyPSS(signature: signature, messageDigest: hash, parameters: parameters)
                }
            }
        case (.ecdsa(let digest), .ec(let pkey, let curve)):
            return Self.withDigest(digest, of: data) { hash in
                Self.remembered(in: memo, algorithm, key, hash, signature) {
                    Self.verifyECDSA(signature: signature, messageDigest: hash, digest: digest, key: pkey, curve: curve)
                }
            }
        case (.ed25519, .ed25519(let pkey)), (.ed448, .ed448(let pkey)):
            // Pure EdDSA hashes nothing before signing: the memo keys on the message's SHA-256,
            // computed only when there is a memo to ask.
            guard let memo else { return Self.verifyEdDSA(signature: signature, data: data, key: pkey, name: key.algorithmName) }
            return Self.withDigest(.sha256, of: data) { hash in
                Self.remembered(in: memo, algorithm, key, hash, signature) {
                    Self.verifyEdDSA(signature: signature, data: data, key: pkey, name: key.algorithmName)
                }
            }
        case (.other(let identifier), _):
            return .invalid(
                SignatureError(.unsupportedAlgorithm, "signature algorithm \(identifier.algorithm) is not supported")
            )
        default:
            return .invalid(
                SignatureError(.algorithmMismatch, "a \(algorithm) signature cannot be made by a \(key.description)")
            )
        }
    }

    /// `digest` over `data` in a stack buffer, handed to `body`; an unsupported digest (MD5
    /// under a FIPS provider) or a libcrypto failure is the check's result instead.
    static func withDigest(
        _ digest: DigestAlgorithm,
        of data: ArraySlice<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>) -> SignatureCheckResult
    ) -> SignatureCheckResult {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer -> SignatureCheckResult in
            guard let hash = buffer.baseAddress, data.withUnsafeBytes({ Digest.hash(digest, $0, into: hash) }) else {
                return .invalid(
                    SignatureError(.unsupportedAlgorithm, OpenSSLError.drain("EVP_Digest(\(digest.rawValue))").description)
                )
            }
            return body(UnsafeBufferPointer(start: hash, count: digest.outputSize))
        }
    }

    /// `verify()`'s result, or `.valid` without calling it when `memo` holds this check's
    /// fingerprint; a successful `verify()` is remembered. Failures pass through untouched.
    static func remembered(
        in memo: SignatureMemo?,
        _ algorithm: SignatureAlgorithm,
        _ key: VerificationKey,
        _ messageDigest: UnsafeBufferPointer<UInt8>,
        _ signature: ArraySlice<UInt8>,
        verify: () -> SignatureCheckResult
    ) -> SignatureCheckResult {
        guard let memo,
            let fingerprint = SignatureMemo.Fingerprint(
                algorithm: algorithm, publicKeyInfo: key.publicKeyInfoDER, messageDigest: messageDigest, signature: signature)
        else { return verify() }
        if memo.contains(fingerprint) { return .valid }
        let result = verify()
        if result.isValid { memo.insert(fingerprint) }
        return result
    }

    /// ECDSA verification (RFC 5758 §3.2, SEC 1 §4.1.4): `messageDigest` (the message hashed
    /// with `digest` by the caller) and the DER `ECDSA-Sig-Value` handed to libcrypto's
    /// `ECDSA_verify`, directly or through `EVP_PKEY_verify` (see ``VerificationKey``), which
    /// rejects non-DER encodings and trailing bytes (it re-encodes the parsed value and
    /// compares).
    static func verifyECDSA(
        signature: ArraySlice<UInt8>,
        messageDigest: UnsafeBufferPointer<UInt8>,
        digest: DigestAlgorithm,
        key: ECKeyHandle,
        curve: NamedCurve
    ) -> SignatureCheckResult {
        guard !signature.isEmpty else { return .invalid(SignatureError(.malformedSignature, "empty ECDSA signature")) }
        guard messageDigest.count == digest.outputSize, let hash = messageDigest.baseAddress else {
            return .invalid(SignatureError(.internalFailure, "\(digest.rawValue) digest of \(messageDigest.count) bytes"))
        }
        let result: Int32
        switch key {
        case .ecKey(let ecKey):
            // ECDSA_verify takes int lengths; a signature over 2 GB is no signature.
            guard signature.count <= Int(Int32.max) else {
                return .invalid(SignatureError(.malformedSignature, "ECDSA signature is too long"))
            }
            result = signature.withUnsafeBufferPointer { sig in
                CServerTrustShims_ECDSA_verify(
                    hash, Int32(digest.outputSize), sig.baseAddress, Int32(sig.count), ecKey.pointer)
            }
        case .evp(let pkey):
            guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pkey.pointer, nil) else {
                return .invalid(.openSSL(OpenSSLError.drain("EVP_PKEY_CTX_new_from_pkey")))
            }
            defer { EVP_PKEY_CTX_free(context) }
            guard EVP_PKEY_verify_init(context) == 1 else {
                return .invalid(.openSSL(OpenSSLError.drain("EVP_PKEY_verify_init(ECDSA)")))
            }
            result = signature.withUnsafeBufferPointer { sig in
                EVP_PKEY_verify(context, sig.baseAddress, sig.count, hash, digest.outputSize)
            }
        }
        guard result == 1 else {
            OpenSSLError.clear()
            return .invalid(
                SignatureError(
                    .badSignature,
                    "ECDSA \(curve.rawValue) \(digest.rawValue) signature does not verify"
                )
            )
        }
        return .valid
    }

    /// Pure EdDSA (RFC 8032 §5.1.7 / §5.2.7, RFC 8410): no pre-hash, one-shot
    /// `EVP_DigestVerify` with a NULL digest as OpenSSL requires.
    static func verifyEdDSA(
        signature: ArraySlice<UInt8>,
        data: ArraySlice<UInt8>,
        key: OwnedEVPKey,
        name: String
    ) -> SignatureCheckResult {
        guard !signature.isEmpty else {
            return .invalid(SignatureError(.malformedSignature, "empty \(name) signature"))
        }
        guard let context = EVP_MD_CTX_new() else { return .invalid(.openSSL(OpenSSLError.drain("EVP_MD_CTX_new"))) }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit_ex(context, nil, nil, nil, nil, key.pointer, nil) == 1 else {
            return .invalid(.openSSL(OpenSSLError.drain("EVP_DigestVerifyInit_ex(\(name))")))
        }
        let result = signature.withUnsafeBufferPointer { sig in
            data.withUnsafeBufferPointer { message in
                // A zero-length message may have a nil base address; libcrypto wants a valid pointer.
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1) { empty in
                    EVP_DigestVerify(
                        context,
                        sig.baseAddress,
                        sig.count,
                        message.baseAddress ?? UnsafePointer(empty.baseAddress),
                        message.count
                    )
                }
            }
        }
        guard result == 1 else {
            OpenSSLError.clear()
            return .invalid(SignatureError(.badSignature, "\(name) signature does not verify"))
        }
        return .valid
    }
}
