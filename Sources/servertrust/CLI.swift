import CertificateParsing
import ServerTrustHTTP
import TrustEvaluation

#if canImport(Glibc)
    import Glibc
#endif

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

enum CLI {
    static let usage = """
        usage: servertrust <command> [options]

        commands:
          inspect FILE... [--json]     show the certificates in PEM/DER files and bundles
          inspect https://HOST[:PORT]  what a server serves: TLS version, ALPN, the chain, and whether it verifies
          pins FILE|https://HOST       the pins to configure, with a backup: ServerTrust, TrustKit, OkHttp, ATS, curl
          pins lint|check ...          a policy's pins: the shapes that break at renewals; a live health check
          pinset keygen|sign|verify|serve  signed pin-set updates: signing keys, documents, a loopback endpoint
          evaluate CHAIN.pem --host H  judge a served chain offline (AFNetworking policy, pins, policy file; --help)
          get URL [options]            one HTTPS request through the policy flags of evaluate, curl-style options
          demo [--json]                the policy matrix, live: local servers, a man-in-the-middle, 12 policies × 6 situations
          collect --db LOCATION        the pin-failure report collector: POST /report, a dashboard, a JSON API (SQLite or PostgreSQL)
          reports summary|load         the collector's reports in the terminal; its load benchmark
          bench evaluate|https ...     benchmark plug-ins for ../shared/bench (servertrust bench --help)
          stress load|faults [--json]  load and fault checks against local servers: memory, descriptors, typed errors
          limbo-serve                  x509-limbo conformance server (limbo-jsonl/1 on stdin/stdout)
          help                         this text
          --version, -V                servertrust's version, and the libcurl and OpenSSL it runs on

        every command takes --help.
        exit codes: 0 success, 1 trust rejected, 2 bad input (more per command: see its --help)
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            writeStderr(usage)
            return ExitCode.badInput
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "inspect": return try InspectCommand.run(rest)
            case "evaluate": return try EvaluateCommand.run(rest)
            case "demo": return try DemoCommand.run(rest)
            case "bench": return try BenchCommand.run(rest)
            case "stress": return try StressCommand.run(rest)
            case "get": return try GetCommand.run(rest)
            case "limbo-serve": return try LimboServeCommand.run(rest)
            case "pins": return try PinsCommand.run(rest)
            case "pinset": return try PinSetCommand.run(rest)
            case "collect": return try CollectCommand.run(rest)
            case "reports": return try ReportsCommand.run(rest)
            case "help", "--help", "-h":
                print(usage)
                return ExitCode.success
            case "--version", "-V":
                print(versionText)
                return ExitCode.success
            default:
                throw CLIError("unknown command '\(command)' (try 'servertrust help')")
            }
        } catch let error as CLIError {
            writeStderr("servertrust: \(oneLine(command)): \(oneLine(error.message))")
            return error.code
        } catch {
            writeStderr("servertrust: \(oneLine(command)): \(oneLine("\(error)"))")
            return ExitCode.badInput
        }
    }

    /// The command's version.
    static let version = "0.1"

    /// What `--version` prints, after curl's `--version`: the first line names the program and
    /// the libraries under it (libcurl's own version line: the libcurl and TLS library that
    /// carry the requests), the second the libcrypto that makes the trust decisions.
    static var versionText: String {
        "servertrust \(version) \(HTTPSession.libcurlVersion)\nTrust decisions: ServerTrust on \(OpenSSLVersion.text)"
    }

    /// `text` with control characters escaped (`\r`, `\n`, `\0`, `\t`, `\u{1B}`), so that an
    /// error message quoting what the user gave (a header, a URL, a method) stays the one
    /// line the exit-2 contract promises, and cannot write a forged line into a log.
    static func oneLine(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0D: out += "\\r"
            case 0x0A: out += "\\n"
            case 0x00: out += "\\0"
            case 0x09: out += "\\t"
            case 0x01..<0x20, 0x7F, 0x85, 0x2028, 0x2029: out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Prints `text` and a line feed on stdout with every terminal control in it escaped but
    /// line feeds and tabs (``DisplayText/controlsEscaped(keepingLineBreaks:)``): what
    /// `inspect`, `pins` and `evaluate` print is made of certificate names, which the issuer
    /// (or a man in the middle) chooses.
    static func printSafe(_ text: String) {
        writeStdout(DisplayText.controlsEscaped(keepingLineBreaks: text) + "\n")
    }

    /// Writes `text` (and a line feed) on stderr, terminal controls escaped as ``printSafe(_:)``
    /// does: messages quote certificate names and server responses.
    static func writeStderr(_ text: String) {
        var line = DisplayText.controlsEscaped(keepingLineBreaks: text)
        if !line.hasSuffix("\n") { line += "\n" }
        // stderr is a C global that Swift 6 cannot prove safe; writing to fd 2 avoids it.
        _ = line.utf8CString.withUnsafeBufferPointer { buffer in write(2, buffer.baseAddress, buffer.count - 1) }
    }

    /// Writes to fd 1 unbuffered, retrying short writes.
    static func writeStdout(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }

    /// Reads a whole file; a missing or unreadable file is a one-line error naming it.
    static func readFile(_ path: String) throws -> [UInt8] {
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

/// Secrets given in argv, blanked in the process's own argument memory once parsed, as curl's
/// `cleanarg` does (tool_getparam.c: "wipe the next argument out so that the
/// username:password isn't displayed in the system process list"): every local user can read
/// `/proc/PID/cmdline` and `ps` for as long as the request runs. The value is overwritten with
/// spaces in place, so the length of the command line stays what it was; curl blanks the
/// whole value of `-u`, `--proxy-user`, `--cert` and `--pass`, and so do we, with the
/// password-source options beside them (`pass:TEXT` is a password too).
enum SecretArguments {
    /// The options whose values are secrets (canonical names; `-u` and `-E` are spellings).
    static let options: Set<String> = ["--user", "--proxy-user", "--cert", "--pass", "--user-password", "--proxy-user-password"]

    /// Where one value sits in the command's arguments: the argument, and the byte where the
    /// value starts in it (after `=` for `--option=value`).
    struct Position: Equatable {
        let argument: Int
        let offset: Int
    }

    /// Blanks each of `positions`, which index `arguments`, the arguments after the command
    /// name. `argv` holds the program and the command before them; an argument is blanked
    /// only if it is still the text that was parsed, so nothing else is ever overwritten.
    static func blank(_ positions: [Position], in arguments: [String]) {
        let argv = CommandLine.unsafeArgv
        let leading = Int(CommandLine.argc) - arguments.count
        guard leading >= 0 else { return }
        for position in positions where position.argument < arguments.count {
            let index = leading + position.argument
            guard let pointer = argv[index], String(cString: pointer) == arguments[position.argument] else { continue }
            let length = strlen(pointer)
            guard position.offset < length else { continue }
            memset(pointer + position.offset, Int32(UInt8(ascii: " ")), length - position.offset)
        }
    }
}

/// Minimal option parsing: `--flag`, `--key value`, positionals.
struct Options {
    var positionals: [String] = []
    var flags: Set<String> = []
    var values: [String: [String]] = [:]
    /// Where the values of ``SecretArguments/options`` sit, for ``SecretArguments/blank(_:in:)``.
    var secretPositions: [SecretArguments.Position] = []

    init(_ arguments: [String], flags allowedFlags: Set<String>, values allowedValues: Set<String>) throws {
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            if arg.hasPrefix("--") && arg.count > 2 {
                var name = arg
                var inline: String?
                if let eq = arg.firstIndex(of: "=") {
                    name = String(arg[..<eq])
                    inline = String(arg[arg.index(after: eq)...])
                }
                if allowedFlags.contains(name) && inline == nil {
                    flags.insert(name)
                } else if allowedValues.contains(name) {
                    let value: String
                    if let inline {
                        value = inline
                        if SecretArguments.options.contains(name) { secretPositions.append(.init(argument: i, offset: name.utf8.count + 1)) }
                    } else {
                        i += 1
                        guard i < arguments.count else { throw CLIError("\(name) needs a value") }
                        value = arguments[i]
                        if SecretArguments.options.contains(name) { secretPositions.append(.init(argument: i, offset: 0)) }
                    }
                    values[name, default: []].append(value)
                } else {
                    throw CLIError("unknown option \(name)")
                }
            } else {
                positionals.append(arg)
            }
            i += 1
        }
    }

    func value(_ name: String) -> String? { values[name]?.last }

    func int(_ name: String, default fallback: Int) throws -> Int {
        guard let text = value(name) else { return fallback }
        guard let v = Int(text), v >= 0 else { throw CLIError("\(name) must be a non-negative integer, got '\(text)'") }
        return v
    }
}
