internal import COpenSSL
public import CertificateParsing

/// The key types this library generates and signs documents with (signed pin sets):
/// Ed25519 (RFC 8032) and ECDSA on P-256 with SHA-256 (FIPS 186-4, SEC 1).
public enum SigningAlgorithm: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Pure Ed25519 (RFC 8032 §5.1): 64-byte signatures, deterministic.
    case ed25519
    /// ECDSA P-256 with SHA-256: DER `ECDSA-Sig-Value` signatures (RFC 5480 / RFC 5758 §3.2).
    case p256

    /// `Ed25519`, `P-256`.
    public var description: String { self == .ed25519 ? "Ed25519" : "P-256" }

    /// The signature algorithm a verifier checks signatures of this kind with.
    public var signatureAlgorithm: SignatureAlgorithm { self == .ed25519 ? .ed25519 : .ecdsa(.sha256) }

    /// The algorithm of a SubjectPublicKeyInfo, or `nil` when it is neither an Ed25519 key nor a
    /// P-256 key with an uncompressed point (one key, one encoding: RFC 5480 §2.2).
    /// - Parameter publicKeyInfo: The key.
    public init?(_ publicKeyInfo: SubjectPublicKeyInfo) {
        switch publicKeyInfo.key {
        case .ed25519: self = .ed25519
        case .ec(.p256, let point) where point.first == 0x04: self = .p256
        default: return nil
        }
    }
}

extension PrivateKey {
    /// Generates a new key with libcrypto's default random generator (`EVP_PKEY_generate`).
    ///
    /// - Parameter algorithm: Ed25519 or P-256.
    /// - Returns: The key.
    /// - Throws: ``KeyError`` (`.unsupported`) when libcrypto cannot generate it.
    public static func generate(_ algorithm: SigningAlgorithm) throws(KeyError) -> PrivateKey {
        OpenSSLError.clear()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm == .ed25519 ? "ED25519" : "EC", nil) else {
            throw KeyError.openSSL(.unsupported, "cannot generate a \(algorithm) key", "EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else {
            throw KeyError.openSSL(.unsupported, "cannot generate a \(algorithm) key", "EVP_PKEY_keygen_init")
        }
        if algorithm == .p256 {
            guard EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 else {
                throw KeyError.openSSL(.unsupported, "cannot generate a P-256 key", "EVP_PKEY_CTX_set_group_name")
            }
        }
        var generated: OpaquePointer?
        guard EVP_PKEY_generate(context, &generated) == 1, let generated else {
            throw KeyError.openSSL(.unsupported, "cannot generate a \(algorithm) key", "EVP_PKEY_generate")
        }
        return try PrivateKey(adopting: OwnedEVPKey(takingOwnershipOf: generated), source: "generated \(algorithm) key")
    }

    /// The algorithm this key signs with, or `nil` for keys other than Ed25519 and P-256.
    public var signingAlgorithm: SigningAlgorithm? {
        guard let info = try? SubjectPublicKeyInfo(derEncoded: publicKeyInfoDER) else { return nil }
        return SigningAlgorithm(info)
    }

    /// Signs `message` (one-shot `EVP_DigestSign`): pure Ed25519 (RFC 8032 §5.1.6, no
    /// pre-hash), or ECDSA P-256 over SHA-256 with a DER `ECDSA-Sig-Value`.
    ///
    /// - Parameter message: The exact bytes to sign.
    /// - Returns: The signature.
    /// - Throws: ``KeyError`` (`.unsupported`) for keys other than Ed25519 and P-256, or when
    ///   libcrypto fails.
    public func signature(over message: [UInt8]) throws(KeyError) -> [UInt8] {
        guard let algorithm = signingAlgorithm else {
            throw KeyError(.unsupported, "\(description) cannot sign documents (Ed25519 or P-256 keys only)")
        }
        OpenSSLError.clear()
        guard let context = EVP_MD_CTX_new() else { throw KeyError.openSSL(.unsupported, "cannot sign", "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        // EdDSA takes no digest (OpenSSL requires NULL); ECDSA hashes with SHA-256 here.
        let initialised =
            algorithm == .ed25519
            ? EVP_DigestSignInit_ex(context, nil, nil, nil, nil, key.pointer, nil)
            : EVP_DigestSignInit_ex(context, nil, "SHA256", nil, nil, key.pointer, nil)
        guard initialised == 1 else { throw KeyError.openSSL(.unsupported, "cannot sign with \(description)", "EVP_DigestSignInit_ex") }
        // withUnsafeBufferPointer rethrows untyped errors, so the typed error travels in a Result.
        let result = message.withUnsafeBufferPointer { input in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1) { empty -> Result<[UInt8], KeyError> in
                // A zero-length message may have a nil base address; libcrypto wants a valid pointer.
                let bytes = input.baseAddress ?? UnsafePointer(empty.baseAddress)
                var length = 0
                guard EVP_DigestSign(context, nil, &length, bytes, input.count) == 1, length > 0 else {
                    return .failure(KeyError.openSSL(.unsupported, "cannot sign with \(description)", "EVP_DigestSign"))
                }
                var signature = [UInt8](repeating: 0, count: length)
                let signed = signature.withUnsafeMutableBufferPointer { EVP_DigestSign(context, $0.baseAddress, &length, bytes, input.count) }
                guard signed == 1, length <= signature.count else {
                    return .failure(KeyError.openSSL(.unsupported, "cannot sign with \(description)", "EVP_DigestSign"))
                }
                signature.removeLast(signature.count - length)  // an ECDSA signature may be shorter than the maximum
                return .success(signature)
            }
        }
        return try result.get()
    }

    /// The key as unencrypted PKCS #8 PEM (`-----BEGIN PRIVATE KEY-----`, RFC 5958 §2, RFC 7468
    /// §10), which ``init(pemEncoded:password:)`` reads back. Keep it in a file only this user
    /// can read.
    /// - Returns: The PEM text.
    /// - Throws: ``KeyError`` when libcrypto cannot encode the key.
    public func pkcs8PEM() throws(KeyError) -> String {
        OpenSSLError.clear()
        guard let info = EVP_PKEY2PKCS8(key.pointer) else {
            throw KeyError.openSSL(.unsupported, "cannot encode \(description)", "EVP_PKEY2PKCS8")
        }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, nil)
        guard length > 0 else { throw KeyError.openSSL(.unsupported, "cannot encode \(description)", "i2d_PKCS8_PRIV_KEY_INFO") }
        var written: Int32 = 0
        let der = [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, count in
            var cursor = buffer.baseAddress
            written = i2d_PKCS8_PRIV_KEY_INFO(info, &cursor)
            count = written == length ? Int(length) : 0
        }
        guard written == length else { throw KeyError.openSSL(.unsupported, "cannot encode \(description)", "i2d_PKCS8_PRIV_KEY_INFO") }
        let base64 = Array(Base64.encode(der).utf8)
        var pem = "-----BEGIN PRIVATE KEY-----\n"
        var start = 0
        while start < base64.count {
            let end = min(start + 64, base64.count)
            pem += String(decoding: base64[start..<end], as: UTF8.self) + "\n"
            start = end
        }
        return pem + "-----END PRIVATE KEY-----\n"
    }
}
