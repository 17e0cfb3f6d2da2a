import CertificateParsing
import Foundation
import ServerTrustLab
import Testing

/// `servertrust pins check https://HOST --policy FILE` and `servertrust pins https://HOST`
/// against a real nginx serving a cross-signed chain (the leaf, the intermediate under new root
/// B, and the same intermediate key cross-signed by old root A; both roots trusted): every valid
/// path is built, each pin is reported matching (or not) on its path, with what a renewal of
/// the leaf on a new key would do; the proposal pins both roots (key slots 420-424).
@Suite("servertrust pins check and pins https://HOST against nginx", .enabled(if: IntegrationTools.nginxSuiteEnabled))
struct PinsCheckLiveTests {
    static let host = "www.crosscheck.test"
    static let sparePin = "sha256/IKOvAC5GbNlBN8FCd8u8d3I4riNIMX5c7w5L/wR+ytQ="

    final class Fixture: Sendable {
        let directory: String
        let nginx: NginxInstance
        let oldRoot: LabCertificate
        let newRoot: LabCertificate
        let intermediate: LabCertificate
        let leaf: LabCertificate
        let roots: String

        init() throws {
            let now = Int64(Date().timeIntervalSince1970)
            let directory = NSTemporaryDirectory() + "servertrust-pins-check-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            self.directory = directory
            func key(_ slot: Int) throws -> LabKey { try LabKey.shared(.p256, slot: slot) }
            func root(_ name: String, _ key: LabKey) throws -> LabCertificate {
                try LabCertificate.issue(
                    LabCertificateSpec(
                        subject: LabName([("O", "Check Lab"), ("CN", name)]), notBefore: now - LabClock.year, notAfter: now + 10 * LabClock.year,
                        extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]),
                    subjectKey: key)
            }
            let caSpec = LabCertificateSpec(
                subject: LabName([("O", "Check Lab"), ("CN", "Check Issuing CA")]), notBefore: now - 30 * LabClock.day, notAfter: now + 900 * LabClock.day,
                extensions: [
                    .basicConstraints(ca: true, pathLength: 0), .keyUsage([.digitalSignature, .keyCertSign, .cRLSign]), .subjectKeyIdentifier(),
                    .authorityKeyIdentifier(),
                ])
            let (oldKey, newKey, intermediateKey, leafKey) = (try key(420), try key(421), try key(422), try key(423))
            oldRoot = try root("Check Old Root A", oldKey)
            newRoot = try root("Check New Root B", newKey)
            intermediate = try LabCertificate.issue(caSpec, subjectKey: intermediateKey, issuer: LabIssuer(certificate: newRoot, key: newKey))
            let crossSigned = try LabCertificate.issue(caSpec, subjectKey: intermediateKey, issuer: LabIssuer(certificate: oldRoot, key: oldKey))
            leaf = try LabCertificate.issue(
                LabPKI.leafSpec(host: PinsCheckLiveTests.host, keyAlgorithm: .p256, notBefore: now - LabClock.day, notAfter: now + 40 * LabClock.day),
                subjectKey: leafKey, issuer: LabIssuer(certificate: intermediate, key: intermediateKey))
            let chain = try LabFiles.writeBundle([leaf, intermediate, crossSigned], to: directory + "/chain.pem")
            let keyPath = try LabFiles.write(try leafKey.privateKeyPEM(), to: directory + "/leaf.key")
            roots = try LabFiles.writeBundle([oldRoot, newRoot], to: directory + "/roots.pem")
            nginx = try NginxInstance.start(prefix: directory, portCount: 1) { ports in
                """
                    server {
                        listen 127.0.0.1:\(ports[0]) ssl;
                        server_name \(PinsCheckLiveTests.host);
                        ssl_certificate \(chain);
                        ssl_certificate_key \(keyPath);
                        location / { return 200 "ok\\n"; }
                    }

                """
            }
        }

        var url: String { "https://\(PinsCheckLiveTests.host):\(nginx.ports[0])" }
        var resolve: [String] { ["--resolve", "\(PinsCheckLiveTests.host):\(nginx.ports[0]):127.0.0.1"] }

        func policy(_ pins: [String], name: String) throws -> String {
            let list = pins.map { "\"\($0)\"" }.joined(separator: ", ")
            return try LabFiles.write(#"{"version": 1, "hosts": [{"host": "\#(PinsCheckLiveTests.host)", "pins": [\#(list)]}]}"#, to: directory + "/" + name)
        }

        func check(_ policy: String, json: Bool = false) async throws -> ServertrustCLI.Result {
            try await ServertrustCLI.run(["pins", "check", url, "--policy", policy, "--cacert", roots] + resolve + (json ? ["--json"] : []))
        }

        func stop() {
            nginx.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func pin(_ certificate: LabCertificate) throws -> String { "sha256/" + (try Certificate(derEncoded: certificate.der)).spkiSHA256Base64 }

    @Test("a pin on the old root matches on the path through the cross-sign, and survives a leaf renewal")
    func rootPin() async throws {
        let fixture = try await offPool { try Fixture() }
        defer { fixture.stop() }
        let policy = try fixture.policy([try Self.pin(fixture.oldRoot), Self.sparePin], name: "old-root.json")
        let result = try await fixture.check(policy)
        #expect(result.status == 0, "\(result)")
        let out = result.stdout
        #expect(out.contains("Valid paths (2):"), "\(out)")
        #expect(out.contains("\(try Self.pin(fixture.oldRoot)) [any, SPKI pins]: matches now: path "), "\(out)")
        #expect(out.contains("position 2 (CN=Check Old Root A,O=Check Lab)"), "\(out)")
        #expect(out.contains("\(Self.sparePin) [any, SPKI pins]: no match now"), "\(out)")
        #expect(out.contains("leaf renewed with a new key tomorrow: still satisfied"), "\(out)")
        #expect(out.contains("Decision with this policy: trusted"), "\(out)")
        // The lint of these pins against this chain: the new root is a valid path too, unpinned.
        #expect(out.contains("warning: crossSignedSuccessorNotPinned"), "\(out)")

        let json = try await fixture.check(policy, json: true)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json)")
        #expect((document["paths"] as? [[String]])?.count == 2)
        let pins = try #require(document["pins"] as? [[String: Any]])
        let matches = try #require(pins.first?["matches"] as? [[String: Any]])
        #expect(matches.count == 1 && matches[0]["position"] as? Int == 2, "\(matches)")
        let sets = try #require(document["pinSets"] as? [[String: Any]])
        #expect(sets.first?["afterLeafRenewal"] as? Bool == true)
        #expect((document["decision"] as? [String: Any])?["trusted"] as? Bool == true)
    }

    @Test("a leaf pin matches today and is reported to fail at the next renewal with a new key; wrong pins are refused")
    func leafAndWrongPins() async throws {
        let fixture = try await offPool { try Fixture() }
        defer { fixture.stop() }
        let leafPolicy = try fixture.policy([try Self.pin(fixture.leaf), Self.sparePin], name: "leaf.json")
        let leaf = try await fixture.check(leafPolicy)
        #expect(leaf.status == 0, "\(leaf)")
        #expect(leaf.stdout.contains("matches now: path 1 position 0"), "\(leaf.stdout)")
        #expect(leaf.stdout.contains("leaf renewed with a new key tomorrow: REFUSED"), "\(leaf.stdout)")
        #expect(leaf.stdout.contains("error: leafOnly") || leaf.stdout.contains("warning: leafOnly"), "\(leaf.stdout)")

        let wrongPolicy = try fixture.policy([Self.sparePin, "sha256/" + String(repeating: "A", count: 43) + "="], name: "wrong.json")
        let wrong = try await fixture.check(wrongPolicy)
        #expect(wrong.status == 1, "\(wrong)")
        #expect(wrong.stdout.contains("NO valid path carries them now: the server is refused"), "\(wrong.stdout)")
        #expect(wrong.stdout.contains("Decision with this policy: refused"), "\(wrong.stdout)")
    }

    @Test("pins https://HOST proposes both roots of the cross-sign, and the intermediate, not the leaf")
    func proposal() async throws {
        let fixture = try await offPool { try Fixture() }
        defer { fixture.stop() }
        let result = try await ServertrustCLI.run(
            ["pins", fixture.url] + fixture.resolve + ["--format", "json"],
            environment: ["SSL_CERT_FILE": fixture.roots, "SSL_CERT_DIR": fixture.directory + "/no-such-dir"])
        #expect(result.status == 0, "\(result)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
        let entry = try #require((document["hosts"] as? [[String: Any]])?.first)
        let pins = try #require(entry["pins"] as? [String])
        #expect(Set(pins) == Set([try Self.pin(fixture.oldRoot), try Self.pin(fixture.newRoot), try Self.pin(fixture.intermediate)]), "\(pins)")
        #expect(!pins.contains(try Self.pin(fixture.leaf)))
        #expect(result.stderr.contains("no pin is a true spare"), "\(result.stderr)")
        // What it proposes passes its own health check.
        let policy = try LabFiles.write(result.stdout, to: fixture.directory + "/proposed.json")
        let check = try await fixture.check(policy)
        #expect(check.status == 0, "\(check)")
        #expect(check.stdout.contains("and issued from another intermediate: still satisfied"), "\(check.stdout)")
    }
}
