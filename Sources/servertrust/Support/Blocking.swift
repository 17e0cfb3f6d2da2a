import Foundation
import Synchronization

/// The bridge from the synchronous commands to the async library.
enum Blocking {
    /// Runs async work from the synchronous command line.
    ///
    /// Returns only once the task has let go of everything it captured (`body`, and through
    /// it the session), not just once the value is in: otherwise the command could return and
    /// the process exit while the task's thread is still releasing the session and the
    /// response, and LeakSanitizer, stopping every thread at exit, reported those objects as
    /// leaked now and then (scripts/sanitizers.sh, `get` under ASan, about 1 run in 15).
    static func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let box = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        do {
            let sentinel = ReleaseSentinel(released)
            Task {
                box.withLock { [value = await body()] in $0 = value }
                withExtendedLifetime(sentinel) {}
                done.signal()
            }
        }
        done.wait()
        // The sentinel goes with the task's closure context, after its frame is gone.
        _ = released.wait(timeout: .now() + 5)
        return box.withLock { $0! }
    }
}

/// Signals a semaphore when the last reference to it goes: captured by a task's closure, it
/// tells a waiting thread that the task no longer holds anything it captured.
final class ReleaseSentinel: Sendable {
    private let released: DispatchSemaphore
    init(_ released: DispatchSemaphore) { self.released = released }
    deinit { released.signal() }
}
