/// Decoders for the universal primitive types. Each rule lives in `DERRules`, which the
/// certificate parser's raw reader calls too.
extension ASN1Node {
    /// Runs a ``DERRules`` content rule on this node's content octets.
    private func withContent<T>(_ rule: (DERRules.Content) throws(DERError) -> T) throws(DERError) -> T {
        try content.withUnsafeBufferPointer { (buffer) throws(DERError) -> T in try rule(buffer) }
    }

    /// BOOLEAN: one octet, `0x00` or `0xFF` (X.690 §11.1).

    public func boolean(_ name: @autoclosure () -> String) throws(DERError) -> Bool {
        _ = try primitive(.boolean, name())
        return try withContent { (bytes) throws(DERError) in try DERRules.boolean(bytes, at: offset, name) }
    }

    /// INTEGER content octets after the minimal-encoding check (X.690 §8.3.2), two's complement.

    public func integerBytes(_ name: @autoclosure () -> String, identifier: ASN1Identifier = .integer) throws(DERError) -> ArraySlice<UInt8> {
        let bytes = try primitive(identifier, name())
        try withContent { (bytes) throws(DERError) in try DERRules.integer(bytes, at: offset, name) }
        return bytes
    }

    /// A small INTEGER as `Int`: only values in `range` are accepted.

    public func integer(
        _ name: @autoclosure () -> String, in range: ClosedRange<Int> = 0...Int(Int32.max),
        identifier: ASN1Identifier = .integer
    ) throws(DERError) -> Int {
        _ = try primitive(identifier, name())
        return try withContent { (bytes) throws(DERError) in try DERRules.integer(bytes, in: range, at: offset, name) }
    }

    /// NULL: empty content (X.690 §8.8).

    public func null(_ name: @autoclosure () -> String) throws(DERError) {
        _ = try primitive(.null, name())
        try withContent { (bytes) throws(DERError) in try DERRules.null(bytes, at: offset, name) }
    }

    /// OCTET STRING content.

    public func octetString(_ name: @autoclosure () -> String, identifier: ASN1Identifier = .octetString) throws(DERError) -> ArraySlice<UInt8> {
        try primitive(identifier, name())
    }

    /// BIT STRING: the unused-bits octet must be 0–7, 0 for an empty string, and the unused
    /// bits themselves zero (X.690 §11.2.1).

    public func bitString(_ name: @autoclosure () -> String, identifier: ASN1Identifier = .bitString) throws(DERError) -> ASN1BitString {
        let bytes = try primitive(identifier, name())
        let unused = try withContent { (bytes) throws(DERError) in try DERRules.bitStringUnusedBits(bytes, at: offset, name) }
        return ASN1BitString(bytes: bytes.dropFirst(), unusedBits: unused)
    }

    /// OBJECT IDENTIFIER.

    public func objectIdentifier(_ name: @autoclosure () -> String) throws(DERError) -> ASN1ObjectIdentifier {
        let bytes = try primitive(.objectIdentifier, name())
        try withContent { (bytes) throws(DERError) in try DERRules.objectIdentifier(bytes, at: offset, name) }
        return ASN1ObjectIdentifier(unchecked: bytes)
    }
}

/// A BIT STRING: the bytes and how many bits of the last byte are unused.
public struct ASN1BitString: Hashable, Sendable {
    /// The bits, most significant bit first.
    public let bytes: ArraySlice<UInt8>
    /// Unused bits in the last byte (0–7).
    public let unusedBits: Int

    /// Creates a bit string.

    public init(bytes: ArraySlice<UInt8>, unusedBits: Int) {
        self.bytes = bytes
        self.unusedBits = unusedBits
    }

    /// Number of bits.
    public var bitCount: Int { bytes.count * 8 - unusedBits }

    /// Bit `n` in ASN.1 named-bit numbering (bit 0 is the most significant bit of the first byte).

    public func bit(_ n: Int) -> Bool {
        guard n >= 0, n < bitCount else { return false }
        return bytes[bytes.startIndex + n / 8] & (0x80 >> UInt8(n % 8)) != 0
    }
}

/// An OBJECT IDENTIFIER, held as its validated content octets so comparison is a byte compare.
public struct ASN1ObjectIdentifier: Hashable, Sendable, CustomStringConvertible {
    /// The content octets (X.690 §8.19).
    public let bytes: ArraySlice<UInt8>

    /// Wraps content octets already validated by ``DERRules/objectIdentifier(_:at:_:)``.
    init(unchecked bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    /// Creates an identifier from dotted decimal notation, e.g. `"2.5.29.19"`. Returns `nil`
    /// for malformed text.
    public init?(_ dotted: String) {
        let parts = dotted.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return nil }
        var arcs: [UInt64] = []
        for part in parts {
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && $0.isNumber }), let value = UInt64(part) else { return nil }
            arcs.append(value)
        }
        guard arcs[0] <= 2, arcs[0] == 2 || arcs[1] < 40 else { return nil }
        let (first, overflow) = (arcs[0] * 40).addingReportingOverflow(arcs[1])
        guard !overflow else { return nil }
        var out: [UInt8] = []
        for arc in [first] + arcs.dropFirst(2) {
            var chunk: [UInt8] = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                chunk.append(UInt8(rest & 0x7F) | 0x80)
                rest >>= 7
            }
            out.append(contentsOf: chunk.reversed())
        }
        self.bytes = out[...]
    }

    /// The arcs as integers.
    public var arcs: [UInt64] {
        var result: [UInt64] = []
        var value: UInt64 = 0
        for byte in bytes {
            value = (value << 7) | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 {
                if result.isEmpty {
                    let top: UInt64 = value < 40 ? 0 : (value < 80 ? 1 : 2)
                    result.append(top)
                    result.append(value - top * 40)
                } else {
                    result.append(value)
                }
                value = 0
            }
        }
        return result
    }

    /// Dotted decimal notation.
    public var dotted: String { arcs.map(String.init).joined(separator: ".") }
    /// The OID in dotted decimal, as ``dotted``.
    public var description: String { dotted }

    /// Two OIDs are equal when their content octets are: DER has one encoding per OID, so this is
    /// arc-for-arc equality.
    public static func == (lhs: ASN1ObjectIdentifier, rhs: ASN1ObjectIdentifier) -> Bool {
        // Profiles and extension dispatch compare OIDs by the hundred per chain.
        lhs.bytes.bytesEqual(rhs.bytes)
    }
    /// Hashes the content octets that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

extension ASN1ObjectIdentifier: ExpressibleByStringLiteral {
    /// A dotted-decimal literal; an invalid literal is a programmer error.
    public init(stringLiteral value: String) {
        guard let oid = ASN1ObjectIdentifier(value) else { preconditionFailure("invalid OID literal \(value)") }
        self = oid
    }
}
