import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import TrustEvaluation

// Shared fixtures of the ServerTrust suites, generated once with ServerTrustLab (never with the
// code under test) and evaluated at the fixed instant `LabClock.reference`.
//
// Key slots 200-239 belong to these suites (TrustEvaluationTests use 100-130, CLITests 40-50).

/// Key slots used here. The same slot always gives the same key.
enum PolicySlot {
    /// `LabPKI.webChain(keySlot: 70)` uses slots 210 (root), 211 (intermediate), 212 (leaf A).
    static let webChain = 70
    static let otherHostLeaf = 213
    static let expiredLeaf = 214
    static let selfSigned = 215
    static let attacker = 216
    static let interceptionRoot = 217
    static let interceptionLeaf = 218
    static let backup = 219
    static let clientOnlyLeaf = 220
    static let secondRoot = 221
}

/// The scenario fixtures of the AFNetworking matrix (genuine, other host, self-signed,
/// expired, …), plus the Charles case.
struct PolicyFixtures: Sendable {
    /// The host every scenario connects to.
    static let host = "api.example.test"
    static let otherHost = "other.example.test"
    static let now = LabClock.reference

    /// The publicly trusted root R and intermediate I shared by A, B and E.
    let root: Certificate
    let intermediate: Certificate
    /// A: valid chain for the host from R/I, as served (leaf, intermediate).
    let validChain: [Certificate]
    /// B: valid chain from the same CA for another host.
    let otherHostChain: [Certificate]
    /// C: self-signed leaf for the host; always pinned.
    let selfSigned: Certificate
    /// D: an attacker's self-signed leaf for the host; never pinned.
    let attacker: Certificate
    /// E: chain from R/I whose leaf expired 30 days before `now`.
    let expiredChain: [Certificate]
    /// X: an interception proxy's root (Charles), trusted by the user.
    let interceptionRoot: Certificate
    /// F: the proxy's leaf for the host, signed by X.
    let interceptedChain: [Certificate]
    /// A leaf for the host with EKU clientAuth only (for the strict serverAuth fix).
    let clientOnlyChain: [Certificate]
    /// A key that is in no chain: the backup pin.
    let backupPin: SPKIPin
    /// The Lab PKI (for issuing more).
    let pki: LabPKI
    /// A generated `SSL_CERT_FILE` holding R and X: the "system" roots of a machine whose user
    /// installed the proxy's root.
    let systemBundlePath: String
    /// The store loaded from it.
    let systemStore: TrustStore
    /// R only: a system without the proxy's root.
    let publicStore: TrustStore

    static let shared: PolicyFixtures = {
        do { return try PolicyFixtures() } catch { fatalError("fixture generation failed: \(error)") }
    }()

    private init() throws {
        let host = Self.host
        let pki = try LabPKI.webChain(host: host, algorithm: .p256, keySlot: PolicySlot.webChain)
        self.pki = pki
        let other = try pki.issueLeaf(host: Self.otherHost, key: LabKey.shared(.p256, slot: PolicySlot.otherHostLeaf))
        let expired = try pki.issueLeaf(
            host: host, key: LabKey.shared(.p256, slot: PolicySlot.expiredLeaf),
            notBefore: Self.now - 400 * LabClock.day, notAfter: Self.now - 30 * LabClock.day)
        let selfSigned = try LabCertificate.issue(
            LabPKI.leafSpec(host: host, keyAlgorithm: .p256), subjectKey: LabKey.shared(.p256, slot: PolicySlot.selfSigned))
        let attacker = try LabCertificate.issue(
            LabPKI.leafSpec(host: host, keyAlgorithm: .p256), subjectKey: LabKey.shared(.p256, slot: PolicySlot.attacker))
        let interceptionKey = try LabKey.shared(.p256, slot: PolicySlot.interceptionRoot)
        let interceptionRoot = try LabCertificate.issue(
            LabCertificateSpec(
                subject: LabName([("O", "Charles Proxy"), ("CN", "Charles Proxy CA")]),
                notBefore: Self.now - LabClock.year, notAfter: Self.now + LabClock.year,
                extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]),
            subjectKey: interceptionKey)
        let intercepted = try LabCertificate.issue(
            LabPKI.leafSpec(host: host, keyAlgorithm: .p256), subjectKey: LabKey.shared(.p256, slot: PolicySlot.interceptionLeaf),
            issuer: LabIssuer(certificate: interceptionRoot, key: interceptionKey))
        var clientSpec = LabPKI.leafSpec(host: host, keyAlgorithm: .p256)
        clientSpec.extensions = clientSpec.extensions.map { ext in
            if case .extendedKeyUsage = ext { return .extendedKeyUsage(["clientAuth"]) }
            return ext
        }
        let clientOnly = try LabCertificate.issue(
            clientSpec, subjectKey: LabKey.shared(.p256, slot: PolicySlot.clientOnlyLeaf), issuer: pki.intermediateIssuer)
        let backupKey = try LabKey.shared(.p256, slot: PolicySlot.backup)

        func parse(_ certificate: LabCertificate) throws -> Certificate { try Certificate(derEncoded: certificate.der) }
        root = try parse(pki.root)
        intermediate = try parse(pki.intermediate)
        validChain = [try parse(pki.leaf), intermediate]
        otherHostChain = [try parse(other), intermediate]
        self.selfSigned = try parse(selfSigned)
        self.attacker = try parse(attacker)
        expiredChain = [try parse(expired), intermediate]
        self.interceptionRoot = try parse(interceptionRoot)
        interceptedChain = [try parse(intercepted)]
        clientOnlyChain = [try parse(clientOnly), intermediate]
        backupPin = try SPKIPin(algorithm: .sha256, digest: SHA256.hash(backupKey.publicKeyInfoDER))

        let directory = NSTemporaryDirectory() + "servertrust-policy-fixtures-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        systemBundlePath = directory + "/ca-certificates.crt"
        try LabPEM.bundle([pki.root, interceptionRoot]).write(toFile: systemBundlePath, atomically: true, encoding: .utf8)
        systemStore = try TrustStore(contentsOf: [systemBundlePath])
        publicStore = TrustStore([root])
    }

    /// A trust for `chain` at the reference instant with the generated system store.
    func trust(_ chain: [Certificate], host: String? = PolicyFixtures.host, store: TrustStore? = nil) -> PeerTrust {
        PeerTrust(certificates: chain, host: host, systemAnchors: store ?? systemStore, clock: .fixed(Self.now))
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "servertrust-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// The repository root: the nearest folder above `file` that holds `Package.swift`, so a test
/// finds the repository's files wherever in the test folders it lives.
func repositoryRoot(_ file: String = #filePath) -> URL {
    var folder = URL(fileURLWithPath: file).deletingLastPathComponent()
    while folder.path != "/", !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
        folder = folder.deletingLastPathComponent()
    }
    return folder
}
