public import ServerTrust

/// An HTTP method.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The method token, such as `GET`.
    public let rawValue: String

    /// Wraps a method token.
    ///
    /// - Parameter rawValue: The token (upper-case by convention).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Wraps a method token.
    ///
    /// - Parameter value: The token.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// `GET`.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH`.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `OPTIONS`.
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// `TRACE`.
    public static let trace = HTTPMethod(rawValue: "TRACE")

    /// The token.
    public var description: String { rawValue }

    /// Methods whose parameters AFNetworking's HTTP serializer puts in the query string.
    var encodesParametersInURL: Bool { self == .get || self == .head || self == .delete }
}

/// Header fields in order; names compare case-insensitively.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// Fields built by the caller, or a header block as received, kept as its bytes until
    /// someone asks for it. A response carries a dozen fields that most callers never read;
    /// making two `String`s per field for every response was a measurable part of a
    /// keep-alive request's client time, so a received block is only parsed when read
    /// (``fields``, iteration) and a lookup by name scans the bytes and decodes one value.
    private var storage: Storage

    private enum Storage: Sendable {
        case fields([(name: String, value: String)])
        /// Field lines as received (each ending in LF or CRLF), status line excluded.
        case received([UInt8])
    }

    /// The fields, in order, names as given.
    public private(set) var fields: [(name: String, value: String)] {
        get {
            switch storage {
            case .fields(let fields): return fields
            case .received(let bytes): return Self.parse(bytes)
            }
        }
        set { storage = .fields(newValue) }
    }

    /// Creates headers from fields.
    ///
    /// - Parameter fields: The fields in order.
    public init(_ fields: [(name: String, value: String)] = []) {
        self.storage = .fields(fields)
    }

    /// Creates headers from a literal.
    ///
    /// - Parameter elements: Name/value pairs.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.storage = .fields(elements.map { (name: $0.0, value: $0.1) })
    }

    /// A received block: field lines as curl delivered them (obsolete line folding included).
    init(receivedLines bytes: [UInt8]) {
        self.storage = .received(bytes)
    }

    /// Whether there is no field.
    var isEmpty: Bool {
        switch storage {
        case .fields(let fields): return fields.isEmpty
        case .received(let bytes): return Self.parse(bytes).isEmpty
        }
    }

    /// Mutates the field list in place (parsing a received block first).
    private mutating func withFields<Result>(_ body: (inout [(name: String, value: String)]) -> Result) -> Result {
        var list = fields
        storage = .fields([])  // drops the stored reference, so `list` is uniquely referenced
        defer { storage = .fields(list) }
        return body(&list)
    }

    /// The first value of `name`; setting replaces every field of that name (`nil` removes them).
    public subscript(name: String) -> String? {
        get {
            if case .received(let bytes) = storage, let found = Self.firstValue(of: name, in: bytes) {
                return found
            }
            let wanted = name.lowercased()
            return fields.first { $0.name.lowercased() == wanted }?.value
        }
        set {
            remove(name)
            if let newValue { withFields { $0.append((name, newValue)) } }
        }
    }

    /// Every value of `name`, in order.
    ///
    /// - Parameter name: The field name.
    /// - Returns: The values.
    public func values(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// Appends a field (keeping existing ones of the same name).
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The value.
    public mutating func add(_ name: String, _ value: String) {
        withFields { $0.append((name, value)) }
    }

    /// Removes every field named `name`.
    ///
    /// - Parameter name: The field name.
    public mutating func remove(_ name: String) {
        let wanted = name.lowercased()
        withFields { $0.removeAll { $0.name.lowercased() == wanted } }
    }

    /// Adds the fields of `other` that are not already present here (by name).
    func merging(defaults other: HTTPHeaders) -> HTTPHeaders {
        if other.isEmpty { return self }
        var result = self
        for field in other.fields where self[field.name] == nil { result.add(field.name, field.value) }
        return result
    }

    /// Iterates the fields.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// `Name: value` lines joined with `\n`.
    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }

    // MARK: - Received blocks

    /// Calls `body` with each line of `bytes` (without its LF or CRLF) until it returns false.
    private static func forEachLine(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Bool) {
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 10 { end += 1 }
            let next = end + 1
            while end > start && (bytes[end - 1] == 13 || bytes[end - 1] == 10) { end -= 1 }
            if !body(start..<end) { return }
            start = next
        }
    }

    /// `range` without leading and trailing spaces and tabs.
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper && (bytes[lower] == 32 || bytes[lower] == 9) { lower += 1 }
        while upper > lower && (bytes[upper - 1] == 32 || bytes[upper - 1] == 9) { upper -= 1 }
        return lower..<upper
    }

    private static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[trimmed(bytes, range)]), as: UTF8.self)
    }

    /// The fields of a received block: `name: value` lines, a line starting with a space or
    /// tab continues the previous value (obsolete folding, RFC 9112 §5.2, joined with a
    /// space), and lines without a colon are skipped.
    private static func parse(_ block: [UInt8]) -> [(name: String, value: String)] {
        block.withUnsafeBufferPointer { bytes in
            var result: [(name: String, value: String)] = []
            forEachLine(bytes) { line in
                guard !line.isEmpty else { return true }
                if bytes[line.lowerBound] == 32 || bytes[line.lowerBound] == 9 {
                    if let last = result.popLast() { result.append((last.name, last.value + " " + text(bytes, line))) }
                } else if let colon = line.first(where: { bytes[$0] == UInt8(ascii: ":") }) {
                    result.append((text(bytes, line.lowerBound..<colon), text(bytes, (colon + 1)..<line.upperBound)))
                }
                return true
            }
            return result
        }
    }

    /// The first value of `name` in a received block (`.some(nil)` when there is none), found
    /// without decoding the other fields; `nil` when a name is outside what this byte
    /// comparison can judge (non-ASCII bytes, where `lowercased()` is the rule), so the caller
    /// parses instead.
    private static func firstValue(of name: String, in block: [UInt8]) -> String?? {
        var wanted = Array(name.utf8)
        guard wanted.allSatisfy({ $0 < 128 }) else { return nil }
        for index in wanted.indices where wanted[index] >= 65 && wanted[index] <= 90 { wanted[index] += 32 }
        return block.withUnsafeBufferPointer { bytes -> String?? in
            var value: String?
            var undecidable = false
            forEachLine(bytes) { line in
                guard !line.isEmpty else { return true }
                let folded = bytes[line.lowerBound] == 32 || bytes[line.lowerBound] == 9
                if value != nil {
                    // The match is complete unless this line continues it.
                    guard folded else { return false }
                    value! += " " + text(bytes, line)
                    return true
                }
                guard !folded, let colon = line.first(where: { bytes[$0] == UInt8(ascii: ":") }) else { return true }
                let nameRange = trimmed(bytes, line.lowerBound..<colon)
                if bytes[nameRange].contains(where: { $0 >= 128 }) {
                    undecidable = true
                    return false
                }
                guard nameRange.count == wanted.count else { return true }
                for (offset, byte) in bytes[nameRange].enumerated() {
                    let lower = byte >= 65 && byte <= 90 ? byte + 32 : byte
                    if lower != wanted[offset] { return true }
                }
                value = text(bytes, (colon + 1)..<line.upperBound)
                return true
            }
            return undecidable ? nil : .some(value)
        }
    }
}

/// A progress report for an upload or download.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes moved so far.
    public let completed: Int64
    /// Bytes expected, or `nil` while unknown.
    public let total: Int64?

    /// Creates a report.
    ///
    /// - Parameters:
    ///   - completed: Bytes moved.
    ///   - total: Bytes expected, if known.
    public init(completed: Int64, total: Int64?) {
        self.completed = completed
        self.total = total
    }

    /// The completed fraction in 0…1, or `nil` while the total is unknown.
    public var fraction: Double? {
        guard let total, total > 0 else { return nil }
        return Double(completed) / Double(total)
    }
}

/// A progress callback. It runs on the session's transfer thread: keep it short.
public typealias ProgressHandler = @Sendable (TransferProgress) -> Void

/// A request body read while it is sent: in-memory pieces and files, in order (AFNetworking's
/// multipart body stream). Each attempt of a request (a 307/308 redirect, an authentication
/// retry) opens the files again and sends the whole body; `Content-Length` is the sum of the
/// pieces' sizes when the attempt starts, and a file is never read past the size it had then.
public struct StreamedBody: Sendable {
    /// One piece of the body.
    public enum Piece: Sendable, Hashable {
        /// Bytes from memory.
        case bytes([UInt8])
        /// A regular file's contents, read as they are sent.
        case file(path: String)
    }

    /// The pieces, in order.
    public var pieces: [Piece]

    /// Creates a body from its pieces.
    ///
    /// - Parameter pieces: The pieces, in order.
    public init(_ pieces: [Piece]) {
        self.pieces = pieces
    }
}

/// One HTTP request (`NSURLRequest` plus AFNetworking's per-task options).
public struct HTTPRequest: Sendable {
    /// The method.
    public var method: HTTPMethod
    /// An absolute URL, or a reference resolved against the session's base URL.
    public var url: String
    /// Header fields; the session's default headers fill in the missing ones.
    public var headers: HTTPHeaders
    /// The body, if any (sent with `Content-Length`).
    public var body: [UInt8]?
    /// A body read while it is sent instead of held in memory: pieces of memory and files,
    /// in order (a multipart form with file parts, see ``MultipartFormData/appendFile(name:path:filename:contentType:)``).
    /// Setting both this and ``body`` is an invalid request.
    public var streamedBody: StreamedBody?
    /// A file to send as the body, read while it is sent instead of held in memory
    /// (URLSession's `uploadTask(with:fromFile:)`, AFNetworking's
    /// `uploadTaskWithRequest:fromFile:`): ``streamedBody`` with the file as its one piece.
    public var bodyFilePath: String? {
        get {
            guard let pieces = streamedBody?.pieces, pieces.count == 1, case .file(let path) = pieces[0] else { return nil }
            return path
        }
        set { streamedBody = newValue.map { StreamedBody([.file(path: $0)]) } }
    }
    /// Seconds for the whole request, overriding the session's ``HTTPSessionConfiguration/timeout``.
    public var timeout: Double?
    /// A credential for HTTP authentication on this request's origin: used when the server
    /// answers 401 (Basic or Digest), and sent before any 401 when ``sendsCredentialPreemptively``.
    public var credential: Credential?
    /// Send ``credential`` as Basic with the first request (as `curl -u` does).
    public var sendsCredentialPreemptively: Bool
    /// Always open a new connection and close it afterwards (no keep-alive for this request).
    public var usesFreshConnection: Bool
    /// Write the body to this file instead of keeping it in ``HTTPResponse/body``. The body goes
    /// to a temporary file in the same folder, renamed over this path only when the whole
    /// request has completed; a failure (a refused certificate or connection, a cut-off body)
    /// leaves the file as it was (URLSession's download task, without its temporary location).
    public var destinationPath: String?
    /// The most bytes of body kept in memory, overriding the session's
    /// ``HTTPSessionConfiguration/maximumResponseBodySize``.
    public var maximumResponseBodySize: Int?
    /// Upload progress.
    public var uploadProgress: ProgressHandler?
    /// Download progress.
    public var downloadProgress: ProgressHandler?
    /// The task-level challenge handler for this request (overrides the session's).
    ///
    /// Its answers about the server's connection are this request's alone. The request runs
    /// on connections of its own, which no other request of the session uses, by keep-alive,
    /// TLS resumption or HTTP/2 multiplexing: each of its connections is opened for it (with a
    /// full handshake, so the handler is asked) and closed after it. What the handler trusts
    /// therefore never serves a request decided by the session, and a client certificate it
    /// answers with is presented on this request's connections only: it is not remembered by
    /// the session's ``CredentialStore``, whatever its ``Credential/Persistence``. (The
    /// session's own identities, ``HTTPSessionConfiguration/clientIdentities`` and those its
    /// session-level handlers remembered, are still presented without asking.)
    public var challengeHandler: TaskChallengeHandler?
    /// An interceptor for this request alone, adapting before the session's and asked to
    /// retry before it (Alamofire's per-request interceptor).
    public var interceptor: (any RequestInterceptor)?

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - url: Absolute, or relative to the session's base URL.
    ///   - headers: Header fields.
    ///   - body: The body.
    public init(_ method: HTTPMethod = .get, _ url: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.streamedBody = nil
        self.timeout = nil
        self.credential = nil
        self.sendsCredentialPreemptively = false
        self.usesFreshConnection = false
        self.destinationPath = nil
        self.maximumResponseBodySize = nil
        self.uploadProgress = nil
        self.downloadProgress = nil
        self.challengeHandler = nil
        self.interceptor = nil
    }
}

/// Where the time of a request went, from libcurl's timers (seconds since the transfer started).
public struct HTTPTiming: Sendable, Hashable {
    /// Name resolution done.
    public let nameLookup: Double
    /// TCP connect done.
    public let connect: Double
    /// TLS handshake done (0 for a reused connection or plain HTTP).
    public let tlsHandshake: Double
    /// First response byte.
    public let firstByte: Double
    /// Transfer complete.
    public let total: Double
}

/// A trust decision as ``HTTPResponse`` stores it.
final class DecisionBox: Sendable {
    let decision: TrustDecision

    init(_ decision: TrustDecision) {
        self.decision = decision
    }
}

/// A complete HTTP response.
public struct HTTPResponse: Sendable, CustomStringConvertible {
    /// The URL that produced this response (after redirects).
    public let url: String
    /// The status code.
    public let statusCode: Int
    /// `HTTP/1.1` or `HTTP/2`.
    public let httpVersion: String
    /// The header fields of the final response.
    public let headers: HTTPHeaders
    /// The body, decoded from gzip/deflate (empty when written to a file).
    public let body: [UInt8]
    /// libcurl's timers.
    public let timing: HTTPTiming
    /// The TLS version (`TLSv1.3`) for HTTPS.
    public let tlsVersion: String?
    /// Whether the TLS session was resumed.
    public let tlsSessionResumed: Bool
    /// Whether the request went over a connection opened for it (false: keep-alive reuse).
    public let usedNewConnection: Bool
    /// The trust decision for the connection (``/ServerTrust/TrustDecision/isFromEarlierHandshake`` for a
    /// reused connection or a resumed TLS session); `nil` for plain HTTP.
    public var trustDecision: TrustDecision? { trustDecisionBox?.decision }
    /// The decision on an `https://` proxy's own certificate, made by
    /// ``ProxyConfiguration/serverTrust`` against the proxy's host name when the connection
    /// was opened (``/ServerTrust/TrustDecision/isFromEarlierHandshake`` for a reused connection:
    /// the session's last accepted proxy decision; TLS sessions to the proxy are never resumed,
    /// so every new proxy connection is decided in a full handshake); `nil`
    /// without a proxy or through an `http://` one. The origin's decision stays in
    /// ``trustDecision``: neither judges the other's peer.
    public var proxyTrustDecision: TrustDecision? { proxyTrustDecisionBox?.decision }
    /// The decisions are boxed: a response is moved several times per request, and an
    /// inline optional decision adds 153 bytes to each move and a retain and release per
    /// reference it holds to each copy. A keep-alive request shares the box of the decision
    /// it reports (one retain).
    let trustDecisionBox: DecisionBox?
    let proxyTrustDecisionBox: DecisionBox?
    /// Each redirect followed, oldest first (status and `Location`).
    public let redirects: [(statusCode: Int, location: String)]

    /// The body as UTF-8 text (invalid sequences replaced).
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The media type of `Content-Type` without parameters, lower-cased.
    public var mimeType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? value
        return type.trimmingSpaces.lowercased()
    }

    /// `200 https://… (HTTP/1.1, TLSv1.3, 1024 bytes)`.
    public var description: String {
        "\(statusCode) \(url) (\(httpVersion)\(tlsVersion.map { ", " + $0 } ?? ""), \(body.count) bytes)"
    }
}

extension StringProtocol {
    /// Without leading/trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        guard let start = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...last])
    }
}
