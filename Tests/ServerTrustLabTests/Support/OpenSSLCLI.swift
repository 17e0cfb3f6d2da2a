import Foundation
import ServerTrustLab

/// The result of one `openssl` invocation: exit status and combined stdout+stderr.
struct CLIResult: CustomStringConvertible {
    var status: Int32
    var output: String
    /// From the program's start to its exit (where measured).
    var elapsed: Duration = .zero
    var ok: Bool { status == 0 }
    var description: String { "exit \(status): \(output)" }
}

/// Runs the system `openssl` binary, the independent judge of what the Lab generates.
enum OpenSSLCLI {
    static let path = "/usr/bin/openssl"

    /// Runs `openssl args…`. The output is stdout followed by stderr: stderr goes to a file
    /// rather than the same pipe, so unbuffered diagnostics cannot split a PEM block in stdout.
    static func run(_ arguments: [String]) throws -> CLIResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        let errorPath = NSTemporaryDirectory() + "openssl-stderr-" + UUID().uuidString
        guard FileManager.default.createFile(atPath: errorPath, contents: nil),
            let errorFile = FileHandle(forWritingAtPath: errorPath)
        else {
            throw CocoaError(.fileWriteUnknown)
        }
        defer {
            try? errorFile.close()
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        process.standardOutput = pipe
        process.standardError = errorFile
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read before waiting so a large output cannot fill the pipe and deadlock.
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errors = FileManager.default.contents(atPath: errorPath) ?? Data()
        return CLIResult(
            status: process.terminationStatus,
            output: String(decoding: data, as: UTF8.self) + String(decoding: errors, as: UTF8.self))
    }

    /// `openssl x509 -inform DER -noout -text` for a certificate.
    static func text(_ certificate: LabCertificate, in directory: TemporaryDirectory) throws -> CLIResult {
        try text(der: certificate.der, in: directory)
    }

    /// `openssl x509 -inform DER -noout -text` for raw DER.
    static func text(der: [UInt8], in directory: TemporaryDirectory) throws -> CLIResult {
        let path = try directory.write(der, named: "cert-\(UUID().uuidString).der")
        return try run(["x509", "-inform", "DER", "-in", path, "-noout", "-text"])
    }

    /// `openssl asn1parse -inform DER` for raw DER.
    static func asn1parse(_ der: [UInt8], in directory: TemporaryDirectory) throws -> CLIResult {
        let path = try directory.write(der, named: "asn1-\(UUID().uuidString).der")
        return try run(["asn1parse", "-inform", "DER", "-in", path])
    }

    /// `openssl verify` of `leaf` against `root` with optional untrusted intermediates, at the Lab's reference time.
    static func verify(
        leaf: LabCertificate,
        root: LabCertificate,
        untrusted: [LabCertificate] = [],
        at time: Int64 = LabClock.reference,
        extra: [String] = [],
        in directory: TemporaryDirectory
    ) throws -> CLIResult {
        let id = UUID().uuidString
        let rootPath = try directory.write(root.pem, named: "root-\(id).pem")
        let leafPath = try directory.write(leaf.pem, named: "leaf-\(id).pem")
        var arguments = ["verify", "-CAfile", rootPath, "-attime", String(time)] + extra
        if !untrusted.isEmpty {
            arguments += ["-untrusted", try directory.write(LabPEM.bundle(untrusted), named: "untrusted-\(id).pem")]
        }
        return try run(arguments + [leafPath])
    }
}

/// A unique directory under the system temporary directory, removed when released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "servertrustlab-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes bytes to `path/name` and returns the full path.
    func write(_ bytes: [UInt8], named name: String) throws -> String {
        try LabFiles.write(bytes, to: path + "/" + name)
    }

    /// Writes text to `path/name` and returns the full path.
    func write(_ text: String, named name: String) throws -> String {
        try LabFiles.write(text, to: path + "/" + name)
    }
}

/// Hex rendering used to compare with `openssl` output.
func hex(_ bytes: [UInt8], uppercase: Bool = true, separator: String = "") -> String {
    bytes.map { byte in
        let digits = String(byte, radix: 16, uppercase: uppercase)
        return digits.count == 1 ? "0" + digits : digits
    }.joined(separator: separator)
}

/// Reading files that `openssl` wrote.
enum FileBytes {
    static func read(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { Array($0) }
    }
}
