public import Foundation

// Foundation's types where a Swift developer reaches for them: `URL`, `Data`, `Encodable`
// and `Decodable` values, `URLQueryItem`, `Duration`. Each is a thin overload of the
// string-and-bytes API it stands beside.

extension HTTPRequest {
    /// Creates a request for a `URL`.
    /// - Parameters:
    ///   - method: The method.
    ///   - url: The URL.
    ///   - headers: Header fields.
    ///   - body: The body.
    public init(_ method: HTTPMethod = .get, _ url: URL, headers: HTTPHeaders = HTTPHeaders(), body: Data? = nil) {
        self.init(method, url.absoluteString, headers: headers, body: body.map { Array($0) })
    }

    /// A request whose body is `value` as JSON (`Content-Type: application/json` unless the
    /// headers say otherwise).
    /// - Parameters:
    ///   - method: The method (default POST).
    ///   - url: The URL.
    ///   - value: The body.
    ///   - headers: Header fields; a `Content-Type` here replaces `application/json`.
    ///   - encoder: The encoder.
    /// - Throws: ``HTTPError/invalidRequest(_:)`` when `value` cannot be encoded.
    public init<Body: Encodable>(
        _ method: HTTPMethod = .post, _ url: URL, json value: Body, headers: HTTPHeaders = HTTPHeaders(), encoder: JSONEncoder = JSONEncoder()
    ) throws(HTTPError) {
        let data: Data
        do { data = try encoder.encode(value) } catch { throw HTTPError.invalidRequest("cannot encode \(Body.self) as JSON: \(error)") }
        self.init(method, url, headers: headers, body: data)
        if self.headers["Content-Type"] == nil { self.headers["Content-Type"] = "application/json" }
    }

    /// A request to a URL given as text whose body is `value` as JSON, as
    /// the `URL` form makes it.
    /// - Parameters:
    ///   - method: The method (default POST).
    ///   - url: Absolute, or relative to the session's base URL.
    ///   - value: The body.
    ///   - headers: Header fields; a `Content-Type` here replaces `application/json`.
    ///   - encoder: The encoder.
    /// - Throws: ``HTTPError/invalidRequest(_:)`` when `value` cannot be encoded.
    public init<Body: Encodable>(
        _ method: HTTPMethod = .post, _ url: String, json value: Body, headers: HTTPHeaders = HTTPHeaders(), encoder: JSONEncoder = JSONEncoder()
    ) throws(HTTPError) {
        let data: Data
        do { data = try encoder.encode(value) } catch { throw HTTPError.invalidRequest("cannot encode \(Body.self) as JSON: \(error)") }
        self.init(method, url, headers: headers, body: Array(data))
        if self.headers["Content-Type"] == nil { self.headers["Content-Type"] = "application/json" }
    }

    /// The body as `Data`.
    public var bodyData: Data? {
        get { body.map { Data($0) } }
        set { body = newValue.map { Array($0) } }
    }

    /// ``timeout`` as a `Duration`.
    public var timeoutDuration: Duration? {
        get { timeout.map { .wait(seconds: $0) } }
        set { timeout = newValue.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 } }
    }
}

extension HTTPResponse {
    /// The body as `Data`.
    public var data: Data { Data(body) }

    /// The body decoded from JSON.
    /// - Parameters:
    ///   - type: The type.
    ///   - decoder: The decoder.
    /// - Returns: The value.
    /// - Throws: ``HTTPError/responseSerializationFailed(reason:response:)`` naming the decoding error.
    public func decode<Value: Decodable>(_ type: Value.Type, decoder: JSONDecoder = JSONDecoder()) throws(HTTPError) -> Value {
        do { return try decoder.decode(Value.self, from: Data(body)) } catch {
            throw HTTPError.responseSerializationFailed(reason: "cannot decode \(Value.self): \(error)", response: self)
        }
    }
}

extension HTTPSession {
    /// `GET` a `URL`, with query items appended.
    /// - Parameters:
    ///   - url: The URL.
    ///   - query: Query items, appended to the URL's own.
    ///   - headers: Extra header fields.
    /// - Returns: The response.
    /// - Throws: ``HTTPError``.
    public func get(_ url: URL, query: [URLQueryItem] = [], headers: HTTPHeaders = HTTPHeaders()) async throws(HTTPError) -> HTTPResponse {
        try await send(HTTPRequest(.get, try Self.url(url, query), headers: headers))
    }

    /// `GET` a JSON resource and decode it: 2xx and a JSON media type (`application/json`,
    /// `application/*+json` by RFC 6839, `text/json`) are required.
    /// - Parameters:
    ///   - url: Absolute, or relative to the base URL.
    ///   - type: The type to decode.
    ///   - query: Query items.
    ///   - decoder: The decoder.
    /// - Returns: The value.
    /// - Throws: ``HTTPError`` (status, content type, decoding or transport).
    public func get<Value: Decodable & Sendable>(
        _ url: String, as type: Value.Type, query: [URLQueryItem] = [], decoder: JSONDecoder = JSONDecoder()
    ) async throws(HTTPError) -> Value {
        var request = HTTPRequest(.get, url)
        request.headers["Accept"] = "application/json"
        if !query.isEmpty { request.url = try Self.url(request.url, query) }
        return try await send(request, decoding: type, decoder: decoder)
    }

    /// `GET` a JSON resource at a `URL` and decode it, as the `String` form does.
    public func get<Value: Decodable & Sendable>(
        _ url: URL, as type: Value.Type, query: [URLQueryItem] = [], decoder: JSONDecoder = JSONDecoder()
    ) async throws(HTTPError) -> Value {
        try await get(url.absoluteString, as: type, query: query, decoder: decoder)
    }

    /// Sends a request and decodes its JSON response: 2xx and a JSON media type required.
    /// - Parameters:
    ///   - request: The request.
    ///   - type: The type to decode.
    ///   - decoder: The decoder.
    /// - Returns: The value.
    /// - Throws: ``HTTPError``.
    public func send<Value: Decodable & Sendable>(
        _ request: HTTPRequest, decoding type: Value.Type, decoder: JSONDecoder = JSONDecoder()
    ) async throws(HTTPError) -> Value {
        let response = try await send(request)
        try ResponseValidation(acceptableContentTypes: JSONResponseSerializer.jsonTypes).validate(response)
        return try response.decode(type, decoder: decoder)
    }

    /// `POST` (or another method) `value` as JSON to a `URL`.
    /// - Parameters:
    ///   - url: The URL.
    ///   - value: The body.
    ///   - method: The method (default POST).
    ///   - headers: Extra header fields.
    ///   - encoder: The encoder.
    /// - Returns: The response.
    /// - Throws: ``HTTPError``.
    public func post<Body: Encodable>(
        _ url: URL, json value: Body, method: HTTPMethod = .post, headers: HTTPHeaders = HTTPHeaders(), encoder: JSONEncoder = JSONEncoder()
    ) async throws(HTTPError) -> HTTPResponse {
        try await send(try HTTPRequest(method, url, json: value, headers: headers, encoder: encoder))
    }

    /// `POST` (or another method) `value` as JSON to a URL given as text, as the `URL` form does:
    /// `session.post("https://api.example.com/users", json: user)`.
    /// - Parameters:
    ///   - url: Absolute, or relative to the base URL.
    ///   - value: The body.
    ///   - method: The method (default POST).
    ///   - headers: Extra header fields.
    ///   - encoder: The encoder.
    /// - Returns: The response.
    /// - Throws: ``HTTPError``.
    public func post<Body: Encodable>(
        _ url: String, json value: Body, method: HTTPMethod = .post, headers: HTTPHeaders = HTTPHeaders(), encoder: JSONEncoder = JSONEncoder()
    ) async throws(HTTPError) -> HTTPResponse {
        try await send(try HTTPRequest(method, url, json: value, headers: headers, encoder: encoder))
    }

    /// `url` with `query` appended (percent-encoded as `URLComponents` does).
    static func url(_ url: String, _ query: [URLQueryItem]) throws(HTTPError) -> String {
        guard !query.isEmpty else { return url }
        guard var components = URLComponents(string: url) else { throw HTTPError.invalidURL(url) }
        components.queryItems = (components.queryItems ?? []) + query
        guard let joined = components.string else { throw HTTPError.invalidURL(url) }
        return joined
    }

    static func url(_ url: URL, _ query: [URLQueryItem]) throws(HTTPError) -> String {
        try self.url(url.absoluteString, query)
    }
}
