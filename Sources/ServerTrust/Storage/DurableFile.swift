import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Files replaced crash-safely and never through a name someone else chose: the one writer of
/// the stores that keep state across restarts (the pin-set store, published pin sets, the CRL
/// cache) and of the HTTP credential store. A crash at any instant leaves the old file or the
/// new one, never part of either (rename(2) is atomic within a file system; the `fsync`s order
/// the data before the name, as the ext4 and XFS documentation require).
///
/// A replacement writes a new file beside the target under a random name, created with
/// `O_CREAT | O_EXCL | O_NOFOLLOW` (open(2): with `O_EXCL` the call fails if the name exists,
/// symbolic link or not), so a link or file planted in the directory is never written
/// through; then `fsync`, rename(2) over the target (which replaces a link at the target
/// rather than following it), and `fsync` of the directory.
package enum DurableFile {
    /// Why a write failed, in words naming the file.
    package struct Failure: Error, Sendable {
        package let reason: String
    }

    /// A fresh temporary name beside `path`: `PATH.tmp-<pid>-<random>`.
    package static func temporaryName(beside path: String) -> String {
        "\(path).tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
    }

    /// Whether the file named `name` is a temporary file of a write to a file named `target`.
    package static func isTemporary(_ name: String, for target: String) -> Bool {
        name.hasPrefix(target + ".tmp-")
    }

    /// Replaces (or creates) `path` with `bytes`: readers see the old file or the new one,
    /// never part of either.
    /// - Parameters:
    ///   - bytes: The contents.
    ///   - path: The file.
    ///   - mode: Its permissions, exactly (the umask may not widen or narrow them).
    /// - Throws: ``Failure``; `path` is then untouched and no temporary file is left.
    package static func replace(_ path: String, with bytes: [UInt8], mode: UInt32 = 0o600) throws(Failure) {
        let temporary = temporaryName(beside: path)
        try create(temporary, with: bytes, mode: mode)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(reason: "cannot rename \(temporary) to \(path): \(reason)")
        }
        syncDirectory(of: path)
    }

    /// Creates the new file `file` (it must not exist, not even as a symbolic link) with
    /// `bytes`, and `fsync`s it.
    package static func create(_ file: String, with bytes: [UInt8], mode: UInt32 = 0o600) throws(Failure) {
        let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
        guard descriptor >= 0 else { throw Failure(reason: "cannot create \(file): \(String(cString: strerror(errno)))") }
        fchmod(descriptor, mode_t(mode))  // the umask may narrow the mode; state it exactly
        var written = 0
        var failure: String?
        while failure == nil && written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { failure = "cannot write \(file): \(String(cString: strerror(errno)))" } else { written += n }
        }
        if failure == nil && fsync(descriptor) != 0 { failure = "cannot fsync \(file): \(String(cString: strerror(errno)))" }
        close(descriptor)
        if let failure {
            unlink(file)
            throw Failure(reason: failure)
        }
    }

    /// `fsync` on the directory, so the renames themselves are durable.
    package static func syncDirectory(of file: String) {
        let directory = (file as NSString).deletingLastPathComponent
        let descriptor = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// Reads a regular file of at most `maximumSize` bytes: `nil` when it does not exist.
    package static func read(_ file: String, maximumSize: Int) -> Result<[UInt8], Failure>? {
        // O_NONBLOCK: opening a FIFO otherwise waits for a writer before the check below can
        // refuse it (POSIX open()); reads of a regular file are unaffected.
        let descriptor = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
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
