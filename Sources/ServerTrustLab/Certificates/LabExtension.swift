/// The nine KeyUsage bits of RFC 5280 §4.2.1.3, with their bit positions as raw values.
public enum LabKeyUsage: Int, Sendable, Hashable, CaseIterable {
    /// Bit 0.
    case digitalSignature = 0
    /// Bit 1 (also called contentCommitment).
    case nonRepudiation = 1
    /// Bit 2.
    case keyEncipherment = 2
    /// Bit 3.
    case dataEncipherment = 3
    /// Bit 4.
    case keyAgreement = 4
    /// Bit 5.
    case keyCertSign = 5
    /// Bit 6.
    case cRLSign = 6
    /// Bit 7.
    case encipherOnly = 7
    /// Bit 8.
    case decipherOnly = 8
}

/// How a key identifier (SKI, or AKI's keyIdentifier) is chosen.
public enum LabKeyIdentifier: Sendable, Hashable {
    /// Computed: SHA-1 of the relevant public key bits (for AKI, the issuer certificate's SKI
    /// extension value when it has one, so chains link the way a real CA links them).
    case automatic
    /// Exactly these bytes, for mismatch and odd-length tests.
    case explicit([UInt8])
}

/// One certificate policy (`PolicyInformation`), optionally with qualifiers.
public struct LabPolicy: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The policy OID (dotted) or a known name: `anyPolicy`, `domainValidated`,
    /// `organizationValidated`, `extendedValidation`.
    public var oid: String
    /// A CPS pointer qualifier (IA5String URI), if any.
    public var cpsURI: String?
    /// A user-notice qualifier's explicitText (UTF8String), if any.
    public var userNotice: String?

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - oid: Dotted OID or known name.
    ///   - cpsURI: Optional CPS URI qualifier.
    ///   - userNotice: Optional user-notice explicit text.
    public init(_ oid: String, cpsURI: String? = nil, userNotice: String? = nil) {
        self.oid = oid
        self.cpsURI = cpsURI
        self.userNotice = userNotice
    }

    /// Creates a policy without qualifiers from its OID text.
    ///
    /// - Parameter value: Dotted OID or known name.
    public init(stringLiteral value: String) {
        self.init(value)
    }
}

/// One policy mapping pair (RFC 5280 §4.2.1.5).
public struct LabPolicyMapping: Sendable, Hashable {
    /// The issuer's policy OID (dotted or known name).
    public var issuerDomainPolicy: String
    /// The equivalent subject policy OID (dotted or known name).
    public var subjectDomainPolicy: String

    /// Creates a mapping.
    ///
    /// - Parameters:
    ///   - issuerDomainPolicy: The issuer-domain policy.
    ///   - subjectDomainPolicy: The subject-domain policy.
    public init(_ issuerDomainPolicy: String, _ subjectDomainPolicy: String) {
        self.issuerDomainPolicy = issuerDomainPolicy
        self.subjectDomainPolicy = subjectDomainPolicy
    }
}

/// A certificate extension. Every case carries its own criticality, defaulting to what
/// RFC 5280 and the CA/Browser Forum baseline requirements expect.
public enum LabExtension: Sendable, Hashable {
    /// basicConstraints (2.5.29.19); `cA` is omitted when false, as DER requires.
    case basicConstraints(ca: Bool, pathLength: Int? = nil, critical: Bool = true)
    /// keyUsage (2.5.29.15) as a minimal named-bit BIT STRING.
    case keyUsage([LabKeyUsage], critical: Bool = true)
    /// extKeyUsage (2.5.29.37); entries are dotted OIDs or `serverAuth`, `clientAuth`,
    /// `codeSigning`, `emailProtection`, `timeStamping`, `OCSPSigning`, `anyExtendedKeyUsage`.
    case extendedKeyUsage([String], critical: Bool = false)
    /// subjectAltName (2.5.29.17).
    case subjectAltName([LabGeneralName], critical: Bool = false)
    /// issuerAltName (2.5.29.18).
    case issuerAltName([LabGeneralName], critical: Bool = false)
    /// nameConstraints (2.5.29.30); each name is a GeneralSubtree base (use `.ipSubnet` or an
    /// 8/32-byte `.ip` for IP ranges). Empty lists are omitted.
    case nameConstraints(permitted: [LabGeneralName], excluded: [LabGeneralName], critical: Bool = true)
    /// subjectKeyIdentifier (2.5.29.14).
    case subjectKeyIdentifier(LabKeyIdentifier = .automatic, critical: Bool = false)
    /// authorityKeyIdentifier (2.5.29.35). `keyIdentifier: nil` omits the key ID;
    /// `includeIssuerAndSerial` adds authorityCertIssuer (the issuer certificate's issuer name)
    /// and authorityCertSerialNumber (the issuer certificate's serial).
    case authorityKeyIdentifier(keyIdentifier: LabKeyIdentifier? = .automatic, includeIssuerAndSerial: Bool = false, critical: Bool = false)
    /// certificatePolicies (2.5.29.32).
    case certificatePolicies([LabPolicy], critical: Bool = false)
    /// policyMappings (2.5.29.33); RFC 5280 says conforming CAs SHOULD mark it critical.
    case policyMappings([LabPolicyMapping], critical: Bool = true)
    /// policyConstraints (2.5.29.36); RFC 5280 says it MUST be critical.
    case policyConstraints(requireExplicitPolicy: Int?, inhibitPolicyMapping: Int?, critical: Bool = true)
    /// inhibitAnyPolicy (2.5.29.54); RFC 5280 says it MUST be critical.
    case inhibitAnyPolicy(Int, critical: Bool = true)
    /// authorityInfoAccess (1.3.6.1.5.5.7.1.1) with OCSP and caIssuers URIs.
    case authorityInfoAccess(ocsp: [String], caIssuers: [String], critical: Bool = false)
    /// cRLDistributionPoints (2.5.29.31), one DistributionPoint with a fullName URI per entry.
    case crlDistributionPoints([String], critical: Bool = false)
    /// cRLDistributionPoints (2.5.29.31) with full control of each point: names (full or
    /// relative to the CRL issuer), reasons and cRLIssuer.
    case distributionPoints([LabDistributionPoint], critical: Bool = false)
    /// freshestCRL (2.5.29.46): where delta CRLs are found (RFC 5280 §4.2.1.15).
    case freshestCRL([LabDistributionPoint], critical: Bool = false)
    /// The embedded SCT list (1.3.6.1.4.1.11129.2.4.2): `sctList` is the TLS-encoded
    /// SignedCertificateTimestampList, wrapped in the OCTET STRING RFC 6962 §3.3 specifies.
    case signedCertificateTimestamps([UInt8], critical: Bool = false)
    /// The CT precertificate poison (1.3.6.1.4.1.11129.2.4.3): critical, value NULL.
    case precertificatePoison
    /// Any extension with `valueDER` placed verbatim inside extnValue's OCTET STRING.
    case raw(oid: String, critical: Bool, valueDER: [UInt8])

    /// The extension's dotted OID.
    public var oid: String {
        switch self {
        case .basicConstraints: return "2.5.29.19"
        case .keyUsage: return "2.5.29.15"
        case .extendedKeyUsage: return "2.5.29.37"
        case .subjectAltName: return "2.5.29.17"
        case .issuerAltName: return "2.5.29.18"
        case .nameConstraints: return "2.5.29.30"
        case .subjectKeyIdentifier: return "2.5.29.14"
        case .authorityKeyIdentifier: return "2.5.29.35"
        case .certificatePolicies: return "2.5.29.32"
        case .policyMappings: return "2.5.29.33"
        case .policyConstraints: return "2.5.29.36"
        case .inhibitAnyPolicy: return "2.5.29.54"
        case .authorityInfoAccess: return "1.3.6.1.5.5.7.1.1"
        case .crlDistributionPoints, .distributionPoints: return "2.5.29.31"
        case .freshestCRL: return "2.5.29.46"
        case .signedCertificateTimestamps: return "1.3.6.1.4.1.11129.2.4.2"
        case .precertificatePoison: return "1.3.6.1.4.1.11129.2.4.3"
        case .raw(let oid, _, _): return oid
        }
    }

    /// Whether the extension is marked critical.
    public var isCritical: Bool {
        switch self {
        case .basicConstraints(_, _, let critical), .keyUsage(_, let critical),
            .extendedKeyUsage(_, let critical), .subjectAltName(_, let critical),
            .issuerAltName(_, let critical), .nameConstraints(_, _, let critical),
            .subjectKeyIdentifier(_, let critical), .authorityKeyIdentifier(_, _, let critical),
            .certificatePolicies(_, let critical), .policyMappings(_, let critical),
            .policyConstraints(_, _, let critical), .inhibitAnyPolicy(_, let critical),
            .authorityInfoAccess(_, _, let critical), .crlDistributionPoints(_, let critical),
            .distributionPoints(_, let critical), .freshestCRL(_, let critical),
            .signedCertificateTimestamps(_, let critical), .raw(_, let critical, _):
            return critical
        case .precertificatePoison:
            return true
        }
    }

    /// What the encoder needs to know about the certificate being built and its issuer.
    struct Context {
        /// The subject key's identifier (SKI `.automatic`, and AKI of a self-signed certificate).
        var subjectKeyIdentifier: [UInt8]
        /// The issuer's key identifier (its SKI extension value, or computed from its key).
        var issuerKeyIdentifier: [UInt8]
        /// The issuer certificate's own issuer Name DER (AKI authorityCertIssuer).
        var issuerIssuerNameDER: [UInt8]
        /// The issuer certificate's serial INTEGER content (AKI authorityCertSerialNumber).
        var issuerSerial: [UInt8]
    }

    /// The extension's value (the bytes inside extnValue's OCTET STRING).
    func valueDER(_ context: Context) throws -> [UInt8] {
        switch self {
        case .basicConstraints(let ca, let pathLength, _):
            var fields: [[UInt8]] = []
            if ca { fields.append(LabDER.boolean(true)) }
            if let pathLength { fields.append(LabDER.integer(pathLength)) }
            return LabDER.sequence(fields)
        case .keyUsage(let usages, _):
            return LabDER.namedBitString(usages.map(\.rawValue))
        case .extendedKeyUsage(let purposes, _):
            return LabDER.sequence(
                try purposes.map {
                    try LabDER.oid(LabOID.resolve($0, table: LabOID.extendedKeyUsages, context: "extended key usage"))
                })
        case .subjectAltName(let names, _), .issuerAltName(let names, _):
            return LabDER.sequence(try names.map { try $0.derEncoded() })
        case .nameConstraints(let permitted, let excluded, _):
            func subtrees(_ names: [LabGeneralName]) throws -> [UInt8] {
                try names.flatMap { LabDER.sequence([try $0.derEncoded()]) }
            }
            var fields: [[UInt8]] = []
            if !permitted.isEmpty { fields.append(LabDER.contextSpecific(0, constructed: true, try subtrees(permitted))) }
            if !excluded.isEmpty { fields.append(LabDER.contextSpecific(1, constructed: true, try subtrees(excluded))) }
            return LabDER.sequence(fields)
        case .subjectKeyIdentifier(let identifier, _):
            switch identifier {
            case .automatic: return LabDER.octetString(context.subjectKeyIdentifier)
            case .explicit(let bytes): return LabDER.octetString(bytes)
            }
        case .authorityKeyIdentifier(let identifier, let includeIssuerAndSerial, _):
            var fields: [[UInt8]] = []
            switch identifier {
            case .automatic?: fields.append(LabDER.contextSpecific(0, constructed: false, context.issuerKeyIdentifier))
            case .explicit(let bytes)?: fields.append(LabDER.contextSpecific(0, constructed: false, bytes))
            case nil: break
            }
            if includeIssuerAndSerial {
                let generalNames = LabDER.explicit(4, context.issuerIssuerNameDER)
                fields.append(LabDER.contextSpecific(1, constructed: true, generalNames))
                fields.append(LabDER.contextSpecific(2, constructed: false, context.issuerSerial))
            }
            return LabDER.sequence(fields)
        case .certificatePolicies(let policies, _):
            return LabDER.sequence(
                try policies.map { policy in
                    let oid = try LabOID.resolve(policy.oid, table: LabOID.policies, context: "policy")
                    var qualifiers: [[UInt8]] = []
                    if let cps = policy.cpsURI {
                        qualifiers.append(LabDER.sequence([try LabDER.oid("1.3.6.1.5.5.7.2.1"), LabDER.ia5String(cps)]))
                    }
                    if let notice = policy.userNotice {
                        let userNotice = LabDER.sequence([LabDER.utf8String(notice)])
                        qualifiers.append(LabDER.sequence([try LabDER.oid("1.3.6.1.5.5.7.2.2"), userNotice]))
                    }
                    var fields = [try LabDER.oid(oid)]
                    if !qualifiers.isEmpty { fields.append(LabDER.sequence(qualifiers)) }
                    return LabDER.sequence(fields)
                })
        case .policyMappings(let mappings, _):
            return LabDER.sequence(
                try mappings.map { mapping in
                    LabDER.sequence([
                        try LabDER.oid(LabOID.resolve(mapping.issuerDomainPolicy, table: LabOID.policies, context: "policy")),
                        try LabDER.oid(LabOID.resolve(mapping.subjectDomainPolicy, table: LabOID.policies, context: "policy")),
                    ])
                })
        case .policyConstraints(let requireExplicit, let inhibitMapping, _):
            var fields: [[UInt8]] = []
            if let requireExplicit {
                fields.append(LabDER.contextSpecific(0, constructed: false, LabDER.integerContent(requireExplicit)))
            }
            if let inhibitMapping {
                fields.append(LabDER.contextSpecific(1, constructed: false, LabDER.integerContent(inhibitMapping)))
            }
            return LabDER.sequence(fields)
        case .inhibitAnyPolicy(let skipCerts, _):
            return LabDER.integer(skipCerts)
        case .authorityInfoAccess(let ocsp, let caIssuers, _):
            let ocspOID = try LabDER.oid("1.3.6.1.5.5.7.48.1")
            let caIssuersOID = try LabDER.oid("1.3.6.1.5.5.7.48.2")
            let descriptions =
                try ocsp.map { LabDER.sequence([ocspOID, try LabGeneralName.uri($0).derEncoded()]) }
                + caIssuers.map { LabDER.sequence([caIssuersOID, try LabGeneralName.uri($0).derEncoded()]) }
            return LabDER.sequence(descriptions)
        case .crlDistributionPoints(let uris, _):
            return LabDER.sequence(
                try uris.map { uri in
                    let fullName = LabDER.contextSpecific(0, constructed: true, try LabGeneralName.uri(uri).derEncoded())
                    return LabDER.sequence([LabDER.explicit(0, fullName)])
                })
        case .distributionPoints(let points, _), .freshestCRL(let points, _):
            return LabDER.sequence(try points.map { try $0.derEncoded() })
        case .signedCertificateTimestamps(let list, _):
            return LabDER.octetString(list)
        case .precertificatePoison:
            return LabDER.null()
        case .raw(_, _, let valueDER):
            return valueDER
        }
    }

    /// The complete `Extension` SEQUENCE (critical omitted when false, as DER requires).
    func derEncoded(_ context: Context) throws -> [UInt8] {
        var fields = [try LabDER.oid(LabOID.resolve(oid, table: [:], context: "extension"))]
        if isCritical { fields.append(LabDER.boolean(true)) }
        fields.append(LabDER.octetString(try valueDER(context)))
        return LabDER.sequence(fields)
    }
}
