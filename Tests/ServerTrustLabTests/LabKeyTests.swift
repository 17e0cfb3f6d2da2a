import ServerTrustLab
import Testing

/// Key generation, the process-wide cache, and every private-key encoding, judged by `openssl pkey`.
@Suite struct LabKeyTests {
    @Test(arguments: LabKeyAlgorithm.common)
    func publicKeyInfoParsesWithOpenSSL(algorithm: LabKeyAlgorithm) throws {
        let directory = try TemporaryDirectory()
        let key = try LabKey.shared(algorithm)
        #expect(key.algorithm == algorithm)
        #expect(key.subjectKeyIdentifier.count == 20)
        let path = try directory.write(key.publicKeyInfoDER, named: "spki.der")
        let result = try OpenSSLCLI.run(["pkey", "-pubin", "-inform", "DER", "-in", path, "-noout", "-text"])
        #expect(result.ok, "\(result)")
        let expected: String
        switch algorithm {
        case .rsa(let bits): expected = "Public-Key: (\(bits) bit)"
        case .p256: expected = "NIST CURVE: P-256"
        case .p384: expected = "NIST CURVE: P-384"
        case .p521: expected = "NIST CURVE: P-521"
        case .ed25519: expected = "ED25519 Public-Key"
        case .ed448: expected = "ED448 Public-Key"
        }
        #expect(result.output.contains(expected), "\(result.output)")
    }

    @Test(arguments: LabKeyAlgorithm.common)
    func pkcs8PrivateKeysLoad(algorithm: LabKeyAlgorithm) throws {
        let directory = try TemporaryDirectory()
        let key = try LabKey.shared(algorithm)
        let pem = try key.privateKeyPEM(format: .pkcs8)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let pemPath = try directory.write(pem, named: "key.pem")
        let derPath = try directory.write(try key.privateKeyDER(format: .pkcs8), named: "key.der")
        for (path, form) in [(pemPath, "PEM"), (derPath, "DER")] {
            // The public key openssl derives from the private key must be ours.
            let result = try OpenSSLCLI.run(["pkey", "-inform", form, "-in", path, "-pubout"])
            #expect(result.ok, "\(result)")
            #expect(try LabPEM.decode(result.output).first?.der == key.publicKeyInfoDER)
        }
    }

    /// OpenSSL 3.0's PKCS#8 encoder briefly changes an EC key's encoding flags, so concurrent
    /// encodings of one key must be serialised (`LabKey.encodingPrivateKey`). Without that, some
    /// SEC 1 encodings lose their curve parameters, and on this machine the test process
    /// aborts inside libcrypto within a few hundred iterations; with it, every encoding of each
    /// form is byte-identical (both are deterministic).
    @Test func concurrentPrivateKeyEncodingsOfOneKeyAgree() async throws {
        let key = try LabKey(.p256)
        let traditional = try key.privateKeyDER(format: .traditional)
        let pkcs8 = try key.privateKeyDER(format: .pkcs8)
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var mismatches = 0
                    for _ in 0..<400 {
                        if worker % 2 == 0 {
                            if try key.privateKeyDER(format: .traditional) != traditional { mismatches += 1 }
                        } else {
                            if try key.privateKeyDER(format: .pkcs8) != pkcs8 { mismatches += 1 }
                        }
                    }
                    return mismatches
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    @Test(arguments: [(LabKeyAlgorithm.rsa(bits: 2048), "RSA PRIVATE KEY"), (.p256, "EC PRIVATE KEY"), (.p384, "EC PRIVATE KEY")])
    func traditionalPrivateKeysUseLegacyLabels(algorithm: LabKeyAlgorithm, label: String) throws {
        let directory = try TemporaryDirectory()
        let key = try LabKey.shared(algorithm)
        let pem = try key.privateKeyPEM(format: .traditional)
        #expect(pem.hasPrefix("-----BEGIN \(label)-----\n"), "\(pem.prefix(40))")
        let path = try directory.write(pem, named: "key.pem")
        let derived = try LabPEM.decode(try OpenSSLCLI.run(["pkey", "-in", path, "-pubout"]).output)
        #expect(derived.first?.der == key.publicKeyInfoDER)
        // The traditional DER is the PEM body, and is not PKCS#8.
        let der = try key.privateKeyDER(format: .traditional)
        #expect(try LabPEM.decode(pem).first?.der == der)
        #expect(der != (try key.privateKeyDER(format: .pkcs8)))
        let derPath = try directory.write(der, named: "key.der")
        #expect(try OpenSSLCLI.run(["pkey", "-inform", "DER", "-in", derPath, "-noout"]).ok)
    }

    @Test(arguments: [LabKeyAlgorithm.ed25519, .ed448])
    func edwardsKeysHaveNoTraditionalForm(algorithm: LabKeyAlgorithm) throws {
        let key = try LabKey.shared(algorithm)
        #expect(throws: LabError.self) { try key.privateKeyPEM(format: .traditional) }
        #expect(throws: LabError.self) { try key.privateKeyDER(format: .traditional) }
    }

    @Test(arguments: [LabKeyAlgorithm.rsa(bits: 2048), .p256, .ed25519])
    func encryptedPrivateKeyNeedsThePassword(algorithm: LabKeyAlgorithm) throws {
        let directory = try TemporaryDirectory()
        let key = try LabKey.shared(algorithm)
        let pem = try key.encryptedPrivateKeyPEM(password: "correct horse")
        #expect(pem.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"))
        let path = try directory.write(pem, named: "key.pem")
        #expect(try OpenSSLCLI.run(["pkey", "-in", path, "-passin", "pass:correct horse", "-noout"]).ok)
        #expect(!(try OpenSSLCLI.run(["pkey", "-in", path, "-passin", "pass:wrong", "-noout"]).ok))
    }

    @Test func cacheReusesPerSlotAndSeparatesSlots() throws {
        let first = try LabKey.shared(.p256, slot: 7)
        let again = try LabKey.shared(.p256, slot: 7)
        let other = try LabKey.shared(.p256, slot: 8)
        #expect(first === again)
        #expect(first != other)
        #expect(try LabKey(.p256) != first)
    }

    @Test func cacheIsSafeUnderConcurrentFirstUse() async throws {
        let keys = try await withThrowingTaskGroup(of: LabKey.self) { group in
            for _ in 0..<16 { group.addTask { try LabKey.shared(.ed25519, slot: 99) } }
            return try await group.reduce(into: [LabKey]()) { $0.append($1) }
        }
        #expect(keys.allSatisfy { $0 === keys[0] })
    }

    @Test func subjectKeyIdentifierMatchesOpenSSLHash() throws {
        // `openssl req -x509` writes subjectKeyIdentifier=hash by default, RFC 5280 method (1).
        let directory = try TemporaryDirectory()
        let key = try LabKey.shared(.p256)
        let keyPath = try directory.write(try key.privateKeyPEM(), named: "key.pem")
        let certPath = directory.path + "/req.der"
        let result = try OpenSSLCLI.run([
            "req", "-x509", "-new", "-key", keyPath, "-subj", "/CN=ski", "-days", "1",
            "-outform", "DER", "-out", certPath,
        ])
        #expect(result.ok, "\(result)")
        let der = try #require(FileBytes.read(certPath))
        let certificate = try LabCertificate(der: der)
        #expect(certificate.subjectKeyIdentifier == key.subjectKeyIdentifier)
    }

    @Test func invalidRSASizeThrowsTypedError() {
        #expect(throws: LabError.self) { try LabKey(.rsa(bits: 64)) }
        do {
            _ = try LabKey(.rsa(bits: 64))
        } catch let error as LabError {
            #expect(error.operation.contains("EVP_PKEY"), "\(error)")
            #expect(!error.openSSLErrors.isEmpty, "\(error)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}
