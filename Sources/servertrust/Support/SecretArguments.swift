#if canImport(Glibc)
    import Glibc
#endif

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
