import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// Which of a certificate's cRLDistributionPoints (RFC 5280 §4.2.1.13) are fetched: `http` and
/// `https` fullName URIs, per point, in order; LDAP, other schemes, credentials, directory names,
/// relative names and cRLIssuer-only points are listed with the reason they are not.
@Suite("CRL distribution point locations (RFC 5280 4.2.1.13)")
struct CRLLocationsTests {
    static func certificate(_ points: [LabDistributionPoint]) throws -> Certificate {
        let key = try LabKey.shared(.p256, slot: 3 * 134 + 9)
        let spec = LabCertificateSpec(subject: .cn("dp.example"), extensions: [.distributionPoints(points)])
        return try Certificate(derEncoded: LabCertificate.issue(spec, subjectKey: key).der)
    }

    @Test("http and https URIs per point, in order; the others ignored with their reason")
    func mixed() throws {
        let certificate = try Self.certificate([
            LabDistributionPoint(
                name: .fullName([
                    .uri("ldap://ldap.example/cn=CA?certificateRevocationList"), .uri("http://crl.example/a.crl"),
                    .uri("HTTPS://crl.example/a.crl"),
                ])),
            LabDistributionPoint(name: .fullName([.uri("ftp://crl.example/b.crl"), .directoryName(LabName([("CN", "Partition")]))])),
            LabDistributionPoint(name: .relativeToCRLIssuer([LabAttribute("CN", "Partition 2")])),
            LabDistributionPoint(crlIssuer: [.directoryName(LabName([("CN", "Delegated")]))]),
            LabDistributionPoint(name: .fullName([.uri("http://user:secret@crl.example/c.crl"), .uri("http://crl.example/c.crl")])),
            LabDistributionPoint(name: .fullName([.uri("http://crl.example/a.crl")])),
        ])
        let locations = CRLLocations(certificate)
        #expect(
            locations.points.map(\.urls) == [
                ["http://crl.example/a.crl", "HTTPS://crl.example/a.crl"], ["http://crl.example/c.crl"], ["http://crl.example/a.crl"],
            ])
        #expect(locations.urls == ["http://crl.example/a.crl", "HTTPS://crl.example/a.crl", "http://crl.example/c.crl"])
        #expect(
            locations.ignored == [
                .ldap("ldap://ldap.example/cn=CA?certificateRevocationList"), .unsupportedScheme("ftp://crl.example/b.crl"),
                .notAURI("DirName:CN=Partition"), .nameRelativeToCRLIssuer, .noName, .credentialsInURL("http://user:secret@crl.example/c.crl"),
            ])
        #expect(locations.ignored[0].description.contains("LDAP is not fetched"))
        #expect(!locations.ignored[5].description.contains("secret"), "a credential is never repeated in a message")
        #expect(locations.points[0].distributionPoint.reasons == nil)
    }

    @Test("malformed URLs are ignored", arguments: ["http:crl.example/x.crl", "http:///x.crl", "crl.example/x.crl", "http://crl.example/a b.crl"])
    func malformed(uri: String) throws {
        let locations = CRLLocations(try Self.certificate([.uri(uri)]))
        #expect(locations.points.isEmpty)
        #expect(locations.ignored == [.malformedURL(uri)])
    }

    @Test("a certificate without cRLDistributionPoints has no location")
    func none() throws {
        let key = try LabKey.shared(.p256, slot: 3 * 134 + 9)
        let certificate = try Certificate(derEncoded: LabCertificate.issue(LabCertificateSpec(subject: .cn("no-dp.example")), subjectKey: key).der)
        let locations = CRLLocations(certificate)
        #expect(locations.points.isEmpty && locations.ignored.isEmpty)
    }
}
