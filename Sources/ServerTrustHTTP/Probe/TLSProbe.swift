package import CertificateParsing
internal import ServerTrust
internal import Synchronization

/// What a TLS server presented on one connection: the chain exactly as served and the facts
/// of the handshake, with no trust decision attached (``TLSProbe`` makes none).
package struct ProbeResult: Sendable {
    /// The host the probe asked for (SNI and `Host`), without brackets for IPv6.
    package let host: String
    /// The port.
    package let port: Int
    /// The certificates in the order the server sent them, leaf first. Never empty.
    package let chain: [Certificate]
    /// The negotiated protocol version as OpenSSL names it (`TLSv1.3`), when known.
    package let tlsVersion: String?
    /// The application protocol the connection used, in ALPN's spelling: `h2` when the server
    /// selected HTTP/2 through ALPN, `http/1.1` otherwise. libcurl offers `h2,http/1.1` and does
    /// not report whether the server answered ALPN at all, so a server without ALPN also shows
    /// `http/1.1`. `nil` when no request was sent (``TLSProbe/Request/handshakeOnly``) or the
    /// request failed.
    package let alpn: String?
    /// The negotiated cipher suite (OpenSSL's name), if known.
    package let cipher: String?
    /// The HTTP version of the `HEAD` exchange (`HTTP/1.1`, `HTTP/2`), when one completed.
    package let httpVersion: String?
    /// The status of the `HEAD` response, when one completed.
    package let httpStatus: Int?
    /// Why the `HEAD` request failed after the chain had been recorded (a server that
    /// requires a client certificate, or does not speak HTTP), if it did.
    package let requestError: HTTPError?

    /// Creates a probe result.
    ///
    /// - Parameters:
    ///   - host: The host asked for.
    ///   - port: The port.
    ///   - chain: The served certificates, leaf first.
    ///   - tlsVersion: The negotiated version, if known.
    ///   - alpn: The application protocol, if known.
    ///   - cipher: The cipher suite, if known.
    ///   - httpVersion: The HTTP version of the request, if one completed.
    ///   - httpStatus: The response status, if one completed.
    ///   - requestError: The request's failure, if it failed after the handshake.
    package init(
        host: String, port: Int, chain: [Certificate], tlsVersion: String?, alpn: String? = nil, cipher: String? = nil,
        httpVersion: String? = nil, httpStatus: Int? = nil, requestError: HTTPError? = nil
    ) {
        self.cipher = cipher
        self.host = host
        self.port = port
        self.chain = chain
        self.tlsVersion = tlsVersion
        self.alpn = alpn
        self.httpVersion = httpVersion
        self.httpStatus = httpStatus
        self.requestError = requestError
    }
}

/// Connects to a TLS server and records what it serves, the way `openssl s_client` does, over
/// the same libcurl transport as ``HTTPSession``.
///
/// The probe's decider records the served chain inside OpenSSL's certificate-verify callback.
/// With ``Request/handshakeOnly`` it then refuses the chain, so the handshake is aborted and
/// nothing is sent; with ``Request/head`` it lets the handshake finish and sends one `HEAD`
/// request (no redirects followed, no credentials), which tells the HTTP version and so
/// the ALPN protocol. Either way nothing the server sends is trusted or kept: the session
/// exists only for the call, so the recording decider can never judge another connection.
///
/// ```swift
/// let probe = try await TLSProbe.fetch(host: "www.example.org")
/// print(probe.tlsVersion ?? "?", probe.chain.map(\.subject.rfc4514))
/// ```
///
/// The cipher suite and the ALPN choice are read in the verify callback, where the handshake
/// has settled both; formerly the transport did not expose the `SSL` object of a
/// connection outside its TLS hooks.
package enum TLSProbe {
    /// What the probe sends once the chain has been recorded.
    package enum Request: Sendable, Hashable {
        /// Abort the handshake in the verify callback: no HTTP byte is sent, ALPN stays unknown.
        case handshakeOnly
        /// Complete the handshake and send `HEAD /`, to learn the negotiated HTTP version.
        case head
    }

    /// Connects to `host:port` and returns what the server presented.
    ///
    /// - Parameters:
    ///   - host: The host name (sent as SNI) or IP literal (IPv6 without brackets).
    ///   - port: The TCP port.
    ///   - address: Connect to this IP address instead of resolving `host` (curl's
    ///     `--resolve host:port:address`); `nil` resolves `host`.
    ///   - timeout: Seconds for the whole probe (connect, handshake and request).
    ///   - request: Whether to abort after the chain or send a `HEAD` request.
    ///   - proxy: Reach the server through this proxy (`CONNECT`), to see what a client on
    ///     that network is served: an intercepting proxy's minted chain, say. An `https://`
    ///     proxy's own certificate is decided by its ``ProxyConfiguration/serverTrust``; only
    ///     the server's chain is recorded. Cannot be combined with `address` (the proxy
    ///     resolves the host).
    /// - Returns: The served chain and the connection facts.
    /// - Throws: ``HTTPError/invalidRequest(_:)`` for a bad host, port, address, timeout or
    ///   proxy; the transport's ``HTTPError`` when no certificate arrived (connection refused,
    ///   name not found, handshake failure, timeout, a proxy that refused or was not trusted).
    package static func fetch(
        host: String, port: Int = 443, connectTo address: String? = nil, timeout: Double = 10, request: Request = .handshakeOnly,
        proxy: ProxyConfiguration? = nil
    ) async throws(HTTPError) -> ProbeResult {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard !bare.isEmpty, !bare.contains(where: { $0 == "/" || $0 == " " || $0 == "@" || $0 == "?" || $0 == "#" }) else {
            throw .invalidRequest("'\(host)' is not a host name or IP address")
        }
        guard (1...65535).contains(port) else { throw .invalidRequest("port \(port) is not in 1-65535") }
        guard timeout > 0, timeout.isFinite else { throw .invalidRequest("timeout must be a positive number of seconds") }
        let isIPv6 = bare.contains(":")
        let authority = (isIPv6 ? "[\(bare)]" : bare) + ":\(port)"

        let recorder = ChainRecorder()
        var configuration = HTTPSessionConfiguration(
            serverTrust: ServerTrustDecider(RecordingEvaluator(recorder: recorder, accepts: request == .head), anchors: .empty))
        if let address {
            guard proxy == nil else { throw .invalidRequest("an address to connect to and a proxy exclude each other (the proxy resolves \(bare))") }
            guard !address.isEmpty, !address.contains("/") else { throw .invalidRequest("'\(address)' is not an address to connect to") }
            let connect = address.contains(":") && !address.hasPrefix("[") ? "[\(address)]" : address
            configuration.resolve = ["\(authority):\(connect)"]
        }
        configuration.timeout = timeout
        configuration.connectTimeout = timeout
        configuration.maximumRedirects = 0
        configuration.tlsSessionResumption = false
        configuration.acceptsCompressedResponses = false
        configuration.maximumTransferThreads = 1
        configuration.proxy = proxy
        let session = try HTTPSession(configuration: configuration)
        defer { session.invalidate() }

        var probeRequest = HTTPRequest(.head, "https://\(authority)/")
        probeRequest.usesFreshConnection = true
        let outcome: Result<HTTPResponse, HTTPError>
        do {
            outcome = .success(try await session.send(probeRequest))
        } catch {
            outcome = .failure(error)
        }
        guard let served = recorder.served, !served.certificates.isEmpty else {
            switch outcome {
            case .failure(let error): throw error
            case .success: throw .invalidRequest("the server at \(authority) presented no certificate")
            }
        }
        switch outcome {
        case .success(let response):
            return ProbeResult(
                host: bare, port: port, chain: served.certificates, tlsVersion: served.tlsVersion ?? response.tlsVersion,
                alpn: served.alpn, cipher: served.cipher, httpVersion: response.httpVersion,
                httpStatus: response.statusCode)
        case .failure(let error):
            // The refusal the probe itself made is the expected end of a handshake-only probe.
            if case .serverTrustRejected(let decision) = error, decision.evaluator == RecordingEvaluator.name {
                return ProbeResult(host: bare, port: port, chain: served.certificates, tlsVersion: served.tlsVersion, alpn: served.alpn, cipher: served.cipher)
            }
            return ProbeResult(
                host: bare, port: port, chain: served.certificates, tlsVersion: served.tlsVersion, alpn: served.alpn, cipher: served.cipher,
                requestError: error)
        }
    }
}

/// The first chain served to a probe.
private final class ChainRecorder: Sendable {
    private let state = Mutex<ServedChain?>(nil)

    func record(_ chain: ServedChain) {
        state.withLock { if $0 == nil { $0 = chain } }
    }

    var served: ServedChain? { state.withLock { $0 } }
}

/// Records the chain and then accepts (to send the `HEAD`) or refuses (to abort). It trusts
/// nothing: it is private to this file and lives only in the session ``TLSProbe/fetch`` makes.
private struct RecordingEvaluator: ServerTrustEvaluating {
    static let name = "probe"
    let recorder: ChainRecorder
    let accepts: Bool

    func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        recorder.record(trust.served)
        return accepts
            ? .accepted(trust.served, by: Self.name, "recorded for inspection only; the chain was not evaluated")
            : .rejected(trust.served, by: Self.name, .customEvaluationFailed, "recorded for inspection; handshake aborted by the probe")
    }
}
