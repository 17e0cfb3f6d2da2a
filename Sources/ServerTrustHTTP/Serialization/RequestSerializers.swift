internal import Foundation
internal import TrustEvaluation

/// Turns parameters into a request (AFNetworking's `AFURLRequestSerialization`).
public protocol RequestSerializer: Sendable {
    /// What the serializer encodes.
    associatedtype Parameters: Sendable

    /// Returns `request` with the parameters encoded into it.
    ///
    /// - Parameters:
    ///   - request: The request to complete.
    ///   - parameters: The parameters.
    /// - Returns: The request.
    /// - Throws: ``HTTPError/invalidRequest(_:)`` or ``HTTPError/fileError(path:reason:)``.
    func serialize(_ request: HTTPRequest, with parameters: Parameters) throws(HTTPError) -> HTTPRequest
}

/// `application/x-www-form-urlencoded` pairs: in the query string for GET, HEAD and DELETE,
/// in the body otherwise (AFNetworking's `AFHTTPRequestSerializer`); or always in the query.
public struct URLEncodedRequestSerializer: RequestSerializer {
    /// Where the pairs go.
    public enum Destination: Sendable, Hashable {
        /// Query for GET/HEAD/DELETE, body otherwise.
        case methodDependent
        /// Always the query string.
        case queryString
        /// Always the body.
        case httpBody
    }

    /// Where the pairs go.
    public var destination: Destination

    /// Creates a serializer.
    ///
    /// - Parameter destination: Where the pairs go (default method-dependent).
    public init(destination: Destination = .methodDependent) {
        self.destination = destination
    }

    /// Encodes the pairs.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - parameters: Name/value pairs, in order.
    /// - Returns: The request with a query or a form body.
    /// - Throws: ``HTTPError/invalidURL(_:)`` never for relative URLs (they are resolved later).
    public func serialize(_ request: HTTPRequest, with parameters: [(name: String, value: String)]) throws(HTTPError) -> HTTPRequest {
        var request = request
        let inQuery: Bool
        switch destination {
        case .methodDependent: inQuery = request.method.encodesParametersInURL
        case .queryString: inQuery = true
        case .httpBody: inQuery = false
        }
        if inQuery {
            guard !parameters.isEmpty else { return request }
            request.url = Self.appendingQuery(request.url, parameters)
        } else {
            request.body = Array(FormEncoding.encode(parameters).utf8)
            if request.headers["Content-Type"] == nil {
                request.headers["Content-Type"] = "application/x-www-form-urlencoded; charset=utf-8"
            }
        }
        return request
    }

    static func appendingQuery(_ url: String, _ pairs: [(name: String, value: String)]) -> String {
        var base = url
        var fragment = ""
        if let hash = base.firstIndex(of: "#") {
            fragment = String(base[hash...])
            base = String(base[..<hash])
        }
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return base + separator + FormEncoding.encode(pairs) + fragment
    }
}

/// A JSON body (`application/json`), AFNetworking's `AFJSONRequestSerializer`.
public struct JSONRequestSerializer: RequestSerializer {
    /// Creates a serializer.
    public init() {}

    /// Encodes the value as the body.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - parameters: The JSON value.
    /// - Returns: The request with a JSON body.
    /// - Throws: ``HTTPError/invalidRequest(_:)`` for non-finite numbers.
    public func serialize(_ request: HTTPRequest, with parameters: JSONValue) throws(HTTPError) -> HTTPRequest {
        var request = request
        do {
            request.body = try parameters.encoded()
        } catch {
            throw HTTPError.invalidRequest("JSON body: \(error)")
        }
        if request.headers["Content-Type"] == nil { request.headers["Content-Type"] = "application/json" }
        return request
    }
}

/// A JSON body from any `Encodable` value.
public struct EncodableJSONRequestSerializer<Value: Encodable & Sendable>: RequestSerializer {
    /// Creates a serializer.
    public init() {}

    /// Encodes the value with `JSONEncoder` (sorted keys).
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - parameters: The value.
    /// - Returns: The request with a JSON body.
    /// - Throws: ``HTTPError/invalidRequest(_:)`` if encoding fails.
    public func serialize(_ request: HTTPRequest, with parameters: Value) throws(HTTPError) -> HTTPRequest {
        var request = request
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            request.body = Array(try encoder.encode(parameters))
        } catch {
            throw HTTPError.invalidRequest("JSON body: \(error)")
        }
        if request.headers["Content-Type"] == nil { request.headers["Content-Type"] = "application/json" }
        return request
    }
}

/// A `multipart/form-data` body (RFC 7578), AFNetworking's `multipartFormRequestWithMethod`.
public struct MultipartRequestSerializer: RequestSerializer {
    /// Creates a serializer.
    public init() {}

    /// Sets the form as the body, with the boundary in `Content-Type`. A form with file parts
    /// becomes a ``StreamedBody`` (the files are read while the request is sent, as
    /// AFNetworking's multipart body stream reads them); a form without becomes ``HTTPRequest/body``.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - parameters: The form.
    /// - Returns: The request.
    /// - Throws: ``HTTPError/invalidRequest(_:)`` for a part header that would break a line:
    ///   a control character in a field name, a file name or a content type, or a boundary
    ///   that RFC 2046 §5.1.1 does not allow (the part is named by its position and field name).
    public func serialize(_ request: HTTPRequest, with parameters: MultipartFormData) throws(HTTPError) -> HTTPRequest {
        try parameters.validate()
        var request = request
        let body = parameters.streamedBody
        // Without file parts the pieces are one run of bytes (they split only around files).
        if body.pieces.count == 1, case .bytes(let bytes) = body.pieces[0] {
            request.streamedBody = nil
            request.body = bytes
        } else {
            request.body = nil
            request.streamedBody = body
        }
        request.headers["Content-Type"] = parameters.contentType
        return request
    }
}

/// The parts of a `multipart/form-data` body.
public struct MultipartFormData: Sendable {
    /// One part.
    public struct Part: Sendable {
        /// The form field name.
        public var name: String
        /// The file name, for file parts.
        public var filename: String?
        /// The part's `Content-Type`, if any.
        public var contentType: String?
        /// The content, for parts held in memory (empty for a part read from ``filePath``).
        public var data: [UInt8]
        /// The file the content is read from while the request is sent, for parts added with
        /// ``MultipartFormData/appendFile(name:path:filename:contentType:)``.
        public var filePath: String?
    }

    /// The boundary (random unless given).
    public let boundary: String
    /// The parts, in order.
    public private(set) var parts: [Part] = []

    /// Creates an empty form.
    ///
    /// - Parameter boundary: The boundary, or `nil` for a random one. A given boundary must be
    ///   1 to 70 of RFC 2046 §5.1.1's characters; it is checked when the form is serialized.
    public init(boundary: String? = nil) {
        self.boundary = boundary ?? "ServerTrust-" + UUID().uuidString
    }

    /// Adds a text field.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The text (UTF-8).
    public mutating func append(name: String, value: String) {
        parts.append(Part(name: name, filename: nil, contentType: nil, data: Array(value.utf8), filePath: nil))
    }

    /// Adds a file from memory.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - filename: The file name the server sees.
    ///   - contentType: The media type (default `application/octet-stream`).
    ///   - data: The content.
    public mutating func append(name: String, filename: String, contentType: String = "application/octet-stream", data: [UInt8]) {
        parts.append(Part(name: name, filename: filename, contentType: contentType, data: data, filePath: nil))
    }

    /// Adds a file read from disk while the request is sent, never held in memory whole
    /// (AFNetworking's `appendPartWithFileURL:name:fileName:mimeType:error:`). Its size is
    /// measured when each attempt starts.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - path: The file.
    ///   - filename: The name the server sees (default: the last path component).
    ///   - contentType: The media type (default `application/octet-stream`).
    /// - Throws: ``HTTPError/fileError(path:reason:)`` if the file cannot be opened now or is
    ///   not a regular file (AFNetworking checks the same when the part is added).
    public mutating func appendFile(
        name: String, path: String, filename: String? = nil,
        contentType: String = "application/octet-stream"
    ) throws(HTTPError) {
        close(try StreamedBodyReader.openRegularFile(path).descriptor)
        let shownName = filename ?? String(path.split(separator: "/").last ?? Substring(path))
        parts.append(Part(name: name, filename: shownName, contentType: contentType, data: [], filePath: path))
    }

    /// `multipart/form-data; boundary=…` (the boundary quoted when it is not a token,
    /// RFC 2045 §5.1).
    public var contentType: String {
        let isToken = !boundary.isEmpty && boundary.utf8.allSatisfy(RequestValidation.isTokenCharacter)
        return "multipart/form-data; boundary=" + (isToken ? boundary : "\"\(boundary)\"")
    }

    /// Refuses what would break a line of the body's part headers or of `Content-Type`: a
    /// part header is a header too (RFC 7578 §4.2, §4.4), so a CR or LF in a name, a file
    /// name or a content type would start another header or end the part's headers early.
    /// (Names and file names are also written with `"`, CR and LF percent-encoded, as
    /// browsers do, so ``streamedBody`` used on its own never writes a raw line break.)
    ///
    /// - Throws: ``HTTPError/invalidRequest(_:)`` naming the part (1-based) and the field.
    func validate() throws(HTTPError) {
        // RFC 2046 §5.1.1: 1 to 70 of DIGIT / ALPHA / '()+_,-./:=? and space, not ending in a space.
        let allowed = Set("'()+_,-./:=? ".utf8)
        let bytes = Array(boundary.utf8)
        if bytes.isEmpty || bytes.count > 70 || bytes.last == UInt8(ascii: " ")
            || !bytes.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || allowed.contains($0) })
        {
            throw HTTPError.invalidRequest(
                "multipart boundary \"\(RequestValidation.displayed(boundary))\" is not 1 to 70 of DIGIT, ALPHA, '()+_,-./:=? and space (RFC 2046 §5.1.1)")
        }
        for (index, part) in parts.enumerated() {
            let label = "multipart part \(index + 1) (\"\(RequestValidation.displayed(part.name))\")"
            try RequestValidation.checkParameter(part.name, field: "\(label) name")
            if let filename = part.filename { try RequestValidation.checkParameter(filename, field: "\(label) filename") }
            if let contentType = part.contentType {
                try RequestValidation.checkField(name: "Content-Type", value: contentType, origin: "\(label) header")
            }
        }
    }

    /// The body as pieces: the encoded boundaries, part headers and in-memory contents, and
    /// each file part's file.
    public var streamedBody: StreamedBody {
        var pieces: [StreamedBody.Piece] = []
        var pending: [UInt8] = []
        func withoutLineBreaks(_ text: String) -> String {
            text.replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
        }
        func quoted(_ text: String) -> String {
            // RFC 7578 §4.2: quote, escaping `"` and line breaks as browsers do (the HTML
            // standard's multipart/form-data encoding).
            "\"" + withoutLineBreaks(text.replacingOccurrences(of: "\"", with: "%22")) + "\""
        }
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\(quoted(part.name))"
            if let filename = part.filename { head += "; filename=\(quoted(filename))" }
            head += "\r\n"
            // validate() refuses a content type with a line break; escaped here too, so that
            // this property never writes one.
            if let contentType = part.contentType { head += "Content-Type: \(withoutLineBreaks(contentType))\r\n" }
            head += "\r\n"
            pending += Array(head.utf8)
            if let path = part.filePath {
                pieces.append(.bytes(pending))
                pieces.append(.file(path: path))
                pending = []
            } else {
                pending += part.data
            }
            pending += Array("\r\n".utf8)
        }
        pending += Array("--\(boundary)--\r\n".utf8)
        pieces.append(.bytes(pending))
        return StreamedBody(pieces)
    }

    /// The whole body in memory, file parts read now (through the project's one reader of
    /// user-named files, which refuses devices and files over 64 MiB; a request streams them
    /// instead).
    ///
    /// - Returns: The encoded form.
    /// - Throws: ``HTTPError/fileError(path:reason:)`` if a file part cannot be read,
    ///   ``HTTPError/invalidRequest(_:)`` for a part header that would break a line (see
    ///   ``MultipartRequestSerializer/serialize(_:with:)``).
    public func encoded() throws(HTTPError) -> [UInt8] {
        try validate()
        var out: [UInt8] = []
        for piece in streamedBody.pieces {
            switch piece {
            case .bytes(let bytes):
                out += bytes
            case .file(let path):
                do {
                    out += try TrustStore.readFile(path)
                } catch {
                    throw HTTPError.fileError(path: path, reason: error.reason)
                }
            }
        }
        return out
    }
}
