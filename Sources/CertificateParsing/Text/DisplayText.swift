/// Certificate-derived text made safe to print: whoever issues a certificate (or a man in the
/// middle minting one) chooses its names, and a name with ESC, BEL or CR/LF in it would
/// otherwise drive the reader's terminal (retitle it, clear it, move the cursor) or forge
/// lines of output and logs.
///
/// One notation everywhere, RFC 4514 §2.4's: a character that must not reach a terminal is
/// written as a backslash and two hex digits per UTF-8 byte (ESC is `\1B`, CR LF `\0D\0A`,
/// U+0085 `\C2\85`), and a backslash itself as `\\`, so the text stays unambiguous and a
/// distinguished name stays a valid RFC 4514 string. Escaped: the C0 controls and DEL, the C1
/// controls (U+0080–U+009F, which terminals also obey), the line and paragraph separators
/// (U+2028, U+2029), and the bidirectional formatting characters (U+200E, U+200F,
/// U+202A–U+202E, U+2066–U+2069) that make text display in another order than it is read
/// (CVE-2021-42574).
public enum DisplayText {
    /// `text` with every character above escaped, backslashes included.
    /// - Parameter text: Text taken from a certificate (a SAN, an attribute value).
    /// - Returns: The printable form.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "\\" || mustEscape($0) }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                out += "\\\\"
            } else if mustEscape(scalar) {
                out += hexPairs(scalar)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text` with the characters above escaped except line feed and tab, and backslashes
    /// left as they are: the last line of defence for whole blocks of output already made of
    /// escaped names (``escaped(_:)``, RFC 4514 strings), so nothing that reaches a terminal
    /// can drive it, whatever a message forgot to escape.
    /// - Parameter text: Multi-line output.
    /// - Returns: The printable form.
    package static func controlsEscaped(keepingLineBreaks text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 != "\n" && $0 != "\t" && mustEscape($0) }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar != "\n" && scalar != "\t" && mustEscape(scalar) { out += hexPairs(scalar) } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    /// Whether `scalar` must not reach a terminal as it is.
    public static func mustEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F..<0xA0, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// `\XX` for each UTF-8 byte of `scalar`, upper-case hex.
    static func hexPairs(_ scalar: Unicode.Scalar) -> String {
        var out = ""
        for byte in String(scalar).utf8 {
            let hex = String(byte, radix: 16, uppercase: true)
            out += "\\" + (byte < 16 ? "0" + hex : hex)
        }
        return out
    }
}
