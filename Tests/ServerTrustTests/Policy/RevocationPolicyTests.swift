import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

/// The revocation setting of the one policy value, everywhere it is spelled: in code (modes,
/// depth, sources, the 0.1 way of giving CRL files, the default), in policy files (a
/// `revocation` object at the top level and per host, layered; `crls` beside it), and in signed
/// pin sets (mode and depth only, which strengthen the baseline and never weaken it), and what
/// each needs from the handshake.
@Suite("revocation settings: code, policy files, signed pin sets")
struct RevocationPolicyTests {
    typealias F = PinSetFixture
    static let fixtures = PolicyFixtures.shared

    static func parse(_ json: String, directory: String = "/etc/app") throws(PolicyFileError) -> TrustPolicy {
        try PolicyFile.parse(Array(json.utf8), baseDirectory: directory, source: "test")
    }

    static func problems(_ json: String) -> [String] {
        do {
            _ = try parse(json)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    static func revocation(_ policy: TrustPolicy, _ host: String = PolicyFixtures.host) -> RevocationPolicy? {
        policy.resolve(host, at: PolicyFixtures.now).policy?.revocation
    }

    @Test("the default is off, everywhere: code, a policy file without revocation, the 0.1 initializer without CRLs")
    func defaultIsOff() throws {
        #expect(HostTrustPolicy().revocation.mode == .off)
        #expect(HostTrustPolicy().handshakeEvidence.isEmpty)
        #expect(RevocationPolicy(revocationLists: []).mode == .off)
        let file = try Self.parse(#"{"version": 1, "hosts": [{"host": "\#(PolicyFixtures.host)"}]}"#)
        #expect(Self.revocation(file)?.mode == .off)
        #expect(file.handshakeEvidenceForAnyHost.isEmpty)
    }

    @Test("CRL files the 0.1 way keep their meaning: hard-fail over the chain, those CRLs only, no fetch, no staple")
    func legacyCRLs() throws {
        let crl = try CertificateRevocationList(derEncoded: LabCRL.issue(LabCRLSpec(), signer: Self.fixtures.pki.intermediateIssuer))
        let legacy = RevocationPolicy(revocationLists: [crl])
        #expect(legacy.mode == .hardFail && legacy.depth == .chain && !legacy.usesStapledOCSP && legacy.handshakeEvidence.isEmpty)
        guard case .never = legacy.fetching else {
            Issue.record("the 0.1 initializer fetches: \(legacy.fetching)")
            return
        }
        // Added to a setting that is off, CRLs switch it on the same way (`--crl`, `crls`).
        #expect(RevocationPolicy.off.adding([crl]).mode == .hardFail)
        // Added to soft-fail, they are one more source and the mode stays.
        let soft = RevocationPolicy.softFail.adding([crl])
        #expect(soft.mode == .softFail && soft.revocationLists.count == 1 && soft.handshakeEvidence == .stapledOCSPResponse)
    }

    @Test("modes have their budgets; the staple is needed exactly when revocation is on and reads it")
    func evidence() {
        #expect(RevocationPolicy.softFail.timeBudget == .seconds(2) && RevocationPolicy.hardFail.timeBudget == .seconds(10))
        #expect(RevocationPolicy.softFail.handshakeEvidence == .stapledOCSPResponse)
        #expect(RevocationPolicy(mode: .hardFail, usesStapledOCSP: false).handshakeEvidence.isEmpty)
        #expect(RevocationPolicy.off.handshakeEvidence.isEmpty)
        let policy = TrustPolicy(
            rules: [TrustPolicy.Rule(try! HostPattern("checked.test"), HostTrustPolicy(revocation: .softFail))], unmatched: HostTrustPolicy())
        #expect(policy.handshakeEvidence(forHost: "checked.test", at: 0) == .stapledOCSPResponse)
        #expect(policy.handshakeEvidence(forHost: "other.test", at: 0).isEmpty)
        #expect(policy.handshakeEvidenceForAnyHost == .stapledOCSPResponse)
    }

    @Test("policy files: a revocation object at the top level and per host, the host's values first, paths relative to the file")
    func policyFileLayers() throws {
        let json = #"""
            {"version": 1, "revocation": {"mode": "soft-fail", "cacheDirectory": "crl-cache"},
             "hosts": [{"host": "a.test"},
                       {"host": "b.test", "revocation": {"mode": "hard-fail", "depth": "leaf"}},
                       {"host": "c.test", "revocation": {"mode": "off"}},
                       {"host": "d.test", "revocation": {"mode": "soft-fail", "cacheDirectory": "/var/cache/crls"}}]}
            """#
        let policy = try Self.parse(json, directory: "/etc/app")
        let a = try #require(Self.revocation(policy, "a.test"))
        #expect(a.mode == .softFail && a.depth == .chain)
        guard case .distributionPoints(let folder) = a.fetching, folder == "/etc/app/crl-cache" else {
            Issue.record("a.test fetching: \(a.fetching)")
            return
        }
        let b = try #require(Self.revocation(policy, "b.test"))
        #expect(b.mode == .hardFail && b.depth == .leaf)
        guard case .distributionPoints("/etc/app/crl-cache") = b.fetching else {
            Issue.record("b.test inherits the folder: \(b.fetching)")
            return
        }
        #expect(Self.revocation(policy, "c.test")?.mode == .off)
        guard case .distributionPoints("/var/cache/crls")? = Self.revocation(policy, "d.test")?.fetching else {
            Issue.record("d.test's own folder")
            return
        }
        #expect(policy.handshakeEvidence(forHost: "c.test", at: 0).isEmpty && policy.handshakeEvidence(forHost: "a.test", at: 0) == .stapledOCSPResponse)
    }

    @Test(
        "policy files: bad revocation objects are errors at their paths",
        arguments: [
            (#"{"version": 1, "revocation": {"depth": "leaf"}, "hosts": [{"host": "a.test"}]}"#, "$.revocation.mode: missing: off, soft-fail or hard-fail"),
            (
                #"{"version": 1, "revocation": {"mode": "soft"}, "hosts": [{"host": "a.test"}]}"#,
                #"$.revocation.mode: "soft" is not off, soft-fail or hard-fail"#
            ),
            (
                #"{"version": 1, "hosts": [{"host": "a.test", "revocation": {"mode": "hard-fail", "depth": "all"}}]}"#,
                #"$.hosts[0].revocation.depth: "all" is not leaf or chain"#
            ),
            (#"{"version": 1, "hosts": [{"host": "a.test", "revocation": {"mode": "hard-fail", "ocsp": true}}]}"#, "$.hosts[0].revocation.ocsp: unknown key"),
            (#"{"version": 1, "hosts": [{"host": "a.test", "revocation": "hard-fail"}]}"#, "$.hosts[0].revocation: expected an object, found a string"),
            (
                #"{"version": 1, "revocation": {"mode": "soft-fail", "cacheDirectory": ""}, "hosts": [{"host": "a.test"}]}"#,
                "$.revocation.cacheDirectory: not a folder path"
            ),
            (#"{"version": 1, "hosts": [{"host": "a.test", "crls": [], "revocation": {"mode": "off"}}]}"#, ""),
        ])
    func policyFileErrors(json: String, expected: String) {
        let problems = Self.problems(json)
        if expected.isEmpty {
            #expect(problems.isEmpty, "\(problems)")
        } else {
            #expect(problems.contains { $0.hasPrefix(expected) }, "\(problems)")
        }
    }

    @Test("policy files: crls beside a revocation object are one more source; beside revocation off they are an error")
    func crlsBesideRevocation() throws {
        let directory = try PolicyFixtures.temporaryDirectory()
        let der = try LabCRL.issue(LabCRLSpec(), signer: Self.fixtures.pki.intermediateIssuer)
        try Data(der).write(to: URL(fileURLWithPath: directory + "/ca.crl"))
        let soft = try PolicyFile.parse(
            Array(#"{"version": 1, "crls": ["ca.crl"], "revocation": {"mode": "soft-fail"}, "hosts": [{"host": "a.test"}]}"#.utf8),
            baseDirectory: directory, source: "test")
        let a = try #require(Self.revocation(soft, "a.test"))
        #expect(a.mode == .softFail && a.revocationLists.count == 1)
        do {
            _ = try PolicyFile.parse(
                Array(#"{"version": 1, "crls": ["ca.crl"], "hosts": [{"host": "a.test", "revocation": {"mode": "off"}}]}"#.utf8),
                baseDirectory: directory, source: "test")
            Issue.record("crls with revocation off were accepted")
        } catch {
            #expect(
                error.problems.map(\.description).contains { $0.hasPrefix("$.hosts[0].revocation.mode: revocation is off, but crls are given") }, "\(error)")
        }
        // Without a revocation object, crls keep the 0.1 meaning.
        let legacy = try PolicyFile.parse(
            Array(#"{"version": 1, "hosts": [{"host": "a.test", "crls": ["ca.crl"]}]}"#.utf8), baseDirectory: directory, source: "test")
        #expect(Self.revocation(legacy, "a.test")?.mode == .hardFail)
    }

    // MARK: - Signed pin sets

    static func document(revocation: String? = nil, hostRevocation: String? = nil, serial: Int64 = 3) throws -> PinSetDocument {
        let top = revocation.map { #", "revocation": \#($0)"# } ?? ""
        let host = hostRevocation.map { #", "revocation": \#($0)"# } ?? ""
        let json = #"{"version": 1\#(top), "hosts": [{"host": "\#(PolicyFixtures.host)", "pins": ["\#(F.rootPin)", "\#(F.backupPin)"]\#(host)}]}"#
        var chain = PinSetChain(rules: try F.rules())
        let outcome = try chain.accept(try F.sign(serial: serial, policy: Array(json.utf8)))
        #expect(outcome == .accepted(serial: serial))
        return try #require(chain.current)
    }

    static func baseline(_ revocation: RevocationPolicy) -> TrustPolicy {
        TrustPolicy(rules: [TrustPolicy.Rule(try! HostPattern(PolicyFixtures.host), HostTrustPolicy(revocation: revocation))], unmatched: nil)
    }

    @Test("a signed pin set names mode and depth; a folder or any other key in its revocation object is refused")
    func pinSetProfile() throws {
        let document = try Self.document(revocation: #"{"mode": "soft-fail"}"#, hostRevocation: #"{"mode": "hard-fail", "depth": "chain"}"#)
        #expect(document.revocation.everyHost == PinSetRevocation.Setting(mode: .softFail, depth: nil))
        #expect(document.revocation.setting(forEntry: try HostPattern(PolicyFixtures.host)) == PinSetRevocation.Setting(mode: .hardFail, depth: .chain))
        for (object, problem) in [
            (#"{"mode": "soft-fail", "cacheDirectory": "/tmp/x"}"#, "$.revocation.cacheDirectory: a signed pin set changes pins only"),
            (#"{"mode": "soft-fail", "crls": ["a.crl"]}"#, "$.revocation.crls: unknown key"),
            (#"{"depth": "leaf"}"#, "$.revocation.mode: missing"),
        ] {
            let json =
                #"{"version": 1, "revocation": \#(object), "hosts": [{"host": "\#(PolicyFixtures.host)", "pins": ["\#(F.rootPin)", "\#(F.backupPin)"]}]}"#
            do {
                _ = try F.sign(serial: 4, policy: Array(json.utf8))
                Issue.record("signed: \(object)")
            } catch let error as PinSetError {
                #expect(error.problems.map(\.description).contains { $0.hasPrefix(problem) }, "\(error.problems)")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test(
        "a signed pin set strengthens the baseline's revocation and never weakens it",
        arguments: [
            // (baseline mode, baseline depth, document, expected mode, expected depth, a note about weakening)
            (RevocationMode.off, RevocationDepth.chain, #"{"mode": "soft-fail"}"#, RevocationMode.softFail, RevocationDepth.chain, false),
            (.softFail, .leaf, #"{"mode": "hard-fail", "depth": "chain"}"#, .hardFail, .chain, false),
            (.softFail, .chain, #"{"mode": "off"}"#, .softFail, .chain, true),
            (.hardFail, .chain, #"{"mode": "soft-fail", "depth": "leaf"}"#, .hardFail, .chain, true),
            (.softFail, .chain, #"{"mode": "hard-fail", "depth": "leaf"}"#, .hardFail, .chain, true),
        ])
    func overlay(baselineMode: RevocationMode, baselineDepth: RevocationDepth, setting: String, mode: RevocationMode, depth: RevocationDepth, weaker: Bool)
        throws
    {
        let baseline = Self.baseline(RevocationPolicy(mode: baselineMode, depth: baselineDepth))
        let updated = baseline.overlaying(try Self.document(revocation: setting), rules: try F.rules())
        let resolution = updated.resolve(PolicyFixtures.host, at: PolicyFixtures.now)
        #expect(resolution.policy?.revocation.mode == mode && resolution.policy?.revocation.depth == depth, "\(resolution.notes)")
        #expect(resolution.notes.contains { $0.contains("never weaken it") } == weaker, "\(resolution.notes)")
        // Once the document expires, the baseline decides again.
        let later = updated.resolve(PolicyFixtures.host, at: PolicyFixtures.now + 60 * LabClock.day)
        #expect(later.policy?.revocation.mode == baselineMode && later.policy?.revocation.depth == baselineDepth)
        // A client deciding with the overlay asks for the staple whenever the document may switch revocation on.
        #expect(updated.handshakeEvidenceForAnyHost == (mode == .off ? [] : .stapledOCSPResponse))
    }

    @Test("a signed pin set cannot switch revocation off: the baseline's CRL still refuses the revoked leaf")
    func cannotSwitchOff() throws {
        let f = Self.fixtures
        let revoking = try CertificateRevocationList(
            derEncoded: LabCRL.issue(
                LabCRLSpec(entries: [LabRevokedEntry(serial: f.pki.leaf.serialNumber, revocationDate: PolicyFixtures.now - LabClock.day, reason: 1)]),
                signer: f.pki.intermediateIssuer))
        let baseline = Self.baseline(RevocationPolicy(mode: .softFail, depth: .leaf, revocationLists: [revoking], fetching: .never))
        for document in [
            try Self.document(revocation: #"{"mode": "off"}"#), try Self.document(hostRevocation: #"{"mode": "off", "depth": "leaf"}"#),
        ] {
            let updated = baseline.overlaying(document, rules: try F.rules())
            let decision = updated.decide(f.trust(f.validChain), forHost: PolicyFixtures.host)
            #expect(decision.validationFailure?.kind == .revoked, "\(decision.explanation)")
            #expect(decision.record.notes.contains { $0.contains("asks for revocation off") }, "\(decision.record.notes)")
        }
    }
}
