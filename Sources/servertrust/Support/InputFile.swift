import TrustEvaluation

/// Files named on the command line.
enum InputFile {
    /// Reads a whole file; a missing or unreadable file is a one-line error naming it. The
    /// library's reader does the work (a regular file of at most 64 MiB, a FIFO refused without
    /// waiting for a writer, a read error never a shorter file): one reader for every file a
    /// user names.
    static func read(_ path: String) throws -> [UInt8] {
        do {
            return try TrustStore.readFile(path)
        } catch {
            throw CLIError(error.description)
        }
    }
}
