/// The DER rules for tags and primitive contents (X.690 §8 with the restrictions of §10–11),
/// each written once over an element's identifier or content octets.
///
/// Both readers call these: ``ASN1Node``'s public decoders and the certificate parser's raw
/// reader (`DERInput`), so the two cannot accept different encodings. The header rules (tag
/// form, minimal definite length, the constructed bit) live in one place as well,
/// `DERInput.header`, which `DER` also reads through.
///
/// `offset` is the element's offset, which the error reports; `name` names the field and is
/// evaluated only when a rule is broken, so the fast path never builds a string.
enum DERRules {
    /// Content octets, indexed from zero.
    typealias Content = UnsafeBufferPointer<UInt8>

    // MARK: Tags

    /// The element carries `expected` and is constructed or primitive as `constructed` says.
    static func expect(_ node: some DERElement, _ expected: ASN1Identifier, constructed: Bool, _ name: () -> String) throws(DERError) {
        guard node.identifier == expected else {
            throw DERError(.unexpectedTag, at: node.offset, "\(name()): expected \(expected), found \(node.identifier)")
        }
        guard node.isConstructed == constructed else {
            throw DERError(.invalidConstruction, at: node.offset, "\(name()) must be \(constructed ? "constructed" : "primitive")")
        }
    }

    /// The primitive encoding alone, for decoders that accept several tags.
    static func expectPrimitive(_ node: some DERElement, _ name: () -> String) throws(DERError) {
        guard !node.isConstructed else { throw DERError(.invalidConstruction, at: node.offset, "\(name()) must be primitive") }
    }

    // MARK: Children of a constructed element

    /// A mandatory child: present (`found` is not `nil`) and carrying `expected`.
    static func expectChild<Node: DERElement>(
        _ found: Node?, _ expected: ASN1Identifier, parentOffset: Int, _ field: () -> String
    ) throws(DERError) -> Node {
        guard let node = found else { throw DERError(.missingField, at: parentOffset, "missing \(field()) (\(expected))") }
        guard node.identifier == expected else {
            throw DERError(.unexpectedTag, at: node.offset, "\(field()): expected \(expected), found \(node.identifier)")
        }
        return node
    }

    /// No child may follow the last field a structure defines.
    static func expectEnd(_ isAtEnd: Bool, at offset: Int, _ structure: () -> String) throws(DERError) {
        guard isAtEnd else { throw DERError(.trailingData, at: offset, "unexpected extra element at the end of \(structure())") }
    }

    // MARK: Primitive contents

    /// BOOLEAN: one octet (X.690 §8.2.1); DER allows only `0x00` and `0xFF` (X.690 §11.1).
    static func boolean(_ content: Content, at offset: Int, _ name: () -> String) throws(DERError) -> Bool {
        guard content.count == 1 else { throw DERError(.invalidValue, at: offset, "\(name()): BOOLEAN must be one octet") }
        switch content[0] {
        case 0x00: return false
        case 0xFF: return true
        default: throw DERError(.invalidValue, at: offset, "\(name()): DER BOOLEAN TRUE must be 0xFF")
        }
    }

    /// INTEGER: at least one octet (X.690 §8.3.1), and the first nine bits neither all ones nor
    /// all zeros (X.690 §8.3.2: the minimal two's complement encoding).
    static func integer(_ content: Content, at offset: Int, _ name: () -> String) throws(DERError) {
        guard let first = content.first else { throw DERError(.invalidValue, at: offset, "\(name()): INTEGER has no content octets") }
        if content.count > 1 {
            let second = content[1]
            if (first == 0x00 && second & 0x80 == 0) || (first == 0xFF && second & 0x80 != 0) {
                throw DERError(.invalidValue, at: offset, "\(name()): INTEGER is not minimally encoded")
            }
        }
    }

    /// A small INTEGER as `Int` (the rules of ``integer(_:at:_:)``), accepted only in `allowed`.
    static func integer(_ content: Content, in allowed: ClosedRange<Int>, at offset: Int, _ name: () -> String) throws(DERError) -> Int {
        try integer(content, at: offset, name)
        guard content.count <= 8 else { throw DERError(.invalidValue, at: offset, "\(name()): INTEGER out of range") }
        var value: Int64 = content[0] & 0x80 != 0 ? -1 : 0
        for byte in content { value = (value << 8) | Int64(byte) }
        guard let result = Int(exactly: value), allowed.contains(result) else {
            throw DERError(.invalidValue, at: offset, "\(name()): INTEGER \(value) outside \(allowed)")
        }
        return result
    }

    /// NULL: no content octets (X.690 §8.8.2).
    static func null(_ content: Content, at offset: Int, _ name: () -> String) throws(DERError) {
        guard content.isEmpty else { throw DERError(.invalidValue, at: offset, "\(name()): NULL must be empty") }
    }

    /// BIT STRING: returns the unused-bit count of the initial octet, which must be 0–7 and 0
    /// for an empty string (X.690 §8.6.2); DER sets the unused bits to zero (X.690 §11.2.1).
    static func bitStringUnusedBits(_ content: Content, at offset: Int, _ name: () -> String) throws(DERError) -> Int {
        guard let unused = content.first else {
            throw DERError(.invalidValue, at: offset, "\(name()): BIT STRING has no unused-bits octet")
        }
        guard unused <= 7 else { throw DERError(.invalidValue, at: offset, "\(name()): BIT STRING unused-bits octet is \(unused)") }
        if content.count == 1 {
            guard unused == 0 else { throw DERError(.invalidValue, at: offset, "\(name()): empty BIT STRING with unused bits") }
        } else if unused > 0 {
            let mask = UInt8((1 << unused) - 1)
            guard content[content.count - 1] & mask == 0 else {
                throw DERError(.invalidValue, at: offset, "\(name()): BIT STRING unused bits are not zero")
            }
        }
        return Int(unused)
    }

    /// OBJECT IDENTIFIER: at least one subidentifier, the last one complete, each minimal (no
    /// leading `0x80` octet, X.690 §8.19.2). Arcs are limited to 64 bits, as the dotted-text
    /// initialiser of ``ASN1ObjectIdentifier`` is, so rendering never overflows.
    static func objectIdentifier(_ content: Content, at offset: Int, _ name: () -> String) throws(DERError) {
        guard let last = content.last else { throw DERError(.invalidValue, at: offset, "\(name()): OBJECT IDENTIFIER is empty") }
        guard last & 0x80 == 0 else { throw DERError(.invalidValue, at: offset, "\(name()): OBJECT IDENTIFIER ends inside an arc") }
        var arcStart = true
        var value: UInt64 = 0
        for byte in content {
            if arcStart && byte == 0x80 {
                throw DERError(.invalidValue, at: offset, "\(name()): OBJECT IDENTIFIER arc is not minimally encoded")
            }
            guard value >> 57 == 0 else { throw DERError(.invalidValue, at: offset, "\(name()): OBJECT IDENTIFIER arc exceeds 64 bits") }
            value = value << 7 | UInt64(byte & 0x7F)
            arcStart = byte & 0x80 == 0
            if arcStart { value = 0 }
        }
    }

    /// A string type's character set (X.680 §41), checked without building a `String`.
    static func characters(_ kind: ASN1String.Kind, _ content: Content, at offset: Int, _ name: () -> String) throws(DERError) {
        if let problem = ASN1String.characterSetProblem(kind, content) {
            throw DERError(.invalidValue, at: offset, "\(name()): \(kind.rawValue) \(problem)")
        }
    }

    /// UTCTime or GeneralizedTime in the one form RFC 5280 §4.1.2.5 allows (the DER forms of
    /// X.690 §11.7–11.8 with seconds and without a fraction): `YYMMDDHHMMSSZ` or
    /// `YYYYMMDDHHMMSSZ`. UTCTime years 50–99 mean 1950–1999 and 00–49 mean 2000–2049
    /// (RFC 5280 §4.1.2.5.1).
    static func time(_ identifier: ASN1Identifier, _ content: Content, at offset: Int, _ name: () -> String) throws(DERError) -> ASN1Time {
        func digits(_ from: Int, _ count: Int) -> Int? { ASN1Time.digits(content[from..<(from + count)]) }
        let year: Int
        let rest: Int
        let encoding: ASN1Time.Encoding
        switch identifier {
        case .utcTime:
            guard content.count == 13, content[12] == UInt8(ascii: "Z") else {
                throw DERError(.invalidValue, at: offset, "\(name()): UTCTime must be YYMMDDHHMMSSZ")
            }
            guard let yy = digits(0, 2) else { throw DERError(.invalidValue, at: offset, "\(name()): UTCTime has a non-digit") }
            year = yy >= 50 ? 1900 + yy : 2000 + yy
            rest = 2
            encoding = .utcTime
        case .generalizedTime:
            guard content.count == 15, content[14] == UInt8(ascii: "Z") else {
                throw DERError(.invalidValue, at: offset, "\(name()): GeneralizedTime must be YYYYMMDDHHMMSSZ")
            }
            guard let yyyy = digits(0, 4) else { throw DERError(.invalidValue, at: offset, "\(name()): GeneralizedTime has a non-digit") }
            year = yyyy
            rest = 4
            encoding = .generalizedTime
        default:
            throw DERError(.unexpectedTag, at: offset, "\(name()): expected UTCTime or GeneralizedTime, found \(identifier)")
        }
        guard let month = digits(rest, 2), let day = digits(rest + 2, 2), let hour = digits(rest + 4, 2),
            let minute = digits(rest + 6, 2), let second = digits(rest + 8, 2)
        else { throw DERError(.invalidValue, at: offset, "\(name()): time has a non-digit") }
        guard let time = ASN1Time(year: year, month: month, day: day, hour: hour, minute: minute, second: second, encoding: encoding)
        else { throw DERError(.invalidValue, at: offset, "\(name()): time names no real instant") }
        return time
    }
}

/// What the tag rules read of an element, in either reader's form (``ASN1Node``, `RawNode`).
protocol DERElement {
    /// The element's tag.
    var identifier: ASN1Identifier { get }
    /// Whether the constructed bit is set.
    var isConstructed: Bool { get }
    /// Offset of the identifier octet, which errors report.
    var offset: Int { get }
}

extension ASN1Node: DERElement {}
extension RawNode: DERElement {}
