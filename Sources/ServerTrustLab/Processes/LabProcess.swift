internal import CServerTrustShims
internal import Foundation
internal import Glibc
internal import Synchronization

/// What a child process run by ``LabProcess/run(_:_:input:environment:)`` left behind.
package struct LabProcessResult: Sendable, CustomStringConvertible {
    /// The exit status (or the signal number, for a process killed by a signal).
    package let status: Int32
    /// Everything it wrote to standard output.
    package let stdout: [UInt8]
    /// Everything it wrote to standard error.
    package let stderr: [UInt8]
    /// From its start to its exit: the time a test may bound. The wait for a slot
    /// (``LabProcess/slots``) before the start is not in it.
    package let elapsed: Duration

    /// Standard output as UTF-8 text (invalid bytes replaced).
    package var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    /// Standard error as UTF-8 text (invalid bytes replaced).
    package var stderrText: String { String(decoding: stderr, as: UTF8.self) }

    /// The status, the duration and both outputs, for a test's message.
    package var description: String { "exit \(status) after \(elapsed): \(stdoutText)\(stderrText)" }
}

/// Runs the command-line programs that judge the Lab and the project from outside (curl,
/// openssl, the `servertrust` binary) for async tests.
///
/// Two things matter when many tests of one process spawn clients at once:
/// - **No pool thread waits.** The process is waited for on a thread of its own. The
///   cooperative pool that runs every test has only as many threads as cores (2 on CI); a test
///   blocked in `waitUntilExit` takes one of them away from all the others, and timing-bound
///   tests elsewhere then measure the harness instead of the code.
/// - **Bounded concurrency.** At most ``slots`` children run at once, the others wait their
///   turn (asynchronously). Without a bound, a hundred clients started together share two cores
///   and each takes many times its own duration, which breaks every bound on it.
package enum LabProcess {
    /// How many children may run at once: one per core.
    package static let slots = max(1, ProcessInfo.processInfo.activeProcessorCount)

    private static let gate = Gate(slots: slots)

    /// Runs `executable` with `arguments`, feeding it `input` on standard input (none: it reads
    /// end of file), with `environment` added to this process's own.
    ///
    /// - Returns: Its exit status, outputs and duration.
    /// - Throws: The error of `Process.run()` when the program cannot be started (no such file,
    ///   not executable).
    package static func run(
        _ executable: String, _ arguments: [String], input: [UInt8]? = nil, environment: [String: String] = [:]
    ) async throws -> LabProcessResult {
        await gate.enter()
        defer { gate.leave() }
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try runBlocking(executable, arguments, input: input, environment: environment) })
            }
        }
    }

    private static func runBlocking(
        _ executable: String, _ arguments: [String], input: [UInt8]?, environment: [String: String]
    ) throws -> LabProcessResult {
        // Close-on-exec pipes: only the child that dup2s them gets them (``LabChildProcess``).
        let output = try LabPipe()
        let errors = try LabPipe()
        let stdin = try LabPipe()
        let started = ContinuousClock.now
        let child = try LabChildProcess(
            executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            stdin: stdin.read.descriptor, stdout: output.write.descriptor, stderr: errors.write.descriptor)
        output.write.close()
        errors.write.close()
        stdin.read.close()
        // Both pipes are drained at once, and the input written from a third thread: read one
        // after the other, a child that fills the second pipe (64 KiB) before closing the
        // first, or that writes before it has read its input, would never exit.
        let errorBytes = Mutex<[UInt8]>([])
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread {
            let bytes = errors.read.readToEnd()
            errorBytes.withLock { $0 = bytes }
            done.leave()
        }
        done.enter()
        Thread.detachNewThread {
            // A child that exits without reading its input closes the pipe: EPIPE on this
            // thread (SIGPIPE blocked on it), ignored.
            labPrepareThread(named: "lab-stdin")
            if let input { stdin.write.writeAll(input) }
            stdin.write.close()
            done.leave()
        }
        let outputBytes = output.read.readToEnd()
        done.wait()
        let status = child.waitUntilExit()
        return LabProcessResult(status: status, stdout: outputBytes, stderr: errorBytes.withLock { $0 }, elapsed: ContinuousClock.now - started)
    }

    /// A counting semaphore whose waiters are suspended tasks, not blocked threads.
    private final class Gate: Sendable {
        private struct State {
            var free: Int
            var waiters: [CheckedContinuation<Void, Never>] = []
        }
        private let state: Mutex<State>

        init(slots: Int) { state = Mutex(State(free: slots)) }

        func enter() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let entered = state.withLock { state -> Bool in
                    guard state.free > 0 else {
                        state.waiters.append(continuation)
                        return false
                    }
                    state.free -= 1
                    return true
                }
                if entered { continuation.resume() }
            }
        }

        func leave() {
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard !state.waiters.isEmpty else {
                    state.free += 1
                    return nil
                }
                return state.waiters.removeFirst()
            }
            next?.resume()
        }
    }
}

/// A pipe whose two ends are close-on-exec (`pipe2` with `O_CLOEXEC`): a child gets an end only by
/// ``LabChildProcess``'s `dup2`, never by inheritance.
struct LabPipe: Sendable {
    let read: LabSocket
    let write: LabSocket

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard CServerTrustShims_pipe_cloexec(&ends) == 0 else { throw LabError.invalid("pipe2", labErrnoText("pipe2")) }
        read = LabSocket(adopting: ends[0])
        write = LabSocket(adopting: ends[1])
    }
}

extension LabSocket {
    /// Reads until end of file (or an error), blocking.
    func readToEnd() -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes += buffer[0..<count]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return bytes
            }
        }
    }

    /// Writes all of `bytes`, blocking; stops at the first error (EPIPE: the reader is gone).
    func writeAll(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count > 0 {
                offset += count
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
