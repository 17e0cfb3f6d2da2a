public import ServerTrust

/// A failure of the connection or of the exchange on it, by kind: what ``RetryPolicy``, the
/// `URLError` mapping of `ServerTrustURLSession` and an app's own handling decide on.
///
/// The transport's own account (the underlying library's message, and its error code for a
/// report) is diagnostic text, in ``message`` and ``description``: its wording may change
/// with the transport, so decide on ``kind``.
public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, in the categories `URLError` and a retry decision need.
    public enum Kind: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// The host (or the proxy's host) name could not be resolved.
        case hostNotFound
        /// No connection could be made: refused, unreachable.
        case cannotConnect
        /// The request's time limit, or the connect time limit, passed
        /// (``HTTPError/timedOut(_:)`` carries it).
        case timedOut
        /// The TLS handshake failed: the server closed or reset the connection during it, or
        /// sent an alert (no shared version or cipher suite, a handshake failure). A refused
        /// server certificate is not this but ``HTTPError/serverTrustRejected(_:)``.
        case tlsHandshakeFailed
        /// The server requires a client certificate and none was presented (TLS alert
        /// `certificate_required`).
        case clientCertificateRequired
        /// The server refused the client certificate presented (TLS alerts such as
        /// `bad_certificate`, `unknown_ca`, `certificate_expired`, `access_denied`).
        case clientCertificateRejected
        /// The proxy failed: it refused the tunnel (see ``HTTPError/proxyRefused(statusCode:_:)``)
        /// or broke its own protocol.
        case proxyFailed
        /// The connection broke or was closed before the response was complete: a send or
        /// receive error, a reset, a body or header section cut short, no response at all.
        case connectionLost
        /// The server's answer is not valid HTTP (an unreadable status line, broken HTTP/2
        /// framing).
        case invalidResponse
        /// The response's header section is larger than the transport accepts (a field over
        /// 100 KiB, or over 300 KiB of fields in all). A body over the session's limit is
        /// ``HTTPError/responseBodyTooLarge(limit:)``.
        case responseHeadersTooLarge
        /// The response body's `Content-Encoding` could not be decoded.
        case contentDecodingFailed
        /// Anything else (out of memory, an internal error); the message says what.
        case other

        /// The kind in words (`cannot connect`).
        public var description: String {
            switch self {
            case .hostNotFound: return "host not found"
            case .cannotConnect: return "cannot connect"
            case .timedOut: return "timed out"
            case .tlsHandshakeFailed: return "TLS handshake failed"
            case .clientCertificateRequired: return "client certificate required"
            case .clientCertificateRejected: return "client certificate rejected"
            case .proxyFailed: return "proxy failed"
            case .connectionLost: return "connection lost"
            case .invalidResponse: return "invalid response"
            case .responseHeadersTooLarge: return "response headers too large"
            case .contentDecodingFailed: return "content decoding failed"
            case .other: return "unclassified"
            }
        }
    }

    /// What went wrong.
    public let kind: Kind
    /// The transport's account of the failure, for people and logs (not for matching).
    public let message: String
    /// The underlying library's code, as text for a report (`curl 7`); empty when there is
    /// none.
    package let diagnostic: String

    /// Creates a transport error (for tests of retry and error handling; the session makes
    /// its own).
    ///
    /// - Parameters:
    ///   - kind: What went wrong.
    ///   - message: The account of it.
    public init(_ kind: Kind, message: String) {
        self.init(kind, message: message, diagnostic: "")
    }

    package init(_ kind: Kind, message: String, diagnostic: String) {
        self.kind = kind
        self.message = message
        self.diagnostic = diagnostic
    }

    /// Set when the transport refused a response header field for its size: the limit in
    /// bytes (``maximumResponseHeaderField``). The command line says so in words.
    package internal(set) var responseHeaderLimit: Int?

    /// libcurl's `CURL_MAX_HTTP_HEADER` (lib/urldata.h, 100 KiB): the longest response header
    /// field it buffers. libcurl 7.88 answers a longer one with `CURLE_OUT_OF_MEMORY` (27),
    /// "Out of memory", because its header buffer refuses to grow past it.
    package static let maximumResponseHeaderField = 100 * 1024

    /// The message with the diagnostic code (`Failed to connect to … (curl 7)`), one line.
    var detail: String { diagnostic.isEmpty ? message : "\(message) (\(diagnostic))" }

    /// `cannot connect: Failed to connect to www.example.test port 1 … (curl 7)`, one line.
    public var description: String { "\(kind): \(detail)" }
}

/// Every way an ``HTTPSession`` request can fail, in the spirit of `URLError` and Alamofire's
/// `AFError`. Each case prints as one grep-friendly line.
public enum HTTPError: Error, Sendable, CustomStringConvertible {
    /// The URL could not be parsed or uses a scheme other than `http`/`https`.
    case invalidURL(String)
    /// The request or the session configuration is unusable (the reason says why). This is
    /// also the answer, before anything is sent, to a field that would break a line of the
    /// request (``HTTPSession/send(_:)``): a method or header name that is not an RFC 9110
    /// token, a control character in a header value, a credential, a multipart part header or
    /// the URL; the reason names the field (`header "X-A" value: LF (0x0A) at byte 3`).
    case invalidRequest(String)
    /// The server's certificate chain was rejected; no request byte was sent. Carries the
    /// decision record and the served chain (AFNetworking's -1202 with the peer trust).
    case serverTrustRejected(TrustDecision)
    /// An `https://` proxy's own certificate chain was rejected by
    /// ``ProxyConfiguration/serverTrust``; nothing was sent to the proxy, not even `CONNECT`.
    /// The decision names the proxy's host and port.
    case proxyTrustRejected(TrustDecision)
    /// The request timed out: its ``HTTPRequest/timeout`` (or the session's), or the connect
    /// time limit, passed. The error's kind is ``TransportError/Kind/timedOut``.
    case timedOut(TransportError)
    /// Any other transport failure (connect, DNS, TLS handshake, proxy, a lost connection),
    /// by ``TransportError/kind``.
    case transport(TransportError)
    /// The proxy answered CONNECT with a non-2xx status (a 407 only once the proxy challenge
    /// produced no credential): the tunnel never opened, so nothing reached the origin and no
    /// server trust was evaluated. `statusCode` is the proxy's answer; the transport error's
    /// kind is ``TransportError/Kind/proxyFailed``.
    case proxyRefused(statusCode: Int, TransportError)
    /// The task was cancelled (Swift task cancellation).
    case cancelled
    /// A challenge handler cancelled the challenge for this protection space.
    case challengeCancelled(ProtectionSpace)
    /// A task-level challenge handler answered with an error; the request fails with it.
    case challengeFailed(ProtectionSpace, any Error)
    /// More redirects than the configuration allows.
    case tooManyRedirects(Int)
    /// A redirect the policy refuses (an `https` to `http` downgrade, a bad `Location`).
    case redirectRefused(String)
    /// The status code is not acceptable to the response serializer.
    case unacceptableStatusCode(HTTPResponse)
    /// The `Content-Type` is not acceptable to the response serializer.
    case unacceptableContentType(HTTPResponse)
    /// The body could not be decoded (JSON, text encoding, `Decodable`).
    case responseSerializationFailed(reason: String, response: HTTPResponse)
    /// A file could not be read or written (upload parts, download destination, credential store).
    case fileError(path: String, reason: String)
    /// A response body grew past its limit, counted after decoding; the transfer was stopped
    /// there. In memory: ``HTTPSessionConfiguration/maximumResponseBodySize`` or
    /// ``HTTPRequest/maximumResponseBodySize`` (stream large bodies with ``HTTPSession/stream(_:)``
    /// or write them to a file, ``HTTPRequest/destinationPath``). Streamed or written to a file
    /// with a content coding: ``HTTPSessionConfiguration/maximumDecodedBodySize``, the bound on
    /// what a compressed body expands to.
    case responseBodyTooLarge(limit: Int)
    /// The session was invalidated before or during the request.
    case sessionInvalidated

    /// The HTTP response attached to the error, when there is one.
    public var response: HTTPResponse? {
        switch self {
        case .unacceptableStatusCode(let r), .unacceptableContentType(let r): return r
        case .responseSerializationFailed(_, let r): return r
        default: return nil
        }
    }

    /// One line naming the kind first (`server trust rejected: …`, `timed out: …`).
    public var description: String {
        switch self {
        case .invalidURL(let url): return "invalid URL: \(RequestValidation.displayed(url))"
        case .invalidRequest(let reason): return "invalid request: \(reason)"
        case .serverTrustRejected(let decision): return "server trust rejected: \(decision)"
        case .proxyTrustRejected(let decision): return "proxy trust rejected: \(decision)"
        case .timedOut(let error): return "timed out: \(error.detail)"
        case .transport(let error): return "transport failure: \(error)"
        case .proxyRefused(let status, let error): return "proxy refused the CONNECT tunnel with HTTP \(status): \(error)"
        case .cancelled: return "cancelled"
        case .challengeCancelled(let space): return "challenge cancelled: \(space)"
        case .challengeFailed(let space, let error): return "challenge failed: \(space): \(error)"
        case .tooManyRedirects(let count): return "too many redirects: \(count)"
        case .redirectRefused(let reason): return "redirect refused: \(reason)"
        case .unacceptableStatusCode(let r): return "unacceptable status code: \(r.statusCode) for \(r.url)"
        case .unacceptableContentType(let r):
            return "unacceptable content type: \(r.headers["Content-Type"] ?? "none") for \(r.url)"
        case .responseSerializationFailed(let reason, let r): return "response serialization failed: \(reason) for \(r.url)"
        case .fileError(let path, let reason): return "file error: \(path): \(reason)"
        case .responseBodyTooLarge(let limit):
            return "response body larger than \(limit) bytes after decoding (the limit on a body held in memory, or on a compressed body's decoded size)"
        case .sessionInvalidated: return "session invalidated"
        }
    }
}
