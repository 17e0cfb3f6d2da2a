internal import Foundation
internal import TrustEvaluation

/// A parsed absolute `http`/`https` URL.
struct RequestTarget: Sendable, Hashable {
    /// The URL as sent to curl.
    let url: String
    /// `http` or `https`, lower-case.
    let scheme: String
    /// The host, lower-case, IPv6 without brackets and without a zone identifier.
    let host: String
    /// The port (default 443 / 80).
    let port: Int
    /// An IPv6 address's zone identifier (`eth0` of `[fe80::1%25eth0]`, RFC 6874), if any.
    let zone: String?

    /// Parses `text`, refusing control characters anywhere in it, and in the host and user
    /// information once percent-decoded (``RequestValidation``).
    init(_ text: String) throws(HTTPError) {
        // The fast path takes only printable ASCII without `%` or `@` in the authority.
        if let fast = Self.parseASCII(text) {
            self = fast
            return
        }
        try RequestValidation.checkURLText(text, field: "URL")
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        else {
            throw HTTPError.invalidURL(text)
        }
        // URLComponents decodes these; libcurl decodes them too, and puts the host in `Host`
        // and SNI, the user information in the credentials it sends.
        try RequestValidation.checkDecodedURLPart(components.host, part: "host", url: text)
        if components.user != nil || components.password != nil {
            // libcurl sends URL credentials as Basic.
            try RequestValidation.checkCredential(
                user: components.user ?? "", password: components.password ?? "",
                origin: "URL user information (percent-decoded)", isBasic: true)
        }
        var host = components.host ?? ""
        if host.unicodeScalars.contains(where: { !$0.isASCII }) || text.utf8.contains(where: { $0 >= 0x80 }) {
            // An internationalized name: libcurl connects to (and sends as SNI and `Host`) the
            // A-labels libidn2 makes of it, which Foundation's decoding and mapping need not
            // equal (a percent-encoded soft hyphen stays in its host; libidn2 maps it away, and
            // falls back to transitional processing, `ß` to `ss`, when a label fails). The
            // policy and the certificate's name are decided for what curl connects to.
            guard let connected = CurlURL.connectedHost(text) else { throw HTTPError.invalidURL(text) }
            try RequestValidation.checkDecodedURLPart(connected, part: "host", url: text)
            host = connected
        }
        var zone: String?
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
            // A zone identifier (RFC 6874 §2) chooses the interface libcurl connects through
            // (CURLUPART_ZONEID, sin6_scope_id); the address is the host, the one a rule and a
            // certificate's iPAddress name (which has no zone) are about.
            if let percent = host.firstIndex(of: "%") {
                zone = String(host[host.index(after: percent)...])
                host = String(host[..<percent])
            }
        } else if let address = Self.numericIPv4(host) {
            host = address
        }
        guard !host.isEmpty else { throw HTTPError.invalidURL(text) }
        if let port = components.port, !(1...65535).contains(port) { throw HTTPError.invalidURL(text) }
        self.url = text
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
        self.zone = zone
    }

    private init(url: String, scheme: String, host: String, port: Int) {
        self.url = url
        self.scheme = scheme
        self.host = host
        self.port = port
        self.zone = nil
    }

    /// The common case without Foundation: an ASCII `http`/`https` URL whose authority is a
    /// plain host name or address (RFC 3986 §3.2), no user info, no percent-encoding in the
    /// host. Anything else (IDNs, odd forms) goes to `URLComponents`. It reads the string's
    /// own UTF-8 storage in place: this runs for every request.
    private static func parseASCII(_ text: String) -> RequestTarget? {
        if let parsed = text.utf8.withContiguousStorageIfAvailable({ parseASCII(text, $0) }) { return parsed }
        return Array(text.utf8).withUnsafeBufferPointer { parseASCII(text, $0) }
    }

    private static func parseASCII(_ text: String, _ utf8: UnsafeBufferPointer<UInt8>) -> RequestTarget? {
        func lower(_ byte: UInt8) -> UInt8 { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte }
        func hasPrefix(_ prefix: StaticString) -> Bool {
            guard utf8.count >= prefix.utf8CodeUnitCount else { return false }
            for index in 0..<prefix.utf8CodeUnitCount where lower(utf8[index]) != prefix.utf8Start[index] { return false }
            return true
        }
        for byte in utf8 where byte <= 32 || byte >= 127 { return nil }
        let scheme: String
        var cursor: Int
        if hasPrefix("https://") {
            scheme = "https"
            cursor = 8
        } else if hasPrefix("http://") {
            scheme = "http"
            cursor = 7
        } else {
            return nil
        }
        let authorityStart = cursor
        while cursor < utf8.count {
            let byte = utf8[cursor]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            if byte == UInt8(ascii: "@") || byte == UInt8(ascii: "%") || byte == UInt8(ascii: "\\") { return nil }
            cursor += 1
        }
        let authority = authorityStart..<cursor
        guard !authority.isEmpty else { return nil }
        var hostPart = authority
        var portPart = authority.upperBound..<authority.upperBound
        if utf8[authority.lowerBound] == UInt8(ascii: "[") {
            guard let close = authority.first(where: { utf8[$0] == UInt8(ascii: "]") }) else { return nil }
            hostPart = (authority.lowerBound + 1)..<close
            if close + 1 < authority.upperBound {
                guard utf8[close + 1] == UInt8(ascii: ":") else { return nil }
                portPart = (close + 2)..<authority.upperBound
            }
        } else if let colon = authority.first(where: { utf8[$0] == UInt8(ascii: ":") }) {
            hostPart = authority.lowerBound..<colon
            portPart = (colon + 1)..<authority.upperBound
        }
        guard !hostPart.isEmpty else { return nil }
        var hasUpperCase = false
        for index in hostPart {
            let byte = utf8[index]
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"):
                continue
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                hasUpperCase = true
            default:
                return nil
            }
        }
        var port = scheme == "https" ? 443 : 80
        if !portPart.isEmpty {
            guard portPart.count <= 5 else { return nil }
            var value = 0
            for index in portPart {
                let byte = utf8[index]
                guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            guard (1...65535).contains(value) else { return nil }
            port = value
        }
        var host = String(decoding: UnsafeBufferPointer(rebasing: utf8[hostPart]), as: UTF8.self)
        if hasUpperCase { host = host.lowercased() }
        if utf8[authority.lowerBound] != UInt8(ascii: "["), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(utf8[hostPart.lowerBound]),
            let address = numericIPv4(host)
        {
            host = address
        }
        return RequestTarget(url: text, scheme: scheme, host: host, port: port)
    }

    /// The dotted quad that libcurl connects to for a host written as an IPv4 number in any of
    /// the forms it accepts (`127.1`, `0x7f.0.0.1`, `0177.0.0.1`, `2130706433`), `nil` for
    /// anything else: curl's URL parser rewrites these to the dotted quad (urlapi.c
    /// `ipv4_normalize`), and a percent-encoded one, which it decodes and keeps as a name,
    /// reaches `getaddrinfo`, which reads it as `inet_aton(3)` does. Every decision about the
    /// host (its policy rule, the name its certificate must match, its origin) must be about
    /// the address connected to, not another spelling of it: `127.1` would otherwise match no
    /// rule for `127.0.0.1` and be decided under the policy for unmatched hosts. With a
    /// trailing dot (`127.1.`) curl asks DNS for the name instead, so it stays a name here too.
    static func numericIPv4(_ host: String) -> String? {
        IPAddress(numericIPv4: Substring(host))?.description
    }

    /// Whether `other` has the same origin (RFC 6454: scheme, host and port), compared
    /// without building the ``origin`` strings.
    func hasSameOrigin(as other: RequestTarget) -> Bool {
        // The same link-local address on another interface may be another machine.
        port == other.port && scheme == other.scheme && host == other.host && zone == other.zone
    }

    /// `scheme://host:port`, for same-origin decisions (RFC 6454).
    var origin: String { "\(scheme)://\(host):\(port)" }

    var isHTTPS: Bool { scheme == "https" }

    /// Resolves `reference` (absolute, or relative to `base`) the way a browser does.
    static func resolve(_ reference: String, against base: String?) throws(HTTPError) -> RequestTarget {
        if let base, let baseURL = URL(string: base) {
            // Before Foundation sees it: `URL(string:relativeTo:)` percent-encodes a CR or LF
            // instead of refusing it, which would send another URL than the one given.
            try RequestValidation.checkURLText(reference, field: "URL")
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
