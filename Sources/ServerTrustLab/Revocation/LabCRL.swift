/// A CRL's issuingDistributionPoint (RFC 5280 §5.2.5). Flags that are false are omitted, as
/// DER requires for DEFAULT FALSE.
public struct LabIssuingDistributionPoint: Sendable, Hashable {
    /// `[0] distributionPoint`: the name of the distribution point the CRL covers, if any.
    public var name: LabDistributionPointName?
    /// `[1] onlyContainsUserCerts`: the CRL covers end-entity certificates only.
    public var onlyContainsUserCerts = false
    /// `[2] onlyContainsCACerts`: the CRL covers CA certificates only.
    public var onlyContainsCACerts = false
    /// ReasonFlags bit numbers, if the CRL covers only some reasons.
    public var onlySomeReasons: [Int]?
    /// `[4] indirectCRL`: entries may be for certificates of other issuers (RFC 5280 §5.2.5,
    /// with certificateIssuer entry extensions).
    public var indirectCRL = false
    /// `[5] onlyContainsAttributeCerts`: the CRL covers attribute certificates only (RFC 5280
    /// requires a conforming CRL to leave this false).
    public var onlyContainsAttributeCerts = false

    /// Creates an IDP; set the flags afterwards.
    ///
    /// - Parameter name: The distribution point name, if any.
    public init(name: LabDistributionPointName? = nil) {
        self.name = name
    }

    func derEncoded() throws -> [UInt8] {
        var fields: [[UInt8]] = []
        if let name { fields.append(try name.derEncoded()) }
        let flagTrue = [UInt8(0xFF)]
        if onlyContainsUserCerts { fields.append(LabDER.contextSpecific(1, constructed: false, flagTrue)) }
        if onlyContainsCACerts { fields.append(LabDER.contextSpecific(2, constructed: false, flagTrue)) }
        if let onlySomeReasons { fields.append(try LabDER.implicit(3, LabDER.namedBitString(onlySomeReasons))) }
        if indirectCRL { fields.append(LabDER.contextSpecific(4, constructed: false, flagTrue)) }
        if onlyContainsAttributeCerts { fields.append(LabDER.contextSpecific(5, constructed: false, flagTrue)) }
        return LabDER.sequence(fields)
    }
}

/// One revoked certificate of a generated CRL, with the entry extensions of RFC 5280 §5.3.
public struct LabRevokedEntry: Sendable, Hashable {
    /// The serialNumber INTEGER content octets, verbatim.
    public var serial: [UInt8]
    /// revocationDate (Unix seconds).
    public var revocationDate: Int64
    /// reasonCode (CRLReason value: 1 keyCompromise, 6 certificateHold, 8 removeFromCRL, …).
    public var reason: Int?
    /// certificateIssuer (indirect CRLs).
    public var certificateIssuer: [LabGeneralName]?
    /// Further entry extensions, encoded verbatim (`.raw` for unknown critical ones).
    public var extensions: [LabExtension]

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - serial: Serial content octets (for example a ``LabCertificate/serialNumber``).
    ///   - revocationDate: When it was revoked.
    ///   - reason: CRLReason, or `nil` for no reasonCode.
    ///   - certificateIssuer: The certificate's issuer when the CRL is indirect.
    ///   - extensions: Extra entry extensions.
    public init(
        serial: [UInt8], revocationDate: Int64 = LabClock.reference - 2 * LabClock.day, reason: Int? = nil,
        certificateIssuer: [LabGeneralName]? = nil, extensions: [LabExtension] = []
    ) {
        self.serial = serial
        self.revocationDate = revocationDate
        self.reason = reason
        self.certificateIssuer = certificateIssuer
        self.extensions = extensions
    }

    func derEncoded() throws -> [UInt8] {
        var entryExtensions: [[UInt8]] = []
        if let reason {
            entryExtensions.append(LabDER.sequence([try LabDER.oid("2.5.29.21"), LabDER.octetString(LabDER.enumerated(reason))]))
        }
        if let certificateIssuer {
            let names = LabDER.sequence(try certificateIssuer.map { try $0.derEncoded() })
            entryExtensions.append(LabDER.sequence([try LabDER.oid("2.5.29.29"), LabDER.boolean(true), LabDER.octetString(names)]))
        }
        for ext in extensions { entryExtensions.append(try ext.derEncoded(.none)) }
        var fields = [LabDER.integer(content: serial), try LabDER.time(revocationDate)]
        if !entryExtensions.isEmpty { fields.append(LabDER.sequence(entryExtensions)) }
        return LabDER.sequence(fields)
    }
}

/// Everything that goes into one generated CRL (RFC 5280 §5.1), field by field. Values are used
/// as given, so a test can build a CRL that is wrong in exactly one way.
public struct LabCRLSpec: Sendable, Hashable {
    /// The issuer name; `nil` uses the signing certificate's subject bytes verbatim.
    public var issuer: LabName?
    /// thisUpdate (Unix seconds).
    public var thisUpdate: Int64
    /// nextUpdate (Unix seconds), or `nil` to omit it.
    public var nextUpdate: Int64?
    /// The revoked certificates.
    public var entries: [LabRevokedEntry]
    /// cRLNumber, or `nil` to omit it.
    public var number: Int?
    /// deltaCRLIndicator's BaseCRLNumber: set for a delta CRL.
    public var deltaBase: Int?
    /// issuingDistributionPoint, if the CRL's scope is limited.
    public var issuingDistributionPoint: LabIssuingDistributionPoint?
    /// Whether to include an authorityKeyIdentifier naming the signer's key.
    public var authorityKeyIdentifier: Bool
    /// Further CRL extensions, encoded verbatim after the others (for example a `.raw`
    /// unknown critical extension, or a freshestCRL).
    public var extensions: [LabExtension]
    /// The signature scheme; `nil` uses the signing key's default.
    public var signatureScheme: LabSignatureScheme?

    /// Creates a spec: a complete v2 CRL valid from a day before ``LabClock/reference`` for a
    /// week, number 1, no entries.
    ///
    /// - Parameters:
    ///   - entries: The revoked certificates.
    ///   - thisUpdate: When it was issued.
    ///   - nextUpdate: When the next one is due, or `nil`.
    ///   - number: cRLNumber, or `nil`.
    public init(
        entries: [LabRevokedEntry] = [], thisUpdate: Int64 = LabClock.reference - LabClock.day,
        nextUpdate: Int64? = LabClock.reference + 7 * LabClock.day, number: Int? = 1
    ) {
        self.issuer = nil
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
        self.entries = entries
        self.number = number
        self.deltaBase = nil
        self.issuingDistributionPoint = nil
        self.authorityKeyIdentifier = true
        self.extensions = []
        self.signatureScheme = nil
    }
}

/// CRLs generated and signed with OpenSSL, so revocation tests never depend on the parser they
/// test.
public enum LabCRL {
    /// Encodes and signs a CRL.
    ///
    /// - Parameters:
    ///   - spec: The fields.
    ///   - signer: The certificate whose subject is the issuer name (unless overridden) and whose
    ///     key identifier goes into authorityKeyIdentifier, and the key that signs.
    /// - Returns: The DER CertificateList.
    /// - Throws: ``LabError`` on an encoding or OpenSSL failure.
    public static func issue(_ spec: LabCRLSpec, signer: LabIssuer) throws -> [UInt8] {
        let scheme = spec.signatureScheme ?? .default(for: signer.key.algorithm)
        var fields: [[UInt8]] = [LabDER.integer(1), try scheme.algorithmIdentifierDER]
        fields.append(try spec.issuer?.derEncoded() ?? signer.certificate.subjectNameDER)
        fields.append(try LabDER.time(spec.thisUpdate))
        if let next = spec.nextUpdate { fields.append(try LabDER.time(next)) }
        if !spec.entries.isEmpty { fields.append(LabDER.sequence(try spec.entries.map { try $0.derEncoded() })) }
        var extensions: [[UInt8]] = []
        if spec.authorityKeyIdentifier {
            let keyID = signer.certificate.subjectKeyIdentifier ?? signer.key.subjectKeyIdentifier
            let aki = LabDER.sequence([LabDER.contextSpecific(0, constructed: false, keyID)])
            extensions.append(LabDER.sequence([try LabDER.oid("2.5.29.35"), LabDER.octetString(aki)]))
        }
        if let number = spec.number {
            extensions.append(LabDER.sequence([try LabDER.oid("2.5.29.20"), LabDER.octetString(LabDER.integer(number))]))
        }
        if let base = spec.deltaBase {
            // RFC 5280 §5.2.4: deltaCRLIndicator is always critical.
            extensions.append(LabDER.sequence([try LabDER.oid("2.5.29.27"), LabDER.boolean(true), LabDER.octetString(LabDER.integer(base))]))
        }
        if let idp = spec.issuingDistributionPoint {
            // RFC 5280 §5.2.5: issuingDistributionPoint is always critical.
            extensions.append(LabDER.sequence([try LabDER.oid("2.5.29.28"), LabDER.boolean(true), LabDER.octetString(try idp.derEncoded())]))
        }
        for ext in spec.extensions { extensions.append(try ext.derEncoded(.none)) }
        if !extensions.isEmpty { fields.append(LabDER.explicit(0, LabDER.sequence(extensions))) }
        return try LabCertificate.sign(tbsDER: LabDER.sequence(fields), with: signer.key, scheme: scheme)
    }
}

extension LabExtension.Context {
    /// For extensions that need no certificate context (CRL and CRL entry extensions).
    static let none = LabExtension.Context(subjectKeyIdentifier: [], issuerKeyIdentifier: [], issuerIssuerNameDER: [], issuerSerial: [])
}
