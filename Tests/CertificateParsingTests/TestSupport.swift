import CertificateParsing
import Foundation
import Testing

// Shared helpers for the CertificateParsing tests: a tiny DER builder (independent of the
// reader under test), a hand-built certificate template, and an `openssl` runner.

// MARK: - DER builder

/// Builds DER by hand so the reader is tested against encodings it did not produce.
enum DERBuilder {
    /// A definite, minimal length.
    static func length(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        var bytes: [UInt8] = []
        var v = n
        while v > 0 {
            bytes.insert(UInt8(v & 0xFF), at: 0)
            v >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    /// Identifier octet, minimal length, content.
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag] + length(content.count) + content }

    static func seq(_ parts: [UInt8]...) -> [UInt8] { tlv(0x30, parts.flatMap { $0 }) }
    static func seq(list parts: [[UInt8]]) -> [UInt8] { tlv(0x30, parts.flatMap { $0 }) }
    static func set(_ parts: [UInt8]...) -> [UInt8] { tlv(0x31, parts.flatMap { $0 }) }

    /// `[n] EXPLICIT` (constructed context tag around the parts).
    static func explicit(_ n: UInt8, _ parts: [UInt8]...) -> [UInt8] { tlv(0xA0 | n, parts.flatMap { $0 }) }
    /// `[n] IMPLICIT` primitive.
    static func implicit(_ n: UInt8, _ content: [UInt8]) -> [UInt8] { tlv(0x80 | n, content) }

    /// Minimal two's-complement INTEGER.
    static func int(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var v = value
        repeat {
            bytes.insert(UInt8(truncatingIfNeeded: v), at: 0)
            v >>= 8
        } while !(v == 0 && bytes[0] & 0x80 == 0) && !(v == -1 && bytes[0] & 0x80 != 0)
        return tlv(0x02, bytes)
    }
    /// INTEGER with the given content octets, as is.
    static func int(bytes: [UInt8]) -> [UInt8] { tlv(0x02, bytes) }

    static func bool(_ value: Bool) -> [UInt8] { tlv(0x01, [value ? 0xFF : 0x00]) }
    static let null: [UInt8] = [0x05, 0x00]
    static func octet(_ content: [UInt8]) -> [UInt8] { tlv(0x04, content) }
    static func bits(_ content: [UInt8], unused: UInt8 = 0) -> [UInt8] { tlv(0x03, [unused] + content) }
    static func utc(_ text: String) -> [UInt8] { tlv(0x17, Array(text.utf8)) }
    static func generalized(_ text: String) -> [UInt8] { tlv(0x18, Array(text.utf8)) }
    static func printable(_ text: String) -> [UInt8] { tlv(0x13, Array(text.utf8)) }
    static func utf8(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    static func ia5(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8)) }

    /// OBJECT IDENTIFIER from dotted text, encoded here (not by `ASN1ObjectIdentifier`).
    static func oid(_ dotted: String) -> [UInt8] { tlv(0x06, oidContent(dotted)) }

    static func oidContent(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").compactMap { UInt64($0) }
        var out: [UInt8] = []
        for arc in [arcs[0] * 40 + arcs[1]] + arcs.dropFirst(2) {
            var chunk: [UInt8] = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                chunk.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            out += chunk
        }
        return out
    }

    /// A Name of single-attribute RDNs; `C` is a PrintableString, the rest UTF8String.
    static func name(_ attributes: [(String, String)]) -> [UInt8] {
        seq(
            list: attributes.map { type, value in
                set(seq(oid(type), type == "2.5.4.6" ? printable(value) : utf8(value)))
            })
    }

    /// An Extension.
    static func ext(_ oid: String, critical: Bool? = nil, _ value: [UInt8]) -> [UInt8] {
        seq(self.oid(oid), critical.map(bool) ?? [], octet(value))
    }

    /// `count` nested SEQUENCEs around `innermost`, built outside-in without quadratic copying.
    static func nested(_ count: Int, innermost: [UInt8] = []) -> [UInt8] {
        var sizes = [Int](repeating: 0, count: count)  // content size of each level, outermost first
        var inner = innermost.count
        for level in stride(from: count - 1, through: 0, by: -1) {
            sizes[level] = inner
            inner = 1 + length(inner).count + inner
        }
        var out: [UInt8] = []
        out.reserveCapacity(inner)
        for size in sizes { out += [0x30] + length(size) }
        return out + innermost
    }
}

// MARK: - Hand-built certificate

/// A structurally valid v3 certificate assembled from parts, so tests can mutate one field.
/// The signature is not valid; parsing does not check it.
struct CertificateTemplate {
    typealias B = DERBuilder

    static let ed25519 = "1.3.101.112"

    var version: [UInt8]? = B.explicit(0, B.int(2))
    var serial: [UInt8] = B.int(bytes: [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF])
    var tbsSignature: [UInt8] = B.seq(B.oid(ed25519))
    /// `nil` means "the same as ``tbsSignature``".
    var outerSignature: [UInt8]?
    var issuer: [UInt8] = B.name([("2.5.4.6", "US"), ("2.5.4.10", "Test Org"), ("2.5.4.3", "Test CA")])
    var notBefore: [UInt8] = B.utc("250101000000Z")
    var notAfter: [UInt8] = B.utc("350101000000Z")
    var subject: [UInt8] = B.name([("2.5.4.6", "US"), ("2.5.4.10", "Test Org"), ("2.5.4.3", "leaf.example")])
    var spki: [UInt8] = B.seq(B.seq(B.oid(ed25519)), B.bits([UInt8](repeating: 0x11, count: 32)))
    var issuerUniqueID: [UInt8]?
    var subjectUniqueID: [UInt8]?
    /// `nil` omits the `[3]` field entirely.
    var extensions: [[UInt8]]? = CertificateTemplate.defaultExtensions
    var extraTBSField: [UInt8]?
    var signatureValue: [UInt8] = B.bits([UInt8](repeating: 0x5A, count: 64))

    static let defaultExtensions: [[UInt8]] = [
        B.ext("2.5.29.19", critical: true, B.seq(B.bool(true), B.int(0))),
        // keyCertSign (5) and cRLSign (6): 0000 0110, one unused bit.
        B.ext("2.5.29.15", critical: true, B.bits([0x06], unused: 1)),
        B.ext("2.5.29.14", B.octet([UInt8](repeating: 0xAB, count: 20))),
        B.ext("2.5.29.17", B.seq(B.implicit(2, Array("leaf.example".utf8)), B.implicit(7, [192, 0, 2, 1]))),
        B.ext("2.5.29.37", B.seq(B.oid("1.3.6.1.5.5.7.3.1"))),
    ]

    var tbs: [UInt8] {
        var parts: [[UInt8]] = []
        if let version { parts.append(version) }
        parts += [serial, tbsSignature, issuer, B.seq(notBefore, notAfter), subject, spki]
        if let issuerUniqueID { parts.append(issuerUniqueID) }
        if let subjectUniqueID { parts.append(subjectUniqueID) }
        if let extensions { parts.append(B.explicit(3, B.seq(list: extensions))) }
        if let extraTBSField { parts.append(extraTBSField) }
        return B.seq(list: parts)
    }

    var der: [UInt8] { B.seq(tbs, outerSignature ?? tbsSignature, signatureValue) }

    /// The template with one change.
    func with(_ change: (inout CertificateTemplate) -> Void) -> CertificateTemplate {
        var copy = self
        change(&copy)
        return copy
    }
}

// MARK: - openssl

/// The result of running a program: exit status and output.
struct ProcessResult: CustomStringConvertible {
    var status: Int32
    var stdout: [UInt8]
    var stderr: String
    var ok: Bool { status == 0 }
    var text: String { String(decoding: stdout, as: UTF8.self) }
    var description: String { "exit \(status): \(text)\(stderr)" }
}

struct ProcessFailure: Error, CustomStringConvertible {
    var description: String
}

enum OpenSSL {
    static let path = "/usr/bin/openssl"

    /// Runs `executable arguments…` and collects its output.
    static func execute(_ executable: String, _ arguments: [String], input: [UInt8]? = nil) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let inPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inPipe
        try process.run()
        if let input {
            try inPipe.fileHandleForWriting.write(contentsOf: Data(input))
            try inPipe.fileHandleForWriting.close()
        }
        // Drain stderr concurrently so neither pipe can fill up and block the child.
        let errorBox = ErrorBox()
        let errorDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errorBox.data = err.fileHandleForReading.readDataToEndOfFile()
            errorDone.signal()
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        errorDone.wait()
        process.waitUntilExit()
        return ProcessResult(
            status: process.terminationStatus, stdout: [UInt8](data),
            stderr: String(decoding: errorBox.data, as: UTF8.self))
    }

    /// Runs `openssl arguments…`; throws with the output when it fails.
    @discardableResult
    static func run(_ arguments: [String], input: [UInt8]? = nil) throws -> ProcessResult {
        let result = try execute(path, arguments, input: input)
        guard result.ok else { throw ProcessFailure(description: "openssl \(arguments.joined(separator: " ")): \(result)") }
        return result
    }

    /// Runs a `/bin/sh -c` script; throws with the output when it fails.
    @discardableResult
    static func shell(_ script: String) throws -> ProcessResult {
        let result = try execute("/bin/sh", ["-c", script])
        guard result.ok else { throw ProcessFailure(description: "sh -c \(script): \(result)") }
        return result
    }
}

private final class ErrorBox: @unchecked Sendable {
    var data = Data()
}

/// A unique temporary directory, removed when released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "certparsing-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func write(_ bytes: [UInt8], to name: String) throws -> String {
        let full = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: full))
        return full
    }

    @discardableResult
    func write(_ text: String, to name: String) throws -> String {
        try write(Array(text.utf8), to: name)
    }

    func read(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: file(name))))
    }
}

// MARK: - Small independent helpers

/// Lowercase hex, written here so comparisons do not go through the library's `Hex`.
func hexString<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    bytes.map { byte in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }.joined()
}

/// Decodes hex (either case, `:` separators ignored); `nil` if malformed.
func bytesFromHex(_ text: some StringProtocol) -> [UInt8]? {
    let digits = String(text.filter { $0 != ":" })
    guard digits.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
        out.append(byte)
        index = next
    }
    return out
}

/// The DER of every PEM block with `label` in `text`, decoded with Foundation's base64 (not the
/// library's), so openssl output can be compared independently.
func foundationPEMBlocks(_ text: String, label: String) -> [[UInt8]] {
    var blocks: [[UInt8]] = []
    var body: String?
    for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
        if line == "-----BEGIN \(label)-----" {
            body = ""
        } else if line == "-----END \(label)-----" {
            if let current = body, let data = Data(base64Encoded: current) { blocks.append([UInt8](data)) }
            body = nil
        } else if let current = body {
            body = current + line.trimmingCharacters(in: .whitespaces)
        }
    }
    return blocks
}

/// The `openssl` date form `Jan  1 00:00:00 2030 GMT` as RFC 3339; `nil` if not in that form.
func rfc3339(fromOpenSSLDate text: some StringProtocol) -> String? {
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    let parts = text.split(separator: " ")
    guard parts.count == 5, parts[4] == "GMT", let monthIndex = months.firstIndex(of: String(parts[0])),
        let day = Int(parts[1]), let year = Int(parts[3])
    else { return nil }
    let time = parts[2]
    func pad(_ v: Int, _ width: Int) -> String { String(repeating: "0", count: max(0, width - String(v).count)) + String(v) }
    return "\(pad(year, 4))-\(pad(monthIndex + 1, 2))-\(pad(day, 2))T\(time)Z"
}
