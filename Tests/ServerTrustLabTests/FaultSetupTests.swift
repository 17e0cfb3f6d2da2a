import Foundation
import ServerTrustLab
import Testing

// The fault-mode servers and oversized certificates of issue 7 §3, judged by the curl and
// openssl command-line tools: the Lab must produce exactly the fault it names, independently
// of the client library the fault tests exercise.

@Suite struct FaultSetupTests {
    /// curl's answer to each response cut, with `-D -` so the bytes received before the cut
    /// are visible. (curl 7.88 exits 0 for a cut inside the header section: it has the status
    /// line and takes EOF as the end of the response.)
    @Test(arguments: [
        (LabResponseCut.beforeResponse, LabCutEnding.closeNotify, Int32(52)),
        (.midHeaders, .closeNotify, 0),
        (.midHeaders, .closeWithoutNotify, 0),
        (.midBody, .closeNotify, 18),
        (.midBody, .closeWithoutNotify, 18),
        (.beforeResponse, .stall, 28),
        (.midBody, .stall, 28),
    ])
    func responseCutAsCurlSeesIt(cut: LabResponseCut, ending: LabCutEnding, curlStatus: Int32) async throws {
        let fixture = try ServerFixture { configuration, _ in configuration.behavior = .cutResponse(cut, then: ending) }
        defer { fixture.server.stop() }
        let result = try await fixture.curl(["-D", "-", "--max-time", "2"])
        #expect(result.elapsed < .seconds(10), "\(result)")
        #expect(result.status == curlStatus, "\(result)")
        let received = String(decoding: cut.partialResponse, as: UTF8.self)
        switch cut {
        case .beforeResponse:
            #expect(!result.output.contains("HTTP/1.1"), "\(result)")
        case .midHeaders:
            // curl shows the complete field lines and drops the unfinished one.
            #expect(result.output.contains("HTTP/1.1 200 OK\r\nServer: ServerTrustLab\r\n"), "\(result)")
            #expect(!result.output.contains("Content-Type"), "\(result)")
        case .midBody:
            #expect(result.output.contains(received.prefix(while: { $0 != "x" })), "\(result)")
            #expect(result.output.contains("Content-Length: \(LabResponseCut.announcedBodyLength)"))
        }
        // The request arrived; the cut came after it.
        #expect(fixture.server.statistics.requestsServed == 1)
        #expect(fixture.server.statistics.handshakesCompleted == 1)
    }

    @Test func deepChainIsWellFormedAndLong() throws {
        let pki = try LabServerClients.currentPKI(host: "deep.example.test", keySlot: 22)
        let identity = try pki.deepChain(host: "deep.example.test", length: 50)
        #expect(identity.chain.count == 50)
        #expect(identity.chain.last?.issuerNameDER == pki.root.subjectNameDER)
        // Only the length is unusual: openssl (depth limit 100) verifies it.
        let directory = try TemporaryDirectory()
        let result = try OpenSSLCLI.verify(
            leaf: identity.chain[0], root: pki.root, untrusted: Array(identity.chain.dropFirst()),
            in: directory)
        #expect(result.ok, "\(result)")
        #expect(
            try OpenSSLCLI.verify(
                leaf: identity.chain[0], root: pki.root, untrusted: Array(identity.chain.dropFirst()),
                extra: ["-verify_depth", "10"], in: directory
            ).ok == false)
    }

    @Test func oversizedLeafIsJustOverAMebibyteAndParses() throws {
        let pki = try LabServerClients.currentPKI(host: "big.example.test", keySlot: 22)
        let leaf = try pki.oversizedLeaf(host: "big.example.test", minimumSize: 1 << 20)
        #expect(leaf.der.count >= 1 << 20 && leaf.der.count < (1 << 20) + 4096, "\(leaf.der.count) bytes")
        let directory = try TemporaryDirectory()
        let result = try OpenSSLCLI.verify(leaf: leaf, root: pki.root, untrusted: [pki.intermediate], in: directory)
        #expect(result.ok, "\(result)")
    }

    @Test func megabyteCertificateExceedsCurlsCertificateListLimit() async throws {
        let setup = try LabFaultSetup.start(.megabyteCertificate)
        defer { setup.stop() }
        let directory = try TemporaryDirectory()
        let root = try directory.write(setup.root.pem, named: "root.pem")
        let result = try await LabServerClients.curl(["--cacert", root, "--resolve", setup.resolve[0], "--max-time", "10", setup.url])
        // OpenSSL's default maximum certificate list is 100 KiB (SSL_CTX_set_max_cert_list).
        #expect(result.status == 35 && result.output.contains("excessive message size"), "\(result)")
    }

    @Test func proxyRefusesConnectWith403() async throws {
        let setup = try LabFaultSetup.start(.proxyRefusesConnect)
        defer { setup.stop() }
        let directory = try TemporaryDirectory()
        let root = try directory.write(setup.root.pem, named: "root.pem")
        let proxy = try #require(setup.proxyURL)
        let refused = try await LabServerClients.curl(["--cacert", root, "--proxy", proxy, "--max-time", "10", setup.url])
        #expect(refused.status == 56 && refused.output.contains("403"), "\(refused)")
        #expect(setup.relay?.statistics.refusedConnects == 1)
        // Without the proxy the origin answers: the proxy alone is the fault.
        let port = try #require(setup.server?.port)
        let direct = try await LabServerClients.curl(["--cacert", root, "--resolve", "\(setup.host):\(port):127.0.0.1", setup.url])
        #expect(direct.ok, "\(direct)")
    }

    @Test func everyFaultStartsAndStopsWithoutLeftovers() throws {
        for fault in LabFault.allCases {
            let setup = try LabFaultSetup.start(fault)
            let ports = Set([setup.server?.port, setup.relay?.port].compactMap { $0 })
            #expect(setup.url.hasPrefix("https://"))
            #expect(setup.resolve.isEmpty == (fault == .unresolvableHost || fault == .proxyRefusesConnect))
            setup.stop()
            #expect(LabServerClients.openSockets(ports: ports, side: .local).isEmpty, "\(fault)")
        }
    }

    /// A closed port refuses connections, and no server can take it while it is held (even
    /// with `SO_REUSEADDR`, as nginx and most servers set it); once released, it is free.
    @Test func closedPortRefusesAndCannotBeTaken() throws {
        let closed = try LabClosedPort()
        #expect(Self.connect(to: closed.port) == ECONNREFUSED)
        #expect(Self.bind(closed.port, reuseAddress: true) == EADDRINUSE)
        #expect(Self.bind(closed.port, reuseAddress: false) == EADDRINUSE)
        closed.close()
        #expect(Self.bind(closed.port, reuseAddress: true) == 0)
    }

    /// `connect` to 127.0.0.1:`port`: 0, or the errno.
    static func connect(to port: UInt16) -> Int32 {
        withLoopbackSocket(port) { descriptor, address, length in Glibc.connect(descriptor, address, length) == 0 ? 0 : errno }
    }

    /// `bind` to 127.0.0.1:`port` (then closed): 0, or the errno.
    static func bind(_ port: UInt16, reuseAddress: Bool) -> Int32 {
        withLoopbackSocket(port) { descriptor, address, length in
            var on: Int32 = reuseAddress ? 1 : 0
            _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            return Glibc.bind(descriptor, address, length) == 0 ? 0 : errno
        }
    }

    static func withLoopbackSocket(_ port: UInt16, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}
