public import Foundation
public import ServerTrust
public import ServerTrustHTTP

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

extension ServerTrustURLProtocol {
    /// The `URLError` a `URLSession` task fails with for an `HTTPError`: the
    /// codes Apple's URLSession uses for the same failures.
    ///
    /// | `HTTPError` | `URLError.Code` |
    /// |---|---|
    /// | `serverTrustRejected`, `proxyTrustRejected` | `serverCertificateUntrusted` (with the decision) |
    /// | `timedOut` | `timedOut` |
    /// | `transport`: curl 6, 5 (resolve host, proxy) | `cannotFindHost` |
    /// | `transport`: curl 7 (connect), `proxyRefused` | `cannotConnectToHost` |
    /// | `transport`: curl 35 (TLS handshake) | `secureConnectionFailed`, or a client-certificate code (below) |
    /// | `transport`: curl 52 (empty reply), 8 | `badServerResponse` |
    /// | `transport`: curl 55, 56, 18, 16, 92 (send, receive, cut body, HTTP/2) | `networkConnectionLost`, or a client-certificate code |
    /// | `transport`: curl 61 (content encoding) | `cannotDecodeContentData` |
    /// | `transport`: anything else | `unknown` |
    /// | `invalidURL`, `invalidRequest` | `badURL` (the reason in the description) |
    /// | `cancelled`, `sessionInvalidated` | `cancelled` |
    /// | `tooManyRedirects` | `httpTooManyRedirects` |
    /// | `redirectRefused` | `redirectToNonExistentLocation` |
    /// | `challengeCancelled` | `userCancelledAuthentication` |
    /// | `challengeFailed` | `userAuthenticationRequired` |
    /// | `responseBodyTooLarge` | `dataLengthExceedsMaximum` |
    /// | `fileError` | `cannotOpenFile` |
    /// | `unacceptableStatusCode`, `unacceptableContentType`, `responseSerializationFailed` | `badServerResponse`, `cannotParseResponse` |
    ///
    /// A TLS alert from the server about the client's certificate (`certificate required`;
    /// `bad certificate`, `unknown ca` and the like) gives `clientCertificateRequired` or
    /// `clientCertificateRejected`. A trust refusal carries its `TrustDecision` under
    /// `NSURLErrorFailingURLPeerTrustErrorKey` (``Foundation/URLError/serverTrustDecision``).
    /// Every error holds `NSURLErrorFailingURLErrorKey` (`url`), `NSLocalizedDescriptionKey`
    /// (the error's one-line description) and the error itself under ``httpErrorKey``.
    ///
    /// - Parameters:
    ///   - error: The session's error.
    ///   - url: The URL the task was loading.
    /// - Returns: The `URLError`.
    public static func urlError(for error: HTTPError, url: URL?) -> URLError {
        let code: URLError.Code
        var decision: TrustDecision?
        switch error {
        case .serverTrustRejected(let refused), .proxyTrustRejected(let refused):
            code = .serverCertificateUntrusted
            decision = refused
        case .timedOut:
            code = .timedOut
        case .transport(let transport):
            code = URLErrorMapping.code(for: transport)
        case .proxyRefused:
            code = .cannotConnectToHost
        case .invalidURL, .invalidRequest:
            code = .badURL
        case .cancelled, .sessionInvalidated:
            code = .cancelled
        case .tooManyRedirects:
            code = .httpTooManyRedirects
        case .redirectRefused:
            code = .redirectToNonExistentLocation
        case .challengeCancelled:
            code = .userCancelledAuthentication
        case .challengeFailed:
            code = .userAuthenticationRequired
        case .responseBodyTooLarge:
            code = .dataLengthExceedsMaximum
        case .fileError:
            code = .cannotOpenFile
        case .unacceptableStatusCode, .unacceptableContentType:
            code = .badServerResponse
        case .responseSerializationFailed:
            code = .cannotParseResponse
        }
        return URLErrorMapping.error(code, url: url, error.description, httpError: error, decision: decision)
    }
}

extension URLError {
    /// The trust decision that refused the server (or the `https://` proxy): set on the
    /// `serverCertificateUntrusted` errors of ``ServerTrustURLProtocol``, where Apple's URLSession
    /// puts the `SecTrust` (`NSURLErrorFailingURLPeerTrustErrorKey`). Its
    /// `TrustDecision.record` and `TrustDecision.explanation` say
    /// why, its `TrustDecision.servedChain` what was served.
    public var serverTrustDecision: TrustDecision? {
        userInfo[NSURLErrorFailingURLPeerTrustErrorKey] as? TrustDecision
    }

    /// The `HTTPError` behind an error of ``ServerTrustURLProtocol``, when the
    /// session produced one.
    public var serverTrustHTTPError: HTTPError? {
        userInfo[ServerTrustURLProtocol.httpErrorKey] as? HTTPError
    }
}

enum URLErrorMapping {
    /// A `URLError` with the failing URL and a description.
    static func error(
        _ code: URLError.Code, url: URL?, _ description: String, httpError: HTTPError? = nil,
        decision: TrustDecision? = nil
    ) -> URLError {
        var userInfo: [String: Any] = [NSLocalizedDescriptionKey: description]
        if let url { userInfo[NSURLErrorFailingURLErrorKey] = url }
        if let httpError { userInfo[ServerTrustURLProtocol.httpErrorKey] = httpError }
        if let decision { userInfo[NSURLErrorFailingURLPeerTrustErrorKey] = decision }
        return URLError(code, userInfo: userInfo)
    }

    /// The code for a libcurl failure (the codes of `curl.h`; compare Foundation's own
    /// `_EasyHandle.urlErrorCode(for:)`).
    static func code(for error: TransportError) -> URLError.Code {
        switch error.code {
        case 35, 55, 56:
            if let clientCertificate = clientCertificateCode(error.message) { return clientCertificate }
            return error.code == 35 ? .secureConnectionFailed : .networkConnectionLost
        case 5, 6: return .cannotFindHost
        case 7: return .cannotConnectToHost
        case 28: return .timedOut
        case 1: return .unsupportedURL
        case 3: return .badURL
        case 8, 52: return .badServerResponse
        case 16, 18, 92: return .networkConnectionLost
        case 47: return .httpTooManyRedirects
        case 61: return .cannotDecodeContentData
        case 63: return .dataLengthExceedsMaximum
        case 60, 83, 90, 91: return .serverCertificateUntrusted
        case 58, 59, 66: return .secureConnectionFailed
        default: return .unknown
        }
    }

    /// A TLS alert from the server about the client's certificate, as OpenSSL words it in
    /// curl's message (`… alert certificate required`, `… alert bad certificate`).
    private static func clientCertificateCode(_ message: String) -> URLError.Code? {
        let text = message.lowercased()
        guard text.contains("alert") else { return nil }
        if text.contains("certificate required") { return .clientCertificateRequired }
        let rejections = [
            "bad certificate", "unknown ca", "certificate unknown", "certificate revoked", "certificate expired",
            "unsupported certificate", "access denied",
        ]
        return rejections.contains(where: text.contains) ? .clientCertificateRejected : nil
    }
}
