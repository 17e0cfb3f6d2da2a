import Foundation
import ServerTrustLab
import Testing

@Suite("servertrust inspect: embedded SCTs")
struct InspectSCTTests {
    @Test("each embedded SCT is shown with its log ID and time")
    func embeddedSCTs() async throws {
        let pki = try LabPKI.webChain(host: "ct.example.test", keySlot: 215)
        let logs = try [660, 661].map { try LabCTLog(name: "Lab \($0)", operatorName: "Operator \($0)", key: LabKey.shared(.p256, slot: $0)) }
        let spec = LabPKI.leafSpec(host: "ct.example.test", keyAlgorithm: .p256)
        let issued = try LabCertificate.issueWithEmbeddedSCTs(
            spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, logs: logs, timestamp: UInt64(LabClock.reference) * 1000 + 123)
        let dir = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/leaf.pem"
        try issued.certificate.pem.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await CLIRunner.run(["inspect", path])
        #expect(result.status == 0, "\(result)")
        let sctLines = result.stdout.split(separator: "\n").filter { $0.hasPrefix("  SCT ") }
        #expect(sctLines.count == 2, "\(result)")
        for (line, log) in zip(sctLines, logs) {
            #expect(line.hasSuffix("log \(Data(log.logID).base64EncodedString()) at 2026-01-01T00:00:00Z"), "\(result)")
        }
        // A certificate without SCTs shows none.
        try pki.leaf.pem.write(toFile: path, atomically: true, encoding: .utf8)
        let plain = try await CLIRunner.run(["inspect", path])
        #expect(!plain.stdout.contains("SCT"), "\(plain)")
    }
}
