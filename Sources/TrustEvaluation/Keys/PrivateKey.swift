internal import COpenSSL
internal import CServerTrustShims
public import CertificateParsing

/// A private key for TLS client authentication, held by libcrypto.
///
/// Accepted encodings, PEM or DER:
///
/// | PEM label | structure |
/// |---|---|
/// | `PRIVATE KEY` | PKCS #8 `PrivateKeyInfo` / `OneAsymmetricKey` (RFC 5958 §2) |
/// | `ENCRYPTED PRIVATE KEY` | PKCS #8 `EncryptedPrivateKeyInfo` (RFC 5958 §3), needs the password |
/// | `RSA PRIVATE KEY` | PKCS #1 `RSAPrivateKey` (RFC 8017 Appendix A.1.2), optionally with OpenSSL's RFC 1421 `Proc-Type: 4,ENCRYPTED` header |
/// | `EC PRIVATE KEY` | SEC 1 `ECPrivateKey` (RFC 5915 §3), optionally encrypted the same way |
///
/// Supported algorithms are the ones that can sign in TLS: RSA, RSA-PSS, EC, Ed25519 and Ed448.
/// Keys are loaded rarely, so libcrypto's general decoders are used here; the DER structure is
/// first classified with the project's strict DER reader so malformed input is reported with
/// a precise reason and never reaches OpenSSL's more lenient parsers.
public final class PrivateKey: Sendable, CustomStringConvertible {
    /// The key, owned.
    let key: OwnedEVPKey

    /// The algorithm: `RSA`, `RSA-PSS`, `EC`, `Ed25519` or `Ed448`.
    public let algorithmName: String

    /// The key size in bits as OpenSSL reports it (modulus bits for RSA, field bits for EC,
    /// 253 for Ed25519, 456 for Ed448).
    public let bitSize: Int

    /// The DER SubjectPublicKeyInfo of the public half (`i2d_PUBKEY`), for comparing with a
    /// certificate's key or computing an SPKI pin.
    public let publicKeyInfoDER: [UInt8]

    /// Loads the first private key in PEM text. Blocks before it that are not keys
    /// (`CERTIFICATE`, `EC PARAMETERS`) are skipped, so a combined key-and-chain file works.
    ///
    /// - Parameters:
    ///   - pemEncoded: The PEM text.
    ///   - password: The password for an encrypted key (its UTF-8 bytes are used); ignored for
    ///     unencrypted keys.
    /// - Throws: ``KeyError``: `.malformed` for broken PEM or DER, `.wrongPassword` for a wrong
    ///   or missing password, `.unsupported` for other key types, `.missingKey` when the text
    ///   holds no private key block.
    public convenience init(pemEncoded: String, password: String? = nil) throws(KeyError) {
        let (der, kind) = try PrivateKey.readPEM(pemEncoded, password: password)
        try self.init(decoding: der, kind: kind, password: password)
    }

    /// Loads a DER private key: PKCS #8 (plain or encrypted), PKCS #1 RSA or SEC 1 EC.
    ///
    /// - Parameters:
    ///   - derEncoded: The DER bytes.
    ///   - password: The password for an `EncryptedPrivateKeyInfo`; ignored otherwise.
    /// - Throws: ``KeyError``: `.malformed`, `.wrongPassword` or `.unsupported`.
    public convenience init(derEncoded: [UInt8], password: String? = nil) throws(KeyError) {
        let kind = try PrivateKey.classify(derEncoded)
        try self.init(decoding: derEncoded, kind: kind, password: password)
    }

    /// Adopts an `EVP_PKEY` the caller owned (from PKCS #12 parsing).
    init(adopting owned: OwnedEVPKey, source: String) throws(KeyError) {
        key = owned
        let typeID = EVP_PKEY_get_base_id(owned.pointer)
        guard let name = PrivateKey.supportedAlgorithms[typeID] else {
            let typeName = EVP_PKEY_get0_type_name(owned.pointer).map { String(cString: $0) } ?? "type \(typeID)"
            throw KeyError(.unsupported, "\(source): \(typeName) keys cannot be used for TLS signatures")
        }
        algorithmName = name
        // The certificate model's sizes (CertificateParsing `PublicKey.bitSize`): EVP_PKEY_get_bits
        // says 256 and 456 for the EdDSA curves, the model 253 and 456 as `openssl x509 -text`.
        switch typeID {
        case EVP_PKEY_ED25519: bitSize = 253
        case EVP_PKEY_ED448: bitSize = 456
        default: bitSize = Int(EVP_PKEY_get_bits(owned.pointer))
        }
        try PrivateKey.checkPair(owned, typeID: typeID, source: source)
        if typeID == EVP_PKEY_EC {
            // SEC 1's ECPrivateKey may carry its public point compressed or in the X9.62
            // "hybrid" form (0x06/0x07), and OpenSSL re-encodes the SubjectPublicKeyInfo in the
            // form it read. RFC 5480 §2.2 requires uncompressed points in certificates, so the
            // key's own SPKI (compared with certificates, printed as a pin) is always written
            // uncompressed. Found by the privatekey fuzz target.
            OpenSSLError.clear()
            guard EVP_PKEY_set_utf8_string_param(owned.pointer, "point-format", "uncompressed") == 1 else {
                throw KeyError(.unsupported, "\(source): cannot set the EC point format (\(OpenSSLError.drain("EVP_PKEY_set_utf8_string_param")))")
            }
        }
        switch owned.publicKeyInfoDER() {
        case .success(let der): publicKeyInfoDER = der
        case .failure(let error): throw KeyError(.unsupported, "\(source): cannot encode the public key (\(error))")
        }
    }

    /// Refuses a key whose public half does not belong to its private half (an ECPrivateKey
    /// with someone else's point, an RSA key whose modulus is not the product of its primes):
    /// such a key would `matches` a certificate it cannot sign for, and the TLS handshake
    /// would fail later with a less useful error.
    ///
    /// EC and EdDSA keys get OpenSSL's pairwise check (one scalar multiplication). RSA keys get
    /// only n = p·q: `EVP_PKEY_pairwise_check` on RSA also runs Miller-Rabin on p and q, which
    /// a crafted key with multi-thousand-bit "primes" turns into minutes of work (found by the
    /// privatekey fuzz target), and which a 2048-bit key pays in tens of milliseconds.
    private static func checkPair(_ owned: OwnedEVPKey, typeID: Int32, source: String) throws(KeyError) {
        OpenSSLError.clear()
        defer { OpenSSLError.clear() }
        if typeID == EVP_PKEY_RSA || typeID == EVP_PKEY_RSA_PSS {
            guard rsaModulusIsProductOfFactors(owned) else {
                throw KeyError(.malformed, "\(source): the public key does not match the private key (n ≠ p·q)")
            }
            return
        }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, owned.pointer, nil) else {
            throw KeyError(.unsupported, "\(source): \(OpenSSLError.drain("EVP_PKEY_CTX_new_from_pkey"))")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_pairwise_check(context) == 1 else {
            let reason = OpenSSLError.drain("EVP_PKEY_pairwise_check")
            throw KeyError(.malformed, "\(source): the public key does not match the private key (\(reason))")
        }
    }

    /// Whether an RSA key's modulus equals the product of its prime factors (two, or more for
    /// a multi-prime key, RFC 8017 §3.2). A key without factors (only n, e, d) cannot be
    /// checked this cheaply and passes.
    private static func rsaModulusIsProductOfFactors(_ owned: OwnedEVPKey) -> Bool {
        var n: OpaquePointer?
        defer { BN_free(n) }
        guard EVP_PKEY_get_bn_param(owned.pointer, "n", &n) == 1, let n else { return false }
        guard let context = BN_CTX_new() else { return false }
        defer { BN_CTX_free(context) }
        guard let product = BN_new() else { return false }
        defer { BN_free(product) }
        guard BN_set_word(product, 1) == 1 else { return false }
        var factors = 0
        // OpenSSL names the factors rsa-factor1 … rsa-factor10 (OSSL_PKEY_PARAM_RSA_FACTOR*).
        for index in 1...10 {
            var factor: OpaquePointer?
            guard EVP_PKEY_get_bn_param(owned.pointer, "rsa-factor\(index)", &factor) == 1, let factor else { break }
            defer { BN_free(factor) }
            guard BN_mul(product, product, factor, context) == 1 else { return false }
            factors += 1
        }
        OpenSSLError.clear()
        return factors < 2 || BN_cmp(product, n) == 0
    }

    private convenience init(decoding der: [UInt8], kind: Encoding, password: String?) throws(KeyError) {
        let owned = try PrivateKey.decode(der, kind: kind, password: password)
        try self.init(adopting: owned, source: kind.name)
    }

    /// Whether this key is the private half of `certificate`'s public key.
    ///
    /// - Parameter certificate: The certificate.
    /// - Returns: `true` if the public keys are the same.
    public func matches(_ certificate: Certificate) -> Bool {
        matches(certificate.subjectPublicKeyInfo)
    }

    /// Whether this key is the private half of `publicKeyInfo`.
    ///
    /// Identical DER is the common case; otherwise the keys are compared by value with
    /// `EVP_PKEY_eq` (as `X509_check_private_key` does), so an equivalent encoding, such as a
    /// compressed EC point, still matches.
    ///
    /// - Parameter publicKeyInfo: A SubjectPublicKeyInfo.
    /// - Returns: `true` if the public keys are the same.
    public func matches(_ publicKeyInfo: SubjectPublicKeyInfo) -> Bool {
        if publicKeyInfo.derBytes.elementsEqual(publicKeyInfoDER) { return true }
        OpenSSLError.clear()
        let other = publicKeyInfo.derBytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let other else {
            OpenSSLError.clear()
            return false
        }
        defer { EVP_PKEY_free(other) }
        let equal = EVP_PKEY_eq(key.pointer, other) == 1
        OpenSSLError.clear()
        return equal
    }

    /// `"RSA-2048 private key"` and similar; never key material.
    public var description: String { "\(algorithmName)-\(bitSize) private key" }

    /// Lends the `EVP_PKEY *` to `body` (for `SSL_CTX_use_PrivateKey` in the HTTP client); the
    /// pointer must not be freed or kept beyond the call.
    package func withUnsafeEVPPKEY<Result>(_ body: (OpaquePointer) throws -> Result) rethrows -> Result {
        try body(key.pointer)
    }

    // MARK: - Decoding

    /// The four DER structures a private key may arrive in.
    enum Encoding {
        case pkcs8
        case encryptedPKCS8
        case rsa
        case ec

        var name: String {
            switch self {
            case .pkcs8: return "PKCS #8 PrivateKeyInfo"
            case .encryptedPKCS8: return "PKCS #8 EncryptedPrivateKeyInfo"
            case .rsa: return "PKCS #1 RSAPrivateKey"
            case .ec: return "SEC 1 ECPrivateKey"
            }
        }
    }

    /// `EVP_PKEY_get_base_id` values this library accepts, with their display names.
    static let supportedAlgorithms: [Int32: String] = [
        EVP_PKEY_RSA: "RSA", EVP_PKEY_RSA_PSS: "RSA-PSS", EVP_PKEY_EC: "EC",
        EVP_PKEY_ED25519: "Ed25519", EVP_PKEY_ED448: "Ed448",
    ]

    /// Tells the structures apart by their first two fields (strict DER, whole input):
    /// `EncryptedPrivateKeyInfo` = { AlgorithmIdentifier, OCTET STRING }; `PrivateKeyInfo` =
    /// { INTEGER, AlgorithmIdentifier, … }; `RSAPrivateKey` = { INTEGER, INTEGER, … };
    /// `ECPrivateKey` = { INTEGER, OCTET STRING, … }.
    static func classify(_ der: [UInt8]) throws(KeyError) -> Encoding {
        let root: ASN1Node
        do { root = try DER.parse(der) } catch { throw KeyError(.malformed, "private key DER: \(error)") }
        guard root.identifier == .sequence, root.isConstructed else {
            throw KeyError(.malformed, "private key DER: expected a SEQUENCE, found \(root.identifier)")
        }
        var fields = root.children()
        let first: ASN1Node?
        let second: ASN1Node?
        do {
            first = try fields.next()
            second = try fields.next()
        } catch {
            throw KeyError(.malformed, "private key DER: \(error)")
        }
        switch (first?.identifier, second?.identifier) {
        case (ASN1Identifier.sequence, ASN1Identifier.octetString): return .encryptedPKCS8
        case (ASN1Identifier.integer, ASN1Identifier.sequence): return .pkcs8
        case (ASN1Identifier.integer, ASN1Identifier.integer): return .rsa
        case (ASN1Identifier.integer, ASN1Identifier.octetString): return .ec
        default:
            throw KeyError(.malformed, "private key DER is not a PKCS #8, PKCS #1 or SEC 1 structure")
        }
    }

    /// Decodes `der` as `kind` into an owned `EVP_PKEY`.
    static func decode(_ der: [UInt8], kind: Encoding, password: String?) throws(KeyError) -> OwnedEVPKey {
        // The DER reader has checked the framing; this also confirms the PEM label's claim.
        let classified = try classify(der)
        guard classified == kind else {
            throw KeyError(.malformed, "the data is a \(classified.name), not a \(kind.name) as labelled")
        }
        OpenSSLError.clear()
        switch kind {
        case .pkcs8:
            return try withDecodedPKCS8(der) { info throws(KeyError) in try pkeyFromPKCS8(info, kind: kind) }
        case .encryptedPKCS8:
            return try decryptPKCS8(der, password: password)
        case .rsa, .ec:
            let pkey = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                let decoded = d2i_PrivateKey(kind == .rsa ? EVP_PKEY_RSA : EVP_PKEY_EC, nil, &cursor, buffer.count)
                // Trailing bytes were already rejected by the DER reader; check OpenSSL agrees.
                if let decoded, cursor != buffer.baseAddress.map({ $0 + buffer.count }) {
                    EVP_PKEY_free(decoded)
                    return nil
                }
                return decoded
            }
            guard let pkey else { throw failure(.malformed, "cannot decode the \(kind.name)", "d2i_PrivateKey") }
            return OwnedEVPKey(takingOwnershipOf: pkey)
        }
    }

    /// `d2i_PKCS8_PRIV_KEY_INFO`, lent to `body` and freed afterwards.
    private static func withDecodedPKCS8(
        _ der: [UInt8],
        _ body: (OpaquePointer) throws(KeyError) -> OwnedEVPKey
    ) throws(KeyError) -> OwnedEVPKey {
        let info = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count)
        }
        guard let info else {
            throw failure(.malformed, "cannot decode the PKCS #8 PrivateKeyInfo", "d2i_PKCS8_PRIV_KEY_INFO")
        }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        return try body(info)
    }

    private static func pkeyFromPKCS8(_ info: OpaquePointer, kind: Encoding) throws(KeyError) -> OwnedEVPKey {
        guard let pkey = EVP_PKCS82PKEY(info) else {
            throw failure(.malformed, "cannot decode the key inside the \(kind.name)", "EVP_PKCS82PKEY")
        }
        return OwnedEVPKey(takingOwnershipOf: pkey)
    }

    /// RFC 5958 §3 / RFC 8018: decrypts an `EncryptedPrivateKeyInfo` with `password`.
    private static func decryptPKCS8(_ der: [UInt8], password: String?) throws(KeyError) -> OwnedEVPKey {
        guard let password else {
            throw KeyError(.wrongPassword, "the PKCS #8 key is encrypted and no password was given")
        }
        let encrypted = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_X509_SIG(nil, &cursor, buffer.count)
        }
        guard let encrypted else {
            throw failure(.malformed, "cannot decode the PKCS #8 EncryptedPrivateKeyInfo", "d2i_X509_SIG")
        }
        defer { X509_SIG_free(encrypted) }
        let utf8 = Array(password.utf8)
        let decrypted = utf8.withUnsafeBufferPointer { pass in
            pass.withMemoryRebound(to: CChar.self) { chars in
                withUnsafeTemporaryAllocation(of: CChar.self, capacity: 1) { empty in
                    PKCS8_decrypt(encrypted, chars.baseAddress ?? UnsafePointer(empty.baseAddress), Int32(chars.count))
                }
            }
        }
        guard let decrypted else {
            // A CBC padding or structure failure after decryption is what a wrong password
            // produces; an unsupported cipher or KDF is reported as such.
            throw failure(
                .wrongPassword,
                "cannot decrypt the PKCS #8 key: wrong password or corrupted data",
                "PKCS8_decrypt"
            )
        }
        defer { PKCS8_PRIV_KEY_INFO_free(decrypted) }
        return try pkeyFromPKCS8(decrypted, kind: .encryptedPKCS8)
    }

    /// A ``KeyError`` with `code`, unless OpenSSL's queue says the algorithm is unsupported.
    static func failure(_ code: KeyError.Code, _ reason: String, _ operation: String) -> KeyError {
        let error = OpenSSLError.drain(operation)
        return KeyError(error.reportsUnsupportedAlgorithm ? .unsupported : code, "\(reason) (\(error))")
    }

    // MARK: - PEM

    /// Finds the first private-key block of a PEM text with libcrypto's PEM reader (which,
    /// unlike the project's ``CertificateParsing/PEMDocument``, understands the RFC 1421
    /// encryption headers OpenSSL writes for traditional keys) and returns its DER, decrypted
    /// if it had such a header.
    static func readPEM(_ text: String, password: String?) throws(KeyError) -> ([UInt8], Encoding) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, let count = Int32(exactly: bytes.count) else {
            throw KeyError(.malformed, "empty or oversized PEM text")
        }
        // withUnsafeBytes rethrows untyped errors, so the typed error travels in a Result.
        return try bytes.withUnsafeBytes { buffer -> Result<([UInt8], Encoding), KeyError> in
            Result { () throws(KeyError) in try readPEMBlocks(buffer, count: count, password: password) }
        }.get()
    }

    private static func readPEMBlocks(
        _ buffer: UnsafeRawBufferPointer,
        count: Int32,
        password: String?
    ) throws(KeyError) -> ([UInt8], Encoding) {
        OpenSSLError.clear()
        guard let bio = BIO_new_mem_buf(buffer.baseAddress, count) else {
            throw KeyError.openSSL(.malformed, "cannot read the PEM text", "BIO_new_mem_buf")
        }
        defer { BIO_free(bio) }
        var labels: [String] = []
        while true {
            var name: UnsafeMutablePointer<CChar>?
            var header: UnsafeMutablePointer<CChar>?
            var data: UnsafeMutablePointer<UInt8>?
            var length = 0
            guard PEM_read_bio(bio, &name, &header, &data, &length) == 1 else {
                // End of input (PEM_R_NO_START_LINE) or a broken block.
                let error = OpenSSLError.drain("PEM_read_bio")
                if error.stack.contains(where: { $0.reason != PEM_R_NO_START_LINE }) {
                    throw KeyError(.malformed, "broken PEM block after \(labels.count) good blocks (\(error))")
                }
                if labels.isEmpty { throw KeyError(.malformed, "no PEM block found") }
                throw KeyError(
                    .missingKey,
                    "no private key block in the PEM text (found \(labels.joined(separator: ", ")))"
                )
            }
            defer {
                CServerTrustShims_OPENSSL_free(name)
                CServerTrustShims_OPENSSL_free(header)
                CServerTrustShims_OPENSSL_free(data)
            }
            let label = name.map { String(cString: $0) } ?? ""
            labels.append(label)
            let kind: Encoding
            switch label {
            case "PRIVATE KEY": kind = .pkcs8
            case "ENCRYPTED PRIVATE KEY": kind = .encryptedPKCS8
            case "RSA PRIVATE KEY": kind = .rsa
            case "EC PRIVATE KEY": kind = .ec
            case "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "ANY PRIVATE KEY":
                throw KeyError(.unsupported, "\(label) blocks are not supported; convert the key to PKCS #8")
            default:
                continue
            }
            guard let data, length > 0 else { throw KeyError(.malformed, "the \(label) block is empty") }
            let plain = try decryptPEMHeader(header, data: data, length: length, label: label, password: password)
            return (plain, kind)
        }
    }

    /// OpenSSL's traditional PEM encryption (`Proc-Type: 4,ENCRYPTED`, `DEK-Info:`):
    /// decrypts in place when present, otherwise returns the data as is.
    private static func decryptPEMHeader(
        _ header: UnsafeMutablePointer<CChar>?,
        data: UnsafeMutablePointer<UInt8>,
        length: Int,
        label: String,
        password: String?
    ) throws(KeyError) -> [UInt8] {
        var cipher = EVP_CIPHER_INFO()
        if let header, header.pointee != 0 {
            guard PEM_get_EVP_CIPHER_INFO(header, &cipher) == 1 else {
                throw failure(
                    .malformed,
                    "the \(label) block has an unusable encryption header",
                    "PEM_get_EVP_CIPHER_INFO"
                )
            }
        }
        guard cipher.cipher != nil else { return Array(UnsafeBufferPointer(start: data, count: length)) }
        guard let password, !password.isEmpty else {
            throw KeyError(.wrongPassword, "the \(label) block is encrypted and no password was given")
        }
        var decryptedLength = length
        var utf8 = Array(password.utf8)
        let ok = utf8.withUnsafeMutableBufferPointer { passwordBytes -> Int32 in
            var context = PasswordBytes(bytes: UnsafeBufferPointer(passwordBytes))
            return withUnsafeMutablePointer(to: &context) { contextPointer in
                PEM_do_header(
                    &cipher,
                    data,
                    &decryptedLength,
                    { buffer, size, _, context in
                        // Copies the password handed over in `context`, by length, so an embedded
                        // NUL is not a terminator; a password that does not fit is refused.
                        guard let buffer, let context else { return -1 }
                        let password = context.assumingMemoryBound(to: PasswordBytes.self).pointee.bytes
                        guard password.count <= Int(size), let base = password.baseAddress else { return -1 }
                        UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: password.count)
                        return Int32(password.count)
                    },
                    contextPointer
                )
            }
        }
        guard ok == 1 else {
            throw failure(
                .wrongPassword,
                "cannot decrypt the \(label) block: wrong password or corrupted data",
                "PEM_do_header"
            )
        }
        let plain = Array(UnsafeBufferPointer(start: data, count: decryptedLength))
        // CBC padding passes by chance for about 1 wrong password in 256; the DER check then
        // catches it, and it is still a password problem, not a malformed file.
        do {
            _ = try classify(plain)
        } catch {
            throw KeyError(.wrongPassword, "cannot decrypt the \(label) block: wrong password or corrupted data")
        }
        return plain
    }
}

/// The password handed to OpenSSL's `pem_password_cb` through its context pointer.
private struct PasswordBytes {
    let bytes: UnsafeBufferPointer<UInt8>
}
