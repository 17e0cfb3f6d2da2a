import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing

@Suite("session manager: methods, serializers, progress, compression")
struct SerializationTests {
    static let host = "www.example.test"

    /// Echoes method, target, content type and body as JSON-ish text.
    static func echoServer(_ pki: LabPKI) throws -> LabTLSServer {
        try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                switch request.path {
                case "/json":
                    return LabHTTPResponse(
                        status: 200, headers: [("Content-Type", "application/json; charset=utf-8")],
                        body: .bytes(Array(#"{"name":"lab","count":3,"ok":true,"tags":["a","b"],"none":null}"#.utf8)))
                case "/notjson":
                    return LabHTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: .bytes(Array("{oops".utf8)))
                case "/missing":
                    return .text("nothing here", status: 404)
                case "/big":
                    return .chunked(Array(repeating: [UInt8](repeating: 0x61, count: 16_384), count: 16))
                case "/gzip":
                    return LabHTTPResponse(
                        status: 200, headers: [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")],
                        body: .bytes(Self.gzipped))
                case "/headers":
                    // Repeated names in two spellings, an obsolete folded value, padding.
                    return LabHTTPResponse(
                        status: 200,
                        headers: [
                            ("X-Multi", "one"), ("x-multi", "two"), ("X-Folded", "first\r\n\tsecond"), ("X-Padded", "  padded  "),
                            ("X-Empty", ""),
                        ], body: .bytes(Array("ok".utf8)))
                default:
                    let echo =
                        "\(request.method) \(request.target) type=\(request.header("Content-Type") ?? "-") "
                        + "x=\(request.header("X-Default") ?? "-") accept-encoding=\(request.header("Accept-Encoding") ?? "-")\n"
                    return LabHTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: .bytes(Array(echo.utf8) + request.body))
                }
            }
        }
    }

    /// "hello gzip\n" × 100, compressed by the system gzip (an independent encoder).
    static let gzipped: [UInt8] = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try? process.run()
        input.fileHandleForWriting.write(Data(String(repeating: "hello gzip\n", count: 100).utf8))
        try? input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Array(data)
    }()

    func session(_ server: LabTLSServer, _ pki: LabPKI, configure: (inout HTTPSessionConfiguration) -> Void = { _ in }) throws -> HTTPSession {
        try Lab.session(trusting: pki, resolving: [(Self.host, server)]) { configuration in
            configuration.baseURL = server.url(host: Self.host, path: "/api/")
            configuration.defaultHeaders["X-Default"] = "yes"
            configure(&configuration)
        }
    }

    @Test("methods, base URL, default headers and URL-encoded parameters")
    func methods() async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Self.echoServer(pki)
        defer { server.stop() }
        let session = try session(server, pki)
        let get = try await session.get("items", parameters: [("q", "a b&c"), ("n", "1")])
        #expect(get.text.hasPrefix("GET /api/items?q=a%20b%26c&n=1 type=- x=yes"))
        let post = try await session.post("items", parameters: [("name", "é")])
        #expect(post.text.hasPrefix("POST /api/items type=application/x-www-form-urlencoded; charset=utf-8 x=yes"))
        #expect(post.text.hasSuffix("\nname=%C3%A9"))
        let put = try await session.put("items/1", parameters: [("v", "2")])
        #expect(put.text.hasPrefix("PUT /api/items/1 type=application/x-www-form-urlencoded") && put.text.hasSuffix("\nv=2"))
        let patch = try await session.patch("items/1", json: ["v": 3])
        #expect(patch.text.hasPrefix("PATCH /api/items/1 type=application/json") && patch.text.hasSuffix("\n{\"v\":3}"))
        let delete = try await session.delete("items/1", parameters: [("force", "true")])
        #expect(delete.text.hasPrefix("DELETE /api/items/1?force=true"))
        let head = try await session.head("items")
        #expect(head.statusCode == 200 && head.body.isEmpty && head.headers["Content-Length"] != nil)
        let absolute = try await session.get(server.url(host: Self.host, path: "/elsewhere"), headers: ["X-Default": "overridden"])
        #expect(absolute.text.hasPrefix("GET /elsewhere type=- x=overridden"))
    }

    @Test("JSON and Decodable responses, with typed errors for status, type and syntax")
    func responseSerializers() async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Self.echoServer(pki)
        defer { server.stop() }
        let session = try session(server, pki)
        let json = try await session.send(HTTPRequest(.get, "/json"), serializer: JSONResponseSerializer())
        #expect(json["name"] == "lab" && json["count"]?.numberValue == 3 && json["ok"] == true && json["tags"]?[1] == "b" && json["none"] == .null)

        struct Thing: Decodable, Sendable {
            var name: String
            var count: Int
            var tags: [String]
        }
        let thing = try await session.send(HTTPRequest(.get, "/json"), serializer: DecodableResponseSerializer(Thing.self))
        #expect(thing.name == "lab" && thing.count == 3 && thing.tags == ["a", "b"])

        let notFound = await failure { try await session.send(HTTPRequest(.get, "/missing"), serializer: StringResponseSerializer()) }
        guard case .unacceptableStatusCode(let response)? = notFound else {
            Issue.record("expected unacceptableStatusCode, got \(String(describing: notFound))")
            return
        }
        #expect(response.statusCode == 404 && response.text == "nothing here")
        #expect("\(notFound!)" == "unacceptable status code: 404 for \(server.url(host: Self.host, path: "/missing"))")
        // 404 accepted explicitly.
        let lenient = StringResponseSerializer(validation: ResponseValidation(acceptableStatusCodes: [404]))
        #expect(try await session.send(HTTPRequest(.get, "/missing"), serializer: lenient) == "nothing here")

        let wrongType = await failure { try await session.send(HTTPRequest(.get, "/plain"), serializer: JSONResponseSerializer()) }
        guard case .unacceptableContentType? = wrongType else {
            Issue.record("expected unacceptableContentType, got \(String(describing: wrongType))")
            return
        }
        let broken = await failure { try await session.send(HTTPRequest(.get, "/notjson"), serializer: JSONResponseSerializer()) }
        guard case .responseSerializationFailed? = broken else {
            Issue.record("expected responseSerializationFailed, got \(String(describing: broken))")
            return
        }
        #expect("\(broken!)".hasPrefix("response serialization failed: invalid JSON"))
    }

    @Test("multipart/form-data with several files")
    func multipart() async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Self.echoServer(pki)
        defer { server.stop() }
        let session = try session(server, pki)
        let directory = try Lab.temporaryDirectory()
        let path = directory + "/report.csv"
        try Data("a,b\n1,2\n".utf8).write(to: URL(fileURLWithPath: path))
        var form = MultipartFormData(boundary: "XyZ")
        form.append(name: "title", value: "two files")
        form.append(name: "photo", filename: "p.bin", contentType: "image/png", data: [0, 1, 2, 255])
        try form.appendFile(name: "report", path: path, contentType: "text/csv")
        let response = try await session.post("upload", multipart: form)
        let expected: [UInt8] =
            Array(
                """
                --XyZ\r
                Content-Disposition: form-data; name="title"\r
                \r
                two files\r
                --XyZ\r
                Content-Disposition: form-data; name="photo"; filename="p.bin"\r
                Content-Type: image/png\r
                \r

                """.utf8) + [0, 1, 2, 255]
            + Array(
                """
                \r
                --XyZ\r
                Content-Disposition: form-data; name="report"; filename="report.csv"\r
                Content-Type: text/csv\r
                \r
                a,b
                1,2
                \r
                --XyZ--\r

                """.utf8)
        let echoed = Array(response.body.drop { $0 != 10 }.dropFirst())
        #expect(echoed == expected)
        #expect(response.text.hasPrefix("POST /api/upload type=multipart/form-data; boundary=XyZ"))
    }

    @Test("upload and download progress, download to a file, gzip decoding")
    func progressAndCompression() async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Self.echoServer(pki)
        defer { server.stop() }
        let session = try session(server, pki)

        let downloads = Recorder<TransferProgress>()
        let uploads = Recorder<TransferProgress>()
        let directory = try Lab.temporaryDirectory()
        var download = HTTPRequest(.get, "/big")
        download.destinationPath = directory + "/big.bin"
        download.downloadProgress = { downloads.append($0) }
        let saved = try await session.send(download)
        #expect(saved.body.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/big.bin")).count == 16 * 16_384)
        let completed: [Int] = downloads.all.map { Int($0.completed) }
        #expect(completed.last == 262_144, "\(completed)")
        #expect(downloads.all.map(\.completed) == downloads.all.map(\.completed).sorted())

        var upload = HTTPRequest(.post, "/sink", body: [UInt8](repeating: 7, count: 300_000))
        upload.headers["Content-Type"] = "application/octet-stream"
        upload.uploadProgress = { uploads.append($0) }
        let echoed = try await session.send(upload)
        #expect(echoed.body.count > 300_000)
        #expect(uploads.all.last == TransferProgress(completed: 300_000, total: 300_000) || uploads.all.last?.completed == 300_000)

        let compressed = try await session.get("/gzip")
        #expect(compressed.text == String(repeating: "hello gzip\n", count: 100))
        #expect(compressed.headers["Content-Encoding"] == "gzip")
        let echo = try await session.get("/plain")
        #expect(echo.text.contains("accept-encoding=") && echo.text.contains("gzip"))
    }

    @Test("received headers: lookups, repeats, folding, order, and edits")
    func receivedHeaders() async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Self.echoServer(pki)
        defer { server.stop() }
        let session = try session(server, pki)
        let response = try await session.get("/headers")
        let headers = response.headers
        #expect(headers["X-MULTI"] == "one")
        #expect(headers.values("x-multi") == ["one", "two"])
        #expect(headers["x-folded"] == "first second")
        #expect(headers["X-Padded"] == "padded")
        #expect(headers["X-Empty"] == "")
        #expect(headers["X-Absent"] == nil)
        #expect(headers["Content-Length"] == "2")
        let names = headers.fields.map(\.name)
        #expect(Array(names.prefix(5)) == ["X-Multi", "x-multi", "X-Folded", "X-Padded", "X-Empty"], "\(names)")
        #expect(headers.map(\.value).prefix(3) == ["one", "two", "first second"])
        #expect(headers.description.hasPrefix("X-Multi: one\nx-multi: two\nX-Folded: first second\n"))
        var edited = headers
        edited["x-MULTI"] = "three"
        edited.add("X-New", "new")
        #expect(edited.values("X-Multi") == ["three"])
        #expect(edited["x-new"] == "new")
        #expect(edited.fields.count == headers.fields.count)
        #expect(headers.values("X-Multi") == ["one", "two"])
    }

    @Test("headers, pins and URLs parse as documented")
    func valueTypes() throws {
        var headers: HTTPHeaders = ["Content-Type": "text/plain"]
        headers.add("Set-Cookie", "a=1")
        headers.add("set-cookie", "b=2")
        #expect(headers["content-type"] == "text/plain")
        #expect(headers.values("SET-COOKIE") == ["a=1", "b=2"])
        headers["Set-Cookie"] = nil
        #expect(headers.fields.count == 1)
        #expect(try JSONValue.parse(Array(#"[1, "x", {"k": false}]"#.utf8)) == [1, "x", ["k": false]])
        #expect(("\(HTTPError.invalidURL("ftp://x"))") == "invalid URL: ftp://x")
        #expect("\(Credential.user("u", password: "p"))" == "password credential for u (forSession)")
    }
}
