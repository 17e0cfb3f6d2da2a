/// One certificate extension as encoded (RFC 5280 §4.1.2.9): OID, criticality, and the
/// content of its extnValue OCTET STRING.
public struct Extension: Hashable, Sendable {
    /// The extension OID.
    public let oid: ASN1ObjectIdentifier
    /// Whether the extension is marked critical.
    public let critical: Bool
    /// The DER inside extnValue.
    public let value: ArraySlice<UInt8>
    /// The whole Extension element.
    public let derBytes: ArraySlice<UInt8>

    /// The raw extnValue content range (for decoding in place).
    let valueRange: Range<Int>

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        (oid, critical, valueRange) = try input.sequence(node, .sequence, "Extension") { nodes throws(DERError) in
            let oid = try input.objectIdentifier(nodes.next(.objectIdentifier, "extnID"), "extnID")
            var critical = false
            if let flag = try nodes.optional(.boolean) {
                critical = try input.boolean(flag, "critical")
                // X.690 §11.5: a DEFAULT value is never encoded in DER.
                guard critical else {
                    throw DERError(.invalidValue, at: flag.start, "extension \(oid) encodes critical FALSE, which DER omits")
                }
            }
            let value = try input.primitive(nodes.next(.octetString, "extnValue"), .octetString, "extnValue")
            return (oid, critical, value)
        }
        value = input.slice(valueRange)
        derBytes = input.slice(node.range)
    }

    /// Equal when the encodings (OID, criticality and value) are byte-identical.
    public static func == (lhs: Extension, rhs: Extension) -> Bool { lhs.derBytes.bytesEqual(rhs.derBytes) }
    /// Hashes the OID (equal extensions have equal OIDs).
    public func hash(into hasher: inout Hasher) { hasher.combine(oid) }
}

/// The extensions of a certificate, in order, with the typed forms of those this library
/// knows. A known extension that is malformed makes the whole certificate malformed (as in Go
/// and pyca/cryptography): a verifier must not guess what a broken constraint meant.
public final class Extensions: Hashable, Sendable {
    // A class rather than a struct: a certificate's extensions are built once and never
    // change, and one reference is far cheaper to copy than sixteen optional fields.
    /// Every extension in encoded order, known or not.
    public let all: [Extension]

    /// basicConstraints (RFC 5280 §4.2.1.9): whether the subject is a CA, and its path length.
    public let basicConstraints: BasicConstraints?
    /// keyUsage (RFC 5280 §4.2.1.3): what the key may be used for.
    public let keyUsage: KeyUsage?
    /// extendedKeyUsage (RFC 5280 §4.2.1.12): the purposes, such as serverAuth.
    public let extendedKeyUsage: ExtendedKeyUsage?
    /// subjectAltName (RFC 5280 §4.2.1.6): the names a server certificate is valid for (RFC 6125
    /// matches host names against these only).
    public let subjectAlternativeNames: [GeneralName]?
    /// issuerAltName (RFC 5280 §4.2.1.7).
    public let issuerAlternativeNames: [GeneralName]?
    /// nameConstraints (RFC 5280 §4.2.1.10): the name spaces a CA's subordinates must stay in.
    public let nameConstraints: NameConstraints?
    /// authorityKeyIdentifier (RFC 5280 §4.2.1.1): which key of the issuer signed this certificate.
    public let authorityKeyIdentifier: AuthorityKeyIdentifier?
    /// subjectKeyIdentifier (RFC 5280 §4.2.1.2): the identifier of this certificate's key, as the
    /// keyIdentifier of the certificates it signs names it.
    public let subjectKeyIdentifier: ArraySlice<UInt8>?
    /// certificatePolicies (RFC 5280 §4.2.1.4).
    public let certificatePolicies: [PolicyInformation]?
    /// policyMappings (RFC 5280 §4.2.1.5), in a CA certificate.
    public let policyMappings: [PolicyMapping]?
    /// policyConstraints (RFC 5280 §4.2.1.11), in a CA certificate.
    public let policyConstraints: PolicyConstraints?
    /// inhibitAnyPolicy (RFC 5280 §4.2.1.14): how many more certificates may follow before
    /// anyPolicy stops matching other policies.
    public let inhibitAnyPolicy: Int?
    /// authorityInfoAccess (RFC 5280 §4.2.2.1): where the issuer's certificate and the OCSP
    /// responder are.
    public let authorityInformationAccess: [AccessDescription]?
    /// cRLDistributionPoints (RFC 5280 §4.2.1.13): where the CRLs that cover this certificate are.
    public let crlDistributionPoints: [DistributionPoint]?
    /// The RFC 6962 SCT list, raw (the TLS-encoded list inside its OCTET STRING).
    public let signedCertificateTimestamps: ArraySlice<UInt8>?

    /// No extensions (v1 and v2 certificates).
    public static let none = Extensions()

    private init() {
        all = []
        basicConstraints = nil
        keyUsage = nil
        extendedKeyUsage = nil
        subjectAlternativeNames = nil
        issuerAlternativeNames = nil
        nameConstraints = nil
        authorityKeyIdentifier = nil
        subjectKeyIdentifier = nil
        certificatePolicies = nil
        policyMappings = nil
        policyConstraints = nil
        inhibitAnyPolicy = nil
        authorityInformationAccess = nil
        crlDistributionPoints = nil
        signedCertificateTimestamps = nil
    }

    /// The OIDs this model decodes; the others stay raw in ``all``.
    public static let decodedOIDs: Set<ASN1ObjectIdentifier> = [
        OID.basicConstraints, OID.keyUsage, OID.extendedKeyUsage, OID.subjectAltName, OID.issuerAltName,
        OID.nameConstraints, OID.authorityKeyIdentifier, OID.subjectKeyIdentifier, OID.certificatePolicies,
        OID.policyMappings, OID.policyConstraints, OID.inhibitAnyPolicy, OID.authorityInfoAccess,
        OID.crlDistributionPoints, OID.signedCertificateTimestampList,
    ]

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        // extensions [3] EXPLICIT SEQUENCE SIZE (1..MAX) OF Extension
        let list = try input.sequence(node, .context(3), "extensions") { outer throws(DERError) in
            try input.sequence(outer.next(.sequence, "Extensions"), .sequence, "Extensions") { nodes throws(DERError) in
                var list: [Extension] = []
                list.reserveCapacity(10)  // a Web PKI certificate carries 6 to 10
                while let child = try nodes.next() { list.append(try Extension(child, input)) }
                return list
            }
        }
        guard !list.isEmpty else {
            throw DERError(.invalidValue, at: node.start, "extensions must contain at least one extension (RFC 5280 §4.1)")
        }
        // RFC 5280 §4.2: "A certificate MUST NOT include more than one instance of a
        // particular extension."
        if let index = firstDuplicate(list, key: { $0.oid }) {
            throw DERError(.invalidValue, at: list[index].derBytes.startIndex, "duplicate extension \(list[index].oid)")
        }
        all = list
        var basicConstraints: BasicConstraints?
        var keyUsage: KeyUsage?
        var extendedKeyUsage: ExtendedKeyUsage?
        var san: [GeneralName]?
        var ian: [GeneralName]?
        var nameConstraints: NameConstraints?
        var aki: AuthorityKeyIdentifier?
        var ski: ArraySlice<UInt8>?
        var policies: [PolicyInformation]?
        var mappings: [PolicyMapping]?
        var policyConstraints: PolicyConstraints?
        var inhibitAnyPolicy: Int?
        var aia: [AccessDescription]?
        var crldp: [DistributionPoint]?
        var scts: ArraySlice<UInt8>?
        for ext in list {
            // Dispatch on the OID bytes: id-ce extensions are 2.5.29.n (55 1D n), so one byte
            // names them; comparing against every known OID constant costs far more.
            let b = ext.oid.bytes
            let s = b.startIndex
            if b.count == 3 && b[s] == 0x55 && b[s + 1] == 0x1D {
                let value = try input.single(ext.valueRange)
                switch b[s + 2] {
                case 19: basicConstraints = try BasicConstraints(value, input)
                case 15: keyUsage = try KeyUsage(value, input)
                case 37: extendedKeyUsage = try ExtendedKeyUsage(value, input)
                case 17: san = try GeneralName.sequence(value, input, "subjectAltName")
                case 18: ian = try GeneralName.sequence(value, input, "issuerAltName")
                case 30: nameConstraints = try NameConstraints(value, input)
                case 35: aki = try AuthorityKeyIdentifier(value, input)
                case 14: ski = input.slice(try input.primitive(value, .octetString, "subjectKeyIdentifier"))
                case 32: policies = try PolicyInformation.list(value, input)
                case 33: mappings = try PolicyMapping.list(value, input)
                case 36: policyConstraints = try PolicyConstraints(value, input)
                case 54: inhibitAnyPolicy = try input.integer(value, "inhibitAnyPolicy")
                case 31: crldp = try DistributionPoint.list(value, input)
                default: break
                }
            } else if ext.oid == OID.authorityInfoAccess {
                aia = try AccessDescription.list(input.single(ext.valueRange), input, "authorityInfoAccess")
            } else if ext.oid == OID.signedCertificateTimestampList {
                scts = input.slice(try input.primitive(input.single(ext.valueRange), .octetString, "SCT list"))
            }
        }
        self.basicConstraints = basicConstraints
        self.keyUsage = keyUsage
        self.extendedKeyUsage = extendedKeyUsage
        self.subjectAlternativeNames = san
        self.issuerAlternativeNames = ian
        self.nameConstraints = nameConstraints
        self.authorityKeyIdentifier = aki
        self.subjectKeyIdentifier = ski
        self.certificatePolicies = policies
        self.policyMappings = mappings
        self.policyConstraints = policyConstraints
        self.inhibitAnyPolicy = inhibitAnyPolicy
        self.authorityInformationAccess = aia
        self.crlDistributionPoints = crldp
        self.signedCertificateTimestamps = scts
    }

    /// Equal when the same extensions appear in the same order.
    public static func == (lhs: Extensions, rhs: Extensions) -> Bool { lhs === rhs || lhs.all == rhs.all }
    /// Hashes the number of extensions (consistent with ``==(_:_:)``, and cheap).
    public func hash(into hasher: inout Hasher) { hasher.combine(all.count) }

    /// The extension with `oid`, if present.
    public subscript(oid: ASN1ObjectIdentifier) -> Extension? { all.first { $0.oid == oid } }

    /// Whether the extension with `oid` is present and critical.
    public func isCritical(_ oid: ASN1ObjectIdentifier) -> Bool { self[oid]?.critical ?? false }

    /// Extensions marked critical that this model does not decode.
    public var unknownCritical: [Extension] { all.filter { $0.critical && !Extensions.decodedOIDs.contains($0.oid) } }
}

/// basicConstraints (RFC 5280 §4.2.1.9).
public struct BasicConstraints: Hashable, Sendable {
    /// Whether the subject is a CA.
    public let isCertificateAuthority: Bool
    /// The maximum number of non-self-issued intermediates below this CA, if limited.
    public let pathLengthConstraint: Int?

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        (isCertificateAuthority, pathLengthConstraint) = try input.sequence(node, .sequence, "basicConstraints") { nodes throws(DERError) in
            var ca = false
            if let flag = try nodes.optional(.boolean) {
                // An explicit FALSE violates DER's DEFAULT rule but is common in deployed
                // certificates; Go and OpenSSL accept it, and it grants nothing, so it is read.
                ca = try input.boolean(flag, "cA")
            }
            var pathLength: Int?
            if let n = try nodes.optional(.integer) { pathLength = try input.integer(n, "pathLenConstraint") }
            return (ca, pathLength)
        }
    }
}

/// keyUsage (RFC 5280 §4.2.1.3).
public struct KeyUsage: Hashable, Sendable, CustomStringConvertible {
    /// The raw bit string.
    public let bits: ASN1BitString

    /// digitalSignature (bit 0): signatures other than on certificates and CRLs, such as a TLS
    /// handshake's.
    public var digitalSignature: Bool { bits.bit(0) }
    /// nonRepudiation, renamed contentCommitment by X.509 (bit 1).
    public var nonRepudiation: Bool { bits.bit(1) }
    /// keyEncipherment (bit 2): encrypting keys, as RSA key transport does.
    public var keyEncipherment: Bool { bits.bit(2) }
    /// dataEncipherment (bit 3): encrypting data directly.
    public var dataEncipherment: Bool { bits.bit(3) }
    /// keyAgreement (bit 4): Diffie-Hellman-style key agreement.
    public var keyAgreement: Bool { bits.bit(4) }
    /// keyCertSign (bit 5): signing certificates; a CA whose keyUsage is present must assert it
    /// to issue (RFC 5280 §6.1.4 (n)).
    public var keyCertSign: Bool { bits.bit(5) }
    /// cRLSign (bit 6): signing CRLs.
    public var cRLSign: Bool { bits.bit(6) }
    /// encipherOnly (bit 7): with keyAgreement, the key only encrypts.
    public var encipherOnly: Bool { bits.bit(7) }
    /// decipherOnly (bit 8): with keyAgreement, the key only decrypts.
    public var decipherOnly: Bool { bits.bit(8) }

    static let names = [
        "digitalSignature", "nonRepudiation", "keyEncipherment", "dataEncipherment", "keyAgreement", "keyCertSign",
        "cRLSign", "encipherOnly", "decipherOnly",
    ]

    /// Names of the bits that are set.
    public var setNames: [String] { KeyUsage.names.indices.filter { bits.bit($0) }.map { KeyUsage.names[$0] } }

    /// Whether the bit called `name` (RFC 5280 spelling) is set.
    public func contains(named name: String) -> Bool {
        guard let index = KeyUsage.names.firstIndex(of: name) else { return false }
        return bits.bit(index)
    }

    /// The names of the bits set, comma-separated (`digitalSignature, keyEncipherment`).
    public var description: String { setNames.joined(separator: ", ") }

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        bits = try input.bitString(node, "keyUsage")
        // RFC 5280 §4.2.1.3: "When the keyUsage extension appears in a certificate, at least
        // one of the bits MUST be set to 1."
        guard bits.bytes.contains(where: { $0 != 0 }) else {
            throw DERError(.invalidValue, at: node.start, "keyUsage has no bit set")
        }
    }
}

/// extendedKeyUsage (RFC 5280 §4.2.1.12).
public struct ExtendedKeyUsage: Hashable, Sendable {
    /// The purposes, in order.
    public let usages: [ASN1ObjectIdentifier]

    /// Whether `usage` is listed.
    public func contains(_ usage: ASN1ObjectIdentifier) -> Bool { usages.contains(usage) }

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        usages = try input.sequence(node, .sequence, "extendedKeyUsage") { nodes throws(DERError) in
            var usages: [ASN1ObjectIdentifier] = []
            while let child = try nodes.next() { usages.append(try input.objectIdentifier(child, "KeyPurposeId")) }
            return usages
        }
        guard !usages.isEmpty else { throw DERError(.invalidValue, at: node.start, "extendedKeyUsage is empty") }
    }

    /// Short names as OpenSSL prints them.
    public static func name(of usage: ASN1ObjectIdentifier) -> String {
        switch usage {
        case OID.serverAuth: return "serverAuth"
        case OID.clientAuth: return "clientAuth"
        case OID.codeSigning: return "codeSigning"
        case OID.emailProtection: return "emailProtection"
        case OID.timeStamping: return "timeStamping"
        case OID.ocspSigning: return "OCSPSigning"
        case OID.anyExtendedKeyUsage: return "anyExtendedKeyUsage"
        default: return usage.dotted
        }
    }
}
