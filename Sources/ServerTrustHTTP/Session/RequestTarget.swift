internal import Foundation

/// A parsed absolute `http`/`https` URL.
struct RequestTarget: Sendable, Hashable {
    /// The URL as sent to curl.
    let url: String
    /// `http` or `https`, lower-case.
    let scheme: String
    /// The host, lower-case, IPv6 without brackets.
    let host: String
    /// The port (default 443 / 80).
    let port: Int

    init(_ text: String) throws(HTTPError) {
        if let fast = Self.parseASCII(text) {
            self = fast
            return
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https" else {
            throw HTTPError.invalidURL(text)
        }
        var host = components.host ?? ""
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw HTTPError.invalidURL(text) }
        if let port = components.port, !(1...65535).contains(port) { throw HTTPError.invalidURL(text) }
        self.url = text
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    private init(url: String, scheme: String, host: String, port: Int) {
        self.url = url
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// The common case without Foundation: an ASCII `http`/`https` URL whose authority is a
    /// plain host name or address (RFC 3986 §3.2), no user info, no percent-encoding in the
    /// host. Anything else (IDNs, odd forms) goes to `URLComponents`.
    private static func parseASCII(_ text: String) -> RequestTarget? {
        var utf8 = Array(text.utf8)[...]
        guard utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else { return nil }
        let scheme: String
        if utf8.starts(with: "https://".utf8) || utf8.starts(with: "HTTPS://".utf8) {
            scheme = "https"
            utf8 = utf8.dropFirst(8)
        } else if utf8.starts(with: "http://".utf8) || utf8.starts(with: "HTTP://".utf8) {
            scheme = "http"
            utf8 = utf8.dropFirst(7)
        } else {
            return nil
        }
        let authority = utf8.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")), !authority.contains(UInt8(ascii: "%")),
              !authority.contains(UInt8(ascii: "\\")) else { return nil }
        var hostPart = authority[...]
        var portPart: ArraySlice<UInt8> = []
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            hostPart = authority[(authority.startIndex + 1)..<close]
            let rest = authority[(close + 1)...]
            if !rest.isEmpty {
                guard rest.first == UInt8(ascii: ":") else { return nil }
                portPart = rest.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
            hostPart = authority[..<colon]
            portPart = authority[(colon + 1)...]
        }
        guard !hostPart.isEmpty else { return nil }
        let allowed: (UInt8) -> Bool = { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
        }
        guard hostPart.allSatisfy(allowed) else { return nil }
        var port = scheme == "https" ? 443 : 80
        if !portPart.isEmpty {
            guard portPart.count <= 5, portPart.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let value = Int(String(decoding: portPart, as: UTF8.self)), (1...65535).contains(value) else { return nil }
            port = value
        }
        return RequestTarget(url: text, scheme: scheme, host: String(decoding: hostPart, as: UTF8.self).lowercased(), port: port)
    }

    /// `scheme://host:port`, for same-origin decisions (RFC 6454).
    var origin: String { "\(scheme)://\(host):\(port)" }

    var isHTTPS: Bool { scheme == "https" }

    /// Resolves `reference` (absolute, or relative to `base`) the way a browser does.
    static func resolve(_ reference: String, against base: String?) throws(HTTPError) -> RequestTarget {
        if let base, let baseURL = URL(string: base) {
            guard let resolved = URL(string: reference, relativeTo: baseURL) else { throw HTTPError.invalidURL(reference) }
            return try RequestTarget(resolved.absoluteString)
        }
        return try RequestTarget(reference)
    }

    /// This URL with `pairs` appended to its query, percent-encoded as a form would be.
    func appendingQuery(_ pairs: [(name: String, value: String)]) -> String {
        guard !pairs.isEmpty else { return url }
        let query = FormEncoding.encode(pairs)
        var base = url
        var fragment = ""
        if let hash = base.firstIndex(of: "#") {
            fragment = String(base[hash...])
            base = String(base[..<hash])
        }
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return base + separator + query + fragment
    }
}

/// `application/x-www-form-urlencoded` (WHATWG URL §5.2, as AFNetworking's
/// `AFQueryStringFromParameters` produces it, with `%20` for spaces).
enum FormEncoding {
    static func encode(_ pairs: [(name: String, value: String)]) -> String {
        pairs.map { escape($0.name) + "=" + escape($0.value) }.joined(separator: "&")
    }

    /// RFC 3986 unreserved characters stay; everything else is percent-encoded as UTF-8.
    static func escape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return out
    }
}
