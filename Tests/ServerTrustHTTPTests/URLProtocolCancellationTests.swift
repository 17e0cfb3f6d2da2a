import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerTrustURLSession
import Testing

/// Cancellation through `ServerTrustURLProtocol`: `URLSessionTask.cancel()` and the cancellation
/// of a Swift task awaiting `data(for:)` call `stopLoading()`, which cancels the load's Swift
/// task (and with it the transfer); Foundation reports `URLError.cancelled` once. That the
/// transfer itself ended (and not only the task) shows at nginx, which cannot complete the
/// response (`completion=` in its log, not `completion=OK`).
@Suite("URLSession drop-in: cancellation",
       .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct URLProtocolCancellationTests {
    @Test("cancel() mid-body tears the transfer down; the task completes once, with cancelled")
    func cancelTask() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let recorder = DelegateRecorder()
        let urlSession = lab.urlSession(try lab.httpSession(), delegate: recorder)
        let task = urlSession.dataTask(with: lab.extrasURL("/stall-body"))
        task.resume()
        // The head and the first chunk are out; nginx now holds the rest for 3 s.
        #expect(await eventually(within: 30) { recorder.events == [.response(200)] }, "\(recorder.events)")
        task.cancel()
        #expect(await recorder.waitForCompletion(seconds: 10))
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorder.events == [.response(200), .complete(.cancelled)], "\(recorder.events)")
        #expect(task.state == .completed)
        // The transfer itself was torn down: nginx could not finish the response.
        #expect(await eventually(within: 15) { lab.extrasRequests.contains { $0.contains("GET /stall-body") && $0.hasSuffix("completion=") } },
                "\(lab.extrasRequests)")
        #expect(recorder.events == [.response(200), .complete(.cancelled)], "nothing was delivered after the cancel: \(recorder.events)")
    }

    @Test("cancelling the Swift task awaiting data(for:) fails it with URLError.cancelled and tears the transfer down")
    func cancelSwiftTask() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())
        let url = lab.extrasURL("/slow")
        let waiting = Task { await urlError { try await urlSession.data(from: url) } }
        try await Task.sleep(for: .milliseconds(500))
        waiting.cancel()
        let error = await waiting.value
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        #expect(await eventually(within: 15) { lab.extrasRequests.contains { $0.contains("GET /slow") && $0.hasSuffix("completion=") } },
                "\(lab.extrasRequests)")
    }

    @Test("suspend() stops the load and resume() starts it over: the task completes once, whole")
    func suspendAndResume() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let recorder = DelegateRecorder()
        let urlSession = lab.urlSession(try lab.httpSession(), delegate: recorder)
        let task = urlSession.dataTask(with: lab.extrasURL("/trickle"))
        task.resume()
        // The first request is in flight (its head arrived), and its body is not yet delivered.
        #expect(await eventually(within: 30) { recorder.events == [.response(200)] }, "\(recorder.events)")
        task.suspend()
        try await Task.sleep(for: .milliseconds(300))
        #expect(task.state == .suspended)
        task.resume()
        #expect(await recorder.waitForCompletion())
        let body = (1...5).map { "tick \($0)\n" }.joined()
        // The second load's head, then the whole body once, then one completion.
        #expect(recorder.events == [.response(200), .response(200), .data(body.utf8.count), .complete(nil)], "\(recorder.events)")
        #expect(String(decoding: recorder.body, as: UTF8.self) == body)
        // The first load was torn down when suspended; the second completed.
        #expect(await eventually { lab.extrasRequests.filter { $0.contains("GET /trickle") }.count == 2 }, "\(lab.extrasRequests)")
        #expect(lab.extrasRequests.filter { $0.contains("GET /trickle") }.map { $0.hasSuffix("completion=OK") } == [false, true],
                "\(lab.extrasRequests)")
    }
}
