import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

/// Certificate Transparency through the one policy value: a host's
/// `HostTrustPolicy.certificateTransparency` puts the CT check on every evaluation of its
/// decisions, whatever evaluator decides, with the connection's TLS SCTs and staple, and the
/// record says what it found.
@Suite("CT in the host policy: decisions and records")
struct CertificateTransparencyPolicyTests {
    typealias F = CTFixture

    func decide(_ host: HostTrustPolicy, _ served: ServedChain, systemRoots: [Certificate]? = nil) -> TrustDecision {
        F.decider(TrustPolicy(host), systemRoots: systemRoots).decide(served)
    }

    @Test("require: a compliant chain is trusted and the record lists every SCT and rule", arguments: CTPolicy.allCases)
    func compliantRecord(policy: CTPolicy) throws {
        let served = ServedChain(certificates: try F.embedded([F.alpha, F.beta]), host: F.host)
        let decision = decide(HostTrustPolicy(certificateTransparency: try F.settings(.require, policy)), served)
        #expect(decision.isTrusted, "\(decision.explanation)")
        let text = decision.explanation
        #expect(text.contains("whole-path checks on every evaluation: Certificate Transparency"), "\(text)")
        #expect(text.contains("Certificate Transparency: passed: compliant with the \(policy) policy"), "\(text)")
        #expect(text.contains("Certificate Transparency: passed: embedded SCT from Lab CT Alpha at 2025-12-22T00:00:01Z: valid"), "\(text)")
        #expect(text.contains("Certificate Transparency: passed: embedded SCT from Lab CT Beta"), "\(text)")
        for rule in policy.rules { #expect(text.contains("rule \(rule.rawValue)"), "\(rule): \(text)") }
        #expect(decision.record.reportedViolations.isEmpty)
        #expect(decision.record.pathChecks.hasPrefix("Certificate Transparency: "), "\(decision.record.pathChecks)")
    }

    @Test("require: a non-compliant chain is refused, and the refusal's record still lists the SCTs and rules")
    func refusedRecord() throws {
        let served = ServedChain(certificates: try F.embedded([F.alpha]), host: F.host)
        let decision = decide(HostTrustPolicy(certificateTransparency: try F.settings(.require)), served)
        #expect(!decision.isTrusted)
        #expect(decision.failure?.kind == .chainValidationFailed, "\(decision)")
        #expect(decision.validationFailure?.kind == .certificateTransparencyNotCompliant, "\(decision)")
        let steps = decision.record.steps.map(\.description)
        #expect(steps.contains { $0.hasPrefix("Certificate Transparency: failed: not compliant with the apple policy") }, "\(steps)")
        #expect(steps.contains { $0.hasPrefix("Certificate Transparency: passed: embedded SCT from Lab CT Alpha") }, "\(steps)")
        #expect(steps.contains { $0.hasPrefix("Certificate Transparency: failed: rule apple.two-scts") }, "\(steps)")
        #expect(decision.record.jsonText.contains("certificateTransparencyNotCompliant"), "\(decision.record.jsonText)")
    }

    @Test("report: a non-compliant chain is accepted with a noted finding, a note, and a reported violation")
    func reportMode() throws {
        let served = ServedChain(certificates: try F.embedded([F.alpha, F.gamma]), host: F.host)
        let decision = decide(HostTrustPolicy(certificateTransparency: try F.settings(.report, .chrome)), served)
        #expect(decision.isTrusted, "\(decision.explanation)")
        let violations = decision.record.reportedViolations
        #expect(violations.count == 1, "\(decision.explanation)")
        #expect(violations.first?.outcome == .noted)
        #expect(violations.first?.reportedFailure?.kind == .certificateTransparencyNotCompliant)
        #expect(violations.first?.reportedFailure?.detail.contains("chrome.embedded-operators (1 of 2 log operators)") == true, "\(violations)")
        #expect(
            decision.record.notes.contains { $0.hasPrefix("Certificate Transparency, report only: not compliant with the chrome policy") },
            "\(decision.record.notes)")
        // A decision observer sees the same record.
        let seen = LockedList<Int>()
        let observed = TrustPolicy(HostTrustPolicy(certificateTransparency: try F.settings(.report, .chrome))).reporting(
            to: nil, observer: { seen.append($0.reportedViolations.count) })
        _ = F.decider(observed).decide(served)
        #expect(seen.values == [1])
    }

    @Test("SCTs from the TLS extension and from a verified staple reach the check through the served chain", arguments: CTPolicy.allCases)
    func deliveredSCTs(policy: CTPolicy) throws {
        let (chain, scts, leaf) = try F.delivered([F.alpha, F.beta])
        let settings = HostTrustPolicy(certificateTransparency: try F.settings(.require, policy))
        #expect(!decide(settings, ServedChain(certificates: chain, host: F.host)).isTrusted, "no SCTs without the extension")
        let viaTLS = decide(settings, ServedChain(certificates: chain, host: F.host, signedCertificateTimestamps: scts))
        #expect(viaTLS.isTrusted, "\(viaTLS.explanation)")
        #expect(viaTLS.explanation.contains("TLS extension SCT from Lab CT Alpha"), "\(viaTLS.explanation)")

        let single = LabOCSPSingleResponse(
            certID: try .of(leaf, issuer: F.pki.intermediate),
            extensions: [.raw(oid: "1.3.6.1.4.1.11129.2.4.5", critical: false, valueDER: LabDER.octetString(scts))])
        let staple = try LabOCSP.issue(LabOCSPResponseSpec(responses: [single]), signer: F.pki.intermediateIssuer)
        let viaOCSP = decide(settings, ServedChain(certificates: chain, host: F.host, stapledOCSPResponse: staple))
        #expect(viaOCSP.isTrusted, "\(viaOCSP.explanation)")
        #expect(viaOCSP.explanation.contains("OCSP response SCT from Lab CT Beta"), "\(viaOCSP.explanation)")
    }

    @Test("a host's own anchor, a user-added anchor and a pinned self-signed certificate are exempt, and the record says so")
    func exemptions() throws {
        let ct = try F.settings(.require)
        let noSCTs = [F.parse(try LabCertificate.issue(F.spec(), subjectKey: F.pki.leafKey, issuer: F.pki.intermediateIssuer)), F.intermediate]
        let served = ServedChain(certificates: noSCTs, host: F.host)
        let exempt = "Certificate Transparency: noted: exempt: the path ends at an anchor that is not a root of the system trust store"
        // The Lab root as the host's own anchor, beside system roots that do not include it.
        let hostAnchor = decide(HostTrustPolicy(anchors: TrustAnchors([F.root], only: true), certificateTransparency: ct), served, systemRoots: [])
        #expect(hostAnchor.isTrusted, "\(hostAnchor.explanation)")
        #expect(hostAnchor.explanation.contains(exempt), "\(hostAnchor.explanation)")
        // A user-added anchor on the trust itself (SecTrustSetAnchorCertificates).
        var trust = PeerTrust(served: served, systemAnchors: .empty, clock: .fixed(F.now))
        trust.setAnchorCertificates([F.root])
        let userAdded = TrustPolicy(HostTrustPolicy(certificateTransparency: ct)).decide(trust, forHost: F.host)
        #expect(userAdded.isTrusted && userAdded.explanation.contains(exempt), "\(userAdded.explanation)")
        // A pinned self-signed certificate.
        let key = try LabKey.shared(.p256, slot: 763)
        var spec = LabPKI.leafSpec(host: F.host, keyAlgorithm: .p256, notBefore: F.now - LabClock.day, notAfter: F.now + 30 * LabClock.day)
        spec.subject = LabName([("CN", F.host)])
        let selfSigned = F.parse(try LabCertificate.issue(spec, subjectKey: key))
        let pinned = PinnedCertificatesTrustEvaluator(certificates: [selfSigned], acceptSelfSignedCertificates: true)
        let pinnedDecision = decide(
            HostTrustPolicy(evaluator: pinned, certificateTransparency: ct), ServedChain(certificates: [selfSigned], host: F.host))
        #expect(pinnedDecision.isTrusted, "\(pinnedDecision.explanation)")
        #expect(pinnedDecision.explanation.contains(exempt), "\(pinnedDecision.explanation)")
        // The same chain is held to CT once its root is a system root, and refused.
        #expect(decide(HostTrustPolicy(certificateTransparency: ct), served).validationFailure?.kind == .certificateTransparencyNotCompliant)
    }

    @Test("a stale log list stops enforcement with a note")
    func staleList() throws {
        let served = ServedChain(certificates: try F.embedded([F.alpha]), host: F.host)
        let decision = decide(HostTrustPolicy(certificateTransparency: try F.settings(.require, timestamp: F.now - 80 * LabClock.day)), served)
        #expect(decision.isTrusted, "\(decision.explanation)")
        #expect(
            decision.explanation.contains(
                "Certificate Transparency: noted: not enforced: the log list from 2025-10-13T00:00:00Z is older than the maximum age of 70 days"),
            "\(decision.explanation)")
        #expect(decision.record.reportedViolations.isEmpty)
    }

    @Test("an evaluator that validates nothing leaves CT unrun, and the record says so")
    func notRun() throws {
        let served = ServedChain(certificates: try F.embedded([F.alpha]), host: F.host)
        let decision = decide(HostTrustPolicy(evaluator: DisabledTrustEvaluator(), certificateTransparency: try F.settings(.require)), served)
        #expect(decision.isTrusted)
        #expect(decision.record.steps.contains(.pathChecksNotRun(["Certificate Transparency"])), "\(decision.explanation)")
    }

    @Test("off is the default and runs nothing")
    func offByDefault() throws {
        #expect(!HostTrustPolicy().certificateTransparency.isOn)
        #expect(CertificateTransparencyPolicy.off.logList == nil && CertificateTransparencyPolicy.off.mode == .off)
        let decision = decide(HostTrustPolicy(), ServedChain(certificates: try F.embedded([F.alpha]), host: F.host))
        #expect(decision.isTrusted && !decision.explanation.contains("Certificate Transparency"))
    }
}

/// A list several threads append to.
final class LockedList<Element: Sendable>: Sendable {
    private let storage = Mutex<[Element]>([])
    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var values: [Element] { storage.withLock { $0 } }
}
