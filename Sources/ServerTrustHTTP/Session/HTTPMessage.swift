
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

    /// The token.
    public var description: String { rawValue }

    /// Methods whose parameters AFNetworking's HTTP serializer puts in the query string.
    var encodesParametersInURL: Bool { self == .get || self == .head || self == .delete }
}

/// Header fields in order; names compare case-insensitively.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// The fields, in order, names as given.
    public private(set) var fields: [(name: String, value: String)]

    /// Creates headers from fields.
    ///
    /// - Parameter fields: The fields in order.
    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
    }

    /// Creates headers from a literal.
    ///
    /// - Parameter elements: Name/value pairs.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value of `name`; setting replaces every field of that name (`nil` removes them).
    public subscript(name: String) -> String? {
        get {
            let wanted = name.lowercased()
            return fields.first { $0.name.lowercased() == wanted }?.value
        }
        set {
            remove(name)
            if let newValue { fields.append((name, newValue)) }
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
        fields.append((name, value))
    }

    /// Removes every field named `name`.
    ///
    /// - Parameter name: The field name.
    public mutating func remove(_ name: String) {
        let wanted = name.lowercased()
        fields.removeAll { $0.name.lowercased() == wanted }
    }

    /// Adds the fields of `other` that are not already present here (by name).
    func merging(defaults other: HTTPHeaders) -> HTTPHeaders {
        var result = self
        for field in other.fields where self[field.name] == nil { result.add(field.name, field.value) }
        return result
    }

    /// Iterates the fields.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// `Name: value` lines joined with `\n`.
    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }
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
    /// Seconds for the whole request, overriding the session's ``HTTPSessionConfiguration/timeout``.
    public var timeout: Double?
    /// A credential for HTTP authentication on this request's origin: used when the server
    /// answers 401 (Basic or Digest), and sent before any 401 when ``sendsCredentialPreemptively``.
    public var credential: Credential?
    /// Send ``credential`` as Basic with the first request (as `curl -u` does).
    public var sendsCredentialPreemptively: Bool
    /// Always open a new connection and close it afterwards (no keep-alive for this request).
    public var usesFreshConnection: Bool
    /// Write the body to this file instead of keeping it in ``HTTPResponse/body``.
    public var destinationPath: String?
    /// Upload progress.
    public var uploadProgress: ProgressHandler?
    /// Download progress.
    public var downloadProgress: ProgressHandler?
    /// The task-level challenge handler for this request (overrides the session's).
    public var challengeHandler: TaskChallengeHandler?

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
        self.timeout = nil
        self.credential = nil
        self.sendsCredentialPreemptively = false
        self.usesFreshConnection = false
        self.destinationPath = nil
        self.uploadProgress = nil
        self.downloadProgress = nil
        self.challengeHandler = nil
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
    /// The trust decision for the connection (``TrustDecision/isFromEarlierHandshake`` for a
    /// reused connection or a resumed TLS session); `nil` for plain HTTP.
    public let trustDecision: TrustDecision?
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
