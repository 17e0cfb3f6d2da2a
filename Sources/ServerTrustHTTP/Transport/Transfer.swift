internal import Glibc
internal import ServerTrust
internal import Synchronization

/// Everything one HTTP exchange (one hop: no redirects, no retries) needs; built by
/// ``HTTPSession`` and read by the transfer thread.
struct TransferSpec: Sendable {
    var target: RequestTarget
    var method: HTTPMethod
    var headers: HTTPHeaders
    var body: [UInt8]?
    /// A body read while it is sent (``HTTPRequest/streamedBody``).
    var streamedBody: StreamedBody?
    var timeout: Double
    /// User/password and the `CURLAUTH_*` mask for the origin.
    var httpCredential: (user: String, password: String, schemes: Int)?
    /// Proxy user/password (Basic), overriding the configuration's.
    var proxyCredential: (user: String, password: String)?
    var usesFreshConnection: Bool
    /// Where the response body goes.
    var sink: BodySink
    var uploadProgress: ProgressHandler?
    var downloadProgress: ProgressHandler?
    /// The request's own challenge handler (not the session's `taskChallengeHandler`): it
    /// puts the request in its own ``ConnectionScope/isolated`` connections.
    var requestChallengeHandler: TaskChallengeHandler?
}

/// What a finished hop produced (also on failure, for a proxy's 407 headers).
struct RawResponse: Sendable {
    var statusCode: Int = 0
    var connectCode: Int = 0
    var httpVersion: String = "HTTP/1.1"
    /// The last header block received (the final response's, or a proxy's CONNECT answer
    /// when the transfer failed there); earlier blocks (1xx, CONNECT) are not kept.
    var finalHeaders = HTTPHeaders()
    var body: [UInt8] = []
    var timing = HTTPTiming(nameLookup: 0, connect: 0, tlsHandshake: 0, firstByte: 0, total: 0)
    var tlsVersion: String?
    var tlsSessionResumed = false
    var usedNewConnection = false
    /// The origin's decision (``HTTPResponse/trustDecision``).
    var trustDecisionBox: DecisionBox?
    /// The `https://` proxy's decision for the connection (``HTTPResponse/proxyTrustDecision``).
    var proxyTrustDecisionBox: DecisionBox?
}

/// One hop in flight. Created by the requesting task, then handed to one transfer lane:
/// the mutable state below is touched only on that lane's thread (the inbox mutex orders
/// the hand-over), except `cancelRequested`, which is atomic, and the continuation, which is
/// set before the hand-over and resumed exactly once by the lane.
///
/// The stored properties are `@exclusivity(unchecked)`: one thread at a time uses them and
/// no access overlaps another, while the runtime's dynamic exclusivity check on class
/// properties cost some 80 instructions per access, about 30 accesses per request (curl
/// calls back once per header line).
final class Transfer: @unchecked Sendable {
    let spec: TransferSpec
    /// How its curl handle is set up, derived from ``spec`` once (and the body curl reads,
    /// kept until the hop ends).
    let options: TransferOptions
    /// Which connections the transfer may use (an isolated transfer's number identifies it to
    /// its connection).
    var scope: ConnectionScope { options.settings.scope }
    let cancelRequested = Atomic<Bool>(false)
    /// Release/acquire hand-over of the lane-thread state to the requesting task: set by
    /// ``finish(failing:)`` before the task is resumed, read by ``takeResponse()`` first. The
    /// continuation's resume already orders the two, but inside the concurrency runtime, which
    /// ThreadSanitizer cannot see; this edge is the same ordering in code it does see.
    private let handedOver = Atomic<Bool>(false)
    /// Unchecked: ``finish(_:)`` is the only place that resumes it, once, and clears it.
    @exclusivity(unchecked) var continuation: CheckedContinuation<Void, Never>?
    /// Set while the requesting job itself drives the transfer (``TransferLane/runInline(_:)``):
    /// ``finish(failing:)`` then only marks it finished instead of resuming.
    @exclusivity(unchecked) var runsInline = false
    @exclusivity(unchecked) var isFinished = false
    /// Why the hop failed (`nil`: it completed); set by ``finish(failing:)``. The response
    /// stays in ``response`` either way (a failed hop's partial response matters for a
    /// proxy's 407), so the outcome carries no copy of it.
    @exclusivity(unchecked) var failure: HTTPError?

    // Lane-thread state.
    @exclusivity(unchecked) var response = RawResponse()
    /// The decision made for this transfer's connection: in its handshake, or, for a resumed
    /// TLS session, before the request was sent (``ConnectionTrust``).
    @exclusivity(unchecked) var trustDecision: TrustDecision?
    /// The decision the origin connection carries (made now or for an earlier request).
    @exclusivity(unchecked) var connectionRecord: ConnectionTrust.Record?
    /// The decision on an `https://` proxy's own chain, when this transfer opened a
    /// connection through one.
    @exclusivity(unchecked) var proxyTrustDecision: TrustDecision?
    /// A challenge handler's cancel/error during the handshake (overrides curl's code).
    @exclusivity(unchecked) var challengeFailure: HTTPError?
    /// A local failure inside a callback (download file, body limit).
    @exclusivity(unchecked) var callbackFailure: HTTPError?
    /// Whether the body is handed to the caller as it arrives.
    var streamsBody: Bool {
        if case .stream = spec.sink { return true }
        return false
    }
    /// For a streamed body: the response head, handed to the task when the body begins
    /// (``deliverHead()``), while the transfer goes on feeding the ``BodyChannel``.
    @exclusivity(unchecked) var streamHead: RawResponse?
    /// The open ``TransferSpec/streamedBody`` curl reads the body from.
    @exclusivity(unchecked) var bodyReader: StreamedBodyReader?
    @exclusivity(unchecked) var lastUpload: Int64 = -1
    @exclusivity(unchecked) var lastDownload: Int64 = -1
    /// The answer a connection-level challenge handler gave ``ChallengeOutcome/later`` for,
    /// while the lane thread waits for it inside the handshake. The lane cannot see the
    /// task's cancellation then (it is blocked), so ``TransferLane/cancel(_:)`` ends the wait
    /// from the cancelling thread through this.
    private let awaitedReply = Mutex<ChallengeReply?>(nil)

    /// Blocks the lane thread for a `.later` answer until it comes, `timeout` seconds pass, or
    /// the request's task is cancelled (then at once: `nil`, and ``cancelRequested`` is set).
    func waitBlocking(for reply: ChallengeReply, timeout: Double) -> ChallengeDisposition? {
        awaitedReply.withLock { $0 = reply }
        defer { awaitedReply.withLock { $0 = nil } }
        // A cancellation that came before the reply was registered above.
        if cancelRequested.load(ordering: .sequentiallyConsistent) { reply.cancel() }
        return reply.waitBlocking(timeout: timeout)
    }

    /// Ends a ``waitBlocking(for:timeout:)`` in progress (called after ``cancelRequested`` is set).
    func interruptChallengeWait() {
        awaitedReply.withLock { $0 }?.cancel()
    }

    /// - Parameters:
    ///   - spec: The hop.
    ///   - loadsResolveList: The session's `resolve` list is still to be loaded
    ///     (``TransferOptions/Settings/loadsResolveList``).
    init(spec: TransferSpec, loadsResolveList: Bool) {
        options = TransferOptions(spec, loadsResolveList: loadsResolveList)
        self.spec = spec
    }

    deinit {
        closeFiles()
    }

    /// Closes the upload files, if open (once the hop has ended). A download's file belongs to
    /// its ``PartialDownload``, which the request commits or discards.
    private func closeFiles() {
        bodyReader?.close()
        bodyReader = nil
    }

    /// Streamed body: hands `head` to the waiting task now; the transfer goes on, and its end
    /// reaches the reader through the channel. Once only.
    func deliverHead(_ head: RawResponse) {
        guard streamHead == nil, !isFinished else { return }
        streamHead = head
        handedOver.store(true, ordering: .releasing)
        if runsInline { return }
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume()
    }

    /// What the waiting task finds once resumed: a streamed body's head (the transfer goes on;
    /// its end reaches the reader through the channel), or the finished hop.
    enum Arrival {
        case head(RawResponse)
        case finished(HTTPError?)
    }

    /// Reads what the task was resumed for (after the hand-over).
    func arrival() -> Arrival {
        _ = handedOver.load(ordering: .acquiring)
        if let streamHead { return .head(streamHead) }
        return .finished(failure)
    }

    /// Moves the response out (the hop has finished; nothing reads it afterwards), so the
    /// task builds its response without copying each field.
    func takeResponse() -> RawResponse {
        _ = handedOver.load(ordering: .acquiring)
        var taken = RawResponse()
        swap(&taken, &response)
        return taken
    }

    /// Records the result and resumes the waiting task (or, for a transfer run inline, only
    /// marks it finished for ``TransferLane/runInline(_:)``); later calls do nothing.
    func finish(failing failure: HTTPError?) {
        closeFiles()
        guard !isFinished else { return }
        isFinished = true
        self.failure = failure
        if case .stream(let channel) = spec.sink { channel.finish(failure) }
        handedOver.store(true, ordering: .releasing)
        if runsInline {
            runsInline = false
            return
        }
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume()
    }
}
