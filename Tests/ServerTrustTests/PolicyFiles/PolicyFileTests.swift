import CertificateParsing
import Foundation
import ServerTrust
import Testing
import TrustEvaluation

#if canImport(Glibc)
    import Glibc
#endif

@Suite("JSON policy files")
struct PolicyFileTests {
    let f = PolicyFixtures.shared
    var rootPin: String { "sha256/" + f.root.spkiSHA256Base64 }
    var backupPin: String { f.backupPin.description }

    /// A directory holding root.pem, self-signed.der and garbage.pem for file references.
    static let directory: String = {
        do {
            let directory = try PolicyFixtures.temporaryDirectory()
            let f = PolicyFixtures.shared
            try f.root.pemString.write(toFile: directory + "/root.pem", atomically: true, encoding: .utf8)
            _ = FileManager.default.createFile(atPath: directory + "/self-signed.der", contents: Data(f.selfSigned.derBytes))
            try "not a certificate".write(toFile: directory + "/garbage.pem", atomically: true, encoding: .utf8)
            return directory
        } catch {
            fatalError("fixture files: \(error)")
        }
    }()

    func parse(_ json: String) throws(PolicyFileError) -> TrustPolicy {
        try PolicyFile.parse(Array(json.utf8), baseDirectory: Self.directory)
    }

    @Test("every example in examples/policies loads", arguments: ["spki-pins.json", "afnetworking.json", "alamofire.json", "trustkit.json"])
    func examples(_ name: String) throws {
        let path = repositoryRoot().appendingPathComponent("examples/policies/" + name).path
        let policy = try PolicyFile.load(contentsOf: path)
        #expect(!policy.rules.isEmpty)
        _ = policy
    }

    @Test("a file covering the evaluators decides as its entries say")
    func decisions() throws {
        let policy = try parse(
            """
            {
              "version": 1,
              "semantics": "compat",
              "hosts": [
                {"host": "**.example.test", "pins": [{"pin": "\(rootPin)", "scope": "ca"}, "\(backupPin)"]},
                {"host": "legacy.example.test", "excludeFromParentPolicy": true},
                {"host": "self.example.test", "evaluator": "pinnedCertificates", "certificates": ["self-signed.der"],
                 "acceptSelfSignedCertificates": true, "validateHost": false},
                {"host": "af.example.test", "pinningMode": "publicKey", "certificates": ["root.pem"], "allowInvalidCertificates": true},
                {"host": "pinned.example.test", "evaluator": ["default", "publicKeys"], "certificates": ["root.pem"], "validateHost": false},
                {"host": "*.dev.example.test", "evaluator": "disabled"}
              ]
            }
            """)
        #expect(policy.allHostsMustBeEvaluated)
        let manager = policy
        let host = PolicyFixtures.host
        #expect(manager.decide(f.trust(f.validChain), forHost: host).isTrusted)
        #expect(manager.decide(f.trust(f.interceptedChain), forHost: host).failure?.kind == .spkiPinningFailed)
        #expect(manager.decide(f.trust(f.validChain), forHost: "legacy.example.test").failure?.kind == .hostValidationFailed)
        #expect(manager.decide(f.trust([f.selfSigned]), forHost: "self.example.test").isTrusted)
        // Compat public-key mode with allowInvalidCertificates: the host is not checked (row 8 of §(d)).
        #expect(manager.decide(f.trust(f.validChain), forHost: "af.example.test").isTrusted)
        #expect(manager.decide(f.trust(f.otherHostChain), forHost: "pinned.example.test").isTrusted)
        #expect(manager.decide(f.trust([f.attacker]), forHost: "x.dev.example.test").isTrusted)
        #expect(manager.decide(f.trust(f.validChain), forHost: "example.org").failure?.kind == .noRequiredEvaluator)
    }

    @Test("anchors and anchorsOnly apply to the hosts")
    func anchors() throws {
        let proxyPath = Self.directory + "/proxy-root.pem"
        try f.interceptionRoot.pemString.write(toFile: proxyPath, atomically: true, encoding: .utf8)
        let policy = try parse(#"{"version": 1, "anchors": ["proxy-root.pem"], "anchorsOnly": true, "hosts": [{"host": "api.example.test"}]}"#)
        let manager = policy
        #expect(manager.decide(f.trust(f.interceptedChain, store: f.publicStore), forHost: PolicyFixtures.host).isTrusted)
        let decision = manager.decide(f.trust(f.validChain), forHost: PolicyFixtures.host)
        #expect(!decision.isTrusted, "anchorsOnly drops the system roots")
        #expect(decision.record.steps.contains { $0.description.contains("system roots not trusted") }, "\(decision.record.steps)")
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let kind: PolicyConfigurationError.Kind
        let path: String
        let json: String
        var testDescription: String { "\(kind.rawValue) at \(path)" }
    }

    static let rootPinText = "sha256/" + PolicyFixtures.shared.root.spkiSHA256Base64
    static let backupPinText = PolicyFixtures.shared.backupPin.description

    /// One document per configuration-error kind.
    static let cases: [Case] = [
        Case(kind: .unreadable, path: "$", json: #"{"version": 1, "hosts": ["#),
        Case(
            kind: .unreadable, path: "$.hosts[0].certificates[0]",
            json: #"{"version": 1, "hosts": [{"host": "a.test", "evaluator": "pinnedCertificates", "certificates": ["absent.pem"]}]}"#),
        Case(
            kind: .notACertificate, path: "$.hosts[0].certificates[0]",
            json: #"{"version": 1, "hosts": [{"host": "a.test", "evaluator": "publicKeys", "certificates": ["garbage.pem"]}]}"#),
        Case(kind: .missingKey, path: "$.version", json: #"{"hosts": [{"host": "a.test"}]}"#),
        Case(kind: .missingKey, path: "$.hosts[0].host", json: #"{"version": 1, "hosts": [{"evaluator": "default"}]}"#),
        Case(kind: .missingKey, path: "$.hosts[0].certificates", json: #"{"version": 1, "hosts": [{"host": "a.test", "evaluator": "pinnedCertificates"}]}"#),
        Case(kind: .unknownKey, path: "$.hosts[0].pinz", json: #"{"version": 1, "hosts": [{"host": "a.test", "pinz": []}]}"#),
        Case(
            kind: .wrongType, path: "$.hosts[0].enforcePinning",
            json: #"{"version": 1, "hosts": [{"host": "a.test", "pins": ["\#(rootPinText)", "\#(backupPinText)"], "enforcePinning": 1}]}"#),
        Case(kind: .wrongType, path: "$.hosts", json: #"{"version": 1, "hosts": {}}"#),
        Case(kind: .invalidValue, path: "$.hosts[0].evaluator", json: #"{"version": 1, "hosts": [{"host": "a.test", "evaluator": "magic"}]}"#),
        Case(
            kind: .invalidValue, path: "$.hosts[0].pins[0].scope",
            json: #"{"version": 1, "hosts": [{"host": "a.test", "pins": [{"pin": "\#(rootPinText)", "scope": "root"}, "\#(backupPinText)"]}]}"#),
        Case(kind: .invalidValue, path: "$.reportUris[0]", json: #"{"version": 1, "reportUris": ["mailto:a@b"], "hosts": [{"host": "a.test"}]}"#),
        Case(
            kind: .invalidValue, path: "$.reportUris[0]",
            json: #"{"version": 1, "reportUris": ["https://r.test/a\r\nX-Injected: 1"], "hosts": [{"host": "a.test"}]}"#),
        Case(
            kind: .invalidPin, path: "$.hosts[0].pins[0]", json: #"{"version": 1, "hosts": [{"host": "a.test", "pins": ["sha256/abc", "\#(backupPinText)"]}]}"#),
        Case(kind: .invalidHostPattern, path: "$.hosts[0].host", json: #"{"version": 1, "hosts": [{"host": "*.co.uk"}]}"#),
        Case(
            kind: .duplicateHostPattern, path: "$.hosts[1]",
            json: #"{"version": 1, "hosts": [{"host": "**.a.test"}, {"host": "a.test", "includeSubdomains": true}]}"#),
        Case(
            kind: .invalidDate, path: "$.hosts[0].expirationDate",
            json: #"{"version": 1, "hosts": [{"host": "a.test", "pins": ["\#(rootPinText)", "\#(backupPinText)"], "expirationDate": "next year"}]}"#),
        Case(kind: .missingBackupPin, path: "$.hosts[0]", json: #"{"version": 1, "hosts": [{"host": "a.test", "pins": ["\#(rootPinText)"]}]}"#),
        Case(kind: .noPins, path: "$.hosts[0]", json: #"{"version": 1, "hosts": [{"host": "a.test", "pins": []}]}"#),
        Case(
            kind: .excludeWithoutParent, path: "$.hosts[1]",
            json: #"{"version": 1, "hosts": [{"host": "a.test"}, {"host": "b.a.test", "excludeFromParentPolicy": true}]}"#),
        Case(
            kind: .conflictingOptions, path: "$.hosts[0].pins",
            json: #"{"version": 1, "hosts": [{"host": "a.test", "evaluator": "default", "pins": ["\#(rootPinText)", "\#(backupPinText)"]}]}"#),
        Case(kind: .conflictingOptions, path: "$.hosts[0].host", json: #"{"version": 1, "hosts": [{"host": "*.a.test", "includeSubdomains": true}]}"#),
        Case(kind: .unsupportedVersion, path: "$.version", json: #"{"version": 2, "hosts": [{"host": "a.test"}]}"#),
        Case(
            kind: .duplicateKey, path: "$.hosts[0].enforcePinning",
            json:
                #"{"version": 1, "hosts": [{"host": "a.test", "pins": ["\#(rootPinText)", "\#(backupPinText)"], "enforcePinning": true, "enforcePinning": false}]}"#
        ),
    ]

    /// JSON with repeated keys, and the paths of the repetitions.
    static let duplicates: [(json: String, paths: [String])] = [
        // The case of the issue: report-only by the last key, enforced by the first.
        (
            #"{"version": 1, "hosts": [{"host": "a.test", "enforcePinning": true, "pins": ["\#(rootPinText)", "\#(backupPinText)"], "enforcePinning": false}]}"#,
            ["$.hosts[0].enforcePinning"]
        ),
        (#"{"version": 1, "version": 1, "hosts": [{"host": "a.test"}]}"#, ["$.version"]),
        (#"{"version": 1, "hosts": [{"host": "a.test"}], "hosts": [{"host": "b.test"}]}"#, ["$.hosts"]),
        // The same name however it is escaped.
        (#"{"version": 1, "hosts": [{"host": "a.test", "evaluator": "default", "evalu\u0061tor": "disabled"}]}"#, ["$.hosts[0].evaluator"]),
        (
            #"{"version": 1, "hosts": [{"host": "a.test", "pins": [{"pin": "\#(backupPinText)", "pin": "\#(rootPinText)"}, "\#(backupPinText)"]}]}"#,
            ["$.hosts[0].pins[0].pin"]
        ),
        // Each repetition, in the second entry.
        (
            #"{"version": 1, "hosts": [{"host": "a.test"}, {"host": "b.test", "host": "c.test", "host": "d.test"}]}"#,
            ["$.hosts[1].host", "$.hosts[1].host"]
        ),
        // A TrustKit configuration written as JSON: a repeated option, a repeated domain.
        (
            #"{"kTSKPinnedDomains": {"a.test": {"kTSKPublicKeyHashes": ["\#(rootHash)", "\#(backupHash)"], "kTSKEnforcePinning": true, "kTSKEnforcePinning": false}}}"#,
            [#"$.kTSKPinnedDomains["a.test"].kTSKEnforcePinning"#]
        ),
        (
            #"{"kTSKPinnedDomains": {"a.test": {"kTSKPublicKeyHashes": ["\#(rootHash)", "\#(backupHash)"]}, "a.test": {"kTSKPublicKeyHashes": ["\#(rootHash)"], "kTSKEnforcePinning": false}}}"#,
            [#"$.kTSKPinnedDomains["a.test"]"#]
        ),
    ]
    static let rootHash = PolicyFixtures.shared.root.spkiSHA256Base64
    static let backupHash = Base64.encode(PolicyFixtures.shared.backupPin.digest)

    @Test("a key repeated in one object is an error at its JSON path, not last-one-wins", arguments: duplicates)
    func duplicateKeys(_ json: String, _ paths: [String]) {
        let error = #expect(throws: PolicyFileError.self) { try parse(json) }
        let problems = error?.problems ?? []
        #expect(problems.map(\.kind) == Array(repeating: .duplicateKey, count: paths.count), "\(problems)")
        #expect(problems.map(\.path) == paths, "\(problems)")
        #expect(problems.first?.description.contains("appears more than once") == true)
    }

    @Test("the same key in different objects is no duplicate; a duplicate is reported with the other problems")
    func duplicateKeysInContext() throws {
        let file = try parse(#"{"version": 1, "hosts": [{"host": "a.test", "pins": ["\#(Self.rootPinText)", "\#(Self.backupPinText)"]}, {"host": "b.test"}]}"#)
        #expect(file.rules.count == 2)
        let error = #expect(throws: PolicyFileError.self) {
            try parse(#"{"version": 1, "hosts": [{"host": "a.test", "host": "*.com"}], "colour": 1}"#)
        }
        #expect(error?.problems.map(\.kind) == [.duplicateKey, .unknownKey, .invalidHostPattern], "\(String(describing: error))")
    }

    @Test("each kind of configuration error, at its JSON path", arguments: cases)
    func configurationError(_ c: Case) {
        let error = #expect(throws: PolicyFileError.self) { try parse(c.json) }
        let problems = error?.problems ?? []
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.kind == c.kind, "\(problems)")
        #expect(problems.first?.path == c.path, "\(problems)")
    }

    @Test("every kind of configuration error is covered")
    func allKindsCovered() {
        // notAllowedInPinSet belongs to signed pin sets (PinSetDocumentTests).
        #expect(Set(Self.cases.map(\.kind)) == Set(PolicyConfigurationError.Kind.allCases).subtracting([.notAllowedInPinSet]))
    }

    @Test("one error per problem, each with its path and the documented text")
    func manyProblems() {
        let error = #expect(throws: PolicyFileError.self) {
            try parse(
                #"""
                {"version": 1, "colour": "blue", "hosts": [
                  {"host": "a.test", "pins": ["\#(Self.rootPinText)", "\#(Self.backupPinText)"]},
                  {"host": "b.test", "pins": ["\#(Self.rootPinText)", {"pin": "sha256/AAAA", "notBefore": "soon"}]},
                  {"host": "c.test", "pins": ["sha256/abc", "\#(Self.backupPinText)"]},
                  {"host": "*.com"}
                ]}
                """#)
        }
        let lines = error?.problems.map(\.description) ?? []
        #expect(lines.count == 5, "\(lines)")
        #expect(
            lines.first
                == "$.colour: unknown key (allowed: allHostsMustBeEvaluated, anchors, anchorsOnly, certificateTransparency, crls, hosts, reportUris, revocation, semantics, version)"
        )
        #expect(lines.contains { $0.hasPrefix("$.hosts[1].pins[1].notBefore: \"soon\" is not a date") })
        #expect(lines.contains { $0.hasPrefix("$.hosts[1].pins[1].pin: not a valid sha256 pin") })
        #expect(lines.contains("$.hosts[2].pins[0]: not a valid sha256 pin: not base64; a pin is \(SPKIPin.acceptedForms)"))
        #expect(lines.contains { $0.hasPrefix("$.hosts[3].host: \"*.com\"") })
        #expect(error?.description.split(separator: "\n").count == 5)
    }

    @Test("a missing policy file is unreadable, naming it")
    func missingFile() {
        let error = #expect(throws: PolicyFileError.self) { try PolicyFile.load(contentsOf: Self.directory + "/absent.json") }
        #expect(error?.problems.first?.kind == .unreadable)
        #expect(error?.problems.first?.path == Self.directory + "/absent.json")
    }

    @Test("a FIFO nobody writes to is refused at once, not waited on for a writer (policy files, anchors, identities)")
    func fifoIsUnreadable() throws {
        let fifo = Self.directory + "/fifo-" + UUID().uuidString
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        // Were an open to wait, a writer every 10 s lets it go on (and the test fail on time).
        for seconds in [10.0, 20.0, 30.0] {
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                let writer = open(fifo, O_WRONLY | O_NONBLOCK)
                if writer >= 0 { close(writer) }
            }
        }
        let start = ContinuousClock.now
        let error = #expect(throws: PolicyFileError.self) { try PolicyFile.load(contentsOf: fifo) }
        #expect(error?.description.contains("not a regular file") == true, "\(error.map(String.init(describing:)) ?? "")")
        #expect(throws: TrustStoreError.self) { try TrustStore(contentsOf: [fifo]) }
        #expect(throws: KeyError.self) { try Identity(contentsOf: fifo) }
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test("a read error is unreadable, never a shorter file: /proc/self/mem is regular and its first read fails (EIO)")
    func readErrorIsUnreadable() {
        let error = #expect(throws: PolicyFileError.self) { try PolicyFile.load(contentsOf: "/proc/self/mem") }
        #expect(error?.problems.first?.kind == .unreadable, "\(error.map(String.init(describing:)) ?? "")")
        #expect(error?.description.contains("read error") == true, "\(error.map(String.init(describing:)) ?? "")")
        let anchors = #expect(throws: TrustStoreError.self) { try TrustStore(contentsOf: ["/proc/self/mem"]) }
        #expect(anchors?.reason == "read error")
    }

    @Test("a device is refused at once, not read until memory runs out (FZ-2)", arguments: ["/dev/zero", "/dev/urandom", "/tmp"])
    func deviceIsUnreadable(path: String) {
        let error = #expect(throws: PolicyFileError.self) { try PolicyFile.load(contentsOf: path) }
        #expect(error?.problems.first?.kind == .unreadable)
        #expect(error?.description.contains("not a regular file") == true, "\(error.map(String.init(describing:)) ?? "")")
        let certificateError = #expect(throws: PolicyConfigurationError.self) { try SecurityPolicy.loadCertificates(atPath: path) }
        #expect(certificateError?.kind == .unreadable)
    }
}
