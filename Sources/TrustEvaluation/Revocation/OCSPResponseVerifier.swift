public import CertificateParsing

/// Checks an OCSP response (RFC 6960), typically one a server stapled to its handshake, for one
/// certificate of a validated path and its issuer, the next certificate of that path.
///
/// The steps, in order, each one ending the check with ``OCSPStatus/unknown(_:)`` when it fails
/// (a response that cannot be attributed and verified says nothing, so it never makes a
/// certificate good or revoked):
///
/// 1. The DER parses and responseStatus is `successful` (§4.2.1).
/// 2. A SingleResponse names the certificate: its CertID's serial is the certificate's, and its
///    issuerNameHash and issuerKeyHash are the hashes, with the CertID's own algorithm (SHA-1,
///    SHA-256, SHA-384 or SHA-512), of the certificate's issuer field and of the issuer's
///    subjectPublicKey (§4.1.1). The first one that does is used, as OpenSSL's
///    `OCSP_resp_find_status` does.
/// 3. The responder is authorized (§4.2.2.2): it is the issuer itself (named by its subject or
///    the SHA-1 of its key), or a certificate from the response's `certs` that the responderID
///    names, that the issuer signed, that lists id-kp-OCSPSigning in its extendedKeyUsage (not
///    anyExtendedKeyUsage), allows digitalSignature if it has keyUsage, and is valid at the
///    check's time. Whether it carries id-pkix-ocsp-nocheck (§4.2.2.2.1) is recorded; its own
///    revocation status is not checked, as browsers do not check it for stapled responses. No
///    locally configured responder is trusted. At most ``maximumResponderCandidates`` such
///    certificates are tried, so a staple packed with look-alike certificates costs a bounded
///    number of signature checks.
/// 4. The response's signature algorithm is one the path policy allows (no SHA-1 unless
///    allowed) and its signature over tbsResponseData verifies with the responder's key. Every
///    signature check (the response's, and the issuer's over a delegated responder's
///    certificate) goes through the ``SignatureVerifier``.
/// 5. No critical response or single extension is one this library does not understand.
/// 6. The window is current by ``RevocationFreshness`` (thisUpdate ≤ now + skew; nextUpdate, or
///    thisUpdate plus the maximum age when it is absent, ≥ now − skew; windows longer than
///    ``RevocationFreshness/maximumOCSPValidity`` are cut).
/// 7. The certStatus: `good`, `revoked` (time, reason) or `unknown`.
public struct OCSPResponseVerifier<SignatureCheck: SignatureVerifier>: Sendable {
    /// The crypto backend; every signature check goes through it.
    public let signatureVerifier: SignatureCheck
    /// The time rules.
    public var freshness: RevocationFreshness
    /// Whether responses and responder certificates signed with SHA-1 are accepted (as the
    /// path's ``ValidationPolicy/allowsSHA1Signatures``).
    public var allowsSHA1Signatures: Bool

    /// How many certificates of a response's `certs` that match its responderID are tried as a
    /// delegated responder.
    public static var maximumResponderCandidates: Int { 4 }

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - signatureVerifier: The crypto backend.
    ///   - freshness: The time rules.
    ///   - allowsSHA1Signatures: Whether SHA-1 signatures are accepted.
    public init(signatureVerifier: SignatureCheck, freshness: RevocationFreshness = .default, allowsSHA1Signatures: Bool = false) {
        self.signatureVerifier = signatureVerifier
        self.freshness = freshness
        self.allowsSHA1Signatures = allowsSHA1Signatures
    }

    /// Checks a DER OCSP response for `certificate`, issued by `issuer`.
    ///
    /// - Parameters:
    ///   - response: The DER OCSPResponse (a staple as the server sent it).
    ///   - certificate: The certificate whose status is wanted (the leaf, for a staple).
    ///   - issuer: Its issuer: the next certificate of the validated path.
    ///   - time: Now, in seconds since 1970 (the decision's clock).
    /// - Returns: The status and, when a responder could be established, what settled it.
    public func check(_ response: [UInt8], for certificate: Certificate, issuedBy issuer: Certificate, at time: Int64) -> OCSPCheck {
        let parsed: OCSPResponse
        do { parsed = try OCSPResponse(derEncoded: response) } catch { return OCSPCheck(.unknown(.malformed(error))) }
        return check(parsed, for: certificate, issuedBy: issuer, at: time)
    }

    /// Checks a parsed OCSP response for `certificate`, issued by `issuer` (see the type's
    /// documentation for the steps).
    ///
    /// - Parameters:
    ///   - response: The response.
    ///   - certificate: The certificate whose status is wanted.
    ///   - issuer: Its issuer.
    ///   - time: Now, in seconds since 1970.
    /// - Returns: The status and, when a responder could be established, what settled it.
    public func check(_ response: OCSPResponse, for certificate: Certificate, issuedBy issuer: Certificate, at time: Int64) -> OCSPCheck {
        guard let basic = response.basic else { return OCSPCheck(.unknown(.unsuccessful(response.status))) }
        guard let (single, digest) = matchingResponse(in: basic, for: certificate, issuer: issuer) else {
            return OCSPCheck(.unknown(.noResponseForCertificate))
        }
        let responder: OCSPEvidence.Responder
        switch authorizedResponder(basic, issuer: issuer, at: time) {
        case .success(let found): responder = found
        case .failure(let reason): return OCSPCheck(.unknown(reason))
        }
        let evidence = OCSPEvidence(
            responder: responder, producedAt: basic.producedAt, thisUpdate: single.thisUpdate, nextUpdate: single.nextUpdate, certIDDigest: digest)
        if let unknown = basic.unknownCriticalExtensions.first ?? single.unknownCriticalExtensions.first {
            return OCSPCheck(.unknown(.unhandledCriticalExtension(unknown.oid)), evidence)
        }
        if let problem = freshness.problem(
            thisUpdate: single.thisUpdate, nextUpdate: single.nextUpdate, at: time, maximumValidity: freshness.maximumOCSPValidity)
        {
            return OCSPCheck(.unknown(.notCurrent(problem)), evidence)
        }
        switch single.status {
        case .good: return OCSPCheck(.good, evidence)
        case .revoked(let revokedAt, let reason): return OCSPCheck(.revoked(reason: reason, time: revokedAt), evidence)
        case .unknown: return OCSPCheck(.unknown(.responderDoesNotKnow), evidence)
        }
    }

    /// RFC 6960 §4.1.1: the first SingleResponse whose CertID names `certificate` of `issuer`.
    func matchingResponse(in basic: BasicOCSPResponse, for certificate: Certificate, issuer: Certificate) -> (OCSPSingleResponse, DigestAlgorithm)? {
        var hashes: [DigestAlgorithm: (name: [UInt8], key: [UInt8])] = [:]
        for single in basic.responses where single.certID.serialNumber.bytes.bytesEqual(certificate.serialNumber.bytes) {
            guard let digest = single.certID.digest, [.sha1, .sha256, .sha384, .sha512].contains(digest) else { continue }
            if hashes[digest] == nil {
                guard let name = try? Digest.hash(digest, certificate.issuer.derBytes),
                    let key = try? Digest.hash(digest, issuer.subjectPublicKeyInfo.subjectPublicKey.bytes)
                else { continue }
                hashes[digest] = (name, key)
            }
            guard let expected = hashes[digest], single.certID.issuerNameHash.bytesEqual(expected.name[...]),
                single.certID.issuerKeyHash.bytesEqual(expected.key[...])
            else { continue }
            return (single, digest)
        }
        return nil
    }

    /// RFC 6960 §4.2.2.2: the issuer, or a responder it delegated, whose key verifies the
    /// response; or why there is none.
    func authorizedResponder(_ basic: BasicOCSPResponse, issuer: Certificate, at time: Int64) -> Result<OCSPEvidence.Responder, OCSPUnknownReason> {
        let algorithms = AlgorithmRule(allowsSHA1: allowsSHA1Signatures)
        guard algorithms.permits(basic.signatureAlgorithm) else { return .failure(.algorithmNotAllowed(basic.signatureAlgorithm)) }
        guard let issuerKey = try? signatureVerifier.makeKey(issuer.subjectPublicKeyInfo) else {
            return .failure(.unauthorizedResponder("the issuer's key cannot verify signatures"))
        }
        if names(basic.responderID, issuer) {
            let result = signatureVerifier.check(signature: basic.signature, over: basic.tbsResponseData, algorithm: basic.signatureAlgorithm, key: issuerKey)
            guard result.isValid else { return .failure(.badSignature("the issuer's key does not verify it: \(result)")) }
            return .success(.issuer)
        }
        var reasons: [String] = []
        for candidate in basic.certificates.lazy.filter({ names(basic.responderID, $0) }).prefix(Self.maximumResponderCandidates) {
            if let why = delegationProblem(candidate, issuer: issuer, issuerKey: issuerKey, algorithms: algorithms, at: time) {
                reasons.append("\"\(candidate.subject.rfc4514)\" \(why)")
                continue
            }
            guard let key = try? signatureVerifier.makeKey(candidate.subjectPublicKeyInfo) else {
                reasons.append("\"\(candidate.subject.rfc4514)\" has a key that cannot verify signatures")
                continue
            }
            let result = signatureVerifier.check(signature: basic.signature, over: basic.tbsResponseData, algorithm: basic.signatureAlgorithm, key: key)
            guard result.isValid else { return .failure(.badSignature("the delegated responder's key does not verify it: \(result)")) }
            return .success(.delegated(candidate, noCheck: candidate.extensions[OID.ocspNoCheck] != nil))
        }
        let who = "responder \(basic.responderID)"
        guard reasons.isEmpty else { return .failure(.unauthorizedResponder("\(who): " + reasons.joined(separator: "; "))) }
        return .failure(.unauthorizedResponder("\(who) is neither the issuer nor a certificate in the response"))
    }

    /// Why `candidate` is not a responder `issuer` delegated (RFC 6960 §4.2.2.2), or `nil`.
    func delegationProblem(
        _ candidate: Certificate, issuer: Certificate, issuerKey: SignatureCheck.Key, algorithms: AlgorithmRule, at time: Int64
    ) -> String? {
        guard candidate.issuer.matches(issuer.subject) else { return "was not issued by the certificate's issuer" }
        guard candidate.extensions.extendedKeyUsage?.contains(OID.ocspSigning) == true else {
            return "lacks id-kp-OCSPSigning in its extendedKeyUsage (RFC 6960 4.2.2.2)"
        }
        if let usage = candidate.extensions.keyUsage, !usage.digitalSignature { return "has a keyUsage without digitalSignature" }
        guard candidate.notBefore.secondsSince1970 <= time, time <= candidate.notAfter.secondsSince1970 else {
            return "is not valid now (\(candidate.notBefore) to \(candidate.notAfter))"
        }
        guard algorithms.permits(candidate.signatureAlgorithm) else { return "is signed with \(candidate.signatureAlgorithm), which is not allowed" }
        guard signatureVerifier.check(candidate, signedBy: issuerKey).isValid else { return "is not signed by the certificate's issuer" }
        return nil
    }

    /// Whether `responderID` names `certificate`: its subject (byName), or the SHA-1 of its
    /// subjectPublicKey (byKey).
    func names(_ responderID: OCSPResponderID, _ certificate: Certificate) -> Bool {
        switch responderID {
        case .byName(let name): return name.matches(certificate.subject)
        case .byKey(let hash):
            guard let keyHash = try? Digest.hash(.sha1, certificate.subjectPublicKeyInfo.subjectPublicKey.bytes) else { return false }
            return hash.bytesEqual(keyHash[...])
        }
    }
}

extension OCSPResponseVerifier where SignatureCheck == OpenSSLSignatureVerifier {
    /// A verifier using OpenSSL's libcrypto for signatures.
    ///
    /// - Parameters:
    ///   - freshness: The time rules.
    ///   - allowsSHA1Signatures: Whether SHA-1 signatures are accepted.
    public init(freshness: RevocationFreshness = .default, allowsSHA1Signatures: Bool = false) {
        self.init(signatureVerifier: OpenSSLSignatureVerifier(), freshness: freshness, allowsSHA1Signatures: allowsSHA1Signatures)
    }
}

/// A certificate's revocation status from an OCSP response (RFC 6960 §2.2).
public enum OCSPStatus: Hashable, Sendable, CustomStringConvertible {
    /// An authorized, current response says `good`.
    case good
    /// An authorized, current response says `revoked`, at `time`, for `reason` if given.
    case revoked(reason: RevocationReason?, time: ASN1Time)
    /// The response establishes nothing, for the reason given: it is to be ignored, as if there
    /// were none.
    case unknown(OCSPUnknownReason)

    /// `good`, `revoked at TIME (REASON)`, or `unknown: WHY`.
    public var description: String {
        switch self {
        case .good: return "good"
        case .revoked(let reason?, let time): return "revoked at \(time) (\(reason))"
        case .revoked(nil, let time): return "revoked at \(time)"
        case .unknown(let why): return "unknown: \(why)"
        }
    }
}

/// Why an OCSP response establishes no status.
public enum OCSPUnknownReason: Error, Hashable, Sendable, CustomStringConvertible {
    /// The response is not DER or breaks RFC 6960's structure.
    case malformed(DERError)
    /// The responder answered with an error status and no response.
    case unsuccessful(OCSPResponseStatus)
    /// No SingleResponse's CertID names the certificate (another certificate's staple, a
    /// CertID hash this library does not compute, a wrong issuer).
    case noResponseForCertificate
    /// The signer is neither the issuer nor a responder the issuer delegated (RFC 6960
    /// §4.2.2.2): the response is ignored.
    case unauthorizedResponder(String)
    /// The responder's key does not verify the response.
    case badSignature(String)
    /// The response's signature algorithm is not allowed.
    case algorithmNotAllowed(SignatureAlgorithm)
    /// A critical response or single extension this library does not understand.
    case unhandledCriticalExtension(ASN1ObjectIdentifier)
    /// The response is not current.
    case notCurrent(RevocationFreshness.Problem)
    /// The responder answered `unknown`: it does not know the certificate.
    case responderDoesNotKnow

    /// One line for the decision record.
    public var description: String {
        switch self {
        case .malformed(let error): return "the response is malformed (\(error))"
        case .unsuccessful(let status): return "the responder answered \(status)"
        case .noResponseForCertificate: return "no response in it is for this certificate"
        case .unauthorizedResponder(let why): return "its signer is not authorized (RFC 6960 4.2.2.2): \(why)"
        case .badSignature(let why): return "its signature does not verify: \(why)"
        case .algorithmNotAllowed(let algorithm): return "its signature algorithm \(algorithm) is not allowed"
        case .unhandledCriticalExtension(let oid): return "it has the unhandled critical extension \(oid)"
        case .notCurrent(let problem): return "\(problem)"
        case .responderDoesNotKnow: return "the responder does not know the certificate"
        }
    }
}

/// What settled an OCSP status: who signed and the window the status holds for.
public struct OCSPEvidence: Hashable, Sendable, CustomStringConvertible {
    /// Who signed the response.
    public enum Responder: Hashable, Sendable {
        /// The certificate's issuer itself.
        case issuer
        /// A responder certificate the issuer signed with id-kp-OCSPSigning; `noCheck` when it
        /// carries id-pkix-ocsp-nocheck (RFC 6960 §4.2.2.2.1).
        case delegated(Certificate, noCheck: Bool)
    }

    /// Who signed.
    public let responder: Responder
    /// producedAt.
    public let producedAt: ASN1Time
    /// The single response's thisUpdate.
    public let thisUpdate: ASN1Time
    /// The single response's nextUpdate, if given.
    public let nextUpdate: ASN1Time?
    /// The hash algorithm of the matching CertID.
    public let certIDDigest: DigestAlgorithm

    /// `signed by the issuer, thisUpdate T, nextUpdate N, produced P`.
    public var description: String {
        let who: String
        switch responder {
        case .issuer: who = "the issuer"
        case .delegated(let certificate, let noCheck):
            who = "delegated responder \"\(certificate.subject.rfc4514)\"" + (noCheck ? " (id-pkix-ocsp-nocheck)" : "")
        }
        return "signed by \(who), thisUpdate \(thisUpdate), nextUpdate \(nextUpdate.map(\.description) ?? "none"), produced \(producedAt)"
    }
}

/// The outcome of an ``OCSPResponseVerifier`` check: the status and what settled it.
public struct OCSPCheck: Hashable, Sendable, CustomStringConvertible {
    /// The status.
    public let status: OCSPStatus
    /// What settled it; `nil` when no authorized responder could be established.
    public let evidence: OCSPEvidence?

    init(_ status: OCSPStatus, _ evidence: OCSPEvidence? = nil) {
        self.status = status
        self.evidence = evidence
    }

    /// `OCSP: STATUS (EVIDENCE)`.
    public var description: String {
        "OCSP: \(status)" + (evidence.map { " (\($0))" } ?? "")
    }
}
