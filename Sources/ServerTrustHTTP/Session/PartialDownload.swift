internal import Foundation
internal import Glibc
internal import Synchronization

/// A download on its way to ``destination``: a temporary file beside it, renamed over it only
/// once the whole request has completed (every redirect followed, the trust decision
/// accepted, the last byte received), and removed otherwise. A rejected certificate, a refused
/// connection, a cut-off body or a full disk therefore leave the destination exactly as it
/// was, as curl's `-o` does not guarantee but a library must.
///
/// The temporary file is created in the destination's own folder (so the rename is atomic and
/// never crosses file systems), named `.NAME.servertrust-XXXXXX`, with the destination's
/// permissions when it exists and 0644 (less the process umask when the file is new) otherwise.
/// This object is the file descriptor's one owner.
final class PartialDownload: Sendable {
    /// The file the body is for.
    let destination: String
    /// Where the body is written meanwhile.
    let temporaryPath: String
    /// The temporary file, open for writing; `-1` once closed.
    private let state: Mutex<Int32>
    /// The bound on a decoded body (``HTTPSessionConfiguration/maximumDecodedBodySize``).
    let decodedBudget: DecodedBodyBudget?

    /// Creates the temporary file for `destination`.
    /// - Parameters:
    ///   - destination: The file the body is for.
    ///   - decodedLimit: The most bytes of a decoded body, if bounded.
    /// - Throws: ``HTTPError/fileError(path:reason:)`` naming the destination when its folder
    ///   cannot hold a new file.
    init(for destination: String, decodedLimit: Int? = nil) throws(HTTPError) {
        let slash = destination.lastIndex(of: "/")
        let folder = slash.map { String(destination[..<$0]) } ?? "."
        let name = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        guard !name.isEmpty else { throw HTTPError.fileError(path: destination, reason: "not a file name") }
        var existing = stat()
        let mode: mode_t
        if stat(destination, &existing) == 0 {
            guard (existing.st_mode & S_IFMT) == S_IFREG else { throw HTTPError.fileError(path: destination, reason: "not a regular file") }
            mode = existing.st_mode & 0o7777
        } else {
            mode = 0o644 & ~Self.processUmask()
        }
        var template = Array(((folder.isEmpty ? "" : folder + "/") + "." + name + ".servertrust-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw HTTPError.fileError(path: destination, reason: String(cString: strerror(errno))) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        fchmod(descriptor, mode)
        self.destination = destination
        self.temporaryPath = Self.text(template)
        self.state = Mutex(descriptor)
        self.decodedBudget = decodedLimit.map(DecodedBodyBudget.init(limit:))
    }

    deinit { discard() }

    /// A NUL-terminated C string buffer as text.
    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The process umask, read from `/proc/self/status` (`umask(2)` can only be read by
    /// setting it, which would race other threads creating files); 022 when unknown.
    private static func processUmask() -> mode_t {
        guard let file = fopen("/proc/self/status", "r") else { return 0o022 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = Self.text(line)
            guard text.hasPrefix("Umask:") else { continue }
            return mode_t(text.dropFirst("Umask:".count).trimmingCharacters(in: .whitespacesAndNewlines), radix: 8) ?? 0o022
        }
        return 0o022
    }

    /// Appends body bytes.
    /// - Throws: ``HTTPError/fileError(path:reason:)`` (a full disk, say).
    func write(_ bytes: UnsafeRawBufferPointer) throws(HTTPError) {
        let descriptor = state.withLock { $0 }
        guard descriptor >= 0 else { throw HTTPError.fileError(path: destination, reason: "the download was already closed") }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw HTTPError.fileError(path: destination, reason: String(cString: strerror(errno)))
            }
            offset += written
        }
    }

    /// Moves the finished body over the destination.
    /// - Throws: ``HTTPError/fileError(path:reason:)`` when closing or renaming fails (the
    ///   temporary file is then removed and the destination untouched).
    func commit() throws(HTTPError) {
        let descriptor = state.withLock { value -> Int32 in
            defer { value = -1 }
            return value
        }
        guard descriptor >= 0 else { throw HTTPError.fileError(path: destination, reason: "the download was already closed") }
        if close(descriptor) != 0 || rename(temporaryPath, destination) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw HTTPError.fileError(path: destination, reason: reason)
        }
    }

    /// Removes the temporary file; the destination stays as it was. Idempotent.
    func discard() {
        let descriptor = state.withLock { value -> Int32 in
            defer { value = -1 }
            return value
        }
        guard descriptor >= 0 else { return }
        close(descriptor)
        unlink(temporaryPath)
    }
}
