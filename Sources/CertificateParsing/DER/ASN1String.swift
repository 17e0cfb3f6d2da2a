/// A character string from a certificate, with the ASN.1 type it was encoded as.
///
/// Each type's character set is checked (X.680 §41); text is decoded to Swift `String`:
/// TeletexString is read as ISO 8859-1, as OpenSSL and Go do in practice.
public struct ASN1String: Hashable, Sendable, CustomStringConvertible {
    /// The string types X.509 names use (RFC 5280 §4.1.2.4 `DirectoryString` and friends).
    public enum Kind: String, Hashable, Sendable {
        case utf8String = "UTF8String"
        case printableString = "PrintableString"
        case ia5String = "IA5String"
        case bmpString = "BMPString"
        case teletexString = "TeletexString"
        case universalString = "UniversalString"
        case visibleString = "VisibleString"
        case numericString = "NumericString"
    }

    /// The ASN.1 type.
    public let kind: Kind
    /// The decoded text.
    public let value: String
    /// The content octets as encoded.
    public let rawBytes: ArraySlice<UInt8>

    public var description: String { value }

    static func kind(of identifier: ASN1Identifier) -> Kind? {
        switch identifier {
        case .utf8String: return .utf8String
        case .printableString: return .printableString
        case .ia5String: return .ia5String
        case .bmpString: return .bmpString
        case .teletexString: return .teletexString
        case .universalString: return .universalString
        case .visibleString: return .visibleString
        case .numericString: return .numericString
        default: return nil
        }
    }

    /// X.680 §41.4 PrintableString characters.

    static func isPrintable(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: " "), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "+"), UInt8(ascii: ","),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "="), UInt8(ascii: "?"):
            return true
        default:
            return false
        }
    }

    /// Decodes `node` as one of the string types.
    public init(_ node: ASN1Node, _ name: @autoclosure () -> String) throws(DERError) {
        guard let kind = ASN1String.kind(of: node.identifier) else {
            throw DERError(.unexpectedTag, at: node.offset, "\(name()): expected a string type, found \(node.identifier)")
        }
        let bytes = node.content
        func bad(_ why: String) -> DERError { DERError(.invalidValue, at: node.offset, "\(name()): \(kind.rawValue) \(why)") }
        let value: String
        switch kind {
        case .utf8String:
            guard let text = String(validating: bytes, as: UTF8.self) else { throw bad("is not valid UTF-8") }
            value = text
        case .printableString:
            guard bytes.allSatisfy(ASN1String.isPrintable) else { throw bad("has a character outside its set") }
            value = String(decoding: bytes, as: UTF8.self)
        case .ia5String:
            guard bytes.allSatisfy({ $0 < 0x80 }) else { throw bad("has a non-ASCII byte") }
            value = String(decoding: bytes, as: UTF8.self)
        case .visibleString:
            guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { throw bad("has a character outside its set") }
            value = String(decoding: bytes, as: UTF8.self)
        case .numericString:
            guard bytes.allSatisfy({ $0 == 0x20 || ($0 >= 0x30 && $0 <= 0x39) }) else { throw bad("has a non-digit") }
            value = String(decoding: bytes, as: UTF8.self)
        case .teletexString:
            value = String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        case .bmpString:
            guard bytes.count % 2 == 0 else { throw bad("has an odd length") }
            var scalars = String.UnicodeScalarView()
            var i = bytes.startIndex
            while i < bytes.endIndex {
                let unit = UInt32(bytes[i]) << 8 | UInt32(bytes[i + 1])
                // BMPString is UCS-2: surrogates are not characters.
                guard let scalar = Unicode.Scalar(unit) else { throw bad("has a surrogate code unit") }
                scalars.append(scalar)
                i += 2
            }
            value = String(scalars)
        case .universalString:
            guard bytes.count % 4 == 0 else { throw bad("length is not a multiple of 4") }
            var scalars = String.UnicodeScalarView()
            var i = bytes.startIndex
            while i < bytes.endIndex {
                let unit = UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
                guard let scalar = Unicode.Scalar(unit) else { throw bad("has an invalid code point") }
                scalars.append(scalar)
                i += 4
            }
            value = String(scalars)
        }
        self.kind = kind
        self.value = value
        self.rawBytes = bytes
    }

    /// Decodes an IA5String and returns its text (used by GeneralName's dNSName, rfc822Name, URI).
    static func ia5(_ node: ASN1Node, _ name: @autoclosure () -> String) throws(DERError) -> String {
        guard !node.isConstructed else {
            throw DERError(.invalidConstruction, at: node.offset, "\(name()) must be primitive")
        }
        guard node.content.allSatisfy({ $0 < 0x80 }) else {
            throw DERError(.invalidValue, at: node.offset, "\(name()): IA5String has a non-ASCII byte")
        }
        return String(decoding: node.content, as: UTF8.self)
    }
}
