/// An OCSPResponse (RFC 6960 §4.2.1), parsed strictly from DER: the response status and, for a
/// successful response, the ``BasicOCSPResponse`` it carries.
///
/// This is the model only: nothing here says whether the response is signed by someone entitled
/// to answer, speaks for a given certificate, or is current. The verifier in TrustEvaluation
/// decides that (RFC 6960 §3.2, §4.2.2.2).
public struct OCSPResponse: Hashable, Sendable {
    /// The complete DER, as given.
    public let derBytes: [UInt8]
    /// responseStatus.
    public let status: OCSPResponseStatus
    /// The basic response: present exactly when ``status`` is
    /// ``OCSPResponseStatus/successful`` (RFC 6960 §4.2.1: "If the value of responseStatus is
    /// one of the error conditions, the responseBytes field is not set").
    public let basic: BasicOCSPResponse?

    /// Parses a DER OCSPResponse.
    ///
    /// - Parameter bytes: The DER, for example a stapled response as the TLS CertificateStatus
    ///   message or the TLS 1.3 status_request extension carried it.
    /// - Throws: ``DERError`` naming the field and byte offset: malformed DER, a successful
    ///   status without responseBytes or an error status with them, a responseType other than
    ///   id-pkix-ocsp-basic, a time that is not a GeneralizedTime, a malformed certificate in
    ///   `certs` (its offset counted from the start of the response).
    public init(derEncoded bytes: [UInt8]) throws(DERError) {
        self = try DERInput.with(bytes) { input throws(DERError) in try OCSPResponse(input) }
    }

    private init(_ input: DERInput) throws(DERError) {
        derBytes = input.base
        let root = try input.single(0..<input.buffer.count)
        (status, basic) = try input.sequence(root, .sequence, "OCSPResponse") { fields throws(DERError) in
            let statusNode = try fields.next(.enumerated, "responseStatus")
            let code = try input.integer(statusNode, "responseStatus", in: 0...6, identifier: .enumerated)
            // RFC 6960 §4.2.1: value 4 is not used.
            guard let status = OCSPResponseStatus(rawValue: code) else {
                throw DERError(.invalidValue, at: statusNode.start, "responseStatus \(code) is not an OCSPResponseStatus")
            }
            guard let bytesNode = try fields.optional(.context(0)) else {
                guard status != .successful else {
                    throw DERError(.missingField, at: root.start, "a successful OCSPResponse has no responseBytes (RFC 6960 4.2.1)")
                }
                return (status, nil)
            }
            guard status == .successful else {
                throw DERError(.invalidValue, at: bytesNode.start, "an OCSPResponse with status \(status) carries responseBytes (RFC 6960 4.2.1)")
            }
            let basic = try input.sequence(bytesNode, .context(0), "responseBytes") { outer throws(DERError) in
                try input.sequence(outer.next(.sequence, "ResponseBytes"), .sequence, "ResponseBytes") { inner throws(DERError) in
                    let typeNode = try inner.next(.objectIdentifier, "responseType")
                    let type = try input.objectIdentifier(typeNode, "responseType")
                    let response = try input.primitive(inner.next(.octetString, "response"), .octetString, "response")
                    guard type == OID.ocspBasic else {
                        throw DERError(.invalidValue, at: typeNode.start, "responseType \(type) is not id-pkix-ocsp-basic (RFC 6960 4.2.1)")
                    }
                    return try BasicOCSPResponse(input.single(response), input)
                }
            }
            return (status, basic)
        }
    }

    /// Two responses are equal when their DER encodings are byte-identical.
    public static func == (lhs: OCSPResponse, rhs: OCSPResponse) -> Bool { lhs.derBytes == rhs.derBytes }
    /// Hashes the encoding that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(derBytes) }
}

/// responseStatus (RFC 6960 §4.2.1).
public enum OCSPResponseStatus: Int, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The response has valid confirmations.
    case successful = 0
    /// The request was not understood.
    case malformedRequest = 1
    /// The responder reached an inconsistent internal state.
    case internalError = 2
    /// The responder cannot answer now; try again later.
    case tryLater = 3
    /// The responder wants a signed request.
    case sigRequired = 5
    /// The client may not query this responder (or the responder knows nothing of the CA).
    case unauthorized = 6

    /// The status as RFC 6960 spells it (`tryLater`).
    public var description: String {
        switch self {
        case .successful: return "successful"
        case .malformedRequest: return "malformedRequest"
        case .internalError: return "internalError"
        case .tryLater: return "tryLater"
        case .sigRequired: return "sigRequired"
        case .unauthorized: return "unauthorized"
        }
    }
}

/// A BasicOCSPResponse (RFC 6960 §4.2.1): the signed ResponseData, its signature and the
/// certificates the responder sent along (a delegated responder's own certificate, usually).
public struct BasicOCSPResponse: Hashable, Sendable {
    /// The tbsResponseData element as encoded: what the responder signed.
    public let tbsResponseData: ArraySlice<UInt8>
    /// The signature algorithm, decoded.
    public let signatureAlgorithm: SignatureAlgorithm
    /// The signature algorithm as encoded.
    public let signatureAlgorithmIdentifier: AlgorithmIdentifier
    /// The signature BIT STRING's bytes (a signature with unused bits is malformed).
    public let signature: ArraySlice<UInt8>
    /// `certs`: the certificates the responder included, in order (RFC 6960 §4.2.1 "to help
    /// the OCSP client verify the responder's signature"); none of them is trusted for being here.
    public let certificates: [Certificate]
    /// responderID: who signed.
    public let responderID: OCSPResponderID
    /// producedAt: when the responder signed.
    public let producedAt: ASN1Time
    /// responses: one per certificate asked about, in order.
    public let responses: [OCSPSingleResponse]
    /// responseExtensions, raw, in order (the nonce of §4.4.1, for one).
    public let responseExtensions: [Extension]

    /// The response extensions a client may meet and safely ignore or read: nonce (§4.4.1) and
    /// extended revoke (§4.4.8). A critical response extension of any other type makes the
    /// response unusable, as RFC 5280 §4.2 rules for certificates.
    public static let understoodExtensions: Set<ASN1ObjectIdentifier> = [OID.ocspNonce, OID.ocspExtendedRevoke]

    /// Response extensions marked critical that are not in ``understoodExtensions``.
    public var unknownCriticalExtensions: [Extension] {
        responseExtensions.filter { $0.critical && !Self.understoodExtensions.contains($0.oid) }
    }

    /// The nonce extension's value (RFC 6960 §4.4.1), as encoded inside extnValue; stapled
    /// responses carry none (the server, not the client, asked for them).
    public var nonce: ArraySlice<UInt8>? { responseExtensions.first { $0.oid == OID.ocspNonce }?.value }

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        let (tbs, algorithm, bits, certificates) = try input.sequence(node, .sequence, "BasicOCSPResponse") { fields throws(DERError) in
            let tbs = try fields.next(.sequence, "tbsResponseData")
            let algorithm = try AlgorithmIdentifier(fields.next(.sequence, "signatureAlgorithm"), input, "signatureAlgorithm")
            let bits = try input.bitString(fields.next(.bitString, "signature"), "signature")
            var certificates: [Certificate] = []
            if let certs = try fields.optional(.context(0)) {
                certificates = try input.sequence(certs, .context(0), "certs") { outer throws(DERError) in
                    try input.sequence(outer.next(.sequence, "certs"), .sequence, "certs") { list throws(DERError) in
                        var out: [Certificate] = []
                        while let certificate = try list.next() { out.append(try Self.certificate(certificate, input)) }
                        return out
                    }
                }
            }
            return (tbs, algorithm, bits, certificates)
        }
        guard bits.unusedBits == 0 else { throw DERError(.invalidValue, at: tbs.end, "signature has unused bits") }
        tbsResponseData = input.slice(tbs.range)
        signatureAlgorithmIdentifier = algorithm
        signatureAlgorithm = SignatureAlgorithm(algorithm)
        signature = bits.bytes
        self.certificates = certificates
        var responderID: OCSPResponderID?
        var producedAt: ASN1Time?
        var responses: [OCSPSingleResponse] = []
        var extensions: [Extension] = []
        try input.sequence(tbs, .sequence, "ResponseData") { fields throws(DERError) in
            // version [0] EXPLICIT Version DEFAULT v1: v1 is the only version, and DER never
            // encodes a DEFAULT value (X.690 §11.5), so the field must be absent.
            if let version = try fields.optional(.context(0)) {
                throw DERError(.invalidValue, at: version.start, "ResponseData encodes a version, but v1 is the default and the only version")
            }
            guard let id = try fields.next() else { throw DERError(.missingField, at: tbs.start, "ResponseData has no responderID") }
            responderID = try OCSPResponderID(id, input)
            producedAt = try Self.generalizedTime(fields.next(.generalizedTime, "producedAt"), input, "producedAt")
            responses = try input.sequence(fields.next(.sequence, "responses"), .sequence, "responses") { list throws(DERError) in
                var out: [OCSPSingleResponse] = []
                while let single = try list.next() { out.append(try OCSPSingleResponse(single, input)) }
                return out
            }
            if let node = try fields.optional(.context(1)) {
                extensions = try input.sequence(node, .context(1), "responseExtensions") { outer throws(DERError) in
                    try Extension.list(outer.next(.sequence, "responseExtensions"), input, "responseExtensions")
                }
            }
        }
        // The closure above assigns both or throws.
        guard let responderID, let producedAt else { throw DERError(.missingField, at: tbs.start, "ResponseData is incomplete") }
        self.responderID = responderID
        self.producedAt = producedAt
        self.responses = responses
        self.responseExtensions = extensions
    }

    /// One `certs` entry, parsed by the certificate parser; its error offsets are moved to the
    /// response's coordinates.
    private static func certificate(_ node: RawNode, _ input: DERInput) throws(DERError) -> Certificate {
        do {
            return try Certificate(derEncoded: Array(input.slice(node.range)))
        } catch {
            throw DERError(error.code, at: node.start + error.offset, "certs: \(error.reason)")
        }
    }

    /// RFC 6960 uses GeneralizedTime for every time, never UTCTime.
    static func generalizedTime(_ node: RawNode, _ input: DERInput, _ name: StaticString) throws(DERError) -> ASN1Time {
        guard node.identifier == .generalizedTime else {
            throw DERError(.unexpectedTag, at: node.start, "\(name) must be a GeneralizedTime (RFC 6960 4.2.1)")
        }
        return try input.time(node, name)
    }
}

/// ResponderID (RFC 6960 §4.2.1): the responder's name, or the SHA-1 hash of its public key.
public enum OCSPResponderID: Hashable, Sendable, CustomStringConvertible {
    /// `byName [1] Name`: the responder certificate's subject.
    case byName(DistinguishedName)
    /// `byKey [2] KeyHash`: SHA-1 of the responder's subjectPublicKey BIT STRING value,
    /// "excluding the tag and length fields" (RFC 6960 §4.2.1), 20 bytes.
    case byKey(ArraySlice<UInt8>)

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        switch node.identifier {
        case .context(1):
            self = .byName(
                try input.sequence(node, .context(1), "responderID byName") { n throws(DERError) in
                    try DistinguishedName(n.next(.sequence, "responderID byName"), input, "responderID byName")
                })
        case .context(2):
            let hash = try input.sequence(node, .context(2), "responderID byKey") { n throws(DERError) in
                try input.primitive(n.next(.octetString, "responderID byKey"), .octetString, "responderID byKey")
            }
            guard hash.count == 20 else {
                throw DERError(.invalidValue, at: node.start, "responderID byKey is \(hash.count) bytes, not a SHA-1 hash (RFC 6960 4.2.1)")
            }
            self = .byKey(input.slice(hash))
        default:
            throw DERError(.unexpectedTag, at: node.start, "responderID: expected [1] byName or [2] byKey, found \(node.identifier)")
        }
    }

    /// `byName CN=…` or `byKey <hex>`.
    public var description: String {
        switch self {
        case .byName(let name): return "byName \(name.rfc4514)"
        case .byKey(let hash): return "byKey \(Hex.encode(hash))"
        }
    }
}

/// CertID (RFC 6960 §4.1.1): which certificate a single response is about, named by hashes of
/// its issuer's name and key and by its serial number.
public struct OCSPCertID: Hashable, Sendable {
    /// hashAlgorithm as encoded.
    public let hashAlgorithm: AlgorithmIdentifier
    /// issuerNameHash: the hash of the DER of the issuer field of the certificate being checked.
    public let issuerNameHash: ArraySlice<UInt8>
    /// issuerKeyHash: the hash of the issuer's subjectPublicKey BIT STRING value.
    public let issuerKeyHash: ArraySlice<UInt8>
    /// serialNumber of the certificate being checked.
    public let serialNumber: SerialNumber

    /// The digest ``hashAlgorithm`` names, when it is one this library knows with absent or NULL
    /// parameters (responders use SHA-1, some SHA-256); `nil` otherwise.
    public var digest: DigestAlgorithm? {
        guard hashAlgorithm.parameters == nil || hashAlgorithm.hasNullParameters else { return nil }
        return DigestAlgorithm(oid: hashAlgorithm.algorithm)
    }

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        (hashAlgorithm, issuerNameHash, issuerKeyHash, serialNumber) = try input.sequence(node, .sequence, "CertID") { f throws(DERError) in
            let algorithm = try AlgorithmIdentifier(f.next(.sequence, "hashAlgorithm"), input, "hashAlgorithm")
            let name = input.slice(try input.primitive(f.next(.octetString, "issuerNameHash"), .octetString, "issuerNameHash"))
            let key = input.slice(try input.primitive(f.next(.octetString, "issuerKeyHash"), .octetString, "issuerKeyHash"))
            let serial = SerialNumber(input.slice(try input.integerRange(f.next(.integer, "serialNumber"), "serialNumber")))
            return (algorithm, name, key, serial)
        }
    }
}

/// CertStatus (RFC 6960 §4.2.1).
public enum OCSPCertStatus: Hashable, Sendable, CustomStringConvertible {
    /// `good [0] IMPLICIT NULL`: not revoked (as far as the responder knows).
    case good
    /// `revoked [1] IMPLICIT RevokedInfo`: revoked at `time`, for `reason` when the responder
    /// gave one.
    case revoked(time: ASN1Time, reason: RevocationReason?)
    /// `unknown [2] IMPLICIT UnknownInfo`: the responder knows nothing of the certificate.
    case unknown

    /// `good`, `revoked at TIME (REASON)`, `unknown`.
    public var description: String {
        switch self {
        case .good: return "good"
        case .revoked(let time, let reason?): return "revoked at \(time) (\(reason))"
        case .revoked(let time, nil): return "revoked at \(time)"
        case .unknown: return "unknown"
        }
    }

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        switch node.identifier {
        case .context(0), .context(2):
            guard !node.isConstructed, node.contentCount == 0 else {
                throw DERError(.invalidValue, at: node.start, "certStatus \(node.identifier) must be an IMPLICIT NULL")
            }
            self = node.identifier == .context(0) ? .good : .unknown
        case .context(1):
            self = try input.sequence(node, .context(1), "RevokedInfo") { f throws(DERError) in
                let time = try BasicOCSPResponse.generalizedTime(f.next(.generalizedTime, "revocationTime"), input, "revocationTime")
                var reason: RevocationReason?
                if let explicit = try f.optional(.context(0)) {
                    let code = try input.sequence(explicit, .context(0), "revocationReason") { n throws(DERError) in
                        try input.integer(n.next(.enumerated, "revocationReason"), "revocationReason", in: 0...10, identifier: .enumerated)
                    }
                    // RFC 5280 §5.3.1: CRLReason value 7 is not used.
                    guard let known = RevocationReason(rawValue: code) else {
                        throw DERError(.invalidValue, at: explicit.start, "revocationReason \(code) is not a CRLReason")
                    }
                    reason = known
                }
                return .revoked(time: time, reason: reason)
            }
        default:
            throw DERError(.unexpectedTag, at: node.start, "certStatus: expected [0] good, [1] revoked or [2] unknown, found \(node.identifier)")
        }
    }
}

/// SingleResponse (RFC 6960 §4.2.1): the status of one certificate and the window it holds for.
public struct OCSPSingleResponse: Hashable, Sendable {
    /// certID: which certificate.
    public let certID: OCSPCertID
    /// certStatus.
    public let status: OCSPCertStatus
    /// thisUpdate: when the status was known to be correct.
    public let thisUpdate: ASN1Time
    /// nextUpdate, if the responder gave one: when newer information will be available.
    public let nextUpdate: ASN1Time?
    /// singleExtensions, raw, in order: Certificate Transparency's SCT list
    /// (``OID/ocspSignedCertificateTimestampList``) is read from here.
    public let singleExtensions: [Extension]

    /// The single extensions a client may meet and safely ignore or read: the SCT list (RFC 6962
    /// §3.3), CRL references (§4.4.2), archive cutoff (§4.4.4) and the CRL entry extensions RFC
    /// 6960 §4.4.5 allows (reasonCode, invalidityDate). A critical single extension of any other
    /// type makes the single response unusable.
    public static let understoodExtensions: Set<ASN1ObjectIdentifier> = [
        OID.ocspSignedCertificateTimestampList, OID.ocspCRLReference, OID.ocspArchiveCutoff, OID.reasonCode, OID.invalidityDate,
    ]

    /// Single extensions marked critical that are not in ``understoodExtensions``.
    public var unknownCriticalExtensions: [Extension] {
        singleExtensions.filter { $0.critical && !Self.understoodExtensions.contains($0.oid) }
    }

    /// The raw SCT list of the singleExtensions (the TLS-encoded list inside its OCTET STRING, as
    /// for the certificate extension), when present.
    public var signedCertificateTimestamps: Extension? { singleExtensions.first { $0.oid == OID.ocspSignedCertificateTimestampList } }

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        var nextUpdate: ASN1Time?
        var extensions: [Extension] = []
        (certID, status, thisUpdate) = try input.sequence(node, .sequence, "SingleResponse") { f throws(DERError) in
            let id = try OCSPCertID(f.next(.sequence, "certID"), input)
            guard let statusNode = try f.next() else { throw DERError(.missingField, at: node.start, "SingleResponse has no certStatus") }
            let status = try OCSPCertStatus(statusNode, input)
            let thisUpdate = try BasicOCSPResponse.generalizedTime(f.next(.generalizedTime, "thisUpdate"), input, "thisUpdate")
            if let explicit = try f.optional(.context(0)) {
                nextUpdate = try input.sequence(explicit, .context(0), "nextUpdate") { n throws(DERError) in
                    try BasicOCSPResponse.generalizedTime(n.next(.generalizedTime, "nextUpdate"), input, "nextUpdate")
                }
            }
            if let explicit = try f.optional(.context(1)) {
                extensions = try input.sequence(explicit, .context(1), "singleExtensions") { n throws(DERError) in
                    try Extension.list(n.next(.sequence, "singleExtensions"), input, "singleExtensions")
                }
            }
            return (id, status, thisUpdate)
        }
        self.nextUpdate = nextUpdate
        self.singleExtensions = extensions
    }
}
