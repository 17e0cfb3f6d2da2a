import CertificateParsing
import Foundation

/// Reads an untyped configuration (JSONSerialization output, or a TrustKit dictionary) while
/// collecting one ``PolicyConfigurationError`` per problem, each at its JSON path.
struct ConfigReader {
    var problems: [PolicyConfigurationError] = []

    mutating func fail(_ kind: PolicyConfigurationError.Kind, _ path: String, _ message: String) {
        problems.append(PolicyConfigurationError(kind, path: path, message))
    }

    mutating func fail(_ error: PolicyConfigurationError, at path: String) {
        problems.append(error.at(path))
    }

    /// `$.a.b` for identifier keys, `$.a["b.c"]` otherwise.
    static func path(_ base: String, _ key: String) -> String {
        let identifier = !key.isEmpty && key.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x5F }
        return identifier ? "\(base).\(key)" : "\(base)[\"\(key)\"]"
    }

    /// JSON booleans arrive as a distinct NSNumber subclass (objCType "c"), so `1` is not
    /// mistaken for `true`.
    static func isBool(_ value: Any) -> Bool {
        if value is Bool && !(value is NSNumber) { return true }
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }

    static func typeName(_ value: Any) -> String {
        if isBool(value) { return "a boolean" }
        if value is NSNumber { return "a number" }
        if value is String { return "a string" }
        if value is [Any] { return "an array" }
        if value is [String: Any] { return "an object" }
        if value is NSNull { return "null" }
        return "\(type(of: value))"
    }

    mutating func object(_ value: Any, _ path: String) -> [String: Any]? {
        guard let object = value as? [String: Any] else {
            fail(.wrongType, path, "expected an object, found \(Self.typeName(value))")
            return nil
        }
        return object
    }

    mutating func allowOnly(_ object: [String: Any], _ allowed: Set<String>, _ path: String) {
        for key in object.keys.sorted() where !allowed.contains(key) {
            fail(.unknownKey, Self.path(path, key), "unknown key (allowed: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    mutating func bool(_ object: [String: Any], _ key: String, _ path: String) -> Bool? {
        guard let value = object[key] else { return nil }
        guard Self.isBool(value), let bool = value as? Bool else {
            fail(.wrongType, Self.path(path, key), "expected a boolean, found \(Self.typeName(value))")
            return nil
        }
        return bool
    }

    mutating func string(_ object: [String: Any], _ key: String, _ path: String) -> String? {
        guard let value = object[key] else { return nil }
        guard let string = value as? String else {
            fail(.wrongType, Self.path(path, key), "expected a string, found \(Self.typeName(value))")
            return nil
        }
        return string
    }

    mutating func integer(_ object: [String: Any], _ key: String, _ path: String) -> Int? {
        guard let value = object[key] else { return nil }
        guard !Self.isBool(value), let number = value as? NSNumber, Double(number.intValue) == number.doubleValue else {
            fail(.wrongType, Self.path(path, key), "expected an integer, found \(Self.typeName(value))")
            return nil
        }
        return number.intValue
    }

    mutating func array(_ object: [String: Any], _ key: String, _ path: String) -> [Any]? {
        guard let value = object[key] else { return nil }
        guard let array = value as? [Any] else {
            fail(.wrongType, Self.path(path, key), "expected an array, found \(Self.typeName(value))")
            return nil
        }
        return array
    }

    /// An array of strings, each with its path; wrong elements are reported and skipped.
    mutating func strings(_ object: [String: Any], _ key: String, _ path: String) -> [(value: String, path: String)]? {
        guard let array = array(object, key, path) else { return nil }
        var result: [(value: String, path: String)] = []
        for (index, element) in array.enumerated() {
            let elementPath = "\(Self.path(path, key))[\(index)]"
            guard let string = element as? String else {
                fail(.wrongType, elementPath, "expected a string, found \(Self.typeName(element))")
                continue
            }
            result.append((string, elementPath))
        }
        return result
    }

    /// Report URIs must be absolute http(s) URLs.
    mutating func uris(_ object: [String: Any], _ key: String, _ path: String) -> [String]? {
        guard let entries = strings(object, key, path) else { return nil }
        var result: [String] = []
        for (uri, uriPath) in entries {
            // Foundation's URL(string:) percent-encodes a control character in the path rather
            // than refusing it, and the text as written is what a report is sent to and what
            // a delivery names: a CR or LF there would reach a request line or a log line.
            if uri.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
                fail(.invalidValue, uriPath, "a report URI must not contain control characters: \(DisplayText.escaped(uri))")
                continue
            }
            guard let url = URL(string: uri), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", url.host != nil else {
                fail(.invalidValue, uriPath, "not an http(s) URL: \"\(uri)\"")
                continue
            }
            result.append(uri)
        }
        return result
    }

    mutating func date(_ object: [String: Any], _ key: String, _ path: String) -> Int64? {
        guard let text = string(object, key, path) else { return nil }
        guard let time = ASN1TimeText.parse(text) else {
            fail(.invalidDate, Self.path(path, key), "\"\(text)\" is not a date (yyyy-MM-dd, UTC, or RFC 3339)")
            return nil
        }
        return time
    }
}
