public import ServerTrust
internal import Synchronization
public import TrustEvaluation

/// Posts pin-failure reports (TrustKit's JSON, RFC 7469 §3) to their report URIs through a
/// dedicated ``HTTPSession`` of its own, asynchronously.
///
/// Report traffic is never subject to the pins it reports on: the reporter's session decides
/// every connection with the default trust decision (`DefaultTrustEvaluator`: path validation
/// to the anchors and the host check, no pins), whatever policy produced the report, so a
/// collector on a pinned domain still receives the report of a failure there (TrustKit
/// uploads from a separate background session for the same reason). The session is made on
/// the first report, with the system roots unless other anchors are given.
///
/// ``send(_:to:)`` is called from the evaluation, inside the TLS handshake of the connection
/// that failed; it only starts a task per report URI and returns, so reporting never delays
/// or blocks the decision. At most ``maximumPendingUploads`` uploads run at once; further
/// reports are dropped (and counted), so a flood of failures cannot pile up tasks. Wrap the
/// reporter in `RateLimitedReporter` to send each distinct report once a day.
///
/// ```swift
/// let reporter = HTTPPinFailureReporter()
/// let pins = SPKIPinsTrustEvaluator(configuration: configuration, reporter: RateLimitedReporter(wrapping: reporter, limiter: limiter))
/// let session = try HTTPSession(serverTrust: .system(pins))
/// ```
public final class HTTPPinFailureReporter: PinFailureReporter {
    /// The outcome of one upload.
    public struct Delivery: Sendable {
        /// Where the report went.
        public let reportURI: String
        /// What was sent.
        public let report: PinFailureReport
        /// The collector's HTTP status, or why the upload failed.
        public let result: Result<Int, HTTPError>

        /// Whether the collector answered 2xx.
        public var succeeded: Bool {
            if case .success(let status) = result { return (200..<300).contains(status) }
            return false
        }
    }

    /// Where the reporter's session gets its anchors.
    private enum Anchors: Sendable {
        case system
        case custom(TrustStore)
    }

    private struct State {
        var session: HTTPSession?
        var pending = 0
        var dropped = 0
        var finished = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Uploads allowed to run at once; reports beyond are dropped.
    public let maximumPendingUploads: Int
    private let anchors: Anchors
    private let resolve: [String]
    private let timeout: Double
    private let onDelivery: (@Sendable (Delivery) -> Void)?
    private let state = Mutex(State())

    /// A reporter whose session trusts the system roots (`SSL_CERT_FILE` / `SSL_CERT_DIR`).
    ///
    /// - Parameters:
    ///   - resolve: curl-style `HOST:PORT:ADDRESS` overrides for collectors (name resolution
    ///     only; trust is unaffected).
    ///   - timeout: Seconds per upload.
    ///   - maximumPendingUploads: Uploads allowed to run at once.
    ///   - onDelivery: Called (on a background task) after each upload, delivered or not.
    public init(
        resolve: [String] = [], timeout: Double = 30, maximumPendingUploads: Int = 64,
        onDelivery: (@Sendable (Delivery) -> Void)? = nil
    ) {
        self.anchors = .system
        self.resolve = resolve
        self.timeout = timeout
        self.maximumPendingUploads = maximumPendingUploads
        self.onDelivery = onDelivery
    }

    /// A reporter whose session trusts `anchors` instead of the system roots (a private
    /// collector, tests). The decision is still the default one: chain and host, never pins.
    ///
    /// - Parameters:
    ///   - anchors: The collectors' trust anchors.
    ///   - resolve: curl-style `HOST:PORT:ADDRESS` overrides for collectors.
    ///   - timeout: Seconds per upload.
    ///   - maximumPendingUploads: Uploads allowed to run at once.
    ///   - onDelivery: Called (on a background task) after each upload, delivered or not.
    public init(
        anchors: TrustStore, resolve: [String] = [], timeout: Double = 30, maximumPendingUploads: Int = 64,
        onDelivery: (@Sendable (Delivery) -> Void)? = nil
    ) {
        self.anchors = .custom(anchors)
        self.resolve = resolve
        self.timeout = timeout
        self.maximumPendingUploads = maximumPendingUploads
        self.onDelivery = onDelivery
    }

    deinit {
        state.withLock { $0.session }?.invalidate()
    }

    /// Starts one upload per report URI and returns at once.
    ///
    /// - Parameters:
    ///   - report: The report.
    ///   - reportURIs: `http` or `https` URLs; anything else fails its delivery with
    ///     ``HTTPError/invalidURL(_:)``.
    public func send(_ report: PinFailureReport, to reportURIs: [String]) {
        for uri in reportURIs {
            let admitted = state.withLock { state -> Bool in
                guard state.pending < maximumPendingUploads else {
                    state.dropped += 1
                    return false
                }
                state.pending += 1
                return true
            }
            guard admitted else { continue }
            Task.detached(priority: .utility) {
                let result = await self.upload(report, to: uri)
                self.onDelivery?(Delivery(reportURI: uri, report: report, result: result))
                self.finish()
            }
        }
    }

    /// Uploads started and not finished.
    public var pendingUploads: Int { state.withLock { $0.pending } }
    /// Reports dropped because ``maximumPendingUploads`` uploads were running.
    public var droppedReports: Int { state.withLock { $0.dropped } }
    /// Uploads finished (delivered or not).
    public var finishedUploads: Int { state.withLock { $0.finished } }

    /// Waits until no upload is running (for a command line tool before it exits, and tests).
    public func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                guard state.pending > 0 else { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Waits until no upload is running or `seconds` pass.
    ///
    /// - Parameter seconds: The longest wait.
    /// - Returns: Whether the reporter is idle.
    @discardableResult
    public func waitUntilIdle(timeout seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .wait(seconds: seconds)
        while pendingUploads > 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return pendingUploads == 0
    }

    // MARK: - Uploading

    private func upload(_ report: PinFailureReport, to uri: String) async -> Result<Int, HTTPError> {
        let scheme = uri.prefix { $0 != ":" }.lowercased()
        guard scheme == "https" || scheme == "http" else { return .failure(.invalidURL(uri)) }
        let session: HTTPSession
        do {
            session = try reportSession()
        } catch {
            return .failure(error)
        }
        let request = HTTPRequest(.post, uri, headers: ["Content-Type": "application/json"], body: report.jsonBytes)
        do {
            return .success(try await session.send(request).statusCode)
        } catch {
            return .failure(error)
        }
    }

    /// The reporter's own session, made on first use: default trust, no pins, no redirects,
    /// no proxy, no credentials.
    private func reportSession() throws(HTTPError) -> HTTPSession {
        if let session = state.withLock({ $0.session }) { return session }
        let decider: ServerTrustDecider
        switch anchors {
        case .custom(let store):
            decider = ServerTrustDecider(DefaultTrustEvaluator(), anchors: store)
        case .system:
            do {
                decider = try ServerTrustDecider.system()
            } catch {
                throw HTTPError.invalidRequest("report session: system trust store: \(error)")
            }
        }
        var configuration = HTTPSessionConfiguration(serverTrust: decider)
        configuration.defaultHeaders = ["User-Agent": "ServerTrust/0.1 pin-failure-report"]
        configuration.resolve = resolve
        configuration.timeout = timeout
        configuration.connectTimeout = min(timeout, configuration.connectTimeout)
        configuration.maximumRedirects = 0
        configuration.maximumTransferThreads = 1
        let made = try HTTPSession(configuration: configuration)
        let (session, duplicate) = state.withLock { state -> (HTTPSession, HTTPSession?) in
            if let existing = state.session { return (existing, made) }
            state.session = made
            return (made, nil)
        }
        duplicate?.invalidate()
        return session
    }

    private func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.pending -= 1
            state.finished += 1
            guard state.pending == 0 else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
