import Foundation
import ServerTrustLab
import Synchronization
import Testing

// LabTLSServer judged by independent clients: the curl and openssl command-line tools, run as
// separate processes against loopback ports the OS chose.

/// Runs the `curl` / `openssl` binaries for the server and relay tests.
enum LabServerClients {
    /// Runs `executable arguments…` under coreutils `timeout` (so a hung client cannot hang
    /// the suite), feeding `input` on stdin. Output is stdout followed by stderr.
    ///
    /// Through ``LabProcess``: a client held up by a stalling server holds no thread of the
    /// cooperative pool, and a bounded number of clients run at once.
    static func run(_ executable: String, _ arguments: [String], input: String? = nil, timeout: Int = 20) async throws -> CLIResult {
        let run = try await LabProcess.run("/usr/bin/timeout", ["-k", "2", String(timeout), executable] + arguments, input: input.map { Array($0.utf8) })
        return CLIResult(status: run.status, output: run.stdoutText + run.stderrText, elapsed: run.elapsed)
    }

    /// `curl -sS` with the given arguments.
    static func curl(_ arguments: [String], timeout: Int = 20) async throws -> CLIResult {
        try await run("/usr/bin/curl", ["-sS"] + arguments, timeout: timeout)
    }

    /// `openssl s_client` with the given arguments; `input` is sent after the handshake.
    static func sClient(_ arguments: [String], input: String? = nil) async throws -> CLIResult {
        try await run("/usr/bin/openssl", ["s_client"] + arguments, input: input)
    }

    /// Seconds since 1970 on the wall clock: curl and openssl check validity against it, not
    /// against ``LabClock/reference``.
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// A web PKI whose leaf is valid on today's wall clock.
    static func currentPKI(host: String, algorithm: LabKeyAlgorithm = .p256, keySlot: Int = 20) throws -> LabPKI {
        try LabPKI.webChain(
            host: host, algorithm: algorithm, leafNotBefore: now - LabClock.day,
            leafNotAfter: now + 30 * LabClock.day, keySlot: keySlot)
    }

    /// Another leaf from `pki`'s intermediate, valid today.
    static func currentLeaf(_ pki: LabPKI, host: String) throws -> LabTLSServer.Identity {
        let leaf = try pki.issueLeaf(host: host, notBefore: now - LabClock.day, notAfter: now + 30 * LabClock.day)
        return LabTLSServer.Identity(chain: [leaf, pki.intermediate], key: pki.leafKey)
    }

    /// Polls `condition` for up to `seconds` (server threads update counters concurrently
    /// with the client's exit).
    static func eventually(within seconds: Double = 3, _ condition: () -> Bool) async -> Bool {
        let end = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while ContinuousClock.now < end {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    /// Descriptors of this process that are TCP sockets whose local (or remote) port is one
    /// of `ports`: an exact measure of what a server still holds, unaffected by descriptors
    /// other tests open concurrently. Each descriptor is asked directly with getsockname /
    /// getpeername (`/proc/net/tcp` is no snapshot: entries can be skipped while other
    /// sockets come and go).
    static func openSockets(ports: Set<UInt16>, side: SocketSide) -> Set<Int32> {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var matching: Set<Int32> = []
        for name in descriptors {
            guard let descriptor = Int32(name),
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name),
                target.hasPrefix("socket:")
            else { continue }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let status = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    side == .local ? getsockname(descriptor, address, &length) : getpeername(descriptor, address, &length)
                }
            }
            guard status == 0 else { continue }
            let port: UInt16
            switch Int32(storage.ss_family) {
            case AF_INET:
                port = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) } }
            case AF_INET6:
                port = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) } }
            default:
                continue
            }
            if ports.contains(port) { matching.insert(descriptor) }
        }
        return matching
    }

    /// Which end of a TCP connection a port identifies.
    enum SocketSide { case local, remote }

    /// Threads of this process named `name` (`/proc/self/task/*/comm`).
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return comm.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    /// Occurrences of `needle` in `text`.
    static func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }
}

/// A server started for one test, with its PKI written to a temporary directory.
struct ServerFixture {
    let pki: LabPKI
    let server: LabTLSServer
    let directory: TemporaryDirectory
    let host: String

    var rootPath: String { directory.path + "/root.pem" }

    init(
        host: String = "www.example.test", keySlot: Int = 20,
        configure: (inout LabTLSServer.Configuration, LabPKI) throws -> Void = { _, _ in }
    ) throws {
        self.host = host
        pki = try LabServerClients.currentPKI(host: host, keySlot: keySlot)
        directory = try TemporaryDirectory()
        _ = try directory.write(pki.root.pem, named: "root.pem")
        var configuration = LabTLSServer.Configuration(identity: .init(pki: pki), name: host)
        try configure(&configuration, pki)
        server = try LabTLSServer.started(configuration)
    }

    /// `--resolve` arguments mapping `host` (default: the fixture's) to the server's address.
    func resolve(_ name: String? = nil) -> [String] {
        ["--resolve", "\(name ?? host):\(server.port):\(server.address == .ipv6 ? "[::1]" : "127.0.0.1")"]
    }

    /// `curl --cacert root.pem --resolve … https://host:port/`.
    func curl(_ extra: [String] = [], host name: String? = nil, path: String = "/", timeout: Int = 20) async throws -> CLIResult {
        try await LabServerClients.curl(["--cacert", rootPath] + resolve(name) + extra + [server.url(host: name ?? host, path: path)], timeout: timeout)
    }

    /// `openssl s_client -connect 127.0.0.1:port -servername host -CAfile root.pem …`.
    func sClient(_ extra: [String], serverName: String? = nil, input: String? = nil) async throws -> CLIResult {
        try await LabServerClients.sClient(
            [
                "-connect", "127.0.0.1:\(server.port)", "-servername", serverName ?? host,
                "-CAfile", rootPath, "-verify_return_error",
            ] + extra, input: input)
    }
}

@Suite struct LocalTLSServerTests {
    @Test func servesDefaultBodyToCurl() async throws {
        let fixture = try ServerFixture()
        defer { fixture.server.stop() }
        let result = try await fixture.curl(["-w", "|%{http_code}|%{http_version}"])
        #expect(result.ok, "\(result)")
        #expect(result.output == "hello from www.example.test|200|1.1", "\(result)")
        let statistics = fixture.server.statistics
        #expect(statistics.connectionsAccepted == 1)
        #expect(statistics.handshakesCompleted == 1)
        #expect(statistics.requestsServed == 1)
        #expect(statistics.serverNamesSeen == ["www.example.test"])
        #expect(statistics.connections.first?.alpnProtocol == "http/1.1")
    }

    @Test func curlRejectsAnUntrustedRoot() async throws {
        let fixture = try ServerFixture()
        defer { fixture.server.stop() }
        let stranger = try LabServerClients.currentPKI(host: "www.example.test", keySlot: 21)
        let wrongRoot = try fixture.directory.write(stranger.root.pem, named: "stranger.pem")
        let result = try await LabServerClients.curl(["--cacert", wrongRoot] + fixture.resolve() + [fixture.server.url(host: fixture.host)])
        #expect(result.status == 60, "\(result)")
        await #expect(LabServerClients.eventually { fixture.server.statistics.handshakesFailed == 1 })
        #expect(fixture.server.statistics.requestsServed == 0)
    }

    @Test func sClientSeesALPNAndTheServedChain() async throws {
        let fixture = try ServerFixture()
        defer { fixture.server.stop() }
        let result = try await fixture.sClient(["-alpn", "h2,http/1.1", "-showcerts"])
        #expect(result.output.contains("ALPN protocol: http/1.1"), "\(result)")
        #expect(LabServerClients.count("-----BEGIN CERTIFICATE-----", in: result.output) == 2, "\(result)")
        #expect(result.output.contains("Verify return code: 0 (ok)"), "\(result)")
        #expect(result.output.contains("subject=CN = www.example.test"), "\(result)")
    }

    @Test(arguments: [LabTLSVersion.tls1_2, .tls1_3])
    func negotiatesOnlyTheConfiguredVersion(version: LabTLSVersion) async throws {
        let fixture = try ServerFixture { configuration, _ in
            configuration.minimumTLSVersion = version
            configuration.maximumTLSVersion = version
        }
        defer { fixture.server.stop() }
        let result = try await fixture.sClient([], input: "")
        #expect(result.output.contains("New, \(version)"), "\(result)")
        await #expect(LabServerClients.eventually { fixture.server.statistics.connections.first?.tlsVersion == version.description })
        // A client that insists on the other version cannot connect.
        let other = version == .tls1_2 ? ["--tlsv1.3"] : ["--tls-max", "1.2"]
        let refused = try await fixture.curl(other)
        #expect(refused.status == 35, "\(refused)")
        let accepted = try await fixture.curl()
        #expect(accepted.ok, "\(accepted)")
    }

    @Test func selectsTheChainBySNI() async throws {
        let fixture = try ServerFixture { configuration, pki in
            configuration.serverNameIdentities = ["API.example.test": try LabServerClients.currentLeaf(pki, host: "api.example.test")]
        }
        defer { fixture.server.stop() }
        let api = try await fixture.sClient([], serverName: "api.example.test", input: "")
        #expect(api.output.contains("subject=CN = api.example.test"), "\(api)")
        let www = try await fixture.sClient([], serverName: "www.example.test", input: "")
        #expect(www.output.contains("subject=CN = www.example.test"), "\(www)")
        let apiCurl = try await fixture.curl(host: "api.example.test")
        #expect(apiCurl.ok && apiCurl.output == "hello from www.example.test", "\(apiCurl)")
        // The default chain does not cover the other name, so curl refuses it there.
        let unknown = try await fixture.curl(host: "other.example.test")
        #expect(unknown.status == 60, "\(unknown)")
        await #expect(LabServerClients.eventually { fixture.server.statistics.connections.compactMap(\.serverName).count == 4 })
        let names = Set(fixture.server.statistics.connections.compactMap(\.serverName))
        #expect(names == ["api.example.test", "www.example.test", "other.example.test"])
    }

    @Test(arguments: [LabTLSVersion.tls1_2, .tls1_3])
    func resumesSessionsFromSClient(version: LabTLSVersion) async throws {
        let fixture = try ServerFixture { configuration, _ in configuration.maximumTLSVersion = version }
        defer { fixture.server.stop() }
        let session = fixture.directory.path + "/session-\(version).pem"
        // The request makes s_client stay until the server has sent its TLS 1.3 tickets.
        let request = "GET / HTTP/1.1\r\nHost: www.example.test\r\nConnection: close\r\n\r\n"
        let first = try await fixture.sClient(["-sess_out", session, "-ign_eof"], input: request)
        #expect(first.output.contains("New, \(version)") && first.output.contains("hello from"), "\(first)")
        let second = try await fixture.sClient(["-sess_in", session, "-ign_eof"], input: request)
        #expect(second.output.contains("Reused, \(version)"), "\(second)")
        await #expect(LabServerClients.eventually { fixture.server.statistics.handshakesResumed == 1 })
        #expect(fixture.server.statistics.connections.map(\.resumed) == [false, true])
    }

    @Test(arguments: [LabTLSVersion.tls1_2, .tls1_3])
    func resumptionCanBeTurnedOff(version: LabTLSVersion) async throws {
        let fixture = try ServerFixture { configuration, _ in
            configuration.sessionResumption = false
            configuration.maximumTLSVersion = version
        }
        defer { fixture.server.stop() }
        let session = fixture.directory.path + "/session-\(version).pem"
        let request = "GET / HTTP/1.1\r\nHost: www.example.test\r\nConnection: close\r\n\r\n"
        let first = try await fixture.sClient(["-sess_out", session, "-ign_eof"], input: request)
        #expect(first.output.contains("New, \(version)") && first.output.contains("hello from"), "\(first)")
        // No ticket and no session ID: s_client has nothing worth saving, and if it saved
        // something anyway, offering it must not resume.
        #expect(!first.output.contains("TLS session ticket:"), "\(first)")
        if FileManager.default.fileExists(atPath: session) {
            let second = try await fixture.sClient(["-sess_in", session, "-ign_eof"], input: request)
            #expect(second.output.contains("New, \(version)"), "\(second)")
        }
        #expect(fixture.server.statistics.handshakesResumed == 0)
    }

    @Test func requiresAClientCertificateFromTheConfiguredCA() async throws {
        let clientPKI = try LabServerClients.currentPKI(host: "client.example.test", keySlot: 22)
        let clientSpec = LabCertificateSpec(
            subject: LabName([("CN", "lab client")]),
            notBefore: LabServerClients.now - LabClock.day,
            notAfter: LabServerClients.now + 30 * LabClock.day,
            extensions: [
                .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["clientAuth"]),
                .subjectKeyIdentifier(), .authorityKeyIdentifier(),
            ]
        )
        let clientLeaf = try LabCertificate.issue(clientSpec, subjectKey: clientPKI.leafKey, issuer: clientPKI.intermediateIssuer)
        let fixture = try ServerFixture { configuration, _ in
            configuration.clientAuthentication = .init(trustedCertificates: [clientPKI.root], mode: .required)
        }
        defer { fixture.server.stop() }
        let certificate = try fixture.directory.write(LabPEM.bundle([clientLeaf, clientPKI.intermediate]), named: "client.pem")
        let key = try fixture.directory.write(try clientPKI.leafKey.privateKeyPEM(), named: "client.key")

        let anonymous = try await fixture.curl()
        #expect(!anonymous.ok, "\(anonymous)")
        let authenticated = try await fixture.curl(["--cert", certificate, "--key", key])
        #expect(authenticated.ok && authenticated.output == "hello from www.example.test", "\(authenticated)")
        let records = fixture.server.statistics.connections
        #expect(records.filter(\.handshakeCompleted).map(\.clientCertificates) == [[clientLeaf, clientPKI.intermediate]])
        #expect(fixture.server.statistics.requestsServed == 1)
    }

    @Test func keepsTheConnectionAliveAcrossRequests() async throws {
        let fixture = try ServerFixture()
        defer { fixture.server.stop() }
        let url = fixture.server.url(host: fixture.host)
        let twice = try await LabServerClients.curl(["--cacert", fixture.rootPath] + fixture.resolve() + [url, url])
        #expect(twice.output == "hello from www.example.testhello from www.example.test", "\(twice)")
        #expect(fixture.server.statistics.requestsServed == 2)
        #expect(fixture.server.statistics.connectionsAccepted == 1)
        // `Connection: close` ends the connection after each response.
        let closing = try await LabServerClients.curl(["--cacert", fixture.rootPath, "-H", "Connection: close"] + fixture.resolve() + [url, url])
        #expect(closing.ok, "\(closing)")
        #expect(fixture.server.statistics.connectionsAccepted == 3)
        #expect(fixture.server.statistics.requestsServed == 4)
    }

    @Test func aDroppedConnectionSendsNothingAndCurlRetriesOnAFreshOne() async throws {
        let drops = Mutex(0)
        let fixture = try ServerFixture { configuration, _ in
            configuration.handler = { request in
                guard request.path == "/second" else { return .text("first") }
                // The first /second request is dropped unanswered; curl's retry gets an answer.
                let first = drops.withLock { count -> Bool in
                    count += 1
                    return count == 1
                }
                return first ? .droppedConnection : .text("second")
            }
        }
        defer { fixture.server.stop() }
        let url = fixture.server.url(host: fixture.host)
        let result = try await LabServerClients.curl(
            ["--cacert", fixture.rootPath, "-w", "|%{num_connects};"] + fixture.resolve()
                + [url, fixture.server.url(host: fixture.host, path: "/second")])
        // The second transfer reused the first connection, found it closed, and made one new
        // connection ("Connection died, retrying a fresh connect"); both got their answers.
        #expect(result.ok && result.output == "first|1;second|1;", "\(result)")
        // The dropped request is not counted as served; both connections were accepted.
        #expect(fixture.server.statistics.connectionsAccepted == 2)
        #expect(fixture.server.statistics.requestsServed == 2)
    }

    @Test func handlerSeesTheRequestAndCanAnswerChunked() async throws {
        let fixture = try ServerFixture { configuration, _ in
            configuration.handler = { request in
                let summary = "\(request.method) \(request.path) \(request.header("x-lab") ?? "-") \(request.body.count)|"
                return .chunked([Array(summary.utf8), request.body, []], contentType: "text/plain")
            }
        }
        defer { fixture.server.stop() }
        let payload = String(repeating: "0123456789", count: 20_000)
        let bodyPath = try fixture.directory.write(payload, named: "body.txt")
        let result = try await fixture.curl(["-H", "X-Lab: yes", "--data-binary", "@" + bodyPath, "-D", "-"], path: "/echo?q=1")
        #expect(result.ok, "\(result)")
        #expect(result.output.lowercased().contains("transfer-encoding: chunked"), "\(result)")
        #expect(result.output.hasSuffix("POST /echo yes 200000|" + payload))
    }

    @Test(arguments: [LabTLSServer.Behavior.closeAfterAccept, .closeMidHandshake, .stall, .sendAlert(40)])
    func faultBehaviourMakesCurlFailWithoutHanging(behavior: LabTLSServer.Behavior) async throws {
        let fixture = try ServerFixture { configuration, _ in configuration.behavior = behavior }
        defer { fixture.server.stop() }
        let result = try await fixture.curl(["--max-time", "2"])
        #expect(!result.ok, "\(result)")
        #expect(result.elapsed < .seconds(4), "curl took \(result.elapsed)")
        switch behavior {
        case .stall: #expect(result.status == 28, "\(result)")
        case .sendAlert: #expect(result.status == 35 && result.output.contains("alert handshake failure"), "\(result)")
        default: #expect(result.status == 35 || result.status == 56, "\(result)")
        }
        #expect(fixture.server.statistics.connectionsAccepted == 1)
        #expect(fixture.server.statistics.handshakesCompleted == 0)
    }

    @Test func connectionsBeyondTheLimitWaitInTheBacklog() async throws {
        let fixture = try ServerFixture { configuration, _ in configuration.maximumConnections = 1 }
        defer { fixture.server.stop() }
        let url = fixture.server.url(host: fixture.host)
        let result = try await LabServerClients.curl(
            [
                "--cacert", fixture.rootPath, "-H", "Connection: close", "--parallel",
                "--parallel-immediate", "--parallel-max", "4",
            ] + fixture.resolve()
                + [url, url, url, url])
        #expect(result.ok, "\(result)")
        #expect(LabServerClients.count("hello from", in: result.output) == 4, "\(result)")
        #expect(fixture.server.statistics.connectionsAccepted == 4)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/net/if_inet6")))
    func servesOnIPv6Loopback() async throws {
        let fixture = try ServerFixture { configuration, _ in configuration.address = .ipv6 }
        defer { fixture.server.stop() }
        #expect(fixture.server.url() == "https://[::1]:\(fixture.server.port)/")
        let result = try await fixture.curl()
        #expect(result.ok && result.output == "hello from www.example.test", "\(result)")
    }

    @Test func stopReleasesEveryThreadAndSocket() async throws {
        // Warm-up: anything created lazily once per process (resolver, OpenSSL state) is
        // created here, not counted as a leak below.
        do {
            let warmup = try ServerFixture()
            _ = try await warmup.curl()
            warmup.server.stop()
        }
        let fixture = try ServerFixture()
        let stalling = try ServerFixture { configuration, _ in configuration.behavior = .stall }
        let ports: Set<UInt16> = [fixture.server.port, stalling.server.port]

        // Live connections at stop time: an s_client waiting on stdin, and a curl stalled
        // mid-handshake.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        holder.arguments = ["s_client", "-connect", "127.0.0.1:\(fixture.server.port)", "-servername", fixture.host, "-quiet"]
        let holderInput = Pipe()
        holder.standardInput = holderInput
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        let staller = Process()
        staller.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        staller.arguments = ["-sS", "--max-time", "20", "-k"] + stalling.resolve() + [stalling.server.url(host: stalling.host)]
        staller.standardOutput = FileHandle.nullDevice
        staller.standardError = FileHandle.nullDevice
        try staller.run()

        await #expect(
            LabServerClients.eventually(within: 5) {
                fixture.server.statistics.handshakesCompleted == 1 && stalling.server.statistics.connectionsAccepted == 1
            })
        // The measures see the live resources: 2 listeners + 2 accepted connections, and
        // accept + connection threads of each server.
        #expect(LabServerClients.openSockets(ports: ports, side: .local).count == 4)
        #expect(LabServerClients.threads(named: fixture.server.threadName) == 2)
        #expect(LabServerClients.threads(named: stalling.server.threadName) == 2)

        let stopStarted = Date()
        fixture.server.stop()
        stalling.server.stop()
        stalling.server.stop()  // idempotent
        #expect(Date().timeIntervalSince(stopStarted) < 1)
        #expect(LabServerClients.openSockets(ports: ports, side: .local).isEmpty)
        #expect(LabServerClients.threads(named: fixture.server.threadName) == 0)
        #expect(LabServerClients.threads(named: stalling.server.threadName) == 0)

        // The clients notice the closed connections on their own.
        staller.waitUntilExit()
        try holderInput.fileHandleForWriting.close()
        holder.waitUntilExit()
        #expect(staller.terminationStatus != 0 && staller.terminationStatus != 28)
        // No whole-process descriptor count here: suites running in parallel (fault injection,
        // the stress tests' children) open and close descriptors at any moment, so the count
        // failed now and then with nothing wrong in the server. The per-port socket and
        // per-name thread checks above are exact; the whole-process count is asserted where it
        // is meaningful, in a process of its own: `servertrust stress faults` stops a
        // LabTLSServer after every fault and requires the descriptors back at the baseline
        // (StressCommandTests).
    }
}
