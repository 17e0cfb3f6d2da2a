public import ServerTrust

/// A libcurl failure: the `CURLcode`, curl's text for it, and the detail curl wrote into the
/// transfer's error buffer.
public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `CURLcode` value (for example 7 couldn't connect, 28 timed out, 35 TLS handshake
    /// failed, 56 receive error).
    public let code: Int
    /// `curl_easy_strerror(code)`.
    public let summary: String
    /// The `CURLOPT_ERRORBUFFER` text, or the summary when curl wrote none.
    public let message: String

    /// Creates a transport error.
    ///
    /// - Parameters:
    ///   - code: The `CURLcode`.
    ///   - summary: curl's text for the code.
    ///   - message: The detail.
    public init(code: Int, summary: String, message: String) {
        self.code = code
        self.summary = summary
        self.message = message
    }

    /// `CURLE_OPERATION_TIMEDOUT`.
    public var isTimeout: Bool { code == 28 }

    /// Set when libcurl refused a response header field for its size: the limit in bytes
    /// (``maximumResponseHeaderField``). The command line says so in words; the code stays
    /// curl's.
    package internal(set) var responseHeaderLimit: Int?

    /// libcurl's `CURL_MAX_HTTP_HEADER` (lib/urldata.h, 100 KiB): the longest response header
    /// field it buffers. libcurl 7.88 answers a longer one with `CURLE_OUT_OF_MEMORY` (27),
    /// "Out of memory", because its header buffer refuses to grow past it.
    package static let maximumResponseHeaderField = 100 * 1024

    /// `curl 28 (Timeout was reached): Operation timed out after 200 milliseconds …`, one line.
    public var description: String { "curl \(code) (\(summary)): \(message)" }
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
    /// The request timed out (`CURLE_OPERATION_TIMEDOUT`).
    case timedOut(TransportError)
    /// Any other libcurl failure: connect, TLS handshake, proxy, receive.
    case transport(TransportError)
    /// The proxy answered CONNECT with a non-2xx status (a 407 only once the proxy challenge
    /// produced no credential): the tunnel never opened, so nothing reached the origin and no
    /// server trust was evaluated. `statusCode` is the proxy's answer; the transport error is
    /// curl's (56).
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
    /// A response body held in memory grew past the limit
    /// (``HTTPSessionConfiguration/maximumResponseBodySize``, ``HTTPRequest/maximumResponseBodySize``),
    /// counted after decoding; the transfer was stopped there. Stream large bodies
    /// (``HTTPSession/stream(_:)``) or write them to a file (``HTTPRequest/destinationPath``).
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
        case .timedOut(let error): return "timed out: \(error)"
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
        case .responseBodyTooLarge(let limit): return "response body larger than \(limit) bytes (the in-memory limit; stream it or write it to a file)"
        case .sessionInvalidated: return "session invalidated"
        }
    }
}
