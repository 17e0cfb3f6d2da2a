import CertificateParsing
import Foundation
import ServerTrustHTTP
import ServerTrustLab
import Testing

/// The TLS `signed_certificate_timestamp` extension (type 18) captured as the transport captures
/// it (an OpenSSL custom extension offered in the ClientHello, read for the leaf): from the
/// TLS 1.2 ServerHello and the TLS 1.3 leaf CertificateEntry, byte for byte as the server sent
/// it (the Lab's server sends it as `openssl s_server -serverinfo` does), already in the
/// certificate-verify callback; nothing when the client did not offer the extension, and
/// nothing from a server that has none.
@Suite("handshake evidence: the TLS SCT extension, captured for the leaf")
struct HandshakeEvidenceTests {
    static let host = "sct.lab.test"
    /// What the server sends as the extension's data (the client does not parse it).
    static let list: [UInt8] = [0x00, 0x06, 0x00, 0x04, 0xDE, 0xAD, 0xBE, 0xEF]

    static func server(scts: [UInt8]?, version: LabTLSVersion) throws -> LabTLSServer {
        let now = Int64(Date().timeIntervalSince1970)
        let pki = try LabPKI.webChain(host: host, leafNotBefore: now - LabClock.day, leafNotAfter: now + 30 * LabClock.day, keySlot: 152)
        var configuration = LabTLSServer.Configuration(identity: .init(chain: pki.serverChain, key: pki.leafKey, signedCertificateTimestamps: scts), name: host)
        configuration.minimumTLSVersion = version
        configuration.maximumTLSVersion = version
        return try LabTLSServer.started(configuration)
    }

    @Test(
        "offered, the SCT list is read for the leaf over TLS 1.2 and 1.3, in time for the verify callback",
        arguments: [(LabTLSVersion.tls1_2, StapleTimingProbe.Version.tls12), (.tls1_3, .tls13)])
    func captured(server version: LabTLSVersion, probe: StapleTimingProbe.Version) async throws {
        let server = try Self.server(scts: Self.list, version: version)
        defer { server.stop() }
        let port = Int(server.port)
        let offered = try await offPool {
            try StapleTimingProbe.observe(host: Self.host, port: port, address: "127.0.0.1", version: probe, offersSCTExtension: true).get()
        }
        #expect(offered.sctsInVerifyCallback == Self.list && offered.sctsInStatusCallback == Self.list, "\(offered)")
        let silent = try await offPool {
            try StapleTimingProbe.observe(host: Self.host, port: port, address: "127.0.0.1", version: probe).get()
        }
        #expect(silent.sctsInVerifyCallback == nil && silent.sctsInStatusCallback == nil, "not offered, not sent: \(silent)")
    }

    @Test("a server without SCTs sends none, whatever the client offers", arguments: [StapleTimingProbe.Version.tls12, .tls13])
    func none(version: StapleTimingProbe.Version) async throws {
        let server = try Self.server(scts: nil, version: version == .tls12 ? .tls1_2 : .tls1_3)
        defer { server.stop() }
        let port = Int(server.port)
        let seen = try await offPool {
            try StapleTimingProbe.observe(host: Self.host, port: port, address: "127.0.0.1", version: version, offersSCTExtension: true).get()
        }
        #expect(seen.verifyCallbackRan && seen.sctsInVerifyCallback == nil)
    }
}
