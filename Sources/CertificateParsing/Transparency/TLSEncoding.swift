/// Reads the TLS presentation language (RFC 5246 §4) from the front of a byte slice: big-endian
/// integers and length-prefixed vectors, every read bounds-checked, so hostile input ends in a
/// ``CTEncodingError`` and never in a trap.
struct TLSReader {
    private(set) var remaining: ArraySlice<UInt8>
    /// Added to slice indices so offsets are positions in the caller's original input.
    private let base: Int

    init(_ bytes: ArraySlice<UInt8>, base: Int = 0) {
        self.remaining = bytes
        self.base = base - bytes.startIndex
    }

    /// Offset (in the caller's input) of the next byte.
    var offset: Int { remaining.startIndex + base }

    var isAtEnd: Bool { remaining.isEmpty }

    mutating func bytes(_ count: Int, _ field: @autoclosure () -> String) throws(CTEncodingError) -> ArraySlice<UInt8> {
        guard remaining.count >= count else {
            throw CTEncodingError(.truncated, at: offset, "\(field()) needs \(count) bytes, \(remaining.count) remain")
        }
        let value = remaining.prefix(count)
        remaining = remaining.dropFirst(count)
        return value
    }

    /// A big-endian unsigned integer of `width` bytes (1…8).
    mutating func integer(_ width: Int, _ field: @autoclosure () -> String) throws(CTEncodingError) -> UInt64 {
        var value: UInt64 = 0
        for byte in try bytes(width, field()) { value = value << 8 | UInt64(byte) }
        return value
    }

    /// An opaque vector `<min..2^(8*width)-1>`: a `width`-byte length, then that many bytes.
    mutating func vector(
        lengthBytes width: Int, minimum: Int = 0, _ field: @autoclosure () -> String
    ) throws(CTEncodingError) -> ArraySlice<UInt8> {
        let start = offset
        let length = Int(try integer(width, "\(field()) length"))
        guard length >= minimum else {
            throw CTEncodingError(.invalidLength, at: start, "\(field()) has \(length) bytes, at least \(minimum) required")
        }
        return try bytes(length, field())
    }

    func finish(_ structure: @autoclosure () -> String) throws(CTEncodingError) {
        guard remaining.isEmpty else {
            throw CTEncodingError(.trailingData, at: offset, "\(remaining.count) bytes after the end of \(structure())")
        }
    }
}

/// Appends TLS presentation-language fields (RFC 5246 §4) to a buffer.
struct TLSWriter {
    var bytes: [UInt8] = []

    mutating func integer(_ value: UInt64, width: Int) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// A vector with a `width`-byte length prefix; the caller guarantees the length fits.
    mutating func vector<C: Collection>(_ content: C, lengthBytes width: Int) where C.Element == UInt8 {
        integer(UInt64(content.count), width: width)
        bytes.append(contentsOf: content)
    }
}
