internal import COpenSSL
internal import CServerTrustShims

/// PKCS#12 (PFX) files, built by OpenSSL so loader tests read a real third-party encoding.
public enum LabPKCS12 {
    /// Builds a PKCS#12 file with OpenSSL 3.0's default algorithms (PBES2/AES-256-CBC with
    /// PBKDF2 for key and certificates, HMAC-SHA-256 MAC).
    ///
    /// - Parameters:
    ///   - certificate: The end-entity certificate.
    ///   - key: Its private key.
    ///   - chain: Additional certificates (intermediates, optionally roots), in order.
    ///   - password: The password protecting the key and the MAC.
    ///   - friendlyName: The friendlyName attribute of the key and certificate bags, if any.
    /// - Returns: The DER PFX.
    /// - Throws: ``LabError`` if OpenSSL cannot parse a certificate or build the file.
    public static func create(
        certificate: LabCertificate,
        key: LabKey,
        chain: [LabCertificate] = [],
        password: String,
        friendlyName: String? = nil
    ) throws -> [UInt8] {
        let leaf = try decodeX509(certificate.der)
        defer { X509_free(leaf) }
        guard let stack = CServerTrustShims_sk_X509_new_null() else { throw LabError.openSSL("sk_X509_new_null") }
        // The stack owns every pushed X509; pop_free releases them all.
        defer { CServerTrustShims_sk_X509_pop_free(stack) }
        for extra in chain {
            let x509 = try decodeX509(extra.der)
            guard CServerTrustShims_sk_X509_push(stack, x509) > 0 else {
                X509_free(x509)
                throw LabError.openSSL("sk_X509_push")
            }
        }
        let pfx: OpaquePointer? = password.withCString { pass in
            withOptionalCString(friendlyName) { name in
                // PKCS12_create encodes the key as PKCS#8 (see LabKey.encodingPrivateKey).
                key.encodingPrivateKey { PKCS12_create(pass, name, key.pkey, leaf, stack, 0, 0, 0, 0, 0) }
            }
        }
        guard let pfx else { throw LabError.openSSL("PKCS12_create") }
        defer { PKCS12_free(pfx) }
        let bio = try LabBIO()
        guard i2d_PKCS12_bio(bio.pointer, pfx) == 1 else { throw LabError.openSSL("i2d_PKCS12_bio") }
        return try bio.bytes()
    }

    /// Parses DER into a caller-owned `X509 *`.
    static func decodeX509(_ der: [UInt8]) throws -> OpaquePointer {
        let x509 = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let x509 else { throw LabError.openSSL("d2i_X509") }
        return x509
    }

    private static func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        guard let text else { return body(nil) }
        return text.withCString { body($0) }
    }
}
