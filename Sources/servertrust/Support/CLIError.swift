/// Exit codes shared by every subcommand.
enum ExitCode {
    static let success: Int32 = 0
    /// A trust decision said no (evaluate, get).
    static let rejected: Int32 = 1
    /// Bad input: unreadable file, malformed certificate, unknown option.
    static let badInput: Int32 = 2
}

/// A usage or input error: printed as one line `servertrust: <command>: <message>`.
struct CLIError: Error {
    let message: String
    let code: Int32
    init(_ message: String, code: Int32 = ExitCode.badInput) {
        self.message = message
        self.code = code
    }
}
