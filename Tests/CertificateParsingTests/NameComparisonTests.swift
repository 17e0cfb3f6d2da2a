import CertificateParsing
import ServerTrustLab
import Testing

/// RFC 5280 §7.1 name comparison: RFC 4518 string preparation for string values whatever
/// their ASN.1 string type, byte equality otherwise, RDN and RDN-sequence rules; the hash that
/// indexes names consistently with the comparison. Names are encoded by ServerTrustLab, not by
/// the code under test.
@Suite("Distinguished-name comparison (RFC 5280 7.1)")
struct NameComparisonTests {
    static func name(_ rdns: [[LabAttribute]]) throws -> DistinguishedName {
        try DistinguishedName(derEncoded: LabName(rdns: rdns).derEncoded())
    }

    static func single(_ type: String, _ value: String, _ stringType: LabStringType? = nil) throws -> DistinguishedName {
        try name([[LabAttribute("C", "US")], [LabAttribute(type, value, stringType: stringType)]])
    }

    /// Two values of one attribute, and whether §7.1 says they match.
    struct Pair: Sendable, CustomTestStringConvertible {
        let label: String
        let a: (String, LabStringType)
        let b: (String, LabStringType)
        let matches: Bool
        var testDescription: String { label }
    }

    static let pairs: [Pair] = [
        Pair(label: "identical", a: ("Good CA", .printable), b: ("Good CA", .printable), matches: true),
        Pair(label: "ASCII case (RFC 4518 2.2 case folding)", a: ("Good CA", .printable), b: ("gOOD ca", .printable), matches: true),
        Pair(label: "PrintableString vs UTF8String (PKITS 4.3.10)", a: ("Good CA", .printable), b: ("Good CA", .utf8), matches: true),
        Pair(label: "PrintableString vs IA5String vs TeletexString", a: ("Good CA", .ia5), b: ("good ca", .teletex), matches: true),
        Pair(label: "leading and trailing spaces (RFC 4518 2.6.1)", a: ("Good CA", .utf8), b: ("  Good CA   ", .utf8), matches: true),
        Pair(label: "internal runs of spaces compress to one", a: ("Good CA", .utf8), b: ("Good    CA", .utf8), matches: true),
        Pair(label: "tab and newline are spaces", a: ("Good CA", .utf8), b: ("Good\t\nCA", .utf8), matches: true),
        Pair(label: "control characters map to nothing", a: ("Good CA", .utf8), b: ("Go\u{01}od CA", .utf8), matches: true),
        Pair(label: "a space is significant between characters", a: ("Good CA", .utf8), b: ("GoodCA", .utf8), matches: false),
        Pair(label: "different text", a: ("Good CA", .utf8), b: ("Good CB", .utf8), matches: false),
        Pair(label: "prefix only", a: ("Good CA", .utf8), b: ("Good CA 2", .utf8), matches: false),
        Pair(label: "Unicode case folding", a: ("Ärzte Zürich", .utf8), b: ("ärzte zÜRICH", .utf8), matches: true),
        Pair(label: "full case folding: ß and SS", a: ("Straße", .utf8), b: ("STRASSE", .utf8), matches: true),
        Pair(label: "canonical equivalence: precomposed and decomposed", a: ("Café", .utf8), b: ("Cafe\u{301}", .utf8), matches: true),
        Pair(label: "BMPString vs UTF8String", a: ("Zürich CA", .bmp), b: ("zürich ca", .utf8), matches: true),
        Pair(label: "UniversalString vs PrintableString", a: ("Good CA", .universal), b: ("good ca", .printable), matches: true),
        Pair(label: "soft hyphen maps to nothing", a: ("Goodca", .utf8), b: ("Good\u{AD}ca", .utf8), matches: true),
        Pair(label: "no-break space is a space", a: ("Good CA", .utf8), b: ("Good\u{A0}CA", .utf8), matches: true),
        Pair(label: "KELVIN SIGN folds to an ASCII k (and hashes like it)", a: ("\u{212A}elvin CA", .utf8), b: ("kelvin ca", .printable), matches: true),
        Pair(label: "accents are significant", a: ("Cafe", .utf8), b: ("Café", .utf8), matches: false),
        Pair(label: "prohibited U+FFFD: only identical encodings match", a: ("Bad \u{FFFD}", .utf8), b: ("bad \u{FFFD}", .utf8), matches: false),
    ]

    @Test("attribute values compare after RFC 4518 preparation, whatever their string type", arguments: pairs)
    func values(_ pair: Pair) throws {
        let a = try Self.single("CN", pair.a.0, pair.a.1)
        let b = try Self.single("CN", pair.b.0, pair.b.1)
        #expect(a.matches(b) == pair.matches)
        #expect(b.matches(a) == pair.matches)
        // Matching names hash alike, so an index keyed on the hash finds them.
        if pair.matches { #expect(a.comparisonHash == b.comparisonHash) }
        #expect(a.matches(a) && b.matches(b))
    }

    @Test("an identical prohibited value still matches itself (byte equality)")
    func prohibitedIdentical() throws {
        let a = try Self.single("CN", "Bad \u{FFFD}", .utf8)
        let b = try Self.single("CN", "Bad \u{FFFD}", .utf8)
        #expect(a.matches(b))
    }

    @Test("RDN rules: order of RDNs matters, order inside a multi-valued RDN does not, counts must agree")
    func rdnStructure() throws {
        let base = try Self.name([[LabAttribute("C", "US")], [LabAttribute("O", "Org")], [LabAttribute("CN", "x")]])
        let reordered = try Self.name([[LabAttribute("C", "US")], [LabAttribute("CN", "x")], [LabAttribute("O", "Org")]])
        let fewer = try Self.name([[LabAttribute("C", "US")], [LabAttribute("O", "Org")]])
        #expect(!base.matches(reordered))
        #expect(!base.matches(fewer) && !fewer.matches(base))
        let multi = try Self.name([[LabAttribute("O", "Org"), LabAttribute("OU", "Unit")], [LabAttribute("CN", "x")]])
        let multiSwapped = try Self.name([[LabAttribute("OU", "unit"), LabAttribute("O", "ORG")], [LabAttribute("CN", "X")]])
        let multiShort = try Self.name([[LabAttribute("O", "Org")], [LabAttribute("CN", "x")]])
        #expect(multi.matches(multiSwapped))
        #expect(multi.comparisonHash == multiSwapped.comparisonHash)
        #expect(!multi.matches(multiShort))
        // The same text under another attribute type is another name.
        #expect(!(try Self.single("CN", "x")).matches(try Self.single("O", "x")))
    }

    @Test("values that are not strings compare byte for byte")
    func nonStringValues() throws {
        let type = try LabDER.oid("2.5.4.45")
        let octets: (UInt8) throws -> DistinguishedName = { byte in
            let atv = LabDER.sequence([type, LabDER.octetString([byte])])
            return try DistinguishedName(derEncoded: LabDER.sequence([LabDER.set([atv])]))
        }
        #expect(try octets(0x41).matches(octets(0x41)))
        #expect(try !octets(0x41).matches(octets(0x61)))
    }

    @Test("subtree membership (directoryName constraints): the RDNs of the base start the name, compared as 7.1 compares")
    func subtrees() throws {
        let base = try Self.name([[LabAttribute("C", "US")], [LabAttribute("O", "Test Certificates 2011")]])
        let inside = try Self.name([[LabAttribute("C", "us")], [LabAttribute("O", "test  certificates 2011", stringType: .utf8)], [LabAttribute("CN", "EE")]])
        let outside = try Self.name([[LabAttribute("C", "US")], [LabAttribute("O", "Other")], [LabAttribute("CN", "EE")]])
        #expect(inside.isWithin(base))
        #expect(base.isWithin(base))
        #expect(!outside.isWithin(base))
        #expect(!base.isWithin(inside))
    }

    @Test("appending an RDN makes the full name of a nameRelativeToCRLIssuer point")
    func appending() throws {
        let issuer = try Self.name([[LabAttribute("C", "US")], [LabAttribute("O", "Org")]])
        let expected = try Self.name([[LabAttribute("C", "US")], [LabAttribute("O", "Org")], [LabAttribute("CN", "CRL1")]])
        let rdn = try #require(expected.rdns.last)
        let full = issuer.appending(rdn)
        #expect(full == expected)
        #expect(full.rfc4514 == "CN=CRL1,O=Org,C=US")
    }

    @Test("self-issued (RFC 5280 6.1) uses the 7.1 comparison: issuer and subject may differ in case")
    func selfIssued() throws {
        let key = try LabKey.shared(.p256, slot: 40)
        var spec = LabCertificateSpec(subject: LabName([("C", "US"), ("CN", "Rollover CA")]))
        spec.issuerNameOverride = LabName(rdns: [[LabAttribute("C", "US")], [LabAttribute("CN", "ROLLOVER  ca", stringType: .printable)]])
        let certificate = try Certificate(derEncoded: LabCertificate.issue(spec, subjectKey: key).der)
        #expect(certificate.issuer != certificate.subject)
        #expect(certificate.isSelfIssued)
        var other = spec
        other.issuerNameOverride = LabName([("C", "US"), ("CN", "Issuing CA")])
        #expect(!(try Certificate(derEncoded: LabCertificate.issue(other, subjectKey: key).der)).isSelfIssued)
    }
}
