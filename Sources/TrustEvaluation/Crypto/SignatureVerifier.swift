public import CertificateParsing

/// The crypto seam between path building and a signature library, in the spirit of
/// pyca/cryptography's `CryptoOps` trait: the path builder never calls libcrypto itself, so
/// its loop, depth and budget logic can be tested with a verifier that accepts or rejects by
/// rule, without real keys.
///
/// Keys are built once per issuer (``makeKey(_:)``) and then used for any number of checks, from
/// any thread: trust-anchor keys are built when a store is first used and shared by every
/// concurrent evaluation.
public protocol SignatureVerifier: Sendable {
    /// A public key prepared for verification.
    associatedtype Key: Sendable

    /// Prepares the public key of a SubjectPublicKeyInfo.
    ///
    /// - Parameter publicKeyInfo: The issuer's parsed SubjectPublicKeyInfo.
    /// - Returns: A key for ``check(signature:over:algorithm:key:)``.
    /// - Throws: ``SignatureError`` if the key type is unsupported or the key is invalid or of
    ///   an unacceptable size.
    func makeKey(_ publicKeyInfo: SubjectPublicKeyInfo) throws(SignatureError) -> Key

    /// Checks `signature` over `data` with `key`.
    ///
    /// - Parameters:
    ///   - signature: The signature value (for a certificate, the content of its signature
    ///     BIT STRING).
    ///   - data: The signed bytes (for a certificate, the TBSCertificate DER).
    ///   - algorithm: The signature algorithm with its parameters.
    ///   - key: The signer's key from ``makeKey(_:)``.
    /// - Returns: ``SignatureCheckResult/valid`` or the reason it is not.
    func check(
        signature: ArraySlice<UInt8>,
        over data: ArraySlice<UInt8>,
        algorithm: SignatureAlgorithm,
        key: Key
    ) -> SignatureCheckResult
}

extension SignatureVerifier {
    /// Whether `signature` over `data` verifies with `key`: ``check(signature:over:algorithm:key:)``
    /// without the reason, for callers that only branch on the outcome.
    ///
    /// - Parameters:
    ///   - signature: The signature value.
    ///   - data: The signed bytes.
    ///   - algorithm: The signature algorithm.
    ///   - key: The signer's key.
    /// - Returns: `true` only when the signature is valid.
    @inlinable
    public func verify(
        signature: ArraySlice<UInt8>,
        over data: ArraySlice<UInt8>,
        algorithm: SignatureAlgorithm,
        key: Key
    ) -> Bool {
        check(signature: signature, over: data, algorithm: algorithm, key: key).isValid
    }

    /// Checks a certificate's signature (RFC 5280 §6.1.3 (a)(1)) with its issuer's key: the
    /// outer signature algorithm, over the TBSCertificate bytes exactly as encoded.
    ///
    /// - Parameters:
    ///   - certificate: The certificate whose signature is checked.
    ///   - issuerKey: The issuer's key from ``makeKey(_:)``.
    /// - Returns: ``SignatureCheckResult/valid`` or the reason it is not.
    @inlinable
    public func check(_ certificate: Certificate, signedBy issuerKey: Key) -> SignatureCheckResult {
        check(
            signature: certificate.signature,
            over: certificate.tbsBytes,
            algorithm: certificate.signatureAlgorithm,
            key: issuerKey
        )
    }
}

/// The outcome of one signature check.
public enum SignatureCheckResult: Hashable, Sendable, CustomStringConvertible {
    /// The signature verifies.
    case valid
    /// The signature does not verify, with the reason.
    case invalid(SignatureError)

    /// Whether the signature verifies.
    @inlinable
    public var isValid: Bool {
        if case .valid = self { return true }
        return false
    }

    /// `"valid"` or the error's description.
    public var description: String {
        switch self {
        case .valid: return "valid"
        case .invalid(let error): return error.description
        }
    }
}
