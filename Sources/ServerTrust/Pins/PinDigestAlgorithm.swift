import CertificateParsing

/// The digest of an SPKI pin.
public enum PinDigestAlgorithm: String, Hashable, Sendable, CaseIterable {
    /// SHA-256 (HPKP, TrustKit, OkHttp, NSC, ATS, curl).
    case sha256
    /// SHA-384 (none of HPKP, TrustKit, OkHttp, NSC, ATS or curl offers it).
    case sha384
    /// SHA-512 (AOSP's `Pin.java` anticipates it).
    case sha512

    /// The digest length in bytes.
    public var byteCount: Int {
        switch self {
        case .sha256: return SHA256.byteCount
        case .sha384: return SHA384.byteCount
        case .sha512: return SHA512.byteCount
        }
    }

    /// The digest of `bytes`.
    func digest(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        switch self {
        case .sha256: return SHA256.hash(bytes)
        case .sha384: return SHA384.hash(bytes)
        case .sha512: return SHA512.hash(bytes)
        }
    }
}
