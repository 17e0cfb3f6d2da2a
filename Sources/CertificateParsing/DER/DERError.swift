/// A malformed or non-DER encoding, with the byte offset where it was found.
///
/// Errors compare by ``code`` only (the swift-asn1 convention), so a test can compare against a
/// freshly made error; ``offset`` and ``reason`` say where and what for people.
public struct DERError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of DER violation this is.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// The input ends before the element it announces.
        case truncated
        /// An indefinite length (BER `0x80`), forbidden in DER (X.690 §10.1).
        case indefiniteLength
        /// A length in long form that could have been shorter, or has a leading zero byte (X.690 §10.1).
        case nonMinimalLength
        /// A length too large for this reader (more than 4 length bytes, or the reserved `0xFF`).
        case unsupportedLength
        /// A tag number encoded non-minimally, or too large (X.690 §8.1.2.4).
        case invalidTag
        /// A constructed encoding where DER requires primitive, or the reverse (X.690 §10.2).
        case invalidConstruction
        /// Bytes left after the outermost element or after a structure's last field.
        case trailingData
        /// Nesting deeper than ``DER/maximumDepth``.
        case tooDeep
        /// An element with another tag than the structure requires here.
        case unexpectedTag
        /// A missing mandatory field.
        case missingField
        /// A value that is not valid for its type (bad BOOLEAN, INTEGER, OID, string or time).
        case invalidValue
    }

    /// The kind of violation.
    public let code: Code
    /// Byte offset of the offending element in the buffer given to the parser.
    public let offset: Int
    /// Human-readable detail.
    public let reason: String

    /// Creates an error. Prefer the static factories at call sites.
    public init(_ code: Code, at offset: Int, _ reason: String) {
        self.code = code
        self.offset = offset
        self.reason = reason
    }

    /// Errors are equal when their ``code`` is, whatever the offset and reason.
    public static func == (lhs: DERError, rhs: DERError) -> Bool { lhs.code == rhs.code }
    /// Hashes the ``code`` that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// One line for people: `DER <code> at byte <offset>: <reason>`.
    public var description: String { "DER \(code.rawValue) at byte \(offset): \(reason)" }
}
