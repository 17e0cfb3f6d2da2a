public import ServerTrust

/// An HTTPS client session: the `AFHTTPSessionManager` analogue, on libcurl, whose every TLS
/// certificate decision is made by the configured ``/ServerTrust/ServerTrustDecider`` (or the challenge
/// handlers).
///
/// A session owns its transfer threads, one libcurl multi handle (connection pool) per
/// thread, and one share object (DNS cache and TLS sessions). Connections and TLS sessions
/// are never shared with another session, so a connection verified under one session's
/// policy never serves a request of another; make a new session when the policy changes.
///
/// ```swift
/// let session = try HTTPSession(configuration: .system())
/// let response = try await session.get("https://www.example.org/")
/// print(response.statusCode, response.trustDecision!)
/// ```
///
/// Requests follow redirects themselves (the decision runs for every new host, and
/// `Authorization`, `Cookie` and, without a proxy, `Proxy-Authorization` are dropped across
/// origins), answer 401 and 407 challenges, and fail with
/// ``HTTPError``. Dropping the last reference (or ``invalidate()``) stops the threads;
/// requests still running fail with ``HTTPError/sessionInvalidated``.
///
/// ## Threads
///
/// A dedicated transfer thread drives a libcurl multi handle in a `curl_multi_poll` loop;
/// requests reach it through a locked queue and resume their tasks when done. The
/// certificate decision runs synchronously on that thread inside OpenSSL's verify callback,
/// once per new connection: the ``/ServerTrust/ServerTrustDecider``, and the connection-level challenge
/// handlers (server trust, client certificate) when set. While a handler runs (or waits for
/// a ``ChallengeOutcome/later`` answer), new requests go to another transfer thread with its
/// own connection pool (up to ``HTTPSessionConfiguration/maximumTransferThreads``), so one
/// slow handler does not hold up the others; transfers already running on the blocked
/// thread wait for it. Requests with their own ``HTTPRequest/challengeHandler`` run on
/// transfer threads apart from the others, each on a connection of its own, so the trust and
/// the client certificate their handlers decide on never serve another request. Progress
/// callbacks also run on the transfer thread.
public final class HTTPSession: Sendable {
    /// The configuration the session was made from.
    public let configuration: HTTPSessionConfiguration
    let core: SessionCore
    let engine: TransferEngine

    /// Creates a session and starts its first transfer thread.
    ///
    /// - Parameter configuration: The setup.
    /// - Throws: ``HTTPError/invalidRequest(_:)`` for an unusable configuration (bad
    ///   `resolve` entry, a proxy URL that is not `http://` or `https://`, an `https://` proxy
    ///   without a decider when the system trust store cannot be read, a control character in
    ///   a default header, the base or proxy URL or the proxy credential, a default header
    ///   name that is not a token, two host keys of ``HTTPSessionConfiguration/clientIdentities``
    ///   or ``HTTPSessionConfiguration/minimumTLSVersionByHost`` that differ only in case),
    ///   ``HTTPError/fileError(path:reason:)`` for an unreadable credential store.
    public init(configuration: HTTPSessionConfiguration) throws(HTTPError) {
        self.configuration = configuration
        try RequestValidation.checkConfiguration(configuration)
        let core = try SessionCore(configuration: try configuration.withHostKeysLowercased())
        self.core = core
        self.engine = try TransferEngine(
            core: core, maximumLanes: configuration.maximumTransferThreads,
            maximumConnectionsPerHost: configuration.maximumConnectionsPerHost)
    }

    /// Creates a session with default settings and the given decider.
    ///
    /// - Parameter serverTrust: The decider.
    /// - Throws: As ``init(configuration:)``.
    public convenience init(serverTrust: ServerTrustDecider) throws(HTTPError) {
        try self.init(configuration: HTTPSessionConfiguration(serverTrust: serverTrust))
    }

    deinit { engine.shutDown() }

    /// Stops the transfer threads and closes every connection; running requests fail with
    /// ``HTTPError/sessionInvalidated``.
    public func invalidate() { engine.shutDown() }

    /// The decider new connections are decided by now (initially the configuration's
    /// ``HTTPSessionConfiguration/serverTrust``).
    public var serverTrust: ServerTrustDecider { core.trust.decider }

    /// Replaces the session's decider while it runs, for example with a new pin set: every
    /// connection opened from now on is decided by `decider`, and a kept-alive connection or a
    /// TLS session accepted under the old one is decided again, by `decider`, before it serves
    /// another request (and refused if `decider` refuses it). The swap is one atomic step: no
    /// connection is decided by a mix of the two. Requests already past their decision finish
    /// as they are.
    /// - Parameter decider: The new decider.
    public func replaceServerTrust(_ decider: ServerTrustDecider) {
        core.replaceTrust(decider)
    }

    /// The session's remembered credentials.
    public var credentialStore: CredentialStore { core.credentials }

    /// How many transfer threads the session has started.
    package var transferThreadCount: Int { engine.laneCount }

    /// The executor of the session's first transfer thread.
    ///
    /// A task started with this executor preference (`Task(executorPreference:)` or
    /// `withTaskExecutorPreference(_:operation:)`) runs its nonisolated code on the transfer
    /// thread between libcurl calls, so its requests and their completions need no thread
    /// switch: this is how `servertrust bench https` drives keep-alive requests. When nothing
    /// else is waiting for the thread, such a task's request is even run to completion
    /// without suspending the task (the thread drives curl for it directly, as
    /// `curl_easy_perform` would); anything else that needs the thread makes the request
    /// wait the usual way. Cancellation, timeouts, progress and challenges work as for any
    /// request. Only use it for short, non-blocking work: while such code runs, no transfer
    /// of the thread makes progress, and blocking on a request from it deadlocks.
    package var transferExecutor: any TaskExecutor { engine.primaryLane }

    /// `libcurl/7.88.1 OpenSSL/3.0.19 …`.
    package static var libcurlVersion: String { Curl.versionText }

    /// Whether this libcurl negotiates HTTP/2.
    package static var libcurlSupportsHTTP2: Bool { Curl.supportsHTTP2 }

    // MARK: - Requests

    /// Sends a request: redirects, authentication challenges and the trust decision included.
    ///
    /// Before anything is sent, every field that goes on the wire as given is checked, so that
    /// none can end a line of the request and start another (request smuggling, header
    /// injection): the method and header names must be tokens (RFC 9110 §9.1, §5.1), header
    /// values, credentials and the URL (also its host and user information once
    /// percent-decoded) must hold no control character (§5.5; HTAB allowed in header values),
    /// and a Basic user name no colon (RFC 7617 §2). Credentials given by a challenge
    /// handler and redirect targets are checked the same way before they are used.
    ///
    /// - Parameter request: The request.
    /// - Returns: The final response (any status; use a ``ResponseSerializer`` to validate).
    /// - Throws: ``HTTPError``; ``HTTPError/invalidRequest(_:)`` naming the field for a
    ///   field that fails the checks above.
    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        try await attempts(request, head: { $0 }) { request throws(HTTPError) in
            try await RequestExecution(session: self, request: request).run()
        }
    }

    /// Sends a request and returns as soon as the final response's header section has arrived,
    /// with its body as an `AsyncSequence` of chunks read as they arrive, with back-pressure
    /// (``HTTPBodyStream``): a body of any size passes through without being held in memory.
    /// Redirects and authentication challenges are followed as by ``send(_:)``. The request's
    /// timeout covers the whole transfer, the time it waits for a slow reader included: give
    /// long streams a ``HTTPRequest/timeout`` of their own.
    ///
    /// ```swift
    /// let response = try await session.stream(HTTPRequest(.get, "https://example.com/big.iso"))
    /// guard response.head.statusCode == 200 else { return }
    /// for try await chunk in response.body { consume(chunk) }
    /// ```
    /// - Parameter request: The request (without ``HTTPRequest/destinationPath``).
    /// - Returns: The head and the body.
    /// - Throws: ``HTTPError`` when the request fails before its final response's head.
    public func stream(_ request: HTTPRequest) async throws(HTTPError) -> HTTPStreamedResponse {
        try await attempts(request, head: \.head) { request throws(HTTPError) in
            try await RequestExecution(session: self, request: request).stream()
        }
    }

    /// Sends a request and turns the response into a value.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - serializer: Validates the status and content type and decodes the body.
    /// - Returns: The serializer's output.
    /// - Throws: ``HTTPError``.
    public func send<Serializer: ResponseSerializer>(
        _ request: HTTPRequest, serializer: Serializer
    ) async throws(HTTPError) -> Serializer.Output {
        try serializer.serialize(try await send(request))
    }

    /// Builds a request with a request serializer and sends it.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - url: Absolute, or relative to the base URL.
    ///   - parameters: What the serializer encodes.
    ///   - serializer: The request serializer.
    ///   - headers: Extra header fields.
    /// - Returns: The response.
    /// - Throws: ``HTTPError``.
    public func request<Serializer: RequestSerializer>(
        _ method: HTTPMethod, _ url: String, parameters: Serializer.Parameters, serializer: Serializer,
        headers: HTTPHeaders = HTTPHeaders()
    ) async throws(HTTPError) -> HTTPResponse {
        let request = try serializer.serialize(HTTPRequest(method, url, headers: headers), with: parameters)
        return try await send(request)
    }

    /// `GET`, parameters in the query string.
    ///
    /// - Parameters:
    ///   - url: Absolute, or relative to the base URL.
    ///   - parameters: Query parameters.
    ///   - headers: Extra header fields.
    /// - Returns: The response.
    /// - Throws: ``HTTPError``.
    public func get(
        _ url: String, parameters: [(name: String, value: String)] = [], headers: HTTPHeaders = HTTPHeaders()
    ) async throws(HTTPError) -> HTTPResponse {
        try await request(.get, url, parameters: parameters, serializer: URLEncodedRequestSerializer(), headers: headers)
    }

    /// `HEAD`, parameters in the query string.
    ///
    /// - Parameters:
    ///   - url: Absolute, or relative to the base URL.
    ///   - parameters: Query parameters.
    ///   - headers: Extra header fields.
    /// - Returns: The response (empty body).
    /// - Throws: ``HTTPError``.
    public func head(
        _ url: String, parameters: [(name: String, value: String)] = [], headers: HTTPHeaders = HTTPHeaders()
    ) async throws(HTTPError) -> HTTPResponse {
        try await request(.head, url, parameters: parameters, serializer: URLEncodedRequestSerializer(), headers: headers)
    }

    /// `DELETE`, parameters in the query string.
    ///
    /// - Parameters:
    ///   - url: Absolute, or relative to the base URL.
    ///   - parameters: Query parameters.
    ///   - headers: Extra header fields.
    /// - Returns: The response.
    /// - Throws: ``HTTPError``.
    public func delete(
        _ url: String, parameters: [(name: String, value: String)] = [], headers: HTTPHeaders = HTTPHeaders()
    ) async throws(HTTPError) -> HTTPResponse {
        try await request(.delete, url, parameters: parameters, serializer: URLEncodedRequestSerializer(), headers: headers)
    }

    /// `POST` with a form body.
    ///
    /// - Parameters:
    ///   - url: Absolute, or relative to the base URL.
    ///   - parameters: Form fields.
    ///   - headers: Extra header fields.
    /// - Returns: The response.
    /// - Throws: ``HTTPError``.
    public func post(
        _ url: String, parameters: [(name: String, value: String)] = [], headers: HTTPHeaders = HTTPHeaders()
    ) async throws(HTTPError) -> HTTPResponse {
        try await request(.post, url, parameters: parameters, serializer: URLEncodedRequestSerializer(), headers: headers)
    }

    /// `POST` with a JSON body.
    ///
    /// - Parameters:
    ///   - url: Absolute, or relative to the base URL.
    ///   - json: The body.
    ///   - headers: Extra header fields.
    /// - Returns: The response.
    /// - Throws: ``HTTPError``.
    public func post(
        _ url: String, json: JSONValue, headers: HTTPHeaders = HTTPHeaders()
    ) async throws(HTTPError) -> HTTPResponse {
        try await request(.post, url, parameters: json, serializer: JSONRequestSerializer(), headers: headers)
    }

    /// `POST` with a `multipart/form-data` body.
    ///
    /// - Parameters:
    ///   - url: Absolute, or relative to the base URL.
    ///   - multipart: The parts.
    ///   - headers: Extra header fields.
    /// - Returns: The response.
    /// - Throws: ``HTTPError``.
    public func post(
        _ url: String, multipart: MultipartFormData, headers: HTTPHeaders = HTTPHeaders()
    ) async throws(HTTPError) -> HTTPResponse {
        try await request(.post, url, parameters: multipart, serializer: MultipartRequestSerializer(), headers: headers)
    }

    /// `PUT` with a form body.
    ///
    /// - Parameters:
    ///   - url: Absolute, or relative to the base URL.
    ///   - parameters: Form fields.
    ///   - headers: Extra header fields.
    /// - Returns: The response.
    /// - Throws: ``HTTPError``.
    public func put(
        _ url: String, parameters: [(name: String, value: String)] = [], headers: HTTPHeaders = HTTPHeaders()
    ) async throws(HTTPError) -> HTTPResponse {
        try await request(.put, url, parameters: parameters, serializer: URLEncodedRequestSerializer(), headers: headers)
    }

    /// `PATCH` with a JSON body.
    ///
    /// - Parameters:
    ///   - url: Absolute, or relative to the base URL.
    ///   - json: The body.
    ///   - headers: Extra header fields.
    /// - Returns: The response.
    /// - Throws: ``HTTPError``.
    public func patch(
        _ url: String, json: JSONValue, headers: HTTPHeaders = HTTPHeaders()
    ) async throws(HTTPError) -> HTTPResponse {
        try await request(.patch, url, parameters: json, serializer: JSONRequestSerializer(), headers: headers)
    }
}
