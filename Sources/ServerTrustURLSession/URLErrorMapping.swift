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
    /// | `transport` of kind `hostNotFound` | `cannotFindHost` |
    /// | `transport` of kind `cannotConnect` or `proxyFailed`, `proxyRefused` | `cannotConnectToHost` |
    /// | `transport` of kind `tlsHandshakeFailed` | `secureConnectionFailed` |
    /// | `transport` of kind `clientCertificateRequired` | `clientCertificateRequired` |
    /// | `transport` of kind `clientCertificateRejected` | `clientCertificateRejected` |
    /// | `transport` of kind `connectionLost` (send, receive, a cut body, no response) | `networkConnectionLost` |
    /// | `transport` of kind `invalidResponse` | `badServerResponse` |
    /// | `transport` of kind `responseHeadersTooLarge` | `dataLengthExceedsMaximum` |
    /// | `transport` of kind `contentDecodingFailed` | `cannotDecodeContentData` |
    /// | `transport` of kind `other` | `unknown` |
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
    /// A trust refusal carries its `TrustDecision` under
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
            code = URLErrorMapping.code(for: transport.kind)
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

    /// The code for a transport failure (as Apple's URLSession reports the same failures).
    static func code(for kind: TransportError.Kind) -> URLError.Code {
        switch kind {
        case .hostNotFound: return .cannotFindHost
        case .cannotConnect, .proxyFailed: return .cannotConnectToHost
        case .timedOut: return .timedOut
        case .tlsHandshakeFailed: return .secureConnectionFailed
        case .clientCertificateRequired: return .clientCertificateRequired
        case .clientCertificateRejected: return .clientCertificateRejected
        case .connectionLost: return .networkConnectionLost
        case .invalidResponse: return .badServerResponse
        case .responseHeadersTooLarge: return .dataLengthExceedsMaximum
        case .contentDecodingFailed: return .cannotDecodeContentData
        case .other: return .unknown
        }
    }
}
