/// The status a generated OCSP single response states (RFC 6960 §4.2.1 CertStatus).
public enum LabOCSPStatus: Sendable, Hashable {
    /// `good [0] IMPLICIT NULL`.
    case good
    /// `revoked [1] IMPLICIT RevokedInfo`: when, and the CRLReason value if any (1
    /// keyCompromise, 4 superseded, 6 certificateHold, …).
    case revoked(time: Int64, reason: Int?)
    /// `unknown [2] IMPLICIT UnknownInfo`.
    case unknown
}

/// The CertID of a single response (RFC 6960 §4.1.1), field by field, so a test can name a
/// certificate wrongly in exactly one way.
public struct LabOCSPCertID: Sendable, Hashable {
    /// The hash algorithm of the two hashes.
    public var digest: LabDigest
    /// Hash of the DER of the checked certificate's issuer field.
    public var issuerNameHash: [UInt8]
    /// Hash of the issuer's subjectPublicKey BIT STRING value (without the unused-bits octet).
    public var issuerKeyHash: [UInt8]
    /// The checked certificate's serialNumber INTEGER content octets.
    public var serial: [UInt8]

    /// Creates a CertID from its fields.
    ///
    /// - Parameters:
    ///   - digest: The hash algorithm.
    ///   - issuerNameHash: The issuer name hash.
    ///   - issuerKeyHash: The issuer key hash.
    ///   - serial: The serial content octets.
    public init(digest: LabDigest, issuerNameHash: [UInt8], issuerKeyHash: [UInt8], serial: [UInt8]) {
        self.digest = digest
        self.issuerNameHash = issuerNameHash
        self.issuerKeyHash = issuerKeyHash
        self.serial = serial
    }

    /// The CertID of `certificate` issued by `issuer`, computed as OpenSSL's `OCSP_cert_to_id`
    /// does: the certificate's issuer field and the issuer's key, hashed with `digest`.
    ///
    /// - Parameters:
    ///   - certificate: The certificate the response is about.
    ///   - issuer: Its issuer's certificate.
    ///   - digest: SHA-1 (what responders use) or another digest.
    /// - Returns: The CertID.
    /// - Throws: ``LabError`` if the issuer's key cannot be read or the digest fails.
    public static func of(_ certificate: LabCertificate, issuer: LabCertificate, digest: LabDigest = .sha1) throws -> LabOCSPCertID {
        LabOCSPCertID(
            digest: digest, issuerNameHash: try digest.hash(certificate.issuerNameDER),
            issuerKeyHash: try digest.hash(try LabOCSP.publicKeyBits(issuer.subjectPublicKeyInfoDER)), serial: certificate.serialNumber)
    }

    func derEncoded() throws -> [UInt8] {
        // OpenSSL writes the hash AlgorithmIdentifier with NULL parameters.
        LabDER.sequence([
            LabDER.sequence([try LabDER.oid(digest.oid), LabDER.null()]),
            LabDER.octetString(issuerNameHash), LabDER.octetString(issuerKeyHash), LabDER.integer(content: serial),
        ])
    }
}

/// One SingleResponse of a generated OCSP response (RFC 6960 §4.2.1).
public struct LabOCSPSingleResponse: Sendable, Hashable {
    /// Which certificate.
    public var certID: LabOCSPCertID
    /// Its status.
    public var status: LabOCSPStatus
    /// thisUpdate (Unix seconds).
    public var thisUpdate: Int64
    /// nextUpdate (Unix seconds), or `nil` to omit it.
    public var nextUpdate: Int64?
    /// singleExtensions, encoded verbatim (`.raw` for an SCT list or an unknown critical one).
    public var extensions: [LabExtension]

    /// Creates a single response: valid from an hour before ``LabClock/reference`` for four
    /// days (a typical responder's window).
    ///
    /// - Parameters:
    ///   - certID: Which certificate.
    ///   - status: Its status.
    ///   - thisUpdate: When the status was known to be correct.
    ///   - nextUpdate: When newer information will be available, or `nil`.
    ///   - extensions: singleExtensions.
    public init(
        certID: LabOCSPCertID, status: LabOCSPStatus = .good, thisUpdate: Int64 = LabClock.reference - 3600,
        nextUpdate: Int64? = LabClock.reference + 4 * LabClock.day, extensions: [LabExtension] = []
    ) {
        self.certID = certID
        self.status = status
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
        self.extensions = extensions
    }

    func derEncoded() throws -> [UInt8] {
        let status: [UInt8]
        switch self.status {
        case .good: status = LabDER.contextSpecific(0, constructed: false, [])
        case .unknown: status = LabDER.contextSpecific(2, constructed: false, [])
        case .revoked(let time, let reason):
            var info = [try LabDER.generalizedTime(time)]
            if let reason { info.append(LabDER.explicit(0, LabDER.enumerated(reason))) }
            status = LabDER.contextSpecific(1, constructed: true, info.flatMap { $0 })
        }
        var fields = [try certID.derEncoded(), status, try LabDER.generalizedTime(thisUpdate)]
        if let nextUpdate { fields.append(LabDER.explicit(0, try LabDER.generalizedTime(nextUpdate))) }
        if !extensions.isEmpty { fields.append(LabDER.explicit(1, LabDER.sequence(try extensions.map { try $0.derEncoded(.none) }))) }
        return LabDER.sequence(fields)
    }
}

/// How a generated response names its signer (RFC 6960 §4.2.1 ResponderID).
public enum LabOCSPResponderID: Sendable, Hashable {
    /// `byName`: the signing certificate's subject.
    case byName
    /// `byKey`: SHA-1 of the signing key's subjectPublicKey bits.
    case byKey
    /// Exactly these bytes as the ResponderID element (to name someone else).
    case raw([UInt8])
}

/// Everything that goes into one generated BasicOCSPResponse, field by field.
public struct LabOCSPResponseSpec: Sendable, Hashable {
    /// The single responses.
    public var responses: [LabOCSPSingleResponse]
    /// producedAt (Unix seconds).
    public var producedAt: Int64
    /// How the responder is named.
    public var responderID: LabOCSPResponderID
    /// The `certs` field: a delegated responder's certificate, typically; empty omits it.
    public var certificates: [LabCertificate]
    /// responseExtensions (a nonce, an unknown critical one), encoded verbatim.
    public var extensions: [LabExtension]
    /// The signature scheme; `nil` uses the signing key's default.
    public var signatureScheme: LabSignatureScheme?

    /// Creates a spec produced an hour before ``LabClock/reference``, the responder named by key.
    ///
    /// - Parameters:
    ///   - responses: The single responses.
    ///   - producedAt: When it was signed.
    ///   - certificates: The `certs` field.
    public init(responses: [LabOCSPSingleResponse], producedAt: Int64 = LabClock.reference - 3600, certificates: [LabCertificate] = []) {
        self.responses = responses
        self.producedAt = producedAt
        self.responderID = .byKey
        self.certificates = certificates
        self.extensions = []
        self.signatureScheme = nil
    }
}

/// OCSP responses (RFC 6960) generated and signed with OpenSSL, so OCSP tests never depend on
/// the parser they test; DER, as nginx's `ssl_stapling_file` and `openssl ocsp -respin` read it.
public enum LabOCSP {
    /// Encodes and signs a successful OCSPResponse carrying a BasicOCSPResponse.
    ///
    /// - Parameters:
    ///   - spec: The fields.
    ///   - signer: The responder: the CA itself, a delegated responder (a certificate the CA
    ///     issued with id-kp-OCSPSigning), or any other key for negative tests.
    /// - Returns: The DER OCSPResponse.
    /// - Throws: ``LabError`` on an encoding or OpenSSL failure.
    public static func issue(_ spec: LabOCSPResponseSpec, signer: LabIssuer) throws -> [UInt8] {
        let responderID: [UInt8]
        switch spec.responderID {
        case .byName: responderID = LabDER.explicit(1, signer.certificate.subjectNameDER)
        case .byKey:
            let hash = try LabDigest.sha1.hash(try publicKeyBits(signer.certificate.subjectPublicKeyInfoDER))
            responderID = LabDER.explicit(2, LabDER.octetString(hash))
        case .raw(let bytes): responderID = bytes
        }
        var data = [responderID, try LabDER.generalizedTime(spec.producedAt), LabDER.sequence(try spec.responses.map { try $0.derEncoded() })]
        if !spec.extensions.isEmpty { data.append(LabDER.explicit(1, LabDER.sequence(try spec.extensions.map { try $0.derEncoded(.none) }))) }
        let tbs = LabDER.sequence(data)
        let scheme = spec.signatureScheme ?? .default(for: signer.key.algorithm)
        var basic = [tbs, try scheme.algorithmIdentifierDER, LabDER.bitString(try scheme.sign(tbs, with: signer.key))]
        if !spec.certificates.isEmpty { basic.append(LabDER.explicit(0, LabDER.sequence(spec.certificates.map(\.der)))) }
        let responseBytes = LabDER.sequence([try LabDER.oid("1.3.6.1.5.5.7.48.1.1"), LabDER.octetString(LabDER.sequence(basic))])
        return LabDER.sequence([LabDER.enumerated(0), LabDER.explicit(0, responseBytes)])
    }

    /// An OCSPResponse with an error status and no responseBytes (RFC 6960 §4.2.1).
    ///
    /// - Parameter status: 1 malformedRequest, 2 internalError, 3 tryLater, 5 sigRequired,
    ///   6 unauthorized.
    /// - Returns: The DER OCSPResponse.
    public static func unsuccessful(_ status: Int) -> [UInt8] {
        LabDER.sequence([LabDER.enumerated(status)])
    }

    /// A response about one certificate, signed by `signer` (the issuer unless given), valid
    /// from an hour before `now` for `validity` seconds, the signer's certificate included
    /// when it is not the issuer.
    ///
    /// - Parameters:
    ///   - certificate: The certificate the response is about.
    ///   - issuer: Its issuer (names it in the CertID).
    ///   - status: Its status.
    ///   - now: The reference instant.
    ///   - validity: nextUpdate minus thisUpdate, or `nil` to omit nextUpdate.
    ///   - digest: The CertID hash.
    ///   - signer: The responder; `nil` signs with the issuer.
    /// - Returns: The DER OCSPResponse.
    /// - Throws: ``LabError`` on an encoding or OpenSSL failure.
    public static func response(
        for certificate: LabCertificate, issuer: LabIssuer, status: LabOCSPStatus = .good, now: Int64 = LabClock.reference,
        validity: Int64? = 4 * LabClock.day, digest: LabDigest = .sha1, signer: LabIssuer? = nil
    ) throws -> [UInt8] {
        let single = LabOCSPSingleResponse(
            certID: try .of(certificate, issuer: issuer.certificate, digest: digest), status: status, thisUpdate: now - 3600,
            nextUpdate: validity.map { now - 3600 + $0 })
        let responder = signer ?? issuer
        let included = responder.certificate == issuer.certificate ? [] : [responder.certificate]
        return try issue(LabOCSPResponseSpec(responses: [single], producedAt: now - 3600, certificates: included), signer: responder)
    }

    /// A delegated OCSP responder's certificate (RFC 6960 §4.2.2.2), issued by `issuer`.
    ///
    /// - Parameters:
    ///   - issuer: The CA delegating.
    ///   - key: The responder's key.
    ///   - name: Its common name.
    ///   - extendedKeyUsage: Its EKU (`["OCSPSigning"]` delegates; anything else does not).
    ///   - noCheck: Whether to include id-pkix-ocsp-nocheck (§4.2.2.2.1).
    ///   - notBefore: Start of validity.
    ///   - notAfter: End of validity.
    /// - Returns: The certificate, its key attached.
    /// - Throws: ``LabError`` if signing fails.
    public static func responderCertificate(
        issuer: LabIssuer, key: LabKey, name: String = "ServerTrust Lab OCSP Responder", extendedKeyUsage: [String] = ["OCSPSigning"],
        noCheck: Bool = true, notBefore: Int64 = LabClock.reference - 30 * LabClock.day, notAfter: Int64 = LabClock.reference + 60 * LabClock.day
    ) throws -> LabCertificate {
        var extensions: [LabExtension] = [.basicConstraints(ca: false), .keyUsage([.digitalSignature])]
        if !extendedKeyUsage.isEmpty { extensions.append(.extendedKeyUsage(extendedKeyUsage)) }
        extensions += [.subjectKeyIdentifier(), .authorityKeyIdentifier()]
        if noCheck { extensions.append(.raw(oid: "1.3.6.1.5.5.7.48.1.5", critical: false, valueDER: LabDER.null())) }
        let spec = LabCertificateSpec(
            subject: LabName([("O", "ServerTrust Lab"), ("CN", name)]), notBefore: notBefore, notAfter: notAfter, extensions: extensions)
        return try LabCertificate.issue(spec, subjectKey: key, issuer: issuer)
    }

    /// The subjectPublicKey BIT STRING's value without its unused-bits octet: what
    /// issuerKeyHash and ResponderID byKey hash (RFC 6960 §4.1.1, §4.2.1).
    static func publicKeyBits(_ spki: [UInt8]) throws -> [UInt8] {
        let fields = try LabDER.parse(spki).children()
        guard fields.count == 2, fields[1].tag == LabDER.Tag.bitString, !fields[1].content.isEmpty else {
            throw LabError.invalid("LabOCSP", "SubjectPublicKeyInfo has no subjectPublicKey BIT STRING")
        }
        return Array(fields[1].content.dropFirst())
    }
}
