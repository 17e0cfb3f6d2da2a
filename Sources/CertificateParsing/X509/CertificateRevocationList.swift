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
        self = try DERInput.with(bytes) { input throws(DERError) in try CertificateRevocationList(input) }
    }

    private init(_ input: DERInput) throws(DERError) {
        derBytes = input.base
        let root = try input.single(0..<input.buffer.count)
        let (tbs, outer, bits) = try input.sequence(root, .sequence, "CertificateList") { nodes throws(DERError) in
            let tbs = try nodes.next(.sequence, "tbsCertList")
            let algorithm = try AlgorithmIdentifier(nodes.next(.sequence, "signatureAlgorithm"), input, "signatureAlgorithm")
            let bits = try input.bitString(nodes.next(.bitString, "signatureValue"), "signatureValue")
            return (tbs, algorithm, bits)
        }
        tbsBytes = input.slice(tbs.range)
        signature = bits.bytes
        signatureAlgorithm = SignatureAlgorithm(outer)
        var fields = input.children(tbs)
        var version = 0
        if fields.peekIdentifier() == .integer {
            version = try input.integer(fields.next(.integer, "version"), "CRL version", in: 1...1)
        }
        let inner = try AlgorithmIdentifier(fields.next(.sequence, "signature"), input, "tbsCertList signature")
        guard inner == outer else {
            throw DERError(.invalidValue, at: inner.derBytes.startIndex, "tbsCertList signature algorithm differs from signatureAlgorithm")
        }
        issuer = try DistinguishedName(fields.next(.sequence, "CRL issuer"), input, "CRL issuer")
        guard let thisNode = try fields.next() else { throw DERError(.missingField, at: tbs.start, "CRL has no thisUpdate") }
        thisUpdate = try input.time(thisNode, "thisUpdate")
        if let id = fields.peekIdentifier(), id == .utcTime || id == .generalizedTime, let next = try fields.next() {
            nextUpdate = try input.time(next, "nextUpdate")
        } else {
            nextUpdate = nil
        }
        var revoked: [(ArraySlice<UInt8>, ASN1Time)] = []
        if let list = try fields.optional(.sequence) {
            revoked = try input.sequence(list, .sequence, "revokedCertificates") { entries throws(DERError) in
                var out: [(ArraySlice<UInt8>, ASN1Time)] = []
                while let entry = try entries.next() {
                    out.append(try input.sequence(entry, .sequence, "revoked certificate") { f throws(DERError) in
                        let serial = input.slice(try input.integerRange(f.next(.integer, "userCertificate"), "userCertificate"))
                        guard let dateNode = try f.next() else {
                            throw DERError(.missingField, at: entry.start, "revoked entry has no revocationDate")
                        }
                        let date = try input.time(dateNode, "revocationDate")
                        _ = try f.optional(.sequence)  // crlEntryExtensions
                        return (serial, date)
                    })
                }
                return out
            }
        }
        var extensions: [Extension] = []
        if let node = try fields.optional(.context(0)) {
            guard version == 1 else { throw DERError(.invalidValue, at: node.start, "crlExtensions in a v1 CRL") }
            extensions = try input.sequence(node, .context(0), "crlExtensions") { outer throws(DERError) in
                try input.sequence(outer.next(.sequence, "Extensions"), .sequence, "Extensions") { n throws(DERError) in
                    var list: [Extension] = []
                    while let child = try n.next() { list.append(try Extension(child, input)) }
                    return list
                }
            }
        }
        try fields.finish("tbsCertList")
        self.revoked = revoked
        self.extensions = extensions
    }

    /// Parses every `X509 CRL` block of a PEM text, or one DER CRL.
    public static func load(_ bytes: [UInt8]) throws(CRLLoadingError) -> [CertificateRevocationList] {
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
        revoked.contains { $0.serial.bytesEqual(serial.bytes) }
    }

    public static func == (lhs: CertificateRevocationList, rhs: CertificateRevocationList) -> Bool { lhs.derBytes == rhs.derBytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(derBytes) }
}

/// Why ``CertificateRevocationList/load(_:)`` failed: the PEM structure, or the DER of one CRL,
/// named by its block so that a message points at the CRL, not at "a certificate".
public enum CRLLoadingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The PEM structure is broken.
    case pem(PEMError)
    /// A CRL's DER is malformed; `block` is its 1-based index and line in a PEM file.
    case der(DERError, block: (index: Int, line: Int)?)

    public static func == (lhs: CRLLoadingError, rhs: CRLLoadingError) -> Bool {
        switch (lhs, rhs) {
        case (.pem(let a), .pem(let b)): return a == b
        case (.der(let a, _), .der(let b, _)): return a == b
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .pem(let e): hasher.combine(e)
        case .der(let e, _): hasher.combine(e)
        }
    }

    public var description: String {
        switch self {
        case .pem(let error): return error.description
        case .der(let error, let block?): return "CRL in PEM block \(block.index) (line \(block.line)): \(error)"
        case .der(let error, nil): return "CRL: \(error)"
        }
    }
}
