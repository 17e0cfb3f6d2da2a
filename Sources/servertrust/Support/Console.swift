import CertificateParsing

#if canImport(Glibc)
    import Glibc
#endif

/// What the commands write on the terminal: stdout and stderr through fds 1 and 2, every
/// terminal control in text a server or certificate chose escaped.
enum Console {
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

    /// Progress text on stderr without a newline.
    static func writeProgress(_ text: String) {
        _ = text.utf8CString.withUnsafeBufferPointer { buffer in write(2, buffer.baseAddress, buffer.count - 1) }
    }
}
