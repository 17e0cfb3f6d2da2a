/// An ASN.1 tag: class and number (X.690 §8.1.2). The constructed bit is not part of the
/// identifier; it is checked against the type by the parser and the decoders.
public struct ASN1Identifier: Hashable, Sendable, CustomStringConvertible {
    /// The four tag classes.
    public enum TagClass: UInt8, Hashable, Sendable {
        /// The types X.680 itself defines (SEQUENCE, INTEGER, the string and time types, …).
        case universal = 0
        /// Tags assigned by one application's specification; X.509 does not use them.
        case application = 1
        /// Tags whose meaning depends on where they appear: `[0]`, `[1]`, … in X.509's optional and
        /// tagged fields.
        case contextSpecific = 2
        /// Tags for private use; X.509 does not use them.
        case `private` = 3

        /// The class in the top two bits of an identifier octet.
        static func from(_ identifierOctet: UInt8) -> TagClass {
            switch identifierOctet >> 6 {
            case 0: return .universal
            case 1: return .application
            case 2: return .contextSpecific
            default: return .private
            }
        }
    }

    /// The tag class.
    public let tagClass: TagClass
    /// The tag number.
    public let tagNumber: UInt32

    /// Creates an identifier.

    public init(tagNumber: UInt32, tagClass: TagClass) {
        self.tagNumber = tagNumber
        self.tagClass = tagClass
    }

    /// The identifier a single identifier octet encodes (X.690 §8.1.2.2), or `nil` when the
    /// octet opens the high-tag-number form (tag bits all ones, X.690 §8.1.2.4), whose number
    /// follows in further octets.
    init?(lowTagForm octet: UInt8) {
        guard octet & 0x1F != 0x1F else { return nil }
        self.init(tagNumber: UInt32(octet & 0x1F), tagClass: TagClass.from(octet))
    }

    /// A context-specific tag `[n]`.

    public static func context(_ n: UInt32) -> ASN1Identifier { ASN1Identifier(tagNumber: n, tagClass: .contextSpecific) }

    /// BOOLEAN (universal 1).
    public static let boolean = ASN1Identifier(tagNumber: 1, tagClass: .universal)
    /// INTEGER (universal 2).
    public static let integer = ASN1Identifier(tagNumber: 2, tagClass: .universal)
    /// BIT STRING (universal 3).
    public static let bitString = ASN1Identifier(tagNumber: 3, tagClass: .universal)
    /// OCTET STRING (universal 4).
    public static let octetString = ASN1Identifier(tagNumber: 4, tagClass: .universal)
    /// NULL (universal 5).
    public static let null = ASN1Identifier(tagNumber: 5, tagClass: .universal)
    /// OBJECT IDENTIFIER (universal 6).
    public static let objectIdentifier = ASN1Identifier(tagNumber: 6, tagClass: .universal)
    /// ENUMERATED (universal 10).
    public static let enumerated = ASN1Identifier(tagNumber: 10, tagClass: .universal)
    /// UTF8String (universal 12).
    public static let utf8String = ASN1Identifier(tagNumber: 12, tagClass: .universal)
    /// SEQUENCE and SEQUENCE OF (universal 16).
    public static let sequence = ASN1Identifier(tagNumber: 16, tagClass: .universal)
    /// SET and SET OF (universal 17).
    public static let set = ASN1Identifier(tagNumber: 17, tagClass: .universal)
    /// NumericString (universal 18).
    public static let numericString = ASN1Identifier(tagNumber: 18, tagClass: .universal)
    /// PrintableString (universal 19).
    public static let printableString = ASN1Identifier(tagNumber: 19, tagClass: .universal)
    /// TeletexString, also called T61String (universal 20).
    public static let teletexString = ASN1Identifier(tagNumber: 20, tagClass: .universal)
    /// IA5String (universal 22).
    public static let ia5String = ASN1Identifier(tagNumber: 22, tagClass: .universal)
    /// UTCTime (universal 23).
    public static let utcTime = ASN1Identifier(tagNumber: 23, tagClass: .universal)
    /// GeneralizedTime (universal 24).
    public static let generalizedTime = ASN1Identifier(tagNumber: 24, tagClass: .universal)
    /// VisibleString (universal 26).
    public static let visibleString = ASN1Identifier(tagNumber: 26, tagClass: .universal)
    /// UniversalString (universal 28).
    public static let universalString = ASN1Identifier(tagNumber: 28, tagClass: .universal)
    /// BMPString (universal 30).
    public static let bmpString = ASN1Identifier(tagNumber: 30, tagClass: .universal)

    /// Whether DER fixes the constructed bit for this universal type (X.690 §10.2: strings are
    /// always primitive in DER; SEQUENCE and SET are always constructed). `nil` when the type
    /// leaves it open (non-universal tags, or universal types this reader does not know).
    // Inlined: the header reader asks this of every element it reads.
    @inline(__always)
    var requiredConstruction: Bool? {
        guard tagClass == .universal, tagNumber < 32 else { return nil }
        let bit: UInt32 = 1 << tagNumber
        if bit & ASN1Identifier.constructedTypes != 0 { return true }
        if bit & ASN1Identifier.primitiveTypes != 0 { return false }
        return nil
    }

    /// SEQUENCE and SET.
    private static let constructedTypes: UInt32 = 1 << 16 | 1 << 17
    /// BOOLEAN, INTEGER, BIT STRING, OCTET STRING, NULL, OID, REAL, ENUMERATED, the string
    /// types and the time types: always primitive in DER.
    /// (Tags 1–6, 9, 10, 12, 13, 18–28 and 30.)
    private static let primitiveTypes: UInt32 = 0x5FFC_367E

    /// The tag as X.680 writes it: the type's name for the universal types this reader knows
    /// (`SEQUENCE`, `UTF8String`), else `UNIVERSAL n`, `[APPLICATION n]`, `[n]` or `[PRIVATE n]`.
    public var description: String {
        switch tagClass {
        case .universal:
            switch tagNumber {
            case 1: return "BOOLEAN"
            case 2: return "INTEGER"
            case 3: return "BIT STRING"
            case 4: return "OCTET STRING"
            case 5: return "NULL"
            case 6: return "OBJECT IDENTIFIER"
            case 10: return "ENUMERATED"
            case 12: return "UTF8String"
            case 16: return "SEQUENCE"
            case 17: return "SET"
            case 18: return "NumericString"
            case 19: return "PrintableString"
            case 20: return "TeletexString"
            case 22: return "IA5String"
            case 23: return "UTCTime"
            case 24: return "GeneralizedTime"
            case 26: return "VisibleString"
            case 28: return "UniversalString"
            case 30: return "BMPString"
            default: return "UNIVERSAL \(tagNumber)"
            }
        case .application: return "[APPLICATION \(tagNumber)]"
        case .contextSpecific: return "[\(tagNumber)]"
        case .private: return "[PRIVATE \(tagNumber)]"
        }
    }
}
