/// Everything that goes into one generated certificate, field by field.
///
/// Values are used as given, without validation, so tests can build certificates that are
/// wrong in exactly one controlled way (negative serial, notAfter before notBefore, v1 with
/// extensions…).
public struct LabCertificateSpec: Sendable, Hashable {
    /// The X.509 version field value: 2 means v3 (the default), 0 means v1 (the `[0]` field
    /// is then omitted, as DER requires for the default value).
    public var version: Int
    /// The serialNumber INTEGER's content octets (big-endian two's complement), used verbatim
    /// so tests can make negative, zero, empty or over-long (21-byte) serials.
    public var serial: [UInt8]
    /// The subject name.
    public var subject: LabName
    /// When set, used as the issuer name instead of the issuer certificate's subject (or, for
    /// a self-signed certificate, instead of ``subject``), for name-chaining failure tests.
    public var issuerNameOverride: LabName?
    /// Start of validity, Unix seconds (encoded per RFC 5280 §4.1.2.5).
    public var notBefore: Int64
    /// End of validity, Unix seconds (encoded per RFC 5280 §4.1.2.5).
    public var notAfter: Int64
    /// Extensions in encoding order; an empty list omits the `[3]` field entirely.
    public var extensions: [LabExtension]
    /// issuerUniqueID `[1]` BIT STRING bytes (no unused bits), if any.
    public var issuerUniqueID: [UInt8]?
    /// subjectUniqueID `[2]` BIT STRING bytes (no unused bits), if any.
    public var subjectUniqueID: [UInt8]?
    /// The signature scheme; `nil` uses ``LabSignatureScheme/default(for:)`` of the signing key.
    public var signatureScheme: LabSignatureScheme?
    /// The TBSCertificate's `signature` AlgorithmIdentifier, verbatim; `nil` writes the same
    /// bytes as the outer `signatureAlgorithm` (as RFC 5280 §4.1.1.2 requires). Other bytes make
    /// the two disagree, as in certificates whose tool dropped the NULL parameters in one of
    /// them (``LabSignatureScheme/algorithmIdentifierDERWithoutParameters``).
    public var tbsSignatureAlgorithmDER: [UInt8]?

    /// Creates a spec. Defaults make a v3 certificate valid from 30 days before to 60 days
    /// after ``LabClock/reference`` with a random positive 16-byte serial.
    ///
    /// - Parameters:
    ///   - subject: The subject name.
    ///   - serial: Serial INTEGER content octets, used verbatim.
    ///   - notBefore: Start of validity (Unix seconds).
    ///   - notAfter: End of validity (Unix seconds).
    ///   - extensions: Extensions in order.
    ///   - signatureScheme: Signature scheme, or `nil` for the signing key's default.
    ///   - version: Version field value (2 = v3).
    public init(
        subject: LabName,
        serial: [UInt8] = LabCertificateSpec.randomSerial(),
        notBefore: Int64 = LabClock.reference - 30 * LabClock.day,
        notAfter: Int64 = LabClock.reference + 60 * LabClock.day,
        extensions: [LabExtension] = [],
        signatureScheme: LabSignatureScheme? = nil,
        version: Int = 2
    ) {
        self.version = version
        self.serial = serial
        self.subject = subject
        self.issuerNameOverride = nil
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.extensions = extensions
        self.issuerUniqueID = nil
        self.subjectUniqueID = nil
        self.signatureScheme = signatureScheme
        self.tbsSignatureAlgorithmDER = nil
    }

    /// A random positive serial of `length` bytes whose first byte is 0x01…0x7F, so it is
    /// minimal DER and never negative (what a CA/B-Forum-compliant CA emits).
    ///
    /// - Parameter length: Number of content octets (1…20 is RFC 5280-conformant).
    /// - Returns: Serial content octets.
    public static func randomSerial(length: Int = 16) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<max(1, length)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[0] = UInt8.random(in: 1...0x7F, using: &generator)
        return bytes
    }
}

/// A certificate and the private key that signs with it, ready to issue others.
public struct LabIssuer: Sendable, Hashable {
    /// The issuing certificate (its subject becomes the issuer name of what it signs).
    public var certificate: LabCertificate
    /// The issuing private key.
    public var key: LabKey

    /// Pairs a certificate with its key (the pairing is not checked, so mismatches can be tested).
    ///
    /// - Parameters:
    ///   - certificate: The CA certificate.
    ///   - key: Its private key.
    public init(certificate: LabCertificate, key: LabKey) {
        self.certificate = certificate
        self.key = key
    }
}

/// A generated certificate: its DER bytes plus what it was made from.
///
/// Equality and hashing consider only ``der``: two values are the same certificate exactly
/// when their encodings are identical.
public struct LabCertificate: Sendable, Hashable, CustomStringConvertible {
    /// The complete DER `Certificate`.
    public let der: [UInt8]
    /// The spec the certificate was issued from, or `nil` when wrapped from raw DER.
    public let spec: LabCertificateSpec?
    /// The certificate's private key, when the Lab knows it.
    public let subjectKey: LabKey?
    /// The `TBSCertificate` DER, exactly as signed (handy for re-signing altered copies).
    public let tbsDER: [UInt8]
    /// The serialNumber INTEGER content octets.
    public let serialNumber: [UInt8]
    /// The issuer Name DER, verbatim.
    public let issuerNameDER: [UInt8]
    /// The subject Name DER, verbatim.
    public let subjectNameDER: [UInt8]
    /// The SubjectPublicKeyInfo DER, verbatim.
    public let subjectPublicKeyInfoDER: [UInt8]
    /// The subjectKeyIdentifier extension's key ID, if the certificate has one.
    public let subjectKeyIdentifier: [UInt8]?

    /// Wraps an existing DER certificate (for example one from ``sign(tbsDER:algorithmIdentifierDER:with:scheme:)``),
    /// reading the few fields the Lab needs to issue from it.
    ///
    /// - Parameters:
    ///   - der: A DER Certificate.
    ///   - subjectKey: Its private key, if known.
    /// - Throws: ``LabError`` if the TBSCertificate fields cannot be located.
    public init(der: [UInt8], subjectKey: LabKey? = nil) throws {
        try self.init(der: der, spec: nil, subjectKey: subjectKey)
    }

    /// The certificate as PEM (`CERTIFICATE`, 64-column base64, trailing newline).
    public var pem: String { LabPEM.encode(der, label: "CERTIFICATE") }

    /// The certificate as an issuer, when its key is known.
    ///
    /// - Returns: A ``LabIssuer`` pairing this certificate with ``subjectKey``.
    /// - Throws: ``LabError`` if ``subjectKey`` is `nil`.
    public func asIssuer() throws -> LabIssuer {
        guard let subjectKey else {
            throw LabError.invalid("LabCertificate.asIssuer", "certificate has no known private key")
        }
        return LabIssuer(certificate: self, key: subjectKey)
    }

    /// The subject line and DER size, for test failure messages.
    public var description: String {
        "LabCertificate(\(spec.map { $0.subject.description } ?? "<raw>"), \(der.count) bytes)"
    }

    /// Equal when the DER encodings are identical.
    public static func == (lhs: LabCertificate, rhs: LabCertificate) -> Bool { lhs.der == rhs.der }

    /// Hashes the DER encoding.
    public func hash(into hasher: inout Hasher) { hasher.combine(der) }

    // MARK: - Issuing

    /// Builds and signs a certificate.
    ///
    /// The whole TBSCertificate is encoded by the Lab (so every field is exactly what `spec`
    /// says) and signed with OpenSSL. The issuer name is the issuer certificate's subject
    /// Name bytes verbatim, so name chaining matches byte for byte.
    ///
    /// - Parameters:
    ///   - spec: The fields.
    ///   - subjectKey: The key whose public half is certified.
    ///   - issuer: The issuing CA, or `nil` for a self-signed certificate.
    /// - Returns: The certificate.
    /// - Throws: ``LabError`` on an encoding, key/scheme mismatch or OpenSSL failure.
    public static func issue(_ spec: LabCertificateSpec, subjectKey: LabKey, issuer: LabIssuer? = nil) throws -> LabCertificate {
        let signingKey = issuer?.key ?? subjectKey
        let scheme = spec.signatureScheme ?? .default(for: signingKey.algorithm)
        let algorithmIdentifier = try scheme.algorithmIdentifierDER
        let subjectName = try spec.subject.derEncoded()
        let issuerName = try spec.issuerNameOverride?.derEncoded() ?? issuer?.certificate.subjectNameDER ?? subjectName

        var subjectKeyID = subjectKey.subjectKeyIdentifier
        for case .subjectKeyIdentifier(.explicit(let bytes), _) in spec.extensions { subjectKeyID = bytes }
        let context = LabExtension.Context(
            subjectKeyIdentifier: subjectKeyID,
            issuerKeyIdentifier: issuer.map { $0.certificate.subjectKeyIdentifier ?? $0.key.subjectKeyIdentifier } ?? subjectKeyID,
            issuerIssuerNameDER: issuer?.certificate.issuerNameDER ?? issuerName,
            issuerSerial: issuer?.certificate.serialNumber ?? spec.serial
        )

        var fields: [[UInt8]] = []
        if spec.version != 0 { fields.append(LabDER.explicit(0, LabDER.integer(spec.version))) }
        fields.append(LabDER.integer(content: spec.serial))
        fields.append(spec.tbsSignatureAlgorithmDER ?? algorithmIdentifier)
        fields.append(issuerName)
        fields.append(LabDER.sequence([try LabDER.time(spec.notBefore), try LabDER.time(spec.notAfter)]))
        fields.append(subjectName)
        fields.append(subjectKey.publicKeyInfoDER)
        if let id = spec.issuerUniqueID { fields.append(LabDER.contextSpecific(1, constructed: false, [0] + id)) }
        if let id = spec.subjectUniqueID { fields.append(LabDER.contextSpecific(2, constructed: false, [0] + id)) }
        if !spec.extensions.isEmpty {
            let extensions = try spec.extensions.map { try $0.derEncoded(context) }
            fields.append(LabDER.explicit(3, LabDER.sequence(extensions)))
        }
        let tbs = LabDER.sequence(fields)
        let der = try sign(tbsDER: tbs, algorithmIdentifierDER: algorithmIdentifier, with: signingKey, scheme: scheme)
        return try LabCertificate(der: der, spec: spec, subjectKey: subjectKey)
    }

    /// Signs arbitrary TBSCertificate bytes and assembles
    /// `Certificate ::= SEQUENCE { tbs, signatureAlgorithm, BIT STRING signature }`.
    ///
    /// The TBS bytes are not parsed or checked, so hand-crafted and malformed ones work.
    ///
    /// - Parameters:
    ///   - tbsDER: The to-be-signed bytes, placed verbatim.
    ///   - algorithmIdentifierDER: The outer signatureAlgorithm bytes; `nil` uses the scheme's.
    ///     Pass different bytes to make the outer and inner algorithms disagree.
    ///   - key: The signing key.
    ///   - scheme: The signature scheme; `nil` uses the key's default.
    /// - Returns: The DER certificate.
    /// - Throws: ``LabError`` if signing fails.
    public static func sign(
        tbsDER: [UInt8],
        algorithmIdentifierDER: [UInt8]? = nil,
        with key: LabKey,
        scheme: LabSignatureScheme? = nil
    ) throws -> [UInt8] {
        let scheme = scheme ?? .default(for: key.algorithm)
        let signature = try scheme.sign(tbsDER, with: key)
        let algorithm = try algorithmIdentifierDER ?? scheme.algorithmIdentifierDER
        return LabDER.sequence([tbsDER, algorithm, LabDER.bitString(signature)])
    }

    // MARK: - Internals

    private init(der: [UInt8], spec: LabCertificateSpec?, subjectKey: LabKey?) throws {
        func malformed(_ why: String) -> LabError { LabError.invalid("LabCertificate(der:)", why) }
        let top = try LabDER.parse(der).children()
        guard top.count == 3, top[0].tag == LabDER.Tag.sequence else {
            throw malformed("not SEQUENCE { tbsCertificate, signatureAlgorithm, signature }")
        }
        let tbs = try top[0].children()
        let first = tbs.first?.tag == 0xA0 ? 1 : 0
        guard tbs.count >= first + 6 else { throw malformed("TBSCertificate has too few fields") }
        self.der = der
        self.spec = spec
        self.subjectKey = subjectKey
        self.tbsDER = top[0].encoded
        self.serialNumber = tbs[first].content
        self.issuerNameDER = tbs[first + 2].encoded
        self.subjectNameDER = tbs[first + 4].encoded
        self.subjectPublicKeyInfoDER = tbs[first + 5].encoded

        var keyID: [UInt8]?
        let skiOID = try LabDER.oid("2.5.29.14")
        if let extensionsField = tbs.dropFirst(first + 6).first(where: { $0.tag == 0xA3 }),
            let list = try extensionsField.children().first
        {
            for ext in try list.children() {
                let parts = try ext.children()
                if parts.first?.encoded == skiOID, let value = parts.last, value.tag == LabDER.Tag.octetString {
                    keyID = try LabDER.parse(value.content).content
                }
            }
        }
        self.subjectKeyIdentifier = keyID
    }
}
