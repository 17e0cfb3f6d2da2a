import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import Testing

/// Requests cannot be smuggled: a CR, LF or NUL (or another control character, or a name
/// that is not a token) in any field that goes on the wire as given is refused with
/// `HTTPError.invalidRequest` naming the field, before a connection is opened, so the
/// server sees no request at all.
@Suite("requests cannot be smuggled")
struct RequestSmugglingTests {
    static let host = "www.example.test"

    /// A bad field: what the session and the request are (`url` is the server's base URL,
    /// `https://www.example.test:PORT`), and the words the refusal must name.
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let names: String
        var configure: @Sendable (inout HTTPSessionConfiguration, String) -> Void = { _, _ in }
        let request: @Sendable (String) throws -> HTTPRequest
        var testDescription: String { name }

        init(
            _ name: String, names: String, configure: @escaping @Sendable (inout HTTPSessionConfiguration, String) -> Void = { _, _ in },
            request: @escaping @Sendable (String) throws -> HTTPRequest
        ) {
            self.name = name
            self.names = names
            self.configure = configure
            self.request = request
        }
    }

    static func get(_ url: String, _ headers: HTTPHeaders = HTTPHeaders()) -> HTTPRequest {
        HTTPRequest(.get, url + "/echo", headers: headers)
    }

    static func withCredential(_ url: String, _ user: String, _ password: String) -> HTTPRequest {
        var request = get(url)
        request.credential = .user(user, password: password, persistence: .none)
        request.sendsCredentialPreemptively = true
        return request
    }

    static func form(_ url: String, _ build: (inout MultipartFormData) -> Void, boundary: String? = nil) throws -> HTTPRequest {
        var form = MultipartFormData(boundary: boundary)
        build(&form)
        return try MultipartRequestSerializer().serialize(HTTPRequest(.post, url + "/echo"), with: form)
    }

    static let rows: [Row] = [
        // The method (RFC 9110 §9.1: a token).
        Row("method with CRLF", names: "method") { HTTPRequest(HTTPMethod(rawValue: "GET /x HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET"), $0 + "/") },
        Row("method with LF", names: "method") { HTTPRequest(HTTPMethod(rawValue: "GET\nX"), $0 + "/") },
        Row("method with NUL", names: "method") { HTTPRequest(HTTPMethod(rawValue: "GE\0T"), $0 + "/") },
        Row("method with a space", names: "method") { HTTPRequest(HTTPMethod(rawValue: "GET /other"), $0 + "/") },
        Row("empty method", names: "method") { HTTPRequest(HTTPMethod(rawValue: ""), $0 + "/") },
        // Header values, through every way of building headers.
        Row("header value with CRLF (init)", names: "header \"X-A\" value: CR (0x0D) at byte 1") {
            get($0, HTTPHeaders([(name: "X-A", value: "1\r\nX-Injected: 1")]))
        },
        Row("header value with LF (dictionary literal)", names: "header \"X-A\" value: LF (0x0A) at byte 1") { get($0, ["X-A": "1\nX-Injected: 1"]) },
        Row("header value with CR (subscript)", names: "header \"X-A\" value: CR (0x0D)") { url in
            var headers = HTTPHeaders()
            headers["X-A"] = "1\rX-Injected: 1"
            return get(url, headers)
        },
        Row("header value with NUL (add)", names: "header \"X-A\" value: NUL (0x00)") { url in
            var headers = HTTPHeaders()
            headers.add("X-A", "secret\0")
            return get(url, headers)
        },
        Row("header value with another control character", names: "header \"X-A\" value: control character 0x1B") { get($0, ["X-A": "a\u{1B}[2J"]) },
        Row("header value with DEL", names: "header \"X-A\" value: DEL (0x7F)") { get($0, ["X-A": "a\u{7F}"]) },
        Row("header value set on the request after it was made", names: "header \"Authorization\" value: LF") { url in
            var request = get(url)
            request.headers.add("Authorization", "Bearer t\nX-Injected: 1")
            return request
        },
        // Header names (RFC 9110 §5.1: a token).
        Row("header name with CRLF", names: "header name \"X-A\\r\\nX-Injected\" is not a token") { get($0, ["X-A\r\nX-Injected": "1"]) },
        Row("header name with a colon", names: "header name \"X-A: 1\\r\\nX-B\" is not a token (RFC 9110 §5.1): ':' (0x3A) at byte 3") {
            get($0, ["X-A: 1\r\nX-B": "2"])
        },
        Row("header name with a space", names: "header name \"X A\" is not a token") { get($0, ["X A": "1"]) },
        Row("header name with a trailing space", names: "header name \"X-A \" is not a token") { get($0, ["X-A ": "1"]) },
        Row("empty header name", names: "header name \"\" is not a token (RFC 9110 §5.1): empty") { get($0, ["": "1"]) },
        Row("header name with NUL", names: "header name \"X\\0\" is not a token") { get($0, ["X\0": "1"]) },
        Row("non-ASCII header name", names: "header name \"Ü\" is not a token (RFC 9110 §5.1): non-ASCII byte 0xC3") { get($0, ["Ü": "1"]) },
        // The session's default headers (refused when the session is made).
        Row(
            "default header value with CRLF", names: "default header \"X-Default\" value: CR",
            configure: { configuration, _ in configuration.defaultHeaders["X-Default"] = "1\r\nX-Injected: 1" }
        ) { get($0) },
        Row(
            "default header name with LF", names: "default header name \"X\\nY\"",
            configure: { configuration, _ in configuration.defaultHeaders.add("X\nY", "1") }
        ) { get($0) },
        // Credentials (RFC 7617 §2), preemptive and the proxy's.
        Row("user name with CRLF", names: "credential user name: CR (0x0D) at byte 1") { withCredential($0, "a\r\nX-Injected: 1", "pw") },
        Row("password with LF", names: "credential password: LF (0x0A) at byte 2") { withCredential($0, "alice", "pw\nX") },
        Row("user name with NUL", names: "credential user name: NUL") { withCredential($0, "alice\0", "pw") },
        Row("Basic user name with a colon", names: "credential user name: ':' at byte 1") { withCredential($0, "a:b", "pw") },
        Row(
            "proxy user name with CRLF", names: "proxy credential user name: CR",
            configure: { configuration, url in
                configuration.proxy = ProxyConfiguration(
                    url: url.replacingOccurrences(of: "https://\(host)", with: "http://127.0.0.1"),
                    credential: .user("p\r\nX-Injected: 1", password: "pw"))
            }
        ) { get($0) },
        Row(
            "proxy password with NUL", names: "proxy credential password: NUL",
            configure: { configuration, url in
                configuration.proxy = ProxyConfiguration(
                    url: url.replacingOccurrences(of: "https://\(host)", with: "http://127.0.0.1"),
                    credential: .user("p", password: "pw\0"))
            }
        ) { get($0) },
        Row(
            "proxy user name with a colon", names: "proxy credential user name: ':'",
            configure: { configuration, url in
                configuration.proxy = ProxyConfiguration(
                    url: url.replacingOccurrences(of: "https://\(host)", with: "http://127.0.0.1"),
                    credential: .user("p:q", password: "pw"))
            }
        ) { get($0) },
        // URLs, raw and percent-decoded (the host and the user information are decoded by
        // libcurl before use).
        Row("URL with CRLF in the path", names: "URL: CR (0x0D) at byte") { HTTPRequest(.get, $0 + "/a\r\nX-Injected: 1") },
        Row("URL with LF in the query", names: "URL: LF (0x0A)") { HTTPRequest(.get, $0 + "/a?b=1\nX") },
        Row("URL with NUL", names: "URL: NUL (0x00)") { HTTPRequest(.get, $0 + "/a\0/../../admin") },
        Row("URL with a tab", names: "URL: HTAB (0x09)") { HTTPRequest(.get, $0 + "/a\tb") },
        Row("URL with LF in the host", names: "URL: LF (0x0A)") { HTTPRequest(.get, $0.replacingOccurrences(of: "www.", with: "www\n.") + "/") },
        Row("URL with a percent-encoded CRLF in the host", names: "URL host (percent-decoded): CR (0x0D) at byte 3") {
            HTTPRequest(.get, $0.replacingOccurrences(of: "www.", with: "www%0D%0A.") + "/")
        },
        Row("URL with a percent-encoded CRLF in the user name", names: "URL user information (percent-decoded) user name: CR") {
            HTTPRequest(.get, $0.replacingOccurrences(of: "https://", with: "https://us%0D%0Aer:pw@") + "/")
        },
        Row("URL with a percent-encoded NUL in the password", names: "URL user information (percent-decoded) password: NUL") {
            HTTPRequest(.get, $0.replacingOccurrences(of: "https://", with: "https://user:p%00w@") + "/")
        },
        Row(
            "relative URL with CRLF against the base URL", names: "URL: CR (0x0D) at byte 2",
            configure: { configuration, url in configuration.baseURL = url + "/" }
        ) { _ in HTTPRequest(.get, "/a\r\nX-Injected: 1") },
        Row("base URL with LF", names: "base URL: LF", configure: { configuration, url in configuration.baseURL = url + "/\n" }) { _ in
            HTTPRequest(.get, "/a")
        },
        Row(
            "proxy URL with CRLF", names: "proxy URL: CR",
            configure: { configuration, url in
                configuration.proxy = ProxyConfiguration(url: url.replacingOccurrences(of: "https://\(host)", with: "http://127.0.0.1") + "\r\nX: 1")
            }
        ) { get($0) },
        Row("resolve entry with LF", names: "resolve entry", configure: { configuration, _ in configuration.resolve.append("a.test:443:127.0.0.1\nb") }) {
            get($0)
        },
        // Multipart part headers (RFC 7578 §4.2) and the boundary (RFC 2046 §5.1.1).
        Row("multipart field name with CRLF", names: "multipart part 2 (\"a\\r\\nContent-Type: text/html\") name: CR (0x0D) at byte 1") {
            try form($0) { form in
                form.append(name: "ok", value: "1")
                form.append(name: "a\r\nContent-Type: text/html", value: "x")
            }
        },
        Row("multipart field name with NUL", names: "multipart part 1 (\"a\\0\") name: NUL") { try form($0) { $0.append(name: "a\0", value: "x") } },
        Row("multipart file name with LF", names: "multipart part 1 (\"doc\") filename: LF (0x0A) at byte 5") {
            try form($0) { $0.append(name: "doc", filename: "a.txt\nContent-Type: text/html", data: [1]) }
        },
        Row("multipart content type with CRLF", names: "multipart part 1 (\"doc\") header \"Content-Type\" value: CR") {
            try form($0) { $0.append(name: "doc", filename: "a.txt", contentType: "text/plain\r\nX-Injected: 1", data: [1]) }
        },
        Row("multipart file part content type with LF", names: "multipart part 1 (\"doc\") header \"Content-Type\" value: LF") { url in
            let path = try Lab.temporaryDirectory() + "/part.txt"
            try Data("part".utf8).write(to: URL(fileURLWithPath: path))
            return try form(url) { try? $0.appendFile(name: "doc", path: path, contentType: "text/plain\nX-Injected: 1") }
        },
        Row("multipart boundary with CRLF", names: "multipart boundary") { try form($0, { $0.append(name: "a", value: "x") }, boundary: "b\r\nX-Injected: 1") },
        Row("multipart boundary longer than 70", names: "multipart boundary") {
            try form($0, { $0.append(name: "a", value: "x") }, boundary: String(repeating: "b", count: 71))
        },
        // The body's framing (RFC 9112 §6): a length that disagrees with the body, or a
        // Transfer-Encoding, would make the server split one request into two.
        Row("Content-Length shorter than the body", names: "header \"Content-Length\" is \"3\" but the body is 10 bytes") {
            HTTPRequest(.post, $0 + "/echo", headers: ["Content-Length": "3"], body: Array("0123456789".utf8))
        },
        Row("Content-Length longer than the body", names: "header \"Content-Length\" is \"11\" but the body is 10 bytes") {
            HTTPRequest(.post, $0 + "/echo", headers: ["Content-Length": "11"], body: Array("0123456789".utf8))
        },
        Row("Content-Length on a bodiless GET", names: "header \"Content-Length\" is \"40\" but the body is 0 bytes") { get($0, ["Content-Length": "40"]) },
        Row("two Content-Length fields, one right", names: "header \"Content-Length\" is \"3\"") { url in
            var request = HTTPRequest(.post, url + "/echo", body: Array("0123456789".utf8))
            request.headers.add("Content-Length", "10")
            request.headers.add("Content-Length", "3")
            return request
        },
        Row("Content-Length not a number", names: "header \"Content-Length\" is \"+10\"") {
            HTTPRequest(.post, $0 + "/echo", headers: ["Content-Length": "+10"], body: Array("0123456789".utf8))
        },
        Row("Content-Length wrong for a streamed file body", names: "header \"Content-Length\" is \"2\" but the body is 4 bytes") { url in
            let path = try Lab.temporaryDirectory() + "/body.txt"
            try Data("body".utf8).write(to: URL(fileURLWithPath: path))
            var request = HTTPRequest(.put, url + "/echo", headers: ["Content-Length": "2"])
            request.bodyFilePath = path
            return request
        },
        Row("Content-Length wrong for a multipart body", names: "header \"Content-Length\" is \"5\" but the body is") { url in
            var request = try form(url) { $0.append(name: "a", value: "x") }
            request.headers["Content-Length"] = "5"
            return request
        },
        Row(
            "Content-Length in the session's default headers", names: "header \"Content-Length\" is \"3\"",
            configure: { configuration, _ in configuration.defaultHeaders["Content-Length"] = "3" }
        ) {
            HTTPRequest(.post, $0 + "/echo", body: Array("0123456789".utf8))
        },
        Row("Transfer-Encoding chunked beside the body", names: "header \"Transfer-Encoding\"") {
            HTTPRequest(.post, $0 + "/echo", headers: ["Transfer-Encoding": "chunked"], body: Array("5\r\nhello\r\n0\r\n\r\n".utf8))
        },
        Row("Transfer-Encoding on a GET", names: "header \"Transfer-Encoding\"") { get($0, ["transfer-encoding": "chunked"]) },
    ]

    /// A server answering every request with its method, target and headers.
    static func echoServer(_ pki: LabPKI) throws -> LabTLSServer {
        try Lab.server(.init(pki: pki), name: "echo") { configuration in
            configuration.handler = { request in
                let headers = request.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
                return .text("\(request.method) \(request.target)\n\(headers)\n\n" + String(decoding: request.body, as: UTF8.self))
            }
        }
    }

    @Test("each bad field is refused before anything is sent, naming the field", arguments: rows)
    func refused(_ row: Row) async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Self.echoServer(pki)
        defer { server.stop() }
        let base = "https://\(Self.host):\(server.port)"
        var error: HTTPError?
        do {
            let request = try row.request(base)
            let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)]) { row.configure(&$0, base) }
            defer { session.invalidate() }
            let response = try await session.send(request)
            Issue.record("sent: \(response.statusCode) \(response.text)")
        } catch let caught as HTTPError {
            error = caught
        }
        guard case .invalidRequest(let reason)? = error else {
            Issue.record("expected invalidRequest naming \(row.names), got \(String(describing: error))")
            return
        }
        #expect(reason.contains(row.names), "\(reason)")
        let text = "\(error!)"
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "one line: \(text.debugDescription)")
        #expect(server.statistics.connectionsAccepted == 0, "the server saw a connection")
        #expect(server.statistics.requestsServed == 0, "the server saw a request")
    }

    @Test("fields that are odd but legal reach the server exactly")
    func legalFieldsAreSent() async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Self.echoServer(pki)
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)])
        defer { session.invalidate() }
        let tokenName = "X-!#$%&'*+.^_`|~09azAZ"
        var request = HTTPRequest(HTTPMethod(rawValue: "PURGE"), "https://\(Self.host):\(server.port)/a%0D%0Ab?c=%00")
        request.headers = [tokenName: "v", "X-Tab": "a\tb", "X-UTF8": "grüße"]
        request.credential = .user("ålice", password: "p:w", persistence: .none)
        request.sendsCredentialPreemptively = true
        let text = try await session.send(request).text
        // A percent-encoded CR LF in the path is sent encoded, as given (libcurl does not decode it).
        #expect(text.hasPrefix("PURGE /a%0D%0Ab?c=%00\n"), "\(text)")
        #expect(text.contains("\n\(tokenName): v\n"))
        #expect(text.contains("\nX-Tab: a\tb\n"))
        #expect(text.contains("\nX-UTF8: grüße\n"))
        #expect(text.contains("\nAuthorization: Basic \(Data("ålice:p:w".utf8).base64EncodedString())\n"))
        #expect(server.statistics.requestsServed == 1)
    }

    @Test("a Content-Length equal to the body is sent as given, and the server reads exactly that body")
    func matchingContentLength() async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Self.echoServer(pki)
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)])
        defer { session.invalidate() }
        let url = "https://\(Self.host):\(server.port)/echo"
        let text = try await session.send(HTTPRequest(.post, url, headers: ["Content-Length": " 10 "], body: Array("0123456789".utf8))).text
        #expect(text.hasSuffix("\n\n0123456789"), "\(text)")
        let empty = try await session.send(HTTPRequest(.get, url, headers: ["Content-Length": "0"])).text
        #expect(empty.hasPrefix("GET /echo\n"), "\(empty)")
        #expect(server.statistics.requestsServed == 2)
    }

    @Test("a redirect whose Location holds a control character is refused; its target sees nothing")
    func redirectLocation() async throws {
        let pki = try Lab.pki(host: Self.host)
        let target = try Self.echoServer(pki)
        defer { target.stop() }
        let otherHost = "other.example.test"
        let otherPKI = pki
        let redirector = try Lab.server(try Lab.identity(otherPKI, host: otherHost), name: "redirector") { configuration in
            configuration.handler = { request in
                // A bare CR inside the field value: the field line itself ends at CRLF.
                LabHTTPResponse(status: 302, headers: [("Location", "https://\(Self.host):\(target.port)/a\rX-Injected: 1")])
            }
        }
        defer { redirector.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, target), (otherHost, redirector)])
        defer { session.invalidate() }
        let error = await failure { try await session.get("https://\(otherHost):\(redirector.port)/") }
        guard case .redirectRefused(let reason)? = error else {
            Issue.record("expected redirectRefused, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("\\r"), "\(reason)")
        #expect(!"\(error!)".unicodeScalars.contains { $0.value < 0x20 }, "one line")
        #expect(redirector.statistics.requestsServed == 1)
        #expect(target.statistics.connectionsAccepted == 0)
    }

    @Test("a credential a challenge handler gives is checked before it is sent")
    func handlerCredential() async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Lab.server(.init(pki: pki), name: "auth") { configuration in
            configuration.handler = { request in
                guard request.header("Authorization") == nil else { return .text("authorised") }
                return LabHTTPResponse(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"lab\"")])
            }
        }
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)]) { configuration in
            configuration.taskChallengeHandler = { _, _ in .credential(.user("eve\r\nX-Injected: 1", password: "pw", persistence: .forSession)) }
        }
        defer { session.invalidate() }
        let error = await failure { try await session.get("https://\(Self.host):\(server.port)/") }
        guard case .invalidRequest(let reason)? = error else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(reason.hasPrefix("credential for httpBasic https://www.example.test:\(server.port) realm=\"lab\" user name: CR (0x0D)"), "\(reason)")
        // The first request drew the 401; the retry with the bad credential never went out,
        // and nothing was remembered.
        #expect(server.statistics.requestsServed == 1)
        let space = ProtectionSpace(host: Self.host, port: Int(server.port), protocol: "https", realm: "lab", authenticationMethod: .httpBasic)
        #expect(session.credentialStore.credential(for: space) == nil)
    }
}
