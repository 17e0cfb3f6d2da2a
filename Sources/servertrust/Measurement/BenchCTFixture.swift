import Foundation
import ServerTrustLab

/// `servertrust bench ct-fixture --out DIR [--host H]`: the files `scripts/https-ct.sh` serves
/// and checks against, made with the Lab (CT needs SCTs signed by logs over a precertificate,
/// which the openssl command cannot make): a P-256 root, issuing CA and leaf valid around now
/// whose leaf embeds two SCTs from two Lab logs of different operators, and a Chrome v3 log
/// list of those logs. Compliant under Apple's and Chrome's policies, so `--ct require`
/// accepts it and the bench measures the check's cost, not a refusal.
enum BenchCTFixture {
    static let usage = """
        usage: servertrust bench ct-fixture --out DIR [--host HOST]

        Writes DIR/root.pem, DIR/chain.pem (leaf with two embedded SCTs, then the issuing CA),
        DIR/leaf.key and DIR/loglist.json (the two logs, Chrome's v3 schema). HOST defaults to
        www.example.test.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments, flags: ["--help"], values: ["--out", "--host"])
        if options.flags.contains("--help") {
            print(usage)
            return ExitCode.success
        }
        guard let directory = options.value("--out") else { throw CLIError("--out DIR is required (usage: servertrust bench ct-fixture --help)") }
        let host = options.value("--host") ?? "www.example.test"
        let now = Int64(Date().timeIntervalSince1970)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let pki = try LabPKI.webChain(host: host, leafNotBefore: now - 2 * 86_400, leafNotAfter: now + 45 * 86_400, keySlot: 263)
            let logs = try [("Bench Log A", "Operator A", 789), ("Bench Log B", "Operator B", 790)].map { name, operatorName, slot in
                try LabCTLog(name: name, operatorName: operatorName, key: LabKey.shared(.p256, slot: slot), stateSince: now - 365 * 86_400)
            }
            let spec = LabPKI.leafSpec(host: host, keyAlgorithm: .p256, notBefore: now - 2 * 86_400, notAfter: now + 45 * 86_400)
            let leaf = try LabCertificate.issueWithEmbeddedSCTs(spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, logs: logs)
            _ = try LabFiles.writeBundle([pki.root], to: directory + "/root.pem")
            _ = try LabFiles.writeBundle([leaf.certificate, pki.intermediate], to: directory + "/chain.pem")
            try Data(pki.leafKey.privateKeyPEM().utf8).write(to: URL(fileURLWithPath: directory + "/leaf.key"))
            try Data(LabCTLogList(logs: logs, timestamp: now - 86_400).json()).write(to: URL(fileURLWithPath: directory + "/loglist.json"))
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError("ct-fixture: \(error)", code: 1)
        }
        return ExitCode.success
    }
}
