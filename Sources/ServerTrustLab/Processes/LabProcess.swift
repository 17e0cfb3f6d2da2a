internal import Foundation
internal import Synchronization

/// What a child process run by ``LabProcess/run(_:_:input:environment:)`` left behind.
public struct LabProcessResult: Sendable, CustomStringConvertible {
    /// The exit status (or the signal number, for a process killed by a signal).
    public let status: Int32
    /// Everything it wrote to standard output.
    public let stdout: [UInt8]
    /// Everything it wrote to standard error.
    public let stderr: [UInt8]
    /// From its start to its exit: the time a test may bound. The wait for a slot
    /// (``LabProcess/slots``) before the start is not in it.
    public let elapsed: Duration

    /// Standard output as UTF-8 text (invalid bytes replaced).
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    /// Standard error as UTF-8 text (invalid bytes replaced).
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }

    /// The status, the duration and both outputs, for a test's message.
    public var description: String { "exit \(status) after \(elapsed): \(stdoutText)\(stderrText)" }
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
public enum LabProcess {
    /// How many children may run at once: one per core.
    public static let slots = max(1, ProcessInfo.processInfo.activeProcessorCount)

    private static let gate = Gate(slots: slots)

    /// Runs `executable` with `arguments`, feeding it `input` on standard input (none: it reads
    /// end of file), with `environment` added to this process's own.
    ///
    /// - Returns: Its exit status, outputs and duration.
    /// - Throws: The error of `Process.run()` when the program cannot be started (no such file,
    ///   not executable).
    public static func run(
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe()
        let errors = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        let started = ContinuousClock.now
        try process.run()
        // Both pipes are drained at once, and the input written from a third thread: read one
        // after the other, a child that fills the second pipe (64 KiB) before closing the
        // first, or that writes before it has read its input, would never exit.
        let errorData = Mutex(Data())
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            errorData.withLock { $0 = data }
            done.leave()
        }
        if let input {
            done.enter()
            Thread.detachNewThread {
                // A child that exits without reading its input closes the pipe: EPIPE, ignored.
                try? stdin.fileHandleForWriting.write(contentsOf: Data(input))
                try? stdin.fileHandleForWriting.close()
                done.leave()
            }
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        done.wait()
        process.waitUntilExit()
        let elapsed = ContinuousClock.now - started
        return LabProcessResult(
            status: process.terminationStatus, stdout: Array(outputData), stderr: Array(errorData.withLock { $0 }), elapsed: elapsed)
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
