import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import TrustEvaluation

/// Key slots of the cross-sign fixtures (within this target's 200-239).
enum CrossSignSlot {
    static let oldRoot = 236
    static let newRoot = 237
    static let intermediate = 238
    static let leaf = 239
}

/// A server with a cross-signed chain, as Let's Encrypt's: the leaf for ``PolicyFixtures/host``,
/// an intermediate signed by new root B, and the same intermediate key cross-signed by old root
/// A; both roots are trusted (the "system" store holds A, B and the interception proxy's root).
/// Generated with ServerTrustLab, judged at ``PolicyFixtures/now``.
struct CrossSignFixture: Sendable {
    let oldRoot: Certificate
    let newRoot: Certificate
    /// The intermediate as B issued it, and the cross-sign: the same name and key, issued by A.
    let intermediateByNew: Certificate
    let intermediateByOld: Certificate
    let leaf: Certificate
    /// The same leaf, expired 30 days before ``PolicyFixtures/now``.
    let expiredLeaf: Certificate
    /// A, B and the interception proxy's root (a user who installed it).
    let store: TrustStore
    /// B's key also as an intermediate cross-signed by A (ISRG Root X2 under X1).
    let newRootByOld: Certificate
    /// A leaf issued directly by B, for the root-as-intermediate shape.
    let leafUnderNewRoot: Certificate

    static let shared: CrossSignFixture = {
        do { return try CrossSignFixture() } catch { preconditionFailure("cross-sign fixture: \(error)") }
    }()

    private init() throws {
        let now = PolicyFixtures.now
        let oldKey = try LabKey.shared(.p256, slot: CrossSignSlot.oldRoot)
        let newKey = try LabKey.shared(.p256, slot: CrossSignSlot.newRoot)
        let intermediateKey = try LabKey.shared(.p256, slot: CrossSignSlot.intermediate)
        let leafKey = try LabKey.shared(.p256, slot: CrossSignSlot.leaf)
        func root(_ name: String, _ key: LabKey) throws -> LabCertificate {
            try LabCertificate.issue(
                LabCertificateSpec(
                    subject: LabName([("O", "Cross Lab"), ("CN", name)]), notBefore: now - 10 * LabClock.year, notAfter: now + 10 * LabClock.year,
                    extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]),
                subjectKey: key)
        }
        func ca(_ name: String, pathLength: Int?) -> LabCertificateSpec {
            LabCertificateSpec(
                subject: LabName([("O", "Cross Lab"), ("CN", name)]), notBefore: now - 2 * LabClock.year, notAfter: now + 3 * LabClock.year,
                extensions: [
                    .basicConstraints(ca: true, pathLength: pathLength), .keyUsage([.digitalSignature, .keyCertSign, .cRLSign]),
                    .subjectKeyIdentifier(), .authorityKeyIdentifier(),
                ])
        }
        let old = try root("Cross Lab Old Root A", oldKey)
        let new = try root("Cross Lab New Root B", newKey)
        let oldIssuer = LabIssuer(certificate: old, key: oldKey)
        let newIssuer = LabIssuer(certificate: new, key: newKey)
        let byNew = try LabCertificate.issue(ca("Cross Lab Issuing CA", pathLength: 0), subjectKey: intermediateKey, issuer: newIssuer)
        let byOld = try LabCertificate.issue(ca("Cross Lab Issuing CA", pathLength: 0), subjectKey: intermediateKey, issuer: oldIssuer)
        let issuing = LabIssuer(certificate: byNew, key: intermediateKey)
        let leaf = try LabCertificate.issue(LabPKI.leafSpec(host: PolicyFixtures.host, keyAlgorithm: .p256), subjectKey: leafKey, issuer: issuing)
        let expired = try LabCertificate.issue(
            LabPKI.leafSpec(
                host: PolicyFixtures.host, keyAlgorithm: .p256, notBefore: now - 90 * LabClock.day, notAfter: now - 30 * LabClock.day),
            subjectKey: leafKey, issuer: issuing)
        var crossSpec = ca("Cross Lab New Root B", pathLength: nil)
        crossSpec.notAfter = now + 5 * LabClock.year
        let crossNew = try LabCertificate.issue(crossSpec, subjectKey: newKey, issuer: oldIssuer)
        let direct = try LabCertificate.issue(LabPKI.leafSpec(host: PolicyFixtures.host, keyAlgorithm: .p256), subjectKey: leafKey, issuer: newIssuer)

        func parse(_ certificate: LabCertificate) throws -> Certificate { try Certificate(derEncoded: certificate.der) }
        oldRoot = try parse(old)
        newRoot = try parse(new)
        intermediateByNew = try parse(byNew)
        intermediateByOld = try parse(byOld)
        self.leaf = try parse(leaf)
        expiredLeaf = try parse(expired)
        newRootByOld = try parse(crossNew)
        leafUnderNewRoot = try parse(direct)
        store = TrustStore([oldRoot, newRoot, PolicyFixtures.shared.interceptionRoot], sources: ["cross-sign system store"])
    }

    /// The store with its roots in the other order (the root a verifier tries first changes).
    var storeNewFirst: TrustStore {
        TrustStore([newRoot, oldRoot, PolicyFixtures.shared.interceptionRoot], sources: ["cross-sign system store"])
    }

    /// What the server sends, in both orders.
    var servedOrders: [[Certificate]] {
        [[leaf, intermediateByNew, intermediateByOld], [leaf, intermediateByOld, intermediateByNew]]
    }

    /// A trust for `chain` against `store` at the reference instant.
    func trust(_ chain: [Certificate], store: TrustStore? = nil) -> PeerTrust {
        PeerTrust(certificates: chain, host: PolicyFixtures.host, systemAnchors: store ?? self.store, clock: .fixed(PolicyFixtures.now))
    }
}
