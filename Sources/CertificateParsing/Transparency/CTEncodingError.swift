/// A Certificate Transparency structure (RFC 6962 §3) that is malformed, or an entry that cannot
/// be encoded, with the byte offset where the problem was found.
///
/// SCTs travel in the TLS presentation language (RFC 5246 §4), not in DER: length-prefixed
/// opaque vectors inside an OCTET STRING (X.509 and OCSP) or directly in a TLS extension.
/// Errors compare by ``code`` only (the swift-asn1 convention used across the project), so a test
/// can match a freshly made error; ``offset`` and ``reason`` say where and what for people.
public struct CTEncodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// The input ends inside a field or a length-prefixed vector.
        case truncated
        /// Bytes remain after a structure's last field, or after the list.
        case trailingData
        /// A vector whose length is outside the range its definition allows: an empty
        /// `SignedCertificateTimestampList` or `SerializedSCT` (both `<1..2^16-1>`), a
        /// LogID that is not 32 bytes.
        case invalidLength
        /// An SCT version this library does not know (RFC 6962 §3.2 defines only v1); RFC 6962
        /// §3.3 tells clients to skip such SCTs, so it marks one entry, never the whole list.
        case unsupportedVersion
        /// The OCTET STRING around the list (X.509 extension 1.3.6.1.4.1.11129.2.4.2, OCSP
        /// singleExtension 1.3.6.1.4.1.11129.2.4.5) is not valid DER.
        case invalidWrapping
        /// A log entry too large for its 24-bit length prefix (RFC 6962 §3.1 `ASN.1Cert`,
        /// `TBSCertificate`: `opaque <1..2^24-1>`).
        case entryTooLarge
    }

    /// The kind of problem.
    public let code: Code
    /// Byte offset in the input given to the parser (0 for errors about a whole entry).
    public let offset: Int
    /// What was wrong, for people.
    public let reason: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of problem.
    ///   - offset: Where it was found.
    ///   - reason: A one-line explanation.
    public init(_ code: Code, at offset: Int, _ reason: String) {
        self.code = code
        self.offset = offset
        self.reason = reason
    }

    /// Errors are equal when their ``code`` is, whatever the offset and reason.
    public static func == (lhs: CTEncodingError, rhs: CTEncodingError) -> Bool { lhs.code == rhs.code }
    /// Hashes the ``code`` that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// One line for people: `CT <code> at byte <offset>: <reason>`.
    public var description: String { "CT \(code.rawValue) at byte \(offset): \(reason)" }
}
