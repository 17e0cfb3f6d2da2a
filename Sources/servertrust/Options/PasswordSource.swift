#if canImport(Glibc)
    import Glibc
#endif

/// Where a password comes from, so that it need not sit in argv (every local user can read a
/// process's arguments in `/proc/PID/cmdline` and `ps`): OpenSSL's pass-phrase convention
/// (openssl-passphrase-options(1)), `pass:TEXT`, `env:NAME` (the variable's value) and
/// `file:PATH` (the file's first line).
enum PasswordSource {
    /// The prefixes, as openssl spells them.
    static let prefixes = ["pass:", "env:", "file:"]

    /// Resolves `text`.
    ///
    /// - Parameters:
    ///   - text: `pass:…`, `env:NAME` or `file:PATH`; anything else is the password itself when
    ///     `literalOtherwise` (curl's `--pass PHRASE` takes the phrase as given), else bad input.
    ///   - option: The option, for messages.
    ///   - literalOtherwise: Whether text without a prefix is the password.
    /// - Throws: ``CLIError`` for an unset variable, an unreadable file, or a missing prefix.
    static func resolve(_ text: String, option: String, literalOtherwise: Bool) throws -> String {
        if text.hasPrefix("pass:") { return String(text.dropFirst("pass:".count)) }
        if text.hasPrefix("env:") {
            let name = String(text.dropFirst("env:".count))
            guard !name.isEmpty else { throw CLIError("\(option) env: needs a variable name (env:NAME)") }
            guard let value = getenv(name) else { throw CLIError("\(option) env:\(name): the environment variable \(name) is not set") }
            return String(cString: value)
        }
        if text.hasPrefix("file:") {
            let path = String(text.dropFirst("file:".count))
            let bytes: [UInt8]
            do { bytes = try InputFile.read(path) } catch let error as CLIError { throw CLIError("\(option) file:\(error.message)") }
            // openssl reads the first line; a trailing CR (a file written on Windows) is not
            // part of the password either.
            var line = bytes.prefix { $0 != UInt8(ascii: "\n") }
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            guard let password = String(validating: line, as: UTF8.self) else { throw CLIError("\(option) file:\(path): the first line is not UTF-8") }
            return password
        }
        guard literalOtherwise else {
            // Not quoted back: it may be the password itself.
            throw CLIError("\(option) takes env:NAME, file:PATH or pass:TEXT")
        }
        return text
    }
}

extension PasswordSource {
    /// `USER:PASS`, or `USER` with the password from `passwordSource` (``PasswordSource``).
    /// curl would prompt for a missing password; a script cannot answer, so it is an error
    /// that says how to give it without putting it in argv.
    static func credentials(_ text: String, option: String, passwordSource: String?, sourceOption: String) throws -> (String, String) {
        if let passwordSource {
            guard !text.contains(":") else { throw CLIError("\(option) USER:PASS and \(sourceOption) both give the password: give it once") }
            return (text, try PasswordSource.resolve(passwordSource, option: sourceOption, literalOtherwise: false))
        }
        guard let colon = text.firstIndex(of: ":") else {
            throw CLIError("\(option) \(text) has no password: write \(option) USER:PASS, or keep it out of argv with \(sourceOption) env:NAME or file:PATH")
        }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }
}
