import CertificateParsing
import ServerTrustLab
import Testing

/// The CRL model of RFC 5280 §5: entries with their entry extensions (§5.3), the CRL
/// extensions that define scope and deltas (§5.2), and the distribution point names of §4.2.1.13
/// they are matched against. CRLs and certificates are generated and signed by ServerTrustLab.
@Suite("CRL and distribution point model (RFC 5280 5.2, 5.3, 4.2.1.13)")
struct CRLParsingTests {
    static func signer() throws -> LabIssuer {
        let key = try LabKey.shared(.p256, slot: 41)
        let spec = LabCertificateSpec(
            subject: LabName([("C", "US"), ("O", "Lab"), ("CN", "CRL Test CA")]),
            extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()])
        return LabIssuer(certificate: try LabCertificate.issue(spec, subjectKey: key), key: key)
    }

    static func crl(_ spec: LabCRLSpec) throws -> CertificateRevocationList {
        try CertificateRevocationList(derEncoded: LabCRL.issue(spec, signer: signer()))
    }

    @Test("entries keep their serial, date and entry extensions: reasonCode, certificateIssuer, unknown critical ones")
    func entries() throws {
        var spec = LabCRLSpec(entries: [
            LabRevokedEntry(serial: [0x01], reason: 1),
            LabRevokedEntry(serial: [0x02], reason: 6, certificateIssuer: [.directoryName(LabName([("CN", "Other CA")]))]),
            LabRevokedEntry(serial: [0x03], extensions: [.raw(oid: "1.3.6.1.4.1.99999.7", critical: true, valueDER: LabDER.null())]),
        ])
        spec.number = 42
        let crl = try Self.crl(spec)
        #expect(crl.entries.map(\.serialNumber.hex) == ["01", "02", "03"])
        #expect(crl.entries.map(\.reason) == [.keyCompromise, .certificateHold, nil])
        #expect(crl.entries[1].certificateIssuer == [.directoryName(try DistinguishedName(derEncoded: LabName([("CN", "Other CA")]).derEncoded()))])
        #expect(crl.entries[0].unknownCriticalExtensions.isEmpty)
        #expect(crl.entries[2].unknownCriticalExtensions.map(\.oid) == ["1.3.6.1.4.1.99999.7"])
        #expect(crl.entries[0].revocationDate.secondsSince1970 == LabClock.reference - 2 * LabClock.day)
        #expect(crl.number?.description == "2a")
        #expect(!crl.isDelta && crl.deltaBase == nil)
        #expect(crl.authorityKeyIdentifier?.keyIdentifier != nil)
        #expect(crl.isRevoked(crl.entries[1].serialNumber))
    }

    @Test("issuingDistributionPoint: every flag, onlySomeReasons and a name relative to the CRL issuer")
    func issuingDistributionPoint() throws {
        var idp = LabIssuingDistributionPoint(name: .relativeToCRLIssuer([LabAttribute("CN", "Partition 2")]))
        idp.onlyContainsCACerts = true
        idp.onlySomeReasons = [1, 2]
        idp.indirectCRL = true
        var spec = LabCRLSpec()
        spec.issuingDistributionPoint = idp
        let crl = try Self.crl(spec)
        let parsed = try #require(crl.issuingDistributionPoint)
        #expect(parsed.onlyContainsCACerts && !parsed.onlyContainsUserCerts && !parsed.onlyContainsAttributeCerts)
        #expect(parsed.indirectCRL)
        #expect(parsed.onlySomeReasons == [.keyCompromise, .cACompromise])
        let names = try #require(parsed.distributionPoint).names(relativeTo: crl.issuer)
        #expect(names.map(\.description) == ["DirName:CN=Partition 2,CN=CRL Test CA,O=Lab,C=US"])
        #expect(crl.unknownCriticalExtensions.isEmpty)
    }

    @Test("deltaCRLIndicator makes a delta CRL; CRL numbers order numerically")
    func delta() throws {
        var spec = LabCRLSpec(number: 300)
        spec.deltaBase = 255
        let delta = try Self.crl(spec)
        let base = try Self.crl(LabCRLSpec(number: 256))
        #expect(delta.isDelta)
        let deltaBase = try #require(delta.deltaBase)
        #expect(deltaBase < (try #require(base.number)))
        #expect((try #require(base.number)) < (try #require(delta.number)))
        #expect(deltaBase.description == "ff")
    }

    @Test("an unknown critical CRL extension is listed, a known one is not")
    func unknownCritical() throws {
        var spec = LabCRLSpec()
        spec.extensions = [.raw(oid: "1.3.6.1.4.1.99999.8", critical: true, valueDER: LabDER.null())]
        #expect(try Self.crl(spec).unknownCriticalExtensions.map(\.oid) == ["1.3.6.1.4.1.99999.8"])
    }

    /// Encodings RFC 5280 forbids, each refused with a typed DER error.
    enum Malformed: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case twoOnlyFlags, emptyIssuingDistributionPoint, reasonCodeSeven, duplicateCRLExtension, duplicateEntryExtension
        var testDescription: String { rawValue }
    }

    @Test("malformed CRL extensions are DER errors, not ignored", arguments: Malformed.allCases)
    func malformed(_ c: Malformed) throws {
        var spec = LabCRLSpec()
        switch c {
        case .twoOnlyFlags:
            var idp = LabIssuingDistributionPoint()
            idp.onlyContainsUserCerts = true
            idp.onlyContainsCACerts = true
            spec.issuingDistributionPoint = idp
        case .emptyIssuingDistributionPoint:
            spec.issuingDistributionPoint = LabIssuingDistributionPoint()
        case .reasonCodeSeven:
            spec.entries = [LabRevokedEntry(serial: [0x05], reason: 7)]
        case .duplicateCRLExtension:
            spec.extensions = [.raw(oid: "2.5.29.20", critical: false, valueDER: LabDER.integer(9))]
        case .duplicateEntryExtension:
            let reason = LabExtension.raw(oid: "2.5.29.21", critical: false, valueDER: LabDER.enumerated(1))
            spec.entries = [LabRevokedEntry(serial: [0x05], reason: 1, extensions: [reason])]
        }
        let der = try LabCRL.issue(spec, signer: Self.signer())
        #expect(throws: DERError.self) { try CertificateRevocationList(derEncoded: der) }
    }

    /// issuingDistributionPoint's flags are BOOLEAN DEFAULT FALSE: DER writes TRUE as `0xFF`
    /// in one octet (X.690 §11.1) and never writes the default FALSE (X.690 §11.5).
    @Test(
        "issuingDistributionPoint flags other than an encoded DER TRUE are invalidValue",
        arguments: [
            ("onlyContainsCACerts FALSE", [0x82, 0x01, 0x00]), ("onlyContainsCACerts 0x01", [0x82, 0x01, 0x01]),
            ("onlyContainsCACerts in two octets", [0x82, 0x02, 0xFF, 0xFF]), ("indirectCRL empty", [0x84, 0x00]),
            ("onlyContainsUserCerts 0x7F", [0x81, 0x01, 0x7F]),
        ] as [(String, [UInt8])])
    func issuingDistributionPointFlag(_ label: String, _ flag: [UInt8]) throws {
        var spec = LabCRLSpec()
        spec.extensions = [.raw(oid: "2.5.29.28", critical: true, valueDER: [0x30, UInt8(flag.count)] + flag)]
        let der = try LabCRL.issue(spec, signer: Self.signer())
        #expect(throws: DERError(.invalidValue, at: 0, label)) { try CertificateRevocationList(derEncoded: der) }
    }

    @Test("a certificate's distribution points: full and relative names, reasons, cRLIssuer")
    func distributionPoints() throws {
        let key = try LabKey.shared(.p256, slot: 42)
        let points = [
            LabDistributionPoint(name: .fullName([.uri("http://crl.example/1.crl")]), reasons: [1, 6]),
            LabDistributionPoint(name: .relativeToCRLIssuer([LabAttribute("CN", "DP 2")]), crlIssuer: [.directoryName(LabName([("CN", "Delegated")]))]),
            LabDistributionPoint(crlIssuer: [.directoryName(LabName([("CN", "Indirect")]))]),
        ]
        let spec = LabCertificateSpec(subject: .cn("leaf"), extensions: [.distributionPoints(points)])
        let certificate = try Certificate(derEncoded: LabCertificate.issue(spec, subjectKey: key).der)
        let parsed = try #require(certificate.extensions.crlDistributionPoints)
        #expect(parsed.count == 3)
        #expect(parsed[0].name == .fullName([.uri("http://crl.example/1.crl")]))
        #expect(parsed[0].reasons == [.keyCompromise, .certificateHold])
        #expect(parsed[0].crlIssuer == nil)
        guard case .nameRelativeToCRLIssuer(let rdn)? = parsed[1].name else {
            Issue.record("expected a relative name, got \(String(describing: parsed[1].name))")
            return
        }
        #expect(rdn.attributes.map(\.rfc4514) == ["CN=DP 2"])
        #expect(parsed[1].crlIssuer?.count == 1)
        #expect(parsed[2].name == nil && parsed[2].reasons == nil)
    }
}
