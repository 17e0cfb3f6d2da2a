/// A character string from a certificate, with the ASN.1 type it was encoded as.
///
/// Each type's character set is checked (X.680 §41); text is decoded to Swift `String`:
/// TeletexString is read as ISO 8859-1, as OpenSSL and Go do in practice.
public struct ASN1String: Hashable, Sendable, CustomStringConvertible {
    /// The string types X.509 names use (RFC 5280 §4.1.2.4 `DirectoryString` and friends).
    public enum Kind: String, Hashable, Sendable {
        /// UTF8String: any Unicode text, in UTF-8 (with PrintableString, the encoding RFC 5280
        /// §4.1.2.4 requires of conforming CAs).
        case utf8String = "UTF8String"
        /// PrintableString: letters, digits, space and `'()+,-./:=?` (X.680 §41.4).
        case printableString = "PrintableString"
        /// IA5String: 7-bit ASCII; the type of dNSName, rfc822Name and URI names and of emailAddress.
        case ia5String = "IA5String"
        /// BMPString: UCS-2, two bytes per character, big-endian (surrogates refused).
        case bmpString = "BMPString"
        /// TeletexString (T61String): read as ISO 8859-1, as OpenSSL and Go do.
        case teletexString = "TeletexString"
        /// UniversalString: UCS-4, four bytes per character, big-endian.
        case universalString = "UniversalString"
        /// VisibleString: printable ASCII, space through `~` (no control characters).
        case visibleString = "VisibleString"
        /// NumericString: digits and space.
        case numericString = "NumericString"
    }

    /// The ASN.1 type.
    public let kind: Kind
    /// The decoded text.
    public let value: String
    /// The content octets as encoded.
    public let rawBytes: ArraySlice<UInt8>

    /// The decoded text, as ``value``.
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

    /// Why `bytes` are not valid content for `kind`, or `nil` if they are (X.680 §41).
    static func characterSetProblem(_ kind: Kind, _ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        switch kind {
        case .utf8String:
            return isValidUTF8(bytes) ? nil : "is not valid UTF-8"
        case .printableString:
            return bytes.allSatisfy(ASN1String.isPrintable) ? nil : "has a character outside its set"
        case .ia5String:
            return bytes.allSatisfy({ $0 < 0x80 }) ? nil : "has a non-ASCII byte"
        case .visibleString:
            return bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) ? nil : "has a character outside its set"
        case .numericString:
            return bytes.allSatisfy({ $0 == 0x20 || ($0 >= 0x30 && $0 <= 0x39) }) ? nil : "has a non-digit"
        case .teletexString:
            return nil
        case .bmpString:
            guard bytes.count % 2 == 0 else { return "has an odd length" }
            var i = 0
            while i < bytes.count {
                // BMPString is UCS-2: surrogates are not characters.
                if (0xD8...0xDF).contains(bytes[i]) { return "has a surrogate code unit" }
                i += 2
            }
            return nil
        case .universalString:
            guard bytes.count % 4 == 0 else { return "length is not a multiple of 4" }
            var i = 0
            while i < bytes.count {
                let unit = UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
                if Unicode.Scalar(unit) == nil { return "has an invalid code point" }
                i += 4
            }
            return nil
        }
    }

    /// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = bytes.count
        while i < n {
            let b0 = bytes[i]
            if b0 < 0x80 {
                i += 1
                continue
            }
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch b0 {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                upper = 0x9F
            case 0xF0:
                length = 4
                lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                upper = 0x8F
            default: return false
            }
            guard i + length <= n else { return false }
            guard bytes[i + 1] >= lower, bytes[i + 1] <= upper else { return false }
            for k in 2..<length where bytes[i + k] & 0xC0 != 0x80 { return false }
            i += length
        }
        return true
    }

    /// Decodes `node` as one of the string types.
    public init(_ node: ASN1Node, _ name: @autoclosure () -> String) throws(DERError) {
        guard let kind = ASN1String.kind(of: node.identifier) else {
            throw DERError(.unexpectedTag, at: node.offset, "\(name()): expected a string type, found \(node.identifier)")
        }
        let bytes = node.content
        try bytes.withUnsafeBufferPointer { (content) throws(DERError) in try DERRules.characters(kind, content, at: node.offset, name) }
        let value: String
        switch kind {
        case .utf8String, .printableString, .ia5String, .visibleString, .numericString:
            value = String(decoding: bytes, as: UTF8.self)
        case .teletexString:
            value = String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        case .bmpString:
            var scalars = String.UnicodeScalarView()
            var i = bytes.startIndex
            while i < bytes.endIndex {
                scalars.append(Unicode.Scalar(UInt32(bytes[i]) << 8 | UInt32(bytes[i + 1])) ?? "\u{FFFD}")
                i += 2
            }
            value = String(scalars)
        case .universalString:
            var scalars = String.UnicodeScalarView()
            var i = bytes.startIndex
            while i < bytes.endIndex {
                let unit = UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
                scalars.append(Unicode.Scalar(unit) ?? "\u{FFFD}")
                i += 4
            }
            value = String(scalars)
        }
        self.kind = kind
        self.value = value
        self.rawBytes = bytes
    }
}
