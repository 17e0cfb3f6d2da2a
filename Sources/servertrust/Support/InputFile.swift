#if canImport(Glibc)
    import Glibc
#endif

/// Files named on the command line.
enum InputFile {
    /// Reads a whole file; a missing or unreadable file is a one-line error naming it.
    static func read(_ path: String) throws -> [UInt8] {
        // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever, before
        // the check below could refuse it (POSIX open(), O_NONBLOCK). It changes nothing for a
        // regular file's reads.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0, let file = fdopen(descriptor, "rb") else {
            let reason = String(cString: strerror(errno))
            if descriptor >= 0 { close(descriptor) }
            throw CLIError("\(path): \(reason)")
        }
        defer { fclose(file) }
        // Refuse devices and huge files (`inspect /dev/zero` must not read forever).
        var info = stat()
        guard fstat(fileno(file), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw CLIError("\(path): not a regular file")
        }
        guard info.st_size <= 64 << 20 else { throw CLIError("\(path): larger than 64 MiB") }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n > 0 { bytes.append(contentsOf: buffer[0..<n]) }
            if n < buffer.count {
                if ferror(file) != 0 { throw CLIError("\(path): read error") }
                break
            }
        }
        return bytes
    }
}
