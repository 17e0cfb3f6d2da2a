import Foundation
import ServerTrustLab

/// Runs the built `servertrust` binary, as a user would, and captures its output.
enum CLIRunner {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        /// From the program's start to its exit.
        let elapsed: Duration
    }

    /// The binary sits beside the test bundle in SwiftPM's build folder.
    static var binary: String {
        var url = Bundle.main.bundleURL
        while url.pathComponents.count > 1 {
            let candidate = url.appendingPathComponent("servertrust").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            url.deleteLastPathComponent()
        }
        return ".build/debug/servertrust"
    }

    /// Runs `servertrust` (or another program, such as curl beside it) with `arguments` and
    /// `input` on stdin (none: end of file), through ``LabProcess``: waited for off the cooperative pool, a bounded number at once.
    static func run(
        _ arguments: [String], input: String? = nil, environment: [String: String] = [:], executable: String? = nil
    ) async throws -> Result {
        let run = try await LabProcess.run(executable ?? binary, arguments, input: input.map { Array($0.utf8) }, environment: environment)
        return Result(status: run.status, stdout: run.stdoutText, stderr: run.stderrText, elapsed: run.elapsed)
    }

    /// Runs `servertrust` with stdout discarded, sampling its peak resident memory (the
    /// kernel's `VmHWM`, a high-water mark, so a sample taken late still sees the peak) until
    /// it exits. Async, sleeping between samples: a long run must not hold one of the test
    /// process's few cooperative threads.
    static func runMeasuringPeak(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, stderr: String, peakKiB: Int) {
        let errorPath = try temporaryDirectory() + "/stderr"
        defer { try? FileManager.default.removeItem(atPath: (errorPath as NSString).deletingLastPathComponent) }
        // LabChildProcess, as for every long-lived child: it inherits no other test's descriptors.
        let child = try LabChildProcess(binary, arguments, adding: environment, stdoutPath: nil, stderrPath: errorPath)
        var peak = 0
        let statusPath = "/proc/\(child.pid)/status"
        while child.isRunning {
            if let status = try? String(contentsOfFile: statusPath, encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
            {
                peak = max(peak, kib)
            }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        let status = child.waitUntilExit()
        return (status, String(decoding: FileManager.default.contents(atPath: errorPath) ?? Data(), as: UTF8.self), peak)
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "servertrust-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// The repository root: the nearest folder above `file` that holds `Package.swift`, so a test
/// finds the repository's files wherever in the test folders it lives.
func repositoryRoot(_ file: String = #filePath) -> URL {
    var folder = URL(fileURLWithPath: file).deletingLastPathComponent()
    while folder.path != "/", !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
        folder = folder.deletingLastPathComponent()
    }
    return folder
}
