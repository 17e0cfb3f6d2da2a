import CertificateParsing
import Foundation
import Testing

private typealias B = DERBuilder

/// One crafted malformed input and the exact error it must produce.
struct MalformedCase: Sendable, CustomTestStringConvertible {
    /// A decoder applied after `DER.parse` succeeds.
    enum Decoder: Sendable {
        case boolean, integer, bitString, objectIdentifier, time, string, null
        /// `SEQUENCE { INTEGER }` read with `sequence`, which must consume every child.
        case sequenceOfOneInteger
    }

    enum Input: Sendable {
        /// `DER.parse` alone.
        case der([UInt8])
        /// `DER.parse`, then a primitive decoder.
        case value([UInt8], Decoder)
        /// `PEMDocument.parseAll`.
        case pem(String)
        /// `PEMDocument(pemEncoded:)` (exactly one block).
        case singlePEM(String)
        /// `Certificate(derEncoded:)`.
        case certificate([UInt8])
        /// `Certificate.load` (PEM bundle or DER).
        case load([UInt8])
    }

    enum Expected: Sendable, CustomStringConvertible {
        case der(DERError.Code)
        case pem(PEMError.Code)
        var description: String {
            switch self {
            case .der(let code): return "DERError.\(code)"
            case .pem(let code): return "PEMError.\(code)"
            }
        }
    }

    let name: String
    let input: Input
    let expected: Expected
    /// The exact offset (DER) or line (PEM), where the case pins it down.
    let at: Int?

    init(_ name: String, _ input: Input, _ expected: Expected, at: Int? = nil) {
        self.name = name
        self.input = input
        self.expected = expected
        self.at = at
    }

    var testDescription: String { "\(name) → \(expected)" }
}

extension MalformedCase {
    static func der(_ name: String, _ bytes: [UInt8], _ code: DERError.Code, at: Int? = nil) -> MalformedCase {
        MalformedCase(name, .der(bytes), .der(code), at: at)
    }
    static func value(_ name: String, _ bytes: [UInt8], _ decoder: Decoder, _ code: DERError.Code, at: Int? = nil) -> MalformedCase {
        MalformedCase(name, .value(bytes, decoder), .der(code), at: at)
    }
    static func pem(_ name: String, _ text: String, _ code: PEMError.Code, line: Int? = nil) -> MalformedCase {
        MalformedCase(name, .pem(text), .pem(code), at: line)
    }
    static func certificate(_ name: String, _ template: CertificateTemplate, _ code: DERError.Code) -> MalformedCase {
        MalformedCase(name, .certificate(template.der), .der(code))
    }
    static func certificate(_ name: String, bytes: [UInt8], _ code: DERError.Code) -> MalformedCase {
        MalformedCase(name, .certificate(bytes), .der(code))
    }

    static func utc(_ text: String) -> [UInt8] { B.utc(text) }
    static func generalized(_ text: String) -> [UInt8] { B.generalized(text) }
    static func pemBlock(_ body: String, label: String = "CERTIFICATE") -> String {
        "-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n"
    }

    static let base = CertificateTemplate()

    /// DER headers and lengths.
    static let encodings: [MalformedCase] = [
        .der("empty input", [], .truncated, at: 0),
        .der("truncated header: identifier only", [0x30], .truncated, at: 0),
        .der("truncated header: high tag number runs out", [0x9F, 0x81], .truncated, at: 0),
        .der("truncated header: long-form length runs out", [0x04, 0x82, 0x01], .truncated, at: 0),
        .der("truncated content", [0x04, 0x05, 0x01, 0x02], .truncated, at: 0),
        .der("child overruns its parent", [0x30, 0x03, 0x04, 0x05, 0x01], .truncated, at: 2),
        .der("long-form length with a leading zero", [0x04, 0x82, 0x00, 0x80] + [UInt8](repeating: 0, count: 128), .nonMinimalLength, at: 0),
        .der("long-form length below 128", [0x04, 0x81, 0x05, 1, 2, 3, 4, 5], .nonMinimalLength, at: 0),
        .der("long-form length 127", [0x04, 0x81, 0x7F] + [UInt8](repeating: 0, count: 127), .nonMinimalLength, at: 0),
        .der("indefinite length (BER 0x80)", [0x30, 0x80, 0x05, 0x00, 0x00, 0x00], .indefiniteLength, at: 0),
        .der("five length octets", [0x04, 0x85, 0x01, 0x00, 0x00, 0x00, 0x00], .unsupportedLength, at: 0),
        .der("reserved length octet 0xFF", [0x04, 0xFF, 0x00], .unsupportedLength, at: 0),
        .der("length 0xFFFFFFFF (absurd, must not allocate)", [0x04, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x00], .truncated, at: 0),
        .der("nested length 0xFFFFFFFF", [0x30, 0x06, 0x04, 0x84, 0xFF, 0xFF, 0xFF, 0xFF], .truncated, at: 2),
        .der("trailing bytes after the outermost element", [0x05, 0x00, 0x00], .trailingData, at: 2),
        .der("a second element after the outermost one", B.seq(B.int(1)) + B.seq(B.int(2)), .trailingData, at: 5),
        .value("trailing element inside a SEQUENCE (unconsumed)", B.seq(B.int(1), B.int(2)), .sequenceOfOneInteger, .trailingData, at: 5),
        .der("constructed INTEGER", [0x22, 0x03, 0x02, 0x01, 0x01], .invalidConstruction, at: 0),
        .der("constructed OCTET STRING", [0x24, 0x03, 0x04, 0x01, 0x00], .invalidConstruction, at: 0),
        .der("constructed BOOLEAN", [0x21, 0x03, 0x01, 0x01, 0xFF], .invalidConstruction, at: 0),
        .der("constructed UTF8String", [0x2C, 0x03, 0x0C, 0x01, 0x41], .invalidConstruction, at: 0),
        .der("constructed BIT STRING inside a SEQUENCE", B.seq([0x23, 0x03, 0x03, 0x01, 0x00]), .invalidConstruction, at: 2),
        .der("primitive SEQUENCE", [0x10, 0x03, 0x02, 0x01, 0x01], .invalidConstruction, at: 0),
        .der("primitive SET", [0x11, 0x00], .invalidConstruction, at: 0),
        .der("high tag number with a leading 0x80 octet", [0x9F, 0x80, 0x1F, 0x00], .invalidTag, at: 0),
        .der("high-tag form for tag number 30", [0x9F, 0x1E, 0x00], .invalidTag, at: 0),
        .der("high-tag form for universal INTEGER (2)", [0x1F, 0x02, 0x01, 0x00], .invalidTag, at: 0),
        .der("tag number longer than four octets", [0x9F, 0x81, 0x80, 0x80, 0x80, 0x00, 0x00], .invalidTag, at: 0),
        .der("bad tag inside a SEQUENCE", B.seq(B.int(1), [0x9F, 0x05, 0x00]), .invalidTag, at: 5),
    ]

    /// Primitive values.
    static let values: [MalformedCase] = [
        .value("BOOLEAN 0x01 (non-DER TRUE)", [0x01, 0x01, 0x01], .boolean, .invalidValue, at: 0),
        .value("BOOLEAN 0x7F", [0x01, 0x01, 0x7F], .boolean, .invalidValue),
        .value("BOOLEAN of length 2", [0x01, 0x02, 0xFF, 0xFF], .boolean, .invalidValue),
        .value("empty BOOLEAN", [0x01, 0x00], .boolean, .invalidValue),
        .value("BOOLEAN read from an INTEGER", B.int(1), .boolean, .unexpectedTag),
        .value("empty INTEGER", [0x02, 0x00], .integer, .invalidValue),
        .value("non-minimal INTEGER 00 7F", [0x02, 0x02, 0x00, 0x7F], .integer, .invalidValue),
        .value("non-minimal INTEGER FF 80", [0x02, 0x02, 0xFF, 0x80], .integer, .invalidValue),
        .value("non-minimal INTEGER 00 00", [0x02, 0x02, 0x00, 0x00], .integer, .invalidValue),
        .value("non-minimal INTEGER FF FF", [0x02, 0x02, 0xFF, 0xFF], .integer, .invalidValue),
        .value("NULL with content", [0x05, 0x01, 0x00], .null, .invalidValue),
        .value("BIT STRING with 8 unused bits", [0x03, 0x02, 0x08, 0x00], .bitString, .invalidValue),
        .value("BIT STRING with non-zero unused bits", [0x03, 0x02, 0x01, 0x01], .bitString, .invalidValue),
        .value("empty BIT STRING with unused bits", [0x03, 0x01, 0x03], .bitString, .invalidValue),
        .value("BIT STRING without the unused-bits octet", [0x03, 0x00], .bitString, .invalidValue),
        .value("empty OBJECT IDENTIFIER", [0x06, 0x00], .objectIdentifier, .invalidValue),
        .value("OID arc starting with 0x80", [0x06, 0x03, 0x2A, 0x80, 0x01], .objectIdentifier, .invalidValue),
        .value("OID first arc starting with 0x80", [0x06, 0x02, 0x80, 0x01], .objectIdentifier, .invalidValue),
        .value("OID ending mid-arc", [0x06, 0x02, 0x2A, 0x86], .objectIdentifier, .invalidValue),
        .value(
            "OID arc wider than 64 bits", [0x06, 0x0B, 0x2A, 0x82, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00],
            .objectIdentifier, .invalidValue),
        .value("UTCTime 13th month", utc("251301000000Z"), .time, .invalidValue),
        .value("UTCTime month 00", utc("250001000000Z"), .time, .invalidValue),
        .value("UTCTime February 30", utc("250230000000Z"), .time, .invalidValue),
        .value("UTCTime February 29 in a common year", utc("250229000000Z"), .time, .invalidValue),
        .value("UTCTime hour 24", utc("250101240000Z"), .time, .invalidValue),
        .value("UTCTime second 60", utc("250101235960Z"), .time, .invalidValue),
        .value("UTCTime without Z", utc("250101000000"), .time, .invalidValue),
        .value("UTCTime with a trailing space instead of Z", utc("250101000000 "), .time, .invalidValue),
        .value("UTCTime with lowercase z", utc("250101000000z"), .time, .invalidValue),
        .value("UTCTime with fractional seconds", utc("250101000000.5Z"), .time, .invalidValue),
        .value("UTCTime with a timezone offset", utc("250101000000+0100"), .time, .invalidValue),
        .value("UTCTime of 11 characters (no seconds)", utc("2501010000Z"), .time, .invalidValue),
        .value("UTCTime with a non-digit", utc("25a101000000Z"), .time, .invalidValue),
        .value("UTCTime with a sign", utc("-50101000000Z"), .time, .invalidValue),
        .value("GeneralizedTime with a fraction", generalized("20250101000000.5Z"), .time, .invalidValue),
        .value("GeneralizedTime without Z", generalized("20250101000000"), .time, .invalidValue),
        .value("GeneralizedTime with an offset", generalized("20250101000000+0000"), .time, .invalidValue),
        .value("GeneralizedTime 2100-02-29", generalized("21000229000000Z"), .time, .invalidValue),
        .value("GeneralizedTime without seconds", generalized("202501010000Z"), .time, .invalidValue),
        .value("time read from an INTEGER", B.int(5), .time, .unexpectedTag),
        .value("PrintableString with @", B.printable("a@b"), .string, .invalidValue),
        .value("PrintableString with *", B.printable("*.example"), .string, .invalidValue),
        .value("PrintableString with _", B.printable("a_b"), .string, .invalidValue),
        .value("IA5String with byte 0x80", [0x16, 0x02, 0x41, 0x80], .string, .invalidValue),
        .value("IA5String with UTF-8 é", B.ia5("é"), .string, .invalidValue),
        .value("invalid UTF-8 (lone continuation)", [0x0C, 0x02, 0x41, 0x80], .string, .invalidValue),
        .value("invalid UTF-8 (overlong NUL)", [0x0C, 0x02, 0xC0, 0x80], .string, .invalidValue),
        .value("invalid UTF-8 (truncated sequence)", [0x0C, 0x02, 0xE6, 0x97], .string, .invalidValue),
        .value("odd-length BMPString", [0x1E, 0x03, 0x00, 0x41, 0x00], .string, .invalidValue),
        .value("BMPString with a surrogate", [0x1E, 0x02, 0xD8, 0x3D], .string, .invalidValue),
        .value("UniversalString not a multiple of 4", [0x1C, 0x02, 0x00, 0x41], .string, .invalidValue),
    ]

    /// Nesting limits.
    static let nesting: [MalformedCase] = [
        .der("10,000 nested SEQUENCEs", B.nested(10_000), .tooDeep),
        .der("10,000 nested SEQUENCEs around an INTEGER", B.nested(10_000, innermost: B.int(1)), .tooDeep),
        .der("maximumDepth + 1 nested SEQUENCEs", B.nested(DER.maximumDepth + 1, innermost: B.null), .tooDeep),
        .der("10,000 nested [0] tags", nestedContext(10_000), .tooDeep),
    ]

    static func nestedContext(_ count: Int) -> [UInt8] {
        B.nested(count).map { $0 == 0x30 ? 0xA0 : $0 }
    }

    /// PEM framing and base64.
    static let pemCases: [MalformedCase] = [
        .pem("PEM: no END line", "-----BEGIN CERTIFICATE-----\nMAA=\n", .missingEnd, line: 1),
        .pem("PEM: END label mismatch", "-----BEGIN CERTIFICATE-----\nMAA=\n-----END PUBLIC KEY-----\n", .labelMismatch, line: 3),
        .pem("PEM: END without BEGIN", "text\n-----END CERTIFICATE-----\n", .unexpectedEnd, line: 2),
        .pem(
            "PEM: BEGIN inside an open block", "-----BEGIN CERTIFICATE-----\nMAA=\n-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n",
            .missingEnd, line: 1),
        .pem("PEM: bad base64 character", pemBlock("MA!="), .invalidBase64, line: 1),
        .pem("PEM: URL-safe base64 character", pemBlock("MA-_"), .invalidBase64),
        .pem("PEM: bad padding (missing =)", pemBlock("Zg="), .invalidBase64),
        .pem("PEM: length not a multiple of 4", pemBlock("MAAA0"), .invalidBase64),
        .pem("PEM: three padding characters", pemBlock("Z==="), .invalidBase64),
        .pem("PEM: non-zero padding bits (one =)", pemBlock("Zm9="), .invalidBase64),
        .pem("PEM: non-zero padding bits (two =)", pemBlock("Zh=="), .invalidBase64),
        .pem("PEM: data after padding", pemBlock("Zg==\nZm9v"), .invalidBase64),
        .pem("PEM: padding in the middle of a quantum", pemBlock("Z=g="), .invalidBase64),
        .pem(
            "PEM: encrypted (RFC 1421 Proc-Type headers)",
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n\nMAA=\n-----END RSA PRIVATE KEY-----\n",
            .unsupportedHeaders, line: 2),
        .pem("PEM: empty block", "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n", .invalidBase64, line: 1),
        .pem("PEM: block of whitespace only", "-----BEGIN CERTIFICATE-----\n   \n\t\n-----END CERTIFICATE-----\n", .invalidBase64),
        MalformedCase("PEM: no block where exactly one is required", .singlePEM("just text\n"), .pem(.noBlock)),
        MalformedCase("PEM: two blocks where exactly one is required", .singlePEM(pemBlock("MAA=") + pemBlock("MAA=")), .pem(.noBlock)),
    ]

    /// `Certificate.load` wrapping.
    static let loading: [MalformedCase] = [
        MalformedCase("load: empty bytes (read as DER)", .load([]), .der(.truncated)),
        MalformedCase("load: DER with trailing garbage", .load(base.der + [0x00]), .der(.trailingData)),
        MalformedCase("load: PEM with no CERTIFICATE block", .load(Array(pemBlock("MAA=", label: "PUBLIC KEY").utf8)), .pem(.noBlock)),
        MalformedCase("load: PEM CERTIFICATE that is not DER", .load(Array(pemBlock("MIA=").utf8)), .der(.indefiniteLength)),
        MalformedCase("load: broken PEM", .load(Array("-----BEGIN CERTIFICATE-----\nMAA=\n".utf8)), .pem(.missingEnd)),
    ]

    /// X.509 structure, built with ``CertificateTemplate`` and mutated.
    static let x509: [MalformedCase] = [
        .certificate(
            "X.509: duplicate extension",
            base.with { $0.extensions = CertificateTemplate.defaultExtensions + [B.ext("2.5.29.14", B.octet([1, 2, 3]))] }, .invalidValue),
        .certificate(
            "X.509: TBS signature algorithm differs from the outer one",
            base.with { $0.outerSignature = B.seq(B.oid("1.3.101.113")) }, .invalidValue),
        .certificate(
            "X.509: TBS algorithm differs only by NULL parameters",
            base.with {
                $0.tbsSignature = B.seq(B.oid("1.2.840.113549.1.1.11"), B.null)
                $0.outerSignature = B.seq(B.oid("1.2.840.113549.1.1.11"))
            }, .invalidValue),
        .certificate("X.509: version 4", base.with { $0.version = B.explicit(0, B.int(3)) }, .invalidValue),
        .certificate("X.509: negative version", base.with { $0.version = B.explicit(0, B.int(-1)) }, .invalidValue),
        .certificate("X.509: explicit v1 version (DEFAULT encoded)", base.with { $0.version = B.explicit(0, B.int(0)) }, .invalidValue),
        .certificate("X.509: version as a primitive [0]", base.with { $0.version = B.implicit(0, [0x02]) }, .invalidConstruction),
        .certificate("X.509: extensions in a v1 certificate", base.with { $0.version = nil }, .invalidValue),
        .certificate("X.509: extensions in a v2 certificate", base.with { $0.version = B.explicit(0, B.int(1)) }, .invalidValue),
        .certificate(
            "X.509: issuerUniqueID in a v1 certificate",
            base.with {
                $0.version = nil
                $0.extensions = nil
                $0.issuerUniqueID = B.implicit(1, [0x00, 0x01])
            }, .invalidValue),
        .certificate("X.509: notAfter February 29 2100", base.with { $0.notAfter = B.generalized("21000229000000Z") }, .invalidValue),
        .certificate("X.509: notBefore UTCTime with an offset", base.with { $0.notBefore = B.utc("250101000000+0000") }, .invalidValue),
        .certificate("X.509: notBefore is not a time", base.with { $0.notBefore = B.int(0) }, .unexpectedTag),
        .certificate(
            "X.509: validity without notAfter",
            base.with {
                $0.notAfter = []
            }, .missingField),
        .certificate(
            "X.509: extension with critical explicitly FALSE",
            base.with { $0.extensions = [B.ext("2.5.29.14", critical: false, B.octet([1]))] }, .invalidValue),
        .certificate(
            "X.509: keyUsage with no bits (empty BIT STRING)",
            base.with { $0.extensions = [B.ext("2.5.29.15", critical: true, B.bits([]))] }, .invalidValue),
        .certificate(
            "X.509: keyUsage with all bits zero", base.with { $0.extensions = [B.ext("2.5.29.15", B.bits([0x00], unused: 7))] },
            .invalidValue),
        .certificate("X.509: empty subjectAltName", base.with { $0.extensions = [B.ext("2.5.29.17", B.seq())] }, .invalidValue),
        .certificate("X.509: empty extensions SEQUENCE", base.with { $0.extensions = [] }, .invalidValue),
        .certificate(
            "X.509: subjectAltName dNSName with a non-ASCII byte",
            base.with { $0.extensions = [B.ext("2.5.29.17", B.seq(B.implicit(2, Array("bücher.example".utf8))))] }, .invalidValue),
        .certificate(
            "X.509: subjectAltName with a constructed dNSName",
            base.with { $0.extensions = [B.ext("2.5.29.17", B.seq(B.tlv(0xA2, B.ia5("a.example"))))] }, .invalidConstruction),
        .certificate(
            "X.509: subjectAltName with an unknown GeneralName [9]",
            base.with { $0.extensions = [B.ext("2.5.29.17", B.seq(B.implicit(9, [0x01])))] }, .unexpectedTag),
        .certificate(
            "X.509: extnValue with trailing bytes",
            base.with { $0.extensions = [B.ext("2.5.29.19", B.seq(B.bool(true)) + [0x00])] }, .trailingData),
        .certificate(
            "X.509: basicConstraints negative pathLenConstraint",
            base.with { $0.extensions = [B.ext("2.5.29.19", B.seq(B.bool(true), B.int(-1)))] }, .invalidValue),
        .certificate(
            "X.509: nameConstraints subtree with minimum",
            base.with {
                $0.extensions = [B.ext("2.5.29.30", B.seq(B.explicit(0, B.seq(B.implicit(2, Array("a.example".utf8)), B.implicit(0, [0x01])))))]
            }, .invalidValue),
        .certificate("X.509: empty nameConstraints", base.with { $0.extensions = [B.ext("2.5.29.30", B.seq())] }, .invalidValue),
        .certificate(
            "X.509: authorityKeyIdentifier issuer without serial",
            base.with {
                $0.extensions = [B.ext("2.5.29.35", B.seq(B.explicit(1, B.implicit(2, Array("ca.example".utf8)))))]
            }, .invalidValue),
        .certificate(
            "X.509: extendedKeyUsage holding a string", base.with { $0.extensions = [B.ext("2.5.29.37", B.seq(B.utf8("serverAuth")))] },
            .unexpectedTag),
        .certificate(
            "X.509: duplicate certificate policy",
            base.with { $0.extensions = [B.ext("2.5.29.32", B.seq(B.seq(B.oid("2.23.140.1.2.1")), B.seq(B.oid("2.23.140.1.2.1"))))] },
            .invalidValue),
        .certificate(
            "X.509: Ed25519 key of 31 bytes",
            base.with { $0.spki = B.seq(B.seq(B.oid(CertificateTemplate.ed25519)), B.bits([UInt8](repeating: 1, count: 31))) },
            .invalidValue),
        .certificate(
            "X.509: P-256 point of the wrong length",
            base.with {
                $0.spki = B.seq(B.seq(B.oid("1.2.840.10045.2.1"), B.oid("1.2.840.10045.3.1.7")), B.bits([0x04] + [UInt8](repeating: 1, count: 63)))
            }, .invalidValue),
        .certificate(
            "X.509: RSA key with a negative modulus",
            base.with {
                $0.spki = B.seq(B.seq(B.oid("1.2.840.113549.1.1.1"), B.null), B.bits(B.seq(B.int(bytes: [0x80, 0x01]), B.int(65_537))))
            }, .invalidValue),
        .certificate("X.509: empty serial number", base.with { $0.serial = [0x02, 0x00] }, .invalidValue),
        .certificate("X.509: serial number 00 01", base.with { $0.serial = B.int(bytes: [0x00, 0x01]) }, .invalidValue),
        .certificate("X.509: empty RDN", base.with { $0.subject = B.seq(B.set()) }, .invalidValue),
        .certificate("X.509: PrintableString name with @", base.with { $0.subject = B.seq(B.set(B.seq(B.oid("2.5.4.3"), B.printable("a@b")))) }, .invalidValue),
        .certificate("X.509: unconsumed TBS field", base.with { $0.extraTBSField = B.implicit(4, [0x00]) }, .trailingData),
        .certificate("X.509: signature with unused bits", base.with { $0.signatureValue = B.bits([0x80], unused: 7) }, .invalidValue),
        .certificate(
            "X.509: element after the signature", bytes: B.seq(base.tbs, base.tbsSignature, base.signatureValue, B.null), .trailingData),
        .certificate("X.509: no signature", bytes: B.seq(base.tbs, base.tbsSignature), .missingField),
        .certificate("X.509: SET instead of SEQUENCE", bytes: B.tlv(0x31, base.tbs + base.tbsSignature + base.signatureValue), .unexpectedTag),
    ]

    static let all: [MalformedCase] = encodings + values + nesting + pemCases + loading + x509
}

@Suite("Malformed input: exact error codes, offsets inside the input")
struct MalformedInputTests {
    @Test("the table is big enough")
    func tableSize() {
        #expect(MalformedCase.all.count >= 45)
        #expect(Set(MalformedCase.all.map(\.name)).count == MalformedCase.all.count, "case names are unique")
    }

    @Test("each malformed input is rejected with the exact error", arguments: MalformedCase.all)
    func malformed(_ testCase: MalformedCase) {
        switch testCase.input {
        case .der(let bytes):
            check(Result { () throws(DERError) in _ = try DER.parse(bytes) }, bytes.count, testCase)
        case .value(let bytes, let decoder):
            check(Result { () throws(DERError) in try decode(DER.parse(bytes), decoder) }, bytes.count, testCase)
        case .certificate(let bytes):
            check(Result { () throws(DERError) in _ = try Certificate(derEncoded: bytes) }, bytes.count, testCase)
        case .pem(let text):
            check(Result { () throws(PEMError) in _ = try PEMDocument.parseAll(text) }, text, testCase)
        case .singlePEM(let text):
            check(Result { () throws(PEMError) in _ = try PEMDocument(pemEncoded: text) }, text, testCase)
        case .load(let bytes):
            switch Result(catching: { () throws(CertificateLoadingError) in try Certificate.load(bytes) }) {
            case .success(let certificates):
                Issue.record("\(testCase.name): accepted, \(certificates.count) certificates")
            case .failure(.der(let error, _)):
                check(.failure(error), bytes.count, testCase)
            case .failure(.pem(let error)):
                check(.failure(error), String(decoding: bytes, as: UTF8.self), testCase)
            }
        }
    }

    private func decode(_ node: ASN1Node, _ decoder: MalformedCase.Decoder) throws(DERError) {
        switch decoder {
        case .boolean: _ = try node.boolean("boolean")
        case .integer: _ = try node.integerBytes("integer")
        case .bitString: _ = try node.bitString("bitString")
        case .objectIdentifier: _ = try node.objectIdentifier("oid")
        case .time: _ = try node.time("time")
        case .string: _ = try ASN1String(node, "string")
        case .null: try node.null("null")
        case .sequenceOfOneInteger:
            _ = try node.sequence(.sequence, "sequence") { n throws(DERError) in try n.next(.integer, "first") }
        }
    }

    private func check(_ result: Result<Void, DERError>, _ count: Int, _ testCase: MalformedCase) {
        guard case .failure(let error) = result else {
            Issue.record("\(testCase.name): accepted, expected \(testCase.expected)")
            return
        }
        guard case .der(let expected) = testCase.expected else {
            Issue.record("\(testCase.name): DER error \(error), expected \(testCase.expected)")
            return
        }
        #expect(error.code == expected, "\(testCase.name): \(error)")
        #expect(error.offset >= 0 && error.offset < max(count, 1), "\(testCase.name): offset \(error.offset) outside \(count) bytes")
        if let at = testCase.at { #expect(error.offset == at, "\(testCase.name): \(error)") }
        #expect(!error.reason.isEmpty)
    }

    private func check(_ result: Result<Void, PEMError>, _ text: String, _ testCase: MalformedCase) {
        guard case .failure(let error) = result else {
            Issue.record("\(testCase.name): accepted, expected \(testCase.expected)")
            return
        }
        guard case .pem(let expected) = testCase.expected else {
            Issue.record("\(testCase.name): PEM error \(error), expected \(testCase.expected)")
            return
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(error.code == expected, "\(testCase.name): \(error)")
        #expect(error.line >= 1 && error.line <= lines, "\(testCase.name): line \(error.line) outside \(lines) lines")
        if let at = testCase.at { #expect(error.line == at, "\(testCase.name): \(error)") }
    }

    // MARK: Depth

    @Test("deep nesting is rejected quickly and without recursion")
    func deepNestingIsFast() throws {
        let bytes = B.nested(100_000)
        let clock = ContinuousClock()
        var code: DERError.Code?
        let elapsed = clock.measure {
            if case .failure(let error) = Result(catching: { () throws(DERError) in try DER.parse(bytes) }) { code = error.code }
        }
        #expect(code == .tooDeep)
        #expect(elapsed < .seconds(1), "took \(elapsed)")
    }

    @Test("exactly maximumDepth nested SEQUENCEs are accepted")
    func depthLimitBoundary() throws {
        let deepest = try DER.parse(B.nested(DER.maximumDepth, innermost: B.null))
        #expect(deepest.identifier == .sequence)
        #expect(throws: DERError(.tooDeep, at: 0, "")) { try DER.parse(B.nested(DER.maximumDepth + 1, innermost: B.null)) }
    }

    // MARK: X.509 values that parse but are flagged

    @Test("negative serial parses and is flagged")
    func negativeSerial() throws {
        let certificate = try Certificate(derEncoded: MalformedCase.base.with { $0.serial = B.int(bytes: [0xFF, 0x01]) }.der)
        #expect(certificate.serialNumber.isNegative)
        #expect(!certificate.serialNumber.isZero)
        #expect(certificate.serialNumber.hex == "-ff")
        let minusOne = try Certificate(derEncoded: MalformedCase.base.with { $0.serial = B.int(-1) }.der)
        #expect(minusOne.serialNumber.hex == "-01")
        let minus128 = try Certificate(derEncoded: MalformedCase.base.with { $0.serial = B.int(-128) }.der)
        #expect(minus128.serialNumber.hex == "-80")
    }

    @Test("21-byte serial parses and is flagged overlong; 20 bytes is not")
    func overlongSerial() throws {
        let long = try Certificate(derEncoded: MalformedCase.base.with { $0.serial = B.int(bytes: [0x01] + [UInt8](repeating: 0xEE, count: 20)) }.der)
        #expect(long.serialNumber.isOverlong)
        #expect(long.serialNumber.bytes.count == 21)
        #expect(long.serialNumber.hex == "01" + String(repeating: "ee", count: 20))
        // 20 content octets (a positive 159-bit value needs no padding) is the RFC 5280 limit.
        let twenty = try Certificate(derEncoded: MalformedCase.base.with { $0.serial = B.int(bytes: [0x7F] + [UInt8](repeating: 0xEE, count: 19)) }.der)
        #expect(!twenty.serialNumber.isOverlong)
        // A 20-octet magnitude with the sign octet is 21 content octets: flagged (as Go and OpenSSL count it).
        let padded = try Certificate(derEncoded: MalformedCase.base.with { $0.serial = B.int(bytes: [0x00] + [UInt8](repeating: 0xEE, count: 20)) }.der)
        #expect(padded.serialNumber.isOverlong)
        #expect(padded.serialNumber.hex == String(repeating: "ee", count: 20))
    }

    @Test("zero serial parses and is flagged")
    func zeroSerial() throws {
        let certificate = try Certificate(derEncoded: MalformedCase.base.with { $0.serial = B.int(0) }.der)
        #expect(certificate.serialNumber.isZero)
        #expect(!certificate.serialNumber.isNegative)
        #expect(certificate.serialNumber.hex == "00")
    }

    @Test("UTCTime 50 means 1950 and GeneralizedTime 2050 is accepted")
    func validityWindow() throws {
        let certificate = try Certificate(
            derEncoded: MalformedCase.base.with {
                $0.notBefore = B.utc("500101000000Z")
                $0.notAfter = B.generalized("20500101000000Z")
            }.der)
        #expect(certificate.notBefore.rfc3339 == "1950-01-01T00:00:00Z")
        #expect(certificate.notAfter.rfc3339 == "2050-01-01T00:00:00Z")
        #expect(certificate.notAfter.encoding == .generalizedTime)
        let old = try Certificate(derEncoded: MalformedCase.base.with { $0.notBefore = B.generalized("19491231235959Z") }.der)
        #expect(old.notBefore.year == 1949)
    }

    @Test("strictness choice: RFC 5280's UTCTime-through-2049 rule is left to policy; the parser keeps the encoding")
    func validityEncodingRuleIsNotEnforcedAtParse() throws {
        // 2049 as GeneralizedTime and 1950 as GeneralizedTime break RFC 5280 §4.1.2.5 but are
        // valid DER; Certificate.swift documents that the validation policy checks the rule.
        let certificate = try Certificate(
            derEncoded: MalformedCase.base.with {
                $0.notBefore = B.generalized("19500101000000Z")
                $0.notAfter = B.generalized("20491231235959Z")
            }.der)
        #expect(certificate.notBefore.encoding == .generalizedTime)
        #expect(certificate.notAfter.encoding == .generalizedTime)
        #expect(certificate.notAfter.rfc3339 == "2049-12-31T23:59:59Z")
        // The same instants as UTCTime compare equal: only the form differs.
        let utc = try Certificate(
            derEncoded: MalformedCase.base.with {
                $0.notBefore = B.utc("500101000000Z")
                $0.notAfter = B.utc("491231235959Z")
            }.der)
        #expect(utc.notBefore == certificate.notBefore)
        #expect(utc.notAfter == certificate.notAfter)
        #expect(utc.notAfter.encoding == .utcTime)
    }

    @Test("strictness choice: basicConstraints cA explicitly FALSE is accepted (unlike Extension.critical)")
    func explicitCAFalse() throws {
        let certificate = try Certificate(
            derEncoded: MalformedCase.base.with { $0.extensions = [B.ext("2.5.29.19", critical: true, B.seq(B.bool(false)))] }.der)
        #expect(certificate.extensions.basicConstraints?.isCertificateAuthority == false)
        #expect(!certificate.isCertificateAuthority)
    }

    @Test("the duplicate-extension error points at the second copy")
    func duplicateExtensionOffset() throws {
        let duplicate = B.ext("2.5.29.14", B.octet([1, 2, 3]))
        let der = MalformedCase.base.with { $0.extensions = CertificateTemplate.defaultExtensions + [duplicate] }.der
        let error = try #require(throws: DERError.self) { try Certificate(derEncoded: der) }
        let start = try #require(der.lastRange(of: duplicate))
        #expect(error.offset == start.lowerBound)
    }

    @Test("duplicates are found in long lists too: the 40th extension repeating the 1st, a policy repeated after 5,000 others")
    func duplicatesInLongLists() throws {
        // Beyond a handful of elements the check uses a set instead of scanning earlier
        // elements, so that a crafted list of tens of thousands costs linear time.
        let private40 = (1...39).map { B.ext("1.3.6.1.4.1.99999.3.\($0)", B.null) }
        let repeated = private40 + [private40[0]]
        let error = try #require(throws: DERError.self) {
            try Certificate(derEncoded: MalformedCase.base.with { $0.extensions = CertificateTemplate.defaultExtensions + repeated }.der)
        }
        let start = try #require(MalformedCase.base.with { $0.extensions = CertificateTemplate.defaultExtensions + repeated }.der.lastRange(of: private40[0]))
        #expect(error.offset == start.lowerBound)
        #expect(
            try Certificate(derEncoded: MalformedCase.base.with { $0.extensions = CertificateTemplate.defaultExtensions + private40 }.der).extensions.all.count
                > 40)

        let policies = (1...5_000).map { B.seq(B.oid("1.3.6.1.4.1.99999.4.\($0)")) }
        let unique = B.ext("2.5.29.32", B.seq(list: policies))
        #expect(try Certificate(derEncoded: MalformedCase.base.with { $0.extensions = [unique] }.der).extensions.certificatePolicies?.count == 5_000)
        let twice = B.ext("2.5.29.32", B.seq(list: policies + [policies[2_500]]))
        #expect(throws: DERError.self) { try Certificate(derEncoded: MalformedCase.base.with { $0.extensions = [twice] }.der) }
    }

    @Test("errors inside extension values report offsets in the certificate")
    func extensionErrorOffsets() throws {
        let badSAN = B.ext("2.5.29.17", B.seq(B.implicit(2, Array("ok.example".utf8)), B.implicit(2, [0xC3, 0xBC])))
        let der = MalformedCase.base.with { $0.extensions = [badSAN] }.der
        let error = try #require(throws: DERError.self) { try Certificate(derEncoded: der) }
        #expect(error.code == .invalidValue)
        // The second dNSName starts 4 bytes before the end of the extension.
        let start = try #require(der.lastRange(of: badSAN))
        #expect(error.offset == start.upperBound - 4)
    }

    // MARK: Truncation and corruption

    static func realCertificate() throws -> [UInt8] {
        let bundle = try String(contentsOfFile: "/etc/ssl/certs/ca-certificates.crt", encoding: .utf8)
        return try #require(foundationPEMBlocks(bundle, label: "CERTIFICATE").first)
    }

    @Test("every proper prefix of a certificate is rejected, none crashes")
    func everyPrefixThrows() throws {
        for der in [MalformedCase.base.der, try Self.realCertificate()] {
            _ = try Certificate(derEncoded: der)
            for length in 0..<der.count {
                let prefix = Array(der.prefix(length))
                switch Result(catching: { () throws(DERError) in try Certificate(derEncoded: prefix) }) {
                case .success: Issue.record("prefix of \(length) of \(der.count) bytes was accepted")
                case .failure(let error):
                    #expect(error.offset >= 0 && error.offset < max(length, 1), "prefix \(length): \(error)")
                }
            }
        }
    }

    @Test("flipping any single byte never crashes; errors stay inside the input")
    func singleByteCorruption() throws {
        for der in [MalformedCase.base.der, try Self.realCertificate()] {
            let original = try Certificate(derEncoded: der)
            var accepted = 0
            var problems: [String] = []
            for index in der.indices {
                for mask: UInt8 in [0xFF, 0x01, 0x80] {
                    var corrupted = der
                    corrupted[index] ^= mask
                    switch Result(catching: { () throws(DERError) in try Certificate(derEncoded: corrupted) }) {
                    case .success(let certificate):
                        accepted += 1
                        if certificate.derBytes != corrupted || certificate == original {
                            problems.append("byte \(index) ^ \(mask): parsed certificate does not hold the corrupted bytes")
                        }
                    case .failure(let error):
                        if error.offset < 0 || error.offset >= corrupted.count {
                            problems.append("byte \(index) ^ \(mask): offset outside the input: \(error)")
                        }
                    }
                }
            }
            #expect(problems.isEmpty, "\(problems.prefix(10))")
            // Flips in the signature value and in names or keys often still parse; flips in headers never do.
            #expect(accepted > 0)
            #expect(accepted < der.count * 3)
        }
    }
}

extension Array where Element == UInt8 {
    /// The last range where `needle` occurs.
    func lastRange(of needle: [UInt8]) -> Range<Int>? {
        guard needle.count <= count else { return nil }
        for start in stride(from: count - needle.count, through: 0, by: -1) where self[start..<(start + needle.count)].elementsEqual(needle) {
            return start..<(start + needle.count)
        }
        return nil
    }
}
