/// A Certificate Transparency log for tests: a key, the log ID derived from it, and the
/// log-list facts about it (name, operator, state, shard), able to sign SCTs over X.509 and
/// precertificate entries (RFC 6962 §3.2).
///
/// Everything is computed here with OpenSSL (SHA-256, ECDSA/RSA signing) and the Lab's own
/// encoders, never with the library under test, so SCTs the library accepts were made by
/// independent code.
///
/// ```swift
/// let log = try LabCTLog(name: "Lab 'Alpha' log", operatorName: "Lab Operator A", key: LabKey.shared(.p256, slot: 600))
/// let sct = try log.sign(.certificate(leaf), timestamp: UInt64(LabClock.reference) * 1000)
/// ```
public struct LabCTLog: Sendable, Hashable, CustomStringConvertible {
    /// A log state of the v3 log list schema.
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// `pending`.
        case pending
        /// `qualified`.
        case qualified
        /// `usable`.
        case usable
        /// `readonly` (the list adds a `final_tree_head`).
        case readOnly = "readonly"
        /// `retired`.
        case retired
        /// `rejected`.
        case rejected
    }

    /// An earlier operator of the log (`previous_operators`).
    public struct PreviousOperator: Sendable, Hashable {
        /// The operator's name.
        public var name: String
        /// When its operation ended (Unix seconds).
        public var endTime: Int64

        /// Creates an entry.
        ///
        /// - Parameters:
        ///   - name: The operator's name.
        ///   - endTime: When its operation ended (Unix seconds).
        public init(name: String, endTime: Int64) {
            self.name = name
            self.endTime = endTime
        }
    }

    /// The log's signing key (ECDSA P-256 or RSA for a log RFC 6962 §2.1.4 allows; other keys
    /// make logs the verifier must refuse).
    public let key: LabKey
    /// SHA-256 of the key's DER SubjectPublicKeyInfo (RFC 6962 §3.2).
    public let logID: [UInt8]
    /// The list's `description`.
    public var name: String
    /// The operator listing the log.
    public var operatorName: String
    /// The log's state.
    public var state: State
    /// When the log entered ``state`` (Unix seconds).
    public var stateSince: Int64
    /// The notAfter range the log accepts, if sharded: `temporal_interval` start (inclusive) and
    /// end (exclusive), Unix seconds.
    public var temporalInterval: Range<Int64>?
    /// A static-ct-api ("tiled") log rather than an RFC 6962 one.
    public var isTiled: Bool
    /// Earlier operators.
    public var previousOperators: [PreviousOperator]
    /// Maximum merge delay, seconds.
    public var maximumMergeDelay: Int

    /// Creates a log.
    ///
    /// - Parameters:
    ///   - name: The log's description.
    ///   - operatorName: Its operator.
    ///   - key: Its signing key.
    ///   - state: Its state (default usable).
    ///   - stateSince: When it entered the state (default a year before ``LabClock/reference``).
    ///   - temporalInterval: The notAfter range it accepts, if sharded.
    ///   - isTiled: Whether it is a static-ct-api log.
    /// - Throws: ``LabError`` if the key cannot be hashed.
    public init(
        name: String,
        operatorName: String,
        key: LabKey,
        state: State = .usable,
        stateSince: Int64 = LabClock.reference - LabClock.year,
        temporalInterval: Range<Int64>? = nil,
        isTiled: Bool = false
    ) throws {
        self.key = key
        self.logID = try LabDigest.sha256.hash(key.publicKeyInfoDER)
        self.name = name
        self.operatorName = operatorName
        self.state = state
        self.stateSince = stateSince
        self.temporalInterval = temporalInterval
        self.isTiled = isTiled
        self.previousOperators = []
        self.maximumMergeDelay = isTiled ? 60 : 86_400
    }

    /// The same log in another state.
    ///
    /// - Parameters:
    ///   - state: The new state.
    ///   - since: When it was entered (Unix seconds).
    /// - Returns: The changed copy.
    public func with(state: State, since: Int64) -> LabCTLog {
        var copy = self
        copy.state = state
        copy.stateSince = since
        return copy
    }

    /// Signs an SCT over `entry` (RFC 6962 §3.2): ECDSA with SHA-256 for an EC key, RSASSA-PKCS1-v1_5
    /// with SHA-256 for RSA, Ed25519 for an Ed25519 key (which no verifier should accept).
    ///
    /// - Parameters:
    ///   - entry: The certificate or precertificate.
    ///   - timestamp: Milliseconds since 1970.
    ///   - extensions: The `CtExtensions` bytes (static-ct-api logs add a `leaf_index`).
    /// - Returns: The SCT.
    /// - Throws: ``LabError`` if signing fails.
    public func sign(_ entry: LabCTEntry, timestamp: UInt64, extensions: [UInt8] = []) throws -> LabSCT {
        let scheme: LabSignatureScheme
        let signatureAlgorithm: UInt8
        switch key.algorithm {
        case .rsa:
            scheme = .rsaPKCS1(.sha256)
            signatureAlgorithm = 1
        case .ed25519:
            scheme = .ed25519
            signatureAlgorithm = 7
        case .ed448:
            scheme = .ed448
            signatureAlgorithm = 8
        case .p256, .p384, .p521:
            scheme = .ecdsa(.sha256)
            signatureAlgorithm = 3
        }
        var sct = LabSCT(logID: logID, timestamp: timestamp, extensions: extensions, signatureAlgorithm: signatureAlgorithm, signature: [])
        sct.signature = try scheme.sign(entry.signedData(version: sct.version, timestamp: timestamp, extensions: extensions), with: key)
        return sct
    }

    /// A static-ct-api `leaf_index` extension (c2sp.org/static-ct-api, "SCT extension"):
    /// `extension_type` leaf_index(0), a 5-byte big-endian index as its data.
    ///
    /// - Parameter index: The entry's index in the log.
    /// - Returns: The `CtExtensions` bytes.
    public static func leafIndexExtension(_ index: UInt64) -> [UInt8] {
        let data = (0..<5).reversed().map { UInt8(truncatingIfNeeded: index >> (UInt64($0) * 8)) }
        return [0] + LabTLS.vector16(data)
    }

    /// `<name> (<operator>, <state>)`.
    public var description: String { "\(name) (\(operatorName), \(state.rawValue))" }
}

/// What a log signs (RFC 6962 §3.2 `signed_entry`): a certificate (`x509_entry`) or a
/// precertificate's TBSCertificate with its issuer key hash (`precert_entry`).
public struct LabCTEntry: Sendable, Hashable {
    /// Whether this is a precert_entry.
    public let isPrecertificate: Bool
    /// SHA-256 of the final issuer's SubjectPublicKeyInfo (precert entries only).
    public let issuerKeyHash: [UInt8]?
    /// The certificate DER or the TBSCertificate DER.
    public let certificateBytes: [UInt8]

    /// The x509_entry of a certificate (what TLS- and OCSP-delivered SCTs cover).
    ///
    /// - Parameter certificate: The certificate.
    /// - Returns: The entry.
    public static func certificate(_ certificate: LabCertificate) -> LabCTEntry {
        LabCTEntry(isPrecertificate: false, issuerKeyHash: nil, certificateBytes: certificate.der)
    }

    /// The precert_entry a log builds from a submitted precertificate (RFC 6962 §3.1–3.2): the
    /// TBSCertificate without the poison extension and the SHA-256 of the issuing CA's key. When
    /// a Precertificate Signing Certificate signed it, the log also puts back the CA: the
    /// TBSCertificate's issuer becomes the signing certificate's issuer and its
    /// authorityKeyIdentifier the signing certificate's (as RFC 6962 §3.2 and the
    /// certificate-transparency-go log do), so the entry matches the final certificate.
    ///
    /// - Parameters:
    ///   - precertificate: The precertificate (with the poison extension).
    ///   - issuer: The CA that issues the final certificate.
    ///   - signer: The Precertificate Signing Certificate that signed `precertificate`, if any.
    /// - Returns: The entry.
    /// - Throws: ``LabError`` if the precertificate's structure cannot be read.
    public static func precertificate(
        _ precertificate: LabCertificate, issuer: LabCertificate, signedBy signer: LabCertificate? = nil
    ) throws -> LabCTEntry {
        func malformed(_ why: String) -> LabError { LabError.invalid("LabCTEntry.precertificate", why) }
        let tbs = try LabDER.parse(precertificate.tbsDER)
        var fields = try tbs.children()
        let issuerIndex = fields.first?.tag == 0xA0 ? 3 : 2
        guard fields.count > issuerIndex + 4, let wrapperIndex = fields.firstIndex(where: { $0.tag == 0xA3 }) else {
            throw malformed("the precertificate has no extensions")
        }
        let poison = try LabDER.oid("1.3.6.1.4.1.11129.2.4.3")
        let akiOID = try LabDER.oid("2.5.29.35")
        let replacementAKI = try signer.map { signer -> [UInt8] in
            guard let aki = try Self.extensions(of: signer.tbsDER).first(where: { try $0.children().first?.encoded == akiOID }) else {
                throw malformed("the precertificate signing certificate has no authorityKeyIdentifier")
            }
            return aki.encoded
        }
        var kept: [[UInt8]] = []
        var sawPoison = false
        for ext in try Self.extensions(of: precertificate.tbsDER) {
            let oid = try ext.children().first?.encoded
            if oid == poison {
                sawPoison = true
            } else if oid == akiOID, let replacementAKI {
                kept.append(replacementAKI)
            } else {
                kept.append(ext.encoded)
            }
        }
        guard sawPoison else { throw malformed("the precertificate lacks the poison extension 1.3.6.1.4.1.11129.2.4.3") }
        if let signer { fields[issuerIndex] = try LabDER.parse(signer.issuerNameDER) }
        var encoded = fields.map(\.encoded)
        encoded[wrapperIndex] = LabDER.explicit(3, LabDER.sequence(kept))
        return LabCTEntry(
            isPrecertificate: true,
            issuerKeyHash: try LabDigest.sha256.hash(issuer.subjectPublicKeyInfoDER),
            certificateBytes: LabDER.sequence(encoded))
    }

    /// The Extension elements of a TBSCertificate.
    private static func extensions(of tbsDER: [UInt8]) throws -> [LabDERElement] {
        guard let wrapper = try LabDER.parse(tbsDER).children().first(where: { $0.tag == 0xA3 }), let list = try wrapper.children().first else {
            return []
        }
        return try list.children()
    }

    /// The `digitally-signed` content (RFC 6962 §3.2).
    func signedData(version: UInt8, timestamp: UInt64, extensions: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [version, 0]  // signature_type certificate_timestamp(0)
        out += LabTLS.integer(timestamp, width: 8)
        out += LabTLS.integer(isPrecertificate ? 1 : 0, width: 2)
        if let issuerKeyHash { out += issuerKeyHash }
        out += LabTLS.integer(UInt64(certificateBytes.count), width: 3) + certificateBytes
        return out + LabTLS.vector16(extensions)
    }
}

/// A Signed Certificate Timestamp as a log produced it, every field settable so tests can
/// break exactly one thing (a flipped signature byte, another version).
public struct LabSCT: Sendable, Hashable {
    /// `sct_version` (0 = v1).
    public var version: UInt8 = 0
    /// The 32-byte log ID.
    public var logID: [UInt8]
    /// Milliseconds since 1970.
    public var timestamp: UInt64
    /// `CtExtensions`.
    public var extensions: [UInt8]
    /// The TLS HashAlgorithm (4 = sha256).
    public var hashAlgorithm: UInt8 = 4
    /// The TLS SignatureAlgorithm (3 = ecdsa, 1 = rsa).
    public var signatureAlgorithm: UInt8
    /// The signature.
    public var signature: [UInt8]

    /// Creates an SCT from its fields.
    ///
    /// - Parameters:
    ///   - logID: The log ID.
    ///   - timestamp: Milliseconds since 1970.
    ///   - extensions: `CtExtensions`.
    ///   - signatureAlgorithm: The TLS SignatureAlgorithm value.
    ///   - signature: The signature.
    public init(logID: [UInt8], timestamp: UInt64, extensions: [UInt8], signatureAlgorithm: UInt8, signature: [UInt8]) {
        self.logID = logID
        self.timestamp = timestamp
        self.extensions = extensions
        self.signatureAlgorithm = signatureAlgorithm
        self.signature = signature
    }

    /// The TLS encoding (RFC 6962 §3.2), as a `SerializedSCT`'s content.
    public var serialized: [UInt8] {
        [version] + logID + LabTLS.integer(timestamp, width: 8) + LabTLS.vector16(extensions) + [hashAlgorithm, signatureAlgorithm]
            + LabTLS.vector16(signature)
    }

    /// The same SCT with one signature byte flipped (the last, so DER framing survives).
    public var withCorruptedSignature: LabSCT {
        var copy = self
        if !copy.signature.isEmpty { copy.signature[copy.signature.count - 1] ^= 0x01 }
        return copy
    }

    /// A `SignedCertificateTimestampList` (RFC 6962 §3.3) of `scts`, as the TLS extension carries
    /// it and as the X.509 and OCSP extensions wrap it.
    ///
    /// - Parameter scts: The SCTs, in order.
    /// - Returns: The TLS-encoded list.
    public static func list(_ scts: [LabSCT]) -> [UInt8] {
        LabTLS.vector16(scts.flatMap { LabTLS.vector16($0.serialized) })
    }
}

/// TLS presentation-language encoding (RFC 5246 §4) for the Lab's CT structures.
enum LabTLS {
    static func integer(_ value: UInt64, width: Int) -> [UInt8] {
        (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (UInt64($0) * 8)) }
    }

    static func vector16(_ bytes: [UInt8]) -> [UInt8] { integer(UInt64(bytes.count), width: 2) + bytes }
}
