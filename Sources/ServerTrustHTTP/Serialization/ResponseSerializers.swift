internal import Foundation

/// Validates a response and turns it into a value (AFNetworking's `AFURLResponseSerialization`).
public protocol ResponseSerializer: Sendable {
    /// The value produced.
    associatedtype Output: Sendable

    /// Validates and decodes.
    ///
    /// - Parameter response: The response.
    /// - Returns: The value.
    /// - Throws: ``HTTPError/unacceptableStatusCode(_:)``, ``HTTPError/unacceptableContentType(_:)``
    ///   or ``HTTPError/responseSerializationFailed(reason:response:)``.
    func serialize(_ response: HTTPResponse) throws(HTTPError) -> Output
}

/// The status and content-type checks every serializer applies.
public struct ResponseValidation: Sendable {
    /// Acceptable status codes (default 200–299).
    public var acceptableStatusCodes: Set<Int>
    /// Acceptable media types (without parameters, lower-case), or `nil` for any.
    public var acceptableContentTypes: Set<String>?

    /// Creates a validation.
    ///
    /// - Parameters:
    ///   - acceptableStatusCodes: The codes (default 200–299).
    ///   - acceptableContentTypes: The media types, or `nil` for any.
    public init(acceptableStatusCodes: Set<Int> = Set(200..<300), acceptableContentTypes: Set<String>? = nil) {
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Checks the status, then (for non-empty bodies) the content type.
    ///
    /// - Parameter response: The response.
    /// - Throws: ``HTTPError/unacceptableStatusCode(_:)`` or ``HTTPError/unacceptableContentType(_:)``.
    public func validate(_ response: HTTPResponse) throws(HTTPError) {
        guard acceptableStatusCodes.contains(response.statusCode) else { throw HTTPError.unacceptableStatusCode(response) }
        if let types = acceptableContentTypes, !response.body.isEmpty {
            guard let type = response.mimeType, Self.accepts(type, from: types) else { throw HTTPError.unacceptableContentType(response) }
        }
    }

    /// `type` is acceptable when listed, or, where `application/json` is, when it is a JSON
    /// structured syntax suffix type `application/*+json` (RFC 6839 §3.1: `application/problem+json`,
    /// `application/vnd.api+json`, …).
    static func accepts(_ type: String, from types: Set<String>) -> Bool {
        if types.contains(type) { return true }
        return types.contains("application/json") && type.hasPrefix("application/") && type.hasSuffix("+json") && type.count > 17
    }
}

extension HTTPResponse {
    /// This response, if its status (and, when given, its media type) is acceptable:
    /// Alamofire's `validate()`, for a chain such as `try await session.get(url).validate().text`.
    ///
    /// - Parameters:
    ///   - statusCodes: The acceptable codes (default 200–299).
    ///   - contentTypes: The acceptable media types, or `nil` for any.
    /// - Returns: `self`.
    /// - Throws: ``HTTPError/unacceptableStatusCode(_:)`` or ``HTTPError/unacceptableContentType(_:)``.
    @discardableResult
    public func validate(statusCodes: Set<Int> = Set(200..<300), contentTypes: Set<String>? = nil) throws(HTTPError) -> HTTPResponse {
        try ResponseValidation(acceptableStatusCodes: statusCodes, acceptableContentTypes: contentTypes).validate(self)
        return self
    }
}

/// The body bytes.
public struct DataResponseSerializer: ResponseSerializer {
    /// The checks.
    public var validation: ResponseValidation

    /// Creates a serializer.
    ///
    /// - Parameter validation: The checks (default: 2xx, any type).
    public init(validation: ResponseValidation = ResponseValidation()) { self.validation = validation }

    /// Validates and returns the body.
    ///
    /// - Parameter response: The response.
    /// - Returns: The body.
    /// - Throws: ``HTTPError`` from validation.
    public func serialize(_ response: HTTPResponse) throws(HTTPError) -> [UInt8] {
        try validation.validate(response)
        return response.body
    }
}

/// The body as text (UTF-8, or ISO-8859-1 when the charset says so; invalid UTF-8 fails).
public struct StringResponseSerializer: ResponseSerializer {
    /// The checks.
    public var validation: ResponseValidation

    /// Creates a serializer.
    ///
    /// - Parameter validation: The checks (default: 2xx, any type).
    public init(validation: ResponseValidation = ResponseValidation()) { self.validation = validation }

    /// Validates and decodes the text.
    ///
    /// - Parameter response: The response.
    /// - Returns: The text.
    /// - Throws: ``HTTPError`` from validation, or serialization failure for invalid UTF-8.
    public func serialize(_ response: HTTPResponse) throws(HTTPError) -> String {
        try validation.validate(response)
        let charset = (response.headers["Content-Type"] ?? "").lowercased()
        if charset.contains("iso-8859-1") || charset.contains("latin1") {
            return String(response.body.map { Character(Unicode.Scalar($0)) })
        }
        guard let text = String(validating: response.body, as: UTF8.self) else {
            throw HTTPError.responseSerializationFailed(reason: "body is not valid UTF-8", response: response)
        }
        return text
    }
}

/// The body as a ``JSONValue`` (AFNetworking's `AFJSONResponseSerializer`: types
/// `application/json`, `text/json`, `text/javascript` by default).
public struct JSONResponseSerializer: ResponseSerializer {
    /// The checks.
    public var validation: ResponseValidation

    /// Creates a serializer.
    ///
    /// - Parameter validation: The checks (default: 2xx and the JSON media types).
    public init(validation: ResponseValidation = ResponseValidation(acceptableContentTypes: JSONResponseSerializer.jsonTypes)) {
        self.validation = validation
    }

    /// The default JSON media types.
    public static let jsonTypes: Set<String> = ["application/json", "text/json", "text/javascript"]

    /// Validates and parses.
    ///
    /// - Parameter response: The response.
    /// - Returns: The JSON value (`null` for an empty body, as AFNetworking returns nil).
    /// - Throws: ``HTTPError`` from validation, or serialization failure for invalid JSON.
    public func serialize(_ response: HTTPResponse) throws(HTTPError) -> JSONValue {
        try validation.validate(response)
        if response.body.allSatisfy({ $0 == 32 || $0 == 10 || $0 == 13 || $0 == 9 }) { return .null }
        do {
            return try JSONValue.parse(response.body)
        } catch {
            throw HTTPError.responseSerializationFailed(reason: "invalid JSON: \(error)", response: response)
        }
    }
}

/// The body decoded as `Value` with `JSONDecoder`.
public struct DecodableResponseSerializer<Value: Decodable & Sendable>: ResponseSerializer {
    /// The checks.
    public var validation: ResponseValidation

    /// Creates a serializer.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - validation: The checks (default: 2xx and the JSON media types).
    public init(
        _ type: Value.Type = Value.self,
        validation: ResponseValidation = ResponseValidation(acceptableContentTypes: JSONResponseSerializer.jsonTypes)
    ) {
        self.validation = validation
    }

    /// Validates and decodes.
    ///
    /// - Parameter response: The response.
    /// - Returns: The value.
    /// - Throws: ``HTTPError`` from validation, or serialization failure naming the decoding error.
    public func serialize(_ response: HTTPResponse) throws(HTTPError) -> Value {
        try validation.validate(response)
        do {
            return try JSONDecoder().decode(Value.self, from: Data(response.body))
        } catch {
            throw HTTPError.responseSerializationFailed(reason: "cannot decode \(Value.self): \(error)", response: response)
        }
    }
}
