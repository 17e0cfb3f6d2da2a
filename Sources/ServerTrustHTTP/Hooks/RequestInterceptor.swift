/// Changes a request before each attempt is sent (Alamofire's `RequestAdapter`): add a token,
/// sign it, route it. Runs in the requesting task, once per attempt, never on a transfer
/// thread.
public protocol RequestAdapter: Sendable {
    /// The request to send for this attempt.
    /// - Parameters:
    ///   - request: The request as the caller gave it (every attempt starts from it again).
    ///   - session: The session sending it.
    /// - Returns: The request to send.
    /// - Throws: ``HTTPError``, which ends the request with that error.
    func adapt(_ request: HTTPRequest, for session: HTTPSession) async throws(HTTPError) -> HTTPRequest
}

/// What an attempt came to, for a ``RequestRetrier``.
public struct RetryContext: Sendable {
    /// The request as the caller gave it.
    public let request: HTTPRequest
    /// The request as adapted and sent in this attempt.
    public let sentRequest: HTTPRequest
    /// How many attempts have been made (1 after the first).
    public let attempt: Int
    /// The attempt's response (any status) or error.
    public let result: Result<HTTPResponse, HTTPError>
}

/// Whether to send the request again (Alamofire's `RetryResult`).
public enum RetryDecision: Sendable, Equatable {
    /// The attempt's outcome is the request's.
    case doNotRetry
    /// Send the request again after `delay` (zero: at once), adapted afresh.
    case retry(after: Duration)
}

/// Decides whether an attempt is retried (Alamofire's `RequestRetrier`).
public protocol RequestRetrier: Sendable {
    /// Retry, and when?
    /// - Parameters:
    ///   - context: The attempt.
    ///   - session: The session.
    /// - Returns: The decision.
    func retry(_ context: RetryContext, for session: HTTPSession) async -> RetryDecision
}

/// Adapts and retries (Alamofire's `RequestInterceptor`): both halves have defaults, so an
/// interceptor implements only what it needs.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    /// Sends the request as it is.
    public func adapt(_ request: HTTPRequest, for session: HTTPSession) async throws(HTTPError) -> HTTPRequest { request }

    /// Never retries.
    public func retry(_ context: RetryContext, for session: HTTPSession) async -> RetryDecision { .doNotRetry }
}

/// Several adapters and retriers as one interceptor: adapters in order, each on the previous
/// one's output; retriers in order, the first that retries decides.
public struct Interceptor: RequestInterceptor {
    /// The adapters, applied in order.
    public let adapters: [any RequestAdapter]
    /// The retriers, asked in order.
    public let retriers: [any RequestRetrier]

    /// Creates an interceptor.
    /// - Parameters:
    ///   - adapters: Applied in order.
    ///   - retriers: Asked in order.
    public init(adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = []) {
        self.adapters = adapters
        self.retriers = retriers
    }

    /// Every adapter, in order.
    public func adapt(_ request: HTTPRequest, for session: HTTPSession) async throws(HTTPError) -> HTTPRequest {
        var request = request
        for adapter in adapters { request = try await adapter.adapt(request, for: session) }
        return request
    }

    /// The first retrier that retries.
    public func retry(_ context: RetryContext, for session: HTTPSession) async -> RetryDecision {
        for retrier in retriers {
            let decision = await retrier.retry(context, for: session)
            if decision != .doNotRetry { return decision }
        }
        return .doNotRetry
    }
}

/// Bearer-token authentication that refreshes the token once for any number of concurrent
/// 401s (Alamofire's `AuthenticationInterceptor` in spirit).
///
/// Every attempt carries `Authorization: Bearer <token>`. A 401 from the origin a request
/// was sent to with the current token starts one refresh (a 401 from another origin reached
/// by a redirect, which never saw the token, never does); every other request that meets a 401 meanwhile waits
/// for that refresh instead of starting its own, and all of them are retried with the new
/// token. A 401 to a request sent with an older token is retried at once with the newer one.
/// A failed refresh ends the waiting requests with their 401. Each request is retried at most
/// ``maximumRefreshesPerRequest`` times.
///
/// ```swift
/// let auth = BearerTokenInterceptor(token: stored) { expired in try await login.refresh(expired) }
/// var configuration = HTTPSessionConfiguration(serverTrust: decider)
/// configuration.interceptor = auth
/// ```
public final class BearerTokenInterceptor: RequestInterceptor {
    /// Makes a new token from the one that was refused (`nil` when there was none).
    public typealias Refresh = @Sendable (_ refused: String?) async throws -> String

    /// Retries per request after a 401 (a refresh that yields a token the server refuses
    /// again must not loop).
    public let maximumRefreshesPerRequest: Int
    private let refresh: Refresh
    private let state: TokenState

    /// Creates the interceptor.
    /// - Parameters:
    ///   - token: The token to start with, if one is known.
    ///   - maximumRefreshesPerRequest: Retries per request after a 401 (default 1).
    ///   - refresh: Makes a new token.
    public init(token: String?, maximumRefreshesPerRequest: Int = 1, refresh: @escaping Refresh) {
        self.maximumRefreshesPerRequest = maximumRefreshesPerRequest
        self.refresh = refresh
        self.state = TokenState(token: token)
    }

    /// The token in use now.
    public var token: String? {
        get async { await state.current }
    }

    /// How many refreshes have run.
    public var refreshCount: Int {
        get async { await state.refreshes }
    }

    /// Adds the current token.
    public func adapt(_ request: HTTPRequest, for session: HTTPSession) async throws(HTTPError) -> HTTPRequest {
        guard let token = await state.current else { return request }
        var request = request
        request.headers["Authorization"] = "Bearer " + token
        return request
    }

    /// After a 401 from the origin the token was sent to: refresh once (shared by every request
    /// that meets a 401 meanwhile) and retry. A 401 from another origin, reached by a redirect,
    /// is that origin's answer to a request without the token (the session drops
    /// `Authorization` across origins): refreshing for it would let any origin the app is
    /// redirected to spend the app's refresh, so it is returned as it is.
    public func retry(_ context: RetryContext, for session: HTTPSession) async -> RetryDecision {
        guard case .success(let response) = context.result, response.statusCode == 401,
            context.attempt <= maximumRefreshesPerRequest,
            Self.sameOrigin(response.url, context.sentRequest.url, base: session.configuration.baseURL)
        else { return .doNotRetry }
        let sent = context.sentRequest.headers["Authorization"].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        return await state.renew(after: sent, using: refresh) ? .retry(after: .zero) : .doNotRetry
    }
}

extension BearerTokenInterceptor {
    /// Whether the response's final URL has the origin (RFC 6454) of the request the token was
    /// sent with; anything unparsable is another origin.
    static func sameOrigin(_ responseURL: String, _ sentURL: String, base: String?) -> Bool {
        guard let answered = try? RequestTarget(responseURL), let sent = try? RequestTarget.resolve(sentURL, against: base) else { return false }
        return answered.hasSameOrigin(as: sent)
    }
}

/// The token and the one refresh in flight.
private actor TokenState {
    var current: String?
    var refreshes = 0
    private var inFlight: Task<String?, Never>?

    init(token: String?) { current = token }

    /// Makes sure the token is newer than `refused`; `false` when no newer token can be had.
    func renew(after refused: String?, using refresh: @escaping BearerTokenInterceptor.Refresh) async -> Bool {
        if let current, current != refused { return true }
        if let inFlight { return await inFlight.value != nil }
        refreshes += 1
        // The new token is stored by the refresh itself, before anyone awaiting it resumes:
        // every waiter's next attempt is adapted with it.
        let task = Task<String?, Never> {
            let token = try? await refresh(refused)
            if let token { self.current = token }
            self.inFlight = nil
            return token
        }
        inFlight = task
        return await task.value != nil
    }
}
