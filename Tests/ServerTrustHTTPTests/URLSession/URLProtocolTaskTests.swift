import Foundation
import ServerTrustURLSession
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The task kinds of `URLSession` through `ServerTrustURLProtocol`: data tasks (async, with a
/// completion handler, with a data delegate), upload tasks from memory, from a file and from
/// a stream, and the download tasks swift-corelibs-foundation does not let a URLProtocol finish.
@Suite(
    "URLSession drop-in: data, upload and download tasks",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct URLProtocolTaskTests {
    func post(_ url: URL, method: String = "POST") -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        return request
    }

    /// A file of `count` pseudo-random bytes.
    func randomFile(_ count: Int, in directory: String) throws -> (path: String, bytes: Data) {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        while bytes.count < count { withUnsafeBytes(of: generator.next()) { bytes += $0 } }
        bytes.removeLast(bytes.count - count)
        let path = directory + "/upload-\(UUID().uuidString).bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, Data(bytes))
    }

    @Test("a data delegate hears the response, the body and the completion, in that order; the body is whole")
    func dataDelegate() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let recorder = DelegateRecorder()
        let urlSession = lab.urlSession(try lab.httpSession(), delegate: recorder)
        urlSession.dataTask(with: lab.extrasURL("/big.txt")).resume()
        #expect(await recorder.waitForCompletion())
        let expected = try #require(FileManager.default.contents(atPath: lab.lab.directory + "/extras/big.txt"))
        #expect(expected.count > 800_000)
        #expect(recorder.events == [.response(200), .data(expected.count), .complete(nil)], "\(recorder.events)")
        #expect(recorder.body == expected)
    }

    @Test("gzip is decoded; request headers and repeated response fields come through; plain HTTP too")
    func headersAndEncoding() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())

        let (large, largeResponse) = try await urlSession.data(from: lab.url(.valid, "/large.txt"))
        #expect(String(decoding: large, as: UTF8.self) == lab.lab.largeText)
        #expect((largeResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")

        var request = post(lab.extrasURL("/echo"))
        request.setValue("from the app", forHTTPHeaderField: "X-App-Header")
        request.setValue("text/plain; charset=utf-8", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("a body in the request".utf8)
        let (echo, echoResponse) = try await urlSession.data(for: request)
        let http = try #require(echoResponse as? HTTPURLResponse)
        #expect(String(decoding: echo, as: UTF8.self) == "a body in the request")
        #expect(http.value(forHTTPHeaderField: "X-App-Header") == "from the app")
        #expect(http.value(forHTTPHeaderField: "X-Request-Content-Type") == "text/plain; charset=utf-8")
        #expect(http.value(forHTTPHeaderField: "X-Method") == "POST")

        // A Content-Length of the app's own does not frame the body: the transport's does.
        var framed = post(lab.extrasURL("/echo"))
        framed.httpBody = Data("0123456789".utf8)
        framed.allHTTPHeaderFields = ["Content-Length": "3", "Connection": "close"]
        let (whole, _) = try await urlSession.data(for: framed)
        #expect(String(decoding: whole, as: UTF8.self) == "0123456789")

        let (_, cookies) = try await urlSession.data(from: lab.extrasURL("/cookies"))
        #expect((cookies as? HTTPURLResponse)?.value(forHTTPHeaderField: "set-cookie") == "a=1; Path=/, b=2; Path=/")

        // Plain HTTP goes through the session too (there is no trust to decide).
        let plainURL = try #require(URL(string: "http://\(NginxLab.host):\(lab.plainPort)/plain"))
        let (plain, _) = try await urlSession.data(from: plainURL)
        #expect(String(decoding: plain, as: UTF8.self) == "plain http\n")

        var head = URLRequest(url: lab.url(.valid))
        head.httpMethod = "HEAD"
        let (headBody, headResponse) = try await urlSession.data(for: head)
        #expect(headBody.isEmpty && (headResponse as? HTTPURLResponse)?.expectedContentLength == Int64(NginxLab.index.utf8.count))
    }

    @Test("upload tasks send their body: from memory (handler and async) and from a request's body stream")
    func uploadFromMemory() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())
        let request = post(lab.extrasURL("/echo"))
        let body = Data("uploaded from memory".utf8)

        let handled = await urlSession.completion { $0.uploadTask(with: request, from: body, completionHandler: $1) }
        #expect(handled.error == nil && handled.data == body, "\(String(describing: handled.error)) \(handled.text)")
        let (echo, _) = try await urlSession.upload(for: request, from: Data("async upload".utf8))
        #expect(String(decoding: echo, as: UTF8.self) == "async upload")
        // The upload task's body wins over the request's (Apple ignores the request's).
        var withBody = request
        withBody.httpBody = Data("the request's own body".utf8)
        let (chosen, _) = try await urlSession.upload(for: withBody, from: Data("the task's body".utf8))
        #expect(String(decoding: chosen, as: UTF8.self) == "the task's body")

        var streamed = request
        streamed.httpBodyStream = InputStream(data: Data("from a body stream".utf8))
        let (fromStream, _) = try await urlSession.data(for: streamed)
        #expect(String(decoding: fromStream, as: UTF8.self) == "from a body stream")
        #expect(await eventually { lab.extrasRequests.filter { $0.contains("POST /echo") }.count == 4 }, "\(lab.extrasRequests)")
    }

    @Test("upload tasks from a file: the file arrives byte for byte (WebDAV PUT), a missing file fails unsent")
    func uploadFromFile() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())
        let file = try randomFile(3 << 20, in: lab.lab.directory)

        let (_, response) = try await urlSession.upload(
            for: post(lab.extrasURL("/put/async.bin"), method: "PUT"),
            fromFile: URL(fileURLWithPath: file.path))
        #expect((response as? HTTPURLResponse)?.statusCode == 201)
        #expect(FileManager.default.contents(atPath: lab.putDirectory + "/async.bin") == file.bytes)

        let handled = await urlSession.completion {
            $0.uploadTask(
                with: post(lab.extrasURL("/put/handler.bin"), method: "PUT"), fromFile: URL(fileURLWithPath: file.path),
                completionHandler: $1)
        }
        #expect(handled.http?.statusCode == 201, "\(String(describing: handled.error))")
        #expect(FileManager.default.contents(atPath: lab.putDirectory + "/handler.bin") == file.bytes)

        let missing = lab.lab.directory + "/no-such-file.bin"
        let error = await urlError {
            try await urlSession.upload(for: post(lab.extrasURL("/put/missing.bin"), method: "PUT"), fromFile: URL(fileURLWithPath: missing))
        }
        #expect(error?.code == .fileDoesNotExist, "\(String(describing: error))")
        try await Task.sleep(for: .milliseconds(200))
        #expect(lab.extrasRequests.filter { $0.contains("PUT /put/") }.count == 2, "\(lab.extrasRequests)")
        #expect(!lab.extrasRequests.contains { $0.contains("missing") })
    }

    @Test("uploadTask(withStreamedRequest:) needs the delegate through the session: it fails, unsent")
    func streamedRequestUpload() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let recorder = DelegateRecorder()
        let urlSession = lab.urlSession(try lab.httpSession(), delegate: recorder)
        urlSession.uploadTask(withStreamedRequest: post(lab.extrasURL("/echo?streamed"))).resume()
        #expect(await recorder.waitForCompletion())
        #expect(recorder.events == [.complete(.requestBodyStreamExhausted)], "\(recorder.events)")
        #expect((recorder.error as? URLError)?.localizedDescription.contains("withStreamedRequest") == true)
        try await Task.sleep(for: .milliseconds(200))
        #expect(!lab.extrasRequests.contains { $0.contains("streamed") })
    }

    @Test("download tasks fail at once with unsupportedURL, never sent (Foundation would crash on a foreign protocol's download)")
    func downloadTasksRefused() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())

        let asyncError = await urlError { try await urlSession.download(from: lab.url(.valid, "/?download-async")) }
        #expect(asyncError?.code == .unsupportedURL && asyncError?.localizedDescription.contains("download task") == true)

        let handled: (URL?, URLError?) = await withCheckedContinuation { continuation in
            urlSession.downloadTask(with: lab.url(.valid, "/?download-handler")) { location, _, error in
                continuation.resume(returning: (location, error as? URLError))
            }.resume()
        }
        #expect(handled.0 == nil && handled.1?.code == .unsupportedURL)

        let recorder = DelegateRecorder()
        lab.urlSession(try lab.httpSession(), delegate: recorder).downloadTask(with: lab.url(.valid, "/?download-delegate")).resume()
        #expect(await recorder.waitForCompletion())
        #expect(recorder.events == [.complete(.unsupportedURL)], "\(recorder.events)")

        try await Task.sleep(for: .milliseconds(200))
        #expect(!lab.lab.requests(.valid).contains { $0.contains("download") }, "\(lab.lab.requests(.valid))")
    }
}
