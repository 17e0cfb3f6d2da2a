import CertificateParsing
public import TrustEvaluation

/// A public key that signs pin-set updates (docs/pinset-format.md): Ed25519, or ECDSA P-256
/// with an uncompressed point. The app embeds these; they are never the keys of a TLS server.
///
/// A key is named by its key id, the lowercase hex SHA-256 of its SubjectPublicKeyInfo DER,
/// computed here and never taken from a document: a document's `keyId` only says which trusted
/// key to try, and the signature must then verify under that key.
///
/// ```swift
/// let keys = try ["MCowBQYDK2VwAyEA…", "MCowBQYDK2VwAyEA…"].map(PinSetSigningKey.init(base64:))
/// ```
public struct PinSetSigningKey: Hashable, Sendable, CustomStringConvertible {
    /// The DER SubjectPublicKeyInfo.
    public let publicKeyInfoDER: [UInt8]
    /// Ed25519 or P-256.
    public let algorithm: SigningAlgorithm
    /// Lowercase hex SHA-256 of ``publicKeyInfoDER`` (64 characters).
    public let keyID: String
    let verificationKey: VerificationKey

    /// A key from its DER SubjectPublicKeyInfo.
    /// - Parameter publicKeyInfoDER: The DER, exactly (no trailing bytes).
    /// - Throws: ``PinSetError`` (`malformed`) when it is not an Ed25519 or uncompressed
    ///   P-256 key.
    public init(publicKeyInfoDER: [UInt8]) throws(PinSetError) {
        let info: SubjectPublicKeyInfo
        do { info = try SubjectPublicKeyInfo(derEncoded: publicKeyInfoDER) } catch {
            throw PinSetError(.malformed, "not a SubjectPublicKeyInfo: \(error)")
        }
        guard let algorithm = SigningAlgorithm(info) else {
            throw PinSetError(.malformed, "a \(info.key.algorithmName) key cannot sign pin sets (Ed25519, or P-256 with an uncompressed point)")
        }
        do { verificationKey = try VerificationKey(info) } catch {
            throw PinSetError(.malformed, "unusable \(algorithm) key: \(error)")
        }
        self.publicKeyInfoDER = publicKeyInfoDER
        self.algorithm = algorithm
        self.keyID = Hex.encode(SHA256.hash(publicKeyInfoDER))
    }

    /// A key from the form `servertrust pinset keygen` prints: standard base64 of the DER
    /// SubjectPublicKeyInfo, padded, without whitespace.
    /// - Parameter base64: The text.
    /// - Throws: ``PinSetError`` (`malformed`).
    public init(base64: String) throws(PinSetError) {
        guard let der = PinSetEncoding.canonicalBase64(base64) else {
            throw PinSetError(.malformed, "a signing key must be canonical base64 of a DER SubjectPublicKeyInfo (no whitespace)")
        }
        try self.init(publicKeyInfoDER: der)
    }

    /// The public half of a private signing key.
    /// - Parameter privateKey: An Ed25519 or P-256 key.
    /// - Throws: ``PinSetError`` (`malformed`) for other keys.
    public init(publicKeyOf privateKey: PrivateKey) throws(PinSetError) {
        try self.init(publicKeyInfoDER: privateKey.publicKeyInfoDER)
    }

    /// The embedded form: standard base64 of the DER SubjectPublicKeyInfo.
    public var base64: String { Base64.encode(publicKeyInfoDER) }

    /// `Ed25519 key 3f2a…` (the first 16 hex digits of the key id).
    public var description: String { "\(algorithm) key \(keyID.prefix(16))" }

    /// Whether `signature` verifies over `message` under this key.
    func check(_ signature: [UInt8], over message: [UInt8]) -> SignatureCheckResult {
        OpenSSLSignatureVerifier().check(
            signature: signature[...], over: message[...], algorithm: algorithm.signatureAlgorithm, key: verificationKey)
    }

    /// Keys are equal when their SubjectPublicKeyInfo DER is.
    public static func == (lhs: PinSetSigningKey, rhs: PinSetSigningKey) -> Bool { lhs.publicKeyInfoDER == rhs.publicKeyInfoDER }

    /// Hashes the DER.
    public func hash(into hasher: inout Hasher) { hasher.combine(publicKeyInfoDER) }
}

/// The encodings of the pin-set format, each with exactly one accepted spelling.
enum PinSetEncoding {
    /// Standard padded base64 (RFC 4648 §4) with nothing else: no whitespace, no CR/LF, zero
    /// padding bits. The text must be what encoding its decoding gives back, so one value has
    /// one spelling.
    static func canonicalBase64(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count % 4 == 0,
            bytes.allSatisfy({ $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }),
            let decoded = Base64.decode(bytes), Base64.encode(decoded) == text
        else { return nil }
        return decoded
    }

    /// A key id: 64 lowercase hex digits.
    static func isKeyID(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
