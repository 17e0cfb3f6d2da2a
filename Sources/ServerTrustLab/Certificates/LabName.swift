internal import COpenSSL

/// One `AttributeTypeAndValue` of a distinguished name.
public struct LabAttribute: Sendable, Hashable {
    /// The attribute type: a short name (`CN`, `O`, `OU`, `C`, `ST`, `L`, `emailAddress`,
    /// `DC`, `serialNumber`, any OpenSSL short or long name) or a dotted OID.
    public var type: String
    /// The attribute value text.
    public var value: String
    /// The ASN.1 string type; the value's bytes are not checked against it.
    public var stringType: LabStringType

    /// Creates an attribute.
    ///
    /// - Parameters:
    ///   - type: Short name or dotted OID.
    ///   - value: The value.
    ///   - stringType: The string type; `nil` picks what RFC 5280 expects for the attribute
    ///     (PrintableString for C, serialNumber and dnQualifier; IA5String for emailAddress and
    ///     DC; UTF8String otherwise).
    public init(_ type: String, _ value: String, stringType: LabStringType? = nil) {
        self.type = type
        self.value = value
        self.stringType = stringType ?? LabAttribute.defaultStringType(for: type)
    }

    /// The RFC 5280 conventional string type for an attribute type.
    ///
    /// - Parameter type: Short name or dotted OID.
    /// - Returns: The string type a conforming CA would use.
    public static func defaultStringType(for type: String) -> LabStringType {
        switch LabOID.attributeTypes[type] ?? type {
        case "2.5.4.6", "2.5.4.5", "2.5.4.46", "1.3.6.1.4.1.311.60.2.1.3": return .printable
        case "1.2.840.113549.1.9.1", "0.9.2342.19200300.100.1.25": return .ia5
        default: return .utf8
        }
    }

    /// The DER `AttributeTypeAndValue`.
    ///
    /// - Returns: The encoding.
    /// - Throws: ``LabError`` if the type is neither a known name nor a dotted OID.
    public func derEncoded() throws -> [UInt8] {
        let oid = try LabOID.resolve(type, table: LabOID.attributeTypes, context: "attribute type")
        return LabDER.sequence([try LabDER.oid(oid), LabDER.string(value, as: stringType)])
    }
}

/// An X.501 distinguished name: an ordered list of RDNs, each a set of one or more attributes.
public struct LabName: Sendable, Hashable, CustomStringConvertible {
    /// The relative distinguished names, most significant (e.g. country) first, as encoded.
    public var rdns: [[LabAttribute]]

    /// When set, these bytes are used verbatim as the Name encoding and ``rdns`` is ignored,
    /// so tests can place arbitrary (even malformed) names in certificates.
    public var derOverride: [UInt8]?

    /// Creates a name from RDNs; an inner array with several attributes is a multi-valued RDN.
    ///
    /// - Parameter rdns: The RDNs in encoding order.
    public init(rdns: [[LabAttribute]]) {
        self.rdns = rdns
        self.derOverride = nil
    }

    /// Creates a name with one single-valued RDN per `(type, value)` pair, in order.
    ///
    /// - Parameter pairs: Attribute types and values, such as `[("C", "US"), ("CN", "x")]`.
    public init(_ pairs: [(String, String)]) {
        self.init(rdns: pairs.map { [LabAttribute($0.0, $0.1)] })
    }

    /// Creates a name whose encoding is exactly `der`.
    ///
    /// - Parameter der: A Name encoding, used verbatim.
    public init(der: [UInt8]) {
        self.rdns = []
        self.derOverride = der
    }

    /// A name holding only a commonName, the usual shape for quick fixtures.
    ///
    /// - Parameter commonName: The CN value.
    /// - Returns: `CN=commonName`.
    public static func cn(_ commonName: String) -> LabName {
        LabName([("CN", commonName)])
    }

    /// The empty name (an empty SEQUENCE), legal for a subject only with a critical SAN.
    public static let empty = LabName(rdns: [])

    /// The DER Name: `SEQUENCE OF SET OF AttributeTypeAndValue`, each SET sorted as DER requires.
    ///
    /// - Returns: The encoding (or ``derOverride`` verbatim).
    /// - Throws: ``LabError`` if an attribute type cannot be resolved.
    public func derEncoded() throws -> [UInt8] {
        if let derOverride { return derOverride }
        return LabDER.sequence(try rdns.map { rdn in LabDER.set(try rdn.map { try $0.derEncoded() }) })
    }

    /// An OpenSSL-like one-line form (`C=US, O=Example, CN=x`), for messages only.
    public var description: String {
        if derOverride != nil { return "<DER name>" }
        return rdns.map { rdn in rdn.map { "\($0.type)=\($0.value)" }.joined(separator: " + ") }
            .joined(separator: ", ")
    }
}

/// Name-to-OID tables and resolution for the names tests use.
enum LabOID {
    static let attributeTypes: [String: String] = [
        "CN": "2.5.4.3", "commonName": "2.5.4.3",
        "SN": "2.5.4.4", "surname": "2.5.4.4",
        "serialNumber": "2.5.4.5",
        "C": "2.5.4.6", "countryName": "2.5.4.6",
        "L": "2.5.4.7", "localityName": "2.5.4.7",
        "ST": "2.5.4.8", "stateOrProvinceName": "2.5.4.8",
        "street": "2.5.4.9", "streetAddress": "2.5.4.9",
        "O": "2.5.4.10", "organizationName": "2.5.4.10",
        "OU": "2.5.4.11", "organizationalUnitName": "2.5.4.11",
        "title": "2.5.4.12",
        "businessCategory": "2.5.4.15",
        "postalCode": "2.5.4.17",
        "name": "2.5.4.41",
        "GN": "2.5.4.42", "givenName": "2.5.4.42",
        "initials": "2.5.4.43",
        "generationQualifier": "2.5.4.44",
        "dnQualifier": "2.5.4.46",
        "pseudonym": "2.5.4.65",
        "organizationIdentifier": "2.5.4.97",
        "emailAddress": "1.2.840.113549.1.9.1",
        "DC": "0.9.2342.19200300.100.1.25", "domainComponent": "0.9.2342.19200300.100.1.25",
        "UID": "0.9.2342.19200300.100.1.1", "userId": "0.9.2342.19200300.100.1.1",
        "jurisdictionC": "1.3.6.1.4.1.311.60.2.1.3",
        "jurisdictionST": "1.3.6.1.4.1.311.60.2.1.2",
        "jurisdictionL": "1.3.6.1.4.1.311.60.2.1.1",
    ]

    static let extendedKeyUsages: [String: String] = [
        "serverAuth": "1.3.6.1.5.5.7.3.1",
        "clientAuth": "1.3.6.1.5.5.7.3.2",
        "codeSigning": "1.3.6.1.5.5.7.3.3",
        "emailProtection": "1.3.6.1.5.5.7.3.4",
        "timeStamping": "1.3.6.1.5.5.7.3.8",
        "OCSPSigning": "1.3.6.1.5.5.7.3.9",
        "anyExtendedKeyUsage": "2.5.29.37.0",
    ]

    static let policies: [String: String] = [
        "anyPolicy": "2.5.29.32.0",
        "domainValidated": "2.23.140.1.2.1",
        "organizationValidated": "2.23.140.1.2.2",
        "extendedValidation": "2.23.140.1.1",
    ]

    /// Resolves a name via `table`, then as dotted text, then through OpenSSL's object table
    /// (so every name `openssl` knows works), returning dotted text.
    static func resolve(_ text: String, table: [String: String], context: String) throws -> String {
        if let known = table[text] { return known }
        if (try? LabDER.oidContent(text)) != nil { return text }
        if let object = OBJ_txt2obj(text, 0) {
            defer { ASN1_OBJECT_free(object) }
            var buffer = [CChar](repeating: 0, count: 128)
            let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
            if length > 0, Int(length) < buffer.count {
                return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        _ = LabError.drainOpenSSLErrors()  // OBJ_txt2obj's "unknown object" is expected here.
        throw LabError.invalid("LabOID.resolve", "unknown \(context) '\(text)'")
    }
}
