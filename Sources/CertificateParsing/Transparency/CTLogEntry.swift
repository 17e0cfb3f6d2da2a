/// What a CT log signed an SCT over (RFC 6962 §3.2 `signed_entry`): the certificate itself
/// (`x509_entry`, for SCTs delivered in the TLS extension or a stapled OCSP response) or the
/// precertificate (`precert_entry`, for SCTs embedded in the certificate).
///
/// A client never sees the precertificate; it rebuilds the entry from the final certificate as
/// RFC 6962 §3.2 says: the TBSCertificate with the SCT list extension deleted, and the SHA-256
/// of the issuer's SubjectPublicKeyInfo. That also covers a precertificate signed by a
/// Precertificate Signing Certificate (RFC 6962 §3.1): the log rewrote its issuer to the CA
/// that issues the final certificate, which is the final certificate's issuer, so the issuer
/// to pass is always the certificate that signed the final certificate, never a precertificate
/// signing certificate.
public struct CTLogEntry: Hashable, Sendable {
    /// The `LogEntryType` (RFC 6962 §3.1).
    public enum EntryType: UInt16, Hashable, Sendable {
        /// x509_entry(0): the certificate.
        case x509 = 0
        /// precert_entry(1): the precertificate's TBSCertificate and issuer key hash.
        case precertificate = 1
    }

    /// The entry type.
    public let type: EntryType
    /// For ``EntryType/precertificate``, SHA-256 of the issuer's DER SubjectPublicKeyInfo
    /// (`issuer_key_hash`); `nil` for ``EntryType/x509``.
    public let issuerKeyHash: [UInt8]?
    /// The certificate DER (`ASN.1Cert`) or the reconstructed TBSCertificate DER
    /// (`tbs_certificate`).
    public let certificateBytes: [UInt8]

    private init(type: EntryType, issuerKeyHash: [UInt8]?, certificateBytes: [UInt8]) throws(CTEncodingError) {
        // RFC 6962 §3.1: opaque ASN.1Cert<1..2^24-1> and TBSCertificate<1..2^24-1>.
        guard (1...0xFF_FFFF).contains(certificateBytes.count) else {
            throw CTEncodingError(.entryTooLarge, at: 0, "a \(certificateBytes.count)-byte entry does not fit RFC 6962's 24-bit length")
        }
        self.type = type
        self.issuerKeyHash = issuerKeyHash
        self.certificateBytes = certificateBytes
    }

    /// The `x509_entry` of a certificate whose SCTs came in the TLS extension or a stapled OCSP
    /// response.
    ///
    /// - Parameter certificate: The leaf certificate.
    /// - Returns: The entry.
    /// - Throws: ``CTEncodingError`` (``CTEncodingError/Code/entryTooLarge``) for a certificate
    ///   over 16 MiB.
    public static func x509(_ certificate: Certificate) throws(CTEncodingError) -> CTLogEntry {
        try CTLogEntry(type: .x509, issuerKeyHash: nil, certificateBytes: certificate.derBytes)
    }

    /// The `precert_entry` rebuilt from a final certificate for its embedded SCTs (RFC 6962
    /// §3.2): its TBSCertificate re-encoded without the SCT list extension, other extensions
    /// and every other byte unchanged, and the SHA-256 of `issuer`'s SubjectPublicKeyInfo.
    ///
    /// - Parameters:
    ///   - certificate: The final certificate with the embedded SCT list.
    ///   - issuer: The certificate that signed it (the CA that issues the final certificate).
    /// - Returns: The entry.
    /// - Throws: ``CTEncodingError`` if the TBSCertificate cannot be re-read or is too large.
    public static func precertificate(_ certificate: Certificate, issuer: Certificate) throws(CTEncodingError) -> CTLogEntry {
        try CTLogEntry(
            type: .precertificate,
            issuerKeyHash: SHA256.hash(issuer.subjectPublicKeyInfo.derBytes),
            certificateBytes: try tbsCertificateWithoutSCTList(certificate))
    }

    /// The TBSCertificate of `certificate` with the extension 1.3.6.1.4.1.11129.2.4.2 removed:
    /// the SEQUENCE of extensions, the `[3]` wrapper and the TBSCertificate get new lengths;
    /// when the SCT list was the only extension the `[3]` field is omitted, since `extensions`
    /// is `SIZE (1..MAX)` (RFC 5280 §4.1), as OpenSSL and Go also encode it. A certificate
    /// without the extension yields its TBSCertificate unchanged.
    static func tbsCertificateWithoutSCTList(_ certificate: Certificate) throws(CTEncodingError) -> [UInt8] {
        let tbs = certificate.tbsBytes
        guard let sctExtension = certificate.extensions[OID.signedCertificateTimestampList] else { return Array(tbs) }
        let der = certificate.derBytes
        let removed = sctExtension.derBytes.startIndex..<sctExtension.derBytes.endIndex
        do {
            return try DERInput.with(der) { input throws(DERError) -> [UInt8] in
                let tbsNode = try input.single(tbs.startIndex..<tbs.endIndex)
                var fields = input.children(tbsNode)
                var extensionsField: RawNode?
                while let field = try fields.next() {
                    if field.identifier == .context(3) { extensionsField = field }
                }
                guard let wrapper = extensionsField else { return Array(tbs) }
                let list = try input.single(wrapper.contentRange)
                var kept: [UInt8] = []
                kept.reserveCapacity(list.contentCount)
                var items = input.children(list)
                while let item = try items.next() {
                    if item.range != removed { kept += der[item.range] }
                }
                var content = Array(der[tbsNode.contentStart..<wrapper.start])
                if !kept.isEmpty {
                    let sequence = [UInt8(0x30)] + DERLength.encode(kept.count) + kept
                    content += [der[wrapper.start]] + DERLength.encode(sequence.count) + sequence
                }
                content += der[wrapper.end..<tbsNode.end]
                return [UInt8(0x30)] + DERLength.encode(content.count) + content
            }
        } catch {
            throw CTEncodingError(.invalidWrapping, at: error.offset, "the TBSCertificate could not be re-read: \(error.reason)")
        }
    }

    /// Bytes ``encode(into:)`` appends.
    var encodedCount: Int { 2 + (issuerKeyHash?.count ?? 0) + 3 + certificateBytes.count }

    /// Appends `entry_type` and `signed_entry` (RFC 6962 §3.2).
    func encode(into writer: inout TLSWriter) {
        writer.integer(UInt64(type.rawValue), width: 2)
        if let issuerKeyHash { writer.bytes += issuerKeyHash }
        writer.vector(certificateBytes, lengthBytes: 3)
    }
}

/// DER definite lengths (X.690 §8.1.3, minimal as §10.1 requires).
enum DERLength {
    static func encode(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var octets: [UInt8] = []
        var rest = count
        while rest > 0 {
            octets.insert(UInt8(truncatingIfNeeded: rest), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(octets.count)] + octets
    }
}
