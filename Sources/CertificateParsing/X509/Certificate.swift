/// An X.509 v1–v3 certificate (RFC 5280 §4.1), parsed strictly from DER, with the original
/// bytes kept beside the model: the whole certificate (equality, hashing, fingerprints), the
/// TBSCertificate (what the signature covers), the names and the SubjectPublicKeyInfo (pins).
public struct Certificate: Hashable, Sendable, CustomStringConvertible {
    /// The certificate version (RFC 5280 §4.1.2.1).
    public enum Version: Int, Hashable, Sendable {
        /// Version 1: no extensions, no unique identifiers (some old roots still are).
        case v1 = 0
        /// Version 2: unique identifiers, no extensions.
        case v2 = 1
        /// Version 3: extensions (RFC 5280 §4.1.2.9); the version the CA/B Forum Baseline
        /// Requirements require.
        case v3 = 2
    }

    /// One reference-counted box holding the parsed fields, so copying a certificate (into
    /// paths, stores, results) costs one retain instead of one per field.
    final class Storage: Sendable {
        let derBytes: [UInt8]
        let tbsBytes: ArraySlice<UInt8>
        let version: Version
        let serialNumber: SerialNumber
        let signatureAlgorithm: SignatureAlgorithm
        let signatureAlgorithmIdentifier: AlgorithmIdentifier
        let signature: ArraySlice<UInt8>
        let issuer: DistinguishedName
        let subject: DistinguishedName
        let notBefore: ASN1Time
        let notAfter: ASN1Time
        let subjectPublicKeyInfo: SubjectPublicKeyInfo
        let issuerUniqueID: ASN1BitString?
        let subjectUniqueID: ASN1BitString?
        let extensions: Extensions
        /// Issuer and subject match (RFC 5280 §7.1), decided once at parse time.
        let isSelfIssued: Bool
        /// What a tolerant parse let through (``Certificate/toleratedDeviations``).
        let toleratedDeviations: [String]

        init(
            derBytes: [UInt8],
            tbsBytes: ArraySlice<UInt8>,
            version: Version,
            serialNumber: SerialNumber,
            signatureAlgorithm: SignatureAlgorithm,
            signatureAlgorithmIdentifier: AlgorithmIdentifier,
            signature: ArraySlice<UInt8>,
            issuer: DistinguishedName,
            subject: DistinguishedName,
            notBefore: ASN1Time,
            notAfter: ASN1Time,
            subjectPublicKeyInfo: SubjectPublicKeyInfo,
            issuerUniqueID: ASN1BitString?,
            subjectUniqueID: ASN1BitString?,
            extensions: Extensions,
            toleratedDeviations: [String]
        ) {
            self.derBytes = derBytes
            self.tbsBytes = tbsBytes
            self.version = version
            self.serialNumber = serialNumber
            self.signatureAlgorithm = signatureAlgorithm
            self.signatureAlgorithmIdentifier = signatureAlgorithmIdentifier
            self.signature = signature
            self.issuer = issuer
            self.subject = subject
            self.notBefore = notBefore
            self.notAfter = notAfter
            self.subjectPublicKeyInfo = subjectPublicKeyInfo
            self.issuerUniqueID = issuerUniqueID
            self.subjectUniqueID = subjectUniqueID
            self.extensions = extensions
            self.isSelfIssued = issuer.matches(subject)
            self.toleratedDeviations = toleratedDeviations
        }
    }

    let storage: Storage

    /// The complete DER encoding, as given.
    public var derBytes: [UInt8] { storage.derBytes }
    /// The TBSCertificate element: the bytes the issuer signed.
    public var tbsBytes: ArraySlice<UInt8> { storage.tbsBytes }
    /// The version.
    public var version: Version { storage.version }
    /// The serial number.
    public var serialNumber: SerialNumber { storage.serialNumber }
    /// The outer signatureAlgorithm, decoded.
    public var signatureAlgorithm: SignatureAlgorithm { storage.signatureAlgorithm }
    /// The outer signatureAlgorithm as encoded (byte-identical to the TBS one, checked at
    /// parse, unless a tolerant parse accepted otherwise: ``toleratedDeviations``).
    public var signatureAlgorithmIdentifier: AlgorithmIdentifier { storage.signatureAlgorithmIdentifier }
    /// The signature BIT STRING content (whole bytes; a signature with unused bits is malformed).
    public var signature: ArraySlice<UInt8> { storage.signature }
    /// The issuer name.
    public var issuer: DistinguishedName { storage.issuer }
    /// The subject name.
    public var subject: DistinguishedName { storage.subject }
    /// Validity period start (inclusive, RFC 5280 §4.1.2.5).
    public var notBefore: ASN1Time { storage.notBefore }
    /// Validity period end (inclusive).
    public var notAfter: ASN1Time { storage.notAfter }
    /// The subject's public key.
    public var subjectPublicKeyInfo: SubjectPublicKeyInfo { storage.subjectPublicKeyInfo }
    /// issuerUniqueID (v2/v3 only; RFC 5280 says CAs must not generate it).
    public var issuerUniqueID: ASN1BitString? { storage.issuerUniqueID }
    /// subjectUniqueID.
    public var subjectUniqueID: ASN1BitString? { storage.subjectUniqueID }
    /// The extensions (v3 only).
    public var extensions: Extensions { storage.extensions }

    /// Departures from strict DER that a parse may be asked to accept, for input the user
    /// trusts locally (a pinned-certificate file shipped with the app), never for certificates
    /// a server sends.
    public struct ParsingTolerance: OptionSet, Hashable, Sendable {
        /// The options' bits.
        public let rawValue: Int

        /// Creates tolerances from their bits.
        /// - Parameter rawValue: The bits.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// RFC 5280 §4.1.1.2 requires the `signature` field of the TBSCertificate to be the
        /// same AlgorithmIdentifier as the outer `signatureAlgorithm`, and RFC 4055 §5 gives
        /// RSA PKCS #1 v1.5 identifiers NULL parameters. Some tools wrote one of the two with
        /// the NULL and the other without parameters: AFNetworking's three self-signed test
        /// certificates and all twelve of Alamofire's, which apps copied as their pinned
        /// `.cer` files. With this tolerance such a certificate parses when the two name the
        /// same RSA PKCS #1 v1.5 algorithm and differ only in NULL versus absent parameters
        /// (they then mean the same algorithm); any other difference is still an error, and
        /// the certificate says what was tolerated in ``Certificate/toleratedDeviations``.
        public static let signatureAlgorithmParameterEncoding = ParsingTolerance(rawValue: 1)
    }

    /// Parses a DER certificate.
    /// - Throws: ``DERError`` naming the field and byte offset of the first problem.
    public init(derEncoded bytes: [UInt8]) throws(DERError) {
        storage = try DERInput.with(bytes) { input throws(DERError) in try Certificate(input, tolerating: []).storage }
    }

    /// Parses a DER certificate, accepting the departures in `tolerating`; only for a file
    /// the user trusts locally (see ``ParsingTolerance``).
    /// - Parameters:
    ///   - bytes: The DER.
    ///   - tolerating: What to accept.
    /// - Throws: ``DERError`` naming the field and byte offset of the first problem.
    public init(derEncoded bytes: [UInt8], tolerating: ParsingTolerance) throws(DERError) {
        storage = try DERInput.with(bytes) { input throws(DERError) in try Certificate(input, tolerating: tolerating).storage }
    }

    /// What a tolerant parse (``init(derEncoded:tolerating:)``) accepted in this certificate,
    /// one line each; empty for every certificate parsed strictly.
    public var toleratedDeviations: [String] { storage.toleratedDeviations }

    private init(_ input: DERInput, tolerating: ParsingTolerance) throws(DERError) {
        let derBytes = input.base
        let root = try input.single(0..<input.buffer.count)
        let (tbs, outerAlgorithm, signatureBits) = try input.sequence(root, .sequence, "Certificate") { nodes throws(DERError) in
            let tbs = try nodes.next(.sequence, "tbsCertificate")
            let algorithm = try AlgorithmIdentifier(nodes.next(.sequence, "signatureAlgorithm"), input, "signatureAlgorithm")
            let signature = try input.bitString(nodes.next(.bitString, "signatureValue"), "signatureValue")
            return (tbs, algorithm, signature)
        }
        guard signatureBits.unusedBits == 0 else {
            throw DERError(.invalidValue, at: tbs.end, "signatureValue has unused bits")
        }
        let tbsBytes = input.slice(tbs.range)
        let signatureAlgorithm = SignatureAlgorithm(outerAlgorithm)

        var fields = input.children(tbs)
        // version [0] EXPLICIT Version DEFAULT v1
        let version: Version
        if let explicit = try fields.optional(.context(0)) {
            let raw = try input.sequence(explicit, .context(0), "version") { n throws(DERError) in
                try input.integer(n.next(.integer, "version"), "version", in: 0...Int(Int32.max))
            }
            guard let parsed = Version(rawValue: raw) else {
                throw DERError(.invalidValue, at: explicit.start, "unknown certificate version \(raw + 1)")
            }
            // X.690 §11.5: DER never encodes a DEFAULT value, so an explicit v1 is not DER.
            guard parsed != .v1 else {
                throw DERError(.invalidValue, at: explicit.start, "version v1 is encoded explicitly, which DER forbids")
            }
            version = parsed
        } else {
            version = .v1
        }
        let serialNumber = SerialNumber(input.slice(try input.integerRange(fields.next(.integer, "serialNumber"), "serialNumber")))
        let innerAlgorithm = try AlgorithmIdentifier(fields.next(.sequence, "signature"), input, "tbsCertificate signature")
        // RFC 5280 §4.1.1.2: signatureAlgorithm "MUST contain the same algorithm identifier as
        // the signature field in the sequence tbsCertificate".
        var toleratedDeviations: [String] = []
        if innerAlgorithm != outerAlgorithm {
            guard tolerating.contains(.signatureAlgorithmParameterEncoding), Self.differOnlyInNullParameters(innerAlgorithm, outerAlgorithm) else {
                throw DERError(.invalidValue, at: innerAlgorithm.derBytes.startIndex, "tbsCertificate signature algorithm differs from signatureAlgorithm")
            }
            toleratedDeviations.append(
                "the tbsCertificate signature and signatureAlgorithm fields differ in encoding (\(innerAlgorithm.hasNullParameters ? "NULL" : "absent") "
                    + "versus \(outerAlgorithm.hasNullParameters ? "NULL" : "absent") parameters of \(SignatureAlgorithm(outerAlgorithm)); "
                    + "RFC 5280 §4.1.1.2 wants them identical): tolerated for a local pinned-certificate file")
        }
        let issuer = try DistinguishedName(fields.next(.sequence, "issuer"), input, "issuer")
        let (notBefore, notAfter) = try input.sequence(fields.next(.sequence, "validity"), .sequence, "validity") { v throws(DERError) in
            guard let before = try v.next() else { throw DERError(.missingField, at: v.parentOffset, "validity has no notBefore") }
            guard let after = try v.next() else { throw DERError(.missingField, at: v.parentOffset, "validity has no notAfter") }
            // RFC 5280 §4.1.2.5's rule (UTCTime through 2049, GeneralizedTime from 2050) is a
            // profile rule, not DER: it is checked by the validation policy, so that inspecting
            // an old certificate that breaks it still works. `ASN1Time.encoding` keeps the form.
            return (try input.time(before, "notBefore"), try input.time(after, "notAfter"))
        }
        let subject = try DistinguishedName(fields.next(.sequence, "subject"), input, "subject")
        let subjectPublicKeyInfo = try SubjectPublicKeyInfo(fields.next(.sequence, "subjectPublicKeyInfo"), input)
        var issuerUID: ASN1BitString?
        var subjectUID: ASN1BitString?
        var extensions = Extensions.none
        if let node = try fields.optional(.context(1)) {
            guard version != .v1 else { throw DERError(.invalidValue, at: node.start, "issuerUniqueID in a v1 certificate") }
            issuerUID = try input.bitString(node, "issuerUniqueID", identifier: .context(1))
        }
        if let node = try fields.optional(.context(2)) {
            guard version != .v1 else { throw DERError(.invalidValue, at: node.start, "subjectUniqueID in a v1 certificate") }
            subjectUID = try input.bitString(node, "subjectUniqueID", identifier: .context(2))
        }
        if let node = try fields.optional(.context(3)) {
            guard version == .v3 else { throw DERError(.invalidValue, at: node.start, "extensions in a \(version) certificate") }
            extensions = try Extensions(node, input)
        }
        try fields.finish("tbsCertificate")
        storage = Storage(
            derBytes: derBytes,
            tbsBytes: tbsBytes,
            version: version,
            serialNumber: serialNumber,
            signatureAlgorithm: signatureAlgorithm,
            signatureAlgorithmIdentifier: outerAlgorithm,
            signature: signatureBits.bytes,
            issuer: issuer,
            subject: subject,
            notBefore: notBefore,
            notAfter: notAfter,
            subjectPublicKeyInfo: subjectPublicKeyInfo,
            issuerUniqueID: issuerUID,
            subjectUniqueID: subjectUID,
            extensions: extensions,
            toleratedDeviations: toleratedDeviations)
    }

    /// Whether two AlgorithmIdentifiers name the same RSA PKCS #1 v1.5 algorithm and differ only
    /// in one having NULL parameters and the other none (RFC 4055 §5 vs. the encoders that
    /// drop the NULL).
    static func differOnlyInNullParameters(_ a: AlgorithmIdentifier, _ b: AlgorithmIdentifier) -> Bool {
        guard a.algorithm == b.algorithm, case .rsaPKCS1 = SignatureAlgorithm(a), case .rsaPKCS1 = SignatureAlgorithm(b) else { return false }
        return (a.parameters == nil && b.hasNullParameters) || (a.hasNullParameters && b.parameters == nil)
    }

    /// Parses every `CERTIFICATE` block of a PEM text, or a single DER certificate.
    /// - Throws: ``CertificateLoadingError`` naming the block that failed.
    public static func load(_ bytes: [UInt8]) throws(CertificateLoadingError) -> [Certificate] {
        try load(bytes, tolerating: [])
    }

    /// Parses every `CERTIFICATE` block of a PEM text, or a single DER certificate, accepting
    /// the departures in `tolerating`; only for files the user trusts locally (see
    /// ``ParsingTolerance``).
    /// - Parameters:
    ///   - bytes: PEM or DER.
    ///   - tolerating: Departures from strict DER to accept.
    /// - Throws: ``CertificateLoadingError`` naming the block that failed.
    public static func load(_ bytes: [UInt8], tolerating: ParsingTolerance) throws(CertificateLoadingError) -> [Certificate] {
        guard PEMDocument.looksLikePEM(bytes) else {
            do { return [try Certificate(derEncoded: bytes, tolerating: tolerating)] } catch { throw .der(error, block: nil) }
        }
        let documents: [PEMDocument]
        do { documents = try PEMDocument.parseAll(String(decoding: bytes, as: UTF8.self)) } catch { throw .pem(error) }
        // OpenSSL's "TRUSTED CERTIFICATE" blocks append trust settings that may restrict or
        // reject the certificate; ignoring them could trust more than the file says, so they
        // are refused with an explanation rather than read as plain certificates.
        if let trusted = documents.first(where: { $0.label == "TRUSTED CERTIFICATE" }) {
            throw .pem(
                PEMError(
                    .unexpectedLabel, line: trusted.line,
                    "TRUSTED CERTIFICATE blocks carry OpenSSL trust settings, which are not supported (convert with 'openssl x509 -in FILE -out PLAIN.pem')"))
        }
        let certificates = documents.filter { $0.label == "CERTIFICATE" || $0.label == "X509 CERTIFICATE" }
        guard !certificates.isEmpty else {
            throw .pem(PEMError(.noBlock, line: documents.first?.line ?? 1, "no CERTIFICATE block (found \(documents.map(\.label)))"))
        }
        var result: [Certificate] = []
        result.reserveCapacity(certificates.count)
        for (index, document) in certificates.enumerated() {
            do { result.append(try Certificate(derEncoded: document.derBytes, tolerating: tolerating)) } catch {
                throw .der(error, block: (index: index + 1, line: document.line))
            }
        }
        return result
    }

    /// Parses a PEM text holding exactly one certificate.
    public init(pemEncoded text: String) throws(CertificateLoadingError) {
        let all = try Certificate.load(Array(text.utf8))
        guard all.count == 1 else {
            throw .pem(PEMError(.noBlock, line: 1, "expected one certificate, found \(all.count)"))
        }
        self = all[0]
    }

    /// The certificate as a PEM block.
    public var pemString: String { PEMDocument(label: "CERTIFICATE", derBytes: derBytes).pemString }

    /// SHA-256 over the DER: the fingerprint browsers and `openssl x509 -fingerprint -sha256` show.
    public var sha256Fingerprint: [UInt8] { SHA256.hash(derBytes) }
    /// SHA-1 over the DER (legacy displays only).
    public var sha1Fingerprint: [UInt8] { SHA1.hash(derBytes) }
    /// SHA-256 over the SubjectPublicKeyInfo DER (RFC 7469 §2.4).
    public var spkiSHA256: [UInt8] { SHA256.hash(subjectPublicKeyInfo.derBytes) }
    /// The SPKI pin in standard base64, as HPKP, TrustKit and OkHttp write it after `sha256/`.
    public var spkiSHA256Base64: String { Base64.encode(spkiSHA256) }

    /// The subjectAltName entries, or an empty list.
    public var subjectAlternativeNames: [GeneralName] { extensions.subjectAlternativeNames ?? [] }

    /// Whether issuer and subject are the same name (RFC 5280 §6.1 "self-issued"), compared as
    /// RFC 5280 §7.1 compares names.
    public var isSelfIssued: Bool { storage.isSelfIssued }

    /// Whether basicConstraints says this is a CA.
    public var isCertificateAuthority: Bool { extensions.basicConstraints?.isCertificateAuthority ?? false }

    /// `Certificate(subject: …, issuer: …, serial: …)`, names in RFC 4514 form and the serial in
    /// hex, for logs and test failures.
    public var description: String { "Certificate(subject: \(subject.rfc4514), issuer: \(issuer.rfc4514), serial: \(serialNumber))" }

    /// Two certificates are equal when their DER encodings are byte-identical.
    public static func == (lhs: Certificate, rhs: Certificate) -> Bool { lhs.derBytes == rhs.derBytes }

    /// Hashes the encoding's length and the last 16 bytes of the signature: cheap, and
    /// consistent with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(derBytes.count)
        signature.suffix(16).withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// A certificate serial number (RFC 5280 §4.1.2.2): the INTEGER's content bytes, with the
/// conditions conforming CAs must avoid flagged rather than rejected, so a policy decides.
public struct SerialNumber: Hashable, Sendable, CustomStringConvertible {
    /// Two's-complement content bytes as encoded (minimal).
    public let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    /// Whether the serial is negative (forbidden by RFC 5280 §4.1.2.2, seen in old certificates).
    public var isNegative: Bool { bytes.first! & 0x80 != 0 }
    /// Whether the serial is zero (forbidden for conforming CAs).
    public var isZero: Bool { bytes.count == 1 && bytes.first == 0 }
    /// Whether the encoding exceeds the 20 octets RFC 5280 §4.1.2.2 allows.
    public var isOverlong: Bool { bytes.count > 20 }

    /// Lowercase hex of the magnitude, no separators, as `openssl x509 -serial` prints it
    /// (leading zero octet dropped; negative values with a leading `-`).
    public var hex: String {
        if isNegative {
            // Two's-complement negate to print the magnitude.
            var magnitude = bytes.map { ~$0 }
            var carry = true
            for i in magnitude.indices.reversed() where carry {
                let (v, overflow) = magnitude[i].addingReportingOverflow(1)
                magnitude[i] = v
                carry = overflow
            }
            let trimmed = magnitude.drop(while: { $0 == 0 })
            return "-" + Hex.encode(trimmed.isEmpty ? [0] : Array(trimmed))
        }
        let trimmed = bytes.count > 1 && bytes.first == 0 ? bytes.dropFirst() : bytes
        return Hex.encode(trimmed)
    }

    /// The serial in hex, as ``hex``.
    public var description: String { hex }
}

/// A failure to load certificates from a file's bytes.
public enum CertificateLoadingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The PEM structure is broken.
    case pem(PEMError)
    /// A certificate's DER is malformed; `block` is its 1-based index and line in a PEM file.
    case der(DERError, block: (index: Int, line: Int)?)

    /// Errors are equal when their PEM or DER errors are (by code), whatever block they were in.
    public static func == (lhs: CertificateLoadingError, rhs: CertificateLoadingError) -> Bool {
        switch (lhs, rhs) {
        case (.pem(let a), .pem(let b)): return a == b
        case (.der(let a, _), .der(let b, _)): return a == b
        default: return false
        }
    }

    /// Hashes the PEM or DER error that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .pem(let e): hasher.combine(e)
        case .der(let e, _): hasher.combine(e)
        }
    }

    /// The PEM or DER error's text, prefixed with the certificate's index and line when it came
    /// from a PEM file.
    public var description: String {
        switch self {
        case .pem(let error): return error.description
        case .der(let error, let block?): return "certificate \(block.index) (PEM line \(block.line)): \(error)"
        case .der(let error, nil): return error.description
        }
    }
}
