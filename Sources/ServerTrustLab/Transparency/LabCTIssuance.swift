/// A certificate issued the way a CT-logging CA issues one (RFC 6962 §3.1): a precertificate
/// with the poison extension, signed first and submitted to the logs, then the final
/// certificate with the logs' SCTs embedded.
public struct LabCTCertificate: Sendable, Hashable {
    /// The final certificate, with the SCT list extension.
    public let certificate: LabCertificate
    /// The precertificate the logs were given.
    public let precertificate: LabCertificate
    /// The embedded SCTs, in order.
    public let scts: [LabSCT]
}

extension LabCertificate {
    /// Issues a precertificate (RFC 6962 §3.1): `spec` with the critical poison extension
    /// 1.3.6.1.4.1.11129.2.4.3 appended, signed by `issuer`, which is the CA itself or a
    /// Precertificate Signing Certificate it certified.
    ///
    /// - Parameters:
    ///   - spec: The final certificate's fields (serial included; keep it for the final one).
    ///   - subjectKey: The subject's key.
    ///   - issuer: The CA, or a precertificate signing issuer from
    ///     ``LabIssuer/precertificateSigningIssuer(key:)``.
    /// - Returns: The precertificate.
    /// - Throws: ``LabError`` on an encoding or signing failure.
    public static func issuePrecertificate(_ spec: LabCertificateSpec, subjectKey: LabKey, issuer: LabIssuer) throws -> LabCertificate {
        var precertificate = spec
        precertificate.extensions.append(.precertificatePoison)
        return try issue(precertificate, subjectKey: subjectKey, issuer: issuer)
    }

    /// Issues the final certificate: `spec` with the SCT list extension 1.3.6.1.4.1.11129.2.4.2
    /// appended where the precertificate had its poison, so that removing it gives back the
    /// logged TBSCertificate.
    ///
    /// - Parameters:
    ///   - spec: The same fields as the precertificate.
    ///   - subjectKey: The subject's key.
    ///   - issuer: The CA.
    ///   - scts: The SCTs to embed.
    /// - Returns: The certificate.
    /// - Throws: ``LabError`` on an encoding or signing failure.
    public static func issue(_ spec: LabCertificateSpec, subjectKey: LabKey, issuer: LabIssuer, embedding scts: [LabSCT]) throws -> LabCertificate {
        var final = spec
        final.extensions.append(.signedCertificateTimestamps(LabSCT.list(scts)))
        return try issue(final, subjectKey: subjectKey, issuer: issuer)
    }

    /// Issues a precertificate, has every log in `logs` sign it, and issues the final
    /// certificate with those SCTs embedded.
    ///
    /// - Parameters:
    ///   - spec: The certificate's fields.
    ///   - subjectKey: The subject's key.
    ///   - issuer: The CA that issues the final certificate.
    ///   - logs: The logs, in the order their SCTs are embedded.
    ///   - timestamp: The SCTs' time in milliseconds (default: one second after notBefore).
    ///   - precertificateSigner: A Precertificate Signing Certificate to sign the
    ///     precertificate instead of the CA.
    /// - Returns: The certificate, the precertificate and the SCTs.
    /// - Throws: ``LabError`` on an encoding or signing failure.
    public static func issueWithEmbeddedSCTs(
        _ spec: LabCertificateSpec,
        subjectKey: LabKey,
        issuer: LabIssuer,
        logs: [LabCTLog],
        timestamp: UInt64? = nil,
        precertificateSigner: LabIssuer? = nil
    ) throws -> LabCTCertificate {
        let precertificate = try issuePrecertificate(spec, subjectKey: subjectKey, issuer: precertificateSigner ?? issuer)
        let entry = try LabCTEntry.precertificate(precertificate, issuer: issuer.certificate, signedBy: precertificateSigner?.certificate)
        let time = timestamp ?? UInt64(max(0, spec.notBefore + 1)) * 1000
        let scts = try logs.map { try $0.sign(entry, timestamp: time) }
        let certificate = try issue(spec, subjectKey: subjectKey, issuer: issuer, embedding: scts)
        return LabCTCertificate(certificate: certificate, precertificate: precertificate, scts: scts)
    }
}

extension LabIssuer {
    /// A Precertificate Signing Certificate certified by this CA (RFC 6962 §3.1): a CA
    /// certificate whose extended key usage is only 1.3.6.1.4.1.11129.2.4.4, allowed to sign
    /// precertificates for this CA and nothing else.
    ///
    /// - Parameter key: Its key.
    /// - Returns: It, as an issuer.
    /// - Throws: ``LabError`` on an encoding or signing failure.
    public func precertificateSigningIssuer(key: LabKey) throws -> LabIssuer {
        let spec = LabCertificateSpec(
            subject: LabName([("O", "ServerTrust Lab"), ("CN", "Precertificate Signing")]),
            notBefore: certificate.spec?.notBefore ?? LabClock.reference - LabClock.year,
            notAfter: certificate.spec?.notAfter ?? LabClock.reference + LabClock.year,
            extensions: [
                .basicConstraints(ca: true, pathLength: 0),
                .keyUsage([.digitalSignature, .keyCertSign]),
                .extendedKeyUsage(["1.3.6.1.4.1.11129.2.4.4"]),
                .subjectKeyIdentifier(),
                .authorityKeyIdentifier(),
            ])
        return LabIssuer(certificate: try LabCertificate.issue(spec, subjectKey: key, issuer: self), key: key)
    }
}
