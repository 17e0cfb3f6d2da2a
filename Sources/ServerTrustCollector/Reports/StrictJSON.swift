/// A JSON value read by ``StrictJSON``: members in document order, numbers kept as their text.
package indirect enum JSONNode: Sendable, Hashable {
    case object([(String, JSONNode)])
    case array([JSONNode])
    case string(String)
    /// The number's text exactly as sent (RFC 8259 §6 grammar).
    case number(String)
    case bool(Bool)
    case null

    package static func == (lhs: JSONNode, rhs: JSONNode) -> Bool { lhs.serialized == rhs.serialized }
    package func hash(into hasher: inout Hasher) { hasher.combine(serialized) }

    /// Compact JSON text of the value, members in their original order; strings escaped so
    /// the text is plain ASCII (`<`, `>`, `&` and every non-ASCII or control character as
    /// `\uXXXX`), so stored or echoed unknown fields can never be markup.
    package var serialized: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .object(let members):
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                JSONNode.writeString(member.0, to: &out)
                out += ":"
                member.1.write(to: &out)
            }
            out += "}"
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                element.write(to: &out)
            }
            out += "]"
        case .string(let text): JSONNode.writeString(text, to: &out)
        case .number(let text): out += text
        case .bool(let value): out += value ? "true" : "false"
        case .null: out += "null"
        }
    }

    /// A JSON string literal in ASCII only.
    package static func writeString(_ text: String, to out: inout String) {
        out += "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x20..<0x7F where unit != 0x3C && unit != 0x3E && unit != 0x26: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        out += "\""
    }
}

/// A JSON reader for untrusted input (RFC 8259) with the limits a report collector needs:
/// a nesting depth, a member count, valid UTF-8 only, no repeated member names (RFC 8259 §4
/// leaves their meaning to the receiver, and two parsers taking different copies is how a
/// reviewer and a store end up disagreeing), nothing after the value. Iterative over an
/// explicit stack, so no input can exhaust the thread's stack.
package struct StrictJSON {
    /// Why a document was refused, with the byte offset.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package let offset: Int
        package let reason: String
        package var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    /// The deepest nesting of objects and arrays accepted (a report needs 2).
    package var maximumDepth = 8
    /// The most members and elements in the whole document.
    package var maximumValues = 10_000

    package init() {}

    /// Parses `bytes` as one JSON value.
    package func parse(_ bytes: [UInt8]) throws(Failure) -> JSONNode {
        var reader = Reader(bytes: bytes, limits: self)
        return try reader.document()
    }

    private enum Container {
        case object(members: [(String, JSONNode)], names: Set<String>, pendingName: String?)
        case array([JSONNode])
    }

    private struct Reader {
        let bytes: [UInt8]
        let limits: StrictJSON
        var position = 0
        var values = 0

        init(bytes: [UInt8], limits: StrictJSON) {
            self.bytes = bytes
            self.limits = limits
        }

        func fail(_ reason: String) -> Failure { Failure(offset: position, reason: reason) }

        mutating func skipWhitespace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        mutating func document() throws(Failure) -> JSONNode {
            var stack: [Container] = []
            var completed: JSONNode?
            skipWhitespace()
            while true {
                if let value = completed {
                    completed = nil
                    values += 1
                    guard values <= limits.maximumValues else { throw fail("more than \(limits.maximumValues) values") }
                    guard var top = stack.popLast() else {
                        skipWhitespace()
                        guard position == bytes.count else { throw fail("data after the JSON value") }
                        return value
                    }
                    switch top {
                    case .object(var members, let names, let name?):
                        members.append((name, value))
                        top = .object(members: members, names: names, pendingName: nil)
                    case .object:
                        throw fail("value without a name")
                    case .array(var elements):
                        elements.append(value)
                        top = .array(elements)
                    }
                    skipWhitespace()
                    guard position < bytes.count else { throw fail("unterminated container") }
                    let byte = bytes[position]
                    position += 1
                    switch (top, byte) {
                    case (.object(let members, _, _), 0x7D):
                        completed = .object(members)
                    case (.array(let elements), 0x5D):
                        completed = .array(elements)
                    case (.object(let members, var names, _), 0x2C):
                        let name = try memberName(names)
                        names.insert(name)
                        stack.append(.object(members: members, names: names, pendingName: name))
                        if let value = try scalarOrOpen(&stack) { completed = value }
                    case (.array, 0x2C):
                        stack.append(top)
                        skipWhitespace()
                        if let value = try scalarOrOpen(&stack) { completed = value }
                    default:
                        position -= 1
                        throw fail("expected ',' or the end of the container")
                    }
                    continue
                }
                if let value = try scalarOrOpen(&stack) { completed = value }
            }
        }

        /// Reads `"name"` and `:` inside an object, refusing a repeated name.
        mutating func memberName(_ names: Set<String>) throws(Failure) -> String {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == 0x22 else { throw fail("expected a member name") }
            let name = try string()
            guard !names.contains(name) else { throw fail("repeated member name \"\(JSONNode.escapedForMessage(name))\"") }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == 0x3A else { throw fail("expected ':'") }
            position += 1
            skipWhitespace()
            return name
        }

        /// A scalar (returned), or the opening of a container (pushed; `nil` returned, or the
        /// empty container itself).
        mutating func scalarOrOpen(_ stack: inout [Container]) throws(Failure) -> JSONNode? {
            guard position < bytes.count else { throw fail("unexpected end of input") }
            switch bytes[position] {
            case 0x7B:
                guard stack.count < limits.maximumDepth else { throw fail("nested deeper than \(limits.maximumDepth)") }
                position += 1
                skipWhitespace()
                if position < bytes.count, bytes[position] == 0x7D {
                    position += 1
                    return .object([])
                }
                let name = try memberName([])
                stack.append(.object(members: [], names: [name], pendingName: name))
                return try scalarOrOpen(&stack)
            case 0x5B:
                guard stack.count < limits.maximumDepth else { throw fail("nested deeper than \(limits.maximumDepth)") }
                position += 1
                skipWhitespace()
                if position < bytes.count, bytes[position] == 0x5D {
                    position += 1
                    return .array([])
                }
                stack.append(.array([]))
                return try scalarOrOpen(&stack)
            case 0x22: return .string(try string())
            case 0x74: return try literal("true", .bool(true))
            case 0x66: return try literal("false", .bool(false))
            case 0x6E: return try literal("null", .null)
            case 0x2D, 0x30...0x39: return try number()
            default: throw fail("unexpected character")
            }
        }

        mutating func literal(_ word: String, _ value: JSONNode) throws(Failure) -> JSONNode {
            let text = Array(word.utf8)
            guard position + text.count <= bytes.count, Array(bytes[position..<position + text.count]) == text else { throw fail("invalid literal") }
            position += text.count
            return value
        }

        mutating func number() throws(Failure) -> JSONNode {
            let start = position
            func digits(_ reader: inout Reader) -> Int {
                let begin = reader.position
                while reader.position < reader.bytes.count, (0x30...0x39).contains(reader.bytes[reader.position]) { reader.position += 1 }
                return reader.position - begin
            }
            if bytes[position] == 0x2D { position += 1 }
            guard position < bytes.count else { throw fail("invalid number") }
            if bytes[position] == 0x30 {
                position += 1
            } else {
                guard digits(&self) > 0 else { throw fail("invalid number") }
            }
            if position < bytes.count, bytes[position] == 0x2E {
                position += 1
                guard digits(&self) > 0 else { throw fail("invalid number") }
            }
            if position < bytes.count, bytes[position] == 0x65 || bytes[position] == 0x45 {
                position += 1
                if position < bytes.count, bytes[position] == 0x2B || bytes[position] == 0x2D { position += 1 }
                guard digits(&self) > 0 else { throw fail("invalid number") }
            }
            guard position - start <= 40 else { throw fail("number longer than 40 characters") }
            return .number(String(decoding: bytes[start..<position], as: UTF8.self))
        }

        mutating func string() throws(Failure) -> String {
            position += 1
            // The common case, a string without escapes (a PEM block, a host): find its end,
            // refuse control characters, and validate the UTF-8 once for the whole run.
            var end = position
            while end < bytes.count, bytes[end] != 0x22, bytes[end] != 0x5C, bytes[end] >= 0x20 { end += 1 }
            if end < bytes.count, bytes[end] == 0x22 {
                guard let text = String(validating: bytes[position..<end], as: UTF8.self) else { throw fail("invalid UTF-8") }
                position = end + 1
                return text
            }
            var scalars = String.UnicodeScalarView()
            var pendingHigh: UInt32?
            while true {
                guard position < bytes.count else { throw fail("unterminated string") }
                let byte = bytes[position]
                if byte == 0x22 {
                    guard pendingHigh == nil else { throw fail("unpaired surrogate") }
                    position += 1
                    return String(scalars)
                }
                if byte < 0x20 { throw fail("control character in a string") }
                if byte == 0x5C {
                    position += 1
                    guard position < bytes.count else { throw fail("unterminated escape") }
                    let escape = bytes[position]
                    position += 1
                    var code: UInt32
                    switch escape {
                    case 0x22: code = 0x22
                    case 0x5C: code = 0x5C
                    case 0x2F: code = 0x2F
                    case 0x62: code = 0x08
                    case 0x66: code = 0x0C
                    case 0x6E: code = 0x0A
                    case 0x72: code = 0x0D
                    case 0x74: code = 0x09
                    case 0x75:
                        guard position + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
                        else { throw fail("invalid \\u escape") }
                        position += 4
                        code = value
                    default: throw fail("invalid escape")
                    }
                    if let high = pendingHigh {
                        guard (0xDC00...0xDFFF).contains(code) else { throw fail("unpaired surrogate") }
                        code = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)
                        pendingHigh = nil
                    } else if (0xD800...0xDBFF).contains(code) {
                        pendingHigh = code
                        continue
                    } else if (0xDC00...0xDFFF).contains(code) {
                        throw fail("unpaired surrogate")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("invalid code point") }
                    scalars.append(scalar)
                    continue
                }
                guard pendingHigh == nil else { throw fail("unpaired surrogate") }
                // One UTF-8 sequence, validated by the standard library's decoder.
                let length: Int
                switch byte {
                case 0x00..<0x80: length = 1
                case 0xC2..<0xE0: length = 2
                case 0xE0..<0xF0: length = 3
                case 0xF0..<0xF5: length = 4
                default: throw fail("invalid UTF-8")
                }
                guard position + length <= bytes.count else { throw fail("invalid UTF-8") }
                var decoder = UTF8()
                var iterator = bytes[position..<position + length].makeIterator()
                guard case .scalarValue(let scalar) = decoder.decode(&iterator), iterator.next() == nil else { throw fail("invalid UTF-8") }
                scalars.append(scalar)
                position += length
            }
        }
    }
}

extension JSONNode {
    /// A name quoted in an error message: at most 40 characters, control characters and
    /// markup replaced, so a refusal never carries an attacker's line breaks or tags.
    static func escapedForMessage(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(40) {
            if scalar.value < 0x20 || scalar.value == 0x7F || "<>&\"'".unicodeScalars.contains(scalar) || scalar.value > 0x7E {
                out += "?"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
