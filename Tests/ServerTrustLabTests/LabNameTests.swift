import ServerTrustLab
import Testing

/// Distinguished-name encoding: attribute types, string types, multi-valued RDNs.
@Suite struct LabNameTests {
    static func selfSigned(_ name: LabName) throws -> LabCertificate {
        try LabCertificate.issue(LabCertificateSpec(subject: name), subjectKey: LabKey.shared(.p256))
    }

    @Test func pairsBecomeOrderedSingleValuedRDNs() throws {
        let directory = try TemporaryDirectory()
        let name = LabName([
            ("C", "US"), ("ST", "California"), ("L", "San Francisco"), ("O", "Example"),
            ("OU", "Web"), ("CN", "x"), ("emailAddress", "a@example.com"), ("DC", "example"),
            ("serialNumber", "42"), ("2.5.4.97", "VATUS-1"),
        ])
        let certificate = try Self.selfSigned(name)
        #expect(certificate.subjectNameDER == (try name.derEncoded()))
        #expect(certificate.issuerNameDER == certificate.subjectNameDER)
        let path = try directory.write(certificate.pem, named: "c.pem")
        let result = try OpenSSLCLI.run(["x509", "-in", path, "-noout", "-subject", "-nameopt", "RFC2253"])
        #expect(
            result.output.contains(
                "subject=organizationIdentifier=VATUS-1,serialNumber=42,DC=example,emailAddress=a@example.com,CN=x,OU=Web,O=Example,L=San Francisco,ST=California,C=US"
            ), "\(result)")
    }

    @Test func defaultStringTypesFollowRFC5280() throws {
        let der = try LabName([("C", "US"), ("CN", "x"), ("emailAddress", "e"), ("DC", "d"), ("serialNumber", "1")]).derEncoded()
        let directory = try TemporaryDirectory()
        let result = try OpenSSLCLI.asn1parse(der, in: directory)
        let types = result.output.split(separator: "\n").compactMap { line -> String? in
            ["PRINTABLESTRING", "UTF8STRING", "IA5STRING"].first { line.contains($0) }
        }
        #expect(types == ["PRINTABLESTRING", "UTF8STRING", "IA5STRING", "IA5STRING", "PRINTABLESTRING"], "\(result)")
    }

    /// Every DirectoryString-capable type parses; VisibleString is not in OpenSSL's name
    /// string mask, so it is the odd one out and must be rejected (useful for negative tests).
    @Test(arguments: LabStringType.allCases)
    func everyStringTypeIsAcceptedByOpenSSL(type: LabStringType) throws {
        let directory = try TemporaryDirectory()
        let value = type == .numeric ? "12345" : "Lab Name"
        let certificate = try Self.selfSigned(LabName(rdns: [[LabAttribute("CN", value, stringType: type)]]))
        let path = try directory.write(certificate.pem, named: "c.pem")
        let result = try OpenSSLCLI.run(["x509", "-in", path, "-noout", "-subject", "-nameopt", "RFC2253,show_type"])
        if type == .visible {
            #expect(!result.ok, "\(result)")
            return
        }
        let tag: String
        switch type {
        case .utf8: tag = "UTF8STRING"
        case .printable: tag = "PRINTABLESTRING"
        case .ia5: tag = "IA5STRING"
        case .bmp: tag = "BMPSTRING"
        case .teletex: tag = "T61STRING"
        case .universal: tag = "UNIVERSALSTRING"
        case .visible: tag = ""
        case .numeric: tag = "NUMERICSTRING"
        }
        #expect(result.output.contains("CN=\(tag):\(value)"), "\(result)")
    }

    @Test func multiValuedRDNsAreSortedSets() throws {
        let directory = try TemporaryDirectory()
        let name = LabName(rdns: [
            [LabAttribute("C", "US")],
            [LabAttribute("OU", "Unit"), LabAttribute("CN", "Multi")],
        ])
        let certificate = try Self.selfSigned(name)
        let path = try directory.write(certificate.pem, named: "c.pem")
        let result = try OpenSSLCLI.run(["x509", "-in", path, "-noout", "-subject", "-nameopt", "RFC2253"])
        // CN (2.5.4.3) sorts before OU (2.5.4.11) in DER SET order.
        #expect(result.output.contains("subject=CN=Multi+OU=Unit,C=US"), "\(result)")
    }

    @Test func namesResolveThroughOpenSSLAndRejectUnknown() throws {
        #expect(try LabAttribute("jurisdictionCountryName", "US").derEncoded().count > 0)
        #expect(throws: LabError.self) { try LabAttribute("NoSuchAttribute", "x").derEncoded() }
    }

    @Test func derOverrideIsUsedVerbatim() throws {
        let raw = LabDER.sequence([LabDER.set([LabDER.sequence([try LabDER.oid("2.5.4.3"), LabDER.utf8String("raw")])])])
        let certificate = try Self.selfSigned(LabName(der: raw))
        #expect(certificate.subjectNameDER == raw)
        #expect(LabName.cn("x") == LabName([("CN", "x")]))
        #expect(try LabName.empty.derEncoded() == [0x30, 0x00])
    }
}
