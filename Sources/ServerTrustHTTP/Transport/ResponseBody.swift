internal import Synchronization

/// Where a hop's response body goes, chosen by the request: memory (bounded), a download's
/// temporary file, or the caller as it arrives.
enum BodySink: Sendable {
    /// Kept in ``HTTPResponse/body``, at most `limit` bytes once decoded (a larger body fails
    /// with ``HTTPError/responseBodyTooLarge(limit:)``): a hostile server cannot make the
    /// client hold more than that.
    case memory(limit: Int)
    /// Written to the download's temporary file (``PartialDownload``).
    case file(PartialDownload)
    /// Handed to the caller chunk by chunk (``HTTPBodyStream``).
    case stream(BodyChannel)
}

/// The hand-over between the transfer thread, which receives a streamed body, and the task
/// that reads it: a queue bounded to ``capacity`` bytes. When it is full, the transfer is
/// paused (libcurl's `CURL_WRITEFUNC_PAUSE`: curl keeps the bytes and delivers them again
/// once unpaused), and it is unpaused when the reader has taken half of it, so a slow reader
/// holds the body at the server, not in memory.
final class BodyChannel: Sendable {
    /// Bytes buffered before the transfer pauses.
    let capacity: Int

    private struct State {
        var chunks: [[UInt8]] = []
        var head = 0
        var buffered = 0
        /// The transfer is paused for want of room.
        var paused = false
        /// The transfer has ended: `nil` completed, else its error.
        var end: HTTPError??
        var waiter: CheckedContinuation<Void, Never>?
        /// Asks the transfer thread to unpause the transfer.
        var resume: (@Sendable () -> Void)?
        /// Cancels the transfer.
        var cancel: (@Sendable () -> Void)?
        var abandoned = false
    }

    private let state = Mutex(State())
    /// The bound on a decoded body (``HTTPSessionConfiguration/maximumDecodedBodySize``).
    let decodedBudget: DecodedBodyBudget?

    init(capacity: Int = 1 << 20, decodedLimit: Int? = nil) {
        self.capacity = capacity
        self.decodedBudget = decodedLimit.map(DecodedBodyBudget.init(limit:))
    }

    /// A channel whose body has ended, empty.
    static func ended() -> BodyChannel {
        let channel = BodyChannel()
        channel.finish(nil)
        return channel
    }

    /// The transfer thread's controls, once the transfer has a thread.
    func attach(resume: @escaping @Sendable () -> Void, cancel: @escaping @Sendable () -> Void) {
        let abandoned = state.withLock { state -> Bool in
            state.resume = resume
            state.cancel = cancel
            return state.abandoned
        }
        if abandoned { cancel() }
    }

    /// Transfer thread: takes `bytes`, or returns `false` (the transfer is to pause; curl
    /// offers the same bytes again once unpaused) when ``capacity`` bytes already wait.
    func offer(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let (accepted, waiter): (Bool, CheckedContinuation<Void, Never>?) = state.withLock { state in
            if state.buffered >= capacity {
                state.paused = true
                return (false, nil)
            }
            state.chunks.append(Array(bytes))
            state.buffered += bytes.count
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume()
        return accepted
    }

    /// Transfer thread: the transfer has ended.
    func finish(_ failure: HTTPError?) {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard state.end == nil else { return nil }
            state.end = .some(failure)
            state.resume = nil
            state.cancel = nil
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Reader: the next chunk, `nil` at the end of the body.
    /// - Throws: The transfer's failure after the last chunk received before it.
    func next() async throws(HTTPError) -> [UInt8]? {
        while true {
            if Task.isCancelled {
                abandon()
                throw HTTPError.cancelled
            }
            enum Step {
                case chunk([UInt8], resume: (@Sendable () -> Void)?)
                case end(HTTPError?)
                case wait
            }
            let step: Step = state.withLock { state in
                if state.head < state.chunks.count {
                    let chunk = state.chunks[state.head]
                    state.head += 1
                    state.buffered -= chunk.count
                    if state.head > 64 && state.head * 2 > state.chunks.count {
                        state.chunks.removeFirst(state.head)
                        state.head = 0
                    }
                    var resume: (@Sendable () -> Void)?
                    if state.paused && state.buffered <= capacity / 2 {
                        state.paused = false
                        resume = state.resume
                    }
                    return .chunk(chunk, resume: resume)
                }
                if let end = state.end { return .end(end) }
                if state.abandoned { return .end(.cancelled) }
                return .wait
            }
            switch step {
            case .chunk(let chunk, let resume):
                resume?()
                return chunk
            case .end(let failure):
                if let failure { throw failure }
                return nil
            case .wait:
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let ready = state.withLock { state -> Bool in
                            if state.head < state.chunks.count || state.end != nil || state.abandoned { return true }
                            state.waiter = continuation
                            return false
                        }
                        if ready { continuation.resume() }
                    }
                } onCancel: {
                    // On the cancelling thread: the transfer is cancelled from here, not when
                    // this task next runs, so its connection closes even while the reader
                    // waits for a thread (a busy cooperative pool, a blocked task executor).
                    // `abandoned` is set under the lock before the waiter is taken, and the
                    // operation above checks it under the same lock before it registers, so a
                    // cancellation that lands between the two cannot be lost.
                    self.abandon()
                    let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
                        defer { state.waiter = nil }
                        return state.waiter
                    }
                    waiter?.resume()
                }
            }
        }
    }

    /// Bytes received and not yet read.
    var bufferedBytes: Int { state.withLock { $0.buffered } }

    /// Reader: the body is no longer wanted; the transfer is cancelled (its connection closed).
    func abandon() {
        let cancel: (@Sendable () -> Void)? = state.withLock { state in
            guard !state.abandoned, state.end == nil else { return nil }
            state.abandoned = true
            return state.cancel
        }
        cancel?()
    }
}

/// A response body as it arrives: an `AsyncSequence` of byte chunks, with back-pressure (the
/// transfer pauses while about 1 MiB waits unread, so a slow reader holds the body at the
/// server, not in memory). Iterate it once. Dropping it before the end, or cancelling the
/// task that reads it, cancels the transfer.
///
/// ```swift
/// let response = try await session.stream(HTTPRequest(.get, "https://example.com/large.iso"))
/// for try await chunk in response.body { try file.write(contentsOf: chunk) }
/// ```
public final class HTTPBodyStream: AsyncSequence, Sendable {
    /// One chunk of the body, as libcurl's write callback delivered it.
    public typealias Element = [UInt8]

    let channel: BodyChannel

    init(_ channel: BodyChannel) {
        self.channel = channel
    }

    deinit { channel.abandon() }

    /// Reads the chunks in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: HTTPBodyStream

        /// The next chunk, or `nil` after the last.
        /// - Throws: ``HTTPError`` when the transfer fails before the body ends (a cut
        ///   connection, a timeout, cancellation).
        public mutating func next() async throws -> [UInt8]? {
            try await stream.channel.next()
        }
    }

    /// An iterator over the chunks.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: self) }

    /// The whole remaining body, at most `limit` bytes.
    /// - Parameter limit: The most bytes to collect.
    /// - Returns: The bytes.
    /// - Throws: ``HTTPError/responseBodyTooLarge(limit:)`` past `limit`, or the transfer's
    ///   failure.
    public func collect(upTo limit: Int) async throws(HTTPError) -> [UInt8] {
        var bytes: [UInt8] = []
        while let chunk = try await channel.next() {
            guard bytes.count + chunk.count <= limit else {
                channel.abandon()
                throw HTTPError.responseBodyTooLarge(limit: limit)
            }
            bytes += chunk
        }
        return bytes
    }
}

/// The answer to ``HTTPSession/stream(_:)``: the final response's status line, header fields
/// and trust decision as soon as they have arrived, and its body as it arrives.
public struct HTTPStreamedResponse: Sendable {
    /// Everything but the body (``HTTPResponse/body`` is empty; the timings are those of the
    /// moment the header section ended).
    public let head: HTTPResponse
    /// The body.
    public let body: HTTPBodyStream
}
