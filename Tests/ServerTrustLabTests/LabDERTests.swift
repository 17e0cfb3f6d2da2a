import ServerTrustLab
import Testing

/// Known-answer tests for the hand-written DER encoder, plus an `openssl asn1parse` cross-check.
@Suite struct LabDERTests {
    @Test(arguments: [
        (0, [0x00] as [UInt8]), (127, [0x7F]), (128, [0x81, 0x80]), (255, [0x81, 0xFF]),
        (256, [0x82, 0x01, 0x00]), (65_536, [0x83, 0x01, 0x00, 0x00]),
    ])
    func lengthUsesShortestForm(count: Int, expected: [UInt8]) {
        #expect(LabDER.length(count) == expected)
    }

    @Test(arguments: [
        (0, [0x02, 0x01, 0x00] as [UInt8]), (127, [0x02, 0x01, 0x7F]), (128, [0x02, 0x02, 0x00, 0x80]),
        (256, [0x02, 0x02, 0x01, 0x00]), (-1, [0x02, 0x01, 0xFF]), (-128, [0x02, 0x01, 0x80]),
        (-129, [0x02, 0x02, 0xFF, 0x7F]), (Int.max, [0x02, 0x08, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
    ])
    func integersAreMinimalTwosComplement(value: Int, expected: [UInt8]) {
        #expect(LabDER.integer(value) == expected)
    }

    @Test func integerContentIsVerbatimAndUnsignedIsNormalised() {
        #expect(LabDER.integer(content: [0x00, 0x00, 0x01]) == [0x02, 0x03, 0x00, 0x00, 0x01])
        #expect(LabDER.integer(content: []) == [0x02, 0x00])
        #expect(LabDER.integer(unsignedBigEndian: [0x00, 0x00, 0x80]) == [0x02, 0x02, 0x00, 0x80])
        #expect(LabDER.integer(unsignedBigEndian: []) == [0x02, 0x01, 0x00])
    }

    @Test(arguments: [
        ("1.2.840.113549", [0x06, 0x06, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D] as [UInt8]),
        ("2.5.29.19", [0x06, 0x03, 0x55, 0x1D, 0x13]),
        ("2.999.3", [0x06, 0x03, 0x88, 0x37, 0x03]),
        ("0.9.2342.19200300.100.1.25", [0x06, 0x0A, 0x09, 0x92, 0x26, 0x89, 0x93, 0xF2, 0x2C, 0x64, 0x01, 0x19]),
    ])
    func objectIdentifiers(dotted: String, expected: [UInt8]) throws {
        #expect(try LabDER.oid(dotted) == expected)
    }

    @Test(arguments: ["", "1", "3.1", "1.40", "1..2", "1.2.x", "1.2.", "-1.2", "1.18446744073709551616"])
    func invalidObjectIdentifiersThrow(dotted: String) {
        #expect(throws: LabError.self) { try LabDER.oid(dotted) }
    }

    @Test func namedBitStringsDropTrailingZeroBits() {
        #expect(LabDER.namedBitString([0]) == [0x03, 0x02, 0x07, 0x80])  // digitalSignature
        #expect(LabDER.namedBitString([5, 6]) == [0x03, 0x02, 0x01, 0x06])  // keyCertSign|cRLSign
        #expect(LabDER.namedBitString([0, 8]) == [0x03, 0x03, 0x07, 0x80, 0x80])  // + decipherOnly
        #expect(LabDER.namedBitString([]) == [0x03, 0x01, 0x00])
    }

    @Test func setsAreSortedUnlessAskedNotTo() {
        let b = LabDER.utf8String("b")
        let a = LabDER.utf8String("a")
        #expect(LabDER.set([b, a]) == [0x31, 0x06] + a + b)
        #expect(LabDER.set([b, a], sorted: false) == [0x31, 0x06] + b + a)
    }

    @Test func tagsAndStrings() throws {
        #expect(LabDER.identifier(.contextSpecific, constructed: true, number: 3) == [0xA3])
        #expect(LabDER.identifier(.contextSpecific, constructed: false, number: 31) == [0x9F, 0x1F])
        #expect(LabDER.identifier(.application, constructed: false, number: 200) == [0x5F, 0x81, 0x48])
        #expect(LabDER.explicit(0, LabDER.integer(2)) == [0xA0, 0x03, 0x02, 0x01, 0x02])
        #expect(try LabDER.implicit(2, LabDER.integer(5)) == [0x82, 0x01, 0x05])
        #expect(try LabDER.implicit(1, LabDER.sequence([])) == [0xA1, 0x00])
        #expect(LabDER.string("é", as: .bmp) == [0x1E, 0x02, 0x00, 0xE9])
        #expect(LabDER.string("A", as: .universal) == [0x1C, 0x04, 0x00, 0x00, 0x00, 0x41])
        #expect(LabDER.string("a@b", as: .printable) == [0x13, 0x03, 0x61, 0x40, 0x62])  // not validated on purpose
        #expect(LabDER.boolean(true) == [0x01, 0x01, 0xFF])
        #expect(LabDER.null() == [0x05, 0x00])
    }

    /// RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050 and before 1950.
    @Test(arguments: [
        (LabClock.reference, "260101000000Z", LabDER.Tag.utcTime),
        (Int64(2_524_607_999), "491231235959Z", LabDER.Tag.utcTime),  // 2049-12-31T23:59:59Z
        (Int64(2_524_608_000), "20500101000000Z", LabDER.Tag.generalizedTime),  // 2050-01-01T00:00:00Z
        (Int64(-631_152_000), "500101000000Z", LabDER.Tag.utcTime),  // 1950-01-01T00:00:00Z
        (Int64(-631_152_001), "19491231235959Z", LabDER.Tag.generalizedTime),  // 1949-12-31T23:59:59Z
        (Int64(951_782_400), "000229000000Z", LabDER.Tag.utcTime),  // 2000-02-29 leap day
        (Int64(253_402_300_799), "99991231235959Z", LabDER.Tag.generalizedTime),
    ])
    func timesFollowRFC5280(seconds: Int64, text: String, tag: UInt8) throws {
        let encoded = try LabDER.time(seconds)
        #expect(encoded == [tag, UInt8(text.utf8.count)] + Array(text.utf8))
    }

    @Test func timesOutOfRangeThrow() {
        #expect(throws: LabError.self) { try LabDER.utcTime(2_524_608_000) }
        #expect(throws: LabError.self) { try LabDER.time(253_402_300_800) }  // year 10000
    }

    @Test func readerRoundTripsAndRejectsBadFraming() throws {
        let encoded = LabDER.sequence([LabDER.integer(1), LabDER.octetString(Array(repeating: 7, count: 300))])
        let element = try LabDER.parse(encoded)
        #expect(element.tag == 0x30 && element.isConstructed && element.encoded == encoded)
        let children = try element.children()
        #expect(children.count == 2 && children[1].content.count == 300)
        #expect(throws: LabError.self) { try LabDER.parse(encoded + [0x00]) }
        #expect(throws: LabError.self) { try LabDER.parse(Array(encoded.dropLast())) }
        #expect(throws: LabError.self) { try LabDER.parse([0x30, 0x80, 0x00, 0x00]) }
    }

    @Test func opensslParsesEveryPrimitive() throws {
        let directory = try TemporaryDirectory()
        let structure = LabDER.sequence([
            LabDER.boolean(true), LabDER.integer(-129), LabDER.bitString([0xA0], unusedBits: 5),
            LabDER.octetString([1, 2]), LabDER.null(), try LabDER.oid("1.2.840.10045.4.3.2"),
            LabDER.enumerated(3), LabDER.utf8String("ü"), LabDER.printableString("P"), LabDER.ia5String("i"),
            LabDER.string("b", as: .bmp), LabDER.string("u", as: .universal), LabDER.string("t", as: .teletex),
            LabDER.string("v", as: .visible), LabDER.string("1", as: .numeric),
            try LabDER.time(LabClock.reference), try LabDER.generalizedTime(LabClock.reference),
            LabDER.set([LabDER.integer(2), LabDER.integer(1)]), LabDER.explicit(0, LabDER.integer(1)),
            LabDER.contextSpecific(40, constructed: false, [0x01]),
        ])
        let result = try OpenSSLCLI.asn1parse(structure, in: directory)
        #expect(result.ok, "\(result)")
        for expected in [
            "BOOLEAN", "INTEGER           :-81", "ecdsa-with-SHA256", "ENUMERATED", "UTF8STRING",
            "PRINTABLESTRING", "IA5STRING", "BMPSTRING", "UNIVERSALSTRING", "T61STRING",
            "VISIBLESTRING", "NUMERICSTRING", "UTCTIME           :260101000000Z",
            "GENERALIZEDTIME   :20260101000000Z", "cont [ 0 ]", "cont [ 40 ]",
        ] {
            #expect(result.output.contains(expected), "missing \(expected) in \(result.output)")
        }
    }
}
