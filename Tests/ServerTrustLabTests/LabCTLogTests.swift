import Foundation
import ServerTrustLab
import Testing

// The Lab's CT log judged by OpenSSL: `openssl x509 -text` reads the extensions, OpenSSL's own
// SCT_validate checks the SCTs (LabCTOracle), and `openssl s_client -ct` receives and validates
// the SCTs the Lab's TLS server sends in the extension.

/// Lab CT fixtures: two operators' logs and a CA, keys from slots 610–619.
enum CTLabFixture {
    static func log(_ name: String, operator operatorName: String, slot: Int, algorithm: LabKeyAlgorithm = .p256) throws -> LabCTLog {
        try LabCTLog(name: name, operatorName: operatorName, key: LabKey.shared(algorithm, slot: slot))
    }

    static func pki() throws -> LabPKI { try LabPKI.webChain(host: "ct.example.test", keySlot: 205) }

    static func leafSpec(notBefore: Int64 = LabClock.reference - 10 * LabClock.day, notAfter: Int64 = LabClock.reference + 80 * LabClock.day)
        -> LabCertificateSpec
    {
        LabPKI.leafSpec(host: "ct.example.test", keyAlgorithm: .p256, notBefore: notBefore, notAfter: notAfter)
    }
}

@Suite("Lab CT log")
struct LabCTLogTests {
    @Test("the log ID is the SHA-256 of the key, and openssl prints the embedded SCTs and the poison")
    func extensionsAsOpenSSLReadsThem() throws {
        let pki = try CTLabFixture.pki()
        let alpha = try CTLabFixture.log("Lab 'Alpha'", operator: "Operator A", slot: 610)
        let beta = try CTLabFixture.log("Lab 'Beta'", operator: "Operator B", slot: 611, algorithm: .rsa(bits: 2048))
        #expect(alpha.logID == (try LabDigest.sha256.hash(alpha.key.publicKeyInfoDER)))
        let issued = try LabCertificate.issueWithEmbeddedSCTs(
            CTLabFixture.leafSpec(), subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, logs: [alpha, beta])
        let directory = try TemporaryDirectory()
        let final = try OpenSSLCLI.text(issued.certificate, in: directory)
        #expect(final.ok, "\(final)")
        #expect(LabServerClients.count("Signed Certificate Timestamp:", in: final.output) == 2, "\(final)")
        #expect(final.output.contains("ecdsa-with-SHA256") && final.output.contains("sha256WithRSAEncryption"), "\(final)")
        let precertificate = try OpenSSLCLI.text(issued.precertificate, in: directory)
        #expect(precertificate.output.contains("CT Precertificate Poison: critical"), "\(precertificate)")
    }

    @Test("OpenSSL's SCT_validate accepts the Lab's embedded and delivered SCTs, ECDSA and RSA, with and without a precertificate signer")
    func openSSLValidatesLabSCTs() throws {
        let pki = try CTLabFixture.pki()
        let logs = [
            try CTLabFixture.log("Lab 'Alpha'", operator: "Operator A", slot: 610),
            try CTLabFixture.log("Lab 'Beta'", operator: "Operator B", slot: 611, algorithm: .rsa(bits: 2048)),
        ]
        let keys = logs.map(\.key.publicKeyInfoDER)
        let signer = try pki.intermediateIssuer.precertificateSigningIssuer(key: LabKey.shared(.p256, slot: 612))
        let now = UInt64(LabClock.reference) * 1000
        for precertificateSigner in [nil, signer] {
            let issued = try LabCertificate.issueWithEmbeddedSCTs(
                CTLabFixture.leafSpec(), subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, logs: logs,
                precertificateSigner: precertificateSigner)
            for sct in issued.scts {
                let status = try LabCTOracle.validate(
                    sct: sct.serialized, embedded: true, certificate: issued.certificate.der, issuer: pki.intermediate.der, logKeys: keys, at: now)
                #expect(status == .valid, "\(precertificateSigner == nil ? "CA-signed" : "signer-signed") precertificate")
            }
        }
        let delivered = try logs[1].sign(.certificate(pki.leaf), timestamp: now - 5000)
        #expect(
            try LabCTOracle.validate(sct: delivered.serialized, embedded: false, certificate: pki.leaf.der, issuer: nil, logKeys: keys, at: now)
                == .valid)
        // The same SCTs, broken one way each, are refused by OpenSSL too.
        #expect(
            try LabCTOracle.validate(
                sct: delivered.withCorruptedSignature.serialized, embedded: false, certificate: pki.leaf.der, issuer: nil, logKeys: keys, at: now)
                == .invalid)
        #expect(
            try LabCTOracle.validate(sct: delivered.serialized, embedded: false, certificate: pki.leaf.der, issuer: nil, logKeys: [keys[0]], at: now)
                == .unknownLog)
        #expect(
            try LabCTOracle.validate(sct: delivered.serialized, embedded: false, certificate: pki.leaf.der, issuer: nil, logKeys: keys, at: now - 6000)
                == .invalid)
    }

    @Test("the v3 list names every log under its operator, tiled logs apart, with states and shards; Apple's shape has no timestamp")
    func logListJSON() throws {
        var alpha = try CTLabFixture.log("Lab 'Alpha'", operator: "Operator A", slot: 610)
        alpha.temporalInterval = LabClock.reference..<(LabClock.reference + LabClock.year)
        let tiled = try LabCTLog(
            name: "Lab 'Tiles'", operatorName: "Operator A", key: LabKey.shared(.p256, slot: 613), state: .readOnly, isTiled: true)
        let beta = try CTLabFixture.log("Lab 'Beta'", operator: "Operator B", slot: 611).with(state: .retired, since: LabClock.reference)
        let list = LabCTLogList(logs: [alpha, tiled, beta])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(list.json())) as? [String: Any])
        #expect(object["log_list_timestamp"] as? String == "2025-12-31T00:00:00Z")
        let operators = try #require(object["operators"] as? [[String: Any]])
        #expect(operators.map { $0["name"] as? String } == ["Operator A", "Operator B"])
        let logs = try #require(operators[0]["logs"] as? [[String: Any]])
        let tiledLogs = try #require(operators[0]["tiled_logs"] as? [[String: Any]])
        #expect(logs.map { $0["description"] as? String } == ["Lab 'Alpha'"])
        #expect(tiledLogs.first?["submission_url"] is String && tiledLogs.first?["url"] == nil)
        #expect(logs.first?["log_id"] as? String == Data(alpha.logID).base64EncodedString())
        let interval = try #require(logs.first?["temporal_interval"] as? [String: String])
        #expect(interval == ["start_inclusive": "2026-01-01T00:00:00Z", "end_exclusive": "2027-01-01T00:00:00Z"])
        let readOnly = try #require((tiledLogs.first?["state"] as? [String: Any])?["readonly"] as? [String: Any])
        #expect(readOnly["final_tree_head"] != nil)
        let apple = try #require(try JSONSerialization.jsonObject(with: Data(list.json(format: .apple))) as? [String: Any])
        #expect(apple["log_list_timestamp"] == nil && apple["assetVersion"] != nil)
    }
}

@Suite("Lab TLS server: SCTs in the TLS extension")
struct LabTLSServerSCTTests {
    @Test("openssl s_client -ct receives the SCT list and validates it", arguments: [LabTLSVersion.tls1_2, .tls1_3])
    func servesSCTs(version: LabTLSVersion) async throws {
        let host = "ct.example.test"
        let pki = try LabServerClients.currentPKI(host: host, keySlot: 22)
        let log = try CTLabFixture.log("Lab 'Alpha'", operator: "Operator A", slot: 610)
        let sct = try log.sign(.certificate(pki.leaf), timestamp: UInt64(LabServerClients.now - 60) * 1000)
        let directory = try TemporaryDirectory()
        let root = try directory.write(pki.root.pem, named: "root.pem")
        let logFile = try directory.write(
            "enabled_logs = alpha\n[alpha]\ndescription = Lab Alpha\nkey = \(Data(log.key.publicKeyInfoDER).base64EncodedString())\n",
            named: "ctlogs.cnf")
        var configuration = LabTLSServer.Configuration(
            identity: .init(chain: pki.serverChain, key: pki.leafKey, signedCertificateTimestamps: LabSCT.list([sct])), name: host)
        configuration.minimumTLSVersion = version
        configuration.maximumTLSVersion = version
        let server = try LabTLSServer.started(configuration)
        defer { server.stop() }
        let result = try await LabServerClients.sClient(
            ["-connect", "127.0.0.1:\(server.port)", "-servername", host, "-CAfile", root, "-ct", "-ctlogfile", logFile], input: "")
        #expect(result.output.contains("SCTs present (1)"), "\(result)")
        #expect(result.output.contains("SCT validation status: valid"), "\(result)")
        #expect(result.output.contains("Lab Alpha"), "\(result)")
        // A client that does not ask for SCTs gets none (OpenSSL answers only offered extensions).
        let plain = try await LabServerClients.sClient(
            ["-connect", "127.0.0.1:\(server.port)", "-servername", host, "-CAfile", root, "-noct"], input: "")
        #expect(!plain.output.contains("SCTs present"), "\(plain)")
    }

    @Test("SCTs cannot be combined with SNI identities")
    func refusesSCTsWithSNI() throws {
        let pki = try LabServerClients.currentPKI(host: "a.example.test", keySlot: 22)
        var configuration = LabTLSServer.Configuration(identity: .init(chain: pki.serverChain, key: pki.leafKey, signedCertificateTimestamps: [0, 1, 0]))
        configuration.serverNameIdentities = ["b.example.test": .init(pki: pki)]
        #expect(throws: LabError.self) { try LabTLSServer(configuration) }
    }
}
