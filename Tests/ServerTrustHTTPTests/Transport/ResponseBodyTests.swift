import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

@testable import ServerTrustHTTP

/// Where a response body goes: a download that loses nothing, a bounded in-memory body, and a
/// streamed body with back-pressure.
@Suite("response bodies: downloads that lose nothing, the in-memory limit, streaming")
struct ResponseBodyTests {
    static let host = "www.example.test"

    /// A folder with `destination` holding the old content.
    static func existingFile() throws -> (folder: String, path: String, old: [UInt8]) {
        let folder = try Lab.temporaryDirectory()
        let path = folder + "/report.bin"
        let old = Array("the old content, kept unless a whole new body arrives\n".utf8)
        try Data(old).write(to: URL(fileURLWithPath: path))
        return (folder, path, old)
    }

    static func contents(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func leftovers(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0 != "report.bin" }
    }

    enum Failure: String, CaseIterable, Sendable {
        case trustRejected, connectionRefused, bodyCutOff, redirectToFailure, fileFolderGone
    }

    @Test("a failed download leaves the existing file byte-identical and no temporary file behind", arguments: Failure.allCases)
    func failedDownloadKeepsTheFile(_ kind: Failure) async throws {
        let pki = try Lab.pki(host: Self.host)
        let (folder, path, old) = try Self.existingFile()
        var server: LabTLSServer?
        var refusing: LabClosedPort?
        let url: String
        var trusted = pki
        switch kind {
        case .trustRejected:
            server = try Lab.server(.init(pki: pki))
            trusted = try Lab.pki(host: Self.host, keySlot: 41, algorithm: .p384)
            url = server!.url(host: Self.host)
        case .connectionRefused:
            let closed = try LabClosedPort()
            url = "https://\(Self.host):\(closed.port)/"
            refusing = closed
        case .bodyCutOff:
            server = try Lab.server(.init(pki: pki)) { $0.behavior = .cutResponse(.midBody, then: .closeWithoutNotify) }
            url = server!.url(host: Self.host)
        case .redirectToFailure:
            let target = try Lab.server(.init(pki: pki)) { $0.behavior = .cutResponse(.midBody, then: .closeNotify) }
            server = try Lab.server(.init(pki: pki)) { configuration in
                configuration.handler = { _ in
                    LabHTTPResponse(status: 302, headers: [("Location", target.url(host: Self.host, path: "/moved"))], body: .bytes(Array("moved".utf8)))
                }
            }
            url = server!.url(host: Self.host)
            defer { target.stop() }
            let session = try Lab.session(trusting: pki, resolving: [(Self.host, server!), (Self.host, target)])
            // Both hosts share the name: resolve by port (the session resolves each port on its own).
            var request = HTTPRequest(.get, url)
            request.destinationPath = path
            #expect(await failure { try await session.send(request) } != nil)
            #expect(try Self.contents(path) == old)
            #expect(try Self.leftovers(folder).isEmpty)
            server?.stop()
            return
        case .fileFolderGone:
            server = try Lab.server(.init(pki: pki))
            url = server!.url(host: Self.host)
        }
        defer {
            server?.stop()
            refusing?.close()
        }
        let session = try Lab.session(trusting: trusted, resolving: server.map { [(Self.host, $0)] } ?? []) { configuration in
            if let refusing { configuration.resolve.append("\(Self.host):\(refusing.port):127.0.0.1") }
        }
        var request = HTTPRequest(.get, url)
        request.destinationPath = kind == .fileFolderGone ? folder + "/no-such-folder/report.bin" : path
        let error = await failure { try await session.send(request) }
        #expect(error != nil, "the download must fail")
        if kind == .fileFolderGone {
            guard case .fileError? = error else {
                Issue.record("expected a file error, got \(String(describing: error))")
                return
            }
        }
        #expect(try Self.contents(path) == old)
        let left = try Self.leftovers(folder)
        #expect(left.isEmpty, "\(left)")
    }

    @Test("a completed download replaces the file whole, keeps its mode, and only the final hop's body is written")
    func completedDownloadReplaces() async throws {
        let pki = try Lab.pki(host: Self.host)
        let body = [UInt8]((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                request.path == "/start"
                    ? LabHTTPResponse(status: 302, headers: [("Location", "/final")], body: .bytes(Array("redirect page".utf8)))
                    : LabHTTPResponse(body: .bytes(body))
            }
        }
        defer { server.stop() }
        let (folder, path, _) = try Self.existingFile()
        chmod(path, 0o640)
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)])
        var request = HTTPRequest(.get, server.url(host: Self.host, path: "/start"))
        request.destinationPath = path
        let response = try await session.send(request)
        #expect(response.statusCode == 200 && response.body.isEmpty && response.redirects.count == 1)
        #expect(try Self.contents(path) == body)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o640)
        #expect(try Self.leftovers(folder).isEmpty)
        // A new file gets 0644 (less the umask).
        var fresh = HTTPRequest(.get, server.url(host: Self.host, path: "/final"))
        fresh.destinationPath = folder + "/new.bin"
        _ = try await session.send(fresh)
        #expect(try Self.contents(folder + "/new.bin") == body)
    }

    @Test("an in-memory body past the limit is a typed error, counted after decoding; streamed and file bodies are not limited")
    func inMemoryLimit() async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { _ in LabHTTPResponse(body: .repeated(0x41, count: 5 << 20)) }
        }
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)]) { $0.maximumResponseBodySize = 1 << 20 }
        let url = server.url(host: Self.host)
        let error = await failure { try await session.get(url) }
        guard case .responseBodyTooLarge(let limit)? = error else {
            Issue.record("expected responseBodyTooLarge, got \(String(describing: error))")
            return
        }
        #expect(limit == 1 << 20)
        #expect("\(error!)".contains("larger than 1048576 bytes"))
        // Per request, the limit can be raised.
        var larger = HTTPRequest(.get, url)
        larger.maximumResponseBodySize = 8 << 20
        #expect(try await session.send(larger).body.count == 5 << 20)
        // Streamed: no limit, every byte arrives, in order.
        let streamed = try await session.stream(HTTPRequest(.get, url))
        #expect(streamed.head.statusCode == 200 && streamed.head.trustDecision?.isTrusted == true)
        var count = 0
        for try await chunk in streamed.body {
            #expect(chunk.allSatisfy { $0 == 0x41 })
            count += chunk.count
        }
        #expect(count == 5 << 20)
    }

    @Test("a streamed body: the head first, back-pressure while unread, cancellation when dropped")
    func streaming() async throws {
        let pki = try Lab.pki(host: Self.host)
        let size = 64 << 20
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                switch request.path {
                case "/big": return LabHTTPResponse(body: .repeated(0x5A, count: size))
                case "/huge": return LabHTTPResponse(body: .repeated(0x5A, count: 1 << 30))
                default: return .text("small")
                }
            }
        }
        defer { server.stop() }
        // A paused transfer's time counts toward its timeout (curl's total timeout): generous,
        // since a reader starved of threads by other tests pauses it too.
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)]) { $0.timeout = 120 }
        let big = server.url(host: Self.host, path: "/big")

        // The head comes back while most of the body is still at the server: read one chunk and
        // wait; what the client takes in meanwhile stays within the channel's capacity (the
        // transfer pauses, and the rest waits at the server and in the socket buffers).
        let streamed = try await session.stream(HTTPRequest(.get, big))
        #expect(streamed.head.statusCode == 200 && streamed.head.headers["Content-Length"] == "\(size)")
        var iterator = streamed.body.makeAsyncIterator()
        var received = try #require(try await iterator.next()).count
        try await Task.sleep(nanoseconds: 300_000_000)
        let buffered = streamed.body.channel.bufferedBytes
        #expect(buffered <= streamed.body.channel.capacity + (256 << 10), "buffered while unread: \(buffered) bytes")
        while let chunk = try await iterator.next() { received += chunk.count }
        #expect(received == size)

        // A stream dropped unread cancels its transfer; the session goes on.
        do {
            let dropped = try await session.stream(HTTPRequest(.get, big))
            #expect(dropped.head.statusCode == 200)
        }
        #expect(try await session.get(server.url(host: Self.host)).text == "small")
        // A cancelled reader ends with .cancelled.
        let reader = Task { () -> Int in
            let streamed = try await session.stream(HTTPRequest(.get, server.url(host: Self.host, path: "/huge")))
            var total = 0
            for try await chunk in streamed.body { total += chunk.count }
            return total
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        reader.cancel()
        let outcome = await reader.result
        if case .success(let total) = outcome { #expect(total < 1 << 30, "cancelled mid-body") }
        #expect(try await session.get(server.url(host: Self.host)).text == "small")
    }

    @Test("cancelling a reader that waits for the body closes the connection at once, even while the reader has no thread to run on")
    func cancellationNeedsNoThread() async throws {
        // Half the body, then silence: the reader waits for the rest.
        let setup = try LabFaultSetup.start(.stallMidBody)
        defer { setup.stop() }
        let port = try #require(setup.server?.port)
        var configuration = HTTPSessionConfiguration(
            serverTrust: try Lab.decider(anchors: TrustStore([try Certificate(derEncoded: setup.root.der)], sources: ["lab root"])))
        configuration.resolve = setup.resolve
        configuration.timeout = 120
        let session = try HTTPSession(configuration: configuration)
        defer { session.invalidate() }

        let executor = HoldableExecutor()
        defer { executor.stop() }
        let received = Mutex(0)
        let url = setup.url
        let reader = Task(executorPreference: executor) { () throws -> Int in
            let streamed = try await session.stream(HTTPRequest(.get, url))
            for try await chunk in streamed.body { received.withLock { $0 += chunk.count } }
            return received.withLock { $0 }
        }
        #expect(await eventually(within: 30) { received.withLock { $0 } == 1024 }, "the first half of the body never arrived")
        #expect(connectedSockets(toPorts: [port]).count == 1)

        // Nothing of the reader's can run now, as when every thread of the cooperative pool is
        // busy. The cancellation alone must end the transfer: its connection closes, long
        // before the server's silence or the session's timeout would end it.
        executor.hold()
        reader.cancel()
        #expect(
            await eventually(within: 10) { connectedSockets(toPorts: [port]).isEmpty },
            "the transfer went on until the reader could run: \(connectedSockets(toPorts: [port]))")
        executor.release()
        let outcome = await reader.result
        guard case .failure(let error) = outcome, case .cancelled? = error as? HTTPError else {
            Issue.record("the reader should end with HTTPError.cancelled, got \(outcome)")
            return
        }
    }

    /// `bytes` gzip-compressed by the system's gzip (fixtures never come from the code under test).
    static func gzip(_ bytes: [UInt8]) async throws -> [UInt8] {
        let run = try await LabProcess.run("/bin/gzip", ["-c", "-9", "-n"], input: bytes)
        guard run.status == 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "gzip: \(run)"]) }
        return run.stdout
    }

    @Test("a gzip bomb is stopped at maximumDecodedBodySize when written to a file or streamed; a plain body of the same size is not")
    func decodedBodyBound() async throws {
        let pki = try Lab.pki(host: Self.host)
        // The attacker's body: 16 MiB of zeros, about 16 KiB on the wire.
        let decoded = 16 << 20
        let bomb = try await Self.gzip([UInt8](repeating: 0, count: decoded))
        #expect(bomb.count < 64 << 10)
        let plain = [UInt8](repeating: 0x41, count: 3 << 20)
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                request.path == "/plain"
                    ? LabHTTPResponse(status: 200, headers: [("Content-Type", "application/octet-stream")], body: .bytes(plain))
                    : LabHTTPResponse(status: 200, headers: [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")], body: .bytes(bomb))
            }
        }
        defer { server.stop() }
        let limit = 1 << 20
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)]) { $0.maximumDecodedBodySize = limit }
        defer { session.invalidate() }
        let (folder, path, old) = try Self.existingFile()
        defer { try? FileManager.default.removeItem(atPath: folder) }

        // To a file: refused at the limit, the old file kept, no temporary file left.
        var download = HTTPRequest(.get, server.url(host: Self.host, path: "/bomb"))
        download.destinationPath = path
        do {
            _ = try await session.send(download)
            Issue.record("the bomb was written whole: \((try? Self.contents(path).count) ?? -1) bytes")
        } catch {
            guard case .responseBodyTooLarge(let reported) = error, reported == limit else {
                Issue.record("\(error)")
                return
            }
        }
        #expect(try Self.contents(path) == old)
        #expect(try Self.leftovers(folder).isEmpty)

        // Streamed: the reader gets at most the limit, then the error.
        var received = 0
        do {
            let streamed = try await session.stream(HTTPRequest(.get, server.url(host: Self.host, path: "/bomb")))
            for try await chunk in streamed.body { received += chunk.count }
            Issue.record("the stream delivered the whole bomb: \(received) bytes")
        } catch {
            guard case .responseBodyTooLarge(let reported)? = error as? HTTPError, reported == limit else {
                Issue.record("\(error)")
                return
            }
        }
        #expect(received <= limit)

        // A body without a content coding is the server's to pay for: not limited here.
        var plainDownload = HTTPRequest(.get, server.url(host: Self.host, path: "/plain"))
        plainDownload.destinationPath = path
        _ = try await session.send(plainDownload).validate()
        #expect(try Self.contents(path) == plain)
    }

}
