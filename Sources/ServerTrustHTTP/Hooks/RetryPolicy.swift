internal import Foundation
public import TrustEvaluation

/// Retries what is safe to retry, with exponential backoff and jitter, honouring
/// `Retry-After` (Alamofire's `RetryPolicy`).
///
/// - **Only idempotent methods** (RFC 9110 §9.2.2: GET, HEAD, PUT, DELETE, OPTIONS, TRACE): a
///   POST or PATCH that failed may have taken effect, so sending it again is the caller's call.
/// - **Only transient failures**: the statuses of ``retryableStatusCodes`` (408, 429, 500, 502,
///   503, 504) and network errors (timeouts, refused or reset connections, DNS). Never a trust
///   rejection, a cancellation, bad input or a too-large body: those would fail again.
/// - **Backoff**: attempt *n* waits `scale × base^(n−1)` seconds, drawn uniformly from its upper
///   half ("equal jitter"), so clients that failed together do not retry together; a
///   `Retry-After` (delta-seconds, or an HTTP-date against ``clock``) replaces it, capped at
///   ``maximumRetryAfter``, and a longer one is not waited for at all.
public struct RetryPolicy: RequestRetrier {
    /// Retries after the first attempt (default 2: three attempts in all).
    public var retryLimit: Int
    /// The growth of the backoff (default 2).
    public var exponentialBackoffBase: Double
    /// The first backoff, in seconds (default 0.5).
    public var exponentialBackoffScale: Double
    /// The methods retried (default the idempotent ones).
    public var retryableMethods: Set<HTTPMethod>
    /// The statuses retried (default 408, 429, 500, 502, 503, 504).
    public var retryableStatusCodes: Set<Int>
    /// The longest `Retry-After` honoured; a longer one ends the retries (default 60 s).
    public var maximumRetryAfter: Duration
    /// "Now", for a `Retry-After` HTTP-date.
    public var clock: TrustClock
    /// A number in 0..<1 for the jitter (default random; tests inject a fixed one).
    public var jitter: @Sendable () -> Double

    /// The idempotent methods of RFC 9110 §9.2.2.
    public static let idempotentMethods: Set<HTTPMethod> = [.get, .head, .put, .delete, .options, .trace]

    /// Creates a policy.
    public init(
        retryLimit: Int = 2, exponentialBackoffBase: Double = 2, exponentialBackoffScale: Double = 0.5,
        retryableMethods: Set<HTTPMethod> = RetryPolicy.idempotentMethods, retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504],
        maximumRetryAfter: Duration = .seconds(60), clock: TrustClock = .system, jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.retryLimit = retryLimit
        self.exponentialBackoffBase = exponentialBackoffBase
        self.exponentialBackoffScale = exponentialBackoffScale
        self.retryableMethods = retryableMethods
        self.retryableStatusCodes = retryableStatusCodes
        self.maximumRetryAfter = maximumRetryAfter
        self.clock = clock
        self.jitter = jitter
    }

    /// The decision for an attempt (see the type's rules).
    public func retry(_ context: RetryContext, for session: HTTPSession) async -> RetryDecision {
        decision(for: context)
    }

    /// The decision, without a session.
    public func decision(for context: RetryContext) -> RetryDecision {
        guard context.attempt <= retryLimit, retryableMethods.contains(context.sentRequest.method) else { return .doNotRetry }
        switch context.result {
        case .success(let response):
            guard retryableStatusCodes.contains(response.statusCode) else { return .doNotRetry }
            if let header = response.headers["Retry-After"] {
                guard let wait = retryAfter(header) else { return backoff(context.attempt) }
                return wait <= maximumRetryAfter ? .retry(after: wait) : .doNotRetry
            }
            return backoff(context.attempt)
        case .failure(let error):
            return Self.isTransient(error) ? backoff(context.attempt) : .doNotRetry
        }
    }

    /// The backoff before retry number `attempt` (1 for the first retry).
    public func backoff(_ attempt: Int) -> RetryDecision {
        let full = exponentialBackoffScale * pow(exponentialBackoffBase, Double(max(0, attempt - 1)))
        let seconds = full / 2 + full / 2 * min(max(jitter(), 0), 1)
        return .retry(after: .wait(seconds: seconds))
    }

    /// `Retry-After` as a wait (RFC 9110 §10.2.3): delta-seconds, or an HTTP-date; `nil` when
    /// it is neither.
    public func retryAfter(_ header: String) -> Duration? {
        let text = header.trimmingCharacters(in: .whitespaces)
        if let seconds = Int64(text), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"  // IMF-fixdate, RFC 9110 §5.6.7
        guard let date = formatter.date(from: text) else { return nil }
        return .seconds(max(0, Int64(date.timeIntervalSince1970) - clock.now()))
    }

    /// Whether a failure may go away by itself.
    static func isTransient(_ error: HTTPError) -> Bool {
        switch error {
        case .timedOut: return true
        case .transport(let transport): return isTransient(transport.kind)
        default: return false
        }
    }

    /// The network's failures (a name not resolved, a connection refused, reset or cut short,
    /// a handshake that broke off) may go away; an answer that would come again (a client
    /// certificate refused, a response the transport cannot take) may not. A refused server
    /// certificate is a trust rejection, never a transport error.
    static func isTransient(_ kind: TransportError.Kind) -> Bool {
        switch kind {
        case .hostNotFound, .cannotConnect, .timedOut, .tlsHandshakeFailed, .connectionLost: return true
        case .clientCertificateRequired, .clientCertificateRejected, .proxyFailed, .invalidResponse, .responseHeadersTooLarge,
            .contentDecodingFailed, .other:
            return false
        }
    }
}
