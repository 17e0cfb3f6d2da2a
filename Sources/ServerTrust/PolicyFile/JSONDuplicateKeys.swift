/// Finds object members whose names repeat within one object. RFC 8259 §4 only says the
/// names "SHOULD be unique" and that receivers then behave unpredictably; JSONSerialization
/// keeps the last one silently, so `"enforcePinning": true, …, "enforcePinning": false`
/// loaded as report-only. A policy is security configuration: a repeated key is an error.
///
/// It walks text that JSONSerialization has already accepted (so the syntax is known to be
/// valid), iteratively (no recursion, whatever the nesting), and compares names after
/// unescaping them, as Swift strings: `"a"` and `"\u0061"` are the same name, as are two
/// canonically equivalent spellings (they would be one key of a `[String: Any]`).
enum JSONDuplicateKeys {
    /// One problem per repeated name (each repetition after the first), at the name's JSON
    /// path (`$.hosts[0].enforcePinning`), in document order.
    static func problems(in json: [UInt8]) -> [PolicyConfigurationError] {
        var scanner = Scanner(bytes: json)
        return scanner.run()
    }

    private struct Frame {
        var path: String
        var isObject: Bool
        /// Names seen so far (objects), with how often.
        var names: [String: Int] = [:]
        /// The current member's name, between the name and the end of its value.
        var key: String?
        /// The index of the current element (arrays).
        var index = 0
    }

    private struct Scanner {
        let bytes: [UInt8]
        var position = 0
        var stack: [Frame] = []
        var problems: [PolicyConfigurationError] = []

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        /// The path of the value starting here.
        var valuePath: String {
            guard let top = stack.last else { return "$" }
            if top.isObject { return ConfigReader.path(top.path, top.key ?? "") }
            return "\(top.path)[\(top.index)]"
        }

        mutating func run() -> [PolicyConfigurationError] {
            while position < bytes.count {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    stack.append(Frame(path: valuePath, isObject: byte == UInt8(ascii: "{")))
                    position += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    // Balanced in accepted JSON; guarded all the same (never a crash).
                    if !stack.isEmpty { stack.removeLast() }
                    position += 1
                case UInt8(ascii: ","):
                    if let last = stack.indices.last {
                        if stack[last].isObject { stack[last].key = nil } else { stack[last].index += 1 }
                    }
                    position += 1
                case UInt8(ascii: "\""):
                    guard let text = string() else { return problems }
                    if let last = stack.indices.last, stack[last].isObject, stack[last].key == nil {
                        let seen = stack[last].names[text, default: 0]
                        stack[last].names[text] = seen + 1
                        stack[last].key = text
                        if seen >= 1 {
                            problems.append(
                                PolicyConfigurationError(
                                    .duplicateKey, path: valuePath,
                                    "the key appears more than once in its object (a JSON parser keeps one of them silently; RFC 8259 §4)"))
                        }
                    }
                default:
                    // Whitespace, ':', and the characters of numbers, true, false, null.
                    position += 1
                }
            }
            return problems
        }

        /// The string starting at `position` (a `"`), unescaped; `position` moves past it.
        mutating func string() -> String? {
            position += 1
            var utf8: [UInt8] = []
            var scalars = String.UnicodeScalarView()
            func flush() {
                if !utf8.isEmpty {
                    scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
                    utf8.removeAll()
                }
            }
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                if byte == UInt8(ascii: "\"") {
                    flush()
                    return String(scalars)
                }
                guard byte == UInt8(ascii: "\\") else {
                    utf8.append(byte)
                    continue
                }
                guard position < bytes.count else { return nil }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    guard let unit = hex4() else { return nil }
                    flush()
                    // A surrogate pair (RFC 8259 §7); a lone surrogate becomes U+FFFD.
                    var value = UInt32(unit)
                    if (0xD800..<0xDC00).contains(unit), position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                        bytes[position + 1] == UInt8(ascii: "u")
                    {
                        let saved = position
                        position += 2
                        if let low = hex4(), (0xDC00..<0xE000).contains(low) {
                            value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                        } else {
                            position = saved
                        }
                    }
                    scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
                default:
                    // `"`, `\`, `/`.
                    utf8.append(escape)
                }
            }
            return nil
        }

        mutating func hex4() -> UInt16? {
            guard position + 4 <= bytes.count else { return nil }
            var value: UInt16 = 0
            for _ in 0..<4 {
                let byte = bytes[position]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt16(digit)
                position += 1
            }
            return value
        }
    }
}
