import CertificateParsing
import Testing

private typealias B = DERBuilder

@Suite("DER reader: valid encodings and primitive decoders")
struct DERReaderTests {
    // MARK: Headers

    @Test("short and long definite lengths", arguments: [0, 1, 2, 127, 128, 129, 255, 256, 1000, 65_535, 65_536, 100_000])
    func lengths(count: Int) throws {
        let content = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let encoded = B.tlv(0x04, content)
        let expectedHeader: [UInt8] =
            switch count {
            case ..<128: [0x04, UInt8(count)]
            case ..<256: [0x04, 0x81, UInt8(count)]
            case ..<65_536: [0x04, 0x82, UInt8(count >> 8), UInt8(count & 0xFF)]
            default: [0x04, 0x83, UInt8(count >> 16), UInt8((count >> 8) & 0xFF), UInt8(count & 0xFF)]
            }
        #expect(Array(encoded.prefix(expectedHeader.count)) == expectedHeader)
        let node = try DER.parse(encoded)
        #expect(node.identifier == .octetString)
        #expect(!node.isConstructed)
        #expect(node.offset == 0)
        #expect(node.content.startIndex == expectedHeader.count)
        #expect(node.content.count == count)
        #expect(node.content.elementsEqual(content))
        #expect(node.encodedBytes.elementsEqual(encoded))
        #expect(try node.octetString("x").elementsEqual(content))
    }

    @Test("a four-byte length is read (the largest this reader accepts)")
    func fourByteLength() throws {
        let content = [UInt8](repeating: 0x61, count: 0x0100_0000)
        let encoded = [0x04, 0x84, 0x01, 0x00, 0x00, 0x00] + content
        let node = try DER.parse(encoded)
        #expect(node.content.count == 0x0100_0000)
        #expect(node.content.startIndex == 6)
    }

    struct TagCase: Sendable, CustomTestStringConvertible {
        let bytes: [UInt8]
        let tagClass: ASN1Identifier.TagClass
        let number: UInt32
        let constructed: Bool
        var testDescription: String { "\(bytes.map { hexString([$0]) }.joined(separator: " ")) → \(tagClass) \(number)" }
    }

    @Test(
        "tag numbers in the low and high forms",
        arguments: [
            TagCase(bytes: [0x80, 0x00], tagClass: .contextSpecific, number: 0, constructed: false),
            TagCase(bytes: [0x9E, 0x00], tagClass: .contextSpecific, number: 30, constructed: false),
            TagCase(bytes: [0x9F, 0x1F, 0x00], tagClass: .contextSpecific, number: 31, constructed: false),
            TagCase(bytes: [0xBF, 0x7F, 0x00], tagClass: .contextSpecific, number: 127, constructed: true),
            TagCase(bytes: [0xBF, 0x81, 0x00, 0x00], tagClass: .contextSpecific, number: 128, constructed: true),
            TagCase(bytes: [0x5F, 0x87, 0x68, 0x00], tagClass: .application, number: 1000, constructed: false),
            TagCase(bytes: [0xDF, 0xFF, 0xFF, 0xFF, 0x7F, 0x00], tagClass: .private, number: (1 << 28) - 1, constructed: false),
            TagCase(bytes: [0x1F, 0x1F, 0x00], tagClass: .universal, number: 31, constructed: false),
            TagCase(bytes: [0x3F, 0x82, 0x00, 0x00], tagClass: .universal, number: 256, constructed: true),
        ])
    func tags(_ tag: TagCase) throws {
        let node = try DER.parse(tag.bytes)
        #expect(node.identifier == ASN1Identifier(tagNumber: tag.number, tagClass: tag.tagClass))
        #expect(node.identifier.tagClass == tag.tagClass)
        #expect(node.identifier.tagNumber == tag.number)
        #expect(node.isConstructed == tag.constructed)
        #expect(node.content.isEmpty)
        #expect(node.content.startIndex == tag.bytes.count)
    }

    @Test("identifier descriptions")
    func identifierDescriptions() {
        #expect(ASN1Identifier.sequence.description == "SEQUENCE")
        #expect(ASN1Identifier.context(3).description == "[3]")
        #expect(ASN1Identifier(tagNumber: 5, tagClass: .application).description == "[APPLICATION 5]")
        #expect(ASN1Identifier(tagNumber: 9, tagClass: .private).description == "[PRIVATE 9]")
        #expect(ASN1Identifier(tagNumber: 99, tagClass: .universal).description == "UNIVERSAL 99")
    }

    @Test("nested structures: children in order, with absolute offsets")
    func nested() throws {
        // SEQUENCE { SEQUENCE { INTEGER 1 }, SET {}, [0] { INTEGER 5 }, [31] IMPLICIT "ab", NULL }
        let encoded = B.seq(B.seq(B.int(1)), B.set(), B.explicit(0, B.int(5)), [0x9F, 0x1F, 0x02, 0x61, 0x62], B.null)
        let root = try DER.parse(encoded)
        #expect(root.identifier == .sequence)
        #expect(root.isConstructed)
        var children = root.children()
        #expect(children.offset == 2)
        #expect(children.peekIdentifier() == .sequence)

        let first = try children.next(.sequence, "first")
        #expect(first.offset == 2)
        let integerOne = try first.sequence(.sequence, "first") { n throws(DERError) in try n.next(.integer, "one").integer("one") }
        #expect(integerOne == 1)

        let set = try children.next(.set, "set")
        #expect(set.offset == 7)
        #expect(set.isConstructed)
        #expect(set.content.isEmpty)

        #expect(try children.optional(.sequence) == nil)  // next is [0]: nothing consumed
        let tagged = try #require(try children.optional(.context(0)))
        #expect(tagged.offset == 9)
        let five = try tagged.sequence(.context(0), "tagged") { n throws(DERError) in try n.next(.integer, "five").integer("five") }
        #expect(five == 5)

        #expect(children.peekIdentifier() == .context(31))
        let highTag = try children.next(.context(31), "high")
        #expect(highTag.offset == 14)
        #expect(Array(highTag.content) == [0x61, 0x62])

        let null = try children.next(.null, "null")
        try null.null("null")
        #expect(children.isAtEnd)
        #expect(try children.next() == nil)
        #expect(children.peekIdentifier() == nil)
        try children.finish("root")
    }

    @Test("iterator errors: missing field, unexpected tag, unconsumed element")
    func iteratorErrors() throws {
        let root = try DER.parse(B.seq(B.int(1)))
        var children = root.children()
        #expect(throws: DERError(.unexpectedTag, at: 0, "")) { try children.next(.boolean, "flag") }
        children = root.children()
        _ = try children.next(.integer, "one")
        #expect(throws: DERError(.missingField, at: 0, "")) { try children.next(.integer, "two") }
        let error = try #require(throws: DERError.self) { try root.children().finish("root") }
        #expect(error.code == .trailingData)
        #expect(error.offset == 2)
        #expect(throws: DERError(.unexpectedTag, at: 0, "")) {
            try root.sequence(.set, "as a set") { _ throws(DERError) in () }
        }
        #expect(throws: DERError(.trailingData, at: 0, "")) {
            try root.sequence(.sequence, "nothing read") { _ throws(DERError) in () }
        }
    }

    @Test("errors compare by code; offset and reason describe the problem")
    func errorEquality() {
        let a = DERError(.truncated, at: 3, "one")
        let b = DERError(.truncated, at: 9, "two")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != DERError(.trailingData, at: 3, "one"))
        #expect(a.description == "DER truncated at byte 3: one")
    }

    // MARK: Zero copy

    @Test("nodes are slices of the caller's buffer: indices are buffer offsets, storage is shared")
    func zeroCopy() throws {
        let inner = B.seq(B.int(0x1234), B.octet([9, 8, 7]), B.seq(B.utf8("hé")))
        let buffer: [UInt8] = [0xEE, 0xEE, 0xEE] + inner + [0xFF, 0xFF]
        let slice = buffer[3..<(3 + inner.count)]
        let root = try DER.parse(slice)
        #expect(root.offset == 3)
        #expect(root.encodedBytes.indices == slice.indices)
        #expect(root.content.startIndex == 5)
        #expect(root.content.endIndex == 3 + inner.count)

        var children = root.children()
        let integer = try children.next(.integer, "int")
        let octets = try children.next(.octetString, "octets")
        let sequence = try children.next(.sequence, "seq")
        #expect(integer.offset == 5)
        #expect(octets.offset == 9)
        #expect(sequence.offset == 14)
        var grandchildren = sequence.children()
        let string = try #require(try grandchildren.next())
        #expect(string.offset == 16)
        #expect(string.content.indices == 18..<21)
        for node in [root, integer, octets, sequence, string] {
            #expect(buffer[node.encodedBytes.indices].elementsEqual(node.encodedBytes))
            #expect(buffer[node.content.indices].elementsEqual(node.content))
        }
        let integerContent = try integer.integerBytes("int")
        #expect(integerContent.indices == 7..<9)

        // Same storage: the content slice points into the buffer's own memory.
        let shared = buffer.withUnsafeBufferPointer { whole in
            octets.content.withUnsafeBufferPointer { part in
                part.baseAddress == whole.baseAddress.map { $0 + 11 }
            }
        }
        #expect(shared)
    }

    @Test("errors report offsets in the caller's buffer, not the slice")
    func errorOffsetsInSlices() throws {
        let buffer: [UInt8] = [0x00, 0x00, 0x00, 0x00] + B.seq(B.int(1), [0x01, 0x01, 0x01])
        let error = try #require(throws: DERError.self) {
            let root = try DER.parse(buffer[4...])
            try root.sequence(.sequence, "s") { n throws(DERError) in
                _ = try n.next(.integer, "i")
                _ = try n.next(.boolean, "b").boolean("b")
            }
        }
        #expect(error.code == .invalidValue)
        #expect(error.offset == 9)
    }

    // MARK: BOOLEAN, NULL

    @Test("BOOLEAN: 0x00 is false, 0xFF is true")
    func boolean() throws {
        #expect(try DER.parse([0x01, 0x01, 0x00]).boolean("b") == false)
        #expect(try DER.parse([0x01, 0x01, 0xFF]).boolean("b") == true)
        #expect(throws: DERError(.unexpectedTag, at: 0, "")) { try DER.parse([0x02, 0x01, 0x00]).boolean("b") }
        try DER.parse([0x05, 0x00]).null("n")
        #expect(throws: DERError(.invalidValue, at: 0, "")) { try DER.parse([0x05, 0x01, 0x00]).null("n") }
    }

    // MARK: INTEGER

    @Test(
        "INTEGER: minimal two's complement values",
        arguments: [
            ([0x00], 0), ([0x01], 1), ([0x7F], 127), ([0x00, 0x80], 128), ([0x00, 0xFF], 255), ([0x01, 0x00], 256),
            ([0x80], -128), ([0xFF], -1), ([0xFF, 0x7F], -129), ([0xFF, 0x00], -256), ([0x7F, 0xFF, 0xFF, 0xFF], Int(Int32.max)),
            ([0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], Int.max), ([0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], Int.min),
        ] as [([UInt8], Int)])
    func integers(content: [UInt8], value: Int) throws {
        let node = try DER.parse(B.int(bytes: content))
        #expect(try node.integer("i", in: Int.min...Int.max) == value)
        #expect(try node.integerBytes("i").elementsEqual(content))
        // The builder's minimal encoder agrees.
        #expect(B.int(value) == B.int(bytes: content))
    }

    @Test("INTEGER: range checks")
    func integerRanges() throws {
        #expect(throws: DERError(.invalidValue, at: 0, "")) { try DER.parse(B.int(-1)).integer("i") }
        #expect(throws: DERError(.invalidValue, at: 0, "")) { try DER.parse(B.int(Int(Int32.max) + 1)).integer("i") }
        #expect(throws: DERError(.invalidValue, at: 0, "")) { try DER.parse(B.int(5)).integer("i", in: 0...4) }
        let nineBytes = B.int(bytes: [0x01, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(throws: DERError(.invalidValue, at: 0, "")) { try DER.parse(nineBytes).integer("i", in: Int.min...Int.max) }
        // Large INTEGERs are still available as bytes.
        #expect(try DER.parse(nineBytes).integerBytes("i").count == 9)
        // Implicitly tagged INTEGER.
        #expect(try DER.parse(B.implicit(1, [0x03])).integer("i", identifier: .context(1)) == 3)
    }

    // MARK: BIT STRING

    @Test("BIT STRING: unused bits, bit numbering, empty string")
    func bitStrings() throws {
        let one = try DER.parse(B.bits([0x80], unused: 7)).bitString("b")
        #expect(one.bitCount == 1)
        #expect(one.unusedBits == 7)
        #expect(one.bit(0))
        #expect(!one.bit(1))

        let empty = try DER.parse(B.bits([], unused: 0)).bitString("b")
        #expect(empty.bitCount == 0)
        #expect(empty.bytes.isEmpty)
        #expect(!empty.bit(0))

        // 1010 0000 0100 0000 with 6 unused bits: bits 0, 2 and 9 set, 10 bits long.
        let ten = try DER.parse(B.bits([0xA0, 0x40], unused: 6)).bitString("b")
        #expect(ten.bitCount == 10)
        #expect((0..<12).filter { ten.bit($0) } == [0, 2, 9])
        #expect(!ten.bit(-1))
        #expect(ten.bytes.startIndex == 3)

        let full = try DER.parse(B.bits([0xFF, 0x01], unused: 0)).bitString("b")
        #expect(full.bitCount == 16)
        #expect(full.bit(15))
        #expect(ASN1BitString(bytes: [0x40][...], unusedBits: 6).bit(1))
    }

    // MARK: OBJECT IDENTIFIER

    @Test(
        "OBJECT IDENTIFIER: DER content and dotted text agree",
        arguments: [
            ("0.0", [0x00]),
            ("0.39", [0x27]),
            ("1.0", [0x28]),
            ("1.39", [0x4F]),
            ("2.0", [0x50]),
            ("2.5.29.19", [0x55, 0x1D, 0x13]),
            ("1.2.840.113549.1.1.11", [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B]),
            ("1.3.6.1.4.1.311.60.2.1.1", [0x2B, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x3C, 0x02, 0x01, 0x01]),
            ("2.999.3", [0x88, 0x37, 0x03]),
            ("2.100.3", [0x81, 0x34, 0x03]),
            ("1.2.127.128.16383.16384", [0x2A, 0x7F, 0x81, 0x00, 0xFF, 0x7F, 0x81, 0x80, 0x00]),
            ("1.2.4294967296", [0x2A, 0x90, 0x80, 0x80, 0x80, 0x00]),
            ("1.2.9223372036854775807", [0x2A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]),
            ("2.25.329800735698586629295641978511506172918", []),  // > 64 bits: text form rejected
        ] as [(String, [UInt8])])
    func objectIdentifiers(dotted: String, content: [UInt8]) throws {
        guard !content.isEmpty else {
            #expect(ASN1ObjectIdentifier(dotted) == nil)
            return
        }
        let fromText = try #require(ASN1ObjectIdentifier(dotted))
        #expect(Array(fromText.bytes) == content)
        #expect(fromText.dotted == dotted)
        #expect(fromText.description == dotted)
        #expect(B.oidContent(dotted) == content)

        let fromDER = try DER.parse(B.tlv(0x06, content)).objectIdentifier("oid")
        #expect(fromDER == fromText)
        #expect(fromDER.hashValue == fromText.hashValue)
        #expect(fromDER.dotted == dotted)
        #expect(fromDER.arcs == dotted.split(separator: ".").compactMap { UInt64($0) })
    }

    @Test("OBJECT IDENTIFIER literals and the X.690 example 2.999.3")
    func oidLiteral() throws {
        let literal: ASN1ObjectIdentifier = "2.999.3"
        #expect(literal.arcs == [2, 999, 3])
        #expect(Array(literal.bytes) == [0x88, 0x37, 0x03])
        #expect(literal == ASN1ObjectIdentifier("2.999.3"))
        #expect(literal != ASN1ObjectIdentifier("2.999.4"))
        #expect(Set<ASN1ObjectIdentifier>([literal, "2.999.3", "2.999.4"]).count == 2)
        #expect(OID.sha256WithRSAEncryption.dotted == "1.2.840.113549.1.1.11")
    }

    @Test(
        "OBJECT IDENTIFIER: malformed dotted text is rejected",
        arguments: [
            "", "1", "3.1", "1.40", "0.40", "1..2", "1.2.", ".1.2", "a.b", "1.2.-3", "1.2.+3", " 1.2", "1.2 ", "1,2",
            "1.2.18446744073709551616", "2.18446744073709551600", "１.２",
        ])
    func malformedDottedText(text: String) {
        #expect(ASN1ObjectIdentifier(text) == nil)
    }

    @Test("OBJECT IDENTIFIER: the largest arc the text form accepts is also readable from DER")
    func largestArcRoundTrip() throws {
        // 2^64 - 1 fits the UInt64 arcs this type exposes and the text initialiser accepts it;
        // its DER encoding is ten octets, 0x81 then nine more. Text and DER should agree on
        // whether such an OID exists.
        let dotted = "1.2.18446744073709551615"
        let fromText = ASN1ObjectIdentifier(dotted)
        let content: [UInt8] = [0x2A, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]
        let fromDER = try? DER.parse(B.tlv(0x06, content)).objectIdentifier("oid")
        #expect(
            (fromText == nil) == (fromDER == nil),
            "text form \(fromText == nil ? "rejects" : "accepts") \(dotted), DER form \(fromDER == nil ? "rejects" : "accepts") it")
        if let fromText, let fromDER {
            #expect(fromText == fromDER)
            #expect(fromDER.dotted == dotted)
        }
    }

    // MARK: Time

    struct TimeCase: Sendable, CustomTestStringConvertible {
        let tag: UInt8
        let text: String
        let rfc3339: String
        var testDescription: String { "\(tag == 0x17 ? "UTCTime" : "GeneralizedTime") \(text)" }
    }

    @Test(
        "UTCTime (1950–2049 window) and GeneralizedTime",
        arguments: [
            TimeCase(tag: 0x17, text: "500101000000Z", rfc3339: "1950-01-01T00:00:00Z"),
            TimeCase(tag: 0x17, text: "991231235959Z", rfc3339: "1999-12-31T23:59:59Z"),
            TimeCase(tag: 0x17, text: "000101000000Z", rfc3339: "2000-01-01T00:00:00Z"),
            TimeCase(tag: 0x17, text: "491231235959Z", rfc3339: "2049-12-31T23:59:59Z"),
            TimeCase(tag: 0x17, text: "000229120000Z", rfc3339: "2000-02-29T12:00:00Z"),
            TimeCase(tag: 0x17, text: "240229000000Z", rfc3339: "2024-02-29T00:00:00Z"),
            TimeCase(tag: 0x17, text: "700101000000Z", rfc3339: "1970-01-01T00:00:00Z"),
            TimeCase(tag: 0x18, text: "20500101000000Z", rfc3339: "2050-01-01T00:00:00Z"),
            TimeCase(tag: 0x18, text: "19491231235959Z", rfc3339: "1949-12-31T23:59:59Z"),
            TimeCase(tag: 0x18, text: "20000229000000Z", rfc3339: "2000-02-29T00:00:00Z"),
            TimeCase(tag: 0x18, text: "24000229000000Z", rfc3339: "2400-02-29T00:00:00Z"),
            TimeCase(tag: 0x18, text: "99991231235959Z", rfc3339: "9999-12-31T23:59:59Z"),
            TimeCase(tag: 0x18, text: "00010101000000Z", rfc3339: "0001-01-01T00:00:00Z"),
        ])
    func times(_ time: TimeCase) throws {
        let parsed = try DER.parse(B.tlv(time.tag, Array(time.text.utf8))).time("t")
        #expect(parsed.rfc3339 == time.rfc3339)
        #expect(parsed.description == time.rfc3339)
        #expect(parsed.encoding == (time.tag == 0x17 ? .utcTime : .generalizedTime))
        let reparsed = try #require(ASN1Time(rfc3339: time.rfc3339))
        #expect(reparsed == parsed)
        #expect(ASN1Time(secondsSince1970: parsed.secondsSince1970).rfc3339 == time.rfc3339)
    }

    @Test(
        "calendar rules: leap years and month lengths",
        arguments: [
            (2000, 2, 29, true), (2024, 2, 29, true), (1900, 2, 29, false), (2100, 2, 29, false), (2023, 2, 29, false),
            (2023, 2, 28, true), (2023, 4, 31, false), (2023, 4, 30, true), (2023, 12, 31, true), (2023, 13, 1, false),
            (2023, 0, 1, false), (2023, 1, 0, false), (2023, 6, 31, false), (2023, 7, 31, true),
        ] as [(Int, Int, Int, Bool)])
    func calendar(year: Int, month: Int, day: Int, valid: Bool) {
        #expect((ASN1Time(year: year, month: month, day: day, hour: 0, minute: 0, second: 0) != nil) == valid)
    }

    @Test("seconds since 1970 and ordering")
    func epochSeconds() throws {
        let epoch = try DER.parse(B.utc("700101000000Z")).time("t")
        #expect(epoch.secondsSince1970 == 0)
        let y2038 = try DER.parse(B.generalized("20380119031408Z")).time("t")
        #expect(y2038.secondsSince1970 == 2_147_483_648)
        let before = try #require(ASN1Time(year: 1969, month: 12, day: 31, hour: 23, minute: 59, second: 59))
        #expect(before.secondsSince1970 == -1)
        #expect(ASN1Time(secondsSince1970: -1).rfc3339 == "1969-12-31T23:59:59Z")
        #expect(ASN1Time(secondsSince1970: -86_400).rfc3339 == "1969-12-31T00:00:00Z")
        #expect(ASN1Time(secondsSince1970: -86_401).rfc3339 == "1969-12-30T23:59:59Z")
        // Any clock value converts without trapping (a signed pin set's error message renders
        // the injected clock; Int64.min overflowed the floor division).
        for extreme in [Int64.min, Int64.min + 1, Int64.max] { #expect(ASN1Time(secondsSince1970: extreme).secondsSince1970 == extreme) }
        #expect(before < epoch)
        #expect(epoch < y2038)
        // The same instant in both encodings compares equal.
        #expect(try DER.parse(B.utc("491231235959Z")).time("t") == DER.parse(B.generalized("20491231235959Z")).time("t"))
        #expect(ASN1Time(secondsSince1970: 2_524_608_000).encoding == .generalizedTime)  // 2050-01-01
        #expect(ASN1Time(secondsSince1970: 2_524_607_999).encoding == .utcTime)
        #expect(ASN1Time(rfc3339: "2024-01-01T01:00:00+01:00") == ASN1Time(rfc3339: "2024-01-01T00:00:00Z"))
        #expect(ASN1Time(rfc3339: "2024-01-01T00:00:00.123Z") == ASN1Time(rfc3339: "2024-01-01T00:00:00Z"))
        #expect(ASN1Time(rfc3339: "2024-01-01T00:00:00") == nil)
        #expect(ASN1Time(rfc3339: "2024-02-30T00:00:00Z") == nil)
        #expect(throws: DERError(.unexpectedTag, at: 0, "")) { try DER.parse(B.int(1)).time("t") }
    }

    // MARK: Strings

    struct StringCase: Sendable, CustomTestStringConvertible {
        let tag: UInt8
        let content: [UInt8]
        let kind: ASN1String.Kind
        let value: String
        var testDescription: String { "\(kind.rawValue) \(value.debugDescription)" }
    }

    @Test(
        "string types decode with their character sets",
        arguments: [
            StringCase(
                tag: 0x13, content: Array("AZaz09 '()+,-./:=?".utf8), kind: .printableString, value: "AZaz09 '()+,-./:=?"),
            StringCase(tag: 0x16, content: Array("a@b.example*_~\u{7F}".utf8) + [0x00], kind: .ia5String, value: "a@b.example*_~\u{7F}\u{0}"),
            StringCase(tag: 0x0C, content: Array("Zürich 東京 🎉".utf8), kind: .utf8String, value: "Zürich 東京 🎉"),
            StringCase(tag: 0x0C, content: [], kind: .utf8String, value: ""),
            StringCase(tag: 0x1E, content: [0x00, 0x41, 0x00, 0xE9, 0x4E, 0x2D, 0xFF, 0xFD], kind: .bmpString, value: "Aé中\u{FFFD}"),
            StringCase(
                tag: 0x1C, content: [0x00, 0x00, 0x00, 0x41, 0x00, 0x01, 0xF6, 0x00, 0x00, 0x10, 0xFF, 0xFF], kind: .universalString,
                value: "A😀\u{10FFFF}"),
            StringCase(tag: 0x14, content: [0x41, 0xE9, 0xFC, 0xA0, 0xFF], kind: .teletexString, value: "Aéü\u{A0}ÿ"),
            StringCase(tag: 0x1A, content: Array("Visible ~!".utf8), kind: .visibleString, value: "Visible ~!"),
            StringCase(tag: 0x12, content: Array("0123 456".utf8), kind: .numericString, value: "0123 456"),
        ])
    func strings(_ string: StringCase) throws {
        let node = try DER.parse(B.tlv(string.tag, string.content))
        let decoded = try ASN1String(node, "s")
        #expect(decoded.kind == string.kind)
        #expect(decoded.value == string.value)
        #expect(decoded.description == string.value)
        #expect(Array(decoded.rawBytes) == string.content)
        #expect(decoded.rawBytes.startIndex == 2)
    }

    @Test("PrintableString rejects every character outside its set", arguments: Array(UInt8(0)...UInt8(255)))
    func printableCharset(byte: UInt8) {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 '()+,-./:=?".utf8)
        let result = Result { () throws(DERError) in try ASN1String(DER.parse([0x13, 0x01, byte]), "p") }
        switch result {
        case .success(let string): #expect(allowed.contains(byte), "byte \(byte) was accepted: \(string.value)")
        case .failure(let error):
            #expect(!allowed.contains(byte), "byte \(byte) was rejected")
            #expect(error.code == .invalidValue)
        }
    }

    @Test("IA5String accepts 0x00–0x7F and rejects the rest")
    func ia5Charset() throws {
        for byte in UInt8(0)...UInt8(255) {
            let result = Result { () throws(DERError) in try ASN1String(DER.parse([0x16, 0x01, byte]), "i") }
            switch result {
            case .success: #expect(byte < 0x80, "byte \(byte) accepted")
            case .failure(let error): #expect(byte >= 0x80 && error.code == .invalidValue, "byte \(byte): \(error)")
            }
        }
    }

    @Test(
        "invalid UTF8String, BMPString, UniversalString, VisibleString, NumericString contents",
        arguments: [
            (0x0C, [0xC3]), (0x0C, [0xC0, 0x80]), (0x0C, [0xED, 0xA0, 0x80]), (0x0C, [0xF4, 0x90, 0x80, 0x80]), (0x0C, [0xFF]),
            (0x0C, [0x80]), (0x1E, [0x00]), (0x1E, [0x00, 0x41, 0x00]), (0x1E, [0xD8, 0x00]), (0x1E, [0xDC, 0x00, 0x00, 0x41]),
            (0x1C, [0x00, 0x00, 0x41]), (0x1C, [0x00, 0x11, 0x00, 0x00]), (0x1C, [0x00, 0x00, 0xD8, 0x00]), (0x1A, [0x7F]),
            (0x1A, [0x0A]), (0x12, Array("12a".utf8)), (0x12, Array("1-2".utf8)),
        ] as [(UInt8, [UInt8])])
    func invalidStrings(tag: UInt8, content: [UInt8]) throws {
        let node = try DER.parse(B.tlv(tag, content))
        #expect(throws: DERError(.invalidValue, at: 0, "")) { try ASN1String(node, "s") }
    }

    @Test("a non-string tag is not a string")
    func notAString() throws {
        #expect(throws: DERError(.unexpectedTag, at: 0, "")) { try ASN1String(DER.parse(B.int(1)), "s") }
        #expect(throws: DERError(.unexpectedTag, at: 0, "")) { try ASN1String(DER.parse(B.octet([0x41])), "s") }
    }
}
