import Foundation
import ServerTrustLab
import Testing

/// An upstream LabTLSServer (the "genuine" site) plus a LabMITMRelay whose interception CA is
/// a separate root, each written to a temporary directory for curl and openssl.
struct RelayFixture {
    static let host = "www.example.test"

    let upstream: ServerFixture
    let interception: LabPKI
    let relay: LabMITMRelay
    var directory: TemporaryDirectory { upstream.directory }
    var genuineRootPath: String { upstream.rootPath }
    var interceptionRootPath: String { directory.path + "/interception-root.pem" }

    init(
        mode: (UInt16) -> LabMITMRelay.Mode = { _ in .httpProxy },
        configure: (inout LabMITMRelay.Configuration) -> Void = { _ in }
    ) throws {
        upstream = try ServerFixture(host: Self.host, keySlot: 23) { configuration, _ in
            configuration.name = "upstream"
            // `/big` exercises the relay's copy loop well past one TLS record and socket buffer.
            configuration.handler = { request in
                request.path == "/big" ? LabHTTPResponse(body: .bytes([UInt8](repeating: 0x5A, count: 3_000_000))) : .text("hello from upstream")
            }
        }
        // A different key slot: the interception root shares nothing with the genuine PKI.
        interception = try LabServerClients.currentPKI(host: "charles.example.test", keySlot: 24)
        _ = try upstream.directory.write(interception.root.pem, named: "interception-root.pem")
        var configuration = LabMITMRelay.Configuration(mode: mode(upstream.server.port), interceptionCA: interception.rootIssuer)
        configuration.hostOverrides = [Self.host: "127.0.0.1"]
        configure(&configuration)
        relay = try LabMITMRelay.started(configuration)
    }

    func stop() {
        relay.stop()
        upstream.server.stop()
    }

    /// `curl --proxy http://127.0.0.1:RELAY --cacert <root> https://www.example.test:UPSTREAM/`.
    func curlThroughProxy(cacert: String, _ extra: [String] = []) async throws -> CLIResult {
        try await LabServerClients.curl(
            ["--proxy", relay.proxyURL, "--cacert", cacert] + extra
                + [upstream.server.url(host: Self.host)])
    }
}

@Suite struct MITMRelayTests {
    @Test func proxyModeRelaysWhenTheInterceptionRootIsTrusted() async throws {
        let fixture = try RelayFixture()
        defer { fixture.stop() }
        let result = try await fixture.curlThroughProxy(cacert: fixture.interceptionRootPath, ["-w", "|%{http_connect}|%{http_code}"])
        #expect(result.ok, "\(result)")
        #expect(result.output == "hello from upstream|200|200", "\(result)")
        let statistics = fixture.relay.statistics
        #expect(statistics.connectRequests == ["\(RelayFixture.host):\(fixture.upstream.server.port)"])
        #expect(statistics.connectionsIntercepted == 1)
        #expect(statistics.serverNamesSeen == [RelayFixture.host])
        #expect(statistics.forwardedApplicationData)
        #expect(statistics.bytesRelayed > 0)
        // The upstream saw the relay, with the client's SNI forwarded.
        #expect(fixture.upstream.server.statistics.requestsServed == 1)
        #expect(fixture.upstream.server.statistics.serverNamesSeen == [RelayFixture.host])
    }

    @Test func proxyModeCarriesLargeBodiesAndKeepAliveRequests() async throws {
        let fixture = try RelayFixture()
        defer { fixture.stop() }
        let big = fixture.upstream.server.url(host: RelayFixture.host, path: "/big")
        let result = try await LabServerClients.curl([
            "--proxy", fixture.relay.proxyURL, "--cacert", fixture.interceptionRootPath,
            "-w", "%{size_download} ", "-o", "/dev/null", big, "-o", "/dev/null", big,
        ])
        #expect(result.ok && result.output == "3000000 3000000 ", "exit \(result.status): \(result.output.prefix(300))")
        // Both requests went through one tunnel and one upstream connection.
        #expect(fixture.relay.statistics.connectRequests.count == 1)
        #expect(fixture.upstream.server.statistics.connectionsAccepted == 1)
        #expect(fixture.upstream.server.statistics.requestsServed == 2)
        // The relay counts a chunk once it has written it on, so curl may have read the last
        // bytes a moment before the count includes them (seen in CI: 5,998,340 at once).
        await #expect(LabServerClients.eventually { fixture.relay.statistics.bytesUpstreamToClient > 6_000_000 })
    }

    @Test func clientTrustingOnlyTheGenuineRootSendsNothingUpstream() async throws {
        let fixture = try RelayFixture()
        defer { fixture.stop() }
        let result = try await fixture.curlThroughProxy(cacert: fixture.genuineRootPath)
        #expect(result.status == 60, "\(result)")
        await #expect(LabServerClients.eventually { fixture.relay.statistics.clientHandshakesFailed == 1 })
        let statistics = fixture.relay.statistics
        #expect(statistics.connectRequests == ["\(RelayFixture.host):\(fixture.upstream.server.port)"])
        #expect(statistics.connectionsIntercepted == 0)
        #expect(!statistics.forwardedApplicationData)
        #expect(statistics.bytesRelayed == 0)
        #expect(statistics.upstreamHandshakesCompleted == 0)
        #expect(fixture.upstream.server.statistics.handshakesCompleted == 0)
        #expect(fixture.upstream.server.statistics.requestsServed == 0)
    }

    @Test func mintedLeafNamesTheRequestedHost() async throws {
        let fixture = try RelayFixture()
        defer { fixture.stop() }
        let connect = "\(RelayFixture.host):\(fixture.upstream.server.port)"
        let result = try await LabServerClients.sClient(
            [
                "-proxy", "127.0.0.1:\(fixture.relay.port)", "-connect", connect,
                "-servername", RelayFixture.host, "-CAfile", fixture.interceptionRootPath,
                "-showcerts",
            ], input: "")
        #expect(result.output.contains("Verify return code: 0 (ok)"), "\(result)")
        // Read the served leaf back out of s_client's output and let openssl describe it.
        let lines = result.output.components(separatedBy: "\n")
        guard let begin = lines.firstIndex(of: "-----BEGIN CERTIFICATE-----"),
            let end = lines[begin...].firstIndex(of: "-----END CERTIFICATE-----")
        else {
            Issue.record("no certificate in \(result)")
            return
        }
        let leafPath = try fixture.directory.write(lines[begin...end].joined(separator: "\n") + "\n", named: "minted.pem")
        let text = try OpenSSLCLI.run(["x509", "-in", leafPath, "-noout", "-text"])
        #expect(text.output.contains("DNS:\(RelayFixture.host)"), "\(text)")
        #expect(text.output.contains("Issuer: C = US, O = ServerTrust Lab, CN = ServerTrust Lab Root CA P-256"), "\(text)")
        let minted = fixture.relay.mintedCertificates
        #expect(Array(minted.keys) == [RelayFixture.host])
        #expect(minted[RelayFixture.host]?.pem == lines[begin...end].joined(separator: "\n") + "\n")
    }

    @Test func mintsAnIPAddressSANForAnIPLiteralTarget() async throws {
        let fixture = try RelayFixture()
        defer { fixture.stop() }
        // No SNI for IP literals: the CONNECT host names the certificate.
        let result = try await LabServerClients.curl([
            "--proxy", fixture.relay.proxyURL, "--cacert", fixture.interceptionRootPath,
            fixture.upstream.server.url(),
        ])
        #expect(result.ok && result.output == "hello from upstream", "\(result)")
        let leaf = try #require(fixture.relay.mintedCertificates["127.0.0.1"])
        let text = try OpenSSLCLI.text(leaf, in: fixture.directory)
        #expect(text.output.contains("IP Address:127.0.0.1"), "\(text)")
        #expect(fixture.relay.statistics.serverNamesSeen == [nil])
    }

    @Test func transparentModeInterceptsWithoutCONNECT() async throws {
        let fixture = try RelayFixture(mode: { .transparent(upstreamHost: "127.0.0.1", upstreamPort: $0) })
        defer { fixture.stop() }
        let relayURL = "https://\(RelayFixture.host):\(fixture.relay.port)/"
        let resolve = ["--resolve", "\(RelayFixture.host):\(fixture.relay.port):127.0.0.1"]
        let trusted = try await LabServerClients.curl(["--cacert", fixture.interceptionRootPath] + resolve + [relayURL])
        #expect(trusted.ok && trusted.output == "hello from upstream", "\(trusted)")
        #expect(fixture.relay.mintedCertificates.keys.sorted() == [RelayFixture.host])
        let upstreamRequests = fixture.upstream.server.statistics.requestsServed
        #expect(upstreamRequests == 1)

        let genuine = try await LabServerClients.curl(["--cacert", fixture.genuineRootPath] + resolve + [relayURL])
        #expect(genuine.status == 60, "\(genuine)")
        await #expect(LabServerClients.eventually { fixture.relay.statistics.clientHandshakesFailed == 1 })
        let statistics = fixture.relay.statistics
        #expect(statistics.connectRequests.isEmpty)
        #expect(statistics.connectionsIntercepted == 1)
        #expect(statistics.upstreamHandshakesCompleted == 1)
        #expect(fixture.upstream.server.statistics.connectionsAccepted == 1)
    }

    @Test func proxyAuthenticationAnswers407UntilCredentialsAreSent() async throws {
        let fixture = try RelayFixture(configure: { $0.proxyCredentials = .init(user: "lab", password: "s3cret") })
        defer { fixture.stop() }
        let anonymous = try await fixture.curlThroughProxy(cacert: fixture.interceptionRootPath, ["-w", "%{http_connect}"])
        #expect(anonymous.status == 56 && anonymous.output.hasPrefix("407"), "\(anonymous)")
        let wrong = try await fixture.curlThroughProxy(cacert: fixture.interceptionRootPath, ["--proxy-user", "lab:wrong"])
        #expect(wrong.status == 56, "\(wrong)")
        let authorized = try await fixture.curlThroughProxy(cacert: fixture.interceptionRootPath, ["--proxy-user", "lab:s3cret"])
        #expect(authorized.ok && authorized.output == "hello from upstream", "\(authorized)")
        let statistics = fixture.relay.statistics
        #expect(statistics.proxyAuthenticationFailures == 2)
        #expect(statistics.connectionsIntercepted == 1)
        #expect(fixture.upstream.server.statistics.connectionsAccepted == 1)
    }

    @Test func httpsProxyPassesTheTunnelThroughUnderItsOwnCertificate() async throws {
        // The proxy's own certificate names 127.0.0.1 (the proxy URL's host), from a third root.
        let proxyPKI = try LabServerClients.currentPKI(host: "127.0.0.1", keySlot: 25)
        let fixture = try RelayFixture(configure: { $0.proxyTLS = (proxyPKI.serverChain, proxyPKI.leafKey) })
        defer { fixture.stop() }
        #expect(fixture.relay.proxyURL.hasPrefix("https://127.0.0.1:"))
        let proxyRoot = try fixture.directory.write(proxyPKI.root.pem, named: "proxy-root.pem")
        // curl trusts the proxy's root for the proxy and only the genuine root for the origin:
        // passing through (not intercepting) is what lets the origin's own chain verify.
        let result = try await LabServerClients.curl([
            "--proxy", fixture.relay.proxyURL, "--proxy-cacert", proxyRoot,
            "--cacert", fixture.genuineRootPath, "-w", "|%{http_connect}",
            fixture.upstream.server.url(host: RelayFixture.host),
        ])
        #expect(result.ok && result.output == "hello from upstream|200", "\(result)")
        var statistics = fixture.relay.statistics
        #expect(statistics.proxyHandshakesCompleted == 1 && statistics.tunnelsPassedThrough == 1)
        #expect(statistics.connectionsIntercepted == 0 && statistics.bytesRelayed > 0)
        #expect(fixture.upstream.server.statistics.requestsServed == 1)
        // Without the proxy's root, curl refuses the proxy itself (60) and sends no CONNECT.
        let untrusted = try await LabServerClients.curl([
            "--proxy", fixture.relay.proxyURL, "--proxy-cacert", fixture.genuineRootPath,
            "--cacert", fixture.genuineRootPath, fixture.upstream.server.url(host: RelayFixture.host),
        ])
        #expect(untrusted.status == 60, "\(untrusted)")
        statistics = fixture.relay.statistics
        #expect(statistics.connectRequests.count == 1)
    }

    @Test func refusingRelayAnswers403() async throws {
        let fixture = try RelayFixture(configure: { $0.refuseConnect = true })
        defer { fixture.stop() }
        let result = try await fixture.curlThroughProxy(cacert: fixture.interceptionRootPath, ["-w", "%{http_connect}"])
        #expect(result.status == 56 && result.output.hasPrefix("403"), "\(result)")
        #expect(fixture.relay.statistics.refusedConnects == 1)
        #expect(fixture.upstream.server.statistics.connectionsAccepted == 0)
    }

    @Test func unreachableUpstreamGets502() async throws {
        let fixture = try RelayFixture()
        let deadPort = fixture.upstream.server.port
        fixture.upstream.server.stop()
        defer { fixture.stop() }
        let result = try await fixture.curlThroughProxy(cacert: fixture.interceptionRootPath, ["-w", "%{http_connect}"])
        #expect(result.status == 56 && result.output.hasPrefix("502"), "\(result)")
        #expect(fixture.relay.statistics.connectRequests == ["\(RelayFixture.host):\(deadPort)"])
        #expect(fixture.relay.statistics.upstreamFailures == 1)
    }

    @Test func stopReleasesRelayThreadsAndSockets() async throws {
        let fixture = try RelayFixture()
        // A tunnel kept open by a waiting s_client, so stop() has live connections to end.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        holder.arguments = [
            "s_client", "-proxy", "127.0.0.1:\(fixture.relay.port)",
            "-connect", "\(RelayFixture.host):\(fixture.upstream.server.port)", "-servername", RelayFixture.host, "-quiet",
        ]
        let holderInput = Pipe()
        holder.standardInput = holderInput
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        await #expect(LabServerClients.eventually(within: 5) { fixture.relay.statistics.upstreamHandshakesCompleted == 1 })

        let relayPort = fixture.relay.port
        let upstreamPort = fixture.upstream.server.port
        // Relay-held sockets: its listener and the client side (local port = relay port), and
        // its connection to the upstream (remote port = upstream port).
        func relaySockets() -> Set<Int32> {
            LabServerClients.openSockets(ports: [relayPort], side: .local)
                .union(LabServerClients.openSockets(ports: [upstreamPort], side: .remote))
        }
        #expect(relaySockets().count == 3)
        #expect(LabServerClients.threads(named: fixture.relay.threadName) == 2)

        fixture.relay.stop()
        #expect(relaySockets().isEmpty)
        #expect(LabServerClients.threads(named: fixture.relay.threadName) == 0)
        fixture.upstream.server.stop()
        #expect(LabServerClients.openSockets(ports: [upstreamPort], side: .local).isEmpty)
        #expect(LabServerClients.threads(named: fixture.upstream.server.threadName) == 0)
        try holderInput.fileHandleForWriting.close()
        holder.waitUntilExit()
    }
}
