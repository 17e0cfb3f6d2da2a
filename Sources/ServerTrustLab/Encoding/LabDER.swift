/// A small DER encoder and lenient reader for building X.509 structures by hand.
///
/// The Lab encodes every certificate field itself instead of asking OpenSSL to, because tests
/// need byte-level control: verbatim serials, unique IDs, odd string types and deliberately
/// malformed encodings. The encoders never validate *semantics* (a PrintableString may contain
/// `@`, an INTEGER may be non-minimal) so callers can produce exactly the bytes they want.
public enum LabDER {
    /// Universal-class identifier octets used by X.509.
    public enum Tag {
        /// BOOLEAN.
        public static let boolean: UInt8 = 0x01
        /// INTEGER.
        public static let integer: UInt8 = 0x02
        /// BIT STRING.
        public static let bitString: UInt8 = 0x03
        /// OCTET STRING.
        public static let octetString: UInt8 = 0x04
        /// NULL.
        public static let null: UInt8 = 0x05
        /// OBJECT IDENTIFIER.
        public static let objectIdentifier: UInt8 = 0x06
        /// ENUMERATED.
        public static let enumerated: UInt8 = 0x0A
        /// UTF8String.
        public static let utf8String: UInt8 = 0x0C
        /// NumericString.
        public static let numericString: UInt8 = 0x12
        /// PrintableString.
        public static let printableString: UInt8 = 0x13
        /// TeletexString (T61String).
        public static let teletexString: UInt8 = 0x14
        /// IA5String.
        public static let ia5String: UInt8 = 0x16
        /// UTCTime.
        public static let utcTime: UInt8 = 0x17
        /// GeneralizedTime.
        public static let generalizedTime: UInt8 = 0x18
        /// VisibleString.
        public static let visibleString: UInt8 = 0x1A
        /// UniversalString.
        public static let universalString: UInt8 = 0x1C
        /// BMPString.
        public static let bmpString: UInt8 = 0x1E
        /// SEQUENCE / SEQUENCE OF (constructed).
        public static let sequence: UInt8 = 0x30
        /// SET / SET OF (constructed).
        public static let set: UInt8 = 0x31
    }

    /// The class bits of an identifier octet.
    public enum TagClass: UInt8, Sendable, Hashable {
        /// Universal class (0b00).
        case universal = 0x00
        /// Application class (0b01).
        case application = 0x40
        /// Context-specific class (0b10), used for `[n]` tags.
        case contextSpecific = 0x80
        /// Private class (0b11).
        case `private` = 0xC0
    }

    // MARK: - Framing

    /// Encodes a definite length in the shortest DER form.
    ///
    /// - Parameter count: The content length in bytes.
    /// - Returns: The length octets.
    public static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var remaining = count
        while remaining > 0 {
            bytes.insert(UInt8(remaining & 0xFF), at: 0)
            remaining >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    /// Encodes identifier octets, using the high-tag-number form for numbers above 30.
    ///
    /// - Parameters:
    ///   - tagClass: The tag class.
    ///   - constructed: Whether the constructed bit is set.
    ///   - number: The tag number.
    /// - Returns: The identifier octets.
    public static func identifier(_ tagClass: TagClass, constructed: Bool, number: UInt) -> [UInt8] {
        let first = tagClass.rawValue | (constructed ? 0x20 : 0x00)
        if number < 31 { return [first | UInt8(number)] }
        return [first | 0x1F] + base128(UInt64(number))
    }

    /// Encodes a tag-length-value element with a single identifier octet.
    ///
    /// - Parameters:
    ///   - tag: The identifier octet.
    ///   - content: The content octets, used verbatim.
    /// - Returns: The encoded element.
    public static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        [tag] + length(content.count) + content
    }

    /// Encodes a tag-length-value element with arbitrary identifier octets.
    ///
    /// - Parameters:
    ///   - identifier: The identifier octets (see ``identifier(_:constructed:number:)``).
    ///   - content: The content octets, used verbatim.
    /// - Returns: The encoded element.
    public static func tlv(identifier: [UInt8], _ content: [UInt8]) -> [UInt8] {
        identifier + length(content.count) + content
    }

    /// Encodes a SEQUENCE whose content is the concatenation of already-encoded elements.
    ///
    /// - Parameter elements: Encoded elements, in order.
    /// - Returns: The encoded SEQUENCE.
    public static func sequence(_ elements: [[UInt8]]) -> [UInt8] {
        tlv(Tag.sequence, elements.flatMap { $0 })
    }

    /// Encodes a SET (OF).
    ///
    /// - Parameters:
    ///   - elements: Encoded elements.
    ///   - sorted: When `true` (the DER rule for SET OF) the elements are sorted by their
    ///     encodings; pass `false` to keep the given order and produce a non-DER SET.
    /// - Returns: The encoded SET.
    public static func set(_ elements: [[UInt8]], sorted: Bool = true) -> [UInt8] {
        let ordered = sorted ? elements.sorted { $0.lexicographicallyPrecedes($1) } : elements
        return tlv(Tag.set, ordered.flatMap { $0 })
    }

    /// Wraps an encoded element in a constructed context-specific `[number]` EXPLICIT tag.
    ///
    /// - Parameters:
    ///   - number: The tag number.
    ///   - element: The encoded inner element.
    /// - Returns: The encoded explicit tag.
    public static func explicit(_ number: UInt, _ element: [UInt8]) -> [UInt8] {
        tlv(identifier: identifier(.contextSpecific, constructed: true, number: number), element)
    }

    /// Re-tags an encoded element as context-specific `[number]` IMPLICIT, keeping its
    /// constructed bit and content.
    ///
    /// - Parameters:
    ///   - number: The tag number.
    ///   - element: One encoded element.
    /// - Returns: The re-tagged element.
    /// - Throws: ``LabError`` if `element` is not a single well-framed element.
    public static func implicit(_ number: UInt, _ element: [UInt8]) throws -> [UInt8] {
        let parsed = try parse(element)
        return contextSpecific(number, constructed: parsed.isConstructed, parsed.content)
    }

    /// Encodes a context-specific `[number]` element from raw content.
    ///
    /// - Parameters:
    ///   - number: The tag number.
    ///   - constructed: Whether the constructed bit is set.
    ///   - content: The content octets.
    /// - Returns: The encoded element.
    public static func contextSpecific(_ number: UInt, constructed: Bool, _ content: [UInt8]) -> [UInt8] {
        tlv(identifier: identifier(.contextSpecific, constructed: constructed, number: number), content)
    }

    // MARK: - Primitive values

    /// Encodes a BOOLEAN (DER: TRUE is 0xFF).
    ///
    /// - Parameter value: The value.
    /// - Returns: The encoded BOOLEAN.
    public static func boolean(_ value: Bool) -> [UInt8] {
        tlv(Tag.boolean, [value ? 0xFF : 0x00])
    }

    /// Encodes NULL.
    ///
    /// - Returns: `05 00`.
    public static func null() -> [UInt8] { [Tag.null, 0x00] }

    /// Encodes an INTEGER in minimal two's-complement form.
    ///
    /// - Parameter value: The value.
    /// - Returns: The encoded INTEGER.
    public static func integer(_ value: Int) -> [UInt8] {
        tlv(Tag.integer, integerContent(value))
    }

    /// Encodes an INTEGER whose content octets are used verbatim (no normalisation), so tests
    /// can produce negative, zero-length or non-minimal integers.
    ///
    /// - Parameter content: The big-endian two's-complement content octets.
    /// - Returns: The encoded INTEGER.
    public static func integer(content: [UInt8]) -> [UInt8] {
        tlv(Tag.integer, content)
    }

    /// Encodes a non-negative big-endian magnitude as a minimal INTEGER (leading zeros stripped,
    /// one `00` added when the high bit would otherwise make it negative).
    ///
    /// - Parameter magnitude: The unsigned big-endian value.
    /// - Returns: The encoded INTEGER.
    public static func integer(unsignedBigEndian magnitude: [UInt8]) -> [UInt8] {
        tlv(Tag.integer, unsignedIntegerContent(magnitude))
    }

    /// The minimal two's-complement content octets of an INTEGER.
    ///
    /// - Parameter value: The value.
    /// - Returns: The content octets (at least one byte).
    public static func integerContent(_ value: Int) -> [UInt8] {
        var bytes = withUnsafeBytes(of: Int64(value).bigEndian) { Array($0) }
        while bytes.count > 1,
            (bytes[0] == 0x00 && bytes[1] & 0x80 == 0) || (bytes[0] == 0xFF && bytes[1] & 0x80 != 0)
        {
            bytes.removeFirst()
        }
        return bytes
    }

    /// The minimal INTEGER content octets for a non-negative big-endian magnitude.
    ///
    /// - Parameter magnitude: The unsigned big-endian value.
    /// - Returns: The content octets (at least one byte).
    public static func unsignedIntegerContent(_ magnitude: [UInt8]) -> [UInt8] {
        var bytes = Array(magnitude.drop { $0 == 0 })
        if bytes.isEmpty { return [0x00] }
        if bytes[0] & 0x80 != 0 { bytes.insert(0x00, at: 0) }
        return bytes
    }

    /// Encodes an ENUMERATED value.
    ///
    /// - Parameter value: The value.
    /// - Returns: The encoded ENUMERATED.
    public static func enumerated(_ value: Int) -> [UInt8] {
        tlv(Tag.enumerated, integerContent(value))
    }

    /// Encodes an OCTET STRING.
    ///
    /// - Parameter bytes: The content.
    /// - Returns: The encoded OCTET STRING.
    public static func octetString(_ bytes: [UInt8]) -> [UInt8] {
        tlv(Tag.octetString, bytes)
    }

    /// Encodes a BIT STRING from whole bytes.
    ///
    /// - Parameters:
    ///   - bytes: The bit content, most significant bit first.
    ///   - unusedBits: The unused-bit count placed in the first content octet (0–7 in valid DER;
    ///     not checked, so tests can encode invalid values).
    /// - Returns: The encoded BIT STRING.
    public static func bitString(_ bytes: [UInt8], unusedBits: UInt8 = 0) -> [UInt8] {
        tlv(Tag.bitString, [unusedBits] + bytes)
    }

    /// Encodes a named-bit BIT STRING (such as KeyUsage) in DER form: bit 0 is the most
    /// significant bit of the first byte and trailing zero bits are removed (X.690 §11.2.2).
    ///
    /// - Parameter bits: The bit positions that are set.
    /// - Returns: The encoded BIT STRING.
    public static func namedBitString(_ bits: [Int]) -> [UInt8] {
        guard let highest = bits.filter({ $0 >= 0 }).max() else { return bitString([]) }
        var bytes = [UInt8](repeating: 0, count: highest / 8 + 1)
        for bit in bits where bit >= 0 {
            bytes[bit / 8] |= 0x80 >> UInt8(bit % 8)
        }
        let unused = UInt8(7 - highest % 8)
        return bitString(bytes, unusedBits: unused)
    }

    /// Encodes an OBJECT IDENTIFIER from dotted-decimal text such as `"2.5.29.19"`.
    ///
    /// - Parameter dotted: The dotted OID.
    /// - Returns: The encoded OBJECT IDENTIFIER.
    /// - Throws: ``LabError`` if the text is not a valid OID with arcs that fit in 64 bits.
    public static func oid(_ dotted: String) throws -> [UInt8] {
        tlv(Tag.objectIdentifier, try oidContent(dotted))
    }

    /// The content octets of an OBJECT IDENTIFIER (base-128 arcs, first two arcs combined).
    ///
    /// - Parameter dotted: The dotted OID.
    /// - Returns: The content octets.
    /// - Throws: ``LabError`` if the text is not a valid OID.
    public static func oidContent(_ dotted: String) throws -> [UInt8] {
        let parts = dotted.split(separator: ".", omittingEmptySubsequences: false)
        let arcs = parts.compactMap { part -> UInt64? in
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return UInt64(part)
        }
        guard arcs.count == parts.count, arcs.count >= 2, arcs[0] <= 2, arcs[0] == 2 || arcs[1] < 40 else {
            throw LabError.invalid("LabDER.oid", "'\(dotted)' is not a dotted-decimal object identifier")
        }
        let (first, overflow) = arcs[1].addingReportingOverflow(arcs[0] * 40)
        guard !overflow else {
            throw LabError.invalid("LabDER.oid", "'\(dotted)' has an arc too large to encode")
        }
        return base128(first) + arcs.dropFirst(2).flatMap(base128)
    }

    /// Encodes a string with the given universal string type.
    ///
    /// UTF8String, PrintableString, IA5String, VisibleString, NumericString and TeletexString
    /// carry the string's UTF-8 bytes verbatim (no character-set check, so tests can make
    /// invalid ones); BMPString is UTF-16BE; UniversalString is UTF-32BE.
    ///
    /// - Parameters:
    ///   - value: The text.
    ///   - type: The ASN.1 string type.
    /// - Returns: The encoded string.
    public static func string(_ value: String, as type: LabStringType) -> [UInt8] {
        switch type {
        case .utf8: return tlv(Tag.utf8String, Array(value.utf8))
        case .printable: return tlv(Tag.printableString, Array(value.utf8))
        case .ia5: return tlv(Tag.ia5String, Array(value.utf8))
        case .visible: return tlv(Tag.visibleString, Array(value.utf8))
        case .numeric: return tlv(Tag.numericString, Array(value.utf8))
        case .teletex: return tlv(Tag.teletexString, Array(value.utf8))
        case .bmp:
            return tlv(Tag.bmpString, value.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })
        case .universal:
            return tlv(
                Tag.universalString,
                value.unicodeScalars.flatMap { scalar -> [UInt8] in
                    let v = scalar.value
                    return [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
                })
        }
    }

    /// Encodes a UTF8String.
    ///
    /// - Parameter value: The text.
    /// - Returns: The encoded string.
    public static func utf8String(_ value: String) -> [UInt8] { string(value, as: .utf8) }

    /// Encodes a PrintableString (bytes verbatim, not validated).
    ///
    /// - Parameter value: The text.
    /// - Returns: The encoded string.
    public static func printableString(_ value: String) -> [UInt8] { string(value, as: .printable) }

    /// Encodes an IA5String (bytes verbatim, not validated).
    ///
    /// - Parameter value: The text.
    /// - Returns: The encoded string.
    public static func ia5String(_ value: String) -> [UInt8] { string(value, as: .ia5) }

    // MARK: - Time

    /// Encodes a certificate `Time` the way RFC 5280 §4.1.2.5 requires: UTCTime for years
    /// 1950 through 2049, GeneralizedTime otherwise, always in UTC with seconds and `Z`.
    ///
    /// - Parameter unixSeconds: Seconds since 1970-01-01T00:00:00Z.
    /// - Returns: The encoded time.
    /// - Throws: ``LabError`` for years outside 0…9999.
    public static func time(_ unixSeconds: Int64) throws -> [UInt8] {
        let year = LabCalendar.components(unixSeconds).year
        return (1950...2049).contains(year) ? try utcTime(unixSeconds) : try generalizedTime(unixSeconds)
    }

    /// Encodes a UTCTime `YYMMDDHHMMSSZ`.
    ///
    /// - Parameter unixSeconds: Seconds since the Unix epoch.
    /// - Returns: The encoded UTCTime.
    /// - Throws: ``LabError`` if the year is outside 1950…2049, which UTCTime cannot express.
    public static func utcTime(_ unixSeconds: Int64) throws -> [UInt8] {
        let c = LabCalendar.components(unixSeconds)
        guard (1950...2049).contains(c.year) else {
            throw LabError.invalid("LabDER.utcTime", "year \(c.year) is outside UTCTime's 1950...2049")
        }
        let text =
            pad(c.year % 100, 2) + pad(c.month, 2) + pad(c.day, 2)
            + pad(c.hour, 2) + pad(c.minute, 2) + pad(c.second, 2) + "Z"
        return tlv(Tag.utcTime, Array(text.utf8))
    }

    /// Encodes a GeneralizedTime `YYYYMMDDHHMMSSZ`.
    ///
    /// - Parameter unixSeconds: Seconds since the Unix epoch.
    /// - Returns: The encoded GeneralizedTime.
    /// - Throws: ``LabError`` if the year is outside 0…9999.
    public static func generalizedTime(_ unixSeconds: Int64) throws -> [UInt8] {
        let c = LabCalendar.components(unixSeconds)
        guard (0...9999).contains(c.year) else {
            throw LabError.invalid("LabDER.generalizedTime", "year \(c.year) is outside 0...9999")
        }
        let text =
            pad(c.year, 4) + pad(c.month, 2) + pad(c.day, 2)
            + pad(c.hour, 2) + pad(c.minute, 2) + pad(c.second, 2) + "Z"
        return tlv(Tag.generalizedTime, Array(text.utf8))
    }

    // MARK: - Reading

    /// Parses exactly one element spanning all of `bytes`.
    ///
    /// The reader is deliberately lenient (non-minimal lengths are accepted) because it reads
    /// the Lab's own and hand-crafted output, not untrusted input; only definite lengths exist.
    ///
    /// - Parameter bytes: One encoded element.
    /// - Returns: The element.
    /// - Throws: ``LabError`` on truncation, indefinite length or trailing bytes.
    public static func parse(_ bytes: [UInt8]) throws -> LabDERElement {
        var index = 0
        let element = try readElement(bytes, at: &index)
        guard index == bytes.count else {
            throw LabError.invalid("LabDER.parse", "\(bytes.count - index) trailing bytes after the element")
        }
        return element
    }

    /// Parses a concatenation of elements (the content of a SEQUENCE or SET).
    ///
    /// - Parameter bytes: Zero or more encoded elements back to back.
    /// - Returns: The elements in order.
    /// - Throws: ``LabError`` on malformed framing.
    public static func parseAll(_ bytes: [UInt8]) throws -> [LabDERElement] {
        var index = 0
        var elements: [LabDERElement] = []
        while index < bytes.count {
            elements.append(try readElement(bytes, at: &index))
        }
        return elements
    }

    // MARK: - Internals

    static func base128(_ value: UInt64) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(value & 0x7F)]
        var remaining = value >> 7
        while remaining > 0 {
            bytes.insert(UInt8(remaining & 0x7F) | 0x80, at: 0)
            remaining >>= 7
        }
        return bytes
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func readElement(_ bytes: [UInt8], at index: inout Int) throws -> LabDERElement {
        let start = index
        func fail(_ why: String) -> LabError { LabError.invalid("LabDER.parse", why + " at offset \(index)") }
        guard index < bytes.count else { throw fail("missing identifier") }
        var identifierEnd = index + 1
        if bytes[index] & 0x1F == 0x1F {
            while true {
                guard identifierEnd < bytes.count else { throw fail("truncated high tag number") }
                let byte = bytes[identifierEnd]
                identifierEnd += 1
                if byte & 0x80 == 0 { break }
            }
        }
        let identifier = Array(bytes[index..<identifierEnd])
        index = identifierEnd
        guard index < bytes.count else { throw fail("missing length") }
        let first = bytes[index]
        index += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count > 0 else { throw fail("indefinite length") }
            guard count <= 4, index + count <= bytes.count else { throw fail("unsupported length") }
            for byte in bytes[index..<(index + count)] { length = length << 8 | Int(byte) }
            index += count
        }
        guard length <= bytes.count - index else { throw fail("content runs past the end") }
        let content = Array(bytes[index..<(index + length)])
        index += length
        return LabDERElement(identifier: identifier, content: content, encoded: Array(bytes[start..<index]))
    }
}

/// One parsed DER element: identifier octets, content octets and the whole encoding.
public struct LabDERElement: Sendable, Hashable {
    /// The identifier octets (usually one byte, such as `0x30` for SEQUENCE).
    public let identifier: [UInt8]
    /// The content octets.
    public let content: [UInt8]
    /// The complete encoding (identifier, length and content) exactly as read.
    public let encoded: [UInt8]

    /// The first identifier octet, enough to recognise every tag X.509 uses.
    public var tag: UInt8 { identifier.first ?? 0 }

    /// Whether the constructed bit is set.
    public var isConstructed: Bool { tag & 0x20 != 0 }

    /// Parses the content as a concatenation of elements (for SEQUENCE, SET and EXPLICIT tags).
    ///
    /// - Returns: The child elements.
    /// - Throws: ``LabError`` if the content is not well framed.
    public func children() throws -> [LabDERElement] {
        try LabDER.parseAll(content)
    }
}

/// Converts Unix seconds to proleptic Gregorian UTC fields without Foundation, so the fixed
/// test clock never depends on the host's time zone or calendar settings.
enum LabCalendar {
    struct Components {
        var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
    }

    /// Howard Hinnant's `civil_from_days`, valid for the whole Int64 day range we need.
    static func components(_ unixSeconds: Int64) -> Components {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondsOfDay = Int(unixSeconds - days * 86_400)
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
        return Components(
            year: year, month: month, day: day,
            hour: secondsOfDay / 3_600, minute: secondsOfDay / 60 % 60, second: secondsOfDay % 60)
    }
}
