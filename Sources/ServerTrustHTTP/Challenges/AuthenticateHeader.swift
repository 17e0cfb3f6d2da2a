/// `WWW-Authenticate` / `Proxy-Authenticate` (RFC 9110 §11.6.1, §11.7.1): the schemes a server
/// offers and their parameters, read with the grammar of RFC 9110 §11.2–§11.3:
///
///     challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
///     auth-param = token BWS "=" BWS ( token / quoted-string )
///
/// One field may hold several challenges, and each challenge's parameters are comma-separated
/// too, so a comma can end a parameter or a challenge; a bare token not followed by `=` starts
/// the next challenge. Parameters are matched by whole name (case-insensitive, §11.2), never
/// by substring, so `xrealm=` or a `realm=` inside another parameter's quoted string cannot
/// set the realm. A parameter that is malformed (unterminated quoted string, missing value) is
/// dropped rather than guessed, so a garbled realm never matches a stored credential.
enum AuthenticateHeader {
    struct Challenge: Hashable {
        var method: ProtectionSpace.AuthenticationMethod
        var realm: String?
    }

    /// A challenge as written: its scheme (lower-cased), its token68 if it has one, and its
    /// parameters in order (names lower-cased; values unquoted).
    struct ParsedChallenge: Hashable {
        var scheme: String
        var token68: String?
        var parameters: [(name: String, value: String)]

        func parameter(_ name: String) -> String? {
            let wanted = name.lowercased()
            return parameters.first { $0.name == wanted }?.value
        }

        static func == (lhs: ParsedChallenge, rhs: ParsedChallenge) -> Bool {
            lhs.scheme == rhs.scheme && lhs.token68 == rhs.token68
                && lhs.parameters.map(\.name) == rhs.parameters.map(\.name)
                && lhs.parameters.map(\.value) == rhs.parameters.map(\.value)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(scheme)
            hasher.combine(token68)
            for parameter in parameters {
                hasher.combine(parameter.name)
                hasher.combine(parameter.value)
            }
        }
    }

    /// The Basic and Digest challenges offered in these field values, in order; other schemes
    /// (Bearer, Negotiate, …) are skipped because this client cannot answer them.
    static func challenges(_ values: [String]) -> [Challenge] {
        var result: [Challenge] = []
        for value in values {
            for challenge in parse(value) {
                let method: ProtectionSpace.AuthenticationMethod
                switch challenge.scheme {
                case "basic": method = .httpBasic
                case "digest": method = .httpDigest
                default: continue
                }
                result.append(Challenge(method: method, realm: challenge.parameter("realm")))
            }
        }
        return result
    }

    /// The parameter `name` of the first challenge in `field`, or `nil`.
    static func parameter(_ name: String, in field: String) -> String? {
        parse(field).first?.parameter(name)
    }

    /// Every challenge in one field value. Never fails: text that fits no production is
    /// skipped up to the next comma, as RFC 9110 §5.6.1 asks of list recipients.
    static func parse(_ field: String) -> [ParsedChallenge] {
        var reader = Reader(Array(field.utf8))
        var result: [ParsedChallenge] = []
        while true {
            reader.skipListSeparators()
            if reader.atEnd { break }
            guard let scheme = reader.token() else {
                reader.skipElement()
                continue
            }
            var challenge = ParsedChallenge(scheme: scheme.lowercased(), token68: nil, parameters: [])
            // A scheme must be followed by SP, a comma or the end (§11.3).
            guard reader.atEnd || reader.peek == .space || reader.peek == .comma || reader.peek == .tab else {
                reader.skipElement()
                continue
            }
            reader.skipWhitespace()
            if let token68 = reader.token68() {
                challenge.token68 = token68
            } else {
                readParameters(&reader, into: &challenge)
            }
            result.append(challenge)
        }
        return result
    }

    /// `#auth-param` after a scheme: stops before a token that starts the next challenge.
    private static func readParameters(_ reader: inout Reader, into challenge: inout ParsedChallenge) {
        while true {
            let elementStart = reader.position
            reader.skipListSeparators()
            if reader.atEnd { return }
            let start = reader.position
            guard let name = reader.token() else {
                reader.skipElement()
                continue
            }
            reader.skipWhitespace()
            guard reader.peek == .equals else {
                // A token without `=`: the next challenge's scheme. It must follow a comma,
                // otherwise it is junk inside this challenge.
                if reader.sawComma(between: elementStart, and: start) {
                    reader.position = start
                    return
                }
                reader.skipElement()
                continue
            }
            reader.advance()
            reader.skipWhitespace()
            let value: String?
            if reader.peek == .quote {
                value = reader.quotedString()
            } else {
                value = reader.token()
            }
            // Anything between the value and the next comma makes the parameter malformed.
            reader.skipWhitespace()
            guard let value, reader.atEnd || reader.peek == .comma else {
                reader.skipElement()
                continue
            }
            challenge.parameters.append((name.lowercased(), value))
        }
    }

    /// A byte cursor over one field value.
    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { position >= bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[position] }
        mutating func advance() { position += 1 }

        mutating func skipWhitespace() {
            while let byte = peek, byte == .space || byte == .tab { advance() }
        }

        mutating func skipListSeparators() {
            while let byte = peek, byte == .space || byte == .tab || byte == .comma { advance() }
        }

        func sawComma(between start: Int, and end: Int) -> Bool {
            start < end && bytes[start..<end].contains(.comma)
        }

        /// Skips to the next comma outside a quoted string (error recovery).
        mutating func skipElement() {
            var inQuotes = false
            while let byte = peek {
                if inQuotes {
                    if byte == .backslash { advance() } else if byte == .quote { inQuotes = false }
                } else if byte == .quote {
                    inQuotes = true
                } else if byte == .comma {
                    return
                }
                advance()
            }
        }

        /// `token = 1*tchar` (RFC 9110 §5.6.2).
        mutating func token() -> String? {
            let start = position
            while let byte = peek, Self.isTokenCharacter(byte) { advance() }
            guard position > start else { return nil }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        /// `token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="` (§11.2),
        /// only when it is the whole rest of the challenge; otherwise the cursor is unchanged.
        mutating func token68() -> String? {
            let start = position
            var end = position
            while end < bytes.count, Self.isToken68Character(bytes[end]) { end += 1 }
            guard end > start else { return nil }
            var padded = end
            while padded < bytes.count, bytes[padded] == .equals { padded += 1 }
            var after = padded
            while after < bytes.count, bytes[after] == .space || bytes[after] == .tab { after += 1 }
            // `name=value` continues past the "=", so it is an auth-param, not a token68.
            guard after == bytes.count || bytes[after] == .comma else { return nil }
            position = padded
            return String(decoding: bytes[start..<padded], as: UTF8.self)
        }

        /// `quoted-string` with `quoted-pair` (§5.6.4); `nil` when the closing quote is missing.
        mutating func quotedString() -> String? {
            advance()
            var value: [UInt8] = []
            while let byte = peek {
                advance()
                switch byte {
                case .quote:
                    return String(decoding: value, as: UTF8.self)
                case .backslash:
                    guard let escaped = peek else { return nil }
                    value.append(escaped)
                    advance()
                default:
                    value.append(byte)
                }
            }
            return nil
        }

        static func isTokenCharacter(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }

        static func isToken68Character(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "-._~+/".utf8.contains(byte)
            }
        }
    }
}

extension UInt8 {
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let tab = UInt8(ascii: "\t")
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let equals = UInt8(ascii: "=")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let backslash = UInt8(ascii: "\\")
}

extension HTTPResponse {
    /// The HTTP authentication challenges of this response's `WWW-Authenticate` fields that a
    /// password answers (Basic, Digest), in the server's order, each with its realm: what a
    /// layer that asks someone else for the credential (the URLSession drop-in asks the
    /// `URLSession`'s delegate and credential storage) needs to know.
    package var passwordChallenges: [(method: ProtectionSpace.AuthenticationMethod, realm: String?)] {
        AuthenticateHeader.challenges(headers.values("WWW-Authenticate")).map { ($0.method, $0.realm) }
    }
}
