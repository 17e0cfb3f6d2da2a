/// One DER element: its tag, whether it is constructed, and zero-copy slices of the caller's
/// buffer for the whole encoding and for the content octets.
///
/// Slices keep the indices of the buffer they came from, so ``offset`` is the element's byte
/// offset in that buffer, which every error reports.
public struct ASN1Node: Hashable, Sendable {
    /// The element's tag.
    public let identifier: ASN1Identifier
    /// Whether the constructed bit is set.
    public let isConstructed: Bool
    /// Identifier, length and content octets.
    public let encodedBytes: ArraySlice<UInt8>
    /// Content octets only.
    public let content: ArraySlice<UInt8>

    /// Byte offset of the element in the parsed buffer.
    public var offset: Int { encodedBytes.startIndex }

    /// The node for a header the raw reader read, as slices of `bytes` (whose indices the
    /// header's offsets are): an array or an array slice, sliced directly (no intermediate
    /// slice to retain).
    @inline(__always)
    init<Bytes: Collection<UInt8>>(_ raw: RawNode, in bytes: Bytes) where Bytes.Index == Int, Bytes.SubSequence == ArraySlice<UInt8> {
        identifier = raw.identifier
        isConstructed = raw.isConstructed
        encodedBytes = bytes[raw.range]
        content = bytes[raw.contentRange]
    }

    /// The children of a constructed element, read lazily in order.
    ///
    /// The tree was fully validated by ``DER/parse(_:)-(ArraySlice<UInt8>)``, so iterating cannot meet malformed
    /// bytes; the iterator still checks rather than trusting that.

    public func children() -> ASN1NodeIterator { ASN1NodeIterator(content, parentOffset: offset) }
}

/// Reads the elements of a constructed node one at a time.
public struct ASN1NodeIterator: Sendable {
    var remaining: ArraySlice<UInt8>
    /// Offset of the constructed element being read, reported for missing fields (the end of
    /// the content may lie one past the input).
    let parentOffset: Int

    init(_ bytes: ArraySlice<UInt8>, parentOffset: Int) {
        self.remaining = bytes
        self.parentOffset = parentOffset
    }

    /// Whether every child has been read.
    public var isAtEnd: Bool { remaining.isEmpty }

    /// Byte offset of the next child (or of the end of the parent).
    public var offset: Int { remaining.startIndex }

    /// The next child, or `nil` at the end.

    public mutating func next() throws(DERError) -> ASN1Node? {
        guard !remaining.isEmpty else { return nil }
        return try DER.readElement(&remaining)
    }

    /// The identifier of the next child without consuming it.

    public func peekIdentifier() -> ASN1Identifier? {
        guard let first = remaining.first else { return nil }
        if let identifier = ASN1Identifier(lowTagForm: first) { return identifier }
        var copy = remaining
        return try? DER.readElement(&copy).identifier
    }

    /// The next child, which must be present and carry `identifier`.

    public mutating func next(_ identifier: ASN1Identifier, _ field: @autoclosure () -> String) throws(DERError) -> ASN1Node {
        try DERRules.expectChild(next(), identifier, parentOffset: parentOffset, field)
    }

    /// The next child if it carries `identifier`; otherwise `nil` and nothing is consumed.

    public mutating func optional(_ identifier: ASN1Identifier) throws(DERError) -> ASN1Node? {
        guard peekIdentifier() == identifier else { return nil }
        return try next()
    }

    /// Throws ``DERError/Code/trailingData`` if children remain.

    public func finish(_ structure: @autoclosure () -> String) throws(DERError) {
        try DERRules.expectEnd(remaining.isEmpty, at: offset, structure)
    }
}

/// Strict DER (X.690 §10) reading: definite minimal lengths, minimal tags, the constructed bit
/// DER requires, no trailing bytes, bounded nesting.
public enum DER {
    /// The deepest nesting ``parse(_:)-(ArraySlice<UInt8>)`` accepts. X.509 certificates nest about 12 levels
    /// (extension values are parsed separately, from their OCTET STRING); 32 leaves room and stops
    /// a stack of nested SEQUENCEs crafted to exhaust the reader (swift-asn1 uses 50).
    public static let maximumDepth = 32

    /// Parses exactly one DER element that spans all of `bytes`, validating every nested element.

    public static func parse(_ bytes: [UInt8]) throws(DERError) -> ASN1Node {
        try parse(bytes[...])
    }

    /// Parses exactly one DER element that spans all of `bytes`, validating every nested element.
    public static func parse(_ bytes: ArraySlice<UInt8>) throws(DERError) -> ASN1Node {
        var input = bytes
        guard !input.isEmpty else { throw DERError(.truncated, at: bytes.startIndex, "empty input") }
        let root = try readElement(&input)
        guard input.isEmpty else {
            throw DERError(.trailingData, at: input.startIndex, "\(input.count) bytes after the end of the outermost element")
        }
        try validateTree(root)
        return root
    }

    /// Walks every constructed element below `root`, iteratively, so the depth limit is enforced
    /// without recursion.
    static func validateTree(_ root: ASN1Node) throws(DERError) {
        guard root.isConstructed else { return }
        var stack: [ArraySlice<UInt8>] = [root.content]
        stack.reserveCapacity(16)
        while var top = stack.popLast() {
            while !top.isEmpty {
                let child = try readElement(&top)
                if child.isConstructed && !child.content.isEmpty {
                    stack.append(top)
                    if stack.count >= maximumDepth {
                        throw DERError(.tooDeep, at: child.offset, "nesting deeper than \(maximumDepth) levels")
                    }
                    top = child.content
                }
            }
        }
    }

    /// Reads one element's header from the front of `input` and advances past the element.

    static func readElement(_ input: inout ArraySlice<UInt8>) throws(DERError) -> ASN1Node {
        // One header reader serves both paths: the slice's buffer is read with the raw reader,
        // whose offsets are the slice's own indices.
        let bias = input.startIndex
        let raw = try input.withUnsafeBufferPointer { (buffer) throws(DERError) -> RawNode in
            try DERInput.header(buffer, at: 0, end: buffer.count, bias: bias)
        }
        let node = ASN1Node(raw, in: input)
        input = input[raw.end...]
        return node
    }
}

extension ASN1Node {
    /// Decodes a constructed node with `identifier` (SEQUENCE by default) and requires `body`
    /// to consume every child (swift-asn1's `DER.sequence`).

    public func sequence<T>(
        _ identifier: ASN1Identifier = .sequence, _ name: @autoclosure () -> String,
        _ body: (inout ASN1NodeIterator) throws(DERError) -> T
    ) throws(DERError) -> T {
        try DERRules.expect(self, identifier, constructed: true, name)
        var iterator = children()
        let value = try body(&iterator)
        try iterator.finish(name())
        return value
    }

    /// Requires this node to carry `identifier` and to be primitive; returns its content.

    public func primitive(_ identifier: ASN1Identifier, _ name: @autoclosure () -> String) throws(DERError) -> ArraySlice<UInt8> {
        try DERRules.expect(self, identifier, constructed: false, name)
        return content
    }
}
