import CertificateParsing
import Foundation
import ServerTrustLab
import Testing

/// `servertrust evaluate`, run as a user runs it: generated chains on disk, a generated
/// SSL_CERT_FILE as the system roots, the fixed instant LabClock.reference via `--at`.
@Suite("servertrust evaluate")
struct EvaluateCommandTests {
    static let host = "api.example.test"
    static let at = "2026-01-01T00:00:00Z"

    /// Files shared by the tests (generated once; key slots 225-232 belong to this suite).
    struct Files: Sendable {
        let directory: String
        let chain: String
        let otherHostChain: String
        let expiredChain: String
        let intercepted: String
        let root: String
        let interceptionRoot: String
        let system: String
        let leafPin: String
        let rootPin: String
        let backupPin: String
        /// The genuine intermediate alone, and its pin.
        let intermediate: String
        let intermediatePin: String
        /// An attacker's self-signed leaf followed by the genuine intermediate and root.
        let attackerAppended: String
        /// The interception proxy's leaf followed by the genuine intermediate.
        let interceptedAppended: String
    }

    static let files: Files = {
        do { return try makeFiles() } catch { fatalError("fixture generation failed: \(error)") }
    }()

    static func makeFiles() throws -> Files {
        let pki = try LabPKI.webChain(host: host, algorithm: .p256, keySlot: 75)
        let other = try pki.issueLeaf(host: "other.example.test", key: LabKey.shared(.p256, slot: 228))
        let expired = try pki.issueLeaf(
            host: host, key: LabKey.shared(.p256, slot: 229), notBefore: LabClock.reference - 400 * LabClock.day,
            notAfter: LabClock.reference - 30 * LabClock.day)
        let proxyKey = try LabKey.shared(.p256, slot: 230)
        let proxyRoot = try LabCertificate.issue(
            LabCertificateSpec(
                subject: LabName([("CN", "Charles Proxy CA")]), extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign]), .subjectKeyIdentifier()]),
            subjectKey: proxyKey)
        let proxyLeaf = try LabCertificate.issue(
            LabPKI.leafSpec(host: host, keyAlgorithm: .p256), subjectKey: LabKey.shared(.p256, slot: 231),
            issuer: LabIssuer(certificate: proxyRoot, key: proxyKey))
        let attacker = try LabCertificate.issue(LabPKI.leafSpec(host: host, keyAlgorithm: .p256), subjectKey: LabKey.shared(.p256, slot: 232))
        let directory = try CLIRunner.temporaryDirectory()
        func write(_ name: String, _ certificates: [LabCertificate]) throws -> String {
            let path = directory + "/" + name
            try LabPEM.bundle(certificates).write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        func pin(_ certificate: LabCertificate) throws -> String { "sha256/" + (try Certificate(derEncoded: certificate.der)).spkiSHA256Base64 }
        return Files(
            directory: directory,
            chain: try write("chain.pem", pki.serverChain),
            otherHostChain: try write("other.pem", [other, pki.intermediate]),
            expiredChain: try write("expired.pem", [expired, pki.intermediate]),
            intercepted: try write("intercepted.pem", [proxyLeaf]),
            root: try write("root.pem", [pki.root]),
            interceptionRoot: try write("proxy-root.pem", [proxyRoot]),
            system: try write("ca-certificates.crt", [pki.root]),
            leafPin: try pin(pki.leaf),
            rootPin: try pin(pki.root),
            backupPin: "sha256/" + Base64.encode(SHA256.hash(try LabKey.shared(.p256, slot: 219).publicKeyInfoDER)),
            intermediate: try write("intermediate.pem", [pki.intermediate]),
            intermediatePin: try pin(pki.intermediate),
            attackerAppended: try write("attacker-appended.pem", [attacker, pki.intermediate, pki.root]),
            interceptedAppended: try write("intercepted-appended.pem", [proxyLeaf, pki.intermediate]))
    }

    /// Runs `servertrust evaluate` with the generated system roots, at LabClock.reference
    /// unless the arguments give `--at`.
    static func evaluate(_ arguments: [String], system: String? = nil) async throws -> CLIRunner.Result {
        let instant = arguments.contains("--at") ? [] : ["--at", at]
        return try await CLIRunner.run(
            ["evaluate"] + arguments + instant, environment: ["SSL_CERT_FILE": system ?? files.system, "SSL_CERT_DIR": files.directory + "/no-such-dir"])
    }

    @Test("an attacker appending the genuine pinned intermediate is rejected by every pin option, the genuine chain trusted")
    func appendedPinsRejected() async throws {
        let files = Self.files
        // The client's roots: the genuine root and the interception root its user installed.
        let system = try LabFiles.write(
            [try String(contentsOfFile: files.root, encoding: .utf8), try String(contentsOfFile: files.interceptionRoot, encoding: .utf8)]
                .joined(separator: "\n"), to: files.directory + "/device-roots.pem")
        let pinOptions: [[String]] = [
            ["--pin", files.intermediatePin],
            ["--pin", files.intermediatePin, "--allow-invalid"],
            ["--pin", files.intermediatePin, "--allow-invalid", "--no-validate-domain", "--compat"],
            ["--mode", "public-key", "--pinned-cert", files.intermediate],
            ["--mode", "public-key", "--pinned-cert", files.intermediate, "--allow-invalid"],
            ["--mode", "public-key", "--pinned-cert", files.intermediate, "--allow-invalid", "--compat"],
            ["--mode", "public-key", "--pinned-cert", files.intermediate, "--allow-invalid", "--no-validate-domain", "--compat"],
            ["--mode", "certificate", "--pinned-cert", files.intermediate, "--allow-invalid", "--compat"],
            ["--mode", "none", "--pin", files.intermediatePin],
        ]
        for options in pinOptions {
            for attack in [files.attackerAppended, files.interceptedAppended] {
                let result = try await Self.evaluate([attack, "--host", Self.host] + options, system: system)
                #expect(result.status == 1, "\(options) on \(attack): \(result.stdout)\(result.stderr)")
            }
            // The genuine server passes in every row AFNetworking's step 1 does not refuse
            // outright (allowInvalidCertificates with validatesDomainName and no pinned
            // certificate): where a path is validated the pinned intermediate is on it, and
            // without validation it verifiably signed the leaf.
            let earlyRejection = options.contains("--allow-invalid") && !options.contains("--no-validate-domain") && !options.contains("--pinned-cert")
            if !earlyRejection {
                let genuine = try await Self.evaluate([files.chain, "--host", Self.host] + options, system: system)
                #expect(genuine.status == 0, "\(options): \(genuine.stdout)\(genuine.stderr)")
            }
        }
        // --explain says what the pins were compared with: the attacker's leaf alone, since the
        // appended intermediate did not sign it.
        let explained = try await Self.evaluate(
            [files.attackerAppended, "--host", Self.host, "--pin", files.intermediatePin, "--allow-invalid", "--no-validate-domain", "--explain"],
            system: system)
        #expect(
            explained.stdout.contains("pins compared with the signature chain, the leaf and the certificates that verifiably signed it (1 certificate)"),
            "\(explained.stdout)")
    }

    @Test("a valid chain is trusted (exit 0), another host's is rejected (exit 1)")
    func trustedAndRejected() async throws {
        let trusted = try await Self.evaluate([Self.files.chain, "--host", Self.host])
        #expect(trusted.status == 0)
        #expect(trusted.stdout.hasPrefix("trusted: \(Self.host)"))
        let rejected = try await Self.evaluate([Self.files.otherHostChain, "--host", Self.host])
        #expect(rejected.status == 1)
        #expect(rejected.stdout.contains("hostValidationFailed"))
        #expect(rejected.stderr.isEmpty)
    }

    @Test("--at moves the evaluation instant")
    func evaluationInstant() async throws {
        let before = try await Self.evaluate([Self.files.expiredChain, "--host", Self.host, "--at", "2025-06-01T00:00:00Z"])
        #expect(before.status == 0)
        let later = try await Self.evaluate([Self.files.expiredChain, "--host", Self.host])
        #expect(later.status == 1)
        #expect(later.stdout.contains("expired"))
    }

    @Test("--json prints the decision record")
    func json() async throws {
        let result = try await Self.evaluate([
            Self.files.otherHostChain, "--host", Self.host, "--mode", "public-key", "--pinned-cert", Self.files.root, "--json",
        ])
        #expect(result.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["trusted"] as? Bool == false)
        #expect(object["mode"] as? String == "publicKey")
        #expect((object["failure"] as? [String: Any])?["kind"] as? String == "hostValidationFailed")
        #expect((object["steps"] as? [String])?.isEmpty == false)
        #expect((object["hostname"] as? String)?.contains("other.example.test") == true)
        #expect(object["time"] as? String == Self.at)
    }

    @Test("--explain prints the steps, anchors and chain")
    func explain() async throws {
        let result = try await Self.evaluate([Self.files.chain, "--host", Self.host, "--mode", "certificate", "--pinned-cert", Self.files.root, "--explain"])
        #expect(result.status == 0)
        for label in ["decision:  trusted", "anchors:   custom anchors only", "chain:", "hostname:", "steps:", "pin:       certificate"] {
            #expect(result.stdout.contains(label), "missing \(label)")
        }
    }

    @Test("the Charles case: trusted as a custom anchor, refused once the real root is pinned")
    func interception() async throws {
        let anchored = try await Self.evaluate([Self.files.intercepted, "--host", Self.host, "--anchors", Self.files.interceptionRoot])
        #expect(anchored.status == 0)
        let onlyProxy = try await Self.evaluate([Self.files.chain, "--host", Self.host, "--anchors", Self.files.interceptionRoot, "--anchors-only"])
        #expect(onlyProxy.status == 1, "with --anchors-only the system roots are not trusted")
        let systemBundle = Self.files.directory + "/with-proxy.crt"
        let bundle = try String(contentsOfFile: Self.files.system, encoding: .utf8) + (try String(contentsOfFile: Self.files.interceptionRoot, encoding: .utf8))
        try bundle.write(toFile: systemBundle, atomically: true, encoding: .utf8)
        let viaSystem = try await Self.evaluate([Self.files.intercepted, "--host", Self.host], system: systemBundle)
        #expect(viaSystem.status == 0)
        let pinned = try await Self.evaluate(
            [Self.files.intercepted, "--host", Self.host, "--mode", "certificate", "--pinned-cert", Self.files.root], system: systemBundle)
        #expect(pinned.status == 1)
    }

    @Test("--compat accepts another host's chain in public-key mode with --allow-invalid; strict, the default, refuses it")
    func strictFixesHostCheck() async throws {
        let arguments = [Self.files.otherHostChain, "--host", Self.host, "--mode", "public-key", "--pinned-cert", Self.files.root, "--allow-invalid"]
        await #expect(try Self.evaluate(arguments + ["--compat"]).status == 0)
        for strictArguments in [arguments, arguments + ["--strict"]] {
            let strict = try await Self.evaluate(strictArguments)
            #expect(strict.status == 1)
            #expect(strict.stdout.contains("hostValidationFailed"))
        }
        await #expect(try Self.evaluate(arguments + ["--compat", "--strict"]).status == 2)
    }

    @Test("--pin: a matching pin passes, a missing one prints the chain's pins beside the configured ones")
    func pins() async throws {
        await #expect(try Self.evaluate([Self.files.chain, "--host", Self.host, "--pin", Self.files.rootPin]).status == 0)
        let curlStyle = Self.files.leafPin.replacingOccurrences(of: "sha256/", with: "sha256//")
        await #expect(try Self.evaluate([Self.files.chain, "--host", Self.host, "--pin", curlStyle]).status == 0)
        let result = try await Self.evaluate([Self.files.chain, "--host", Self.host, "--pin", Self.files.backupPin])
        #expect(result.status == 1)
        #expect(result.stdout.contains("Certificate pinning failure!"))
        #expect(result.stdout.contains("    \(Self.files.leafPin): CN=\(Self.host)"))
        #expect(result.stdout.contains("Pinned certificates for \(Self.host):\n    \(Self.files.backupPin)"))
    }

    @Test("--policy evaluates with a policy file")
    func policyFile() async throws {
        let path = Self.files.directory + "/policy.json"
        let policy = """
            {"version": 1, "hosts": [{"host": "**.example.test", "pins": ["\(Self.files.rootPin)", "\(Self.files.backupPin)"]}]}
            """
        try policy.write(toFile: path, atomically: true, encoding: .utf8)
        await #expect(try Self.evaluate([Self.files.chain, "--host", Self.host, "--policy", path]).status == 0)
        let unknown = try await Self.evaluate([Self.files.chain, "--host", "api.other.test", "--policy", path])
        #expect(unknown.status == 1)
        #expect(unknown.stdout.contains("noRequiredEvaluator"))
    }

    @Test(
        "bad input: one line on stderr, exit 2",
        arguments: [
            "no chain", "missing chain file", "garbage chain", "no host", "bad --at", "bad --mode", "bad --pin", "anchors-only alone",
            "policy with mode", "bad policy", "unknown option", "missing SSL_CERT_FILE",
        ])
    func badInput(_ name: String) async throws {
        let files = Self.files
        let garbage = files.directory + "/garbage.pem"
        try "hello".write(toFile: garbage, atomically: true, encoding: .utf8)
        let badPolicy = files.directory + "/bad-policy.json"
        try #"{"version": 1, "hosts": [{"host": "a.example.test", "pins": ["sha256/abc"]}, {"host": "*.com"}]}"#
            .write(toFile: badPolicy, atomically: true, encoding: .utf8)
        let base = [files.chain, "--host", Self.host]
        let cases: [String: ([String], String?)] = [
            "no chain": (["--host", Self.host], nil),
            "missing chain file": ([files.directory + "/absent.pem", "--host", Self.host], nil),
            "garbage chain": ([garbage, "--host", Self.host], nil),
            "no host": ([files.chain], nil),
            "bad --at": (base + ["--at", "yesterday"], nil),
            "bad --mode": (base + ["--mode", "pinned"], nil),
            "bad --pin": (base + ["--pin", "sha1/AAAA"], nil),
            "anchors-only alone": (base + ["--anchors-only"], nil),
            "policy with mode": (base + ["--policy", badPolicy, "--mode", "certificate"], nil),
            "bad policy": (base + ["--policy", badPolicy], nil),
            "unknown option": (base + ["--bogus"], nil),
            "missing SSL_CERT_FILE": (base, files.directory + "/absent.crt"),
        ]
        let (arguments, system) = try #require(cases[name])
        let result = try await Self.evaluate(arguments, system: system)
        #expect(result.status == 2, "\(name): \(result.stdout) \(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(name): \(result.stderr)")
        #expect(result.stderr.hasPrefix("servertrust: evaluate: "))
        if name == "bad policy" {
            #expect(result.stderr.contains("$.hosts[0].pins[0]: not a valid sha256 pin"))
            #expect(result.stderr.contains("$.hosts[1].host"))
        }
    }

    @Test("--help exits 0")
    func help() async throws {
        let result = try await CLIRunner.run(["evaluate", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("--pinned-cert FILE"))
    }
}
