import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

/// Signed pin sets and Certificate Transparency: a document may raise a host's CT mode and name
/// its policy, never lower the mode, name a log list or stretch the list's maximum age.
///
/// The attacker here holds a stolen signing key and a misissued certificate that no log has
/// seen. Were a document allowed to turn CT off (or down to report), that key would make a
/// CT-protected host accept the certificate; it may only ask for more.
@Suite("signed pin sets raise Certificate Transparency, never lower it")
struct PinSetCTTests {
    typealias P = PinSetFixture
    typealias F = CTFixture

    /// The fixtures' pins for the pin-set host, with `extra` added to its entry and `top` to the
    /// document's top level.
    static func document(entry extra: String = "", top: String = "") -> [UInt8] {
        let pins = "[\"\(P.rootPin)\", \"\(P.backupPin)\"]"
        return Array(#"{"version": 1, \#(top)"hosts": [{"host": "\#(PolicyFixtures.host)", "pins": \#(pins)\#(extra)}]}"#.utf8)
    }

    /// `baseline` with the document signed and laid over it.
    static func overlay(_ baseline: TrustPolicy, _ payload: [UInt8], expiresAt: Int64 = P.now + 30 * P.day) throws -> TrustPolicy {
        var chain = PinSetChain(rules: try P.rules())
        let envelope = try P.sign(serial: 7, policy: payload, expiresAt: expiresAt)
        #expect(try chain.accept(envelope) == .accepted(serial: 7))
        return baseline.overlaying(chain.current, rules: try P.rules())
    }

    static func baseline(_ ct: CertificateTransparencyPolicy) -> TrustPolicy {
        TrustPolicy(HostTrustPolicy(certificateTransparency: ct))
    }

    func resolved(_ policy: TrustPolicy, at time: Int64 = P.now) -> (CertificateTransparencyPolicy?, [String]) {
        let resolution = policy.resolve(PolicyFixtures.host, at: time)
        return (resolution.policy?.certificateTransparency, resolution.notes)
    }

    @Test("a document raises off or report to require, per host entry or for every host, and may name the policy")
    func raises() throws {
        for (extra, top) in [
            (#", "certificateTransparency": {"mode": "require", "policy": "chrome"}"#, ""),
            ("", #""certificateTransparency": {"mode": "require", "policy": "chrome"}, "#),
        ] {
            for base in [CTMode.off, .report] {
                let policy = try Self.overlay(Self.baseline(try F.settings(base)), Self.document(entry: extra, top: top))
                let (ct, notes) = resolved(policy)
                #expect(ct?.mode == .require && ct?.policy == .chrome, "\(base) \(extra)\(top): \(notes)")
                #expect(ct?.logList != nil)
                #expect(notes.contains { $0.hasPrefix("CT require with the chrome policy from signed pin set 7") }, "\(notes)")
            }
        }
        // The top level covers hosts the document has no entry for.
        let everywhere = try Self.overlay(Self.baseline(try F.settings(.off)), Self.document(top: #""certificateTransparency": {"mode": "report"}, "#))
        #expect(everywhere.resolve("elsewhere.example.test", at: P.now).policy?.certificateTransparency.mode == .report)
    }

    @Test("a document cannot lower the mode: require stays require, and the record says the document asked", arguments: ["off", "report"])
    func cannotLower(mode: String) throws {
        let payload = Self.document(entry: #", "certificateTransparency": {"mode": "\#(mode)"}"#)
        let policy = try Self.overlay(Self.baseline(try F.settings(.require)), payload)
        let (ct, notes) = resolved(policy)
        #expect(ct?.mode == .require, "\(notes)")
        #expect(notes.contains { $0.contains("asks for CT \(mode)") && $0.contains("a signed pin set cannot lower CT") }, "\(notes)")
    }

    @Test("without a baseline log list a raise cannot apply, and the record says why")
    func noLogList() throws {
        let policy = try Self.overlay(Self.baseline(.off), Self.document(top: #""certificateTransparency": {"mode": "require"}, "#))
        let (ct, notes) = resolved(policy)
        #expect(ct?.isOn == false)
        #expect(notes.contains { $0.contains("the baseline policy has no CT log list for it (a signed pin set cannot name one): CT stays off") }, "\(notes)")
    }

    @Test("an expired document raises nothing: the baseline decides")
    func expired() throws {
        let policy = try Self.overlay(
            Self.baseline(try F.settings(.report)), Self.document(top: #""certificateTransparency": {"mode": "require"}, "#), expiresAt: P.now + P.day)
        #expect(resolved(policy, at: P.now + 2 * P.day).0?.mode == .report)
        #expect(resolved(policy).0?.mode == .require)
    }

    @Test("a log list, its maximum age or an unknown member in a document's CT is refused at its path", arguments: ["logList", "maxLogListAge", "logs"])
    func refusedMembers(member: String) throws {
        for payload in [
            Self.document(entry: #", "certificateTransparency": {"mode": "require", "\#(member)": "x"}"#),
            Self.document(top: #""certificateTransparency": {"mode": "require", "\#(member)": "x"}, "#),
        ] {
            do {
                _ = try P.sign(serial: 7, policy: payload)
                Issue.record("signed: \(String(decoding: payload, as: UTF8.self))")
            } catch let error as PinSetError {
                let problem = error.problems.first { $0.path.hasSuffix("certificateTransparency.\(member)") }
                #expect(problem?.kind == (member == "logs" ? .unknownKey : .notAllowedInPinSet), "\(error.problems)")
                #expect(problem?.message.contains("allowed: mode, policy") == true, "\(error.problems)")
            }
        }
    }

    @Test("an empty or misspelt CT member is refused", arguments: [#"{}"#, #"{"mode": "enforce"}"#, #"{"policy": "mozilla"}"#])
    func badMember(member: String) throws {
        #expect(throws: PinSetError.self) { try P.sign(serial: 7, policy: Self.document(top: #""certificateTransparency": \#(member), "#)) }
    }

    @Test("the document carries its CT requirements")
    func documentField() throws {
        var chain = PinSetChain(rules: try P.rules())
        let payload = Self.document(entry: #", "certificateTransparency": {"policy": "apple"}"#, top: #""certificateTransparency": {"mode": "report"}, "#)
        _ = try chain.accept(try P.sign(serial: 7, policy: payload))
        let document = try #require(chain.current)
        #expect(document.certificateTransparency.count == 2)
        #expect(document.certificateTransparency.contains { $0.pattern == nil && $0.mode == .report && $0.policy == nil })
        #expect(document.certificateTransparency.contains { $0.pattern?.description == PolicyFixtures.host && $0.mode == nil && $0.policy == .apple })
    }
}
