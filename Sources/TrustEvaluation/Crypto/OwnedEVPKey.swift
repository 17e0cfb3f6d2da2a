internal import COpenSSL

/// The single Swift owner of one `EVP_PKEY`.
final class OwnedEVPKey: @unchecked Sendable {
    // @unchecked Sendable: the key is never modified after init, and OpenSSL 3 allows concurrent
    // read-only use of one EVP_PKEY (each operation makes its own EVP_PKEY_CTX/EVP_MD_CTX);
    // see openssl-threads(7), "Objects".

    /// The owned `EVP_PKEY *`; borrowed by callers only for the duration of a call.
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`, which the caller must not free.
    init(takingOwnershipOf pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }

    /// `i2d_PUBKEY`: the DER SubjectPublicKeyInfo of the public half.
    func publicKeyInfoDER() -> Result<[UInt8], OpenSSLError> {
        OpenSSLError.clear()
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else { return .failure(OpenSSLError.drain("i2d_PUBKEY")) }
        var written: Int32 = 0
        let der = [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, count in
            var cursor = buffer.baseAddress
            written = i2d_PUBKEY(pointer, &cursor)
            count = written == length ? Int(length) : 0
        }
        guard written == length else { return .failure(OpenSSLError.drain("i2d_PUBKEY")) }
        return .success(der)
    }
}
