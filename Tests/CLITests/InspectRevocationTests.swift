import Foundation
import ServerTrustLab
import Testing

@Suite("servertrust inspect: where revocation is published")
struct InspectRevocationTests {
    @Test("a certificate's CRL distribution points and OCSP URLs, in the block and in JSON; an LDAP point says it is not fetched")
    func pointers() async throws {
        let pki = try LabPKI.webChain(host: "crl.example.test", keySlot: 216)
        let leaf = try pki.issueLeaf(
            host: "crl.example.test",
            extraExtensions: [
                .crlDistributionPoints(["http://crl.example.test/issuing.crl", "ldap://ldap.example.test/cn=Issuing"]),
                .authorityInfoAccess(ocsp: ["http://ocsp.example.test"], caIssuers: ["http://ca.example.test/issuing.der"]),
            ])
        let dir = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/leaf.pem"
        try leaf.pem.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await CLIRunner.run(["inspect", path])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(lines.contains("CRL http://crl.example.test/issuing.crl"), "\(result.stdout)")
        #expect(lines.contains("CRL ldap://ldap.example.test/cn=Issuing ignored: LDAP is not fetched"), "\(result.stdout)")
        #expect(lines.contains("OCSP http://ocsp.example.test"), "\(result.stdout)")
        #expect(!result.stdout.contains("ca.example.test"), "caIssuers is no revocation pointer")

        let json = try await CLIRunner.run(["inspect", path, "--json"])
        let item = try #require((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])?.first)
        #expect(item["crlDistributionPoints"] as? [String] == ["http://crl.example.test/issuing.crl"])
        #expect(item["ocsp"] as? [String] == ["http://ocsp.example.test"])

        // Without them, nothing is shown.
        try pki.leaf.pem.write(toFile: path, atomically: true, encoding: .utf8)
        let plain = try await CLIRunner.run(["inspect", path])
        #expect(!plain.stdout.contains("  CRL") && !plain.stdout.contains("  OCSP"), "\(plain)")
    }
}
