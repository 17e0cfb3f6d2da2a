/// An X.509 v1/v2 CRL (RFC 5280 §5.1), parsed strictly, raw bytes kept for the signature check.
public struct CertificateRevocationList: Hashable, Sendable {
    /// The complete DER.
    public let derBytes: [UInt8]
    /// The TBSCertList element (what the issuer signed).
    public let tbsBytes: ArraySlice<UInt8>
    /// The signature algorithm (TBS and outer identical, RFC 5280 §5.1.1.2).
    public let signatureAlgorithm: SignatureAlgorithm
    /// The signature bytes.
    public let signature: ArraySlice<UInt8>
    /// The CRL issuer.
    public let issuer: DistinguishedName
    /// thisUpdate.
    public let thisUpdate: ASN1Time
    /// nextUpdate, if present.
    public let nextUpdate: ASN1Time?
    /// Revoked serial numbers (INTEGER content bytes) with their revocation dates.
    public let revoked: [(serial: ArraySlice<UInt8>, date: ASN1Time)]
    /// crlExtensions, raw (OID, critical, value).
    public let extensions: [Extension]

    /// Parses a DER CRL.
    public init(derEncoded bytes: [UInt8]) throws(DERError) {
        derBytes = bytes
        let root = try DER.parse(bytes)
        let (tbs, outer, bits) = try root.sequence(.sequence, "CertificateList") { nodes throws(DERError) in
            let tbs = try nodes.next(.sequence, "tbsCertList")
            let algorithm = try AlgorithmIdentifier(nodes.next(.sequence, "signatureAlgorithm"), "signatureAlgorithm")
            let bits = try nodes.next(.bitString, "signatureValue").bitString("signatureValue")
            return (tbs, algorithm, bits)
        }
        tbsBytes = tbs.encodedBytes
        signature = bits.bytes
        signatureAlgorithm = SignatureAlgorithm(outer)
        var fields = tbs.children()
        var version = 0
        if fields.peekIdentifier() == .integer {
            version = try fields.next(.integer, "version").integer("CRL version", in: 1...1)
        }
        let inner = try AlgorithmIdentifier(fields.next(.sequence, "signature"), "tbsCertList signature")
        guard inner == outer else {
            throw DERError(.invalidValue, at: inner.derBytes.startIndex, "tbsCertList signature algorithm differs from signatureAlgorithm")
        }
        issuer = try DistinguishedName(fields.next(.sequence, "CRL issuer"), "CRL issuer")
        guard let thisNode = try fields.next() else { throw DERError(.missingField, at: fields.offset, "CRL has no thisUpdate") }
        thisUpdate = try thisNode.time("thisUpdate")
        if let id = fields.peekIdentifier(), id == .utcTime || id == .generalizedTime {
            nextUpdate = try fields.next()?.time("nextUpdate")
        } else {
            nextUpdate = nil
        }
        var revoked: [(ArraySlice<UInt8>, ASN1Time)] = []
        if let list = try fields.optional(.sequence) {
            revoked = try list.sequence(.sequence, "revokedCertificates") { entries throws(DERError) in
                var out: [(ArraySlice<UInt8>, ASN1Time)] = []
                while let entry = try entries.next() {
                    out.append(try entry.sequence(.sequence, "revoked certificate") { f throws(DERError) in
                        let serial = try f.next(.integer, "userCertificate").integerBytes("userCertificate")
                        guard let dateNode = try f.next() else {
                            throw DERError(.missingField, at: entry.offset, "revoked entry has no revocationDate")
                        }
                        let date = try dateNode.time("revocationDate")
                        _ = try f.optional(.sequence)  // crlEntryExtensions
                        return (serial, date)
                    })
                }
                return out
            }
        }
        var extensions: [Extension] = []
        if let node = try fields.optional(.context(0)) {
            guard version == 1 else { throw DERError(.invalidValue, at: node.offset, "crlExtensions in a v1 CRL") }
            extensions = try node.sequence(.context(0), "crlExtensions") { outer throws(DERError) in
                try outer.next(.sequence, "Extensions").sequence(.sequence, "Extensions") { n throws(DERError) in
                    var list: [Extension] = []
                    while let child = try n.next() { list.append(try Extension(child)) }
                    return list
                }
            }
        }
        try fields.finish("tbsCertList")
        self.revoked = revoked
        self.extensions = extensions
    }

    /// Parses every `X509 CRL` block of a PEM text, or one DER CRL.
    public static func load(_ bytes: [UInt8]) throws(CertificateLoadingError) -> [CertificateRevocationList] {
        guard PEMDocument.looksLikePEM(bytes) else {
            do { return [try CertificateRevocationList(derEncoded: bytes)] } catch { throw .der(error, block: nil) }
        }
        let documents: [PEMDocument]
        do { documents = try PEMDocument.parseAll(String(decoding: bytes, as: UTF8.self)) } catch { throw .pem(error) }
        var result: [CertificateRevocationList] = []
        for (index, document) in documents.enumerated() where document.label == "X509 CRL" {
            do { result.append(try CertificateRevocationList(derEncoded: document.derBytes)) } catch {
                throw .der(error, block: (index: index + 1, line: document.line))
            }
        }
        return result
    }

    /// Whether `serial` is listed as revoked.
    public func isRevoked(_ serial: SerialNumber) -> Bool {
        revoked.contains { $0.serial.elementsEqual(serial.bytes) }
    }

    public static func == (lhs: CertificateRevocationList, rhs: CertificateRevocationList) -> Bool { lhs.derBytes == rhs.derBytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(derBytes) }
}
