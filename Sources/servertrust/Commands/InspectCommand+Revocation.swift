import CertificateParsing
import TrustEvaluation

/// Where a certificate says its revocation status is published (RFC 5280 §4.2.1.13
/// cRLDistributionPoints, §4.2.2.1 authorityInfoAccess id-ad-ocsp), for `servertrust inspect`.
extension InspectCommand {
    /// `CRL` lines (each distribution point URL; one the revocation check does not fetch says
    /// why) and `OCSP` lines (the responder URLs; the check reads stapled responses only).
    static func revocationLines(_ c: Certificate) -> [(String, String)] {
        let locations = CRLLocations(c)
        return locations.urls.map { ("CRL", $0) } + locations.ignored.map { ("CRL", $0.description) } + ocspURLs(c).map { ("OCSP", $0) }
    }

    /// `crlDistributionPoints` (the fetchable URLs) and `ocsp` (the responder URLs), when the
    /// certificate has them.
    static func revocationJSON(_ c: Certificate) -> [(String, JSON)] {
        var pairs: [(String, JSON)] = []
        if c.extensions.crlDistributionPoints != nil { pairs.append(("crlDistributionPoints", .array(CRLLocations(c).urls.map { .string($0) }))) }
        let ocsp = ocspURLs(c)
        if !ocsp.isEmpty { pairs.append(("ocsp", .array(ocsp.map { .string($0) }))) }
        return pairs
    }

    static func ocspURLs(_ c: Certificate) -> [String] {
        (c.extensions.authorityInformationAccess ?? []).compactMap { access in
            guard access.accessMethod == OID.ocsp else { return nil }
            if case .uri(let uri) = access.accessLocation { return uri }
            return access.accessLocation.description
        }
    }
}
