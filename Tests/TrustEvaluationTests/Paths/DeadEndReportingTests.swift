import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// When every candidate path fails, the failure reported is that of the most promising one: a
/// path that reached a trust anchor before a whole-path check failed, else the longest. A dead
/// end tried before or after it (a same-name CA with another key, an expired twin) must not
/// hide the real cause.
@Suite("Failure of the most promising path")
struct DeadEndReportingTests {
    /// A CA with the issuing CA's name and another key: its signature on the leaf fails.
    static func impostor(of chain: TrustChain) throws -> LabCertificate {
        try chain.root.issueCA(
            TrustPKI.caSpec("Trust Test Issuing CA", pathLength: 0), key: TrustPKI.key(TrustSlot.otherIntermediate)
        ).certificate
    }

    @Test("a path that reached the anchor and failed revocation beats a later bad-signature dead end", arguments: [false, true])
    func revocationBeatsBadSignature(impostorFirst: Bool) throws {
        let chain = try TrustChain.make()
        let impostor = try Self.impostor(of: chain)
        let crls = [
            try TrustPKI.crl(from: chain.root, revoking: [chain.intermediate.certificate.serialNumber]), try TrustPKI.crl(from: chain.intermediate),
        ]
        let sent = impostorFirst ? [impostor, chain.intermediate.certificate] : [chain.intermediate.certificate, impostor]
        let outcome = try TrustPKI.validate(chain.leaf, sent, anchors: [chain.root.certificate], checks: [CRLCheck(crls)])
        expectRejected(outcome, .revoked, at: 1)
    }

    @Test("a path that reached the anchor and failed policy processing beats a bad-signature dead end")
    func policyBeatsBadSignature() throws {
        let chain = try TrustChain.make()
        let impostor = try Self.impostor(of: chain)
        var policy = TrustPKI.serverPolicy()
        policy.policyInputs.initialExplicitPolicy = true
        let outcome = try TrustPKI.validate(chain.leaf, [chain.intermediate.certificate, impostor], anchors: [chain.root.certificate], policy: policy)
        // The chain has no certificatePolicies, so an explicit policy cannot be met.
        expectRejected(outcome, .policyViolation, at: 1)
    }

    @Test("the longer path's failure beats a shorter dead end tried after it")
    func longestPath() throws {
        let root = try TrustPKI.root()
        let other = try TrustPKI.root("Trust Test Other Root", slot: TrustSlot.otherRoot)
        // The leaf's issuer exists twice: one certified by an unknown root (two signatures
        // verify, then no anchor), and an expired twin of it under the trusted root.
        let lost = try other.issueCA("Trust Test Issuing CA", slot: TrustSlot.intermediate, pathLength: 0)
        let expired = try root.issueCA(
            TrustPKI.caSpec(
                "Trust Test Issuing CA", pathLength: 0, notBefore: TrustPKI.now - 3 * LabClock.year, notAfter: TrustPKI.now - LabClock.year),
            key: TrustPKI.key(TrustSlot.intermediate))
        let leaf = try lost.issueLeaf()
        let outcome = try TrustPKI.validate(leaf, [lost.certificate, other.certificate, expired.certificate], anchors: [root.certificate])
        // Both twins have the leaf's key identifier; the path through `lost` is longer
        // (leaf ← lost ← other root) and ends at an issuer nobody trusts.
        expectRejected(outcome, .untrustedRoot, at: 2)
    }
}
