public import ServerTrust
public import TrustEvaluation

/// Sees what a session's requests do, for logging and metrics (Alamofire's `EventMonitor`):
/// each attempt's start, every trust decision (new connections, resumed and reused ones) and
/// the violations a decision only reports, redirects, retries, and the outcome with its figures. Every method has an empty default.
///
/// Monitors run in the requesting task, in order, after the fact: they cannot change what
/// happens, and must return quickly.
public protocol EventMonitor: Sendable {
    /// An attempt is about to be sent (after adaptation).
    func requestDidStart(_ request: HTTPRequest, attempt: Int)
    /// A hop's server was decided: its connection's decision (``/ServerTrust/TrustDecision/isFromEarlierHandshake``
    /// for a reused connection), accepted or rejected.
    func request(_ request: HTTPRequest, didDecideTrust decision: TrustDecision)
    /// A hop's server was accepted although the revocation status of some certificate of its
    /// path could not be established (soft-fail: no staple, the CRL server unreachable, a stale
    /// or forged CRL): one finding per such certificate, saying why
    /// (``/ServerTrust/DecisionRecord/unknownRevocationStatus``). Sent after
    /// ``request(_:didDecideTrust:)``, for decisions made in a handshake of this request, not
    /// again for each request a kept-alive connection serves.
    func request(_ request: HTTPRequest, didAcceptWithUnknownRevocationStatus findings: [PathCheckFinding], decision: TrustDecision)
    /// A hop's server was decided in a handshake of its own, and the policy found violations it
    /// only reports (``/ServerTrust/DecisionRecord/reportedViolations``: a chain that is not
    /// compliant with Certificate Transparency in `report` mode, accepted all the same). Told
    /// after ``request(_:didDecideTrust:)``, once per decision (not again for a request that
    /// reuses its connection).
    func request(_ request: HTTPRequest, didReportViolations violations: [PathCheckFinding], in decision: TrustDecision)
    /// A redirect is followed.
    func request(_ request: HTTPRequest, willRedirectFrom url: String, to location: String, statusCode: Int)
    /// An attempt ended and the request is sent again after `delay`.
    func request(_ request: HTTPRequest, willRetryAfter delay: Duration, attempt: Int, outcome: Result<HTTPResponse, HTTPError>)
    /// The request ended.
    func request(_ request: HTTPRequest, didFinishWith result: Result<HTTPResponse, HTTPError>, metrics: HTTPRequestMetrics)
}

extension EventMonitor {
    public func requestDidStart(_ request: HTTPRequest, attempt: Int) {}
    public func request(_ request: HTTPRequest, didDecideTrust decision: TrustDecision) {}
    public func request(_ request: HTTPRequest, didAcceptWithUnknownRevocationStatus findings: [PathCheckFinding], decision: TrustDecision) {}
    public func request(_ request: HTTPRequest, didReportViolations violations: [PathCheckFinding], in decision: TrustDecision) {}
    public func request(_ request: HTTPRequest, willRedirectFrom url: String, to location: String, statusCode: Int) {}
    public func request(_ request: HTTPRequest, willRetryAfter delay: Duration, attempt: Int, outcome: Result<HTTPResponse, HTTPError>) {}
    public func request(_ request: HTTPRequest, didFinishWith result: Result<HTTPResponse, HTTPError>, metrics: HTTPRequestMetrics) {}
}

/// The figures of one request, retries and redirects included.
public struct HTTPRequestMetrics: Sendable {
    /// Attempts made (1 without retries).
    public let attempts: Int
    /// Redirects followed in the last attempt.
    public let redirects: Int
    /// libcurl's timers of the last hop, when it got that far.
    public let lastHopTiming: HTTPTiming?
    /// Seconds from the first attempt's start to the end, on the monotonic clock.
    public let duration: Double
}
