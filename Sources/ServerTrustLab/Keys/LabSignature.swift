internal import COpenSSL

/// The message digests the Lab can sign with.
///
/// MD5 and SHA-1 are included on purpose: tests need certificates signed with weak digests
/// to check that they are rejected.
public enum LabDigest: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// MD5 (broken; for rejection tests only).
    case md5
    /// SHA-1 (deprecated for certificates; for rejection tests).
    case sha1
    /// SHA-224.
    case sha224
    /// SHA-256.
    case sha256
    /// SHA-384.
    case sha384
    /// SHA-512.
    case sha512

    /// The digest's name as OpenSSL prints it, such as `SHA256`.
    public var description: String {
        switch self {
        case .md5: return "MD5"
        case .sha1: return "SHA1"
        case .sha224: return "SHA224"
        case .sha256: return "SHA256"
        case .sha384: return "SHA384"
        case .sha512: return "SHA512"
        }
    }

    /// The digest algorithm's object identifier (dotted).
    public var oid: String {
        switch self {
        case .md5: return "1.2.840.113549.2.5"
        case .sha1: return "1.3.14.3.2.26"
        case .sha224: return "2.16.840.1.101.3.4.2.4"
        case .sha256: return "2.16.840.1.101.3.4.2.1"
        case .sha384: return "2.16.840.1.101.3.4.2.2"
        case .sha512: return "2.16.840.1.101.3.4.2.3"
        }
    }

    /// The digest output size in bytes (also the conventional PSS salt length).
    public var outputLength: Int {
        switch self {
        case .md5: return 16
        case .sha1: return 20
        case .sha224: return 28
        case .sha256: return 32
        case .sha384: return 48
        case .sha512: return 64
        }
    }

    /// Hashes `bytes` with this digest.
    ///
    /// - Parameter bytes: The input.
    /// - Returns: The digest value.
    /// - Throws: ``LabError`` if OpenSSL refuses the digest.
    public func hash(_ bytes: [UInt8]) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &output, &length, evpMD, nil)
        }
        guard ok == 1 else { throw LabError.openSSL("EVP_Digest(\(self))") }
        return Array(output.prefix(Int(length)))
    }

    /// The RFC 4055 AlgorithmIdentifier for this hash with explicit NULL parameters, as used
    /// inside RSASSA-PSS parameters.
    func algorithmIdentifierWithNull() throws -> [UInt8] {
        LabDER.sequence([try LabDER.oid(oid), LabDER.null()])
    }

    /// The OpenSSL `EVP_MD *` (a static object owned by OpenSSL, never freed).
    var evpMD: OpaquePointer? {
        switch self {
        case .md5: return EVP_md5()
        case .sha1: return EVP_sha1()
        case .sha224: return EVP_sha224()
        case .sha256: return EVP_sha256()
        case .sha384: return EVP_sha384()
        case .sha512: return EVP_sha512()
        }
    }
}

/// A certificate signature algorithm: the key type, padding and digest together.
public enum LabSignatureScheme: Sendable, Hashable, CustomStringConvertible {
    /// RSASSA-PKCS1-v1_5 with the digest (`sha256WithRSAEncryption` and friends).
    case rsaPKCS1(LabDigest)
    /// RSASSA-PSS with the digest, MGF1 using the same digest, and the salt length in bytes.
    case rsaPSS(LabDigest, saltLength: Int)
    /// ECDSA with the digest (`ecdsa-with-SHA256` and friends); MD5 has no OID and throws.
    case ecdsa(LabDigest)
    /// Pure Ed25519 (RFC 8410).
    case ed25519
    /// Pure Ed448 (RFC 8410).
    case ed448

    /// The conventional scheme for a key: RSA → PKCS#1 SHA-256, P-256 → ECDSA SHA-256,
    /// P-384 → ECDSA SHA-384, P-521 → ECDSA SHA-512, EdDSA → pure EdDSA.
    ///
    /// - Parameter algorithm: The signing key's algorithm.
    /// - Returns: The default scheme.
    public static func `default`(for algorithm: LabKeyAlgorithm) -> LabSignatureScheme {
        switch algorithm {
        case .rsa: return .rsaPKCS1(.sha256)
        case .p256: return .ecdsa(.sha256)
        case .p384: return .ecdsa(.sha384)
        case .p521: return .ecdsa(.sha512)
        case .ed25519: return .ed25519
        case .ed448: return .ed448
        }
    }

    /// A readable name such as `rsaPSS(SHA256, salt 32)`.
    public var description: String {
        switch self {
        case .rsaPKCS1(let digest): return "rsaPKCS1(\(digest))"
        case .rsaPSS(let digest, let salt): return "rsaPSS(\(digest), salt \(salt))"
        case .ecdsa(let digest): return "ecdsa(\(digest))"
        case .ed25519: return "ed25519"
        case .ed448: return "ed448"
        }
    }

    /// ``algorithmIdentifierDER`` with its parameters left out (the OID alone): what some
    /// tools wrote in one of a certificate's two signature fields for RSA PKCS #1 v1.5, where
    /// RFC 4055 gives NULL parameters.
    ///
    /// - Throws: ``LabError`` as ``algorithmIdentifierDER`` does.
    public var algorithmIdentifierDERWithoutParameters: [UInt8] {
        get throws {
            let identifier = try LabDER.parse(try algorithmIdentifierDER).children()
            return LabDER.sequence(Array(identifier.prefix(1).map(\.encoded)))
        }
    }

    /// The signature AlgorithmIdentifier as it must appear in a certificate.
    ///
    /// RSA PKCS#1 algorithms carry NULL parameters (RFC 4055 §5); ECDSA (RFC 5758 §3.2) and
    /// EdDSA (RFC 8410 §3) omit them; RSASSA-PSS carries RSASSA-PSS-params (RFC 4055 §3.1) in
    /// DER, so fields equal to their defaults (SHA-1, MGF1-SHA-1, salt 20) are omitted and
    /// hash AlgorithmIdentifiers carry NULL parameters as RFC 4055 specifies.
    ///
    /// - Throws: ``LabError`` for a combination that has no OID (ECDSA with MD5, a negative salt).
    public var algorithmIdentifierDER: [UInt8] {
        get throws {
            switch self {
            case .rsaPKCS1(let digest):
                let oid: String
                switch digest {
                case .md5: oid = "1.2.840.113549.1.1.4"
                case .sha1: oid = "1.2.840.113549.1.1.5"
                case .sha224: oid = "1.2.840.113549.1.1.14"
                case .sha256: oid = "1.2.840.113549.1.1.11"
                case .sha384: oid = "1.2.840.113549.1.1.12"
                case .sha512: oid = "1.2.840.113549.1.1.13"
                }
                return LabDER.sequence([try LabDER.oid(oid), LabDER.null()])
            case .rsaPSS(let digest, let saltLength):
                guard saltLength >= 0 else {
                    throw LabError.invalid("LabSignatureScheme.algorithmIdentifierDER", "negative PSS salt length")
                }
                var params: [[UInt8]] = []
                if digest != .sha1 {
                    params.append(LabDER.explicit(0, try digest.algorithmIdentifierWithNull()))
                    let mgf1 = LabDER.sequence([try LabDER.oid("1.2.840.113549.1.1.8"), try digest.algorithmIdentifierWithNull()])
                    params.append(LabDER.explicit(1, mgf1))
                }
                if saltLength != 20 {
                    params.append(LabDER.explicit(2, LabDER.integer(saltLength)))
                }
                return LabDER.sequence([try LabDER.oid("1.2.840.113549.1.1.10"), LabDER.sequence(params)])
            case .ecdsa(let digest):
                let oid: String
                switch digest {
                case .md5:
                    throw LabError.invalid("LabSignatureScheme.algorithmIdentifierDER", "ECDSA with MD5 has no OID")
                case .sha1: oid = "1.2.840.10045.4.1"
                case .sha224: oid = "1.2.840.10045.4.3.1"
                case .sha256: oid = "1.2.840.10045.4.3.2"
                case .sha384: oid = "1.2.840.10045.4.3.3"
                case .sha512: oid = "1.2.840.10045.4.3.4"
                }
                return LabDER.sequence([try LabDER.oid(oid)])
            case .ed25519:
                return LabDER.sequence([try LabDER.oid("1.3.101.112")])
            case .ed448:
                return LabDER.sequence([try LabDER.oid("1.3.101.113")])
            }
        }
    }

    /// Whether a key of `algorithm` can produce this scheme's signatures.
    ///
    /// - Parameter algorithm: The key algorithm.
    /// - Returns: `true` when compatible.
    public func isCompatible(with algorithm: LabKeyAlgorithm) -> Bool {
        switch self {
        case .rsaPKCS1, .rsaPSS: return algorithm.isRSA
        case .ecdsa: return algorithm.isEC
        case .ed25519: return algorithm == .ed25519
        case .ed448: return algorithm == .ed448
        }
    }

    /// Signs `message` with `key` using this scheme (EVP_DigestSign; ECDSA output is the DER
    /// Ecdsa-Sig-Value that X.509 expects).
    ///
    /// - Parameters:
    ///   - message: The bytes to sign (for certificates, the TBSCertificate DER).
    ///   - key: The private key.
    /// - Returns: The raw signature value.
    /// - Throws: ``LabError`` on a key/scheme mismatch or an OpenSSL failure.
    public func sign(_ message: [UInt8], with key: LabKey) throws -> [UInt8] {
        guard isCompatible(with: key.algorithm) else {
            throw LabError.invalid("LabSignatureScheme.sign", "\(self) cannot be produced by a \(key.algorithm) key")
        }
        guard let mdContext = EVP_MD_CTX_new() else { throw LabError.openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(mdContext) }

        let digest: LabDigest?
        switch self {
        case .rsaPKCS1(let d), .rsaPSS(let d, _), .ecdsa(let d): digest = d
        case .ed25519, .ed448: digest = nil  // EdDSA is "pure": OpenSSL requires a NULL digest.
        }
        // The EVP_PKEY_CTX is owned by mdContext, so it is not freed here.
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit(mdContext, &keyContext, digest?.evpMD, nil, key.pkey) == 1 else {
            throw LabError.openSSL("EVP_DigestSignInit(\(self))")
        }
        if case .rsaPSS(let d, let saltLength) = self {
            guard let keyContext, let salt = Int32(exactly: saltLength) else {
                throw LabError.openSSL("EVP_DigestSignInit(\(self))", "no key context or salt out of range")
            }
            guard EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1 else {
                throw LabError.openSSL("EVP_PKEY_CTX_set_rsa_padding(PSS)")
            }
            guard EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, d.evpMD) == 1 else {
                throw LabError.openSSL("EVP_PKEY_CTX_set_rsa_mgf1_md(\(d))")
            }
            guard EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, salt) == 1 else {
                throw LabError.openSSL("EVP_PKEY_CTX_set_rsa_pss_saltlen(\(saltLength))")
            }
        }
        return try message.withUnsafeBufferPointer { input -> [UInt8] in
            var length = 0
            guard EVP_DigestSign(mdContext, nil, &length, input.baseAddress, input.count) == 1 else {
                throw LabError.openSSL("EVP_DigestSign(\(self)) size query")
            }
            var signature = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(mdContext, &signature, &length, input.baseAddress, input.count) == 1 else {
                throw LabError.openSSL("EVP_DigestSign(\(self))")
            }
            return Array(signature.prefix(length))
        }
    }
}
