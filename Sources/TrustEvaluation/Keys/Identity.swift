internal import COpenSSL
internal import CServerTrustShims
public import CertificateParsing

/// A client identity for TLS client authentication: a certificate, its private key, and the
/// intermediates to send with it (Apple's `SecIdentity` plus the chain of a `URLCredential`).
public struct Identity: Sendable {
    /// The end-entity certificate.
    public let certificate: Certificate
    /// The private key matching ``certificate``.
    public let privateKey: PrivateKey
    /// Further certificates to send, in the order they were given (normally the issuing
    /// intermediates, leaf's issuer first).
    public let chain: [Certificate]

    /// Pairs a certificate with its key.
    ///
    /// - Parameters:
    ///   - certificate: The end-entity certificate.
    ///   - privateKey: Its private key.
    ///   - chain: Intermediates to send after it.
    /// - Throws: ``KeyError`` `.keyMismatch` if the key is not the certificate's.
    public init(certificate: Certificate, privateKey: PrivateKey, chain: [Certificate] = []) throws(KeyError) {
        guard privateKey.matches(certificate) else {
            throw KeyError(.keyMismatch, "the \(privateKey) does not belong to \(certificate.subject.rfc4514)")
        }
        self.certificate = certificate
        self.privateKey = privateKey
        self.chain = chain
    }

    /// Loads an identity from PEM: the first certificate is the end-entity certificate, any
    /// further ones form the chain.
    ///
    /// - Parameters:
    ///   - certificatePEM: One or more `CERTIFICATE` blocks.
    ///   - keyPEM: A private key in any form ``PrivateKey/init(pemEncoded:password:)`` accepts.
    ///   - password: The key's password, if it is encrypted.
    /// - Throws: ``KeyError``: `.missingCertificate`, `.malformed`, `.wrongPassword`,
    ///   `.unsupported`, `.missingKey` or `.keyMismatch`.
    public init(certificatePEM: String, keyPEM: String, password: String? = nil) throws(KeyError) {
        let certificates: [Certificate]
        do {
            certificates = try Certificate.load(Array(certificatePEM.utf8))
        } catch {
            if case .pem(let pem) = error, pem.code == .noBlock {
                throw KeyError(.missingCertificate, "no certificate in the certificate PEM (\(error))")
            }
            throw KeyError(.malformed, "certificate PEM: \(error)")
        }
        guard let leaf = certificates.first else {
            throw KeyError(.missingCertificate, "no certificate in the certificate PEM")
        }
        let key = try PrivateKey(pemEncoded: keyPEM, password: password)
        try self.init(certificate: leaf, privateKey: key, chain: Array(certificates.dropFirst()))
    }

    /// Loads an identity from a file, as curl's `--cert` does: a PKCS #12 (`.p12`, `.pfx`)
    /// file, or PEM text holding the certificate, its chain and the private key together
    /// (`cat client.pem client.key`). The format is read from the content, not the name.
    ///
    /// ```swift
    /// let identity = try Identity(contentsOf: "client.p12", password: password)
    /// ```
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - password: The PKCS #12 password, or the PEM key's (`nil`: none).
    /// - Throws: ``KeyError``: `.unreadable` naming the path, else what
    ///   ``init(pkcs12:password:)`` or ``init(certificatePEM:keyPEM:password:)`` throws.
    public init(contentsOf path: String, password: String? = nil) throws(KeyError) {
        let bytes: [UInt8]
        do { bytes = try TrustStore.readFile(path) } catch { throw KeyError(.unreadable, "\(path): \(error.reason)") }
        if PEMDocument.looksLikePEM(bytes) {
            let text = String(decoding: bytes, as: UTF8.self)
            do { try self.init(certificatePEM: text, keyPEM: text, password: password) } catch {
                throw KeyError(error.code, "\(path): \(error.reason)")
            }
        } else {
            do { try self.init(pkcs12: bytes, password: password ?? "") } catch {
                throw KeyError(error.code, "\(path): \(error.reason)")
            }
        }
    }

    /// Loads an identity from a PKCS #12 (PFX) file (RFC 7292), as exported by browsers,
    /// Keychain Access or `openssl pkcs12 -export`.
    ///
    /// The MAC is checked first (RFC 7292 §4 / §5.1), so a wrong password is reported as such
    /// rather than as a decryption or parsing failure. The end-entity certificate is the one
    /// matching the private key; every other certificate becomes ``chain``, in file order.
    ///
    /// - Parameters:
    ///   - bytes: The DER PFX.
    ///   - password: The password (UTF-8; an empty password also tries the absent password, as
    ///     OpenSSL does for files written by other tools).
    /// - Throws: ``KeyError``: `.malformed` for truncated or corrupt data, `.wrongPassword`,
    ///   `.unsupported` (e.g. RC2-40 files without OpenSSL's legacy provider), `.missingKey`,
    ///   `.missingCertificate`, or `.keyMismatch` when no certificate matches the key.
    public init(pkcs12 bytes: [UInt8], password: String) throws(KeyError) {
        let parsed = try PKCS12Contents(bytes, password: password)
        guard let key = parsed.key else {
            throw KeyError(.missingKey, "the PKCS #12 file has no private key (\(parsed.chain.count) certificates)")
        }
        let privateKey = try PrivateKey(adopting: key, source: "PKCS #12 key")
        guard let leaf = parsed.certificate else {
            if parsed.chain.isEmpty {
                throw KeyError(.missingCertificate, "the PKCS #12 file has a key but no certificate")
            }
            throw KeyError(.keyMismatch, "no certificate in the PKCS #12 file matches its \(privateKey)")
        }
        try self.init(certificate: leaf, privateKey: privateKey, chain: parsed.chain)
    }
}

/// What `PKCS12_parse` found, converted to owned Swift values.
private struct PKCS12Contents {
    var key: OwnedEVPKey?
    var certificate: Certificate?
    var chain: [Certificate] = []

    init(_ bytes: [UInt8], password: String) throws(KeyError) {
        OpenSSLError.clear()
        let p12 = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            let decoded = d2i_PKCS12(nil, &cursor, buffer.count)
            // RFC 7292 defines one PFX; bytes after it mean a damaged or concatenated file.
            if let decoded, cursor != base + buffer.count {
                PKCS12_free(decoded)
                return nil
            }
            return decoded
        }
        guard let p12 else {
            throw KeyError.openSSL(
                .malformed,
                "the data is not a complete PKCS #12 file (truncated, corrupt or followed by extra bytes)",
                "d2i_PKCS12"
            )
        }
        defer { PKCS12_free(p12) }

        // Files without a MAC have no integrity protection, and OpenSSL 3.0's PKCS12_parse
        // refuses them anyway when the password is not empty ("mac absent").
        guard PKCS12_mac_present(p12) == 1 else {
            throw KeyError(
                .unsupported,
                "the PKCS #12 file has no integrity MAC (RFC 7292 §4 password integrity mode is required)"
            )
        }
        // RFC 7292 §4: the MAC over the AuthenticatedSafe is keyed by the password, so its
        // verification tells a wrong password apart from corrupt contents. For an empty
        // password, OpenSSL's PKCS12_parse accepts both the absent (NULL) and the empty
        // password, since writers disagree on which an empty password means; so do we.
        var passwordForParse: String? = password
        if password.isEmpty {
            if PKCS12_verify_mac(p12, nil, 0) == 1 {
                passwordForParse = nil
            } else if PKCS12_verify_mac(p12, "", 0) != 1 {
                throw PKCS12Contents.macFailure()
            }
        } else {
            // The explicit UTF-8 length keeps a password with an embedded NUL from being cut
            // short (and then matching a shorter password).
            let length = Int32(clamping: password.utf8.count)
            let verified = password.withCString { pass in PKCS12_verify_mac(p12, pass, length) }
            guard verified == 1 else { throw PKCS12Contents.macFailure() }
        }
        OpenSSLError.clear()

        var pkey: OpaquePointer?
        var x509: OpaquePointer?
        var stack: OpaquePointer?
        let parsed = PKCS12Contents.withOptionalCString(passwordForParse) { pass in
            PKCS12_parse(p12, pass, &pkey, &x509, &stack)
        }
        // Take ownership of whatever was returned before anything can throw.
        if let pkey { key = OwnedEVPKey(takingOwnershipOf: pkey) }
        defer {
            if let x509 { X509_free(x509) }
            if let stack { CServerTrustShims_sk_X509_pop_free(stack) }
        }
        guard parsed == 1 else {
            let error = OpenSSLError.drain("PKCS12_parse")
            if error.reportsUnsupportedAlgorithm {
                throw KeyError(.unsupported, "the PKCS #12 file uses an algorithm libcrypto does not offer (\(error))")
            }
            // The MAC verified, so the password is right: the contents are damaged.
            throw KeyError(.malformed, "cannot read the PKCS #12 contents (\(error))")
        }
        if let x509 { certificate = try PKCS12Contents.certificate(x509, "certificate") }
        if let stack {
            let count = CServerTrustShims_sk_X509_num(stack)
            for index in 0..<max(count, 0) {
                guard let x509 = CServerTrustShims_sk_X509_value(stack, index) else { continue }
                chain.append(try PKCS12Contents.certificate(x509, "certificate \(index + 1) of the chain"))
            }
        }
    }

    /// The MAC did not verify: a wrong password, unless the MAC algorithm itself is missing.
    private static func macFailure() -> KeyError {
        let error = OpenSSLError.drain("PKCS12_verify_mac")
        if error.reportsUnsupportedAlgorithm {
            return KeyError(.unsupported, "the PKCS #12 MAC uses an algorithm libcrypto does not offer (\(error))")
        }
        if error.stack.contains(where: { $0.library == ERR_LIB_PKCS12 && $0.reason == PKCS12_R_MAC_VERIFY_FAILURE })
            || error.stack.isEmpty
        {
            return KeyError(.wrongPassword, "the PKCS #12 password is wrong (MAC verification failed)")
        }
        return KeyError(.malformed, "cannot verify the PKCS #12 MAC (\(error))")
    }

    /// `i2d_X509` of a borrowed `X509 *`, parsed with the project's certificate parser.
    private static func certificate(_ x509: OpaquePointer, _ what: String) throws(KeyError) -> Certificate {
        let length = i2d_X509(x509, nil)
        guard length > 0 else {
            throw KeyError.openSSL(.malformed, "cannot re-encode the PKCS #12 \(what)", "i2d_X509")
        }
        var written: Int32 = 0
        let der = [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, count in
            var cursor = buffer.baseAddress
            written = i2d_X509(x509, &cursor)
            count = written == length ? Int(length) : 0
        }
        guard written == length else {
            throw KeyError.openSSL(.malformed, "cannot re-encode the PKCS #12 \(what)", "i2d_X509")
        }
        do {
            return try Certificate(derEncoded: der)
        } catch {
            throw KeyError(.malformed, "the PKCS #12 \(what) does not parse: \(error)")
        }
    }

    private static func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        guard let text else { return body(nil) }
        return text.withCString { body($0) }
    }
}
