/// Delivers pin-failure reports: the HTTPS client's poster, a log, a queue, a test collector.
///
/// Called synchronously from the evaluation, after the decision; an implementation that
/// uploads must hand the work off and return at once (TrustKit uploads from a background
/// session so reports never delay or pin the connection that failed).
public protocol PinFailureReporter: Sendable {
    /// Delivers one report.
    /// - Parameters:
    ///   - report: The report.
    ///   - reportURIs: The pin set's report URIs.
    func send(_ report: PinFailureReport, to reportURIs: [String])
}

/// A reporter that passes on each distinct report at most once per interval (24 hours by
/// default), remembering what it sent across restarts through its ``ReportRateLimiter``.
public struct RateLimitedReporter: PinFailureReporter {
    /// The reporter that delivers.
    public let reporter: any PinFailureReporter
    /// The limiter deciding what is passed on.
    public let limiter: ReportRateLimiter

    /// Wraps `reporter`.
    /// - Parameters:
    ///   - reporter: The reporter that delivers.
    ///   - limiter: The rate limiter.
    public init(wrapping reporter: any PinFailureReporter, limiter: ReportRateLimiter) {
        self.reporter = reporter
        self.limiter = limiter
    }

    /// Passes `report` on unless an identical one was sent within the interval.
    public func send(_ report: PinFailureReport, to reportURIs: [String]) {
        if limiter.shouldSend(report) { reporter.send(report, to: reportURIs) }
    }
}
