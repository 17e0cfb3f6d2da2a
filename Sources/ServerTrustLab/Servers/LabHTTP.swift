// Minimal HTTP/1.1 for the Lab servers (RFC 9112): request line, headers, Content-Length
// bodies, keep-alive, and responses with a fixed length or chunked transfer coding.

/// One HTTP/1.1 request as a ``LabTLSServer`` received it.
public struct LabHTTPRequest: Sendable {
    /// The method, such as `GET`.
    public var method: String
    /// The request target as sent, such as `/path?query`.
    public var target: String
    /// The protocol version from the request line, such as `HTTP/1.1`.
    public var version: String
    /// Header fields in arrival order, names as sent.
    public var headers: [(name: String, value: String)]
    /// The body (empty when there was no Content-Length).
    public var body: [UInt8]
    /// The SNI host name of the TLS connection the request arrived on, if the client sent one.
    public var serverName: String?
    /// The zero-based index of the connection (in accept order) the request arrived on.
    public var connectionIndex: Int

    /// Creates a request (the server builds these; tests may build them to call handlers).
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - target: The request target.
    ///   - version: The HTTP version text.
    ///   - headers: Header fields in order.
    ///   - body: The body bytes.
    ///   - serverName: The TLS SNI name, if any.
    ///   - connectionIndex: The connection's accept index.
    public init(
        method: String, target: String, version: String = "HTTP/1.1", headers: [(name: String, value: String)] = [],
        body: [UInt8] = [], serverName: String? = nil, connectionIndex: Int = 0
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
        self.serverName = serverName
        self.connectionIndex = connectionIndex
    }

    /// The path part of ``target`` (before any `?`).
    public var path: String {
        String(target.prefix { $0 != "?" })
    }

    /// The value of the first header named `name` (compared case-insensitively).
    ///
    /// - Parameter name: The field name.
    /// - Returns: The value with surrounding whitespace removed, or `nil`.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// Whether the connection stays open after the response: HTTP/1.1 unless
    /// `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    public var keepsAlive: Bool {
        let tokens = (header("Connection") ?? "").lowercased().split(separator: ",").map { $0.labTrimmedHTTPWhitespace }
        if tokens.contains("close") { return false }
        if version == "HTTP/1.0" { return tokens.contains("keep-alive") }
        return true
    }
}

/// An HTTP response produced by a ``LabTLSServer`` handler.
public struct LabHTTPResponse: Sendable {
    /// How the body is framed on the wire.
    public enum Body: Sendable, Hashable {
        /// A body sent with `Content-Length`.
        case bytes([UInt8])
        /// A body sent with `Transfer-Encoding: chunked`, one chunk per element (empty
        /// elements are skipped, since an empty chunk would end the body early).
        case chunked([[UInt8]])
        /// `count` copies of `byte`, sent with `Content-Length` and written a megabyte at a
        /// time, so a server can send a body far larger than its memory (gigabytes, for clients'
        /// memory bounds).
        case repeated(UInt8, count: Int)

        /// All body bytes, as the client sees them after decoding.
        public var bytes: [UInt8] {
            switch self {
            case .bytes(let bytes): return bytes
            case .chunked(let chunks): return chunks.flatMap { $0 }
            case .repeated(let byte, let count): return [UInt8](repeating: byte, count: count)
            }
        }
    }

    /// The status code, such as 200.
    public var status: Int
    /// The reason phrase; `nil` uses the standard one for ``status``.
    public var reason: String?
    /// Header fields to send. `Content-Length`, `Transfer-Encoding` and `Connection` are
    /// added by the server when absent.
    public var headers: [(name: String, value: String)]
    /// The body and its framing.
    public var body: Body
    /// Send nothing and close the connection instead (with close_notify): what a keep-alive
    /// server that timed the connection out just as the request arrived looks like to the
    /// client. Clients retry such a request on a fresh connection (curl: "Connection died,
    /// retrying a fresh connect"), resending its body.
    public var dropsConnection = false

    /// A "response" that closes the connection without answering (``dropsConnection``).
    public static var droppedConnection: LabHTTPResponse {
        var response = LabHTTPResponse()
        response.dropsConnection = true
        return response
    }

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - status: The status code.
    ///   - reason: The reason phrase, or `nil` for the standard one.
    ///   - headers: Header fields.
    ///   - body: The body.
    public init(status: Int = 200, reason: String? = nil, headers: [(name: String, value: String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response.
    ///
    /// - Parameters:
    ///   - text: The body text.
    ///   - status: The status code.
    /// - Returns: The response.
    public static func text(_ text: String, status: Int = 200) -> LabHTTPResponse {
        LabHTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: .bytes(Array(text.utf8)))
    }

    /// A response whose body is sent with chunked transfer coding.
    ///
    /// - Parameters:
    ///   - chunks: The chunks, in order.
    ///   - status: The status code.
    ///   - contentType: The `Content-Type` value.
    /// - Returns: The response.
    public static func chunked(_ chunks: [[UInt8]], status: Int = 200, contentType: String = "application/octet-stream") -> LabHTTPResponse {
        LabHTTPResponse(status: status, headers: [("Content-Type", contentType)], body: .chunked(chunks))
    }

    /// The value of the first header named `name` (case-insensitive).
    ///
    /// - Parameter name: The field name.
    /// - Returns: The value, or `nil`.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// The standard reason phrase for common status codes.
    ///
    /// - Parameter status: The status code.
    /// - Returns: The phrase, or `"Status"` for codes the Lab does not know.
    public static func standardReason(_ status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 407: return "Proxy Authentication Required"
        case 411: return "Length Required"
        case 413: return "Content Too Large"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }

    /// The bytes on the wire for this response.
    ///
    /// - Parameters:
    ///   - headRequest: Omit the body (the answer to `HEAD`), keeping its length header.
    ///   - closing: Add `Connection: close`.
    func serialized(headRequest: Bool, closing: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(reason ?? Self.standardReason(status))\r\n"
        var fields = headers
        // 1xx, 204 and 304 responses have no body and must not carry framing headers.
        let bodiless = (100..<200).contains(status) || status == 204 || status == 304
        if !bodiless && header("Content-Length") == nil && header("Transfer-Encoding") == nil {
            switch body {
            case .bytes(let bytes): fields.append(("Content-Length", String(bytes.count)))
            case .chunked: fields.append(("Transfer-Encoding", "chunked"))
            case .repeated(_, let count): fields.append(("Content-Length", String(count)))
            }
        }
        if closing && header("Connection") == nil { fields.append(("Connection", "close")) }
        if header("Server") == nil { fields.append(("Server", "ServerTrustLab")) }
        for field in fields { head += "\(field.name): \(field.value)\r\n" }
        head += "\r\n"
        var wire = Array(head.utf8)
        guard !headRequest && !bodiless else { return wire }
        switch body {
        case .bytes(let bytes):
            wire += bytes
        case .chunked(let chunks):
            for chunk in chunks where !chunk.isEmpty {
                wire += Array((String(chunk.count, radix: 16) + "\r\n").utf8) + chunk + [13, 10]
            }
            wire += Array("0\r\n\r\n".utf8)
        case .repeated:
            break  // written after the head by the server, a megabyte at a time
        }
        return wire
    }
}

/// Why a request could not be parsed; each maps to the status the server answers with.
struct LabHTTPParseFailure: Error {
    var status: Int
    var reason: String
}

/// An HTTP/1.x message head: start line and header fields.
struct LabHTTPHead {
    var startLine: [String]
    var headers: [(name: String, value: String)]
    /// Bytes the head occupied, including the blank line.
    var length: Int

    /// The first value of `name`, case-insensitively.
    func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    static let maximumLength = 64 * 1024
    static let maximumFields = 100

    /// Parses a head from the start of `buffer`, or returns `nil` if the blank line has not
    /// arrived yet.
    static func parse(_ buffer: [UInt8]) throws(LabHTTPParseFailure) -> LabHTTPHead? {
        guard let end = headEnd(buffer) else {
            if buffer.count > maximumLength { throw LabHTTPParseFailure(status: 431, reason: "header section too large") }
            return nil
        }
        guard end <= maximumLength else { throw LabHTTPParseFailure(status: 431, reason: "header section too large") }
        // Header field values are ISO-8859-1/opaque per RFC 9110; decoding as UTF-8 with
        // replacement is fine for a test server.
        let text = String(decoding: buffer[..<(end - 4)], as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        // RFC 9112 §2.2: a server should ignore at least one empty line before the request line.
        while lines.first == "" { lines.removeFirst() }
        guard let first = lines.first else { throw LabHTTPParseFailure(status: 400, reason: "empty request") }
        let startLine = first.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard startLine.count == 3 else { throw LabHTTPParseFailure(status: 400, reason: "malformed request line") }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw LabHTTPParseFailure(status: 400, reason: "header line without colon") }
            let name = String(line[..<colon])
            // RFC 9112 §5.1: no whitespace between the field name and the colon.
            guard !name.isEmpty, !name.contains(" "), !name.contains("\t") else {
                throw LabHTTPParseFailure(status: 400, reason: "malformed header name")
            }
            headers.append((name, String(line[line.index(after: colon)...]).labTrimmedHTTPWhitespace))
        }
        guard headers.count <= maximumFields else { throw LabHTTPParseFailure(status: 431, reason: "too many header fields") }
        return LabHTTPHead(startLine: startLine, headers: headers, length: end)
    }

    /// The index just past the first `\r\n\r\n`, if present.
    static func headEnd(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 3..<buffer.count
        where buffer[index] == 10 && buffer[index - 1] == 13
            && buffer[index - 2] == 10 && buffer[index - 3] == 13
        {
            return index + 1
        }
        return nil
    }
}

/// Incremental request parsing over a connection's receive buffer.
enum LabHTTPRequestParser {
    /// The largest request body the Lab server accepts.
    static let maximumBodyLength = 16 * 1024 * 1024

    /// What the buffer holds so far.
    enum Progress {
        /// More bytes are needed.
        case incomplete
        /// The head is complete and announces a body with `Expect: 100-continue`; the body
        /// has not started yet.
        case expectsContinue
        /// A complete request, and how many buffer bytes it used.
        case request(LabHTTPRequest, consumed: Int)
    }

    static func parse(_ buffer: [UInt8], continueSent: Bool) throws(LabHTTPParseFailure) -> Progress {
        guard let head = try LabHTTPHead.parse(buffer) else { return .incomplete }
        let version = head.startLine[2]
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            throw LabHTTPParseFailure(status: 505, reason: "unsupported version \(version)")
        }
        if head.header("Transfer-Encoding") != nil {
            throw LabHTTPParseFailure(status: 501, reason: "chunked request bodies are not implemented")
        }
        var bodyLength = 0
        if let text = head.header("Content-Length") {
            guard let length = Int(text), length >= 0 else { throw LabHTTPParseFailure(status: 400, reason: "bad Content-Length") }
            guard length <= maximumBodyLength else { throw LabHTTPParseFailure(status: 413, reason: "body too large") }
            bodyLength = length
        }
        let available = buffer.count - head.length
        if available < bodyLength {
            let expects = head.header("Expect")?.lowercased() == "100-continue"
            return expects && !continueSent && available == 0 ? .expectsContinue : .incomplete
        }
        let body = Array(buffer[head.length..<(head.length + bodyLength)])
        let request = LabHTTPRequest(
            method: head.startLine[0], target: head.startLine[1], version: version,
            headers: head.headers, body: body)
        return .request(request, consumed: head.length + bodyLength)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var labTrimmedHTTPWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...last])
    }
}
