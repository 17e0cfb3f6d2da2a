internal import COpenSSL
internal import Glibc
internal import Synchronization

/// An HTTPS server on the loopback interface, built on OpenSSL, for tests that need a real
/// TLS peer: curl, `openssl s_client`, and the project's own clients connect to it.
///
/// The server listens on `127.0.0.1` (or `::1`) on a port the OS picks, serves each
/// connection on its own thread, and answers minimal HTTP/1.1 through a handler closure.
/// Everything about the TLS side is fixed when the server is created: the certificate chain
/// (per SNI name if wanted), versions, ALPN, client-certificate checking and resumption.
/// A ``Behavior`` other than ``Behavior/normal`` turns it into a misbehaving peer for
/// robustness tests.
///
/// ```swift
/// let pki = try LabPKI.webChain(host: "www.example.test")
/// let server = try LabTLSServer(.init(identity: .init(pki: pki)))
/// try server.start()
/// defer { server.stop() }
/// // curl --cacert root.pem --resolve www.example.test:\(server.port):127.0.0.1 https://www.example.test:\(server.port)/
/// ```
///
/// ``stop()`` closes the listening socket, ends every connection and joins every thread
/// before it returns; dropping the last reference stops the server too.
public final class LabTLSServer: Sendable {
    /// A certificate chain and the private key for its leaf.
    public struct Identity: Sendable, Hashable {
        /// The certificates to send, leaf first (normally leaf then intermediates, no root).
        public var chain: [LabCertificate]
        /// The leaf's private key.
        public var key: LabKey
        /// A TLS-encoded `SignedCertificateTimestampList` (``LabSCT/list(_:)``) sent in the
        /// `signed_certificate_timestamp` extension to clients that ask for it, as
        /// `openssl s_server -serverinfo` does (RFC 6962 §3.3). Only for the default identity:
        /// OpenSSL keeps server info per context, so SNI identities cannot carry their own.
        public var signedCertificateTimestamps: [UInt8]?

        /// Pairs a chain with its key.
        ///
        /// - Parameters:
        ///   - chain: Leaf first.
        ///   - key: The leaf's private key.
        ///   - signedCertificateTimestamps: An SCT list for the TLS extension, if any.
        public init(chain: [LabCertificate], key: LabKey, signedCertificateTimestamps: [UInt8]? = nil) {
            self.chain = chain
            self.key = key
            self.signedCertificateTimestamps = signedCertificateTimestamps
        }

        /// The ``LabPKI/serverChain`` (leaf, intermediate) and ``LabPKI/leafKey`` of a PKI.
        ///
        /// - Parameter pki: The PKI.
        public init(pki: LabPKI) {
            self.init(chain: pki.serverChain, key: pki.leafKey)
        }
    }

    /// Whether and how the server asks clients for certificates.
    public struct ClientAuthentication: Sendable, Hashable {
        /// Whether a certificate is mandatory.
        public enum Mode: Sendable, Hashable {
            /// The handshake fails without a valid client certificate.
            case required
            /// A certificate is requested; none is accepted, a bad one still fails.
            case optional
        }

        /// CA certificates (roots, and intermediates the client may omit) that client chains
        /// are verified against, at the current wall-clock time.
        public var trustedCertificates: [LabCertificate]
        /// Required or optional.
        public var mode: Mode

        /// Creates a client-certificate policy.
        ///
        /// - Parameters:
        ///   - trustedCertificates: The CA certificates to verify against.
        ///   - mode: Required (default) or optional.
        public init(trustedCertificates: [LabCertificate], mode: Mode = .required) {
            self.trustedCertificates = trustedCertificates
            self.mode = mode
        }
    }

    /// How the server treats each accepted connection.
    public enum Behavior: Sendable, Hashable {
        /// TLS handshake, then HTTP/1.1.
        case normal
        /// Close the socket right after `accept`, before reading anything.
        case closeAfterAccept
        /// Read the first bytes of the ClientHello, then close (the handshake never finishes).
        case closeMidHandshake
        /// Accept and never answer, until the server is stopped.
        case stall
        /// Read the first bytes of the ClientHello, answer with a fatal TLS alert record of
        /// the given AlertDescription (RFC 8446 §6; 40 is handshake_failure), then close.
        case sendAlert(UInt8)
        /// Complete the handshake and read one request, then send only part of the response
        /// (up to the ``LabResponseCut``) and end the connection as ``LabCutEnding`` says.
        case cutResponse(LabResponseCut, then: LabCutEnding)
    }

    /// Everything the server is built from.
    public struct Configuration: Sendable {
        /// Appears in the default response body (`hello from <name>`) and in diagnostics.
        public var name: String
        /// The chain and key served when no ``serverNameIdentities`` entry matches the SNI.
        public var identity: Identity
        /// Chains served per SNI host name (compared case-insensitively).
        public var serverNameIdentities: [String: Identity]
        /// The lowest TLS version accepted.
        public var minimumTLSVersion: LabTLSVersion
        /// The highest TLS version accepted.
        public var maximumTLSVersion: LabTLSVersion
        /// ALPN protocols the server selects from, in its preference order. Only HTTP/1.1 is
        /// implemented, so offering `h2` makes h2-capable clients fail after the handshake.
        public var alpnProtocols: [String]
        /// Client-certificate checking, or `nil` not to request certificates.
        public var clientAuthentication: ClientAuthentication?
        /// Session cache plus tickets when `true`; no resumption of any kind when `false`.
        public var sessionResumption: Bool
        /// Normal service or a fault mode.
        public var behavior: Behavior
        /// Answers each request; `nil` answers 200 `hello from <name>`.
        public var handler: (@Sendable (LabHTTPRequest) -> LabHTTPResponse)?
        /// Which loopback address to bind.
        public var address: LabLoopbackAddress
        /// Connections served at once; more wait in the listen backlog.
        public var maximumConnections: Int
        /// Seconds a TLS handshake may take.
        public var handshakeTimeout: Double
        /// Seconds a keep-alive connection may sit idle between requests (default 300). Long,
        /// because tests assert connection reuse, and Swift Testing runs every suite at once on
        /// the two-thread cooperative pool: in full AddressSanitizer runs a test can wait tens
        /// of seconds between two requests. With the earlier 30 s default, two reuse tests
        /// failed now and then in such runs, each ~50 s in, which this explains (bad-input
        /// catalogue §11).
        /// Connections a client leaves open end with ``LabTLSServer/stop()`` anyway.
        public var idleTimeout: Double

        /// Creates a configuration with the defaults: TLS 1.2–1.3, ALPN `http/1.1`, no client
        /// certificates, resumption on, normal behaviour, 127.0.0.1, 128 connections.
        ///
        /// - Parameters:
        ///   - identity: The default chain and key.
        ///   - name: Name used in the default body and thread names.
        public init(identity: Identity, name: String = "LabTLSServer") {
            self.name = name
            self.identity = identity
            self.serverNameIdentities = [:]
            self.minimumTLSVersion = .tls1_2
            self.maximumTLSVersion = .tls1_3
            self.alpnProtocols = ["http/1.1"]
            self.clientAuthentication = nil
            self.sessionResumption = true
            self.behavior = .normal
            self.handler = nil
            self.address = .ipv4
            self.maximumConnections = 128
            self.handshakeTimeout = 10
            self.idleTimeout = 300
        }
    }

    /// What the server saw on one connection.
    public struct ConnectionRecord: Sendable {
        /// Zero-based accept order.
        public var index: Int
        /// Whether the TLS handshake completed.
        public var handshakeCompleted: Bool
        /// The SNI host name the client sent, if any (recorded for failed handshakes too, once
        /// the ClientHello was read).
        public var serverName: String?
        /// The negotiated version as OpenSSL names it (`TLSv1.3`), after the handshake.
        public var tlsVersion: String?
        /// The ALPN protocol selected, if any.
        public var alpnProtocol: String?
        /// Whether the handshake resumed a session.
        public var resumed: Bool
        /// The certificates the client presented, leaf first (empty when none).
        public var clientCertificates: [LabCertificate]
        /// HTTP requests answered on this connection.
        public var requests: Int
        /// Why the connection failed or ended abnormally, if it did.
        public var failure: String?
    }

    /// Counters since the server started.
    public struct Statistics: Sendable {
        /// Connections accepted (including ones a fault behaviour dropped).
        public var connectionsAccepted: Int = 0
        /// TLS handshakes completed.
        public var handshakesCompleted: Int = 0
        /// Completed handshakes that resumed a session (`SSL_session_reused`).
        public var handshakesResumed: Int = 0
        /// TLS handshakes that failed.
        public var handshakesFailed: Int = 0
        /// HTTP requests answered (including ones a ``Behavior/cutResponse(_:then:)`` server
        /// answered only in part).
        public var requestsServed: Int = 0
        /// One record per accepted connection, in accept order.
        public var connections: [ConnectionRecord] = []

        /// The SNI name of each connection whose handshake completed, in accept order.
        public var serverNamesSeen: [String?] {
            connections.filter(\.handshakeCompleted).map(\.serverName)
        }
    }

    /// The configuration the server was built from.
    public let configuration: Configuration

    private let engine: LabTLSServerEngine
    private let listener: LabListener

    /// Builds the TLS context (the server does not listen until ``start()``).
    ///
    /// - Parameter configuration: The server's setup.
    /// - Throws: ``LabError`` if a certificate or key is unusable or OpenSSL rejects a setting.
    public init(_ configuration: Configuration) throws {
        self.configuration = configuration
        let instance = labInstanceCounter.add(1, ordering: .relaxed).newValue
        let stopFlag = LabStopFlag()
        let engine = try LabTLSServerEngine(configuration: configuration, stopFlag: stopFlag, instance: instance)
        self.engine = engine
        self.listener = LabListener(
            threadName: "labtls-\(instance)", maximumConnections: configuration.maximumConnections,
            stopFlag: stopFlag
        ) { socket, index in
            engine.serve(socket, index: index)
        }
    }

    deinit { listener.stop() }

    /// Creates and starts a server in one step.
    ///
    /// - Parameter configuration: The server's setup.
    /// - Returns: A listening server.
    /// - Throws: ``LabError`` as ``init(_:)`` and ``start()`` do.
    public static func started(_ configuration: Configuration) throws -> LabTLSServer {
        let server = try LabTLSServer(configuration)
        try server.start()
        return server
    }

    /// Binds a port chosen by the OS and starts accepting; returns once the socket listens.
    ///
    /// - Throws: ``LabError`` if the server was started before or the socket cannot listen.
    public func start() throws {
        _ = try listener.start(on: configuration.address)
    }

    /// Stops accepting, closes every connection and the listening socket, and joins every
    /// thread. Safe to call more than once; do not call it from inside a handler.
    public func stop() {
        listener.stop()
    }

    /// The listening port (0 before ``start()``).
    public var port: UInt16 { listener.port }

    /// The loopback address the server listens on.
    public var address: LabLoopbackAddress { configuration.address }

    /// The name all of this server's threads carry (as seen in `/proc/self/task/*/comm`).
    public var threadName: String { listener.threads.name }

    /// A snapshot of the counters.
    public var statistics: Statistics { engine.statistics.withLock { $0 } }

    /// An `https` URL for this server.
    ///
    /// - Parameters:
    ///   - host: The URL host (use with curl's `--resolve host:port:127.0.0.1`); `nil` uses
    ///     the IP literal.
    ///   - path: The path, starting with `/`.
    /// - Returns: `https://host:port/path`.
    public func url(host: String? = nil, path: String = "/") -> String {
        let literal = address == .ipv6 ? "[::1]" : "127.0.0.1"
        return "https://\(host ?? literal):\(port)\(path)"
    }
}

/// The part of a server its threads use: the TLS context, the handler and the counters.
final class LabTLSServerEngine: Sendable {
    let configuration: LabTLSServer.Configuration
    let context: LabSSLContext
    let stopFlag: LabStopFlag
    let statistics = Mutex(LabTLSServer.Statistics())

    init(configuration: LabTLSServer.Configuration, stopFlag: LabStopFlag, instance: Int) throws {
        self.configuration = configuration
        self.stopFlag = stopFlag
        var sniIdentities: [String: LabServerIdentity] = [:]
        for (host, identity) in configuration.serverNameIdentities {
            guard identity.signedCertificateTimestamps == nil, configuration.identity.signedCertificateTimestamps == nil else {
                throw LabError.invalid("LabTLSServer", "SCTs in the TLS extension are served for the default identity only, not with SNI identities")
            }
            sniIdentities[host.lowercased()] = try LabServerIdentity(certificates: identity.chain, key: identity.key)
        }
        let verification = configuration.clientAuthentication.map {
            LabClientVerification(trustedCertificates: $0.trustedCertificates, required: $0.mode == .required)
        }
        self.context = try LabSSLContext.server(
            identity: try LabServerIdentity(
                certificates: configuration.identity.chain, key: configuration.identity.key,
                signedCertificateTimestamps: configuration.identity.signedCertificateTimestamps),
            sniIdentities: sniIdentities,
            minimumVersion: configuration.minimumTLSVersion,
            maximumVersion: configuration.maximumTLSVersion,
            alpn: configuration.alpnProtocols,
            clientVerification: verification,
            sessionResumption: configuration.sessionResumption,
            sessionIDContext: "labtls-\(instance)"
        )
    }

    private func update(_ index: Int, _ change: (inout LabTLSServer.Statistics, inout LabTLSServer.ConnectionRecord) -> Void) {
        statistics.withLock { statistics in
            guard let position = statistics.connections.firstIndex(where: { $0.index == index }) else { return }
            // The record is edited as a copy: the closure may not hold two inout paths into
            // the same value at once.
            var record = statistics.connections[position]
            change(&statistics, &record)
            statistics.connections[position] = record
        }
    }

    /// Serves one accepted connection on its own thread.
    func serve(_ socket: LabSocket, index: Int) {
        statistics.withLock {
            $0.connectionsAccepted += 1
            $0.connections.append(
                LabTLSServer.ConnectionRecord(
                    index: index, handshakeCompleted: false, serverName: nil, tlsVersion: nil, alpnProtocol: nil,
                    resumed: false, clientCertificates: [], requests: 0, failure: nil))
        }
        let handshakeDeadline = LabDeadline.after(configuration.handshakeTimeout)
        switch configuration.behavior {
        case .normal:
            break
        case .closeAfterAccept:
            return
        case .closeMidHandshake:
            _ = try? socket.receive(limit: 5, until: handshakeDeadline, stop: stopFlag)
            return
        case .stall:
            while !stopFlag.isSet { _ = poll(nil, 0, 50) }
            return
        case .sendAlert(let description):
            // Wait for the ClientHello so the client is mid-handshake, then send a plaintext
            // alert record: ContentType alert(21), legacy version 3.3, length 2, fatal(2).
            _ = try? socket.receive(limit: 16_384, until: handshakeDeadline, stop: stopFlag)
            try? socket.sendAll([21, 3, 3, 0, 2, 2, description], until: handshakeDeadline, stop: stopFlag)
            return
        case .cutResponse:
            break  // the fault happens after the request: see serveRequests
        }

        let connection: LabTLSConnection
        do {
            connection = try LabTLSConnection(socket: socket, context: context)
        } catch {
            update(index) { statistics, record in
                statistics.handshakesFailed += 1
                record.failure = "SSL_new: \(error)"
            }
            return
        }
        do {
            try connection.handshake(asServer: true, until: handshakeDeadline, stop: stopFlag)
        } catch {
            // A client that rejects the certificate has still sent its SNI; keep it.
            let serverName = connection.serverName
            update(index) { statistics, record in
                statistics.handshakesFailed += 1
                record.serverName = serverName
                record.failure = "handshake: \(error)"
            }
            return
        }
        let serverName = connection.serverName
        let version = connection.version
        let alpn = connection.alpnProtocol
        let resumed = connection.sessionReused
        let clientCertificates = configuration.clientAuthentication == nil ? [] : connection.peerCertificates
        update(index) { statistics, record in
            statistics.handshakesCompleted += 1
            if resumed { statistics.handshakesResumed += 1 }
            record.handshakeCompleted = true
            record.serverName = serverName
            record.tlsVersion = version
            record.alpnProtocol = alpn
            record.resumed = resumed
            record.clientCertificates = clientCertificates
        }

        do {
            if case .cutResponse(let cut, let ending) = configuration.behavior {
                try serveCutResponse(on: connection, index: index, cut: cut, ending: ending)
                return
            }
            try serveRequests(on: connection, index: index, serverName: serverName)
            connection.shutdown()
        } catch .closed, .stopped {
            // The client went away, or the server is stopping: both are normal ends.
        } catch {
            update(index) { _, record in record.failure = "\(error)" }
        }
    }

    /// ``LabTLSServer/Behavior/cutResponse(_:then:)``: waits for one complete request, sends
    /// the response up to the cut, then closes (with or without close_notify) or stalls.
    private func serveCutResponse(
        on connection: LabTLSConnection, index: Int, cut: LabResponseCut,
        ending: LabCutEnding
    ) throws(LabIOEnd) {
        var buffer: [UInt8] = []
        while true {
            // A request the parser refuses still counts as "the request arrived": the fault is
            // about what happens next, not about the request.
            if case .incomplete? = try? LabHTTPRequestParser.parse(buffer, continueSent: true) {
                buffer += try connection.read(until: .after(configuration.idleTimeout), stop: stopFlag)
                continue
            }
            break
        }
        update(index) { statistics, record in
            statistics.requestsServed += 1
            record.requests += 1
        }
        let partial = cut.partialResponse
        if !partial.isEmpty {
            try connection.writeAll(partial, until: .after(configuration.idleTimeout), stop: stopFlag)
        }
        switch ending {
        case .closeNotify:
            connection.shutdown()
        case .closeWithoutNotify:
            // Returning closes the socket with no TLS close_notify: what a crashed process does.
            break
        case .stall:
            // Silent until the server stops or the client gives up and closes (so a stress run
            // against a stalling server does not pile up threads); the idle timeout bounds it.
            while true {
                try connection.socket.wait(for: Int16(POLLIN), until: .after(configuration.idleTimeout), stop: stopFlag)
                if case .closed = try connection.tryRead() { return }
            }
        }
    }

    /// The HTTP/1.1 keep-alive loop: parse, answer, repeat until either side closes.
    private func serveRequests(on connection: LabTLSConnection, index: Int, serverName: String?) throws(LabIOEnd) {
        var buffer: [UInt8] = []
        var continueSent = false
        while true {
            let progress: LabHTTPRequestParser.Progress
            do {
                progress = try LabHTTPRequestParser.parse(buffer, continueSent: continueSent)
            } catch {
                let response = LabHTTPResponse.text(error.reason + "\n", status: error.status)
                try connection.writeAll(
                    response.serialized(headRequest: false, closing: true),
                    until: .after(configuration.idleTimeout), stop: stopFlag)
                return
            }
            switch progress {
            case .incomplete:
                // A partly received request gets the same allowance as an idle connection.
                buffer += try connection.read(until: .after(configuration.idleTimeout), stop: stopFlag)
            case .expectsContinue:
                continueSent = true
                try connection.writeAll(
                    Array("HTTP/1.1 100 Continue\r\n\r\n".utf8),
                    until: .after(configuration.idleTimeout), stop: stopFlag)
            case .request(var request, let consumed):
                buffer.removeFirst(consumed)
                continueSent = false
                request.serverName = serverName
                request.connectionIndex = index
                let response = configuration.handler?(request) ?? .text("hello from \(configuration.name)")
                if response.dropsConnection { return }
                let keepAlive = request.keepsAlive && response.header("Connection")?.lowercased() != "close"
                // Counted before the bytes leave, so a client that has the response can rely
                // on the counter.
                update(index) { statistics, record in
                    statistics.requestsServed += 1
                    record.requests += 1
                }
                try connection.writeAll(
                    response.serialized(headRequest: request.method == "HEAD", closing: !keepAlive),
                    until: .after(configuration.idleTimeout), stop: stopFlag)
                if case .repeated(let byte, let count) = response.body, request.method != "HEAD" {
                    let block = [UInt8](repeating: byte, count: 1 << 20)
                    var left = count
                    while left > 0 {
                        let size = min(left, block.count)
                        try connection.writeAll(
                            size == block.count ? block : Array(block[..<size]),
                            until: .after(configuration.idleTimeout), stop: stopFlag)
                        left -= size
                    }
                }
                if !keepAlive { return }
            }
        }
    }
}

/// Where a ``LabTLSServer/Behavior/cutResponse(_:then:)`` server stops sending its response.
public enum LabResponseCut: String, Sendable, Hashable, CaseIterable {
    /// Nothing at all: the request is read and never answered.
    case beforeResponse
    /// The status line and part of a header field (`HTTP/1.1 200 OK`, `Content-Type: text/pl`),
    /// never the blank line that ends the header section.
    case midHeaders
    /// A complete header section announcing `Content-Length: 2048`, then 1024 body bytes.
    case midBody

    /// The bytes sent before the cut.
    public var partialResponse: [UInt8] {
        switch self {
        case .beforeResponse:
            return []
        case .midHeaders:
            return Array("HTTP/1.1 200 OK\r\nServer: ServerTrustLab\r\nContent-Type: text/pl".utf8)
        case .midBody:
            let head =
                "HTTP/1.1 200 OK\r\nServer: ServerTrustLab\r\nContent-Type: application/octet-stream\r\n"
                + "Content-Length: \(Self.announcedBodyLength)\r\n\r\n"
            return Array(head.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: Self.announcedBodyLength / 2)
        }
    }

    /// The `Content-Length` a ``midBody`` cut announces (it sends half of it).
    public static let announcedBodyLength = 2048
}

/// How a ``LabTLSServer/Behavior/cutResponse(_:then:)`` server ends the connection at the cut.
public enum LabCutEnding: String, Sendable, Hashable, CaseIterable {
    /// A TLS close_notify, then the socket closes: a clean TLS end, so only HTTP framing can
    /// tell the client the response is incomplete.
    case closeNotify
    /// The socket closes with no close_notify (a crashed or killed server): a TLS-level
    /// truncation the client sees as an unexpected EOF.
    case closeWithoutNotify
    /// Nothing more is sent and the connection stays open until the server stops: only the
    /// client's timeout ends the request.
    case stall
}
