import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

/// A signed pin set changes pins and nothing else: laid over the baseline, the baseline's CRLs,
/// its anchors and `anchorsOnly`, and its evaluators stay in force, and a document that names a
/// file or any key outside the pins-only profile is refused.
///
/// Before the overlay, the first accepted document replaced the whole baseline policy, so a
/// revoked leaf, and a chain from a CA the host did not trust, were accepted after an update.
@Suite("signed pin sets change pins only: the baseline's other inputs stay in force")
struct PinSetOverlayTests {
    typealias F = PinSetFixture
    static let fixtures = PolicyFixtures.shared

    /// A baseline written as a policy file in a folder with the files it names.
    static func baseline(_ json: String, files: [String: String] = [:]) throws -> TrustPolicy {
        let directory = try PolicyFixtures.temporaryDirectory()
        for (name, text) in files { try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8) }
        return try PolicyFile.parse(Array(json.utf8), baseDirectory: directory, source: "baseline")
    }

    /// The fixtures' document (the host pinned to its root and the spare) accepted and laid
    /// over `baseline`.
    static func updated(_ baseline: TrustPolicy) throws -> TrustPolicy {
        var chain = PinSetChain(rules: try F.rules())
        #expect(try chain.accept(try F.sign(serial: 3)) == .accepted(serial: 3))
        return baseline.overlaying(chain.current, rules: try F.rules())
    }

    /// CRLs from the fixtures' PKI: the intermediate's revoking `revoked` (serials), the root's
    /// revoking nothing.
    static func crls(revoking revoked: [[UInt8]]) throws -> String {
        let pki = fixtures.pki
        let intermediate = try LabCRL.issue(
            LabCRLSpec(entries: revoked.map { LabRevokedEntry(serial: $0, revocationDate: PolicyFixtures.now - LabClock.day, reason: 1) }),
            signer: pki.intermediateIssuer)
        let root = try LabCRL.issue(LabCRLSpec(), signer: pki.rootIssuer)
        return LabPEM.encode(intermediate, label: "X509 CRL") + LabPEM.encode(root, label: "X509 CRL")
    }

    func decide(_ policy: TrustPolicy, _ chain: [Certificate], store: TrustStore? = nil) -> TrustDecision {
        policy.decide(Self.fixtures.trust(chain, store: store), forHost: PolicyFixtures.host)
    }

    @Test("the baseline's CRLs still refuse a revoked leaf after an update, at every level they are written", arguments: [false, true])
    func revocationSurvives(hostLevel: Bool) throws {
        let f = Self.fixtures
        let crls = try Self.crls(revoking: [f.pki.leaf.serialNumber])
        let pins = #""pins": ["\#(F.rootPin)", "\#(F.backupPin)"]"#
        let json =
            hostLevel
            ? #"{"version": 1, "hosts": [{"host": "\#(PolicyFixtures.host)", "crls": ["ca.crl"], \#(pins)}]}"#
            : #"{"version": 1, "crls": ["ca.crl"], "hosts": [{"host": "\#(PolicyFixtures.host)", \#(pins)}]}"#
        let baseline = try Self.baseline(json, files: ["ca.crl": crls])
        for policy in [baseline, try Self.updated(baseline)] {
            let decision = decide(policy, f.validChain)
            #expect(!decision.isTrusted, "\(decision.explanation)")
            #expect(decision.validationFailure?.kind == .revoked && decision.validationFailure?.certificateIndex == 0, "\(decision)")
        }
        // The same baseline without the leaf revoked accepts, before and after: the refusal
        // above is the CRL's, not the update's.
        let clean = try Self.baseline(json, files: ["ca.crl": try Self.crls(revoking: [])])
        for policy in [clean, try Self.updated(clean)] {
            let decision = decide(policy, f.validChain)
            #expect(decision.isTrusted, "\(decision.explanation)")
            #expect(decision.record.steps.contains { $0.description.hasPrefix("revocation: passed: not revoked") }, "\(decision.explanation)")
        }
    }

    @Test("a host with anchorsOnly still refuses a chain from the system roots after an update")
    func anchorsSurvive() throws {
        let f = Self.fixtures
        // The host trusts only the interception root (a private CA, say); the system roots hold
        // the public root that the genuine chain, and the document's pins, lead to.
        let json = #"""
            {"version": 1, "hosts": [{"host": "\#(PolicyFixtures.host)", "anchors": ["private-root.pem"], "anchorsOnly": true,
              "pins": ["sha256/\#(f.interceptedChain[0].spkiSHA256Base64)", "\#(F.backupPin)"]}]}
            """#
        let baseline = try Self.baseline(json, files: ["private-root.pem": f.interceptionRoot.pemString])
        let updated = try Self.updated(baseline)
        #expect(updated.resolve(PolicyFixtures.host, at: PolicyFixtures.now).policy?.pins?.pins.map(\.description) == [F.rootPin, F.backupPin])
        let decision = decide(updated, f.validChain, store: f.publicStore)
        #expect(!decision.isTrusted, "the system roots are not trusted for this host: \(decision.explanation)")
        #expect(decision.validationFailure?.kind == .untrustedRoot, "\(decision)")
        #expect(decision.record.steps.contains { $0.description.contains("system roots not trusted") }, "\(decision.explanation)")
        // The document's pins did replace the baseline's: the private CA's chain, pinned by the
        // baseline, no longer matches them.
        #expect(decide(updated, f.interceptedChain).failure?.kind == .spkiPinningFailed)
        #expect(decide(baseline, f.interceptedChain).isTrusted)
    }

    @Test("the baseline's evaluator stays: a document cannot turn host validation off")
    func evaluatorSurvives() throws {
        let f = Self.fixtures
        let baseline = try Self.baseline(
            #"{"version": 1, "allHostsMustBeEvaluated": false, "hosts": [{"host": "other.test", "pins": ["\#(F.rootPin)", "\#(F.backupPin)"]}]}"#)
        let updated = try Self.updated(baseline)
        // The document pins the host; the baseline validates it by default (chain and name).
        let decision = updated.decide(f.trust(f.otherHostChain), forHost: PolicyFixtures.host)
        #expect(decision.failure?.kind == .hostValidationFailed, "\(decision)")
        #expect(updated.decide(f.trust(f.validChain), forHost: PolicyFixtures.host).record.notes.contains { $0.contains("pins from signed pin set 3") })
        // A host the baseline refuses stays refused, whatever the document pins.
        let strict = try Self.updated(try Self.baseline(#"{"version": 1, "hosts": [{"host": "other.test"}]}"#))
        #expect(strict.decide(f.trust(f.validChain), forHost: PolicyFixtures.host).failure?.kind == .noRequiredEvaluator)
    }

    @Test("a baseline exclusion more specific than the document's entry stays unpinned")
    func exclusionSurvives() throws {
        let f = Self.fixtures
        let baseline = try Self.baseline(
            #"{"version": 1, "hosts": [{"host": "example.test", "includeSubdomains": true, "pins": ["\#(F.backupPin)", "sha256/\#(f.attacker.spkiSHA256Base64)"]}, {"host": "\#(PolicyFixtures.host)", "excludeFromParentPolicy": true}]}"#
        )
        var chain = PinSetChain(rules: try F.rules())
        let document =
            #"{"version": 1, "hosts": [{"host": "example.test", "includeSubdomains": true, "pins": ["\#(F.backupPin)", "sha256/\#(f.selfSigned.spkiSHA256Base64)"]}]}"#
        try chain.accept(try F.sign(serial: 3, policy: Array(document.utf8)))
        let updated = baseline.overlaying(chain.current, rules: try F.rules())
        // The excluded host is still decided unpinned (its chain matches neither pin set)...
        #expect(updated.decide(f.trust(f.validChain), forHost: PolicyFixtures.host).isTrusted)
        #expect(updated.resolve(PolicyFixtures.host, at: PolicyFixtures.now).policy?.pins?.isExcluded == true)
        // ...while the document's pins apply to the rest of the domain.
        let deep = updated.resolve("deep.example.test", at: PolicyFixtures.now)
        #expect(deep.policy?.pins?.pins.map(\.description) == [F.backupPin, "sha256/" + f.selfSigned.spkiSHA256Base64])
        #expect(deep.notes.contains { $0.contains("pins from signed pin set 3") })
    }

    /// Every key of the policy-file schema outside the pins-only profile, at the level it is
    /// written, file paths first.
    static let refusedKeys: [(key: String, member: String, path: String)] = [
        ("anchors", #""anchors": ["/etc/ssl/certs/ca-certificates.crt"]"#, "$.anchors"),
        ("crls", #""crls": ["/tmp/crl.pem"]"#, "$.crls"),
        ("anchorsOnly", #""anchorsOnly": false"#, "$.anchorsOnly"),
        ("allHostsMustBeEvaluated", #""allHostsMustBeEvaluated": false"#, "$.allHostsMustBeEvaluated"),
        ("semantics", #""semantics": "compat""#, "$.semantics"),
        ("host certificates", #""hosts": [{"host": "a.test", "certificates": ["pinned.pem"], "pins": PINS}]"#, "$.hosts[0].certificates"),
        ("host anchors", #""hosts": [{"host": "a.test", "anchors": ["../../root.pem"], "pins": PINS}]"#, "$.hosts[0].anchors"),
        ("host crls", #""hosts": [{"host": "a.test", "crls": ["file:///etc/passwd"], "pins": PINS}]"#, "$.hosts[0].crls"),
        ("host anchorsOnly", #""hosts": [{"host": "a.test", "anchorsOnly": false, "pins": PINS}]"#, "$.hosts[0].anchorsOnly"),
        ("evaluator", #""hosts": [{"host": "a.test", "evaluator": "spkiPins", "pins": PINS}]"#, "$.hosts[0].evaluator"),
        ("validateHost", #""hosts": [{"host": "a.test", "validateHost": false, "pins": PINS}]"#, "$.hosts[0].validateHost"),
        ("performDefaultValidation", #""hosts": [{"host": "a.test", "performDefaultValidation": false, "pins": PINS}]"#, "$.hosts[0].performDefaultValidation"),
        ("exclusion", #""hosts": [{"host": "a.test", "excludeFromParentPolicy": true}]"#, "$.hosts[0].excludeFromParentPolicy"),
    ]

    @Test("a document naming a file, or any key outside the pins-only profile, is refused at its path", arguments: 0..<13)
    func refused(index: Int) throws {
        let entry = Self.refusedKeys[index]
        let pins = #"["\#(F.rootPin)", "\#(F.backupPin)"]"#
        var member = entry.member.replacingOccurrences(of: "PINS", with: pins)
        if !member.hasPrefix(#""hosts""#) { member += #", "hosts": [{"host": "a.test", "pins": \#(pins)}]"# }
        let payload = Array(#"{"version": 1, "pinSet": {"version": 1, "serial": 9, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, \#(member)}"#.utf8)
        let envelope = F.envelope(keyID: F.publicKey(F.signer).keyID, payload: payload, signature: try F.signer.signature(over: payload))
        let error = #expect(throws: PinSetError.self) { _ = try PinSetChain(rules: try F.rules()).verify(envelope) }
        #expect(error?.problems.contains { $0.kind == .notAllowedInPinSet && $0.path == entry.path } == true, "\(entry.key): \(String(describing: error))")
        // The operator's tool refuses to sign it in the first place.
        #expect(throws: PinSetError.self) {
            _ = try PinSetDocument.sign(
                policyJSON: Array(#"{"version": 1, \#(member)}"#.utf8), serial: 9, issuedAt: F.now - 60, expiresAt: F.now + F.day, key: F.signer)
        }
    }
}
