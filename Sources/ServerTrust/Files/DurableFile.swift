import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Files replaced crash-safely and never through a name someone else chose: the one writer of
/// the pin-set store, published pin sets and the HTTP credential store.
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
}
