import CertificateParsing
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

@Suite("PeerTrust (the SecTrust analogue)")
struct PeerTrustTests {
    let f = PolicyFixtures.shared

    @Test("anchors: system until set; setAnchorCertificates trusts only them; anchorsOnly=false adds them")
    func anchorModes() {
        var trust = f.trust(f.interceptedChain, store: f.publicStore)
        #expect(trust.anchorMode == .systemOnly)
        #expect(!trust.evaluate().isTrusted)
        trust.anchors = [f.interceptionRoot]
        #expect(trust.anchorMode == .customAndSystem)
        #expect(trust.evaluate().isTrusted)
        trust.setAnchorCertificates([f.root])
        #expect(trust.anchorMode == .customOnly)
        #expect(!trust.evaluate().isTrusted)
        var valid = f.trust(f.validChain)
        valid.setAnchorCertificates([f.interceptionRoot])
        #expect(!valid.evaluate().isTrusted, "custom-only anchors drop the system roots")
        valid.anchorsOnly = false
        #expect(valid.evaluate().isTrusted)
    }

    @Test("the trust's clock is the evaluation instant (SecTrustSetVerifyDate is a fixed clock)")
    func verifyTime() {
        var trust = f.trust(f.expiredChain)
        #expect(trust.evaluate().failure?.kind == .expired)
        trust.clock = .fixed(PolicyFixtures.now - 100 * 86_400)
        #expect(trust.evaluate().isTrusted)
    }

    @Test("the default policy is the SSL server policy for the host")
    func defaultPolicy() {
        let trust = f.trust(f.otherHostChain)
        #expect(trust.policy.kind == .sslServer)
        #expect(trust.evaluate().failure?.kind == .hostnameMismatch)
    }

    @Test("an empty chain is rejected, not a crash")
    func emptyChain() {
        let trust = f.trust([])
        #expect(trust.evaluate().failure?.kind == .invalidCertificate)
        #expect(SecurityPolicy(semantics: .compat).evaluate(trust, forDomain: PolicyFixtures.host).isTrusted == false)
    }

    @Test("certificateChain: the validated chain, else the served chain and the anchor that signed it")
    func certificateChain() throws {
        #expect(f.trust(f.validChain).certificateChain() == f.validChain + [f.root])
        #expect(f.trust(f.expiredChain).certificateChain() == f.expiredChain + [f.root], "built although expired")
        #expect(f.trust([f.attacker]).certificateChain() == [f.attacker])
        // A certificate that merely names the root as issuer, signed by another key, does not
        // bring the root's key into the chain.
        let forged = try LabCertificate.issue(
            LabPKI.leafSpec(host: PolicyFixtures.host, keyAlgorithm: .p256), subjectKey: LabKey.shared(.p256, slot: PolicySlot.attacker),
            issuer: LabIssuer(certificate: f.pki.root, key: LabKey.shared(.p256, slot: PolicySlot.attacker)))
        let certificate = try Certificate(derEncoded: forged.der)
        #expect(certificate.issuer == f.root.subject)
        #expect(f.trust([certificate]).certificateChain() == [certificate])
    }
}
