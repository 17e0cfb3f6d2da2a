/// Decoders for the universal primitive types, each enforcing its DER rule (X.690 §10–11).
extension ASN1Node {
    /// BOOLEAN: one octet, `0x00` or `0xFF` (X.690 §11.1).

    public func boolean(_ name: @autoclosure () -> String) throws(DERError) -> Bool {
        let bytes = try primitive(.boolean, name())
        guard bytes.count == 1 else {
            throw DERError(.invalidValue, at: offset, "\(name()): BOOLEAN must be one octet")
        }
        switch bytes.first! {
        case 0x00: return false
        case 0xFF: return true
        default: throw DERError(.invalidValue, at: offset, "\(name()): DER BOOLEAN TRUE must be 0xFF")
        }
    }

    /// INTEGER content octets after the minimal-encoding check (X.690 §8.3.2), two's complement.

    public func integerBytes(_ name: @autoclosure () -> String, identifier: ASN1Identifier = .integer) throws(DERError) -> ArraySlice<UInt8> {
        let bytes = try primitive(identifier, name())
        try ASN1Node.checkMinimalInteger(bytes, at: offset, name())
        return bytes
    }

    static func checkMinimalInteger(_ bytes: ArraySlice<UInt8>, at offset: Int, _ name: @autoclosure () -> String) throws(DERError) {
        guard let first = bytes.first else {
            throw DERError(.invalidValue, at: offset, "\(name()): INTEGER has no content octets")
        }
        if bytes.count > 1 {
            let second = bytes[bytes.startIndex + 1]
            if (first == 0x00 && second & 0x80 == 0) || (first == 0xFF && second & 0x80 != 0) {
                throw DERError(.invalidValue, at: offset, "\(name()): INTEGER is not minimally encoded")
            }
        }
    }

    /// A small INTEGER as `Int`: only values in `range` are accepted.

    public func integer(
        _ name: @autoclosure () -> String, in range: ClosedRange<Int> = 0...Int(Int32.max),
        identifier: ASN1Identifier = .integer
    ) throws(DERError) -> Int {
        let bytes = try integerBytes(name(), identifier: identifier)
        guard bytes.count <= 8 else {
            throw DERError(.invalidValue, at: offset, "\(name()): INTEGER out of range")
        }
        var value: Int64 = bytes.first! & 0x80 != 0 ? -1 : 0
        for byte in bytes { value = (value << 8) | Int64(byte) }
        guard let result = Int(exactly: value), range.contains(result) else {
            throw DERError(.invalidValue, at: offset, "\(name()): INTEGER \(value) outside \(range)")
        }
        return result
    }

    /// NULL: empty content (X.690 §8.8).

    public func null(_ name: @autoclosure () -> String) throws(DERError) {
        let bytes = try primitive(.null, name())
        guard bytes.isEmpty else { throw DERError(.invalidValue, at: offset, "\(name()): NULL must be empty") }
    }

    /// OCTET STRING content.

    public func octetString(_ name: @autoclosure () -> String, identifier: ASN1Identifier = .octetString) throws(DERError) -> ArraySlice<UInt8> {
        try primitive(identifier, name())
    }

    /// BIT STRING: the unused-bits octet must be 0–7, 0 for an empty string, and the unused
    /// bits themselves zero (X.690 §11.2.1).

    public func bitString(_ name: @autoclosure () -> String, identifier: ASN1Identifier = .bitString) throws(DERError) -> ASN1BitString {
        let bytes = try primitive(identifier, name())
        guard let unused = bytes.first else {
            throw DERError(.invalidValue, at: offset, "\(name()): BIT STRING has no unused-bits octet")
        }
        guard unused <= 7 else {
            throw DERError(.invalidValue, at: offset, "\(name()): BIT STRING unused-bits octet is \(unused)")
        }
        let data = bytes.dropFirst()
        if data.isEmpty {
            guard unused == 0 else {
                throw DERError(.invalidValue, at: offset, "\(name()): empty BIT STRING with unused bits")
            }
        } else if unused > 0 {
            let mask = UInt8((1 << unused) - 1)
            guard data.last! & mask == 0 else {
                throw DERError(.invalidValue, at: offset, "\(name()): BIT STRING unused bits are not zero")
            }
        }
        return ASN1BitString(bytes: data, unusedBits: Int(unused))
    }

    /// OBJECT IDENTIFIER.

    public func objectIdentifier(_ name: @autoclosure () -> String) throws(DERError) -> ASN1ObjectIdentifier {
        let bytes = try primitive(.objectIdentifier, name())
        return try ASN1ObjectIdentifier(validating: bytes, at: offset, name())
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

    init(validating bytes: ArraySlice<UInt8>, at offset: Int, _ name: @autoclosure () -> String) throws(DERError) {
        guard !bytes.isEmpty else {
            throw DERError(.invalidValue, at: offset, "\(name()): OBJECT IDENTIFIER is empty")
        }
        guard bytes.last! & 0x80 == 0 else {
            throw DERError(.invalidValue, at: offset, "\(name()): OBJECT IDENTIFIER ends inside an arc")
        }
        // X.690 §8.19.2: each subidentifier is minimal, so no arc starts with 0x80. Arcs are
        // limited to 64 bits (as the dotted-text initialiser is) so rendering never overflows.
        var arcStart = true
        var value: UInt64 = 0
        for byte in bytes {
            if arcStart && byte == 0x80 {
                throw DERError(.invalidValue, at: offset, "\(name()): OBJECT IDENTIFIER arc is not minimally encoded")
            }
            guard value >> 57 == 0 else {
                throw DERError(.invalidValue, at: offset, "\(name()): OBJECT IDENTIFIER arc exceeds 64 bits")
            }
            value = value << 7 | UInt64(byte & 0x7F)
            arcStart = byte & 0x80 == 0
            if arcStart { value = 0 }
        }
        self.bytes = bytes
    }

    /// Wraps content octets already validated by the raw reader.
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
