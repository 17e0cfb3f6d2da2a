internal import COpenSSL
internal import CServerTrustShims
internal import Synchronization

/// The public-key algorithms the Lab can generate.
public enum LabKeyAlgorithm: Sendable, Hashable, CustomStringConvertible {
    /// RSA with the given modulus size (OpenSSL 3 requires at least 512 bits).
    case rsa(bits: Int)
    /// ECDSA on NIST P-256 (secp256r1).
    case p256
    /// ECDSA on NIST P-384 (secp384r1).
    case p384
    /// ECDSA on NIST P-521 (secp521r1).
    case p521
    /// EdDSA over Curve25519 (RFC 8410).
    case ed25519
    /// EdDSA over Curve448 (RFC 8410).
    case ed448

    /// A short label such as `RSA-2048` or `P-256`, used in generated subject names.
    public var description: String {
        switch self {
        case .rsa(let bits): return "RSA-\(bits)"
        case .p256: return "P-256"
        case .p384: return "P-384"
        case .p521: return "P-521"
        case .ed25519: return "Ed25519"
        case .ed448: return "Ed448"
        }
    }

    /// Whether this is an RSA key (which affects key usage and default signature schemes).
    public var isRSA: Bool {
        if case .rsa = self { return true }
        return false
    }

    /// Whether this is an elliptic-curve (ECDSA) key.
    public var isEC: Bool {
        switch self {
        case .p256, .p384, .p521: return true
        default: return false
        }
    }

    /// The algorithms most tests iterate over: RSA-2048, the three NIST curves and both EdDSA curves.
    public static let common: [LabKeyAlgorithm] = [.rsa(bits: 2048), .p256, .p384, .p521, .ed25519, .ed448]
}

/// How a private key is serialised.
public enum LabPrivateKeyFormat: Sendable, Hashable {
    /// PKCS#8 `PrivateKeyInfo` (PEM label `PRIVATE KEY`), available for every algorithm.
    case pkcs8
    /// The algorithm-specific legacy form: PKCS#1 `RSAPrivateKey` (`RSA PRIVATE KEY`) or
    /// SEC 1 `ECPrivateKey` (`EC PRIVATE KEY`). EdDSA keys have none, so requesting it throws.
    case traditional
}

/// A generated private key, owned by exactly one Swift object.
///
/// Key generation is slow for RSA, so test suites should prefer ``shared(_:slot:)`` which
/// caches a few keys per algorithm for the life of the process.
public final class LabKey: @unchecked Sendable, Hashable, CustomStringConvertible {
    // @unchecked Sendable is safe: the EVP_PKEY is not changed after init, OpenSSL 3 allows
    // concurrent signing and public-key encoding with one EVP_PKEY, and every private-key
    // encoding runs under `privateEncoding` (see there).

    /// The owned `EVP_PKEY *`, freed in `deinit`.
    let pkey: OpaquePointer

    /// Serialises every encoding of the private key. OpenSSL 3.0's PKCS#8 encoder for EC keys
    /// (`ec_pki_priv_to_der`, providers/implementations/encode_decode/encode_key2any.c) sets
    /// `EC_PKEY_NO_PARAMETERS` on the key's shared `EC_KEY` for the duration of the call and
    /// then restores it. A traditional (SEC 1) encoding of the same key running meanwhile on
    /// another thread then omits the curve parameters, and nothing can read the result (tight
    /// loops of both even abort inside libcrypto): the shared keys of parallel test suites
    /// made this a rare flake (bad-input catalogue §11, run 7).
    private let privateEncoding = Mutex<Void>(())

    /// Runs `body`, which encodes the private key, with no other private-key encoding of this
    /// key running.
    func encodingPrivateKey<Result>(_ body: () throws -> Result) rethrows -> Result {
        try privateEncoding.withLock { _ in try body() }
    }

    /// The algorithm the key was generated for.
    public let algorithm: LabKeyAlgorithm

    /// The DER `SubjectPublicKeyInfo` of the public half (as produced by `i2d_PUBKEY`).
    public let publicKeyInfoDER: [UInt8]

    /// Generates a fresh key.
    ///
    /// - Parameter algorithm: The algorithm and size.
    /// - Throws: ``LabError`` if OpenSSL cannot generate the key.
    public convenience init(_ algorithm: LabKeyAlgorithm) throws {
        try self.init(adopting: try Self.generate(algorithm), algorithm: algorithm)
    }

    /// Loads an unencrypted private key from PEM (`PRIVATE KEY`, `EC PRIVATE KEY`, `RSA PRIVATE
    /// KEY`), such as a server key a command-line tool is given.
    ///
    /// - Parameter pem: The PEM text.
    /// - Throws: ``LabError`` if OpenSSL cannot read it or its algorithm is not one the Lab knows.
    public convenience init(privateKeyPEM pem: String) throws {
        let bytes = Array(pem.utf8)
        guard let count = Int32(exactly: bytes.count) else { throw LabError.invalid("LabKey(privateKeyPEM:)", "oversized PEM text") }
        let loaded = bytes.withUnsafeBytes { buffer -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, count) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let loaded else { throw LabError.openSSL("PEM_read_bio_PrivateKey") }
        let algorithm: LabKeyAlgorithm
        switch EVP_PKEY_get_base_id(loaded) {
        case EVP_PKEY_RSA: algorithm = .rsa(bits: Int(EVP_PKEY_get_bits(loaded)))
        case EVP_PKEY_EC:
            switch EVP_PKEY_get_bits(loaded) {
            case 256: algorithm = .p256
            case 384: algorithm = .p384
            default: algorithm = .p521
            }
        case EVP_PKEY_ED25519: algorithm = .ed25519
        case EVP_PKEY_ED448: algorithm = .ed448
        default:
            EVP_PKEY_free(loaded)
            throw LabError.invalid("LabKey(privateKeyPEM:)", "not an RSA, EC, Ed25519 or Ed448 key")
        }
        try self.init(adopting: loaded, algorithm: algorithm)
    }

    /// Takes ownership of `generated` (freed here if the key cannot be completed).
    private init(adopting generated: OpaquePointer, algorithm: LabKeyAlgorithm) throws {
        // Until every stored property is set, deinit cannot run, so a failure here must free
        // the key itself; deriving everything first keeps that window to this one block.
        let publicKeyInfoDER: [UInt8]
        let subjectKeyIdentifier: [UInt8]
        do {
            publicKeyInfoDER = try Self.encodePublicKey(generated)
            subjectKeyIdentifier = try Self.keyIdentifier(publicKeyInfoDER: publicKeyInfoDER)
        } catch {
            EVP_PKEY_free(generated)
            throw error
        }
        self.pkey = generated
        self.algorithm = algorithm
        self.publicKeyInfoDER = publicKeyInfoDER
        self.subjectKeyIdentifier = subjectKeyIdentifier
    }

    deinit { EVP_PKEY_free(pkey) }

    /// A process-wide cached key, generated on first use.
    ///
    /// Tests use this so a suite pays RSA generation once per (algorithm, slot) instead of once
    /// per test. Different slots give different keys; the same slot always gives the same key.
    /// Generation of different slots runs in parallel; a slot is generated exactly once.
    ///
    /// - Parameters:
    ///   - algorithm: The algorithm.
    ///   - slot: Which of the cached keys for that algorithm to return.
    /// - Returns: The cached key.
    /// - Throws: ``LabError`` if generation fails (the failure is not cached).
    public static func shared(_ algorithm: LabKeyAlgorithm, slot: Int = 0) throws -> LabKey {
        let cell = cache.withLock { cells in
            let key = CacheKey(algorithm: algorithm, slot: slot)
            if let cell = cells[key] { return cell }
            let cell = CacheCell()
            cells[key] = cell
            return cell
        }
        // Generating under the cell's own lock makes concurrent first users wait for one key
        // instead of each generating (and discarding) their own.
        return try cell.value.withLock { value throws -> LabKey in
            if let value { return value }
            let created = try LabKey(algorithm)
            value = created
            return created
        }
    }

    /// The RFC 5280 §4.2.1.2 method (1) key identifier: SHA-1 of the subjectPublicKey BIT
    /// STRING's value (without tag, length or unused-bits octet), which is what OpenSSL's
    /// `subjectKeyIdentifier=hash` produces.
    public let subjectKeyIdentifier: [UInt8]

    /// The private key as PEM.
    ///
    /// - Parameter format: PKCS#8 (`PRIVATE KEY`) or the traditional per-algorithm form.
    /// - Returns: PEM text ending in a newline.
    /// - Throws: ``LabError`` if OpenSSL fails or the algorithm has no traditional form.
    public func privateKeyPEM(format: LabPrivateKeyFormat = .pkcs8) throws -> String {
        let bio = try LabBIO()
        switch format {
        case .pkcs8:
            guard encodingPrivateKey({ PEM_write_bio_PrivateKey(bio.pointer, pkey, nil, nil, 0, nil, nil) }) == 1 else {
                throw LabError.openSSL("PEM_write_bio_PrivateKey")
            }
        case .traditional:
            try requireTraditionalForm()
            guard encodingPrivateKey({ PEM_write_bio_PrivateKey_traditional(bio.pointer, pkey, nil, nil, 0, nil, nil) }) == 1 else {
                throw LabError.openSSL("PEM_write_bio_PrivateKey_traditional")
            }
        }
        return try bio.string()
    }

    /// The private key as DER.
    ///
    /// - Parameter format: PKCS#8 `PrivateKeyInfo` or the traditional per-algorithm structure.
    /// - Returns: The DER bytes.
    /// - Throws: ``LabError`` if OpenSSL fails or the algorithm has no traditional form.
    public func privateKeyDER(format: LabPrivateKeyFormat = .pkcs8) throws -> [UInt8] {
        let bio = try LabBIO()
        switch format {
        case .pkcs8:
            guard encodingPrivateKey({ i2d_PKCS8PrivateKey_bio(bio.pointer, pkey, nil, nil, 0, nil, nil) }) == 1 else {
                throw LabError.openSSL("i2d_PKCS8PrivateKey_bio")
            }
        case .traditional:
            try requireTraditionalForm()
            // i2d_PrivateKey emits the type-specific structure (RSAPrivateKey / ECPrivateKey).
            guard encodingPrivateKey({ i2d_PrivateKey_bio(bio.pointer, pkey) }) == 1 else {
                throw LabError.openSSL("i2d_PrivateKey_bio")
            }
        }
        return try bio.bytes()
    }

    /// The private key as password-encrypted PKCS#8 PEM (`ENCRYPTED PRIVATE KEY`), using
    /// PBES2 with AES-256-CBC as OpenSSL 3 does by default.
    ///
    /// - Parameter password: The password (used as its UTF-8 bytes).
    /// - Returns: PEM text.
    /// - Throws: ``LabError`` if OpenSSL fails.
    public func encryptedPrivateKeyPEM(password: String) throws -> String {
        let bio = try LabBIO()
        var passwordBytes = Array(password.utf8CString)
        let length = Int32(passwordBytes.count - 1)
        let written = passwordBytes.withUnsafeMutableBufferPointer { buffer in
            encodingPrivateKey { PEM_write_bio_PKCS8PrivateKey(bio.pointer, pkey, EVP_aes_256_cbc(), buffer.baseAddress, length, nil, nil) }
        }
        guard written == 1 else { throw LabError.openSSL("PEM_write_bio_PKCS8PrivateKey") }
        return try bio.string()
    }

    /// Keys are equal when their public halves are (a private key determines its public key).
    public static func == (lhs: LabKey, rhs: LabKey) -> Bool {
        lhs.publicKeyInfoDER == rhs.publicKeyInfoDER
    }

    /// Hashes the public key.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(publicKeyInfoDER)
    }

    /// The algorithm and a short key-identifier prefix, never private material.
    public var description: String {
        let id = subjectKeyIdentifier.prefix(4).map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
        return "LabKey(\(algorithm), ski \(id)…)"
    }

    // MARK: - Internals

    private func requireTraditionalForm() throws {
        guard algorithm.isRSA || algorithm.isEC else {
            throw LabError.invalid("LabKey.privateKey", "\(algorithm) keys have no traditional encoding; use PKCS#8")
        }
    }

    private struct CacheKey: Hashable {
        let algorithm: LabKeyAlgorithm
        let slot: Int
    }

    /// One lazily filled cache entry; its own lock lets different slots generate in parallel.
    private final class CacheCell: Sendable {
        let value = Mutex<LabKey?>(nil)
    }

    private static let cache = Mutex<[CacheKey: CacheCell]>([:])

    private static func generate(_ algorithm: LabKeyAlgorithm) throws -> OpaquePointer {
        let typeName: String
        switch algorithm {
        case .rsa: typeName = "RSA"
        case .p256, .p384, .p521: typeName = "EC"
        case .ed25519: typeName = "ED25519"
        case .ed448: typeName = "ED448"
        }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, typeName, nil) else {
            throw LabError.openSSL("EVP_PKEY_CTX_new_from_name(\(typeName))")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) == 1 else { throw LabError.openSSL("EVP_PKEY_keygen_init") }
        switch algorithm {
        case .rsa(let bits):
            guard let bits32 = Int32(exactly: bits), EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, bits32) == 1 else {
                throw LabError.openSSL("EVP_PKEY_CTX_set_rsa_keygen_bits(\(bits))")
            }
        case .p256, .p384, .p521:
            let group = algorithm == .p256 ? "P-256" : algorithm == .p384 ? "P-384" : "P-521"
            guard EVP_PKEY_CTX_set_group_name(ctx, group) == 1 else {
                throw LabError.openSSL("EVP_PKEY_CTX_set_group_name(\(group))")
            }
        case .ed25519, .ed448:
            break
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(ctx, &key) == 1, let generated = key else {
            throw LabError.openSSL("EVP_PKEY_generate(\(algorithm))")
        }
        return generated
    }

    /// SHA-1 over the subjectPublicKey bits of a DER SubjectPublicKeyInfo.
    static func keyIdentifier(publicKeyInfoDER: [UInt8]) throws -> [UInt8] {
        let fields = try LabDER.parse(publicKeyInfoDER).children()
        guard fields.count == 2, fields[1].tag == LabDER.Tag.bitString, !fields[1].content.isEmpty else {
            throw LabError.invalid("LabKey.keyIdentifier", "SubjectPublicKeyInfo is not SEQUENCE { AlgorithmIdentifier, BIT STRING }")
        }
        return try LabDigest.sha1.hash(Array(fields[1].content.dropFirst()))
    }

    private static func encodePublicKey(_ pkey: OpaquePointer) throws -> [UInt8] {
        let length = i2d_PUBKEY(pkey, nil)
        guard length > 0 else { throw LabError.openSSL("i2d_PUBKEY") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(pkey, &cursor)
        }
        guard written == length else { throw LabError.openSSL("i2d_PUBKEY") }
        return der
    }
}

/// An owned memory BIO used to collect OpenSSL output; freed when the wrapper goes away.
final class LabBIO {
    /// The owned `BIO *`.
    let pointer: OpaquePointer

    init() throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw LabError.openSSL("BIO_new") }
        pointer = bio
    }

    deinit { BIO_free(pointer) }

    /// Everything written so far.
    func bytes() throws -> [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let length = CServerTrustShims_BIO_get_mem_data(pointer, &data)
        guard length >= 0 else { throw LabError.openSSL("BIO_get_mem_data") }
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// Everything written so far, as UTF-8 text (PEM is ASCII).
    func string() throws -> String {
        String(decoding: try bytes(), as: UTF8.self)
    }
}
