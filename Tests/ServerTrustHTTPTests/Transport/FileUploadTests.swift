import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Bodies streamed from a file (`HTTPRequest.bodyFilePath`): read as they are sent, sent whole
/// again on each attempt, a missing file a typed error before any byte leaves.
@Suite("file uploads: bodies streamed from a file")
struct FileUploadTests {
    let host = "www.example.test"

    /// A server that answers `/echo` with "METHOD LENGTH SHA256HEX", `/moved` with a 307 to
    /// `/echo`, and `/private` with 401 until Basic credentials come.
    static func server(_ pki: LabPKI) throws -> LabTLSServer {
        let expected = "Basic " + Data("alice:secret".utf8).base64EncodedString()
        return try Lab.server(.init(pki: pki), name: "upload") { configuration in
            configuration.handler = { request in
                func digest() -> LabHTTPResponse {
                    let hex = SHA256.hash(request.body).map { String(format: "%02x", $0) }.joined()
                    return .text("\(request.method) \(request.body.count) \(hex)")
                }
                switch request.path {
                case "/moved": return LabHTTPResponse(status: 307, headers: [("Location", "/echo")])
                case "/private" where request.header("Authorization") != expected:
                    return LabHTTPResponse(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"uploads\"")])
                default: return digest()
                }
            }
        }
    }

    /// 3 MiB of pseudo-random bytes (a fixed sequence) in a temporary file.
    static func bodyFile() throws -> (path: String, bytes: [UInt8]) {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let bytes = (0..<(3 << 20)).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        let path = try Lab.temporaryDirectory() + "/body.bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    static func summary(_ method: String, _ bytes: [UInt8]) -> String {
        "\(method) \(bytes.count) " + SHA256.hash(bytes).map { String(format: "%02x", $0) }.joined()
    }

    @Test("POST and PUT send the whole file; upload progress reaches its size", arguments: [HTTPMethod.post, .put])
    func sendsTheFile(_ method: HTTPMethod) async throws {
        let pki = try Lab.pki(host: host)
        let server = try Self.server(pki)
        defer { server.stop() }
        let (path, bytes) = try Self.bodyFile()
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        let progress = Recorder<TransferProgress>()
        var request = HTTPRequest(method, server.url(host: host, path: "/echo"))
        request.bodyFilePath = path
        request.uploadProgress = { progress.append($0) }
        let response = try await session.send(request)
        #expect(response.statusCode == 200 && response.text == Self.summary(method.rawValue, bytes))
        let last = try #require(progress.all.last)
        #expect(last.completed == Int64(bytes.count) && last.total == Int64(bytes.count))
    }

    @Test("a 307 redirect and a 401 retry each send the file again, from its start")
    func resentOnEveryAttempt() async throws {
        let pki = try Lab.pki(host: host)
        let server = try Self.server(pki)
        defer { server.stop() }
        let (path, bytes) = try Self.bodyFile()
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        var redirected = HTTPRequest(.post, server.url(host: host, path: "/moved"))
        redirected.bodyFilePath = path
        let afterRedirect = try await session.send(redirected)
        #expect(afterRedirect.text == Self.summary("POST", bytes) && afterRedirect.redirects.map(\.statusCode) == [307])
        var authenticated = HTTPRequest(.put, server.url(host: host, path: "/private"))
        authenticated.bodyFilePath = path
        authenticated.credential = .user("alice", password: "secret", persistence: .none)
        let afterChallenge = try await session.send(authenticated)
        #expect(afterChallenge.statusCode == 200 && afterChallenge.text == Self.summary("PUT", bytes))
    }

    @Test("Digest: the retry's negotiation pass sends no body, the authenticated pass the whole file")
    func digestRewindsTheFile() async throws {
        let pki = try Lab.pki(host: host)
        let realm = "upload realm"
        let nonce = "5c1f0b6e2d4a8e39b7c2a1f0e9d8c7b6"
        let attempts = Recorder<Int>()
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                attempts.append(request.body.count)
                if let header = request.header("Authorization"), header.hasPrefix("Digest "),
                    DigestCheck.verify(header, method: request.method, user: "bob", password: "hunter2", realm: realm, nonce: nonce)
                {
                    let hex = SHA256.hash(request.body).map { String(format: "%02x", $0) }.joined()
                    return .text("\(request.method) \(request.body.count) \(hex)")
                }
                return LabHTTPResponse(
                    status: 401,
                    headers: [
                        (
                            "WWW-Authenticate", "Digest realm=\"\(realm)\", qop=\"auth\", algorithm=SHA-256, nonce=\"\(nonce)\""
                        )
                    ])
            }
        }
        defer { server.stop() }
        let (path, bytes) = try Self.bodyFile()
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        var request = HTTPRequest(.post, server.url(host: host, path: "/upload"))
        request.bodyFilePath = path
        request.credential = .user("bob", password: "hunter2", persistence: .none)
        let response = try await session.send(request)
        #expect(response.statusCode == 200 && response.text == Self.summary("POST", bytes))
        // Our first hop (no credential yet: the whole file, answered 401), then curl's two
        // Digest passes in the retry hop: the nonce request without a body (curl's authneg),
        // then the whole file again.
        #expect(attempts.all == [bytes.count, 0, bytes.count])
    }

    @Test("a reused connection that dies after the request went out: curl retries on a fresh one, seeking the file back to its start")
    func rewoundForARetry() async throws {
        let pki = try Lab.pki(host: host)
        let received = Recorder<(connection: Int, bytes: Int)>()
        let dropped = Recorder<Int>()
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                guard request.path == "/upload" else { return .text("warm") }
                received.append((request.connectionIndex, request.body.count))
                // The first upload arrives whole on the kept-alive connection, and the server
                // closes it without answering, as if it had timed the connection out.
                if dropped.all.isEmpty {
                    dropped.append(request.connectionIndex)
                    return .droppedConnection
                }
                let hex = SHA256.hash(request.body).map { String(format: "%02x", $0) }.joined()
                return .text("\(request.method) \(request.body.count) \(hex)")
            }
        }
        defer { server.stop() }
        let (path, bytes) = try Self.bodyFile()
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        let warm = try await session.get(server.url(host: host, path: "/warm"))
        #expect(warm.text == "warm")
        var request = HTTPRequest(.post, server.url(host: host, path: "/upload"))
        request.bodyFilePath = path
        let response = try await session.send(request)
        #expect(response.statusCode == 200 && response.text == Self.summary("POST", bytes), "\(response.text)")
        // Both attempts carried the whole file, the second on a new connection: curl could
        // only resend it by seeking the file back (without the seek callback it fails with
        // CURLE_SEND_FAIL_REWIND).
        let attempts = received.all
        #expect(attempts.map(\.bytes) == [bytes.count, bytes.count])
        #expect(attempts.count == 2 && attempts[0].connection != attempts[1].connection)
        #expect(response.usedNewConnection)
    }

    @Test("a multipart form with file parts is streamed: the server gets exactly the encoded form, a dropped connection resends it")
    func streamedMultipart() async throws {
        let pki = try Lab.pki(host: host)
        let received = Recorder<Int>()
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                received.append(request.body.count)
                // The second form arrives on the kept-alive connection and is dropped once.
                if received.all.count == 2 { return .droppedConnection }
                let hex = SHA256.hash(request.body).map { String(format: "%02x", $0) }.joined()
                return .text("\(request.header("Content-Type") ?? "-") \(request.body.count) \(hex)")
            }
        }
        defer { server.stop() }
        let (first, _) = try Self.bodyFile()
        let second = try Lab.temporaryDirectory() + "/notes.txt"
        try Data("two\nlines\n".utf8).write(to: URL(fileURLWithPath: second))
        var form = MultipartFormData(boundary: "StreamedBoundary")
        form.append(name: "title", value: "two files")
        try form.appendFile(name: "blob", path: first)
        form.append(name: "inline", filename: "i.bin", data: [0, 1, 2])
        try form.appendFile(name: "notes", path: second, contentType: "text/plain")
        #expect(form.parts.map(\.filePath) == [nil, first, nil, second])
        let expected = try form.encoded()
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        let request = try MultipartRequestSerializer().serialize(HTTPRequest(.post, server.url(host: host, path: "/form")), with: form)
        #expect(request.body == nil && request.streamedBody?.pieces.count == 5)
        let progress = Recorder<TransferProgress>()
        var tracked = request
        tracked.uploadProgress = { progress.append($0) }
        let summary =
            "multipart/form-data; boundary=StreamedBoundary \(expected.count) "
            + SHA256.hash(expected).map { String(format: "%02x", $0) }.joined()
        #expect(try await session.send(tracked).text == summary)
        #expect(progress.all.last?.completed == Int64(expected.count))
        // Same connection, dropped: curl rewinds the five pieces and sends them again.
        #expect(try await session.send(request).text == summary)
        #expect(received.all == [expected.count, expected.count, expected.count])
    }

    @Test("a missing file, a directory, or a body and a file together fail before anything is sent")
    func badBodyFiles() async throws {
        let pki = try Lab.pki(host: host)
        let server = try Self.server(pki)
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        let directory = try Lab.temporaryDirectory()
        let missing = directory + "/no-such-file"
        var request = HTTPRequest(.post, server.url(host: host, path: "/echo"))
        request.bodyFilePath = missing
        guard case .fileError(let path, let reason)? = await failure({ try await session.send(request) }) else {
            Issue.record("expected a file error for a missing body file")
            return
        }
        #expect(path == missing && reason.contains("No such file"))
        request.bodyFilePath = directory
        guard case .fileError(_, "not a regular file")? = await failure({ try await session.send(request) }) else {
            Issue.record("expected a file error for a directory")
            return
        }
        // A FIFO nobody writes to: refused at once, not waited on for a writer (POSIX open()).
        // Were the open to wait, a writer after 10 s lets it go on, and the test fails on time.
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        request.bodyFilePath = fifo
        let start = ContinuousClock.now
        guard case .fileError(_, "not a regular file")? = await failure({ try await session.send(request) }) else {
            Issue.record("expected a file error for a FIFO")
            return
        }
        #expect(ContinuousClock.now - start < .seconds(5))
        request.bodyFilePath = directory
        request.body = [1, 2, 3]
        guard case .invalidRequest? = await failure({ try await session.send(request) }) else {
            Issue.record("expected an invalid request for a body and a body file")
            return
        }
        // A form's file part is checked when it is added, as AFNetworking does.
        var form = MultipartFormData()
        #expect(throws: HTTPError.self) { try form.appendFile(name: "f", path: missing) }
        #expect(throws: HTTPError.self) { try form.appendFile(name: "f", path: directory) }
        #expect(form.parts.isEmpty)
        #expect(server.statistics.requestsServed == 0)
    }
}
