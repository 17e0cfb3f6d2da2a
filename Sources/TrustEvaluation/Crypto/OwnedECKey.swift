internal import COpenSSL
internal import CServerTrustShims

/// The single Swift owner of one libcrypto `EC_KEY` holding a public point, for ECDSA checks
/// through `ECDSA_verify` (see ``VerificationKey`` for why this path exists beside EVP_PKEY).
final class OwnedECKey: @unchecked Sendable {
    // @unchecked Sendable: the key is never modified after init. ECDSA_verify only reads the
    // key, its group and its point, and makes its own BN_CTX per call, so concurrent checks
    // with one key are safe (openssl-threads(7): concurrent read-only use of an object).

    /// The owned `EC_KEY *`; borrowed by callers only for the duration of a call.
    let pointer: OpaquePointer

    /// `EC_KEY_new` + `EC_KEY_set_group` + `EC_KEY_oct2key`, or `nil` with the reason.
    ///
    /// `EC_KEY_set_group` copies the curve template's group, sharing its precomputed tables,
    /// instead of building the group from its name. `EC_KEY_oct2key` decodes the SEC 1 §2.3.4
    /// point and checks that it lies on the curve (`EC_POINT_set_affine_coordinates`); the
    /// point at infinity cannot reach it because the SubjectPublicKeyInfo parser accepts only
    /// the `02`, `03` and `04` forms.
    static func make(group: OpaquePointer, point: ArraySlice<UInt8>) -> Result<OwnedECKey, ECKeyFailure> {
        OpenSSLError.clear()
        guard let key = CServerTrustShims_EC_KEY_new() else {
            return .failure(.unavailable(OpenSSLError.drain("EC_KEY_new")))
        }
        let owned = OwnedECKey(takingOwnershipOf: key)
        guard CServerTrustShims_EC_KEY_set_group(key, group) == 1 else {
            return .failure(.unavailable(OpenSSLError.drain("EC_KEY_set_group")))
        }
        let decoded = point.withUnsafeBufferPointer {
            CServerTrustShims_EC_KEY_oct2key(key, $0.baseAddress, $0.count)
        }
        guard decoded == 1 else { return .failure(.invalidPoint(OpenSSLError.drain("EC_KEY_oct2key"))) }
        return .success(owned)
    }

    /// Why ``make(group:point:)`` failed.
    enum ECKeyFailure: Error {
        /// libcrypto could not make the key at all (no memory, no deprecated API).
        case unavailable(OpenSSLError)
        /// The encoded point is not on the curve.
        case invalidPoint(OpenSSLError)
    }

    private init(takingOwnershipOf pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { CServerTrustShims_EC_KEY_free(pointer) }
}
