/// What a request puts on the wire as given: the method, header fields, credentials, the
/// URL and multipart part headers, checked before anything is sent, so that no caller-given
/// text can end a line of the request and start another (request smuggling, header
/// injection). libcurl writes the method, each `Name: value` line and the request target
/// verbatim; a CR or LF in any of them would reach the server as a line break, and a NUL
/// would silently cut the C string libcurl is given.
///
/// Every refusal is ``HTTPError/invalidRequest(_:)`` naming the field (`header "X-A" value`,
/// `multipart part 2 filename`, `URL host`) and the offending byte and its offset; values
/// are not echoed (a header value may be a secret), names and URLs are, with control
/// characters escaped, so the message stays one line.
enum RequestValidation {
    // MARK: - Grammar

    /// RFC 9110 §5.6.2: `tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
    /// "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA`.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// A control character (RFC 5234 CTL: %x00-1F / %x7F).
    static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

    /// The first byte of `text` that is not a tchar, with its offset; `nil` for a token.
    /// An empty text is reported at offset 0 with no byte.
    private static func firstNonToken(_ text: String) -> (offset: Int, byte: UInt8?)? {
        var offset = 0
        for byte in text.utf8 {
            if !isTokenCharacter(byte) { return (offset, byte) }
            offset += 1
        }
        return offset == 0 ? (0, nil) : nil
    }

    /// The first control character of `text` (HTAB allowed when `allowsTab`), with its offset.
    private static func firstControl(_ text: String, allowsTab: Bool) -> (offset: Int, byte: UInt8?)? {
        var offset = 0
        for byte in text.utf8 {
            if isControl(byte) && !(allowsTab && byte == 0x09) { return (offset, byte) }
            offset += 1
        }
        return nil
    }

    // MARK: - Fields

    /// RFC 9110 §9.1: a method is a token (so neither a line break nor a space, which would
    /// end the request line's method, can be in it).
    static func checkMethod(_ method: HTTPMethod) throws(HTTPError) {
        if let bad = firstNonToken(method.rawValue) {
            throw HTTPError.invalidRequest("method \(quoted(method.rawValue)) is not a token (RFC 9110 §9.1): \(describe(bad))")
        }
    }

    /// RFC 9110 §5.1: a field name is a token; §5.5: a field value has no CR, LF or NUL
    /// ("invalid and dangerous") nor other control characters (invalid), HTAB excepted.
    ///
    /// - Parameter origin: How the fields are named in the message (`header`, `default header`).
    static func checkHeaders(_ headers: HTTPHeaders, origin: String = "header") throws(HTTPError) {
        for field in headers.fields {
            try checkField(name: field.name, value: field.value, origin: origin)
        }
    }

    static func checkField(name: String, value: String, origin: String) throws(HTTPError) {
        if let bad = firstNonToken(name) {
            throw HTTPError.invalidRequest("\(origin) name \(quoted(name)) is not a token (RFC 9110 §5.1): \(describe(bad))")
        }
        if let bad = firstControl(value, allowsTab: true) {
            throw HTTPError.invalidRequest("\(origin) \(quoted(name)) value: \(describe(bad)) (RFC 9110 §5.5)")
        }
    }

    /// RFC 7617 §2: neither the user-id nor the password may contain control characters, and
    /// a user-id containing a colon is invalid for Basic (the server would split it there).
    /// Digest (RFC 7616 §3.4) quotes the user name, where a control character is not allowed
    /// either. libcurl sends Basic as base64, but it also writes a Digest user name into the
    /// header as it is, and cuts both at a NUL.
    ///
    /// - Parameters:
    ///   - origin: `credential`, `proxy credential`, `credential for <space>`.
    ///   - isBasic: Whether the credential is sent as Basic (a colon in the user name refused).
    static func checkCredential(user: String, password: String, origin: String, isBasic: Bool) throws(HTTPError) {
        if let bad = firstControl(user, allowsTab: false) {
            throw HTTPError.invalidRequest("\(origin) user name: \(describe(bad)) (RFC 7617 §2)")
        }
        if let bad = firstControl(password, allowsTab: false) {
            throw HTTPError.invalidRequest("\(origin) password: \(describe(bad)) (RFC 7617 §2)")
        }
        if isBasic, let colon = user.utf8.firstIndex(of: UInt8(ascii: ":")) {
            let offset = user.utf8.distance(from: user.utf8.startIndex, to: colon)
            throw HTTPError.invalidRequest("\(origin) user name: ':' at byte \(offset) (RFC 7617 §2: a Basic user-id cannot contain a colon)")
        }
    }

    /// Text written into a header as a quoted parameter (a multipart `name=` or
    /// `filename=`): no control character at all, HTAB included, which no browser sends there.
    static func checkParameter(_ text: String, field: String) throws(HTTPError) {
        if let bad = firstControl(text, allowsTab: false) {
            throw HTTPError.invalidRequest("\(field): \(describe(bad))")
        }
    }

    /// A URL as text: no control character or NUL anywhere (RFC 3986 §2 has none in any
    /// component; libcurl would either refuse it as a transport error or, for a NUL, see a
    /// shorter URL).
    ///
    /// - Parameter field: `URL`, `base URL`, `proxy URL`, `redirect Location`.
    static func checkURLText(_ text: String, field: String) throws(HTTPError) {
        if let bad = firstControl(text, allowsTab: false) {
            throw HTTPError.invalidRequest("\(field): \(describe(bad)) in \(displayed(text))")
        }
    }

    /// A part of a URL that libcurl percent-decodes before it uses it (the host, in `Host`
    /// and SNI): a percent-encoded control character there becomes a raw one, so the decoded
    /// form is checked too. (The user information is decoded into credentials, checked as
    /// such.)
    static func checkDecodedURLPart(_ decoded: String?, part: String, url: String) throws(HTTPError) {
        guard let decoded else { return }
        if let bad = firstControl(decoded, allowsTab: false) {
            throw HTTPError.invalidRequest("URL \(part) (percent-decoded): \(describe(bad)) in \(displayed(url))")
        }
    }

    /// Fields given to a session: its default headers, the base URL, the proxy URL and its
    /// credential, and the `resolve` entries.
    static func checkConfiguration(_ configuration: HTTPSessionConfiguration) throws(HTTPError) {
        try checkHeaders(configuration.defaultHeaders, origin: "default header")
        if let base = configuration.baseURL { try checkURLText(base, field: "base URL") }
        if let proxy = configuration.proxy {
            try checkURLText(proxy.url, field: "proxy URL")
            if case .password(let user, let password)? = proxy.credential?.kind {
                // The proxy credential is sent as Basic (`CURLAUTH_BASIC`).
                try checkCredential(user: user, password: password, origin: "proxy credential", isBasic: true)
            }
        }
        for entry in configuration.resolve {
            if let bad = firstControl(entry, allowsTab: false) {
                throw HTTPError.invalidRequest("resolve entry \(displayed(entry)): \(describe(bad))")
            }
        }
    }

    /// Everything of `request` itself that is sent as given (the URL is checked when it is
    /// resolved, ``RequestTarget``).
    static func check(_ request: HTTPRequest) throws(HTTPError) {
        try checkMethod(request.method)
        try checkHeaders(request.headers)
        if case .password(let user, let password)? = request.credential?.kind {
            // Preemptive credentials go out as Basic; otherwise the scheme is the server's
            // choice and the colon is checked when it is known (RequestExecution.authenticate).
            try checkCredential(user: user, password: password, origin: "credential", isBasic: request.sendsCredentialPreemptively)
        }
    }

    /// RFC 9112 §6: the body's framing is the transport's, made from the body it sends. A
    /// caller's `Content-Length` that disagrees with that body (libcurl sends the caller's
    /// field instead of its own) makes the server read a different body than was sent and
    /// take the rest for the next request on the connection; a `Transfer-Encoding` beside the
    /// length libcurl announces is the classic CL.TE smuggle (§6.1: a sender must not send
    /// both). So a `Content-Length` must equal the body's length, and `Transfer-Encoding` is
    /// never taken from the caller.
    /// - Parameters:
    ///   - headers: The fields the hop sends (the request's and the session's defaults).
    ///   - bodyLength: The bytes the hop sends as its body (0 for none).
    /// - Returns: The refusal, or `nil`.
    static func checkFraming(_ headers: HTTPHeaders, bodyLength: Int64) -> HTTPError? {
        if !headers.values("Transfer-Encoding").isEmpty {
            return .invalidRequest("header \"Transfer-Encoding\": the transport frames the body (RFC 9112 §6.1), a request does not set it")
        }
        for value in headers.values("Content-Length") {
            // Optional whitespace around the value is not part of it (RFC 9110 §5.5).
            let digits = value.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                Int64(String(decoding: digits, as: UTF8.self)) == bodyLength
            else {
                return .invalidRequest(
                    "header \"Content-Length\" is \(quoted(value)) but the body is \(bodyLength) bytes (RFC 9112 §6.2: it must be the body's length)")
            }
        }
        return nil
    }

    // MARK: - Messages

    /// `CR (0x0D) at byte 5`, or `empty` for an empty token.
    private static func describe(_ bad: (offset: Int, byte: UInt8?)) -> String {
        guard let byte = bad.byte else { return "empty" }
        return "\(name(of: byte)) at byte \(bad.offset)"
    }

    private static func name(of byte: UInt8) -> String {
        let hex = "0x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
        switch byte {
        case 0x00: return "NUL (\(hex))"
        case 0x09: return "HTAB (\(hex))"
        case 0x0A: return "LF (\(hex))"
        case 0x0D: return "CR (\(hex))"
        case 0x20: return "SP (\(hex))"
        case 0x7F: return "DEL (\(hex))"
        case 0x80...: return "non-ASCII byte \(hex)"
        default: return isControl(byte) ? "control character \(hex)" : "'\(Character(Unicode.Scalar(byte)))' (\(hex))"
        }
    }

    private static func quoted(_ text: String) -> String { "\"" + displayed(text) + "\"" }

    /// `text` with control characters escaped (`\r`, `\n`, `\0`, `\t`, `\u{1B}`) and cut after
    /// 200 characters, for one-line messages.
    static func displayed(_ text: String) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == 200 {
                out += "…"
                break
            }
            count += 1
            switch scalar.value {
            case 0x0D: out += "\\r"
            case 0x0A: out += "\\n"
            case 0x00: out += "\\0"
            case 0x09: out += "\\t"
            case 0x01..<0x20, 0x7F, 0x85, 0x2028, 0x2029:
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
