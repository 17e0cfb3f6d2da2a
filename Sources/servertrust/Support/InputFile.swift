#if canImport(Glibc)
    import Glibc
#endif

/// Files named on the command line.
enum InputFile {
    /// Reads a whole file; a missing or unreadable file is a one-line error naming it.
    static func read(_ path: String) throws -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw CLIError("\(path): \(String(cString: strerror(errno)))")
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
