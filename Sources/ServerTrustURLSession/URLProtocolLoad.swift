internal import Foundation
internal import ServerTrustHTTP

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

/// One load of a ``ServerTrustURLProtocol``: from `startLoading()` to its last word to the
/// client, or to `stopLoading()`.
///
/// The request runs in a Swift task of its own; an idle watchdog beside it fails the load
/// with `URLError.timedOut` when nothing has moved for `URLRequest.timeoutInterval`.
final class URLProtocolLoad: @unchecked Sendable {
    // @unchecked Sendable: the mutable fields below are read and written only with `lock`
    // held. The protocol object, which is not Sendable, is only ever handed, with the lock
    // held, to its client (Foundation's `URLProtocolClient`, which is Sendable): Foundation's
    // own protocols call their clients from their work queues in the same way. Holding the
    // lock across each call also orders the calls with `stop()`: once `stop()` has returned,
    // the client hears nothing more from this load, so a cancelled task is completed once,
    // by Foundation's `URLSessionTask.cancel()`.
    private let lock = NSLock()
    private var urlProtocol: URLProtocol?
    private var client: (any URLProtocolClient)?
    private var stopped = false
    private var idleTimedOut = false
    /// When something last moved; `nil` until the request's task has started. Only the
    /// request's own time counts: a load whose task waits for a thread (a busy cooperative
    /// pool) has not yet been idle on the network.
    private var lastActivity: ContinuousClock.Instant?
    private var task: Task<Void, Never>?

    init(urlProtocol: URLProtocol, client: (any URLProtocolClient)?) {
        self.urlProtocol = urlProtocol
        self.client = client
    }

    /// Starts the request's task.
    func start(_ prepared: PreparedRequest) {
        let task = Task { await self.run(prepared) }
        let stopped = lock.withLock { () -> Bool in
            if !self.stopped { self.task = task }
            return self.stopped
        }
        if stopped { task.cancel() }
    }

    /// Fails the load (its last word to the client).
    func fail(_ error: URLError) {
        deliver(final: true) { urlProtocol, client in client.urlProtocol(urlProtocol, didFailWithError: error) }
    }

    /// `stopLoading()`: the task is cancelled and the client hears nothing more.
    func stop() {
        let task = lock.withLock { () -> Task<Void, Never>? in
            stopped = true
            urlProtocol = nil
            client = nil
            defer { self.task = nil }
            return self.task
        }
        task?.cancel()
    }

    /// Something was sent or received: the idle limit starts again.
    private func noteActivity() {
        let now = ContinuousClock.now
        lock.withLock { lastActivity = now }
    }

    /// Calls `body` with the protocol and its client, unless the load was stopped or has
    /// ended; with `final`, the load ends.
    private func deliver(final: Bool = false, _ body: (URLProtocol, any URLProtocolClient) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped, let urlProtocol, let client else { return }
        body(urlProtocol, client)
        if final {
            stopped = true
            self.urlProtocol = nil
            self.client = nil
            task = nil
        }
    }

    private func run(_ prepared: PreparedRequest) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.perform(prepared) }
            if let seconds = prepared.idleTimeout {
                group.addTask { await self.watchIdle(.wait(seconds: seconds)) }
            }
            // The first to end (the request, or the watchdog on an idle load) ends the other.
            _ = await group.next()
            group.cancelAll()
        }
    }

    /// Returns when nothing has moved for `limit` (marking the load timed out), or when
    /// cancelled.
    private func watchIdle(_ limit: Duration) async {
        while !Task.isCancelled {
            guard let last = lock.withLock({ lastActivity }) else {
                // The request has not started: look again after a full limit, which is never
                // earlier than a limit counted from its start could end.
                try? await Task.sleep(for: limit)
                continue
            }
            let deadline = last + limit
            if ContinuousClock.now >= deadline {
                lock.withLock { idleTimedOut = true }
                return
            }
            try? await Task.sleep(until: deadline, clock: .continuous)
        }
    }

    private func perform(_ prepared: PreparedRequest) async {
        noteActivity()
        var request = prepared.request
        request.uploadProgress = { [self] _ in noteActivity() }
        request.downloadProgress = { [self] _ in noteActivity() }
        do {
            if let stream = prepared.bodyStream {
                request.body = try stream.readAll()
                noteActivity()
            }
            var streamed = try await prepared.session.stream(request)
            noteActivity()
            // A 401 answered as Foundation's loader answers it: the delegate or the credential
            // storage gives a credential, and the request is sent again with it.
            var authentication = URLSessionAuthentication(settings: prepared.settings, requestURL: prepared.url)
            while true {
                let outcome = await authentication.answer(
                    streamed.head, response: URLResponseConversion.response(streamed.head, requestURL: prepared.url))
                guard case .retry(let credential) = outcome else {
                    if case .cancel = outcome {
                        // Foundation cancels the task (`task.cancel()`): URLError.cancelled.
                        throw URLErrorMapping.error(.cancelled, url: prepared.url, "the URLSession's delegate cancelled the authentication challenge")
                    }
                    break
                }
                // The 401's body is read and dropped, so its connection can serve the retry.
                _ = try? await streamed.body.collect(upTo: 1 << 16)
                request.credential = credential
                request.sendsCredentialPreemptively = streamed.head.passwordChallenges.first?.method == .httpBasic
                streamed = try await prepared.session.stream(request)
                noteActivity()
            }
            authentication.remember(streamed.head)
            prepared.settings?.storeCookies(from: streamed.head)
            guard let response = URLResponseConversion.response(streamed.head, requestURL: prepared.url) else {
                fail(
                    URLErrorMapping.error(
                        .badServerResponse, url: prepared.url,
                        "the response could not be represented as an HTTPURLResponse: \(streamed.head)"))
                return
            }
            deliver { urlProtocol, client in client.urlProtocol(urlProtocol, didReceive: response, cacheStoragePolicy: .notAllowed) }
            let limit = prepared.session.configuration.maximumResponseBodySize
            var body = Data()
            for try await chunk in streamed.body {
                noteActivity()
                guard body.count + chunk.count <= limit else { throw HTTPError.responseBodyTooLarge(limit: limit) }
                body.append(contentsOf: chunk)
            }
            deliver(final: true) { urlProtocol, client in
                if !body.isEmpty { client.urlProtocol(urlProtocol, didLoad: body) }
                client.urlProtocolDidFinishLoading(urlProtocol)
            }
        } catch let failure as URLError {
            fail(failure)
        } catch {
            let httpError = error as? HTTPError ?? .transport(TransportError(.other, message: "unexpected error: \(error)"))
            if case .cancelled = httpError, lock.withLock({ idleTimedOut }) {
                fail(
                    URLErrorMapping.error(
                        .timedOut, url: prepared.url,
                        "nothing was sent or received for \(prepared.idleTimeout ?? 0) s (URLRequest.timeoutInterval)",
                        httpError: httpError))
                return
            }
            fail(ServerTrustURLProtocol.urlError(for: httpError, url: prepared.url))
        }
    }
}
