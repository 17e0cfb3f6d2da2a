import Foundation

/// Runs the built `servertrust` binary, as a user would, and captures its output.
enum CLIRunner {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
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

    /// Runs `servertrust` (or another program, such as curl beside it) with `arguments`.
    static func run(_ arguments: [String], environment: [String: String] = [:], executable: String? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable ?? binary)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "servertrust-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
