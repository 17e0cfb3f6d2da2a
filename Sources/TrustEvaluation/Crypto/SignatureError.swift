/// Why a public key could not be built or a signature did not verify.
///
/// Errors compare by ``code`` only (the swift-asn1 convention used across the project), so a
/// test can match a freshly made error; ``reason`` says what and why for people.
public struct SignatureError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// The signature is well formed for the key but does not verify: wrong key, altered
        /// data, altered signature, or (for ECDSA) an encoding OpenSSL rejects.
        case badSignature
        /// The signature cannot belong to the key, e.g. an RSA signature whose length is not
        /// the modulus length (RFC 8017 §8.2.2 step 1).
        case malformedSignature
        /// The signature algorithm does not fit the key type (an ECDSA signature checked with
        /// an RSA key, Ed25519 with an Ed448 key, …).
        case algorithmMismatch
        /// The signature algorithm is not one this verifier implements, or its digest is not
        /// available from libcrypto (MD5 under a FIPS provider).
        case unsupportedAlgorithm
        /// The public key algorithm is not supported (DSA, curves other than P-256/P-384/P-521,
        /// `id-RSASSA-PSS` keys).
        case unsupportedKey
        /// The key is structurally invalid: an even RSA modulus, an exponent out of range, an EC
        /// point not on its curve.
        case invalidKey
        /// The RSA modulus is smaller than ``OpenSSLSignatureVerifier/minimumRSAModulusBits`` or
        /// larger than ``OpenSSLSignatureVerifier/maximumRSAModulusBits``.
        case keySizeOutOfRange
        /// libcrypto failed for a reason unrelated to the input (allocation failure, missing
        /// provider); the reason carries the OpenSSL error queue.
        case internalFailure
    }

    /// The kind of failure.
    public let code: Code
    /// What failed and why, on one line.
    public let reason: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - reason: A one-line explanation.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Wraps a libcrypto failure.
    static func openSSL(_ error: OpenSSLError) -> SignatureError {
        SignatureError(.internalFailure, error.description)
    }

    /// Errors are equal when their codes are.
    public static func == (lhs: SignatureError, rhs: SignatureError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// `"signature <code>: <reason>"`.
    public var description: String { "signature \(code.rawValue): \(reason)" }
}
