import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import TrustEvaluation

// Certificate Transparency fixtures of the ServerTrust suites: a Lab web PKI whose root plays
// the system root, three Lab logs of two operators, their log list as JSON (read by the
// library's reader), and chains with SCTs embedded or delivered. Keys use slots 760-764 and
// LabPKI keySlot 256 (768-770). Everything is decided at LabClock.reference.

enum CTFixture {
    static let host = "ct.policy.test"
    static let now = LabClock.reference

    static let pki: LabPKI = {
        do { return try LabPKI.webChain(host: host, keySlot: 256) } catch { fatalError("CT fixture PKI: \(error)") }
    }()
    static var root: Certificate { parse(pki.root) }
    static var intermediate: Certificate { parse(pki.intermediate) }

    /// Operator A runs alpha and gamma, operator B runs beta.
    static let alpha = log("Lab CT Alpha", "Operator A", 760)
    static let beta = log("Lab CT Beta", "Operator B", 761)
    static let gamma = log("Lab CT Gamma", "Operator A", 762)
    static let logs = [alpha, beta, gamma]

    static func log(_ name: String, _ operatorName: String, _ slot: Int) -> LabCTLog {
        do { return try LabCTLog(name: name, operatorName: operatorName, key: LabKey.shared(.p256, slot: slot)) } catch { fatalError("CT log: \(error)") }
    }

    static func parse(_ certificate: LabCertificate) -> Certificate {
        do { return try Certificate(derEncoded: certificate.der) } catch { fatalError("CT fixture: \(error)") }
    }

    /// The v3 JSON of a list of `logs` published at `timestamp`.
    static func listJSON(_ logs: [LabCTLog] = logs, timestamp: Int64 = now - LabClock.day) throws -> [UInt8] {
        try LabCTLogList(logs: logs, timestamp: timestamp).json()
    }

    /// The list, through the library's JSON reader.
    static func logList(_ logs: [LabCTLog] = logs, timestamp: Int64 = now - LabClock.day) throws -> CTLogList {
        try CTLogList(json: listJSON(logs, timestamp: timestamp))
    }

    static func spec() -> LabCertificateSpec {
        LabPKI.leafSpec(host: host, keyAlgorithm: .p256, notBefore: now - 10 * LabClock.day, notAfter: now + 80 * LabClock.day)
    }

    /// The served chain (leaf, intermediate) of a leaf with SCTs from `logs` embedded.
    static func embedded(_ logs: [LabCTLog], timestamp: UInt64? = nil) throws -> [Certificate] {
        let issued = try LabCertificate.issueWithEmbeddedSCTs(spec(), subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, logs: logs, timestamp: timestamp)
        return [parse(issued.certificate), intermediate]
    }

    /// A leaf without SCTs, and a TLS SCT list over it from `logs`.
    static func delivered(_ logs: [LabCTLog]) throws -> (chain: [Certificate], scts: [UInt8], leaf: LabCertificate) {
        let leaf = try LabCertificate.issue(spec(), subjectKey: pki.leafKey, issuer: pki.intermediateIssuer)
        let scts = try logs.map { try $0.sign(.certificate(leaf), timestamp: UInt64(now - 60) * 1000) }
        return ([parse(leaf), intermediate], LabSCT.list(scts), leaf)
    }

    static func settings(_ mode: CTMode, _ policy: CTPolicy = .apple, timestamp: Int64 = now - LabClock.day) throws -> CertificateTransparencyPolicy {
        CertificateTransparencyPolicy(mode: mode, policy: policy, logList: try logList(timestamp: timestamp))
    }

    /// A decider whose system roots are the Lab root (or `systemRoots`), at the reference instant.
    static func decider(_ policy: TrustPolicy, systemRoots: [Certificate]? = nil) -> ServerTrustDecider {
        ServerTrustDecider(policy: policy, anchors: TrustStore(systemRoots ?? [root]), clock: .fixed(now))
    }
}
