import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Crash-safe file writes, shared by the stores that keep state across restarts (pin sets, the
/// CRL cache): a new file is written beside its destination, `fsync`ed, renamed over it, and the
/// directory `fsync`ed, so a crash at any instant leaves the old file or the new one, never part
/// of either (rename(2) is atomic within a file system; the `fsync`s order the data before the
/// name, as the ext4 and XFS documentation require for crash safety).
enum DurableFile {
    /// What failed, on one line.
    struct Failure: Error {
        let reason: String
    }

    /// The temporary name a write to `path` uses: unique per process and call, and recognisable
    /// by ``isTemporary(_:for:)`` so that a crashed write can be cleaned up.
    static func temporaryName(for path: String) -> String {
        "\(path).tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
    }

    /// Whether the file named `name` is a temporary file of a write to a file named `target`.
    static func isTemporary(_ name: String, for target: String) -> Bool {
        name.hasPrefix(target + ".tmp-")
    }

    /// Replaces (or creates) `path` with `bytes`, crash-safely.
    /// - Throws: ``Failure``; `path` is then untouched.
    static func replace(_ path: String, with bytes: [UInt8], mode: mode_t = 0o600) throws(Failure) {
        let temporary = temporaryName(for: path)
        try writeNew(bytes, to: temporary, mode: mode)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(reason: "cannot rename \(temporary) to \(path): \(reason)")
        }
        syncDirectory(of: path)
    }

    /// Writes `bytes` to a file that must not exist yet (mode exactly `mode`) and `fsync`s it.
    /// - Throws: ``Failure``; a partly written file is removed.
    static func writeNew(_ bytes: [UInt8], to file: String, mode: mode_t = 0o600) throws(Failure) {
        let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw Failure(reason: "cannot create \(file): \(String(cString: strerror(errno)))") }
        fchmod(descriptor, mode)  // the umask may narrow the mode, never widen it; state it exactly
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(file)
                throw Failure(reason: "cannot write \(file): \(reason)")
            }
            written += n
        }
        guard fsync(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            unlink(file)
            throw Failure(reason: "cannot fsync \(file): \(reason)")
        }
        close(descriptor)
    }

    /// `fsync` on the directory of `file`, so the renames themselves are durable.
    static func syncDirectory(of file: String) {
        let directory = (file as NSString).deletingLastPathComponent
        let descriptor = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// Reads a regular file of at most `maximumSize` bytes: `nil` when it does not exist.
    static func read(_ file: String, maximumSize: Int) -> Result<[UInt8], Failure>? {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            return errno == ENOENT ? nil : .failure(Failure(reason: "\(file): \(String(cString: strerror(errno)))"))
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return .failure(Failure(reason: "\(file): not a regular file"))
        }
        guard info.st_size <= maximumSize else {
            return .failure(Failure(reason: "\(file): \(info.st_size) bytes, more than the \(maximumSize) allowed"))
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let n = bytes[filled...].withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            filled += n
        }
        guard filled == bytes.count else { return .failure(Failure(reason: "\(file): short read")) }
        return .success(bytes)
    }
}
