/// One Signed Certificate Timestamp (RFC 6962 §3.2): a CT log's signed promise to include a
/// certificate in its Merkle tree, read strictly from its TLS encoding.
///
/// ```
/// struct {
///     Version sct_version;                 // v1(0)
///     LogID id;                            // opaque key_id[32]: SHA-256 of the log's key
///     uint64 timestamp;                    // milliseconds since the epoch
///     CtExtensions extensions;             // opaque <0..2^16-1>
///     digitally-signed struct { ... };     // hash, signature algorithm, opaque <0..2^16-1>
/// } SignedCertificateTimestamp;
/// ```
///
/// Parsing checks the structure only. Whether the signature verifies, whether the log is known
/// and whether the timestamp is acceptable is decided by `TrustEvaluation`'s
/// `CertificateTransparency`, which needs the log list, the certificate and the clock.
public struct SignedCertificateTimestamp: Hashable, Sendable, CustomStringConvertible {
    /// The SCT version (RFC 6962 §3.2). Only v1 exists; another value fails parsing with
    /// ``CTEncodingError/Code/unsupportedVersion`` because its layout is unknown.
    public enum Version: UInt8, Hashable, Sendable {
        /// v1 (0).
        case v1 = 0
    }

    /// The SCT version.
    public let version: Version
    /// The LogID: SHA-256 of the log's DER SubjectPublicKeyInfo (32 bytes, RFC 6962 §3.2).
    public let logID: [UInt8]
    /// When the log issued the SCT, in milliseconds since 1970-01-01T00:00:00Z ignoring leap
    /// seconds (RFC 6962 §3.2). Read as sent: a value past any real date is kept and judged later.
    public let timestamp: UInt64
    /// The `CtExtensions` bytes, opaque. RFC 6962 defines none; static-ct-api logs put their
    /// `leaf_index` here. They are covered by the signature, so they are kept byte for byte.
    public let extensions: [UInt8]
    /// The hash algorithm of the digitally-signed struct (RFC 5246 §7.4.1.4.1).
    public let hashAlgorithm: TLSHashAlgorithm
    /// The signature algorithm of the digitally-signed struct (RFC 5246 §7.4.1.4.1).
    public let signatureAlgorithm: TLSSignatureAlgorithm
    /// The signature: a DER `ECDSA-Sig-Value` for ECDSA, the RSASSA-PKCS1-v1_5 value for RSA.
    public let signature: [UInt8]
    /// The whole SCT exactly as received (a `SerializedSCT`'s content).
    public let serialized: [UInt8]

    /// Parses one SCT: the content of a `SerializedSCT`, with nothing after it.
    ///
    /// - Parameter bytes: The TLS-encoded SCT.
    /// - Throws: ``CTEncodingError`` naming the field and offset of the first problem.
    public init(serialized bytes: [UInt8]) throws(CTEncodingError) {
        try self.init(bytes[...], base: 0)
    }

    /// Parses one SCT from `bytes`, reporting offsets as `base` plus the position in `bytes`.
    init(_ bytes: ArraySlice<UInt8>, base: Int) throws(CTEncodingError) {
        var reader = TLSReader(bytes, base: base)
        let versionOffset = reader.offset
        let rawVersion = UInt8(try reader.integer(1, "sct_version"))
        guard let version = Version(rawValue: rawVersion) else {
            // RFC 6962 §3.3: clients "MUST ignore" SCTs of a version they do not understand.
            throw CTEncodingError(.unsupportedVersion, at: versionOffset, "SCT version \(Int(rawVersion) + 1) is not v1")
        }
        self.version = version
        logID = Array(try reader.bytes(32, "LogID"))
        timestamp = try reader.integer(8, "timestamp")
        extensions = Array(try reader.vector(lengthBytes: 2, "CtExtensions"))
        hashAlgorithm = TLSHashAlgorithm(rawValue: UInt8(try reader.integer(1, "hash algorithm")))
        signatureAlgorithm = TLSSignatureAlgorithm(rawValue: UInt8(try reader.integer(1, "signature algorithm")))
        signature = Array(try reader.vector(lengthBytes: 2, "signature"))
        try reader.finish("SignedCertificateTimestamp")
        serialized = Array(bytes)
    }

    /// The timestamp in whole seconds since 1970 (rounded down), clamped to `Int64`.
    public var timestampSeconds: Int64 { Int64(clamping: timestamp / 1000) }

    /// The timestamp as a time, to the second (for display and for comparing with log list dates).
    public var time: ASN1Time { ASN1Time(secondsSince1970: timestampSeconds) }

    /// The bytes the log signed for `entry` (RFC 6962 §3.2, `digitally-signed struct`):
    /// version, `signature_type` certificate_timestamp(0), timestamp, the entry, and this SCT's
    /// extensions.
    ///
    /// - Parameter entry: What the log was given: the certificate (TLS or OCSP delivery) or the
    ///   precertificate reconstructed from it (embedded delivery).
    /// - Returns: The signed bytes.
    public func signedData(for entry: CTLogEntry) -> [UInt8] {
        var writer = TLSWriter()
        writer.bytes.reserveCapacity(entry.encodedCount + extensions.count + 16)
        writer.integer(UInt64(version.rawValue), width: 1)
        writer.integer(0, width: 1)  // SignatureType certificate_timestamp(0)
        writer.integer(timestamp, width: 8)
        entry.encode(into: &writer)
        writer.vector(extensions, lengthBytes: 2)
        return writer.bytes
    }

    /// `SCT v1 log <first 8 bytes of the LogID in hex> at <RFC 3339 time>`.
    public var description: String { "SCT v1 log \(Hex.encode(logID.prefix(8))) at \(time.rfc3339)" }

    /// Equal when the encodings are identical.
    public static func == (lhs: SignedCertificateTimestamp, rhs: SignedCertificateTimestamp) -> Bool {
        lhs.serialized == rhs.serialized
    }

    /// Hashes the encoding.
    public func hash(into hasher: inout Hasher) { hasher.combine(serialized) }
}

/// A TLS `HashAlgorithm` value (RFC 5246 §7.4.1.4.1), kept even when unknown so the report can
/// name it; RFC 6962 §2.1.4 logs use only ``sha256``.
public struct TLSHashAlgorithm: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The wire value.
    public let rawValue: UInt8

    /// Wraps a wire value.
    ///
    /// - Parameter rawValue: The byte as sent.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// none(0).
    public static let none = TLSHashAlgorithm(rawValue: 0)
    /// md5(1).
    public static let md5 = TLSHashAlgorithm(rawValue: 1)
    /// sha1(2).
    public static let sha1 = TLSHashAlgorithm(rawValue: 2)
    /// sha224(3).
    public static let sha224 = TLSHashAlgorithm(rawValue: 3)
    /// sha256(4): the only hash RFC 6962 §2.1.4 allows a log.
    public static let sha256 = TLSHashAlgorithm(rawValue: 4)
    /// sha384(5).
    public static let sha384 = TLSHashAlgorithm(rawValue: 5)
    /// sha512(6).
    public static let sha512 = TLSHashAlgorithm(rawValue: 6)

    /// The RFC 5246 name, or `hash(<n>)`.
    public var description: String {
        let names = ["none", "md5", "sha1", "sha224", "sha256", "sha384", "sha512"]
        return Int(rawValue) < names.count ? names[Int(rawValue)] : "hash(\(rawValue))"
    }
}

/// A TLS `SignatureAlgorithm` value (RFC 5246 §7.4.1.4.1), kept even when unknown; RFC 6962
/// §2.1.4 logs sign with ``ecdsa`` (NIST P-256) or ``rsa`` (at least 2048 bits).
public struct TLSSignatureAlgorithm: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The wire value.
    public let rawValue: UInt8

    /// Wraps a wire value.
    ///
    /// - Parameter rawValue: The byte as sent.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// anonymous(0).
    public static let anonymous = TLSSignatureAlgorithm(rawValue: 0)
    /// rsa(1): RSASSA-PKCS1-v1_5.
    public static let rsa = TLSSignatureAlgorithm(rawValue: 1)
    /// dsa(2).
    public static let dsa = TLSSignatureAlgorithm(rawValue: 2)
    /// ecdsa(3).
    public static let ecdsa = TLSSignatureAlgorithm(rawValue: 3)

    /// The RFC 5246 name, or `signature(<n>)`.
    public var description: String {
        let names = ["anonymous", "rsa", "dsa", "ecdsa"]
        return Int(rawValue) < names.count ? names[Int(rawValue)] : "signature(\(rawValue))"
    }
}
