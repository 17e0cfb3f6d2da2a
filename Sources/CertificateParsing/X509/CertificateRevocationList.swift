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
    /// The revoked certificates, in order, with their entry extensions (RFC 5280 §5.1.2.6, §5.3).
    public let entries: [RevokedCertificate]
    /// crlExtensions, raw (OID, critical, value), in order.
    public let extensions: [Extension]
    /// cRLNumber (§5.2.3), when present.
    public let number: CRLNumber?
    /// Whether cRLNumber is present but marked critical (§5.2.3 says it MUST NOT be).
    public let numberIsCritical: Bool
    /// deltaCRLIndicator's BaseCRLNumber (§5.2.4): present exactly when this is a delta CRL.
    public let deltaBase: CRLNumber?
    /// issuingDistributionPoint (§5.2.5): the CRL's scope, when it is not the issuer's whole
    /// population.
    public let issuingDistributionPoint: IssuingDistributionPoint?
    /// authorityKeyIdentifier (§5.2.1): which of the issuer's keys signed the CRL.
    public let authorityKeyIdentifier: AuthorityKeyIdentifier?
    /// freshestCRL (§5.2.6): where delta CRLs for this CRL are published.
    public let freshestCRL: [DistributionPoint]?

    /// The CRL extensions this model decodes. A critical extension of any other type makes the
    /// CRL unusable: "If a CRL contains a critical extension that the application cannot
    /// process, then the application MUST NOT use that CRL" (§5.2).
    public static let decodedOIDs: Set<ASN1ObjectIdentifier> = [
        OID.authorityKeyIdentifier, OID.issuerAltName, OID.crlNumber, OID.deltaCRLIndicator, OID.issuingDistributionPoint,
        OID.freshestCRL, OID.authorityInfoAccess,
    ]

    /// CRL extensions marked critical that this model does not decode.
    public var unknownCriticalExtensions: [Extension] {
        extensions.filter { $0.critical && !CertificateRevocationList.decodedOIDs.contains($0.oid) }
    }

    /// Whether this is a delta CRL (it carries deltaCRLIndicator).
    public var isDelta: Bool { deltaBase != nil }

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
        var entries: [RevokedCertificate] = []
        if let list = try fields.optional(.sequence) {
            entries = try input.sequence(list, .sequence, "revokedCertificates") { items throws(DERError) in
                var out: [RevokedCertificate] = []
                while let entry = try items.next() { out.append(try RevokedCertificate(entry, input)) }
                return out
            }
        }
        var extensions: [Extension] = []
        if let node = try fields.optional(.context(0)) {
            guard version == 1 else { throw DERError(.invalidValue, at: node.start, "crlExtensions in a v1 CRL") }
            extensions = try input.sequence(node, .context(0), "crlExtensions") { outer throws(DERError) in
                try Extension.list(outer.next(.sequence, "Extensions"), input, "crlExtensions")
            }
        }
        // §5.1.2.6 / §5.3: entry extensions only in v2 CRLs.
        if version == 0, let entry = entries.first(where: { !$0.extensions.isEmpty }) {
            throw DERError(.invalidValue, at: entry.extensions[0].derBytes.startIndex, "crlEntryExtensions in a v1 CRL")
        }
        try fields.finish("tbsCertList")
        var number: CRLNumber?
        var numberIsCritical = false
        var deltaBase: CRLNumber?
        var idp: IssuingDistributionPoint?
        var aki: AuthorityKeyIdentifier?
        var freshest: [DistributionPoint]?
        for ext in extensions {
            let value = try input.single(ext.valueRange)
            switch ext.oid {
            case OID.crlNumber:
                number = try CRLNumber(value, input, "cRLNumber")
                numberIsCritical = ext.critical
            case OID.deltaCRLIndicator: deltaBase = try CRLNumber(value, input, "BaseCRLNumber")
            case OID.issuingDistributionPoint: idp = try IssuingDistributionPoint(value, input)
            case OID.authorityKeyIdentifier: aki = try AuthorityKeyIdentifier(value, input)
            case OID.freshestCRL: freshest = try DistributionPoint.list(value, input)
            default: break
            }
        }
        self.entries = entries
        self.extensions = extensions
        self.number = number
        self.numberIsCritical = numberIsCritical
        self.deltaBase = deltaBase
        self.issuingDistributionPoint = idp
        self.authorityKeyIdentifier = aki
        self.freshestCRL = freshest
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

    /// Whether `serial` is listed (for any certificate issuer: an indirect CRL's entries name
    /// their issuer with certificateIssuer, which a verifier must match as well).
    public func isRevoked(_ serial: SerialNumber) -> Bool {
        entries.contains { $0.serialNumber.bytes.bytesEqual(serial.bytes) }
    }

    /// Two CRLs are equal when their DER encodings are byte-identical.
    public static func == (lhs: CertificateRevocationList, rhs: CertificateRevocationList) -> Bool { lhs.derBytes == rhs.derBytes }
    /// Hashes the encoding that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(derBytes) }
}

/// Why ``CertificateRevocationList/load(_:)`` failed: the PEM structure, or the DER of one CRL,
/// named by its block so that a message points at the CRL, not at "a certificate".
public enum CRLLoadingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The PEM structure is broken.
    case pem(PEMError)
    /// A CRL's DER is malformed; `block` is its 1-based index and line in a PEM file.
    case der(DERError, block: (index: Int, line: Int)?)

    /// Errors are equal when their PEM or DER errors are (by code), whatever block they were in.
    public static func == (lhs: CRLLoadingError, rhs: CRLLoadingError) -> Bool {
        switch (lhs, rhs) {
        case (.pem(let a), .pem(let b)): return a == b
        case (.der(let a, _), .der(let b, _)): return a == b
        default: return false
        }
    }

    /// Hashes the PEM or DER error that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .pem(let e): hasher.combine(e)
        case .der(let e, _): hasher.combine(e)
        }
    }

    /// The PEM or DER error's text, naming the CRL and, in a PEM file, its block and line.
    public var description: String {
        switch self {
        case .pem(let error): return error.description
        case .der(let error, let block?): return "CRL in PEM block \(block.index) (line \(block.line)): \(error)"
        case .der(let error, nil): return "CRL: \(error)"
        }
    }
}
