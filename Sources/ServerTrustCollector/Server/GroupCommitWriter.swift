import Dispatch
import Foundation
import Synchronization

/// The one thread that writes reports: it takes every report waiting, stores the batch in one
/// transaction, and only then wakes the requests that carried them, which acknowledge. So a
/// report is acknowledged only once durable, and one commit (one fsync) serves a whole batch
/// of concurrent posts (group commit, as databases do for their own log).
///
/// A batch that fails is refused to every request in it (503, nothing acknowledged); the next
/// batch tries again (a PostgreSQL connection is re-opened by then). Between batches, at most
/// once an hour, the same thread applies retention. ``stop()`` refuses new reports, writes the
/// ones already queued, and ends the thread.
package final class GroupCommitWriter: Sendable {
    /// A report waiting for its commit.
    private final class Ticket: Sendable {
        let report: IncomingReport
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Void, StoreError>?>(nil)

        init(_ report: IncomingReport) { self.report = report }
    }

    private struct State {
        var queue: [Ticket] = []
        var stopping = false
        var stopped = false
        var committedBatches = 0
        var committedReports = 0
    }

    private let store: ReportStore
    private let maximumBatch: Int
    private let retention: (@Sendable () -> Void)?
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the writer thread.
    /// - Parameters:
    ///   - store: Where reports go.
    ///   - maximumBatch: The most reports in one transaction.
    ///   - retention: Run on the writer thread every `retentionInterval` seconds.
    package init(store: ReportStore, maximumBatch: Int = 512, retentionInterval: Double = 3600, retention: (@Sendable () -> Void)? = nil) {
        self.store = store
        self.maximumBatch = max(1, maximumBatch)
        self.retention = retention
        let thread = Thread { [self] in run(retentionInterval: retentionInterval) }
        thread.name = "collector-writer"
        thread.start()
    }

    /// Queues `report` and waits until it is durable or refused.
    package func submit(_ report: IncomingReport) -> Result<Void, StoreError> {
        let ticket = Ticket(report)
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.queue.append(ticket)
            return true
        }
        guard accepted else { return .failure(StoreError("store report", "the collector is shutting down")) }
        wake.signal()
        ticket.done.wait()
        return ticket.outcome.withLock { $0 } ?? .failure(StoreError("store report", "no outcome"))
    }

    /// Batches and reports committed so far.
    package var committed: (batches: Int, reports: Int) { state.withLock { ($0.committedBatches, $0.committedReports) } }

    /// Refuses new reports, writes those queued, and waits for the thread to end.
    package func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        wake.signal()
        finished.wait()
    }

    private func run(retentionInterval: Double) {
        var lastRetention = Date.distantPast
        while true {
            _ = wake.wait(timeout: .now() + .seconds(30))
            if let retention, Date().timeIntervalSince(lastRetention) >= retentionInterval {
                retention()
                lastRetention = Date()
            }
            while true {
                let (batch, stopping) = state.withLock { state -> ([Ticket], Bool) in
                    let count = min(maximumBatch, state.queue.count)
                    let batch = Array(state.queue.prefix(count))
                    state.queue.removeFirst(count)
                    return (batch, state.stopping)
                }
                if batch.isEmpty {
                    if stopping {
                        state.withLock { $0.stopped = true }
                        finished.signal()
                        return
                    }
                    break
                }
                let outcome: Result<Void, StoreError>
                do {
                    try store.record(batch.map(\.report))
                    outcome = .success(())
                    state.withLock { state in
                        state.committedBatches += 1
                        state.committedReports += batch.count
                    }
                } catch {
                    outcome = .failure(error)
                }
                for ticket in batch {
                    ticket.outcome.withLock { $0 = outcome }
                    ticket.done.signal()
                }
            }
        }
    }
}
