import CertificateParsing
import Foundation
import ServerTrust
import Testing

@Suite("Decision records")
struct DecisionRecordTests {
    let f = PolicyFixtures.shared
    let host = PolicyFixtures.host

    @Test("an acceptance names the policy, anchors, chain, host-name result and matched pin")
    func acceptance() {
        let policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [f.intermediate], semantics: .compat)
        let record = policy.evaluate(f.trust(f.validChain), forDomain: host).record
        #expect(record.isTrusted)
        #expect(record.evaluator == "SecurityPolicy")
        #expect(record.mode == "certificate")
        #expect(record.policy.hasPrefix("compat: pinningMode=certificate, allowInvalidCertificates=false, validatesDomainName=true"))
        #expect(record.anchors.hasPrefix("custom anchors only: \"\(f.intermediate.subject.rfc4514)\""))
        #expect(record.chain == [f.validChain[0].subject.rfc4514, f.intermediate.subject.rfc4514])
        #expect(record.hostname == .matched(host))
        #expect(record.matchedPin == "certificate \"\(f.intermediate.subject.rfc4514)\" (chain position 1) is pinned")
        #expect(
            record.steps == [
                .validationPolicy(.sslServer(host: host)),
                .evaluation(.trustAnchors, failure: nil),
                .anchors(.pinnedCertificates(count: 1)),
                .evaluation(.pinnedCertificates, failure: nil),
                .pinCandidates(.validatedPath, count: 2),
            ])
        #expect(
            record.steps.map(\.description) == [
                "policy: SSL server for \(host)",
                "evaluation against the trust's anchors: trusted",
                "anchors := the 1 pinned certificate only (SecTrustSetAnchorCertificates)",
                "evaluation against the pinned certificates: trusted",
                "pins compared with the validated path (2 certificates, anchor included)",
            ])
        #expect(record.validatedPath?.certificates == f.validChain)
        #expect(record.servedPins.isEmpty && record.pinFailureMessage == nil)
        #expect(record.evaluationTime == PolicyFixtures.now)
    }

    @Test("a host-name failure shows the names the leaf is valid for")
    func hostnameMismatch() {
        let record = SecurityPolicy().evaluate(f.trust(f.otherHostChain), forDomain: host).record
        #expect(record.hostname == .mismatched(host, validFor: ["other.example.test"]))
        #expect(record.failure?.kind == .hostValidationFailed)
    }

    @Test("the explanation and JSON carry the same facts")
    func renderings() throws {
        let pins = try PinningConfiguration([PinnedHost(pattern: HostPattern(host), pins: [SPKIPin(certificate: f.selfSigned), f.backupPin])])
        let record = SPKIPinsTrustEvaluator(configuration: pins).decide(f.trust(f.validChain), forHost: host).record
        let text = record.explanation
        #expect(text.hasPrefix("decision:  rejected — spkiPinningFailed (host \(host))"))
        #expect(text.contains("time:      2026-01-01T00:00:00Z"))
        #expect(text.contains("Certificate pinning failure!"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(record.jsonText.utf8)) as? [String: Any])
        #expect(object["trusted"] as? Bool == false)
        #expect((object["failure"] as? [String: Any])?["kind"] as? String == "spkiPinningFailed")
        #expect((object["servedPins"] as? [[String: Any]])?.first?["pin"] as? String == "sha256/" + f.validChain[0].spkiSHA256Base64)
        #expect(object["configuredPins"] as? [String] == pins.hosts[0].pins.map(\.description))
        #expect(object["matchedPin"] is NSNull)
        #expect(object["mode"] as? String == "spki")
    }

    @Test("error descriptions are one grep-friendly line")
    func errorDescriptions() {
        #expect(TrustEvaluationError(.noRequiredEvaluator, host: "a.test", "no evaluator").description == "noRequiredEvaluator (host a.test): no evaluator")
        #expect(
            PolicyConfigurationError(.invalidPin, path: "$.hosts[2].pins[0]", "not a valid sha256 pin").description
                == "$.hosts[2].pins[0]: not a valid sha256 pin")
        #expect(
            SecurityPolicy().evaluate(f.trust(f.validChain), forDomain: host).description
                == "accepted \(host):443 by SecurityPolicy: trusted (strict: pinningMode=none, allowInvalidCertificates=false, validatesDomainName=true, pinnedCertificates=0)"
        )
    }
}
