import Foundation

/// A task executor on a thread of its own that a test can hold: while held it runs no job, as
/// a cooperative pool whose threads are all busy runs none. Tasks that prefer it
/// (`Task(executorPreference:)`) then have no thread to resume on, which shows whether the
/// library's reaction to an event (a cancellation, say) needs the waiting task to run.
final class HoldableExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: every field is read and written with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var held = false
    private var running = false
    private var stopped = false

    init() {
        Thread.detachNewThread { [self] in run() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.broadcast()
        }
    }

    /// Returns once the thread is between jobs and will start no other until ``release()``.
    func hold() {
        condition.withLock {
            held = true
            while running { condition.wait() }
        }
    }

    /// Lets the thread run jobs again.
    func release() {
        condition.withLock {
            held = false
            condition.broadcast()
        }
    }

    /// Ends the thread once its queue is empty (release it first if held).
    func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }

    private func run() {
        while true {
            let job: UnownedJob? = condition.withLock {
                while (jobs.isEmpty || held) && !(stopped && jobs.isEmpty) { condition.wait() }
                if jobs.isEmpty { return nil }
                running = true
                return jobs.removeFirst()
            }
            guard let job else { return }
            job.runSynchronously(on: asUnownedTaskExecutor())
            condition.withLock {
                running = false
                condition.broadcast()
            }
        }
    }
}
