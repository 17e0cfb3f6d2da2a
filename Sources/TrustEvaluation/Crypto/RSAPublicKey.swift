internal import COpenSSL
internal import CServerTrustShims
import CertificateParsing
internal import Synchronization

/// An RSA public key: validated when it is made, imported into libcrypto `BIGNUM`s with its
/// Montgomery context precomputed on its first check.
///
/// RSASSA-PKCS1-v1_5 (nearly every RSA certificate) is verified here directly: the RSA public
/// operation with `BN_mod_exp_mont`, then a byte-for-byte comparison with the expected
/// encoded message. Measured on the project machine (OpenSSL 3.0.19, release build), importing
/// this key costs about 6 µs (`BN_MONT_CTX_set`, about 84,000 instructions for 2048 bits) and a
/// 2048-bit check about 18 µs, against about 4 µs + 30 µs for an `EVP_PKEY_fromdata` key on its
/// first check (OpenSSL computes the same Montgomery context lazily inside the first verify) and
/// 20 µs on later checks. The import waits for the first check because with the
/// ``SignatureMemo`` most keys are never used for one: an issuer met again is answered from the
/// memo, and the import would be a quarter of such an evaluation. RSASSA-PSS, which is rare in
/// the Web PKI, goes through an `EVP_PKEY` built from the same numbers on first use.
final class RSAPublicKeyMaterial: Sendable {
    /// The modulus, big-endian without leading zeros.
    private let modulusBytes: [UInt8]
    /// The public exponent, big-endian without leading zeros.
    private let exponentBytes: [UInt8]
    /// k, the modulus length in bytes (RFC 8017 §8.2.2).
    let modulusByteCount: Int
    /// The modulus length in bits.
    let modulusBitCount: Int
    /// The libcrypto numbers, imported on first use.
    private let imported = Mutex<RSANumbers?>(nil)
    /// The EVP_PKEY for RSASSA-PSS, built on first use.
    private let pssKey = Mutex<OwnedEVPKey?>(nil)

    private init(modulus: ArraySlice<UInt8>, exponent: ArraySlice<UInt8>, bits: Int) {
        modulusBytes = Array(modulus)
        exponentBytes = Array(exponent)
        modulusBitCount = bits
        modulusByteCount = (bits + 7) / 8
    }

    /// Validates an RSA public key given as unsigned big-endian integers.
    ///
    /// - Throws: ``SignatureError/Code/keySizeOutOfRange`` outside
    ///   `minimumModulusBits...maximumModulusBits`; ``SignatureError/Code/invalidKey`` for an
    ///   even modulus or an exponent that is even, below 3 or longer than 64 bits.
    static func make(
        modulus modulusBytes: ArraySlice<UInt8>,
        exponent exponentBytes: ArraySlice<UInt8>,
        minimumModulusBits: Int,
        maximumModulusBits: Int
    ) throws(SignatureError) -> RSAPublicKeyMaterial {
        let n = modulusBytes.drop { $0 == 0 }
        let e = exponentBytes.drop { $0 == 0 }
        let bits = bitLength(n)
        guard bits >= minimumModulusBits, bits <= maximumModulusBits else {
            throw SignatureError(
                .keySizeOutOfRange,
                "RSA modulus of \(bits) bits is outside \(minimumModulusBits)...\(maximumModulusBits)"
            )
        }
        // RFC 8017 §3.1: n is a product of odd primes, so it is odd; Montgomery reduction
        // requires that too.
        guard let lastModulusByte = n.last, lastModulusByte & 1 == 1 else {
            throw SignatureError(.invalidKey, "RSA modulus is even")
        }
        // RFC 8017 §3.1: 3 <= e <= n - 1 and gcd(e, λ(n)) = 1, so e is odd. Exponents longer than
        // 64 bits are refused: the public operation's cost grows with e's length, and a key
        // with a 16384-bit exponent would make each check take seconds. 64 bits is OpenSSL's
        // own limit for large moduli (OPENSSL_RSA_MAX_PUBEXP_BITS); Go (31 bits) and BoringSSL
        // (33 bits) are stricter.
        let exponentBits = bitLength(e)
        guard exponentBits <= 64 else {
            throw SignatureError(.invalidKey, "RSA public exponent of \(exponentBits) bits is longer than 64 bits")
        }
        guard let lastExponentByte = e.last, lastExponentByte & 1 == 1, exponentBits >= 2 else {
            throw SignatureError(.invalidKey, "RSA public exponent must be odd and at least 3")
        }
        return RSAPublicKeyMaterial(modulus: n, exponent: e, bits: bits)
    }

    /// The libcrypto numbers, imported by the first caller (later ones wait for it and share
    /// them); a failure (only an allocation failure can fail here) is the check's result.
    private func numbers() -> Result<RSANumbers, SignatureError> {
        imported.withLock { cached -> Result<RSANumbers, SignatureError> in
            if let cached { return .success(cached) }
            let made = RSANumbers.make(modulus: modulusBytes, exponent: exponentBytes)
            if case .success(let numbers) = made { cached = numbers }
            return made
        }
    }

    /// The number of significant bits of an unsigned big-endian integer without leading zeros.
    private static func bitLength(_ bytes: ArraySlice<UInt8>) -> Int {
        guard let first = bytes.first else { return 0 }
        return (bytes.count - 1) * 8 + (8 - first.leadingZeroBitCount)
    }

    // MARK: - RSASSA-PKCS1-v1_5

    /// RSASSA-PKCS1-V1_5-VERIFY (RFC 8017 §8.2.2) using the comparison method the RFC
    /// recommends: the expected EM is built in full from the message and compared with the
    /// recovered EM byte for byte, so no parsing of attacker-controlled padding or DigestInfo
    /// happens (which is what Bleichenbacher-style forgeries exploit). `messageDigest` is
    /// `digest` over the message (step 2 of §9.2), computed by the caller, which keys the
    /// signature memo on it too.
    func verifyPKCS1(
        signature: ArraySlice<UInt8>,
        messageDigest: UnsafeBufferPointer<UInt8>,
        digest: DigestAlgorithm
    ) -> SignatureCheckResult {
        guard messageDigest.count == digest.outputSize, let hash = messageDigest.baseAddress else {
            return .invalid(SignatureError(.internalFailure, "\(digest.rawValue) digest of \(messageDigest.count) bytes"))
        }
        let k = modulusByteCount
        // Step 1: the signature must be exactly k bytes. NOTE: OpenSSL also accepts shorter
        // signatures (it left-pads them); Go, BoringSSL and the RFC do not, and neither do we.
        guard signature.count == k else {
            return .invalid(
                SignatureError(.malformedSignature, "RSA signature is \(signature.count) bytes, the modulus is \(k)")
            )
        }
        let prefix = DigestInfoPrefix.for(digest)
        let tLength = prefix.count + digest.outputSize
        // §9.2 step 3: "intended encoded message length too short" (e.g. SHA-512 with a
        // 512-bit key).
        guard k >= tLength + 11 else {
            return .invalid(
                SignatureError(
                    .badSignature,
                    "a \(modulusBitCount)-bit modulus is too short for \(digest.rawValue) PKCS #1 v1.5"
                )
            )
        }

        // Step 3 (EMSA-PKCS1-v1_5 encoding, §9.2): EM' = 0x00 ‖ 0x01 ‖ PS (0xFF…) ‖ 0x00 ‖ T,
        // with T = DigestInfo prefix ‖ H, and |PS| = k - tLen - 3 >= 8.
        var built = true
        let expected = [UInt8](unsafeUninitializedCapacity: k) { buffer, count in
            guard let base = buffer.baseAddress else {
                built = false
                return
            }
            let paddingEnd = k - tLength - 1
            base[0] = 0x00
            base[1] = 0x01
            (base + 2).initialize(repeating: 0xFF, count: paddingEnd - 2)
            base[paddingEnd] = 0x00
            for (offset, byte) in prefix.enumerated() { base[paddingEnd + 1 + offset] = byte }
            (base + (k - digest.outputSize)).initialize(from: hash, count: digest.outputSize)
            count = k
        }
        guard built else { return .invalid(SignatureError(.internalFailure, "no buffer for the encoded message")) }

        // Step 2 (RSAVP1, §5.2.2): m = s^e mod n, after checking 0 <= s < n; then I2OSP(m, k).
        let numbers: RSANumbers
        switch self.numbers() {
        case .success(let imported): numbers = imported
        case .failure(let error): return .invalid(error)
        }
        guard let context = BN_CTX_new() else { return .invalid(.openSSL(OpenSSLError.drain("BN_CTX_new"))) }
        defer { BN_CTX_free(context) }
        BN_CTX_start(context)
        defer { BN_CTX_end(context) }
        guard let s = BN_CTX_get(context), let m = BN_CTX_get(context) else {
            return .invalid(.openSSL(OpenSSLError.drain("BN_CTX_get")))
        }
        let imported = signature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), s) }
        guard imported != nil else { return .invalid(.openSSL(OpenSSLError.drain("BN_bin2bn(signature)"))) }
        guard BN_cmp(s, numbers.modulus) < 0 else {
            return .invalid(
                SignatureError(.badSignature, "RSA signature representative out of range (RFC 8017 §5.2.2)")
            )
        }
        guard BN_mod_exp_mont(m, s, numbers.exponent, numbers.modulus, context, numbers.montgomery) == 1 else {
            return .invalid(.openSSL(OpenSSLError.drain("BN_mod_exp_mont")))
        }
        var recoveredOK = false
        let matches = expected.withUnsafeBufferPointer { expectedBuffer in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: k) { recovered -> Bool in
                guard let recoveredBase = recovered.baseAddress, let expectedBase = expectedBuffer.baseAddress else {
                    return false
                }
                recoveredOK = BN_bn2binpad(m, recoveredBase, Int32(k)) == Int32(k)
                guard recoveredOK else { return false }
                // Step 4: compare every byte. The values are public, so no constant-time
                // comparison is needed; the whole EM is compared all the same.
                var difference: UInt8 = 0
                for index in 0..<k { difference |= recoveredBase[index] ^ expectedBase[index] }
                return difference == 0
            }
        }
        guard recoveredOK else { return .invalid(.openSSL(OpenSSLError.drain("BN_bn2binpad"))) }
        guard matches else {
            return .invalid(
                SignatureError(.badSignature, "RSA PKCS #1 v1.5 \(digest.rawValue) signature does not match")
            )
        }
        return .valid
    }

    // MARK: - RSASSA-PSS

    /// RSASSA-PSS-VERIFY (RFC 8017 §8.1.2) through libcrypto with every parameter from the
    /// certificate enforced (RFC 4055 §3.1): the message digest, the MGF1 digest, and the exact
    /// salt length (OpenSSL checks it exactly when given a non-negative value). `messageDigest`
    /// is mHash (§9.1.2 step 2), computed by the caller with `parameters.digest`.
    func verifyPSS(
        signature: ArraySlice<UInt8>,
        messageDigest: UnsafeBufferPointer<UInt8>,
        parameters: RSAPSSParameters
    ) -> SignatureCheckResult {
        guard signature.count == modulusByteCount else {
            return .invalid(
                SignatureError(
                    .malformedSignature,
                    "RSA signature is \(signature.count) bytes, the modulus is \(modulusByteCount)"
                )
            )
        }
        guard let signatureDigest = FetchedDigest.for(parameters.digest),
            let maskDigest = FetchedDigest.for(parameters.mgf1Digest)
        else {
            return .invalid(
                SignatureError(
                    .unsupportedAlgorithm,
                    "libcrypto does not offer the PSS digests "
                        + "\(parameters.digest.rawValue)/\(parameters.mgf1Digest.rawValue)"
                )
            )
        }
        guard let salt = Int32(exactly: parameters.saltLength) else {
            return .invalid(
                SignatureError(.unsupportedAlgorithm, "PSS salt length \(parameters.saltLength) out of range")
            )
        }
        let key: OwnedEVPKey
        switch evpKey() {
        case .success(let built): key = built
        case .failure(let error): return .invalid(error)
        }
        let hashLength = parameters.digest.outputSize
        guard messageDigest.count == hashLength, let hash = messageDigest.baseAddress else {
            return .invalid(SignatureError(.internalFailure, "\(parameters.digest.rawValue) digest of \(messageDigest.count) bytes"))
        }
        // The setup calls below are inspected on failure, so start from an empty queue.
        OpenSSLError.clear()
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            return .invalid(.openSSL(OpenSSLError.drain("EVP_PKEY_CTX_new_from_pkey")))
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_verify_init(context) == 1,
            EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1,
            EVP_PKEY_CTX_set_signature_md(context, signatureDigest.pointer) == 1,
            EVP_PKEY_CTX_set_rsa_mgf1_md(context, maskDigest.pointer) == 1,
            EVP_PKEY_CTX_set_rsa_pss_saltlen(context, salt) == 1
        else {
            return .invalid(
                SignatureError(
                    .unsupportedAlgorithm,
                    OpenSSLError.drain("RSASSA-PSS setup (\(parameters))").description
                )
            )
        }
        let result = signature.withUnsafeBufferPointer { sig in
            EVP_PKEY_verify(context, sig.baseAddress, sig.count, hash, hashLength)
        }
        guard result == 1 else {
            // An expected outcome: drop OpenSSL's queued reasons so they never surface
            // in a later, unrelated error.
            OpenSSLError.clear()
            return .invalid(
                SignatureError(.badSignature, "RSASSA-PSS signature does not verify with \(parameters)")
            )
        }
        return .valid
    }

    /// `OSSL_PKEY_PARAM_RSA_N` and `OSSL_PKEY_PARAM_RSA_E` ("n", "e") as pointers valid for
    /// the life of the process.
    private static var parameterN: UnsafePointer<CChar> { cString("n") }
    private static var parameterE: UnsafePointer<CChar> { cString("e") }

    private static func cString(_ literal: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(literal.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// The `EVP_PKEY` for this key, built from n and e with `EVP_PKEY_fromdata` on first use.
    private func evpKey() -> Result<OwnedEVPKey, SignatureError> {
        let numbers: RSANumbers
        switch self.numbers() {
        case .success(let imported): numbers = imported
        case .failure(let error): return .failure(error)
        }
        return pssKey.withLock { cached -> Result<OwnedEVPKey, SignatureError> in
            if let cached { return .success(cached) }
            OpenSSLError.clear()
            guard let builder = OSSL_PARAM_BLD_new() else {
                return .failure(.openSSL(OpenSSLError.drain("OSSL_PARAM_BLD_new")))
            }
            defer { OSSL_PARAM_BLD_free(builder) }
            // OSSL_PARAM_BLD and the OSSL_PARAM array it builds keep the key-name pointers
            // rather than copying them, so the names must outlive both: static strings.
            guard OSSL_PARAM_BLD_push_BN(builder, Self.parameterN, numbers.modulus) == 1,
                OSSL_PARAM_BLD_push_BN(builder, Self.parameterE, numbers.exponent) == 1,
                let parameters = OSSL_PARAM_BLD_to_param(builder)
            else {
                return .failure(.openSSL(OpenSSLError.drain("OSSL_PARAM_BLD")))
            }
            defer { OSSL_PARAM_free(parameters) }
            guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
                return .failure(.openSSL(OpenSSLError.drain("EVP_PKEY_CTX_new_from_name(RSA)")))
            }
            defer { EVP_PKEY_CTX_free(context) }
            var pkey: OpaquePointer?
            guard EVP_PKEY_fromdata_init(context) == 1,
                EVP_PKEY_fromdata(context, &pkey, CServerTrustShims_EVP_PKEY_PUBLIC_KEY(), parameters) == 1,
                let pkey
            else {
                return .failure(.openSSL(OpenSSLError.drain("EVP_PKEY_fromdata(RSA)")))
            }
            let owned = OwnedEVPKey(takingOwnershipOf: pkey)
            cached = owned
            return .success(owned)
        }
    }
}

/// The single Swift owner of an RSA key's libcrypto numbers: n, e and n's Montgomery context.
final class RSANumbers: @unchecked Sendable {
    // @unchecked Sendable: written only in `make` and read afterwards; BN_mod_exp_mont takes them
    // as inputs only (OpenSSL itself shares a cached BN_MONT_CTX between threads the same way,
    // rsa_ossl.c).

    /// The owned modulus `BIGNUM *`.
    let modulus: OpaquePointer
    /// The owned public exponent `BIGNUM *`.
    let exponent: OpaquePointer
    /// The owned `BN_MONT_CTX *` for the modulus.
    let montgomery: OpaquePointer

    private init(modulus: OpaquePointer, exponent: OpaquePointer, montgomery: OpaquePointer) {
        self.modulus = modulus
        self.exponent = exponent
        self.montgomery = montgomery
    }

    deinit {
        BN_MONT_CTX_free(montgomery)
        BN_free(exponent)
        BN_free(modulus)
    }

    /// Imports n and e (validated by ``RSAPublicKeyMaterial/make``) and computes the Montgomery
    /// context.
    static func make(modulus n: [UInt8], exponent e: [UInt8]) -> Result<RSANumbers, SignatureError> {
        OpenSSLError.clear()
        guard let modulus = n.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else {
            return .failure(.openSSL(OpenSSLError.drain("BN_bin2bn(modulus)")))
        }
        guard let exponent = e.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else {
            BN_free(modulus)
            return .failure(.openSSL(OpenSSLError.drain("BN_bin2bn(exponent)")))
        }
        guard let montgomery = BN_MONT_CTX_new() else {
            BN_free(exponent)
            BN_free(modulus)
            return .failure(.openSSL(OpenSSLError.drain("BN_MONT_CTX_new")))
        }
        // From here on `numbers` owns all three; its deinit frees them if setup fails.
        let numbers = RSANumbers(modulus: modulus, exponent: exponent, montgomery: montgomery)
        guard let context = BN_CTX_new() else { return .failure(.openSSL(OpenSSLError.drain("BN_CTX_new"))) }
        defer { BN_CTX_free(context) }
        guard BN_MONT_CTX_set(montgomery, modulus, context) == 1 else {
            return .failure(.openSSL(OpenSSLError.drain("BN_MONT_CTX_set")))
        }
        return .success(numbers)
    }
}

/// The DER encodings of `DigestInfo ::= SEQUENCE { AlgorithmIdentifier {oid, NULL}, OCTET STRING
/// (hash) }` up to the hash value, exactly as listed in RFC 8017 §9.2 Note 1 (RFC 3447 for
/// SHA-224). The NULL parameters are required: a DigestInfo without them does not match.
enum DigestInfoPrefix {
    static let md5: [UInt8] = [
        0x30, 0x20, 0x30, 0x0c, 0x06, 0x08, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x05, 0x05, 0x00, 0x04, 0x10,
    ]
    static let sha1: [UInt8] = [
        0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14,
    ]
    static let sha224: [UInt8] = [
        0x30, 0x2d, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x04, 0x05, 0x00, 0x04,
        0x1c,
    ]
    static let sha256: [UInt8] = [
        0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04,
        0x20,
    ]
    static let sha384: [UInt8] = [
        0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04,
        0x30,
    ]
    static let sha512: [UInt8] = [
        0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04,
        0x40,
    ]

    /// The prefix for `digest`.
    static func `for`(_ digest: DigestAlgorithm) -> [UInt8] {
        switch digest {
        case .md5: return md5
        case .sha1: return sha1
        case .sha224: return sha224
        case .sha256: return sha256
        case .sha384: return sha384
        case .sha512: return sha512
        }
    }
}
