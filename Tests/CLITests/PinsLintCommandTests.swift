import CertificateParsing
import Foundation
import ServerTrustLab
import Testing

/// `servertrust pins lint POLICY [--chain CHAIN.pem] [--json]`, run as a user runs it: each rule
/// is flagged on a fixture made for it, with its level, the pin and a fix; `--json` is for CI;
/// exit 1 exactly when an error-level rule fires (key slots 400-409).
@Suite("servertrust pins lint")
struct PinsLintCommandTests {
    static let host = "www.lint.test"
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }
    static let day: Int64 = 86_400
    static let sparePin = "sha256/IKOvAC5GbNlBN8FCd8u8d3I4riNIMX5c7w5L/wR+ytQ="

    /// A cross-signed hierarchy (intermediate I under new root B and, same key, under old root
    /// A; B also cross-signed by A) and a chain named like Let's Encrypt's, valid today, written
    /// to files.
    struct Fixture {
        let directory: String
        let oldRoot: LabCertificate
        let newRoot: LabCertificate
        let intermediateByNew: LabCertificate
        let intermediateByOld: LabCertificate
        let newRootByOld: LabCertificate
        let leaf: LabCertificate
        let leafUnderNewRoot: LabCertificate
        let rotatingRoot: LabCertificate
        let rotatingIntermediate: LabCertificate
        let rotatingLeaf: LabCertificate

        init() throws {
            let now = PinsLintCommandTests.now
            directory = try CLIRunner.temporaryDirectory()
            func key(_ slot: Int) throws -> LabKey { try LabKey.shared(.p256, slot: slot) }
            func root(_ name: String, _ organization: String, _ key: LabKey) throws -> LabCertificate {
                try LabCertificate.issue(
                    LabCertificateSpec(
                        subject: LabName([("O", organization), ("CN", name)]), notBefore: now - LabClock.year, notAfter: now + 10 * LabClock.year,
                        extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]),
                    subjectKey: key)
            }
            func ca(_ name: String, _ organization: String, days: Int64 = 900, pathLength: Int? = 0) -> LabCertificateSpec {
                LabCertificateSpec(
                    subject: LabName([("O", organization), ("CN", name)]), notBefore: now - 30 * LabClock.day, notAfter: now + days * LabClock.day,
                    extensions: [
                        .basicConstraints(ca: true, pathLength: pathLength), .keyUsage([.digitalSignature, .keyCertSign, .cRLSign]),
                        .subjectKeyIdentifier(), .authorityKeyIdentifier(),
                    ])
            }
            let (oldKey, newKey, intermediateKey, leafKey) = (try key(400), try key(401), try key(402), try key(403))
            oldRoot = try root("Lint Old Root A", "Lint Lab", oldKey)
            newRoot = try root("Lint New Root B", "Lint Lab", newKey)
            let oldIssuer = LabIssuer(certificate: oldRoot, key: oldKey)
            let newIssuer = LabIssuer(certificate: newRoot, key: newKey)
            intermediateByNew = try LabCertificate.issue(ca("Lint Issuing CA", "Lint Lab"), subjectKey: intermediateKey, issuer: newIssuer)
            intermediateByOld = try LabCertificate.issue(ca("Lint Issuing CA", "Lint Lab"), subjectKey: intermediateKey, issuer: oldIssuer)
            newRootByOld = try LabCertificate.issue(ca("Lint New Root B", "Lint Lab", pathLength: nil), subjectKey: newKey, issuer: oldIssuer)
            let leafSpec = LabPKI.leafSpec(
                host: PinsLintCommandTests.host, keyAlgorithm: .p256, notBefore: now - LabClock.day, notAfter: now + 40 * LabClock.day)
            leaf = try LabCertificate.issue(leafSpec, subjectKey: leafKey, issuer: LabIssuer(certificate: intermediateByNew, key: intermediateKey))
            leafUnderNewRoot = try LabCertificate.issue(leafSpec, subjectKey: leafKey, issuer: newIssuer)
            let rotatingKey = try key(404)
            rotatingRoot = try root("ISRG Root X1 (lint lab)", "Internet Security Research Group", rotatingKey)
            rotatingIntermediate = try LabCertificate.issue(
                ca("R11 (lint lab)", "Let's Encrypt", days: 100), subjectKey: try key(405), issuer: LabIssuer(certificate: rotatingRoot, key: rotatingKey))
            rotatingLeaf = try LabCertificate.issue(leafSpec, subjectKey: leafKey, issuer: LabIssuer(certificate: rotatingIntermediate, key: try key(405)))
        }

        func write(_ certificates: [LabCertificate], _ name: String) throws -> String {
            try LabFiles.writeBundle(certificates, to: directory + "/" + name)
        }

        /// A policy pinning `pins` for the host (with `scope`, as objects), expiring at `expiry`.
        func policy(_ pins: [String], scope: String? = nil, expiry: Int64? = nil) throws -> String {
            let list = pins.map { pin in scope.map { "{\"pin\": \"\(pin)\", \"scope\": \"\($0)\"}" } ?? "\"\(pin)\"" }.joined(separator: ", ")
            let expiration = expiry.map { ", \"expirationDate\": \"\(ASN1Time(secondsSince1970: $0).rfc3339)\"" } ?? ""
            let text = #"{"version": 1, "hosts": [{"host": "\#(PinsLintCommandTests.host)", "pins": [\#(list)]\#(expiration)}]}"#
            return try LabFiles.write(text, to: directory + "/policy-\(UUID().uuidString).json")
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    static func pin(_ certificate: LabCertificate) throws -> String { "sha256/" + (try Certificate(derEncoded: certificate.der)).spkiSHA256Base64 }

    /// A rule, the arguments that show it (made from a fixture) and the level expected.
    struct Case: Sendable, CustomTestStringConvertible {
        let rule: String
        let level: String
        let arguments: @Sendable (Fixture) throws -> [String]
        var testDescription: String { "\(rule) (\(level))" }
    }

    static let cases: [Case] = [
        Case(rule: "leafOnly", level: "error") { f in
            // ATS-style leaf identities: the leaf's key and a spare leaf key.
            [try f.policy([try pin(f.leaf), PinsLintCommandTests.sparePin], scope: "leaf"), "--chain", try f.write([f.leaf, f.intermediateByNew], "c.pem")]
        },
        Case(rule: "noSpareKey", level: "warning") { f in
            [try f.policy([try pin(f.oldRoot), try pin(f.newRoot)]), "--chain", try f.write([f.leaf, f.intermediateByNew, f.intermediateByOld], "c.pem")]
        },
        Case(rule: "singleIntermediate", level: "error") { f in
            [
                try f.policy([try pin(f.rotatingIntermediate), PinsLintCommandTests.sparePin]), "--chain",
                try f.write([f.rotatingLeaf, f.rotatingIntermediate], "c.pem"),
                "--cacert", try f.write([f.rotatingRoot], "rotating-root.pem"),
            ]
        },
        Case(rule: "certificatesExpireFirst", level: "warning") { f in
            [
                try f.policy(
                    [try pin(f.rotatingIntermediate), PinsLintCommandTests.sparePin], expiry: PinsLintCommandTests.now + 200 * PinsLintCommandTests.day),
                "--chain", try f.write([f.rotatingLeaf, f.rotatingIntermediate], "c.pem"), "--cacert", try f.write([f.rotatingRoot], "rotating-root.pem"),
            ]
        },
        Case(rule: "crossSignedSuccessorNotPinned", level: "warning") { f in
            [try f.policy([try pin(f.oldRoot), PinsLintCommandTests.sparePin]), "--chain", try f.write([f.leafUnderNewRoot, f.newRootByOld], "c.pem")]
        },
        Case(rule: "expiryPassed", level: "error") { f in
            [
                try f.policy(
                    [try pin(f.oldRoot), try pin(f.newRoot), PinsLintCommandTests.sparePin], expiry: PinsLintCommandTests.now - PinsLintCommandTests.day)
            ]
        },
        Case(rule: "expiryTooFar", level: "warning") { f in
            [
                try f.policy(
                    [try pin(f.oldRoot), try pin(f.newRoot), PinsLintCommandTests.sparePin], expiry: PinsLintCommandTests.now + 500 * PinsLintCommandTests.day)
            ]
        },
        Case(rule: "noMatchToday", level: "error") { f in
            [try f.policy([try pin(f.rotatingRoot), PinsLintCommandTests.sparePin]), "--chain", try f.write([f.leaf, f.intermediateByNew], "c.pem")]
        },
        Case(rule: "chainNotValid", level: "warning") { f in
            [
                try f.policy([try pin(f.oldRoot), PinsLintCommandTests.sparePin]), "--chain", try f.write([f.leaf, f.intermediateByNew], "c.pem"),
                "--cacert", try f.write([f.rotatingRoot], "rotating-root.pem"),
            ]
        },
        Case(rule: "chainNotCovered", level: "warning") { f in
            [try f.policy([try pin(f.oldRoot), PinsLintCommandTests.sparePin]), "--chain", try f.write([f.rotatingIntermediate], "c.pem")]
        },
    ]

    @Test("each rule is flagged on its fixture, with its level, the pin set and a fix; exit 1 exactly on an error", arguments: cases)
    func rule(_ shape: Case) async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let roots = try fixture.write([fixture.oldRoot, fixture.newRoot], "roots.pem")
        var arguments = try shape.arguments(fixture)
        if !arguments.contains("--cacert") { arguments += ["--cacert", roots] }
        let result = try await CLIRunner.run(["pins", "lint"] + arguments + ["--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout) \(result.stderr)")
        let findings = try #require(document["findings"] as? [[String: Any]])
        let finding = try #require(findings.first { $0["rule"] as? String == shape.rule }, "\(findings)")
        #expect(finding["level"] as? String == shape.level)
        #expect((finding["fix"] as? String)?.isEmpty == false)
        #expect(finding["hosts"] as? String == (shape.rule == "chainNotCovered" ? "*" : Self.host))
        let errors = findings.filter { $0["level"] as? String == "error" }.count
        #expect(document["errors"] as? Int == errors)
        #expect(result.status == (errors > 0 ? 1 : 0), "\(result.stderr)")
        // The same finding in the human form, on one line with its fix below.
        let human = try await CLIRunner.run(["pins", "lint"] + arguments)
        #expect(human.status == result.status)
        #expect(human.stdout.contains("\(shape.level): \(shape.rule): "), "\(human.stdout)")
        #expect(human.stdout.contains("  fix: "))
    }

    @Test("a sound policy: no findings, exit 0; bad input exits 2 with one line")
    func soundAndBadInput() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let roots = try fixture.write([fixture.oldRoot, fixture.newRoot], "roots.pem")
        let policy = try fixture.policy([try Self.pin(fixture.oldRoot), try Self.pin(fixture.newRoot), Self.sparePin], expiry: Self.now + 180 * Self.day)
        let chain = try fixture.write([fixture.leaf, fixture.intermediateByNew, fixture.intermediateByOld], "chain.pem")
        let sound = try await CLIRunner.run(["pins", "lint", policy, "--chain", chain, "--cacert", roots])
        #expect(sound.status == 0, "\(sound.stdout) \(sound.stderr)")
        #expect(sound.stdout.hasSuffix("\(policy): no findings\n"), "\(sound.stdout)")
        for arguments in [
            ["pins", "lint"], ["pins", "lint", fixture.directory + "/absent.json"], ["pins", "lint", chain], ["pins", "lint", policy, "--chain", policy],
            ["pins", "lint", policy, "--bogus"],
        ] {
            let result = try await CLIRunner.run(arguments, environment: ["SSL_CERT_FILE": roots])
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.hasPrefix("servertrust: pins: "), "\(arguments): \(result.stderr)")
        }
    }
}
