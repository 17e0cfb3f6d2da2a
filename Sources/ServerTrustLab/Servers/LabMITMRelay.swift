internal import COpenSSL
internal import CServerTrustShims
internal import Foundation
internal import Synchronization

/// A TLS-intercepting relay that behaves like Charles Proxy or mitmproxy, for tests that must
/// show a client refusing (or, when the user trusts the interception root, accepting) a
/// man in the middle.
///
/// The relay terminates the client's TLS with a leaf certificate it mints on the fly for the
/// requested host (subjectAltName dNSName, or iPAddress for IP literals), signed by an
/// interception CA the test passes in. It then opens its own TLS connection to the real
/// upstream, accepting whatever certificate the upstream presents (as interception proxies
/// do), and relays the decrypted bytes both ways.
///
/// Two modes:
/// - ``Mode/httpProxy``: a plain TCP listener speaking HTTP `CONNECT host:port`, as used with
///   `curl --proxy http://127.0.0.1:PORT`. It answers `200 Connection established` and then
///   intercepts the tunnel. Optional proxy authentication (`407`) and a refusing mode (`403`).
/// - ``Mode/transparent(upstreamHost:upstreamPort:)``: listens for TLS directly and relays
///   to one fixed upstream, minting the certificate for the client's SNI.
///
/// With ``Configuration/proxyTLS`` set, proxy mode is an HTTPS proxy instead (`curl --proxy
/// https://…`): the listener speaks TLS with the proxy's own certificate, reads `CONNECT`
/// inside that TLS, and passes each tunnel through unchanged. It does not intercept then
/// (that would take TLS inside TLS); the client's TLS to the origin runs end to end inside
/// the tunnel, which is what a client talking to a corporate HTTPS proxy sees.
///
/// The upstream TLS connection is made only after the client's handshake with the relay has
/// succeeded, so a client that rejects the minted certificate sends nothing upstream; the
/// ``Statistics`` prove it (``Statistics/forwardedApplicationData``).
public final class LabMITMRelay: Sendable {
    /// Where the relay gets its connections from and where it sends them.
    public enum Mode: Sendable, Hashable {
        /// An HTTP proxy that intercepts `CONNECT` tunnels; the upstream is the CONNECT target.
        case httpProxy
        /// A TLS listener that relays every connection to one fixed upstream.
        case transparent(upstreamHost: String, upstreamPort: UInt16)
    }

    /// Basic proxy credentials (`Proxy-Authorization: Basic base64(user:password)`).
    public struct Credentials: Sendable, Hashable {
        /// The user name.
        public var user: String
        /// The password.
        public var password: String

        /// Creates credentials.
        ///
        /// - Parameters:
        ///   - user: The user name.
        ///   - password: The password.
        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }
    }

    /// Everything the relay is built from.
    public struct Configuration: Sendable {
        /// Name for diagnostics.
        public var name: String
        /// Proxy or transparent.
        public var mode: Mode
        /// The CA that signs minted leaves ("the user-trusted Charles root").
        public var interceptionCA: LabIssuer
        /// Certificates sent after each minted leaf (intermediates, when ``interceptionCA``
        /// is not itself the root the client trusts).
        public var interceptionChain: [LabCertificate]
        /// The key every minted leaf certifies; `nil` generates a P-256 key per relay.
        public var mintedKey: LabKey?
        /// Minted leaves' notBefore (Unix seconds); `nil` means one day before the wall clock
        /// at minting time, because clients check validity against the real clock.
        public var mintedNotBefore: Int64?
        /// Minted leaves' notAfter (Unix seconds); `nil` means 30 days after the wall clock.
        public var mintedNotAfter: Int64?
        /// The host to mint for when the client sends no SNI in transparent mode; `nil` uses
        /// the upstream host. (Proxy mode falls back to the CONNECT host.)
        public var fallbackServerName: String?
        /// Host name → address overrides for reaching upstreams, like curl's `--resolve`
        /// (the client resolves only the proxy; the relay resolves the CONNECT host).
        public var hostOverrides: [String: String]
        /// Credentials a proxy client must present; `nil` requires none.
        public var proxyCredentials: Credentials?
        /// Answer every CONNECT with `403 Forbidden`.
        public var refuseConnect: Bool
        /// In ``Mode/httpProxy``: the proxy's own chain (leaf first) and key. When set, the
        /// proxy is reached over TLS (an `https://` proxy) and passes tunnels through without
        /// intercepting them. `nil`: a plain HTTP proxy that intercepts.
        public var proxyTLS: (certificates: [LabCertificate], key: LabKey)?
        /// The lowest TLS version, towards both the client and the upstream.
        public var minimumTLSVersion: LabTLSVersion
        /// The highest TLS version, towards both the client and the upstream.
        public var maximumTLSVersion: LabTLSVersion
        /// Which loopback address to bind.
        public var address: LabLoopbackAddress
        /// Connections relayed at once; more wait in the listen backlog.
        public var maximumConnections: Int
        /// Seconds allowed for the CONNECT exchange, TCP connect and each TLS handshake.
        public var handshakeTimeout: Double
        /// Seconds a relayed connection may sit idle in both directions (default 300, as
        /// ``LabTLSServer/Configuration/idleTimeout`` and for the same reason: tests assert that
        /// a second request reuses the tunnel, and in full AddressSanitizer runs a test can wait
        /// tens of seconds between two requests; with a 30 s default, `HTTPSProxyTests` saw its
        /// keep-alive tunnel closed once, 70 s into a run). Tunnels a client leaves open end
        /// with ``LabMITMRelay/stop()`` anyway.
        public var idleTimeout: Double

        /// Creates a configuration with the defaults: TLS 1.2–1.3, ALPN `http/1.1` on both
        /// sides, no proxy authentication, 127.0.0.1.
        ///
        /// - Parameters:
        ///   - mode: Proxy or transparent.
        ///   - interceptionCA: The CA that signs minted leaves.
        ///   - name: Name for diagnostics.
        public init(mode: Mode, interceptionCA: LabIssuer, name: String = "LabMITMRelay") {
            self.name = name
            self.mode = mode
            self.interceptionCA = interceptionCA
            self.interceptionChain = []
            self.mintedKey = nil
            self.mintedNotBefore = nil
            self.mintedNotAfter = nil
            self.fallbackServerName = nil
            self.hostOverrides = [:]
            self.proxyCredentials = nil
            self.refuseConnect = false
            self.proxyTLS = nil
            self.minimumTLSVersion = .tls1_2
            self.maximumTLSVersion = .tls1_3
            self.address = .ipv4
            self.maximumConnections = 128
            self.handshakeTimeout = 10
            self.idleTimeout = 300
        }
    }

    /// Counters since the relay started.
    public struct Statistics: Sendable {
        /// TCP connections accepted from clients.
        public var connectionsAccepted: Int = 0
        /// Every `CONNECT` target seen (`host:port` as requested), including refused ones.
        public var connectRequests: [String] = []
        /// Proxy requests answered 407 for missing or wrong credentials.
        public var proxyAuthenticationFailures: Int = 0
        /// CONNECT requests answered 403 because of ``Configuration/refuseConnect``.
        public var refusedConnects: Int = 0
        /// Client TLS handshakes completed with a minted certificate.
        public var connectionsIntercepted: Int = 0
        /// TLS handshakes completed with the proxy's own certificate (``Configuration/proxyTLS``).
        public var proxyHandshakesCompleted: Int = 0
        /// Tunnels passed through unchanged (``Configuration/proxyTLS``).
        public var tunnelsPassedThrough: Int = 0
        /// Client TLS handshakes that failed (typically: the client rejected the minted leaf,
        /// or, with ``Configuration/proxyTLS``, the proxy's own certificate).
        public var clientHandshakesFailed: Int = 0
        /// TLS handshakes with upstreams completed.
        public var upstreamHandshakesCompleted: Int = 0
        /// Upstreams that could not be reached or failed their handshake.
        public var upstreamFailures: Int = 0
        /// Decrypted application bytes written to upstreams (tunnel bytes, still the client's
        /// TLS to the origin, when passing through).
        public var bytesClientToUpstream: Int = 0
        /// Decrypted application bytes written back to clients (tunnel bytes when passing through).
        public var bytesUpstreamToClient: Int = 0
        /// The SNI name of each intercepted client connection, in order.
        public var serverNamesSeen: [String?] = []
        /// The most recent reason a client handshake, minting or an upstream failed.
        public var lastFailure: String?

        /// All application bytes relayed, both directions.
        public var bytesRelayed: Int { bytesClientToUpstream + bytesUpstreamToClient }
        /// Whether any application byte from a client reached an upstream.
        public var forwardedApplicationData: Bool { bytesClientToUpstream > 0 }
    }

    /// The configuration the relay was built from.
    public let configuration: Configuration

    private let engine: LabMITMRelayEngine
    private let listener: LabListener

    /// Builds the TLS contexts (the relay does not listen until ``start()``).
    ///
    /// - Parameter configuration: The relay's setup.
    /// - Throws: ``LabError`` if OpenSSL rejects a setting or the minting key cannot be made.
    public init(_ configuration: Configuration) throws {
        self.configuration = configuration
        let instance = labInstanceCounter.add(1, ordering: .relaxed).newValue
        let stopFlag = LabStopFlag()
        let engine = try LabMITMRelayEngine(configuration: configuration, stopFlag: stopFlag, instance: instance)
        self.engine = engine
        self.listener = LabListener(
            threadName: "labmitm-\(instance)", maximumConnections: configuration.maximumConnections,
            stopFlag: stopFlag
        ) { socket, index in
            engine.serve(socket, index: index)
        }
    }

    deinit { listener.stop() }

    /// Creates and starts a relay in one step.
    ///
    /// - Parameter configuration: The relay's setup.
    /// - Returns: A listening relay.
    /// - Throws: ``LabError`` as ``init(_:)`` and ``start()`` do.
    public static func started(_ configuration: Configuration) throws -> LabMITMRelay {
        let relay = try LabMITMRelay(configuration)
        try relay.start()
        return relay
    }

    /// Binds a port chosen by the OS and starts accepting; returns once the socket listens.
    ///
    /// - Throws: ``LabError`` if the relay was started before or the socket cannot listen.
    public func start() throws {
        _ = try listener.start(on: configuration.address)
    }

    /// Stops accepting, closes every client and upstream connection and the listening
    /// socket, and joins every thread. Idempotent.
    public func stop() {
        listener.stop()
    }

    /// The listening port (0 before ``start()``).
    public var port: UInt16 { listener.port }

    /// The loopback address the relay listens on.
    public var address: LabLoopbackAddress { configuration.address }

    /// The name all of this relay's threads carry (as seen in `/proc/self/task/*/comm`).
    public var threadName: String { listener.threads.name }

    /// The proxy URL for clients, e.g. `http://127.0.0.1:PORT` (for curl's `--proxy`);
    /// `https://` with ``Configuration/proxyTLS``.
    public var proxyURL: String {
        "\(configuration.proxyTLS == nil ? "http" : "https")://\(address == .ipv6 ? "[::1]" : "127.0.0.1"):\(port)"
    }

    /// A snapshot of the counters.
    public var statistics: Statistics { engine.statistics.withLock { $0 } }

    /// The leaves minted so far, keyed by the (lower-cased) host they were minted for.
    public var mintedCertificates: [String: LabCertificate] { engine.minter.minted }
}

/// Mints and caches one interception leaf per host.
final class LabCertificateMinter: Sendable {
    private let issuer: LabIssuer
    private let chain: [LabCertificate]
    private let key: LabKey
    private let notBefore: Int64?
    private let notAfter: Int64?
    private let cache = Mutex<[String: LabServerIdentity]>([:])

    init(configuration: LabMITMRelay.Configuration) throws {
        issuer = configuration.interceptionCA
        chain = configuration.interceptionChain
        key = try configuration.mintedKey ?? LabKey(.p256)
        notBefore = configuration.mintedNotBefore
        notAfter = configuration.mintedNotAfter
    }

    /// The leaf for `host`, minted on first use.
    func identity(for host: String) throws -> LabServerIdentity {
        let host = host.lowercased()
        // Minting under the lock gives every connection to one host the same leaf, as the
        // interception proxies' per-host caches do; a P-256 signature takes well under 1 ms.
        return try cache.withLock { cache throws -> LabServerIdentity in
            if let cached = cache[host] { return cached }
            let now = Int64(Date().timeIntervalSince1970)
            let spec = LabPKI.leafSpec(
                host: host, keyAlgorithm: key.algorithm,
                notBefore: notBefore ?? now - LabClock.day,
                notAfter: notAfter ?? now + 30 * LabClock.day)
            let leaf = try LabCertificate.issue(spec, subjectKey: key, issuer: issuer)
            let identity = try LabServerIdentity(certificates: [leaf] + chain, key: key)
            cache[host] = identity
            return identity
        }
    }

    /// The minted leaves by host.
    var minted: [String: LabCertificate] {
        cache.withLock { cache in cache.compactMapValues(\.certificates.first) }
    }
}

/// The per-connection state the certificate callback reaches through its `arg` pointer.
private final class LabInterceptionHandshake {
    let minter: LabCertificateMinter
    /// The host to mint for when the client sends no SNI.
    let fallbackHost: String
    /// Why minting failed, if it did.
    var failure: String?

    init(minter: LabCertificateMinter, fallbackHost: String) {
        self.minter = minter
        self.fallbackHost = fallbackHost
    }
}

/// The part of a relay its threads use.
final class LabMITMRelayEngine: Sendable {
    let configuration: LabMITMRelay.Configuration
    let minter: LabCertificateMinter
    let statistics = Mutex(LabMITMRelay.Statistics())
    private let clientFacingContext: LabSSLContext
    private let upstreamContext: LabSSLContext
    /// The proxy's own TLS (``LabMITMRelay/Configuration/proxyTLS``).
    private let proxyContext: LabSSLContext?
    private let stopFlag: LabStopFlag

    init(configuration: LabMITMRelay.Configuration, stopFlag: LabStopFlag, instance: Int) throws {
        self.configuration = configuration
        self.stopFlag = stopFlag
        self.minter = try LabCertificateMinter(configuration: configuration)
        // Both sides offer only http/1.1: the relay copies bytes, so the client and the
        // upstream must end up speaking the same protocol.
        self.clientFacingContext = try LabSSLContext.server(
            identity: nil, sniIdentities: [:],
            minimumVersion: configuration.minimumTLSVersion, maximumVersion: configuration.maximumTLSVersion,
            alpn: ["http/1.1"], clientVerification: nil, sessionResumption: true, sessionIDContext: "labmitm-\(instance)")
        self.upstreamContext = try LabSSLContext.permissiveClient(
            alpn: ["http/1.1"], minimumVersion: configuration.minimumTLSVersion, maximumVersion: configuration.maximumTLSVersion)
        if let proxyTLS = configuration.proxyTLS {
            self.proxyContext = try LabSSLContext.server(
                identity: LabServerIdentity(certificates: proxyTLS.certificates, key: proxyTLS.key), sniIdentities: [:],
                minimumVersion: configuration.minimumTLSVersion, maximumVersion: configuration.maximumTLSVersion,
                alpn: ["http/1.1"], clientVerification: nil, sessionResumption: true, sessionIDContext: "labproxy-\(instance)")
        } else {
            self.proxyContext = nil
        }
    }

    /// Relays one client connection on its own thread.
    func serve(_ client: LabSocket, index: Int) {
        statistics.withLock { $0.connectionsAccepted += 1 }
        let host: String
        let port: UInt16
        var upstreamSocket: LabSocket?
        switch configuration.mode {
        case .httpProxy:
            if let proxyContext {
                passThrough(client, proxyContext: proxyContext)
                return
            }
            let deadline = LabDeadline.after(configuration.handshakeTimeout)
            guard
                let tunnel = acceptConnect(
                    receiveByte: { () throws(LabIOEnd) in try client.receive(limit: 1, until: deadline, stop: self.stopFlag) },
                    send: { (bytes: [UInt8]) throws(LabIOEnd) in try client.sendAll(bytes, until: deadline, stop: self.stopFlag) })
            else { return }
            (host, port, upstreamSocket) = (tunnel.host, tunnel.port, tunnel.upstream)
        case .transparent(let upstreamHost, let upstreamPort):
            (host, port) = (upstreamHost, upstreamPort)
        }

        // 1. Terminate the client's TLS with a minted leaf.
        let handshakeState = LabInterceptionHandshake(
            minter: minter,
            fallbackHost: configuration.mode == .httpProxy ? host : (configuration.fallbackServerName ?? host))
        let clientTLS: LabTLSConnection
        do {
            clientTLS = try LabTLSConnection(socket: client, context: clientFacingContext)
            try withExtendedLifetime(handshakeState) { () throws(LabIOEnd) in
                SSL_set_cert_cb(
                    clientTLS.ssl,
                    { ssl, arg in
                        guard let ssl, let arg else { return 0 }
                        let state = Unmanaged<LabInterceptionHandshake>.fromOpaque(arg).takeUnretainedValue()
                        // Like mitmproxy: the SNI names the certificate; without SNI, the CONNECT host.
                        let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) } ?? state.fallbackHost
                        do {
                            return try state.minter.identity(for: name).install(onConnection: ssl) ? 1 : 0
                        } catch {
                            state.failure = "\(error)"
                            return 0
                        }
                    }, Unmanaged.passUnretained(handshakeState).toOpaque())
                try clientTLS.handshake(asServer: true, until: .after(configuration.handshakeTimeout), stop: stopFlag)
            }
        } catch {
            let reason = handshakeState.failure.map { "minting: \($0)" } ?? "client handshake: \(error)"
            statistics.withLock {
                $0.clientHandshakesFailed += 1
                $0.lastFailure = reason
            }
            return
        }
        let serverName = clientTLS.serverName
        statistics.withLock {
            $0.connectionsIntercepted += 1
            $0.serverNamesSeen.append(serverName)
        }

        // 2. Only now talk TLS to the upstream, so a client that refused the minted leaf
        //    never caused a single byte upstream.
        let upstreamTLS: LabTLSConnection
        do {
            let deadline = LabDeadline.after(configuration.handshakeTimeout)
            let socket = try upstreamSocket ?? LabSocket.connect(host: resolve(host), port: port, deadline: deadline, stop: stopFlag)
            upstreamSocket = nil
            upstreamTLS = try LabTLSConnection(socket: socket, context: upstreamContext)
            // SNI must not carry IP literals (RFC 6066 §3).
            if let name = serverName ?? (LabGeneralName.forHost(host) == .dns(host) ? host : nil) {
                _ = CServerTrustShims_SSL_set_tlsext_host_name(upstreamTLS.ssl, name)
            }
            try upstreamTLS.handshake(asServer: false, until: deadline, stop: stopFlag)
        } catch {
            statistics.withLock {
                $0.upstreamFailures += 1
                $0.lastFailure = "upstream \(host):\(port): \(error)"
            }
            clientTLS.shutdown()
            return
        }
        statistics.withLock { $0.upstreamHandshakesCompleted += 1 }

        // 3. Copy decrypted bytes both ways until either side closes.
        do {
            try relay(client: clientTLS, upstream: upstreamTLS)
        } catch {
            // Stopped, idle, or a side failed: the sockets close as this thread ends.
        }
        upstreamTLS.socket.close()
    }

    /// Applies ``LabMITMRelay/Configuration/hostOverrides``.
    private func resolve(_ host: String) -> String {
        configuration.hostOverrides[host.lowercased()] ?? host
    }

    /// An HTTPS proxy's connection: TLS with the proxy's own certificate, `CONNECT` inside
    /// it, then the tunnel's bytes passed through unchanged both ways.
    private func passThrough(_ client: LabSocket, proxyContext: LabSSLContext) {
        let deadline = LabDeadline.after(configuration.handshakeTimeout)
        let proxyTLS: LabTLSConnection
        do {
            proxyTLS = try LabTLSConnection(socket: client, context: proxyContext)
            try proxyTLS.handshake(asServer: true, until: deadline, stop: stopFlag)
        } catch {
            statistics.withLock {
                $0.clientHandshakesFailed += 1
                $0.lastFailure = "proxy handshake: \(error)"
            }
            return
        }
        statistics.withLock { $0.proxyHandshakesCompleted += 1 }
        guard
            let tunnel = acceptConnect(
                receiveByte: { () throws(LabIOEnd) in try proxyTLS.read(limit: 1, until: deadline, stop: self.stopFlag) },
                send: { (bytes: [UInt8]) throws(LabIOEnd) in try proxyTLS.writeAll(bytes, until: deadline, stop: self.stopFlag) })
        else {
            proxyTLS.shutdown()
            return
        }
        statistics.withLock { $0.tunnelsPassedThrough += 1 }
        do {
            try tunnelBytes(client: proxyTLS, upstream: tunnel.upstream)
        } catch {
            // Stopped, idle, or a side failed: the sockets close as this thread ends.
        }
        tunnel.upstream.close()
    }

    /// Reads and answers the proxy request through `receiveByte` and `send` (the client's
    /// socket, or the proxy's TLS over it). Returns the target and a TCP connection to it
    /// after sending `200 Connection established`, or `nil` after answering with an error.
    private func acceptConnect(receiveByte: () throws(LabIOEnd) -> [UInt8], send: ([UInt8]) throws(LabIOEnd) -> Void)
        -> (host: String, port: UInt16, upstream: LabSocket)?
    {
        let deadline = LabDeadline.after(configuration.handshakeTimeout)
        func answer(_ status: Int, _ headers: [(name: String, value: String)] = []) {
            let response = LabHTTPResponse(status: status, headers: headers)
            try? send(response.serialized(headRequest: false, closing: true))
        }
        // Byte by byte, so nothing after the blank line (the TLS ClientHello, from a client
        // that does not wait for the 200) is consumed here instead of by OpenSSL.
        var buffer: [UInt8] = []
        let head: LabHTTPHead
        do {
            while true {
                buffer += try receiveByte()
                // A head can only end at a line feed; parsing only there keeps this linear.
                guard buffer.last == 10 else {
                    if buffer.count > Self.maximumConnectHead { throw LabHTTPParseFailure(status: 431, reason: "CONNECT head too large") }
                    continue
                }
                if let parsed = try LabHTTPHead.parse(buffer) {
                    head = parsed
                    break
                }
            }
        } catch let failure as LabHTTPParseFailure {
            answer(failure.status)
            return nil
        } catch {
            return nil
        }
        guard head.startLine[0] == "CONNECT" else {
            answer(405, [("Allow", "CONNECT")])
            return nil
        }
        let target = head.startLine[1]
        statistics.withLock { $0.connectRequests.append(target) }
        guard let (host, port) = Self.splitAuthority(target) else {
            answer(400)
            return nil
        }
        if configuration.refuseConnect {
            statistics.withLock { $0.refusedConnects += 1 }
            answer(403)
            return nil
        }
        if let credentials = configuration.proxyCredentials {
            let expected = "basic " + Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
            guard let presented = head.header("Proxy-Authorization"),
                presented.lowercased().hasPrefix("basic "),
                "basic " + presented.dropFirst(6).labTrimmedHTTPWhitespace == expected
            else {
                statistics.withLock { $0.proxyAuthenticationFailures += 1 }
                answer(407, [("Proxy-Authenticate", "Basic realm=\"\(configuration.name)\"")])
                return nil
            }
        }
        // Connecting before answering 200 lets an unreachable upstream get a proper 502, as
        // real proxies answer; TLS to the upstream still waits for the client's handshake.
        let upstream: LabSocket
        do {
            upstream = try LabSocket.connect(host: resolve(host), port: port, deadline: deadline, stop: stopFlag)
        } catch {
            statistics.withLock {
                $0.upstreamFailures += 1
                $0.lastFailure = "upstream \(host):\(port): \(error)"
            }
            answer(502)
            return nil
        }
        do {
            try send(Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8))
        } catch {
            return nil
        }
        return (host, port, upstream)
    }

    /// Copies bytes between the proxy's TLS and the upstream's TCP socket until one side
    /// closes, the relay stops, or both stay idle past the idle timeout.
    private func tunnelBytes(client: LabTLSConnection, upstream: LabSocket) throws(LabIOEnd) {
        var clientEvents = Int16(POLLIN)
        while true {
            var progressed = false
            switch try client.tryRead() {
            case .data(let bytes):
                try upstream.sendAll(bytes, until: .after(configuration.idleTimeout), stop: stopFlag)
                statistics.withLock { $0.bytesClientToUpstream += bytes.count }
                progressed = true
            case .wantRead: clientEvents = Int16(POLLIN)
            case .wantWrite: clientEvents = Int16(POLLOUT)
            case .closed: return
            }
            if let bytes = try upstream.tryReceive(limit: 16_384) {
                try client.writeAll(bytes, until: .after(configuration.idleTimeout), stop: stopFlag)
                statistics.withLock { $0.bytesUpstreamToClient += bytes.count }
                progressed = true
            }
            if !progressed {
                try LabSocket.waitEither(
                    (client.socket, clientEvents), (upstream, Int16(POLLIN)),
                    until: .after(configuration.idleTimeout), stop: stopFlag)
            }
        }
    }

    /// The largest proxy request head accepted (real ones are a few hundred bytes).
    static let maximumConnectHead = 16 * 1024

    /// Splits `host:port` or `[v6]:port` (RFC 9110 §9.3.6 authority-form).
    static func splitAuthority(_ authority: String) -> (String, UInt16)? {
        guard let colon = authority.lastIndex(of: ":"), let port = UInt16(authority[authority.index(after: colon)...]) else {
            return nil
        }
        var host = String(authority[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host.lowercased(), port)
    }

    /// Copies decrypted bytes in both directions until one side closes, the relay stops, or
    /// both sides stay idle past the idle timeout.
    private func relay(client: LabTLSConnection, upstream: LabTLSConnection) throws(LabIOEnd) {
        var clientEvents = Int16(POLLIN)
        var upstreamEvents = Int16(POLLIN)
        while true {
            var progressed = false
            for towardsUpstream in [true, false] {
                let (source, sink) = towardsUpstream ? (client, upstream) : (upstream, client)
                switch try source.tryRead() {
                case .data(let bytes):
                    try sink.writeAll(bytes, until: .after(configuration.idleTimeout), stop: stopFlag)
                    statistics.withLock {
                        if towardsUpstream { $0.bytesClientToUpstream += bytes.count } else { $0.bytesUpstreamToClient += bytes.count }
                    }
                    progressed = true
                case .wantRead:
                    if towardsUpstream { clientEvents = Int16(POLLIN) } else { upstreamEvents = Int16(POLLIN) }
                case .wantWrite:
                    // TLS on this side must send (a key update, say) before it can read on.
                    if towardsUpstream { clientEvents = Int16(POLLOUT) } else { upstreamEvents = Int16(POLLOUT) }
                case .closed:
                    sink.shutdown()
                    return
                }
            }
            if !progressed {
                try LabSocket.waitEither(
                    (client.socket, clientEvents), (upstream.socket, upstreamEvents),
                    until: .after(configuration.idleTimeout), stop: stopFlag)
            }
        }
    }
}
