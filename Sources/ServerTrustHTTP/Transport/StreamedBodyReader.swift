internal import Glibc

/// Reads one hop's ``StreamedBody`` for curl's read and seek callbacks, on the lane thread.
///
/// The files are opened and measured when the hop starts (their sizes add up to the
/// `Content-Length` curl announces), read with `pread` at the reader's own position, never
/// past the size measured then, and closed when the hop ends. This reader is the one owner of
/// those descriptors.
final class StreamedBodyReader {
    private enum Source {
        case bytes([UInt8])
        case file(descriptor: Int32, path: String)
    }

    private struct Segment {
        var source: Source
        var size: Int64
    }

    private var segments: [Segment]
    /// The whole body's size.
    let size: Int64
    /// The segment being read, and the position within it.
    private var index = 0
    private var offset: Int64 = 0

    /// Opens every file of `body`.
    ///
    /// - Throws: ``HTTPError/fileError(path:reason:)`` for a file that cannot be opened or is
    ///   not a regular file (nothing stays open then).
    init(_ body: StreamedBody) throws(HTTPError) {
        var segments: [Segment] = []
        func closeOpened() {
            for case .file(let descriptor, _) in segments.map(\.source) { _ = Glibc.close(descriptor) }
        }
        var total: Int64 = 0
        for piece in body.pieces {
            switch piece {
            case .bytes(let bytes):
                segments.append(Segment(source: .bytes(bytes), size: Int64(bytes.count)))
            case .file(let path):
                do {
                    let (descriptor, size) = try Self.openRegularFile(path)
                    segments.append(Segment(source: .file(descriptor: descriptor, path: path), size: size))
                } catch {
                    closeOpened()
                    throw error
                }
            }
            total += segments[segments.count - 1].size
        }
        self.segments = segments
        self.size = total
    }

    deinit { close() }

    /// Opens `path` for reading and measures it; only regular files (a device or a FIFO
    /// would never end, a directory cannot be read).
    ///
    /// - Returns: The descriptor, which the caller closes, and the size.
    /// - Throws: ``HTTPError/fileError(path:reason:)``.
    static func openRegularFile(_ path: String) throws(HTTPError) -> (descriptor: Int32, size: Int64) {
        // O_NONBLOCK: opening a FIFO otherwise waits for a writer before the check below can
        // refuse it (POSIX open()); reads of a regular file are unaffected.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw HTTPError.fileError(path: path, reason: String(cString: strerror(errno))) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            _ = Glibc.close(descriptor)
            throw HTTPError.fileError(path: path, reason: "not a regular file")
        }
        return (descriptor, Int64(status.st_size))
    }

    /// Closes the files (the hop has ended); later reads find nothing.
    func close() {
        for case .file(let descriptor, _) in segments.map(\.source) { _ = Glibc.close(descriptor) }
        segments = []
        index = 0
        offset = 0
    }

    /// Copies the next bytes into `buffer`: as many as fit, 0 at the end of the body.
    ///
    /// - Throws: ``HTTPError/fileError(path:reason:)`` if a file cannot be read or is now
    ///   shorter than when the hop started (the announced length could not be sent).
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) throws(HTTPError) -> Int {
        var written = 0
        while written < capacity && index < segments.count {
            let segment = segments[index]
            let remaining = segment.size - offset
            guard remaining > 0 else {
                index += 1
                offset = 0
                continue
            }
            let count = Int(min(Int64(capacity - written), remaining))
            switch segment.source {
            case .bytes(let bytes):
                bytes.withUnsafeBytes { source in
                    (buffer + written).copyMemory(from: source.baseAddress! + Int(offset), byteCount: count)
                }
                offset += Int64(count)
                written += count
            case .file(let descriptor, let path):
                let got = pread(descriptor, buffer + written, count, off_t(offset))
                if got < 0 {
                    if errno == EINTR { continue }
                    throw HTTPError.fileError(path: path, reason: String(cString: strerror(errno)))
                }
                guard got > 0 else {
                    throw HTTPError.fileError(path: path, reason: "the file shrank while it was sent (\(offset) of \(segment.size) bytes read)")
                }
                offset += Int64(got)
                written += got
            }
        }
        return written
    }

    /// Moves to `position` bytes from the start of the body (curl rewinds with `SEEK_SET`
    /// to 0); `false` outside the body.
    func seek(to position: Int64) -> Bool {
        guard position >= 0, position <= size else { return false }
        var rest = position
        index = 0
        while index < segments.count && rest >= segments[index].size {
            rest -= segments[index].size
            index += 1
        }
        offset = rest
        return true
    }
}
