import ServerTrustLab
import Testing

/// Every extension kind, checked by the names and values `openssl x509 -text` prints.
@Suite struct LabExtensionTests {
    /// A syntactically valid one-entry SignedCertificateTimestampList (RFC 6962 §3.2/§3.3).
    static let sctList: [UInt8] = {
        var sct: [UInt8] = [0x00]  // version v1
        sct += [UInt8](repeating: 0xAB, count: 32)  // log ID
        sct += [0x00, 0x00, 0x01, 0x9B, 0x77, 0x18, 0x30, 0x00]  // timestamp (ms)
        sct += [0x00, 0x00]  // no extensions
        sct += [0x04, 0x03, 0x00, 0x04, 0xDE, 0xAD, 0xBE, 0xEF]  // sha256/ecdsa, 4-byte signature
        let serialized = [UInt8(sct.count >> 8), UInt8(sct.count & 0xFF)] + sct
        return [UInt8(serialized.count >> 8), UInt8(serialized.count & 0xFF)] + serialized
    }()

    static func issue(_ extensions: [LabExtension], issuer: LabIssuer? = nil) throws -> LabCertificate {
        let spec = LabCertificateSpec(subject: .cn("extensions.example"), extensions: extensions)
        return try LabCertificate.issue(spec, subjectKey: LabKey.shared(.p256, slot: 1), issuer: issuer)
    }

    static func text(_ extensions: [LabExtension], issuer: LabIssuer? = nil) throws -> String {
        let result = try OpenSSLCLI.text(try issue(extensions, issuer: issuer), in: TemporaryDirectory())
        #expect(result.ok, "\(result)")
        return result.output
    }

    static func expectAll(_ needles: [String], in text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for needle in needles {
            #expect(text.contains(needle), "missing '\(needle)' in:\n\(text)", sourceLocation: sourceLocation)
        }
    }

    @Test func constraintsAndUsages() throws {
        let text = try Self.text([
            .basicConstraints(ca: true, pathLength: 3),
            .keyUsage(LabKeyUsage.allCases),
            .extendedKeyUsage(
                [
                    "serverAuth", "clientAuth", "codeSigning", "emailProtection", "timeStamping",
                    "OCSPSigning", "anyExtendedKeyUsage", "1.3.6.1.4.1.99999.1",
                ], critical: true),
        ])
        Self.expectAll(
            [
                "X509v3 Basic Constraints: critical", "CA:TRUE, pathlen:3",
                "X509v3 Key Usage: critical",
                "Digital Signature, Non Repudiation, Key Encipherment, Data Encipherment, Key Agreement, Certificate Sign, CRL Sign, Encipher Only, Decipher Only",
                "X509v3 Extended Key Usage: critical",
                "TLS Web Server Authentication, TLS Web Client Authentication, Code Signing, E-mail Protection, Time Stamping, OCSP Signing, Any Extended Key Usage, 1.3.6.1.4.1.99999.1",
            ], in: text)
    }

    @Test func basicConstraintsFalseOmitsTheBoolean() throws {
        let certificate = try Self.issue([.basicConstraints(ca: false)])
        // Extension ::= SEQUENCE { 2.5.29.19, TRUE, OCTET STRING { SEQUENCE {} } }
        let expected: [UInt8] = [0x30, 0x0C, 0x06, 0x03, 0x55, 0x1D, 0x13, 0x01, 0x01, 0xFF, 0x04, 0x02, 0x30, 0x00]
        #expect(certificate.der.windows(ofCount: expected.count).contains { Array($0) == expected })
    }

    @Test func alternativeNames() throws {
        let text = try Self.text([
            .subjectAltName(
                [
                    .dns("a.example"), .dns("*.wild.example"), .ipAddress("192.0.2.1"), .ipAddress("2001:db8::1"),
                    .ip([10, 0, 0, 1]), .email("admin@example.com"), .uri("https://example.com/path"),
                    .directoryName(LabName([("C", "US"), ("CN", "Dir")])),
                    .otherName(oid: "1.3.6.1.4.1.311.20.2.3", valueDER: LabDER.utf8String("upn@example.com")),
                    .registeredID("1.2.3.4.5"),
                ], critical: true),
            .issuerAltName([.uri("http://issuer.example"), .email("ca@example.com")]),
        ])
        Self.expectAll(
            [
                "X509v3 Subject Alternative Name: critical",
                "DNS:a.example", "DNS:*.wild.example", "IP Address:192.0.2.1", "IP Address:2001:DB8:0:0:0:0:0:1",
                "IP Address:10.0.0.1", "email:admin@example.com", "URI:https://example.com/path",
                "DirName:/C=US/CN=Dir", "UPN::upn@example.com", "Registered ID:1.2.3.4.5",
                "X509v3 Issuer Alternative Name", "URI:http://issuer.example", "email:ca@example.com",
            ], in: text)
    }

    @Test func nameConstraints() throws {
        let text = try Self.text([
            .nameConstraints(
                permitted: [
                    .dns(".example.com"), .ipSubnet("10.0.0.0/8"), .ipSubnet("2001:db8::/32"),
                    .email("example.com"), .uri(".example.com"),
                    .directoryName(LabName([("C", "US"), ("O", "Example")])),
                ],
                excluded: [.dns("bad.example.com"), .ip([192, 168, 0, 0, 255, 255, 0, 0])]
            )
        ])
        Self.expectAll(
            [
                "X509v3 Name Constraints: critical", "Permitted:", "DNS:.example.com", "IP:10.0.0.0/255.0.0.0",
                "IP:2001:DB8:0:0:0:0:0:0/FFFF:FFFF:0:0:0:0:0:0", "email:example.com", "URI:.example.com",
                "DirName:C = US, O = Example", "Excluded:", "DNS:bad.example.com", "IP:192.168.0.0/255.255.0.0",
            ], in: text)
    }

    @Test func policies() throws {
        let text = try Self.text([
            .certificatePolicies([
                LabPolicy("domainValidated", cpsURI: "https://cps.example/cps"),
                LabPolicy("1.3.6.1.4.1.99999.7", userNotice: "Test notice"),
                "anyPolicy",
            ]),
            .policyMappings([LabPolicyMapping("1.3.6.1.4.1.99999.1", "1.3.6.1.4.1.99999.2")]),
            .policyConstraints(requireExplicitPolicy: 0, inhibitPolicyMapping: 2),
            .inhibitAnyPolicy(1),
        ])
        Self.expectAll(
            [
                "X509v3 Certificate Policies", "Policy: 2.23.140.1.2.1", "CPS: https://cps.example/cps",
                "Policy: 1.3.6.1.4.1.99999.7", "Explicit Text: Test notice", "Policy: X509v3 Any Policy",
                "X509v3 Policy Mappings: critical", "1.3.6.1.4.1.99999.1:1.3.6.1.4.1.99999.2",
                "X509v3 Policy Constraints: critical", "Require Explicit Policy:0", "Inhibit Policy Mapping:2",
                "X509v3 Inhibit Any Policy: critical", "1",
            ], in: text)
    }

    @Test func accessAndDistribution() throws {
        let text = try Self.text([
            .authorityInfoAccess(ocsp: ["http://ocsp.example"], caIssuers: ["http://ca.example/ca.der"]),
            .crlDistributionPoints(["http://crl.example/a.crl", "ldap://crl.example/cn=b"]),
        ])
        Self.expectAll(
            [
                "Authority Information Access", "OCSP - URI:http://ocsp.example", "CA Issuers - URI:http://ca.example/ca.der",
                "X509v3 CRL Distribution Points", "Full Name:", "URI:http://crl.example/a.crl", "URI:ldap://crl.example/cn=b",
            ], in: text)
    }

    @Test func keyIdentifiers() throws {
        let issuerKey = try LabKey.shared(.p384, slot: 1)
        let ca = try LabCertificate.issue(
            LabCertificateSpec(
                subject: .cn("AKI CA"), serial: [0x12, 0x34],
                extensions: [.basicConstraints(ca: true), .subjectKeyIdentifier(.explicit([1, 2, 3, 4]))]),
            subjectKey: issuerKey
        )
        #expect(ca.subjectKeyIdentifier == [1, 2, 3, 4])
        let text = try Self.text(
            [
                .subjectKeyIdentifier(),
                .authorityKeyIdentifier(includeIssuerAndSerial: true),
            ], issuer: LabIssuer(certificate: ca, key: issuerKey))
        let subjectKeyID = hex(try LabKey.shared(.p256, slot: 1).subjectKeyIdentifier, separator: ":")
        Self.expectAll(
            [
                "X509v3 Subject Key Identifier", subjectKeyID, "X509v3 Authority Key Identifier",
                "keyid:01:02:03:04", "DirName:/CN=AKI CA", "serial:12:34",
            ], in: text)

        let explicit = try Self.text([.authorityKeyIdentifier(keyIdentifier: .explicit([0xAA, 0xBB]))])
        Self.expectAll(["AA:BB"], in: explicit)
    }

    @Test func certificateTransparency() throws {
        let text = try Self.text([.signedCertificateTimestamps(Self.sctList), .precertificatePoison])
        Self.expectAll(
            [
                "CT Precertificate SCTs", "Signed Certificate Timestamp:", "Version   : v1 (0x0)",
                "CT Precertificate Poison: critical",
            ], in: text)
    }

    @Test func rawExtensions() throws {
        let text = try Self.text([
            .raw(oid: "1.3.6.1.4.1.99999.42", critical: true, valueDER: LabDER.utf8String("opaque")),
            .raw(oid: "2.5.29.19", critical: false, valueDER: LabDER.sequence([LabDER.boolean(true)])),
        ])
        Self.expectAll(["1.3.6.1.4.1.99999.42: critical", "opaque", "X509v3 Basic Constraints: \n", "CA:TRUE"], in: text)
    }

    @Test func duplicateExtensionsAreEncodedAsGiven() throws {
        let certificate = try Self.issue([.basicConstraints(ca: true), .basicConstraints(ca: false)])
        let result = try OpenSSLCLI.text(certificate, in: TemporaryDirectory())
        // OpenSSL still prints the certificate; both copies are present in the DER.
        #expect(result.output.components(separatedBy: "X509v3 Basic Constraints").count == 3, "\(result)")
    }

    @Test func invalidInputsThrow() {
        #expect(throws: LabError.self) { try Self.issue([.subjectAltName([.ipAddress("300.1.1.1")])]) }
        #expect(throws: LabError.self) { try Self.issue([.nameConstraints(permitted: [.ipSubnet("10.0.0.0/33")], excluded: [])]) }
        #expect(throws: LabError.self) { try Self.issue([.extendedKeyUsage(["notAUsage"])]) }
        #expect(throws: LabError.self) { try Self.issue([.raw(oid: "not.an.oid", critical: false, valueDER: [])]) }
    }

    @Test(arguments: [
        ("::", [UInt8](repeating: 0, count: 16)),
        ("::1", [UInt8](repeating: 0, count: 15) + [1]),
        ("2001:db8::", [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 12)),
        ("::ffff:192.0.2.1", [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 192, 0, 2, 1]),
        ("1:2:3:4:5:6:7:8", [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]),
        ("203.0.113.255", [203, 0, 113, 255]),
    ])
    func ipParsing(text: String, expected: [UInt8]) throws {
        #expect(try LabIP.parse(text) == expected)
    }

    @Test(arguments: ["1::2::3", "1:2:3:4:5:6:7:8:9", "1.2.3", "256.0.0.1", "12345::", "example.com", ""])
    func ipParsingRejects(text: String) {
        #expect(throws: LabError.self) { try LabIP.parse(text) }
    }
}

extension Array where Element == UInt8 {
    fileprivate func windows(ofCount count: Int) -> [ArraySlice<UInt8>] {
        guard count <= self.count else { return [] }
        return (0...(self.count - count)).map { self[$0..<($0 + count)] }
    }
}
