internal import COpenSSL
public import CertificateParsing

/// Message digests computed by OpenSSL's libcrypto.
///
/// Signature checks hash the TBSCertificate (often 1–2 KB) through libcrypto because it uses
/// SHA-NI/AVX2 where the CPU has them (about 2.5× the pure-Swift ``/CertificateParsing/SHA256``
/// on the project machine). Pins and fingerprints use the pure-Swift digests, which need no C
/// library and are fast enough for the few hundred bytes of a SubjectPublicKeyInfo.
public enum Digest {
    /// Hashes `data` with `algorithm`.
    ///
    /// - Parameters:
    ///   - algorithm: The digest.
    ///   - data: The message.
    /// - Returns: The digest value (``/CertificateParsing/DigestAlgorithm/outputSize`` bytes).
    /// - Throws: ``OpenSSLError`` if libcrypto does not offer the digest (MD5 under a FIPS
    ///   provider) or fails.
    public static func hash<C: Collection>(
        _ algorithm: DigestAlgorithm,
        _ data: C
    ) throws(OpenSSLError) -> [UInt8] where C.Element == UInt8 {
        if let result = data.withContiguousStorageIfAvailable({ buffer -> Result<[UInt8], OpenSSLError> in
            hash(algorithm, UnsafeRawBufferPointer(buffer))
        }) {
            return try result.get()
        }
        return try Array(data).withUnsafeBytes { hash(algorithm, $0) }.get()
    }

    /// SHA-256 of `data` (FIPS 180-4).
    ///
    /// - Parameter data: The message.
    /// - Returns: 32 bytes.
    /// - Throws: ``OpenSSLError`` if libcrypto fails.
    public static func sha256<C: Collection>(_ data: C) throws(OpenSSLError) -> [UInt8] where C.Element == UInt8 {
        try hash(.sha256, data)
    }

    /// SHA-384 of `data` (FIPS 180-4).
    ///
    /// - Parameter data: The message.
    /// - Returns: 48 bytes.
    /// - Throws: ``OpenSSLError`` if libcrypto fails.
    public static func sha384<C: Collection>(_ data: C) throws(OpenSSLError) -> [UInt8] where C.Element == UInt8 {
        try hash(.sha384, data)
    }

    /// SHA-512 of `data` (FIPS 180-4).
    ///
    /// - Parameter data: The message.
    /// - Returns: 64 bytes.
    /// - Throws: ``OpenSSLError`` if libcrypto fails.
    public static func sha512<C: Collection>(_ data: C) throws(OpenSSLError) -> [UInt8] where C.Element == UInt8 {
        try hash(.sha512, data)
    }

    /// One-shot `EVP_Digest` with the pre-fetched `EVP_MD`.
    static func hash(_ algorithm: DigestAlgorithm, _ input: UnsafeRawBufferPointer) -> Result<[UInt8], OpenSSLError> {
        guard let md = FetchedDigest.for(algorithm) else {
            return .failure(OpenSSLError(operation: "EVP_MD_fetch(\(algorithm.rawValue))"))
        }
        let size = algorithm.outputSize
        var ok = false
        let digest = [UInt8](unsafeUninitializedCapacity: Int(EVP_MAX_MD_SIZE)) { buffer, count in
            var length: UInt32 = 0
            ok =
                EVP_Digest(input.baseAddress, input.count, buffer.baseAddress, &length, md.pointer, nil) == 1
                && Int(length) == size
            count = ok ? size : 0
        }
        guard ok else { return .failure(OpenSSLError.drain("EVP_Digest(\(algorithm.rawValue))")) }
        return .success(digest)
    }

    /// Hashes `input` into `output`, which must hold `algorithm.outputSize` bytes; used by the
    /// signature code to avoid an array per check.
    static func hash(
        _ algorithm: DigestAlgorithm,
        _ input: UnsafeRawBufferPointer,
        into output: UnsafeMutablePointer<UInt8>
    ) -> Bool {
        guard let md = FetchedDigest.for(algorithm) else { return false }
        var length: UInt32 = 0
        return EVP_Digest(input.baseAddress, input.count, output, &length, md.pointer, nil) == 1
            && Int(length) == algorithm.outputSize
    }
}

/// An explicitly fetched `EVP_MD`, kept for the life of the process.
///
/// OpenSSL 3 resolves `EVP_sha256()` and friends through a provider lookup on every use
/// ("implicit fetch"); fetching once and reusing the object skips that lookup and its lock
/// (openssl-crypto(7), "Performance").
final class FetchedDigest: @unchecked Sendable {
    // @unchecked Sendable: the EVP_MD is immutable after EVP_MD_fetch, and libcrypto documents
    // fetched algorithm objects as safe to share between threads (openssl-threads(7)).

    /// The owned `EVP_MD *`, freed in `deinit`.
    let pointer: OpaquePointer

    /// Fetches `name` from the default library context; `nil` if no provider offers it.
    private init?(_ name: String) {
        guard let md = EVP_MD_fetch(nil, name, nil) else {
            OpenSSLError.clear()
            return nil
        }
        pointer = md
    }

    deinit { EVP_MD_free(pointer) }

    private static let md5 = FetchedDigest("MD5")
    private static let sha1 = FetchedDigest("SHA1")
    private static let sha224 = FetchedDigest("SHA2-224")
    private static let sha256 = FetchedDigest("SHA2-256")
    private static let sha384 = FetchedDigest("SHA2-384")
    private static let sha512 = FetchedDigest("SHA2-512")

    /// The process-wide fetched digest for `algorithm`, or `nil` if unavailable.
    static func `for`(_ algorithm: DigestAlgorithm) -> FetchedDigest? {
        switch algorithm {
        case .md5: return md5
        case .sha1: return sha1
        case .sha224: return sha224
        case .sha256: return sha256
        case .sha384: return sha384
        case .sha512: return sha512
        }
    }
}
