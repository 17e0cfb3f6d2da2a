import ServerTrustLab
import Testing

/// PKCS#12 output, judged by `openssl pkcs12`.
@Suite struct LabPKCS12Tests {
    @Test(arguments: [LabKeyAlgorithm.rsa(bits: 2048), .p256, .ed25519])
    func opensslReadsThePFX(algorithm: LabKeyAlgorithm) throws {
        let directory = try TemporaryDirectory()
        let pki = try LabPKI.webChain(host: "p12.example", algorithm: algorithm)
        let pfx = try LabPKCS12.create(
            certificate: pki.leaf, key: pki.leafKey, chain: [pki.intermediate, pki.root],
            password: "s3cret", friendlyName: "lab leaf")
        let path = try directory.write(pfx, named: "bundle.p12")

        let info = try OpenSSLCLI.run(["pkcs12", "-info", "-nokeys", "-in", path, "-passin", "pass:s3cret"])
        #expect(info.ok, "\(info)")
        #expect(info.output.contains("MAC: sha256"), "\(info)")
        #expect(info.output.contains("friendlyName: lab leaf"), "\(info)")
        #expect(info.output.components(separatedBy: "-----BEGIN CERTIFICATE-----").count == 4, "\(info)")
        let certificates = try LabPEM.decode(info.output).map(\.der)
        #expect(Set(certificates) == Set([pki.leaf.der, pki.intermediate.der, pki.root.der]))

        // The key inside is the leaf's key.
        let keys = try OpenSSLCLI.run(["pkcs12", "-in", path, "-passin", "pass:s3cret", "-nocerts", "-nodes"])
        #expect(keys.ok, "\(keys)")
        let keyPath = try directory.write(keys.output, named: "key.pem")
        let pub = try LabPEM.decode(try OpenSSLCLI.run(["pkey", "-in", keyPath, "-pubout"]).output)
        #expect(pub.first?.der == pki.leafKey.publicKeyInfoDER)

        let wrong = try OpenSSLCLI.run(["pkcs12", "-info", "-nokeys", "-in", path, "-passin", "pass:wrong"])
        #expect(!wrong.ok && wrong.output.contains("Mac verify error"), "\(wrong)")
    }

    @Test func minimalPFXWithoutChainOrName() throws {
        let directory = try TemporaryDirectory()
        let key = try LabKey.shared(.p384)
        let certificate = try LabCertificate.issue(LabCertificateSpec(subject: .cn("solo")), subjectKey: key)
        let pfx = try LabPKCS12.create(certificate: certificate, key: key, password: "")
        let path = try directory.write(pfx, named: "solo.p12")
        let info = try OpenSSLCLI.run(["pkcs12", "-info", "-nokeys", "-in", path, "-passin", "pass:"])
        #expect(info.ok && !info.output.contains("friendlyName"), "\(info)")
    }

    @Test func unparseableCertificateThrows() throws {
        let key = try LabKey.shared(.p256)
        let garbage = try LabCertificate(
            der: LabCertificate.sign(
                tbsDER: LabDER.sequence([
                    LabDER.integer(1), LabDER.integer(2), LabDER.integer(3), LabDER.integer(4),
                    LabDER.integer(5), LabDER.integer(6),
                ]), with: key))
        #expect(throws: LabError.self) {
            try LabPKCS12.create(certificate: garbage, key: key, password: "x")
        }
    }
}
