internal import CCurl
internal import CServerTrustShims
internal import Foundation
internal import ServerTrust
internal import Synchronization

/// One transfer thread: a `CURLM` multi handle (with its own connection pool) driven by a
/// single dedicated thread in a `curl_multi_poll` loop, fed through a locked inbox.
///
/// Thread rules: `multi`, `active` and `idle` are touched only by the lane's own thread,
/// except `curl_multi_wakeup`, which curl documents as callable from any thread. A waker
/// registers in `wakers` before it checks `closed` and calls `curl_multi_wakeup` (outside the
/// inbox lock, so the woken lane never spins on a lock its waker still holds); the lane sets
/// `closed` and waits for `wakers` to drain before `curl_multi_cleanup`. Hence
/// `@unchecked Sendable`.
///
/// The lane is also a `TaskExecutor`: a task that prefers it runs its nonisolated code on the
/// lane's thread between `curl_multi_perform` calls, so a request issued from such a task and
/// its completion need no thread switch (see ``HTTPSession/transferExecutor``).
final class TransferLane: TaskExecutor, @unchecked Sendable {
    private struct Inbox {
        var pending: [Transfer] = []
        var cancellations: [Transfer] = []
        /// Paused streamed transfers whose reader has made room.
        var unpauses: [Transfer] = []
        var jobs: [UnownedJob] = []
        var stopping = false
        var closed = false
        /// The lane's joinable thread, taken by the one ``TransferLane/stop()`` that joins it.
        var thread: pthread_t?
    }

    /// The thread's name (`servertrust-0`; `servertrust-i0` for lanes of isolated transfers).
    let name: String
    let core: SessionCore
    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    /// How many handlers are running on this lane's thread right now (0 or 1).
    let handlersRunning = Atomic<Int>(0)
    /// Transfers submitted and not yet finished.
    let outstanding = Atomic<Int>(0)
    private let wakers = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)
    /// `pthread_self()` of the lane's thread (0 until it starts).
    private let threadIdentity = Atomic<UInt>(0)

    // Lane-thread state (no dynamic exclusivity check: one thread, no overlapping access).
    /// The handles in the multi handle. A list searched by pointer, not a dictionary: a lane
    /// runs a few transfers at a time, and hashing the key on every add and completion cost
    /// more than the scan.
    @exclusivity(unchecked) private var active: [EasyHandle] = []
    /// Easy handles between transfers. None is cleaned up before the multi handle: a pooled
    /// connection's `SSL_CTX` keeps the handle that opened it as its callback argument (a TLS
    /// 1.2 renegotiation would call back into it), so handles live as long as the pool.
    @exclusivity(unchecked) private var idle: [EasyHandle] = []
    /// Easy handles that have run a transfer with a caller's `Host` field. libcurl 7.88 keeps
    /// the cookie host such a field set (`state.aptr.cookiehost`: `curl_easy_reset` leaves it,
    /// only `curl_easy_cleanup` frees it) and picks the cookies of every later transfer on the
    /// handle without a `Host` field of its own by it: that host's cookies would go to another
    /// host. They serve only transfers with a `Host` field, which sets it anew.
    @exclusivity(unchecked) private var idleAfterCustomHost: [EasyHandle] = []

    init(name: String, core: SessionCore, maximumConnectionsPerHost: Int) throws(HTTPError) {
        guard let multi = curl_multi_init() else { throw HTTPError.invalidRequest("curl_multi_init failed") }
        self.name = name
        self.core = core
        self.multi = multi
        if maximumConnectionsPerHost > 0 {
            _ = CServerTrustShims_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
        }
        // A joinable pthread rather than a Foundation `Thread`: `stop()` must return only
        // after the thread has fully terminated, thread-specific destructors included. Those
        // destructors free libcrypto's per-thread state (error queue, DRBGs). A caller that
        // stops the session and then exits would otherwise race them against
        // `OPENSSL_cleanup`, which deletes the thread-local keys: the destructors are then
        // skipped and that state leaks (LeakSanitizer report at exit, bad-input catalogue
        // §11 run 6).
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<TransferLane>.fromOpaque(raw).takeRetainedValue().run()
                return nil
            }, context)
        guard created == 0 else {
            Unmanaged<TransferLane>.fromOpaque(context).release()
            curl_multi_cleanup(multi)
            throw HTTPError.invalidRequest("pthread_create for a transfer thread failed: error \(created)")
        }
        inbox.withLock { $0.thread = thread }
    }

    /// Hands a transfer to the lane; `false` if the lane has stopped.
    func submit(_ transfer: Transfer) -> Bool {
        outstanding.add(1, ordering: .relaxed)
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.closed, !inbox.stopping else { return false }
            inbox.pending.append(transfer)
            return true
        }
        if accepted { wakeUnlessOnLane() } else { outstanding.subtract(1, ordering: .relaxed) }
        return accepted
    }

    /// Runs a job of a task that prefers this executor on the lane's thread. After the lane
    /// has stopped, jobs go to the global concurrent executor, so no task is ever stranded.
    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let queued = inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            inbox.jobs.append(unowned)
            return true
        }
        if queued {
            wakeUnlessOnLane()
        } else {
            globalConcurrentExecutor.enqueue(ExecutorJob(unowned))
        }
    }

    var isOnLaneThread: Bool {
        threadIdentity.load(ordering: .relaxed) == UInt(pthread_self())
    }

    /// The lane re-reads its inbox before it polls again, so work queued from its own thread
    /// needs no wake-up system call.
    private func wakeUnlessOnLane() {
        if !isOnLaneThread { wake() }
    }

    /// Interrupts `curl_multi_poll`, unless the lane has closed its multi handle.
    private func wake() {
        wakers.add(1, ordering: .sequentiallyConsistent)
        if !closed.load(ordering: .sequentiallyConsistent) { curl_multi_wakeup(multi) }
        wakers.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// Asks the lane to abort a transfer (it may already be done; then nothing happens).
    func cancel(_ transfer: Transfer) {
        transfer.cancelRequested.store(true, ordering: .sequentiallyConsistent)
        // The lane may be blocked in the transfer's handshake, waiting for a challenge answer.
        transfer.interruptChallengeWait()
        let queued = inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            inbox.cancellations.append(transfer)
            return true
        }
        if queued { wake() }
    }

    /// Asks the lane to continue a streamed transfer paused for want of room in its channel.
    func unpause(_ transfer: Transfer) {
        let queued = inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            inbox.unpauses.append(transfer)
            return true
        }
        if queued { wakeUnlessOnLane() }
    }

    /// Stops the thread: every transfer still pending or running fails with
    /// ``HTTPError/sessionInvalidated``. Joins the thread (so it has terminated when this
    /// returns) unless called on it; then the thread is detached and ends by itself.
    func stop() {
        let thread = inbox.withLock { inbox -> pthread_t? in
            guard !inbox.closed, !inbox.stopping else { return nil }
            inbox.stopping = true
            defer { inbox.thread = nil }
            return inbox.thread
        }
        guard let thread else { return }
        wake()
        if pthread_equal(thread, pthread_self()) != 0 {
            _ = pthread_detach(thread)
        } else {
            _ = pthread_join(thread, nil)
        }
    }

    /// Runs `body` counting it as a handler on this lane, so the engine sends new transfers
    /// elsewhere while it runs.
    func runningHandler<Result>(_ body: () -> Result) -> Result {
        handlersRunning.add(1, ordering: .sequentiallyConsistent)
        defer { handlersRunning.subtract(1, ordering: .sequentiallyConsistent) }
        return body()
    }

    var isInsideHandler: Bool { handlersRunning.load(ordering: .sequentiallyConsistent) > 0 }

    // MARK: - The thread

    private func run() {
        threadIdentity.store(UInt(pthread_self()), ordering: .relaxed)
        _ = CServerTrustShims_set_thread_name(name)
        let executor = asUnownedTaskExecutor()
        // Swapped with the inbox's arrays each round, so both keep their capacity.
        var jobs: [UnownedJob] = []
        var pending: [Transfer] = []
        var cancellations: [Transfer] = []
        var unpauses: [Transfer] = []
        while true {
            let stopping = inbox.withLock { inbox in
                swap(&jobs, &inbox.jobs)
                swap(&pending, &inbox.pending)
                swap(&cancellations, &inbox.cancellations)
                swap(&unpauses, &inbox.unpauses)
                return inbox.stopping
            }
            // Transfers first, so that while the batch's last job runs nothing else of this
            // round is waiting (the condition for running a transfer inline, below).
            for transfer in pending { start(transfer) }
            for transfer in cancellations { abort(transfer, with: .cancelled) }
            for transfer in unpauses {
                // CURLPAUSE_CONT (0): curl delivers the bytes it held back, from here.
                if let easy = active.first(where: { $0.transfer === transfer }) { _ = curl_easy_pause(easy.handle, 0) }
            }
            unpauses.removeAll(keepingCapacity: true)
            for (index, job) in jobs.enumerated() {
                runningLastJob = index == jobs.count - 1 && !stopping
                job.runSynchronously(on: executor)
            }
            runningLastJob = false
            jobs.removeAll(keepingCapacity: true)
            pending.removeAll(keepingCapacity: true)
            cancellations.removeAll(keepingCapacity: true)
            if stopping { break }
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            collectFinished()
            // Jobs or transfers queued from this thread (by the jobs above or by completions
            // resuming tasks that prefer this executor) are handled before sleeping.
            let more = inbox.withLock { !$0.jobs.isEmpty || !$0.pending.isEmpty || !$0.cancellations.isEmpty || !$0.unpauses.isEmpty || $0.stopping }
            if !more { _ = curl_multi_poll(multi, nil, 0, 1000, nil) }
        }
        shutDown()
    }

    // MARK: - Inline transfers

    /// Whether the job running now is the last of its round (nothing else of the round waits
    /// behind it).
    @exclusivity(unchecked) private var runningLastJob = false

    /// Whether a request issued by the job running now may run inline: the caller is this
    /// lane's last job of the round and nothing waits in the inbox, so driving curl from here
    /// until the transfer completes holds up no one.
    func mayRunInline() -> Bool {
        guard isOnLaneThread, runningLastJob else { return false }
        return inbox.withLock { $0.jobs.isEmpty && $0.pending.isEmpty && $0.cancellations.isEmpty && !$0.stopping && !$0.closed }
    }

    /// Runs `transfer` on the calling job, driving the multi handle (and every other transfer
    /// in it) exactly as the loop in ``run()`` would, but without suspending the task: no
    /// continuation, no job to enqueue and run, no executor switch on completion. This is
    /// what a keep-alive request from a task on ``HTTPSession/transferExecutor`` costs beyond
    /// curl itself. As soon as anything else needs the thread (a job, a transfer, a
    /// cancellation, the stop), it returns `false` with the transfer still in the multi
    /// handle; the caller then waits for it the usual way and the loop finishes it. Returns
    /// `true` once the transfer has finished (``Transfer/isFinished``).
    func runInline(_ transfer: Transfer) -> Bool {
        outstanding.add(1, ordering: .relaxed)
        transfer.runsInline = true
        start(transfer)
        while !transfer.isFinished {
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            collectFinished()
            if transfer.isFinished { break }
            let busy = inbox.withLock { !$0.jobs.isEmpty || !$0.pending.isEmpty || !$0.cancellations.isEmpty || $0.stopping }
            if busy {
                transfer.runsInline = false
                return false
            }
            _ = curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        transfer.runsInline = false
        return true
    }

    private func start(_ transfer: Transfer) {
        if transfer.cancelRequested.load(ordering: .sequentiallyConsistent) {
            finish(transfer, failing: .cancelled)
            return
        }
        let setsHost = transfer.options.settings.headers.setsHost
        guard let easy = (setsHost ? idleAfterCustomHost.popLast() : nil) ?? idle.popLast() ?? EasyHandle(lane: self, core: core) else {
            finish(transfer, failing: .invalidRequest("curl_easy_init failed"))
            return
        }
        if setsHost { easy.hasRunCustomHost = true }
        easy.begin(transfer)
        if case .stream(let channel) = transfer.spec.sink {
            channel.attach(resume: { [weak self] in self?.unpause(transfer) }, cancel: { [weak self] in self?.cancel(transfer) })
        }
        do throws(HTTPError) {
            transfer.bodyReader = try easy.configure(transfer.options)
        } catch {
            release(easy)
            finish(transfer, failing: error)
            return
        }
        let code = curl_multi_add_handle(multi, easy.handle)
        guard code == CURLM_OK else {
            release(easy)
            finish(transfer, failing: .invalidRequest("curl_multi_add_handle: \(String(cString: curl_multi_strerror(code)))"))
            return
        }
        active.append(easy)
    }

    private func collectFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                let easy = removeActive(where: { $0.handle == handle })
            else { continue }
            let code = message.pointee.data.result
            _ = curl_multi_remove_handle(multi, handle)
            guard let transfer = easy.transfer else {
                release(easy)
                continue
            }
            // Read before collectInfo closes the block: a header block still open at the end
            // never got the blank line that ends a header section (see outcome).
            let headerSectionUnfinished = easy.isHeaderBlockOpen
            easy.collectInfo(into: transfer)
            if code == CURLE_OK { core.resolveLoaded.store(true, ordering: .relaxed) }
            let errorText = code == CURLE_OK ? "" : easy.errorText
            release(easy)
            finish(
                transfer,
                failing: Self.failure(
                    code, errorText: errorText, transfer: transfer,
                    headerSectionUnfinished: headerSectionUnfinished))
        }
    }

    /// Maps curl's result to ours (`nil`: success): a recorded trust rejection or challenge
    /// failure wins over curl's generic code (60, 35); the rest is a ``TransportError`` by kind.
    private static func failure(
        _ code: CURLcode, errorText: String, transfer: Transfer,
        headerSectionUnfinished: Bool = false
    ) -> HTTPError? {
        if code == CURLE_OK && headerSectionUnfinished { return .transport(.closedInHeaderSection) }
        if code == CURLE_OK { return nil }
        if let failure = transfer.challengeFailure { return failure }
        if let decision = transfer.proxyTrustDecision, !decision.isTrusted { return .proxyTrustRejected(decision) }
        if let decision = transfer.trustDecision, !decision.isTrusted { return .serverTrustRejected(decision) }
        if let failure = transfer.callbackFailure { return failure }
        // A URL our parser took and curl's did not.
        if code == CURLE_URL_MALFORMAT { return .invalidURL(transfer.spec.target.url) }
        let error = TransportError(
            curl: code.rawValue, errorText: errorText, headerSectionUnfinished: headerSectionUnfinished,
            tunnelRefused: transfer.response.connectCode >= 300)
        return error.kind == .timedOut ? .timedOut(error) : .transport(error)
    }

    private func abort(_ transfer: Transfer, with error: HTTPError) {
        guard let easy = removeActive(where: { $0.transfer === transfer }) else { return }
        _ = curl_multi_remove_handle(multi, easy.handle)
        easy.collectInfo(into: transfer)
        release(easy)
        finish(transfer, failing: error)
    }

    /// Takes the first active handle that matches out of ``active`` (order does not matter).
    private func removeActive(where matches: (EasyHandle) -> Bool) -> EasyHandle? {
        guard let index = active.firstIndex(where: matches) else { return nil }
        active.swapAt(index, active.count - 1)
        return active.removeLast()
    }

    private func release(_ easy: EasyHandle) {
        easy.transfer = nil
        if easy.hasRunCustomHost { idleAfterCustomHost.append(easy) } else { idle.append(easy) }
    }

    private func finish(_ transfer: Transfer, failing failure: HTTPError?) {
        outstanding.subtract(1, ordering: .relaxed)
        transfer.finish(failing: failure)
    }

    private func shutDown() {
        let (leftovers, jobs) = inbox.withLock { inbox -> ([Transfer], [UnownedJob]) in
            inbox.closed = true
            let leftovers = (inbox.pending, inbox.jobs)
            inbox.pending = []
            inbox.jobs = []
            return leftovers
        }
        for transfer in leftovers { finish(transfer, failing: .sessionInvalidated) }
        for job in jobs { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        for easy in active {
            _ = curl_multi_remove_handle(multi, easy.handle)
            if let transfer = easy.transfer {
                easy.transfer = nil
                finish(transfer, failing: .sessionInvalidated)
            }
            idle.append(easy)
        }
        active = []
        closed.store(true, ordering: .sequentiallyConsistent)
        while wakers.load(ordering: .sequentiallyConsistent) > 0 { sched_yield() }
        // Closes the pool's connections; no handshake (and so no callback) can start now.
        curl_multi_cleanup(multi)
        idle = []  // curl_easy_cleanup for each, after the multi handle is gone
        idleAfterCustomHost = []
    }
}

/// Lanes started on demand, up to a maximum, and the rule for choosing one: the first lane
/// whose thread is not inside a challenge handler; when all are busy in handlers, a new lane,
/// up to the maximum; failing that, the least loaded.
final class LanePool: Sendable {
    private let lanes: Mutex<[TransferLane]>
    private let prefix: String
    private let maximum: Int
    private let core: SessionCore
    private let maximumConnectionsPerHost: Int

    init(prefix: String, first: TransferLane?, maximum: Int, core: SessionCore, maximumConnectionsPerHost: Int) {
        lanes = Mutex(first.map { [$0] } ?? [])
        self.prefix = prefix
        self.maximum = max(1, maximum)
        self.core = core
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
    }

    var count: Int { lanes.withLock { $0.count } }

    /// A lane by the rule above; ``HTTPError/sessionInvalidated`` once `invalidated` is set
    /// (checked under the lock, so no lane is started after ``stopAll()`` took them).
    func choose(unless invalidated: borrowing Atomic<Bool>) throws(HTTPError) -> TransferLane {
        let result: Result<TransferLane, HTTPError> = lanes.withLock { lanes in
            if let free = lanes.first(where: { !$0.isInsideHandler }) { return .success(free) }
            if invalidated.load(ordering: .sequentiallyConsistent) { return .failure(.sessionInvalidated) }
            if lanes.count < maximum {
                do throws(HTTPError) {
                    let lane = try TransferLane(
                        name: "\(prefix)\(lanes.count)", core: core, maximumConnectionsPerHost: maximumConnectionsPerHost)
                    lanes.append(lane)
                    return .success(lane)
                } catch {
                    return .failure(error)
                }
            }
            return .success(lanes.min { $0.outstanding.load(ordering: .relaxed) < $1.outstanding.load(ordering: .relaxed) }!)
        }
        return try result.get()
    }

    /// Stops every lane (their transfers fail with ``HTTPError/sessionInvalidated``).
    func stopAll() {
        let all = lanes.withLock { lanes -> [TransferLane] in
            defer { lanes = [] }
            return lanes
        }
        for lane in all { lane.stop() }
    }
}

/// The lanes of one session, in two pools that never share a connection.
///
/// - The session's lanes run the requests decided by the session (its decider and its
///   session-level handlers): ``ConnectionScope/session`` and ``ConnectionScope/fresh``.
///   Lane 0 serves them all in normal operation (one multi handle, one connection pool, and
///   requests from tasks on ``HTTPSession/transferExecutor`` run inline); another starts only
///   while lane 0 is inside a challenge handler.
/// - The isolated lanes, started with the first request that brings its own challenge
///   handler (``ConnectionScope/isolated(request:)``), run those requests only. libcurl joins
///   a transfer to any open connection of its multi handle that fits, HTTP/2 multiplexing
///   included (a request's `CURLOPT_FORBID_REUSE` acts only once it is done, and its
///   `CURLOPT_FRESH_CONNECT` keeps only itself from joining others); so a connection a
///   request's handler trusted, or presented a client certificate on, must not be in a pool
///   any request of the session's draws from. In the isolated pools every transfer opens its
///   own connection and closes it after, so none joins another. They take lanes by the same
///   rule, so one handler waiting for an answer holds up neither the session's requests nor
///   the other isolated ones.
///
/// ``ConnectionTrust/admission(of:for:generation:)`` checks the outcome before every request
/// is sent.
final class TransferEngine: Sendable {
    let core: SessionCore
    private let sessionLanes: LanePool
    private let isolatedLanes: LanePool
    private let invalidated = Atomic<Bool>(false)
    /// Whether isolated transfers go to their own lanes: always, but for the test that
    /// checks the admission check behind it (it turns this off to put a request with a handler
    /// in the session's pool).
    let separatesIsolatedTransfers = Atomic<Bool>(true)

    init(core: SessionCore, maximumLanes: Int, maximumConnectionsPerHost: Int) throws(HTTPError) {
        self.core = core
        let first = try TransferLane(name: "servertrust-0", core: core, maximumConnectionsPerHost: maximumConnectionsPerHost)
        primaryLane = first
        sessionLanes = LanePool(
            prefix: "servertrust-", first: first, maximum: maximumLanes, core: core, maximumConnectionsPerHost: maximumConnectionsPerHost)
        isolatedLanes = LanePool(
            prefix: "servertrust-i", first: nil, maximum: maximumLanes, core: core, maximumConnectionsPerHost: maximumConnectionsPerHost)
    }

    /// Lane 0, which serves every request under the session's decider unless it is inside a
    /// challenge handler.
    let primaryLane: TransferLane

    /// The number of lanes started so far, in both pools.
    var laneCount: Int { sessionLanes.count + isolatedLanes.count }

    func chooseLane(for scope: ConnectionScope) throws(HTTPError) -> TransferLane {
        if invalidated.load(ordering: .sequentiallyConsistent) { throw HTTPError.sessionInvalidated }
        if scope.isIsolated && separatesIsolatedTransfers.load(ordering: .relaxed) {
            return try isolatedLanes.choose(unless: invalidated)
        }
        // Lane 0 is always first in its pool, so when it is not inside a handler the pool's
        // rule picks it: answered without taking the lock.
        if !primaryLane.isInsideHandler { return primaryLane }
        return try sessionLanes.choose(unless: invalidated)
    }

    /// Runs one hop, honouring task cancellation. The returned transfer has finished: its
    /// ``Transfer/failure`` says how, its ``Transfer/response`` holds what was received.
    /// `nonisolated(nonsending)`: runs on the caller's executor (see ``RequestExecution/run()``).
    nonisolated(nonsending) func perform(_ spec: consuming TransferSpec) async -> Transfer {
        let transfer = Transfer(spec: spec, loadsResolveList: core.resolveList != nil && !core.resolveLoaded.load(ordering: .relaxed))
        if Task.isCancelled {
            transfer.finish(failing: .cancelled)
            return transfer
        }
        let lane: TransferLane
        do {
            lane = try chooseLane(for: transfer.scope)
        } catch {
            transfer.finish(failing: error)
            return transfer
        }
        await withTaskCancellationHandler {
            // Called from a job of the lane itself (a task on the transfer executor) with
            // nothing else waiting: run it right here (TransferLane.runInline). If the lane
            // needs the thread back first, the transfer stays in its multi handle and this
            // task waits for it below like any other (the lane finishes it only after this
            // job has suspended, so the continuation is set in time).
            // A streamed body is read by this very task after the head: never driven inline.
            if lane.mayRunInline(), !transfer.streamsBody {
                if lane.runInline(transfer) { return }
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    transfer.continuation = continuation
                }
                return
            }
            // Checked, not unsafe: the lane resumes it exactly once either way (Transfer.finish
            // clears it), but only the checked variant's atomic hand-over is visible to
            // ThreadSanitizer. With UnsafeContinuation, TSan (Swift 6.3.1, uninstrumented
            // concurrency runtime) sees no happens-before from the lane's writes to the
            // transfer to the resumed task's reads, and reports both as races. The checked
            // variant's cost is one small allocation per request.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                transfer.continuation = continuation
                if !lane.submit(transfer) {
                    transfer.continuation = nil
                    transfer.finish(failing: .sessionInvalidated)
                    continuation.resume()
                }
            }
        } onCancel: {
            lane.cancel(transfer)
        }
        return transfer
    }

    func shutDown() {
        invalidated.store(true, ordering: .sequentiallyConsistent)
        sessionLanes.stopAll()
        isolatedLanes.stopAll()
    }

    deinit { shutDown() }
}
