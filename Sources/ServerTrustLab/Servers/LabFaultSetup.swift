internal import Glibc
internal import Synchronization

/// Network faults a client must turn into a typed error within its timeout, without leaking a
/// descriptor or hanging (the list of `docs/bad-input-catalogue.md` §10, "Network faults").
///
/// ``LabFaultSetup/start(_:)`` builds the loopback servers for one fault. The names say what
/// the peer does; what the client should report is the client's business (the tests and
/// `servertrust stress faults` hold those tables).
public enum LabFault: String, Sendable, Hashable, CaseIterable {
    /// Nothing listens on the port (held by a `LabClosedPort` for the life of the setup, so
    /// no other server can take it).
    case connectionRefused
    /// The server closes the TCP connection right after `accept`.
    case closeAfterAccept
    /// The server reads part of the ClientHello, then closes.
    case closeMidHandshake
    /// The server accepts and never answers the ClientHello.
    case stallInHandshake
    /// The server answers the ClientHello with a fatal handshake_failure alert (40).
    case alertHandshakeFailure
    /// The server answers the ClientHello with a fatal protocol_version alert (70).
    case alertProtocolVersion
    /// After the handshake the server reads the request and closes cleanly (close_notify)
    /// without sending a byte of response.
    case emptyReply
    /// Part of the header section, then close_notify.
    case closeMidHeaders
    /// Part of the header section, then a close without close_notify.
    case closeMidHeadersWithoutNotify
    /// A complete head with `Content-Length: 2048`, 1024 body bytes, then close_notify.
    case closeMidBody
    /// A complete head with `Content-Length: 2048`, 1024 body bytes, then a close without
    /// close_notify.
    case closeMidBodyWithoutNotify
    /// After the handshake the server reads the request and never answers.
    case stallBeforeResponse
    /// A complete head, half the body, then silence.
    case stallMidBody
    /// The HTTP proxy answers `CONNECT` with `403 Forbidden` (the origin behind it is healthy).
    case proxyRefusesConnect
    /// The URL's host is under `.invalid` (RFC 6761 §6.4: never resolves) and no override
    /// maps it to an address.
    case unresolvableHost
    /// The server sends a chain of 50 certificates (leaf plus 49 CAs, all well-formed).
    case chainOf50Certificates
    /// The server sends a leaf of more than 1 MiB (a subjectAltName with ~38,800 names).
    case megabyteCertificate

    /// Whether only the client's own timeout can end a request against this fault (the
    /// server stays silent with the connection open).
    public var endsOnlyByClientTimeout: Bool {
        switch self {
        case .stallInHandshake, .stallBeforeResponse, .stallMidBody: return true
        default: return false
        }
    }
}

/// The loopback servers for one ``LabFault``, and what a client needs to meet it: the URL,
/// the root to trust, `--resolve`-style overrides and the proxy, if any.
///
/// ```swift
/// let setup = try LabFaultSetup.start(.closeMidBody)
/// defer { setup.stop() }
/// // curl --cacert root.pem --resolve <setup.resolve[0]> <setup.url>   → curl: (18) …
/// ```
public final class LabFaultSetup: Sendable {
    /// The fault this setup produces.
    public let fault: LabFault
    /// The host name in ``url``.
    public let host: String
    /// The URL to request.
    public let url: String
    /// The root the client should trust: every certificate served here chains to it, so a
    /// failure is never a plain "unknown issuer".
    public let root: LabCertificate
    /// curl-style `HOST:PORT:ADDRESS` entries (empty for ``LabFault/unresolvableHost``).
    public let resolve: [String]
    /// The proxy to send the request through (`http://127.0.0.1:PORT`), if any.
    public let proxyURL: String?
    /// The TLS server (the origin behind the proxy for ``LabFault/proxyRefusesConnect``),
    /// or `nil` when the fault needs none.
    public let server: LabTLSServer?
    /// The refusing proxy of ``LabFault/proxyRefusesConnect``.
    public let relay: LabMITMRelay?
    /// The port of ``LabFault/connectionRefused``.
    package let closedPort: LabClosedPort?

    /// The host every setup serves, a name under the reserved `.test` TLD (RFC 6761 §6.2).
    public static let host = "www.example.test"
    /// The host of ``LabFault/unresolvableHost``, under `.invalid` (RFC 6761 §6.4).
    public static let unresolvableHost = "no-such-host.invalid"

    private init(
        fault: LabFault, host: String, url: String, root: LabCertificate, resolve: [String], proxyURL: String?,
        server: LabTLSServer?, relay: LabMITMRelay?, closedPort: LabClosedPort? = nil
    ) {
        self.fault = fault
        self.host = host
        self.url = url
        self.root = root
        self.resolve = resolve
        self.proxyURL = proxyURL
        self.server = server
        self.relay = relay
        self.closedPort = closedPort
    }

    deinit { stop() }

    /// Stops every server of the setup (idempotent); afterwards it holds no socket or thread.
    public func stop() {
        relay?.stop()
        server?.stop()
        closedPort?.close()
    }

    /// Builds and starts the servers for `fault`.
    ///
    /// Leaves are valid around the current wall-clock time (clients check validity against
    /// it); the 50-certificate chain and the 1 MiB leaf are built once per process and reused.
    ///
    /// - Parameter fault: The fault.
    /// - Returns: A running setup; call ``stop()`` when done.
    /// - Throws: ``LabError`` if a certificate cannot be made or a socket cannot listen.
    public static func start(_ fault: LabFault) throws -> LabFaultSetup {
        let pki = try LabFaultPKI.shared()
        let identity = LabTLSServer.Identity(pki: pki.web)
        func startServer(_ identity: LabTLSServer.Identity, _ behavior: LabTLSServer.Behavior) throws -> LabTLSServer {
            var configuration = LabTLSServer.Configuration(identity: identity, name: "fault-\(fault.rawValue)")
            configuration.behavior = behavior
            return try LabTLSServer.started(configuration)
        }
        func serve(_ identity: LabTLSServer.Identity, _ behavior: LabTLSServer.Behavior) throws -> LabFaultSetup {
            let server = try startServer(identity, behavior)
            return LabFaultSetup(
                fault: fault, host: host, url: server.url(host: host), root: pki.web.root,
                resolve: ["\(host):\(server.port):127.0.0.1"], proxyURL: nil, server: server, relay: nil)
        }
        switch fault {
        case .connectionRefused:
            let closed = try LabClosedPort()
            return LabFaultSetup(
                fault: fault, host: host, url: "https://\(host):\(closed.port)/", root: pki.web.root,
                resolve: ["\(host):\(closed.port):127.0.0.1"], proxyURL: nil, server: nil, relay: nil, closedPort: closed)
        case .closeAfterAccept: return try serve(identity, .closeAfterAccept)
        case .closeMidHandshake: return try serve(identity, .closeMidHandshake)
        case .stallInHandshake: return try serve(identity, .stall)
        case .alertHandshakeFailure: return try serve(identity, .sendAlert(40))
        case .alertProtocolVersion: return try serve(identity, .sendAlert(70))
        case .emptyReply: return try serve(identity, .cutResponse(.beforeResponse, then: .closeNotify))
        case .closeMidHeaders: return try serve(identity, .cutResponse(.midHeaders, then: .closeNotify))
        case .closeMidHeadersWithoutNotify: return try serve(identity, .cutResponse(.midHeaders, then: .closeWithoutNotify))
        case .closeMidBody: return try serve(identity, .cutResponse(.midBody, then: .closeNotify))
        case .closeMidBodyWithoutNotify: return try serve(identity, .cutResponse(.midBody, then: .closeWithoutNotify))
        case .stallBeforeResponse: return try serve(identity, .cutResponse(.beforeResponse, then: .stall))
        case .stallMidBody: return try serve(identity, .cutResponse(.midBody, then: .stall))
        case .chainOf50Certificates: return try serve(pki.deepChain, .normal)
        case .megabyteCertificate: return try serve(pki.oversized, .normal)
        case .proxyRefusesConnect:
            let origin = try startServer(identity, .normal)
            var configuration = LabMITMRelay.Configuration(
                mode: .httpProxy, interceptionCA: pki.web.intermediateIssuer,
                name: "fault-proxy")
            configuration.refuseConnect = true
            configuration.hostOverrides = [host: "127.0.0.1"]
            let relay = try LabMITMRelay.started(configuration)
            // The origin is healthy and the proxy could reach it: only the proxy's policy refuses.
            return LabFaultSetup(
                fault: fault, host: host, url: origin.url(host: host), root: pki.web.root, resolve: [],
                proxyURL: relay.proxyURL, server: origin, relay: relay)
        case .unresolvableHost:
            return LabFaultSetup(
                fault: fault, host: unresolvableHost, url: "https://\(unresolvableHost)/", root: pki.web.root,
                resolve: [], proxyURL: nil, server: nil, relay: nil)
        }
    }
}

/// The certificates every fault setup serves, built once per process: the 50-certificate
/// chain costs 49 key generations and the 1 MiB leaf a megabyte of DER encoding and signing.
private struct LabFaultPKI: Sendable {
    let web: LabPKI
    let deepChain: LabTLSServer.Identity
    let oversized: LabTLSServer.Identity

    private static let cache = Mutex<LabFaultPKI?>(nil)

    static func shared() throws -> LabFaultPKI {
        // Built under the lock: concurrent first users wait for one build instead of racing.
        try cache.withLock { cached throws -> LabFaultPKI in
            if let cached { return cached }
            let now = Int64(time(nil))
            let notBefore = now - LabClock.day
            let notAfter = now + 30 * LabClock.day
            let web = try LabPKI.webChain(host: LabFaultSetup.host, leafNotBefore: notBefore, leafNotAfter: notAfter, keySlot: 61)
            let deep = try web.deepChain(host: LabFaultSetup.host, length: 50, leafNotBefore: notBefore, leafNotAfter: notAfter)
            let big = try web.oversizedLeaf(host: LabFaultSetup.host, minimumSize: 1 << 20, notBefore: notBefore, notAfter: notAfter)
            let built = LabFaultPKI(
                web: web, deepChain: deep,
                oversized: LabTLSServer.Identity(chain: [big, web.intermediate], key: web.leafKey))
            cached = built
            return built
        }
    }
}
