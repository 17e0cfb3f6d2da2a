/// An X.501 Name (RFC 5280 §4.1.2.4): a sequence of relative distinguished names, with the
/// original DER kept, because issuer/subject chaining compares names (RFC 5280 §7.1).
public struct DistinguishedName: Hashable, Sendable, CustomStringConvertible {
    /// The complete Name DER.
    public let derBytes: ArraySlice<UInt8>
    /// Whether the name has no RDN.
    public let isEmpty: Bool

    /// Validates the Name's structure and every attribute string at parse time, without
    /// decoding the text: chaining compares names by their bytes, so the text is only built
    /// when someone reads ``rdns`` or ``rfc4514`` (most evaluations never do).
    init(_ raw: RawNode, _ input: DERInput, _ name: StaticString) throws(DERError) {
        try input.sequence(raw, .sequence, name) { rdns throws(DERError) in
            while let rdn = try rdns.next() {
                var count = 0
                try input.sequence(rdn, .set, name) { attributes throws(DERError) in
                    while let atv = try attributes.next() {
                        count += 1
                        try input.sequence(atv, .sequence, name) { fields throws(DERError) in
                            _ = try input.objectIdentifier(fields.next(.objectIdentifier, name), name)
                            guard let value = try fields.next() else {
                                throw DERError(.missingField, at: atv.start, "\(name) attribute has no value")
                            }
                            if ASN1String.kind(of: value.identifier) != nil { try input.validateString(value, name) }
                        }
                    }
                }
                guard count > 0 else { throw DERError(.invalidValue, at: rdn.start, "\(name): an RDN must have at least one attribute") }
            }
        }
        derBytes = input.slice(raw.range)
        isEmpty = raw.contentCount == 0
    }

    /// Parses a standalone Name.
    public init(derEncoded bytes: [UInt8]) throws(DERError) {
        self = try DERInput.with(bytes) { input throws(DERError) in
            try DistinguishedName(input.single(0..<bytes.count), input, "Name")
        }
    }

    /// The RDNs in encoded order (most significant first), decoded on demand.
    public var rdns: [RelativeDistinguishedName] {
        // The structure and every string were validated when the name was parsed. Read the
        // outer element without walking inside attribute values: a value of another type is
        // kept opaque (its bytes need not be DER), so a deep walk could fail where decoding
        // cannot, and an empty result would make the name look empty to name constraints.
        var input = derBytes
        guard let root = try? DER.readElement(&input), input.isEmpty else { return [] }
        let decoded: [RelativeDistinguishedName]? = try? root.sequence(.sequence, "Name") { nodes throws(DERError) in
            var rdns: [RelativeDistinguishedName] = []
            while let rdn = try nodes.next() { rdns.append(try RelativeDistinguishedName(rdn, "Name")) }
            return rdns
        }
        return decoded ?? []
    }

    /// Every attribute, in order.
    public var attributes: [AttributeTypeAndValue] { rdns.flatMap(\.attributes) }

    /// Values of the attributes of `type`, in order (e.g. every commonName).
    public func values(of type: ASN1ObjectIdentifier) -> [String] {
        attributes.filter { $0.type == type }.map(\.stringValue)
    }

    /// The last commonName, if any (the one OpenSSL and browsers display).
    public var commonName: String? { values(of: AttributeTypeAndValue.commonName).last }

    /// RFC 4514 string: RDNs in reverse order separated by `,`, multi-valued RDNs joined with
    /// `+`, attribute names as short names where known, values escaped per §2.4.
    public var rfc4514: String {
        rdns.reversed().map { rdn in rdn.attributes.map(\.rfc4514).joined(separator: "+") }.joined(separator: ",")
    }

    /// The name in RFC 4514 form, as ``rfc4514``.
    public var description: String { rfc4514 }

    /// Byte equality of the encodings.
    public static func == (lhs: DistinguishedName, rhs: DistinguishedName) -> Bool {
        lhs.derBytes.bytesEqual(rhs.derBytes)
    }

    /// Hashes the encoding's length and last 16 bytes, consistent with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(derBytes.count)
        derBytes.suffix(16).withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// A set of attributes at one level of a name.
public struct RelativeDistinguishedName: Hashable, Sendable {
    /// The attributes (usually one).
    public let attributes: [AttributeTypeAndValue]

    init(_ node: ASN1Node, _ name: @autoclosure () -> String, identifier: ASN1Identifier = .set) throws(DERError) {
        attributes = try node.sequence(identifier, "\(name()) RDN") { nodes throws(DERError) in
            var attributes: [AttributeTypeAndValue] = []
            while let atv = try nodes.next() {
                attributes.append(try AttributeTypeAndValue(atv, name()))
            }
            guard !attributes.isEmpty else {
                throw DERError(.invalidValue, at: node.offset, "\(name()): an RDN must have at least one attribute")
            }
            return attributes
        }
    }
}

/// One attribute of a name: its type OID and its value.
public struct AttributeTypeAndValue: Hashable, Sendable, CustomStringConvertible {
    /// The attribute type.
    public let type: ASN1ObjectIdentifier
    /// The value when it is a string type (nearly always).
    public let value: ASN1String?
    /// The value element as encoded.
    public let valueNode: ASN1Node

    init(_ node: ASN1Node, _ name: @autoclosure () -> String) throws(DERError) {
        (type, valueNode) = try node.sequence(.sequence, "\(name()) attribute") { nodes throws(DERError) in
            let type = try nodes.next(.objectIdentifier, "\(name()) attribute type").objectIdentifier("\(name()) attribute type")
            guard let value = try nodes.next() else {
                throw DERError(.missingField, at: node.offset, "\(name()) attribute has no value")
            }
            return (type, value)
        }
        if ASN1String.kind(of: valueNode.identifier) != nil {
            value = try ASN1String(valueNode, "\(name()) \(AttributeTypeAndValue.shortName(type) ?? type.dotted)")
        } else {
            value = nil
        }
    }

    /// The value as text: the string, or `#` and the hex of the encoding (RFC 4514 §2.4).
    public var stringValue: String {
        if let value { return value.value }
        return "#" + Hex.encode(valueNode.encodedBytes)
    }

    /// `type=value` in RFC 4514 form.
    public var rfc4514: String {
        let name = AttributeTypeAndValue.shortName(type) ?? type.dotted
        guard let value else { return "\(name)=#\(Hex.encode(valueNode.encodedBytes))" }
        return "\(name)=\(AttributeTypeAndValue.escape(value.value))"
    }

    /// `type=value` in RFC 4514 form, as ``rfc4514``.
    public var description: String { rfc4514 }

    /// RFC 4514 §2.4 escaping: `"+,;<>\` always, `#` and space at the start, space at the end,
    /// and as hex pairs NUL (`\00`) and every character ``DisplayText`` keeps from terminals
    /// (ESC `\1B`, CR LF `\0D\0A`, …), which §2.4 allows for any character: the issuer chooses
    /// the names, and they are printed and logged.
    static func escape(_ value: String) -> String {
        var out = ""
        let scalars = Array(value.unicodeScalars)
        for (i, scalar) in scalars.enumerated() {
            switch scalar {
            case "\"", "+", ",", ";", "<", ">", "\\":
                out += "\\"
                out.unicodeScalars.append(scalar)
            case "#" where i == 0, " " where i == 0 || i == scalars.count - 1:
                out += "\\"
                out.unicodeScalars.append(scalar)
            case _ where DisplayText.mustEscape(scalar):
                out += DisplayText.hexPairs(scalar)
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// id-at-commonName (2.5.4.3, X.520): the attribute ``DistinguishedName/commonName`` reads.
    public static let commonName: ASN1ObjectIdentifier = "2.5.4.3"

    /// Short names: RFC 4514 §3's table, then the names OpenSSL prints for other common attributes.
    static let shortNames: [ASN1ObjectIdentifier: String] = [
        "2.5.4.3": "CN", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O", "2.5.4.11": "OU", "2.5.4.6": "C",
        "2.5.4.9": "street", "0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID",
        "2.5.4.5": "serialNumber", "2.5.4.4": "SN", "2.5.4.42": "GN", "2.5.4.12": "title", "2.5.4.43": "initials",
        "2.5.4.44": "generationQualifier", "2.5.4.46": "dnQualifier", "2.5.4.65": "pseudonym", "2.5.4.17": "postalCode",
        "2.5.4.15": "businessCategory", "2.5.4.97": "organizationIdentifier", "2.5.4.13": "description",
        "2.5.4.41": "name", "2.5.4.16": "postalAddress", "2.5.4.18": "postOfficeBox",
        "1.2.840.113549.1.9.1": "emailAddress", "1.3.6.1.4.1.311.60.2.1.1": "jurisdictionL",
        "1.3.6.1.4.1.311.60.2.1.2": "jurisdictionST", "1.3.6.1.4.1.311.60.2.1.3": "jurisdictionC",
    ]

    /// The short name of `type`, if known.
    public static func shortName(_ type: ASN1ObjectIdentifier) -> String? { shortNames[type] }
}

/// Lowercase hexadecimal.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lowercase hex, no separators.
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hex (either case, optional `:` separators); `nil` if malformed.
    public static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var high: UInt8?
        for c in text.utf8 where c != UInt8(ascii: ":") {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let h = high {
                out.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return high == nil ? out : nil
    }
}
