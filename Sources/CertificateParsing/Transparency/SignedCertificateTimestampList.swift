/// A `SignedCertificateTimestampList` (RFC 6962 §3.3): the one encoding every SCT delivery uses.
///
/// ```
/// opaque SerializedSCT<1..2^16-1>;
/// struct { SerializedSCT sct_list <1..2^16-1>; } SignedCertificateTimestampList;
/// ```
///
/// The same TLS bytes arrive three ways: inside an OCTET STRING in the certificate extension
/// 1.3.6.1.4.1.11129.2.4.2 (``Extensions/signedCertificateTimestamps`` already holds that
/// OCTET STRING's content), as the `extension_data` of the TLS `signed_certificate_timestamp`
/// extension, and inside an OCTET STRING in the OCSP singleExtension 1.3.6.1.4.1.11129.2.4.5
/// (``init(extensionValue:)`` reads the X.509 and OCSP forms).
///
/// The list framing is strict: a malformed list is an error. Each entry is parsed on its own,
/// and an entry that fails (an unknown version, a truncated field) stays in ``entries`` as
/// ``Entry/malformed(serialized:error:)``: RFC 6962 §3.3 has clients skip SCTs they cannot use,
/// and the report should say which one was skipped and why.
public struct SignedCertificateTimestampList: Hashable, Sendable {
    /// One `SerializedSCT`.
    public enum Entry: Hashable, Sendable {
        /// A well-formed SCT.
        case parsed(SignedCertificateTimestamp)
        /// An SCT that could not be parsed, with its bytes and the reason.
        case malformed(serialized: [UInt8], error: CTEncodingError)
    }

    /// The entries, in the order they were sent.
    public let entries: [Entry]

    /// The well-formed SCTs, in order.
    public var timestamps: [SignedCertificateTimestamp] {
        entries.compactMap { entry in
            if case .parsed(let sct) = entry { return sct }
            return nil
        }
    }

    /// Parses the TLS encoding (a TLS extension's `extension_data`, or the content of the
    /// X.509/OCSP OCTET STRING).
    ///
    /// - Parameter bytes: The TLS-encoded list.
    /// - Throws: ``CTEncodingError`` if the list framing is malformed: a wrong total length, an
    ///   empty list or entry, trailing bytes.
    public init(tlsEncoded bytes: some Collection<UInt8>) throws(CTEncodingError) {
        let input = Array(bytes)
        var reader = TLSReader(input[...])
        let list = try reader.vector(lengthBytes: 2, minimum: 1, "sct_list")
        try reader.finish("SignedCertificateTimestampList")
        var listReader = TLSReader(list, base: 2)
        var entries: [Entry] = []
        while !listReader.isAtEnd {
            let start = listReader.offset + 2
            let serialized = try listReader.vector(lengthBytes: 2, minimum: 1, "SerializedSCT")
            do {
                entries.append(.parsed(try SignedCertificateTimestamp(serialized, base: start)))
            } catch {
                entries.append(.malformed(serialized: Array(serialized), error: error))
            }
        }
        self.entries = entries
    }

    /// Parses the DER OCTET STRING that carries the list in the X.509 extension
    /// 1.3.6.1.4.1.11129.2.4.2 and in the OCSP singleExtension 1.3.6.1.4.1.11129.2.4.5 (RFC 6962
    /// §3.3: the extnValue OCTET STRING holds a second OCTET STRING with the TLS bytes).
    ///
    /// - Parameter extensionValue: The extnValue content: the inner OCTET STRING's DER.
    /// - Throws: ``CTEncodingError`` with ``CTEncodingError/Code/invalidWrapping`` if it is not
    ///   exactly one DER OCTET STRING, or as ``init(tlsEncoded:)``.
    public init(extensionValue: some Collection<UInt8>) throws(CTEncodingError) {
        let der = Array(extensionValue)
        let content: ArraySlice<UInt8>
        do {
            content = try DER.parse(der).primitive(.octetString, "SignedCertificateTimestampList")
        } catch {
            throw CTEncodingError(.invalidWrapping, at: error.offset, "the SCT list's OCTET STRING: \(error.reason)")
        }
        try self.init(tlsEncoded: content)
    }

    /// The TLS encoding of a list of serialized SCTs, for callers that receive SCTs one by one
    /// (OpenSSL's `i2o_SCT`) and need the list form ``init(tlsEncoded:)`` reads.
    ///
    /// - Parameter serializedSCTs: Each SCT's TLS encoding.
    /// - Returns: The list, or `nil` when it cannot be encoded (no SCT, an empty SCT, or more
    ///   than 65,535 bytes).
    public static func encode(_ serializedSCTs: [[UInt8]]) -> [UInt8]? {
        guard !serializedSCTs.isEmpty, serializedSCTs.allSatisfy({ (1...0xFFFF).contains($0.count) }) else { return nil }
        var inner = TLSWriter()
        for sct in serializedSCTs { inner.vector(sct, lengthBytes: 2) }
        guard inner.bytes.count <= 0xFFFF else { return nil }
        var outer = TLSWriter()
        outer.vector(inner.bytes, lengthBytes: 2)
        return outer.bytes
    }
}
