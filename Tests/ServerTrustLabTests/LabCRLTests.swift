import ServerTrustLab
import Testing

/// Generated CRLs and distribution points, judged by `openssl crl` / `openssl x509`: every
/// field prints as configured and the signature verifies with the issuer's certificate.
@Suite struct LabCRLTests {
    static func issuer() throws -> LabIssuer {
        let key = try LabKey.shared(.p256, slot: 2)
        let spec = LabCertificateSpec(
            subject: LabName([("C", "US"), ("CN", "Lab CRL CA")]),
            extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()])
        return LabIssuer(certificate: try LabCertificate.issue(spec, subjectKey: key), key: key)
    }

    @Test func completeCRLWithEntryExtensionsVerifies() throws {
        let issuer = try Self.issuer()
        var spec = LabCRLSpec(
            entries: [
                LabRevokedEntry(serial: [0x0A], reason: 1),
                LabRevokedEntry(serial: [0x0B], reason: 6, certificateIssuer: [.directoryName(LabName([("CN", "Other CA")]))]),
            ], number: 7)
        var idp = LabIssuingDistributionPoint(name: .fullName([.uri("http://crl.example/lab.crl")]))
        idp.onlyContainsUserCerts = true
        idp.onlySomeReasons = [1, 2]
        idp.indirectCRL = true
        spec.issuingDistributionPoint = idp
        let directory = try TemporaryDirectory()
        let crl = try directory.write(try LabCRL.issue(spec, signer: issuer), named: "lab.crl")
        let ca = try directory.write(Array(issuer.certificate.pem.utf8), named: "ca.pem")
        let result = try OpenSSLCLI.run(["crl", "-inform", "DER", "-in", crl, "-noout", "-text", "-CAfile", ca])
        #expect(result.ok, "\(result)")
        for needle in [
            "verify OK", "Issuer: C = US, CN = Lab CRL CA", "X509v3 CRL Number", "7", "X509v3 Authority Key Identifier",
            "X509v3 Issuing Distribution Point: critical", "URI:http://crl.example/lab.crl", "Only User Certificates",
            "Indirect CRL", "Key Compromise", "CA Compromise", "Serial Number: 0A", "Serial Number: 0B", "Certificate Hold",
            "X509v3 Certificate Issuer: critical", "DirName:/CN=Other CA",
        ] {
            #expect(result.output.contains(needle), "missing '\(needle)' in:\n\(result.output)")
        }
    }

    @Test func deltaCRLCarriesItsBase() throws {
        var spec = LabCRLSpec(entries: [LabRevokedEntry(serial: [0x01], reason: 8)], number: 12)
        spec.deltaBase = 10
        let directory = try TemporaryDirectory()
        let crl = try directory.write(try LabCRL.issue(spec, signer: Self.issuer()), named: "delta.crl")
        let result = try OpenSSLCLI.run(["crl", "-inform", "DER", "-in", crl, "-noout", "-text"])
        #expect(result.ok, "\(result)")
        for needle in ["X509v3 Delta CRL Indicator: critical", "10", "Remove From CRL"] {
            #expect(result.output.contains(needle), "missing '\(needle)' in:\n\(result.output)")
        }
    }

    @Test func distributionPointsWithRelativeNamesReasonsAndIssuer() throws {
        let points = [
            LabDistributionPoint(name: .relativeToCRLIssuer([LabAttribute("CN", "Partition 1")]), reasons: [1, 3]),
            LabDistributionPoint(crlIssuer: [.directoryName(LabName([("CN", "Delegated CRL Issuer")]))]),
        ]
        let spec = LabCertificateSpec(
            subject: .cn("dp.example"), extensions: [.distributionPoints(points), .freshestCRL([.uri("http://crl.example/delta.crl")])])
        let certificate = try LabCertificate.issue(spec, subjectKey: LabKey.shared(.p256, slot: 1))
        let result = try OpenSSLCLI.text(certificate, in: TemporaryDirectory())
        #expect(result.ok, "\(result)")
        for needle in [
            "X509v3 CRL Distribution Points", "Relative Name:", "CN = Partition 1", "Reasons:", "Key Compromise, Affiliation Changed",
            "CRL Issuer:", "DirName:CN = Delegated CRL Issuer", "X509v3 Freshest CRL", "URI:http://crl.example/delta.crl",
        ] {
            #expect(result.output.contains(needle), "missing '\(needle)' in:\n\(result.output)")
        }
    }
}
