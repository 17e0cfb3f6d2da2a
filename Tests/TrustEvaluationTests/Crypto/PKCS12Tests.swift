import CertificateParsing
import Foundation
import ServerTrustLab
import Testing
import TrustEvaluation

/// ``Identity``: PKCS #12 files written by OpenSSL (through ServerTrustLab and the `openssl`
/// CLI) and PEM pairs, with wrong passwords, damaged files and mismatched contents.
@Suite("Identities from PKCS #12 and PEM")
struct PKCS12Tests {
    static let password = "correct horse battery staple"

    @Test(
        "a good password gives the certificate, the key and the chain",
        arguments: [LabKeyAlgorithm.p256, .rsa(bits: 2048), .ed25519]
    )
    func loads(_ algorithm: LabKeyAlgorithm) throws {
        let pki = try LabPKI.webChain(host: "client.example.test", algorithm: algorithm)
        let pfx = try LabPKCS12.create(
            certificate: pki.leaf,
            key: pki.leafKey,
            chain: [pki.intermediate, pki.root],
            password: Self.password,
            friendlyName: "client"
        )
        let identity = try Identity(pkcs12: pfx, password: Self.password)
        #expect(identity.certificate.derBytes == pki.leaf.der)
        #expect(identity.privateKey.publicKeyInfoDER == pki.leafKey.publicKeyInfoDER)
        #expect(identity.privateKey.matches(identity.certificate))
        #expect(identity.chain.map(\.derBytes) == [pki.intermediate.der, pki.root.der])
    }

    @Test("an empty password works for a file written with an empty password")
    func emptyPassword() throws {
        let pki = try LabPKI.webChain(host: "client.example.test")
        let pfx = try LabPKCS12.create(certificate: pki.leaf, key: pki.leafKey, password: "")
        let identity = try Identity(pkcs12: pfx, password: "")
        #expect(identity.certificate.derBytes == pki.leaf.der)
        #expect(identity.chain.isEmpty)
        #expect(throws: KeyError(.wrongPassword, "")) { try Identity(pkcs12: pfx, password: "x") }
    }

    @Test("a wrong password is .wrongPassword")
    func wrongPassword() throws {
        let pki = try LabPKI.webChain(host: "client.example.test")
        let pfx = try LabPKCS12.create(
            certificate: pki.leaf,
            key: pki.leafKey,
            chain: [pki.intermediate],
            password: Self.password
        )
        for attempt in [
            "", "wrong", Self.password.uppercased(), Self.password + "\u{0}", String(Self.password.dropLast()),
        ] {
            #expect(throws: KeyError(.wrongPassword, "")) { try Identity(pkcs12: pfx, password: attempt) }
        }
    }

    @Test("truncated, extended or garbage data is .malformed")
    func malformed() throws {
        let pki = try LabPKI.webChain(host: "client.example.test")
        let pfx = try LabPKCS12.create(certificate: pki.leaf, key: pki.leafKey, password: Self.password)
        var inputs: [(String, [UInt8])] = [
            ("empty", []),
            ("one byte", [0x30]),
            ("trailing byte", pfx + [0]),
            ("garbage", (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 37) }),
            ("a certificate", pki.leaf.der),
        ]
        for cut in [1, 16, pfx.count / 3, pfx.count / 2, pfx.count - 40, pfx.count - 1] {
            inputs.append(("truncated to \(pfx.count - cut) bytes", Array(pfx.dropLast(cut))))
        }
        for (name, bytes) in inputs {
            #expect(throws: KeyError(.malformed, ""), "\(name)") {
                try Identity(pkcs12: bytes, password: Self.password)
            }
        }
    }

    /// Files the Lab cannot write (PKCS12_create insists on a matching pair), made with the CLI.
    struct CLICase: Sendable, CustomTestStringConvertible {
        let name: String
        let arguments: @Sendable (_ key: String, _ certificate: String, _ other: String) -> [String]
        let expected: KeyError.Code?
        var testDescription: String { name }
    }

    static let cliCases: [CLICase] = [
        CLICase(
            name: "certificates only",
            arguments: { _, certificate, _ in ["-nokeys", "-in", certificate] },
            expected: .missingKey
        ),
        CLICase(
            name: "key only",
            arguments: { key, _, _ in ["-nocerts", "-inkey", key] },
            expected: .missingCertificate
        ),
        CLICase(
            name: "key with another key's certificate",
            arguments: { key, _, other in ["-nocerts", "-inkey", key, "-certfile", other] },
            expected: .keyMismatch
        ),
        CLICase(
            name: "no MAC",
            arguments: { key, certificate, _ in ["-nomac", "-inkey", key, "-in", certificate] },
            expected: .unsupported
        ),
        CLICase(
            name: "SHA-1 MAC and 3DES key bags",
            arguments: { key, certificate, _ in
                [
                    "-macalg", "sha1", "-keypbe", "PBE-SHA1-3DES", "-certpbe", "PBE-SHA1-3DES", "-inkey", key, "-in",
                    certificate,
                ]
            },
            expected: nil
        ),
        CLICase(
            name: "legacy RC2/3DES encryption",
            arguments: { key, certificate, _ in ["-legacy", "-inkey", key, "-in", certificate] },
            expected: .unsupported
        ),
    ]

    @Test("contents and algorithms the loader must classify", arguments: cliCases)
    func cliFiles(_ c: CLICase) throws {
        let labKey = try LabKey.shared(.p256)
        let certificate = try CryptoTestKit.selfSigned(labKey, scheme: .ecdsa(.sha256))
        let other = try CryptoTestKit.selfSigned(try LabKey.shared(.p256, slot: 1), scheme: .ecdsa(.sha256))
        let directory = try CryptoTestKit.TemporaryDirectory()
        let keyPath = try directory.write(Array(try labKey.privateKeyPEM().utf8), named: "key.pem")
        let certificatePath = try directory.write(Array(certificate.pemString.utf8), named: "certificate.pem")
        let otherPath = try directory.write(Array(other.pemString.utf8), named: "other.pem")
        let outputPath = directory.path("out.p12")
        let result = try CryptoTestKit.openssl(
            ["pkcs12", "-export", "-passout", "pass:\(Self.password)", "-out", outputPath]
                + c.arguments(keyPath, certificatePath, otherPath)
        )
        try #require(result.status == 0, "\(result.output)")
        let pfx = try #require(FileManager.default.contents(atPath: outputPath).map { Array($0) })
        if let expected = c.expected {
            #expect(throws: KeyError(expected, "")) { try Identity(pkcs12: pfx, password: Self.password) }
        } else {
            let identity = try Identity(pkcs12: pfx, password: Self.password)
            #expect(identity.certificate == certificate)
            #expect(throws: KeyError(.wrongPassword, "")) { try Identity(pkcs12: pfx, password: "wrong") }
        }
    }

    // MARK: - PEM identities

    @Test("PEM: leaf first, the rest is the chain; encrypted keys need the password")
    func pem() throws {
        let pki = try LabPKI.webChain(host: "client.example.test", algorithm: .p384)
        let certificates = pki.leaf.pem + pki.intermediate.pem
        let identity = try Identity(certificatePEM: certificates, keyPEM: try pki.leafKey.privateKeyPEM())
        #expect(identity.certificate.derBytes == pki.leaf.der)
        #expect(identity.chain.map(\.derBytes) == [pki.intermediate.der])

        let encrypted = try pki.leafKey.encryptedPrivateKeyPEM(password: Self.password)
        #expect(
            try Identity(certificatePEM: certificates, keyPEM: encrypted, password: Self.password).privateKey
                .algorithmName == "EC"
        )
        #expect(throws: KeyError(.wrongPassword, "")) {
            try Identity(certificatePEM: certificates, keyPEM: encrypted, password: "no")
        }
    }

    @Test("PEM: a key that is not the leaf's is .keyMismatch; no certificate is .missingCertificate")
    func pemFailures() throws {
        let pki = try LabPKI.webChain(host: "client.example.test")
        #expect(throws: KeyError(.keyMismatch, "")) {
            try Identity(certificatePEM: pki.leaf.pem, keyPEM: try pki.intermediateKey.privateKeyPEM())
        }
        #expect(throws: KeyError(.missingCertificate, "")) {
            try Identity(certificatePEM: try pki.leafKey.privateKeyPEM(), keyPEM: try pki.leafKey.privateKeyPEM())
        }
        #expect(throws: KeyError(.malformed, "")) {
            try Identity(
                certificatePEM: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                keyPEM: try pki.leafKey.privateKeyPEM()
            )
        }
        #expect(throws: KeyError(.missingKey, "")) { try Identity(certificatePEM: pki.leaf.pem, keyPEM: pki.leaf.pem) }

        let leaf = try Certificate(derEncoded: pki.leaf.der)
        let wrongKey = try PrivateKey(pemEncoded: try pki.rootKey.privateKeyPEM())
        #expect(throws: KeyError(.keyMismatch, "")) { try Identity(certificate: leaf, privateKey: wrongKey) }
    }
}
