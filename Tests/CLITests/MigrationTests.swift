import Foundation
import ServerTrustLab
import Testing

/// Moving an app's pins from AFNetworking or Alamofire: their bundled `.cer` files load as
/// pinned certificates even when, like those libraries' own test certificates, the two
/// signatureAlgorithm fields differ in encoding; the same certificate served in a handshake is
/// still refused.
@Suite("migrating pinned .cer files from AFNetworking and Alamofire")
struct MigrationTests {
    static let host = "foobar.com"
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    @Test("a pinned .cer with NULL versus absent signature parameters loads (noted); served, it is refused as malformed")
    func signatureAlgorithmQuirk() async throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = try LabKey.shared(.rsa(bits: 2048), slot: 37)
        var spec = LabPKI.leafSpec(host: Self.host, keyAlgorithm: key.algorithm, notBefore: Self.now - LabClock.day, notAfter: Self.now + 30 * LabClock.day)
        spec.tbsSignatureAlgorithmDER = try LabSignatureScheme.rsaPKCS1(.sha256).algorithmIdentifierDERWithoutParameters
        let quirky = try LabCertificate.issue(spec, subjectKey: key)
        let pinned = try LabFiles.write(quirky.der, to: directory + "/foobar.com.cer")

        let inspect = try await CLIRunner.run(["inspect", pinned])
        #expect(inspect.status == 0 && inspect.stdout.contains("CN=\(Self.host)"), "\(inspect.stderr)")
        #expect(
            inspect.stderr.contains("servertrust: note: \(pinned): certificate 1: the tbsCertificate signature and signatureAlgorithm fields differ"),
            "\(inspect.stderr)")

        // The pinned file is the app's own input; the server's copy of the same bytes is not.
        var configuration = LabTLSServer.Configuration(identity: LabTLSServer.Identity(chain: [quirky], key: key), name: "quirky")
        configuration.handler = { _ in .text("hello") }
        let server = try LabTLSServer.started(configuration)
        defer { server.stop() }
        let get = try await CLIRunner.run([
            "get", server.url(host: Self.host), "--resolve", "\(Self.host):\(server.port):127.0.0.1",
            "--mode", "certificate", "--pinned-cert", pinned, "--allow-invalid", "--compat",
        ])
        #expect(get.stderr.contains("servertrust: note: --pinned-cert \(pinned): certificate 1:"), "the pinned file loaded: \(get.stderr)")
        #expect(get.status == 1 && get.stderr.contains("cannot be read"), "\(get.stderr)")
        #expect(server.statistics.requestsServed == 0)
    }
}
