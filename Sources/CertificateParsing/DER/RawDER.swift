/// The certificate parser's fast path: DER read through an unsafe buffer with index-based
/// nodes, so walking a certificate does no reference counting and no allocation. Only the
/// values the model keeps become `ArraySlice`s of the caller's array.
///
/// The rules are those of ``DER`` (X.690 §10), and they are the same code: ``DER`` reads
/// headers through `DERInput.header` (minimal definite lengths, minimal tags, the constructed
/// bit DER requires), and both readers decode primitives through ``DERRules``. What differs is
/// the node form and the nesting bound: here nesting is bounded by the schema the decoders
/// follow, and opaque values (unknown extensions, `otherName` values) are kept as bytes and
/// never walked.
struct RawNode {
    let identifier: ASN1Identifier
    let isConstructed: Bool
    /// Offset of the identifier octet.
    let start: Int
    /// Offset of the first content octet.
    let contentStart: Int
    /// Offset just past the element.
    let end: Int

    var offset: Int { start }
    var contentCount: Int { end - contentStart }
    var contentRange: Range<Int> { contentStart..<end }
    var range: Range<Int> { start..<end }
}

/// The buffer being parsed and the array the model's slices come from.
struct DERInput {
    let buffer: UnsafeBufferPointer<UInt8>
    let base: [UInt8]

    subscript(i: Int) -> UInt8 { buffer[i] }

    /// A slice of the base array (what the model stores).
    func slice(_ range: Range<Int>) -> ArraySlice<UInt8> { base[range] }

    /// Runs `body` with the input for `bytes` (offsets are indices into `bytes`).
    static func with<T>(_ bytes: [UInt8], _ body: (DERInput) throws(DERError) -> T) throws(DERError) -> T {
        try bytes.withUnsafeBufferPointer { (buffer) throws(DERError) -> T in
            try body(DERInput(buffer: buffer, base: bytes))
        }
    }

    /// The element spanning exactly `range`, with no trailing bytes.
    func single(_ range: Range<Int>) throws(DERError) -> RawNode {
        guard !range.isEmpty else { throw DERError(.truncated, at: range.lowerBound, "empty input") }
        let node = try element(at: range.lowerBound, end: range.upperBound)
        guard node.end == range.upperBound else {
            throw DERError(.trailingData, at: node.end, "\(range.upperBound - node.end) bytes after the end of the outermost element")
        }
        return node
    }

    /// Reads the header of the element at `position` (which must end by `end`).
    func element(at position: Int, end: Int) throws(DERError) -> RawNode {
        try DERInput.header(buffer, at: position, end: end, bias: 0)
    }

    /// The strict DER header reader (X.690 §8.1.2–8.1.3, §10.1–10.2). Offsets in the result
    /// and in errors are positions in `buffer` plus `bias`.
    static func header(_ buffer: UnsafeBufferPointer<UInt8>, at position: Int, end: Int, bias: Int) throws(DERError) -> RawNode {
        let start = position + bias
        var index = position
        guard index < end else { throw DERError(.truncated, at: start, "expected an element, found end of data") }
        let first = buffer[index]
        index += 1
        let constructed = first & 0x20 != 0
        var tagNumber = UInt32(first & 0x1F)
        if tagNumber == 0x1F {
            // X.690 §8.1.2.4: base 128, no leading 0x80 octet, only for numbers ≥ 31.
            tagNumber = 0
            var count = 0
            while true {
                guard index < end else { throw DERError(.truncated, at: start, "tag number runs past the end of data") }
                let byte = buffer[index]
                index += 1
                if count == 0 && byte == 0x80 { throw DERError(.invalidTag, at: start, "tag number has a leading zero octet") }
                count += 1
                guard count <= 4 else { throw DERError(.invalidTag, at: start, "tag number too large") }
                tagNumber = (tagNumber << 7) | UInt32(byte & 0x7F)
                if byte & 0x80 == 0 { break }
            }
            guard tagNumber >= 0x1F else { throw DERError(.invalidTag, at: start, "tag number \(tagNumber) must use the low tag form") }
        }
        guard index < end else { throw DERError(.truncated, at: start, "length runs past the end of data") }
        let lengthByte = buffer[index]
        index += 1
        var length: Int
        if lengthByte < 0x80 {
            length = Int(lengthByte)
        } else if lengthByte == 0x80 {
            throw DERError(.indefiniteLength, at: start, "indefinite length is not DER")
        } else {
            let count = Int(lengthByte & 0x7F)
            guard count <= 4 else {
                throw DERError(.unsupportedLength, at: start, "length of \(count) octets is larger than this reader accepts")
            }
            guard end - index >= count else { throw DERError(.truncated, at: start, "length runs past the end of data") }
            guard buffer[index] != 0 else { throw DERError(.nonMinimalLength, at: start, "long-form length with a leading zero octet") }
            length = 0
            for _ in 0..<count {
                length = (length << 8) | Int(buffer[index])
                index += 1
            }
            guard length >= 0x80 else { throw DERError(.nonMinimalLength, at: start, "length \(length) must use the short form") }
        }
        guard end - index >= length else {
            throw DERError(.truncated, at: start, "element announces \(length) content bytes, \(end - index) remain")
        }
        let identifier = ASN1Identifier(tagNumber: tagNumber, tagClass: ASN1Identifier.TagClass.from(first))
        if let required = identifier.requiredConstruction, required != constructed {
            throw DERError(.invalidConstruction, at: start, "\(identifier) must be \(required ? "constructed" : "primitive") in DER")
        }
        return RawNode(identifier: identifier, isConstructed: constructed, start: start, contentStart: index + bias, end: index + length + bias)
    }

    /// Children of a constructed node.
    func children(_ node: RawNode) -> RawIterator {
        RawIterator(input: self, position: node.contentStart, end: node.end, parentOffset: node.start)
    }

    /// A constructed node with `identifier` whose children `body` must all consume.
    func sequence<T>(
        _ node: RawNode, _ identifier: ASN1Identifier = .sequence, _ name: StaticString,
        _ body: (inout RawIterator) throws(DERError) -> T
    ) throws(DERError) -> T {
        try DERRules.expect(node, identifier, constructed: true) { "\(name)" }
        var iterator = children(node)
        let value = try body(&iterator)
        try iterator.finish(name)
        return value
    }

    /// The content range of a primitive node with `identifier`.
    func primitive(_ node: RawNode, _ identifier: ASN1Identifier, _ name: StaticString) throws(DERError) -> Range<Int> {
        try DERRules.expect(node, identifier, constructed: false) { "\(name)" }
        return node.contentRange
    }

    /// The content octets in `range`, indexed from zero (what ``DERRules`` reads).
    func content(_ range: Range<Int>) -> DERRules.Content { UnsafeBufferPointer(rebasing: buffer[range]) }

    // MARK: Primitives (X.690 §10–11, rules in DERRules)

    func boolean(_ node: RawNode, _ name: StaticString, identifier: ASN1Identifier = .boolean) throws(DERError) -> Bool {
        let range = try primitive(node, identifier, name)
        return try DERRules.boolean(content(range), at: node.start) { "\(name)" }
    }

    /// INTEGER content after the minimal-encoding check (X.690 §8.3.2).
    func integerRange(_ node: RawNode, _ name: StaticString, identifier: ASN1Identifier = .integer) throws(DERError) -> Range<Int> {
        let range = try primitive(node, identifier, name)
        try DERRules.integer(content(range), at: node.start) { "\(name)" }
        return range
    }

    /// A small INTEGER.
    func integer(
        _ node: RawNode, _ name: StaticString, in allowed: ClosedRange<Int> = 0...Int(Int32.max), identifier: ASN1Identifier = .integer
    ) throws(DERError) -> Int {
        let range = try primitive(node, identifier, name)
        return try DERRules.integer(content(range), in: allowed, at: node.start) { "\(name)" }
    }

    /// BIT STRING (X.690 §8.6.2, §11.2.1).
    func bitString(_ node: RawNode, _ name: StaticString, identifier: ASN1Identifier = .bitString) throws(DERError) -> ASN1BitString {
        let range = try primitive(node, identifier, name)
        let unused = try DERRules.bitStringUnusedBits(content(range), at: node.start) { "\(name)" }
        return ASN1BitString(bytes: slice((range.lowerBound + 1)..<range.upperBound), unusedBits: unused)
    }

    /// OBJECT IDENTIFIER (X.690 §8.19): minimal arcs of at most 64 bits.
    func objectIdentifier(_ node: RawNode, _ name: StaticString) throws(DERError) -> ASN1ObjectIdentifier {
        let range = try primitive(node, .objectIdentifier, name)
        try validateOID(range, at: node.start, name)
        return ASN1ObjectIdentifier(unchecked: slice(range))
    }

    func validateOID(_ range: Range<Int>, at offset: Int, _ name: StaticString) throws(DERError) {
        try DERRules.objectIdentifier(content(range), at: offset) { "\(name)" }
    }

    /// Whether the content of `node` equals the OID `oid` (no allocation).
    func contentEquals(_ node: RawNode, _ oid: ASN1ObjectIdentifier) -> Bool {
        guard node.contentCount == oid.bytes.count else { return false }
        var i = node.contentStart
        for byte in oid.bytes {
            if buffer[i] != byte { return false }
            i += 1
        }
        return true
    }

    /// An IA5String's text (dNSName, rfc822Name, URI, CPS pointers).
    func ia5(_ node: RawNode, _ name: StaticString) throws(DERError) -> String {
        try DERRules.expectPrimitive(node) { "\(name)" }
        let text = content(node.contentRange)
        try DERRules.characters(.ia5String, text, at: node.start) { "\(name)" }
        return String(decoding: text, as: UTF8.self)
    }

    /// Checks a directory string's content for its type's character set without building a
    /// `String` (names are decoded lazily, when displayed).
    func validateString(_ node: RawNode, _ name: StaticString) throws(DERError) {
        guard let kind = ASN1String.kind(of: node.identifier) else {
            throw DERError(.unexpectedTag, at: node.start, "\(name): expected a string type, found \(node.identifier)")
        }
        try DERRules.characters(kind, content(node.contentRange), at: node.start) { "\(name)" }
    }

    /// UTCTime or GeneralizedTime in RFC 5280's strict form.
    func time(_ node: RawNode, _ name: StaticString) throws(DERError) -> ASN1Time {
        try DERRules.expectPrimitive(node) { "\(name)" }
        return try DERRules.time(node.identifier, content(node.contentRange), at: node.start) { "\(name)" }
    }

    /// A public `ASN1Node` for a raw node (for the few places the model keeps a node).
    func node(_ raw: RawNode) -> ASN1Node {
        ASN1Node(raw, in: base)
    }
}

/// Reads the children of a constructed raw node one at a time.
struct RawIterator {
    let input: DERInput
    var position: Int
    let end: Int
    let parentOffset: Int

    var isAtEnd: Bool { position >= end }

    mutating func next() throws(DERError) -> RawNode? {
        guard position < end else { return nil }
        let node = try input.element(at: position, end: end)
        position = node.end
        return node
    }

    func peekIdentifier() -> ASN1Identifier? {
        guard position < end else { return nil }
        if let identifier = ASN1Identifier(lowTagForm: input[position]) { return identifier }
        return try? input.element(at: position, end: end).identifier
    }

    mutating func next(_ identifier: ASN1Identifier, _ field: StaticString) throws(DERError) -> RawNode {
        try DERRules.expectChild(next(), identifier, parentOffset: parentOffset) { "\(field)" }
    }

    mutating func optional(_ identifier: ASN1Identifier) throws(DERError) -> RawNode? {
        guard peekIdentifier() == identifier else { return nil }
        return try next()
    }

    func finish(_ structure: StaticString) throws(DERError) {
        try DERRules.expectEnd(isAtEnd, at: position) { "\(structure)" }
    }
}
