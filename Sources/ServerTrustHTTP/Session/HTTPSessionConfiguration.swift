public import ServerTrust
public import TrustEvaluation

/// A TLS protocol version, for minimums (ATS's `NSExceptionMinimumTLSVersion`).
// swift-format-ignore: AlwaysUseLowerCamelCase
// (tls1_2 spells the version as OpenSSL and the TLS RFCs do: TLS1_2_VERSION, "TLS 1.2".)
public enum TLSVersion: String, Sendable, Hashable, Comparable, CaseIterable {
    /// TLS 1.0 (only as a per-host exception; OpenSSL's default security level may refuse it).
    case tls1_0 = "TLSv1.0"
    /// TLS 1.1 (only as a per-host exception).
    case tls1_1 = "TLSv1.1"
    /// TLS 1.2, the default minimum.
    case tls1_2 = "TLSv1.2"
    /// TLS 1.3.
    case tls1_3 = "TLSv1.3"

    /// Older versions order first.
    public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// A proxy reached with `CONNECT` for HTTPS (how Charles and mitmproxy are used): an HTTP
/// proxy (`http://`), or an HTTPS proxy (`https://`, curl's `--proxy https://…`), which is
/// itself spoken to over TLS so that the `CONNECT` line and its credentials are encrypted.
///
/// An HTTPS proxy's certificate is decided by ``serverTrust``, never by the session's own
/// decider: the session's pins name the origin servers, and a proxy is not one of them. (The
/// origin's chain, inside the tunnel, is still decided by the session as always, so a proxy
/// that intercepts the tunnel is caught by pinning exactly as with an HTTP proxy.) Every new
/// connection to an HTTPS proxy is decided in a full handshake: TLS sessions to the proxy are
/// never resumed.
///
/// Proxy credentials go to the proxy only: ``credential``, and a request's own
/// `Proxy-Authorization` field, which an `https://` request sends in its tunnel's `CONNECT`
/// request, never to the origin inside the tunnel.
public struct ProxyConfiguration: Sendable {
    /// `http://host:port` or `https://host:port`.
    public var url: String
    /// Credentials sent preemptively as Basic; without them a 407 becomes a proxy challenge.
    public var credential: Credential?
    /// Decides an `https://` proxy's own certificate, checked against the proxy's host name.
    /// `nil` means the system trust store with host-name validation (failing closed, as
    /// curl's `--proxy-cacert` default does). Unused for `http://` proxies.
    public var serverTrust: ServerTrustDecider?

    /// Creates a proxy configuration.
    ///
    /// - Parameters:
    ///   - url: `http://host:port` or `https://host:port`.
    ///   - credential: Proxy credentials, if any.
    ///   - serverTrust: The decider for an `https://` proxy's certificate (`nil`: the system
    ///     trust store).
    public init(url: String, credential: Credential? = nil, serverTrust: ServerTrustDecider? = nil) {
        self.url = url
        self.credential = credential
        self.serverTrust = serverTrust
    }
}

/// Everything an ``HTTPSession`` is built from. The session copies it; later changes to the
/// value do not affect a session already made.
public struct HTTPSessionConfiguration: Sendable {
    /// Relative request URLs are resolved against this (`AFHTTPSessionManager.baseURL`).
    public var baseURL: String?
    /// Fields added to every request that does not set them.
    public var defaultHeaders: HTTPHeaders
    /// Decides every new TLS connection's chain (default handling of server-trust challenges),
    /// in its handshake or, for a resumed TLS session, before its first request is sent; the
    /// session can replace it later (``HTTPSession/replaceServerTrust(_:)``).
    public var serverTrust: ServerTrustDecider
    /// Seconds for a whole request (each redirect hop and authentication retry gets its own).
    /// `.infinity`, or anything past about 24 days, is that long, in effect no limit; zero,
    /// negative and NaN are the shortest limit (1 ms). This holds for every limit in seconds here.
    public var timeout: Double
    /// Seconds for TCP connect plus TLS handshake.
    public var connectTimeout: Double
    /// curl-style `HOST:PORT:ADDRESS` overrides: connect to ADDRESS while TLS and the trust
    /// decision use HOST.
    public var resolve: [String]
    /// An HTTP or HTTPS proxy, or `nil` for direct connections (proxy environment variables
    /// are ignored).
    public var proxy: ProxyConfiguration?
    /// The lowest TLS version for every host.
    public var minimumTLSVersion: TLSVersion
    /// Per-host minimums overriding ``minimumTLSVersion``. Host names match
    /// case-insensitively (RFC 4343) and with or without a trailing dot, IP addresses in any
    /// spelling (RFC 5952); two keys for the same host are refused when the session is made.
    /// An `https://` proxy's host is a host like any other here: a rule naming it holds for the
    /// handshake with the proxy.
    public var minimumTLSVersionByHost: [String: TLSVersion]
    /// Offer HTTP/2 through ALPN when libcurl supports it.
    public var allowsHTTP2: Bool
    /// Send `Accept-Encoding` for gzip/deflate (and what else libcurl decodes) and decode.
    /// `false` sends no `Accept-Encoding` and keeps a body as it was received (curl without
    /// `--compressed`).
    public var acceptsCompressedResponses: Bool
    /// Redirects followed per request; 0 returns 3xx responses as they are.
    public var maximumRedirects: Int
    /// The most bytes of one response body held in memory, after decoding (default 64 MiB): a
    /// larger body fails with ``HTTPError/responseBodyTooLarge(limit:)`` as soon as it passes
    /// the limit, so a hostile or broken server cannot exhaust the client's memory. Bodies
    /// streamed (``HTTPSession/stream(_:)``) or written to a file are not limited by it (a decoded one is, by
    /// ``maximumDecodedBodySize``).
    public var maximumResponseBodySize: Int
    /// The most bytes of one response body, after decoding its `Content-Encoding`, streamed
    /// (``HTTPSession/stream(_:)``) or written to a file (``HTTPRequest/destinationPath``)
    /// (default 1 GiB): a larger decoded body fails with
    /// ``HTTPError/responseBodyTooLarge(limit:)`` as soon as it passes the limit (a file
    /// download then leaves no file). gzip expands up to about 1000 times, so without a bound
    /// half a megabyte on the wire can fill half a gigabyte of disk or of a reader's buffers.
    /// A body sent without a content coding is not limited here: its size is what the server
    /// pays to send. In-memory bodies have the tighter ``maximumResponseBodySize``.
    public var maximumDecodedBodySize: Int
    /// Follow redirects from `https` to `http`.
    public var allowsInsecureRedirects: Bool
    /// Client identities presented when a host asks for a certificate, without a challenge.
    /// Host names match case-insensitively (RFC 4343: `API.Example.com` is `api.example.com`)
    /// and with or without a trailing dot, IP addresses in any spelling (RFC 5952); two keys
    /// for the same host are refused when the session is made.
    public var clientIdentities: [String: Identity]
    /// Resume TLS sessions across connections of this session. A resumed connection presents
    /// no certificate; it is decided anyway, on the chain its session kept, before its request
    /// is sent, so resumption never skips a decision.
    public var tlsSessionResumption: Bool
    /// Close connections older than this many seconds instead of reusing them; `nil` for no
    /// limit. A kept-alive connection serves on under the decision it was accepted with (as a
    /// TLS connection does), so this bounds how long a time-dependent decision (a leaf's
    /// expiry, a pin window) can outlive its moment; the replacement connection is decided anew.
    public var maximumConnectionAge: Double?
    /// How many transfer threads (each with its own connection pool) the session may use.
    /// One serves all requests normally; another is started when every existing one is
    /// inside a connection-level challenge handler. Requests with their own
    /// ``HTTPRequest/challengeHandler`` run on threads of their own, up to as many again,
    /// started with the first such request, so that no connection their handlers decided is
    /// in a pool the session's other requests use.
    public var maximumTransferThreads: Int
    /// Connections per host and transfer thread; further requests wait for a free
    /// keep-alive connection (0: no limit).
    public var maximumConnectionsPerHost: Int
    /// Seconds a challenge answered with ``ChallengeOutcome/later`` may take before the
    /// challenge is treated as cancelled.
    public var challengeTimeout: Double
    /// The session-level handler for connection-level challenges.
    public var sessionChallengeHandler: SessionChallengeHandler?
    /// The task-level handler used by requests that do not bring their own.
    public var taskChallengeHandler: TaskChallengeHandler?
    /// Adapts every request before each attempt and may retry it (token refresh, signing):
    /// ``RequestInterceptor``; `nil` for none.
    public var interceptor: (any RequestInterceptor)?
    /// Retries transient failures of idempotent requests (``RetryPolicy``); `nil` (the default)
    /// sends every request once.
    public var retryPolicy: RetryPolicy?
    /// See every request: starts, trust decisions, redirects, retries, outcomes.
    public var eventMonitors: [any EventMonitor]
    /// The clock retry delays are slept on (tests inject one that does not really wait).
    public var retryClock: any Clock<Duration>
    /// Keep the cookies servers set and send them back where they belong (libcurl's cookie
    /// engine, in memory, for this session only: RFC 6265 domain and path matching, `Secure`
    /// only over HTTPS, and never a cookie for a public suffix, by the Public Suffix List).
    /// Off by default: a client library does not keep state a caller did not ask for.
    public var storesCookies: Bool
    /// The file for ``Credential/Persistence/permanent`` credentials (created with mode
    /// 0600), or `nil` to keep them in memory only.
    public var credentialStorePath: String?

    /// Creates a configuration with the defaults: 60 s timeout, 30 s connect timeout, TLS 1.2
    /// minimum, HTTP/2 allowed, compression on, 10 redirects, resumption on.
    ///
    /// - Parameter serverTrust: The decider for every TLS connection.
    public init(serverTrust: ServerTrustDecider) {
        self.baseURL = nil
        self.defaultHeaders = ["User-Agent": "ServerTrust/0.1"]
        self.serverTrust = serverTrust
        self.timeout = 60
        self.connectTimeout = 30
        self.resolve = []
        self.proxy = nil
        self.minimumTLSVersion = .tls1_2
        self.minimumTLSVersionByHost = [:]
        self.allowsHTTP2 = true
        self.acceptsCompressedResponses = true
        self.maximumRedirects = 10
        self.maximumResponseBodySize = 64 << 20
        self.maximumDecodedBodySize = 1 << 30
        self.allowsInsecureRedirects = false
        self.clientIdentities = [:]
        self.tlsSessionResumption = true
        self.maximumConnectionAge = nil
        self.maximumTransferThreads = 4
        self.maximumConnectionsPerHost = 8
        self.challengeTimeout = 30
        self.sessionChallengeHandler = nil
        self.taskChallengeHandler = nil
        self.interceptor = nil
        self.retryPolicy = nil
        self.eventMonitors = []
        self.retryClock = ContinuousClock()
        self.storesCookies = false
        self.credentialStorePath = nil
    }

    /// The system trust store with host checking.
    ///
    /// - Returns: A configuration using `ServerTrustDecider.system()` (chain validation with the
    ///   host name against the system roots).
    /// - Throws: ``/TrustEvaluation/TrustStoreError`` if the system bundle cannot be read.
    public static func system() throws(TrustStoreError) -> HTTPSessionConfiguration {
        HTTPSessionConfiguration(serverTrust: try ServerTrustDecider.system())
    }

    /// This configuration with the host keys of ``clientIdentities`` and
    /// ``minimumTLSVersionByHost`` in the form the session looks them up (``hostKey(_:)``): a
    /// key written in another case, or with a trailing dot, would otherwise never be found,
    /// and the session would silently send no certificate, or allow an older TLS.
    func withHostKeysLowercased() throws(HTTPError) -> HTTPSessionConfiguration {
        var copy = self
        copy.clientIdentities = try Self.lowercasingKeys(clientIdentities, "clientIdentities")
        copy.minimumTLSVersionByHost = try Self.lowercasingKeys(minimumTLSVersionByHost, "minimumTLSVersionByHost")
        return copy
    }

    private static func lowercasingKeys<Value>(_ dictionary: [String: Value], _ name: String) throws(HTTPError) -> [String: Value] {
        guard dictionary.keys.contains(where: { $0 != hostKey($0) }) else { return dictionary }
        var result: [String: Value] = [:]
        for key in dictionary.keys.sorted() {
            let lower = hostKey(key)
            guard result[lower] == nil else {
                throw HTTPError.invalidRequest(
                    "\(name): the host keys \(dictionary.keys.filter { hostKey($0) == lower }.sorted()) differ only in case or in a trailing dot, or spell one address"
                )
            }
            result[lower] = dictionary[key]
        }
        return result
    }

    /// The key under which a host's settings are kept and looked up: lower case (RFC 4343),
    /// without the one trailing dot of a name's absolute form (RFC 1034 §3.1: `api.example.com.`
    /// is `api.example.com`, as a host pattern and a certificate's name match it), and an IP
    /// address in its canonical text (RFC 5952 §4: `0:0::1` is `::1`; an IPv4-mapped address
    /// is the IPv4 address, RFC 4291 §2.5.5.2, as a host pattern reads it), so a request to any
    /// spelling of the host gets the same settings.
    static func hostKey(_ host: String) -> String {
        if let address = IPAddress(host) { return (address.mappedIPv4 ?? address).description }
        let lower = host.lowercased()
        return lower.count > 1 && lower.hasSuffix(".") ? String(lower.dropLast()) : lower
    }

    func minimumTLSVersion(for host: String) -> TLSVersion {
        minimumTLSVersionByHost[Self.hostKey(host)] ?? minimumTLSVersion
    }
}
