internal import CServerTrustShims
internal import Foundation
internal import Glibc
internal import Synchronization

/// A child process of the test process that inherits nothing but its three standard
/// descriptors, and that this object alone reaps.
///
/// Foundation's `Process` on Linux closes the parent's descriptors in the child by a list made
/// just before it spawns, so a descriptor another thread opens meanwhile leaks into the child.
/// When that descriptor is the end of another `Process`'s termination socket and the child is
/// long-lived (an nginx kept for a whole test), the other process's exit is never noticed and
/// `waitUntilExit()` never returns: seen here, with two such waits holding both threads of the
/// cooperative pool and the whole test run stalled. A pipe leaked so keeps its reader from
/// ever seeing the end of its output. This spawner closes every other descriptor in the child
/// at spawn time (glibc's `posix_spawn_file_actions_addclosefrom_np`), and the descriptors it
/// is given should be close-on-exec, so that no child spawned elsewhere inherits them either.
package final class LabChildProcess: Sendable {
    /// The process id.
    package let pid: Int32
    /// What it was started as, for messages.
    package let name: String
    /// Its exit status once reaped (the signal number when a signal ended it).
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments` and `environment` (whole: nothing is inherited
    /// but what it holds), with `stdin`, `stdout` and `stderr` as its descriptors 0, 1 and 2.
    ///
    /// - Throws: ``LabError`` naming the program when it cannot be started (no such file, not
    ///   executable).
    package init(
        _ executable: String, _ arguments: [String], environment: [String: String], stdin: Int32, stdout: Int32, stderr: Int32
    ) throws {
        name = ([executable] + arguments).joined(separator: " ")
        var arguments = ([executable] + arguments).map { strdup($0) }
        var environment = environment.map { strdup("\($0.key)=\($0.value)") }
        defer {
            for pointer in arguments { free(pointer) }
            for pointer in environment { free(pointer) }
        }
        arguments.append(nil)
        environment.append(nil)
        var pid: pid_t = 0
        let status = CServerTrustShims_spawn(&pid, executable, arguments, environment, stdin, stdout, stderr)
        guard status == 0 else {
            throw LabError.invalid("spawn \(executable)", String(cString: strerror(status)) + " (errno \(status))")
        }
        self.pid = pid
    }

    /// Starts `executable` with `arguments`, `environment` added to this process's own, stdin
    /// from `/dev/null` and its outputs written to files (truncated first; `nil` discards one;
    /// the same path for both interleaves them in one file).
    ///
    /// - Throws: ``LabError`` naming the file that cannot be opened or the program that cannot
    ///   be started.
    package convenience init(
        _ executable: String, _ arguments: [String], adding environment: [String: String] = [:], stdoutPath: String?, stderrPath: String?
    ) throws {
        var opened: [String: Int32] = [:]
        defer { for descriptor in opened.values { _ = close(descriptor) } }
        func descriptor(_ path: String?, _ flags: Int32) throws -> Int32 {
            // /dev/null is opened once, for reading and writing, whoever asks first.
            let (path, flags) = path.map { ($0, flags) } ?? ("/dev/null", O_RDWR)
            if let known = opened[path] { return known }
            let descriptor = open(path, flags | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw LabError.invalid("open \(path)", labErrnoText("open")) }
            opened[path] = descriptor
            return descriptor
        }
        let output = O_WRONLY | O_CREAT | O_TRUNC
        let stdout = try descriptor(stdoutPath, output)
        let stderr = try descriptor(stderrPath, output)
        let stdin = try descriptor(nil, O_RDWR)
        try self.init(
            executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            stdin: stdin, stdout: stdout, stderr: stderr)
    }

    /// Reaps the child if it has exited (`waitpid` with `WNOHANG`); its status, or `nil`.
    private func reap() -> Int32? {
        exitStatus.withLock { known in
            if let known { return known }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            // <sys/wait.h>: the low 7 bits are the terminating signal, 0 for a normal exit
            // whose status is the next byte.
            known = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : raw & 0x7F
            return known
        }
    }

    /// Whether it has not exited yet.
    package var isRunning: Bool { reap() == nil }

    /// Blocks until it exits; its exit status (the signal number when a signal ended it).
    @discardableResult
    package func waitUntilExit() -> Int32 {
        while true {
            if let status = reap() { return status }
            usleep(5_000)
        }
    }

    /// Sends SIGTERM, then SIGKILL after `grace`, and reaps it; its exit status.
    @discardableResult
    package func stop(grace: Duration = .seconds(10)) -> Int32 {
        if let status = reap() { return status }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + grace
        while ContinuousClock.now < deadline {
            if let status = reap() { return status }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        return waitUntilExit()
    }

    /// A child dropped while running is killed and reaped, so no test leaves one behind.
    deinit {
        if reap() == nil {
            kill(pid, SIGKILL)
            waitUntilExit()
        }
    }
}
