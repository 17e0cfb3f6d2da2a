import CertificateParsing

/// Which CRLs can speak for a certificate, by RFC 5280 §6.3.3 (b)–(e) and §5.2, §5.3: the
/// rules that do not need a signature or a path, kept apart from the checker that does.
enum CRLScope {
    /// The distribution points to satisfy: the certificate's cRLDistributionPoints, or, when it
    /// has none, one implied point with no name, no cRLIssuer and all reasons (the CRL issuer
    /// is then the certificate issuer, §6.3.3).
    static func distributionPoints(of certificate: Certificate) -> [DistributionPoint?] {
        guard let points = certificate.extensions.crlDistributionPoints else { return [nil] }
        return points
    }

    /// Why `crl` cannot be used at all, whatever certificate it is for, or `nil`.
    static func unusable(_ crl: CertificateRevocationList, policy: ValidationPolicy) -> String? {
        // §5.2: "If a CRL contains a critical extension that the application cannot process,
        // then the application MUST NOT use that CRL to determine the status of certificates."
        if let unknown = crl.unknownCriticalExtensions.first { return "it has the unhandled critical extension \(unknown.oid) (RFC 5280 5.2)" }
        // §5.3: the same for a critical CRL entry extension, which makes the whole CRL unusable.
        for entry in crl.entries {
            if let unknown = entry.unknownCriticalExtensions.first {
                return "an entry has the unhandled critical extension \(unknown.oid) (RFC 5280 5.3)"
            }
        }
        // §5.2.3: cRLNumber MUST be present and non-critical; a CRL that breaks this is not a
        // conforming CRL and is not used.
        guard crl.number != nil, !crl.numberIsCritical else { return "it has no non-critical cRLNumber (RFC 5280 5.2.3)" }
        // The algorithm rules for certificates apply to CRLs too (a SHA-1 CRL proves nothing).
        guard policy.permits(crl.signatureAlgorithm) else { return "its signature algorithm \(crl.signatureAlgorithm) is not allowed" }
        if let idp = crl.issuingDistributionPoint, idp.onlyContainsAttributeCerts {
            // §6.3.3 (b)(2)(iv).
            return "it covers attribute certificates only (RFC 5280 6.3.3 (b)(2)(iv))"
        }
        guard policy.profile == .webPKI else { return nil }
        // CA/B BR §7.2.2.1: a partitioned CRL's issuingDistributionPoint names its partition
        // by fullName URIs only (no nameRelativeToCRLIssuer, no other name form), and a Web
        // PKI CRL is never indirect.
        if let idp = crl.issuingDistributionPoint {
            if idp.indirectCRL { return "it is an indirect CRL (CA/B BR 7.2.2.1)" }
            if let name = idp.distributionPoint, !isURIFullName(name) {
                return "its issuingDistributionPoint is not named by URIs alone (CA/B BR 7.2.2.1)"
            }
        }
        // A CRL that lists a serial twice says two things about one certificate (which reason,
        // which date); under the Web PKI it is not used (x509-limbo
        // crl::crl-duplicate-revoked-serial).
        if let serial = firstDuplicate(crl.entries.map { Array($0.serialNumber.bytes) }) {
            return "it lists serial \(Hex.encode(serial)) twice"
        }
        return nil
    }

    /// Whether a distribution point name is a fullName of URIs only.
    static func isURIFullName(_ name: DistributionPointName) -> Bool {
        guard case .fullName(let names) = name, !names.isEmpty else { return false }
        return names.allSatisfy {
            if case .uri = $0 { return true }
            return false
        }
    }

    /// The first element that occurs twice, if any (a set: CRLs may list many thousands).
    static func firstDuplicate(_ keys: [[UInt8]]) -> [UInt8]? {
        var seen = Set<[UInt8]>(minimumCapacity: keys.count)
        for key in keys where !seen.insert(key).inserted { return key }
        return nil
    }

    /// §6.3.3 (b): whether `crl` is issued for `point` of `certificate` and its scope includes
    /// the certificate, or why not.
    static func outOfScope(_ crl: CertificateRevocationList, for certificate: Certificate, point: DistributionPoint?, profile: ValidationPolicy.Profile)
        -> String?
    {
        let idp = crl.issuingDistributionPoint
        // CA/B BR §7.1.2.11.2: a Web PKI distribution point is a fullName of URIs, without
        // reasons or cRLIssuer; no CRL speaks for a point of another shape.
        if profile == .webPKI, let point, point.reasons != nil || point.crlIssuer != nil || !(point.name.map(isURIFullName) ?? false) {
            return "the certificate's distribution point is not a fullName of URIs without reasons or cRLIssuer (CA/B BR 7.1.2.11.2)"
        }
        // (b)(1): a point with a cRLIssuer needs that issuer and an indirect CRL; otherwise the
        // CRL issuer is the certificate issuer.
        if let crlIssuer = point?.crlIssuer {
            guard
                crlIssuer.contains(where: { name in
                    if case .directoryName(let n) = name { return n.matches(crl.issuer) }
                    return false
                })
            else { return "its issuer is not the distribution point's cRLIssuer (RFC 5280 6.3.3 (b)(1))" }
            guard idp?.indirectCRL == true else { return "it is not an indirect CRL, but the certificate names a cRLIssuer (RFC 5280 6.3.3 (b)(1))" }
        } else if !crl.issuer.matches(certificate.issuer) {
            return "its issuer is not the certificate's issuer (RFC 5280 6.3.3 (b)(1))"
        }
        guard let idp else { return nil }
        // (b)(2)(i): the distribution point names must meet.
        if let idpName = idp.distributionPoint {
            let idpNames = idpName.names(relativeTo: crl.issuer)
            let pointNames: [GeneralName]
            if let name = point?.name {
                // A relative name is relative to the CRL issuer: the cRLIssuer when the point
                // has one, else the certificate's issuer (§4.2.1.13).
                let base = point?.crlIssuer.flatMap(firstDirectoryName) ?? certificate.issuer
                pointNames = name.names(relativeTo: base)
            } else {
                pointNames = point?.crlIssuer ?? []
            }
            guard namesIntersect(idpNames, pointNames) else {
                return "its issuingDistributionPoint names another distribution point (RFC 5280 6.3.3 (b)(2)(i))"
            }
        }
        // (b)(2)(ii)–(iii).
        let isCA = certificate.extensions.basicConstraints?.isCertificateAuthority == true
        if idp.onlyContainsUserCerts && isCA { return "it covers end-entity certificates only (RFC 5280 6.3.3 (b)(2)(ii))" }
        if idp.onlyContainsCACerts && !isCA { return "it covers CA certificates only (RFC 5280 6.3.3 (b)(2)(iii))" }
        return nil
    }

    /// §6.3.3 (d): the reasons `crl` covers for `point`.
    static func reasons(_ crl: CertificateRevocationList, point: DistributionPoint?) -> RevocationReasons {
        let only = crl.issuingDistributionPoint?.onlySomeReasons
        switch (only, point?.reasons) {
        case (let a?, let b?): return a.intersection(b)
        case (let a?, nil): return a
        case (nil, let b?): return b
        case (nil, nil): return .all
        }
    }

    /// §5.2.4, §6.3.3 (c): whether `delta` can update `base`: a delta CRL from the same issuer
    /// (and key) for the same scope, whose base is not newer than `base`, and newer than it.
    static func isDelta(_ delta: CertificateRevocationList, for base: CertificateRevocationList) -> Bool {
        guard let deltaBase = delta.deltaBase, let number = base.number, let deltaNumber = delta.number else { return false }
        guard delta.issuer.matches(base.issuer) else { return false }
        // (c)(2): the same issuingDistributionPoint, or none in either.
        guard (delta.issuingDistributionPoint?.derBytes ?? []).elementsEqual(base.issuingDistributionPoint?.derBytes ?? []) else { return false }
        // (c)(3): the same authorityKeyIdentifier when the base has one.
        if let keyID = base.authorityKeyIdentifier?.keyIdentifier {
            guard let other = delta.authorityKeyIdentifier?.keyIdentifier, other.bytesEqual(keyID) else { return false }
        }
        // §5.2.4: the complete CRL's number is at least the delta's BaseCRLNumber and below the
        // delta's own number.
        return deltaBase <= number && number < deltaNumber
    }

    /// The entry of `crl` for `certificate`, if it is listed: the serial numbers match and the
    /// entry's certificate issuer is the certificate's issuer. In an indirect CRL an entry's
    /// certificateIssuer applies to it and to the entries after it, up to the next one that
    /// has the extension; the entries before the first one belong to the CRL issuer (§5.3.3).
    static func entry(for certificate: Certificate, in crl: CertificateRevocationList) -> RevokedCertificate? {
        let indirect = crl.issuingDistributionPoint?.indirectCRL == true
        var entryIssuer: [GeneralName]?
        for entry in crl.entries {
            if indirect, let issuer = entry.certificateIssuer { entryIssuer = issuer }
            guard entry.serialNumber.bytes.bytesEqual(certificate.serialNumber.bytes) else { continue }
            let issuerMatches: Bool
            if let entryIssuer {
                issuerMatches = entryIssuer.contains { name in
                    if case .directoryName(let n) = name { return n.matches(certificate.issuer) }
                    return false
                }
            } else {
                issuerMatches = crl.issuer.matches(certificate.issuer)
            }
            if issuerMatches { return entry }
        }
        return nil
    }

    static func firstDirectoryName(_ names: [GeneralName]) -> DistinguishedName? {
        for case .directoryName(let name) in names { return name }
        return nil
    }

    /// Whether the two name lists share a name: directory names as RFC 5280 §7.1 compares
    /// them, URIs and other forms exactly (§7.4 leaves URI comparison to exact matching).
    static func namesIntersect(_ a: [GeneralName], _ b: [GeneralName]) -> Bool {
        for x in a {
            for y in b {
                switch (x, y) {
                case (.directoryName(let m), .directoryName(let n)) where m.matches(n): return true
                case (.dnsName(let m), .dnsName(let n)) where m.lowercased() == n.lowercased(): return true
                default: if x == y { return true }
                }
            }
        }
        return false
    }
}
