import Foundation
import ServerTrustURLSession
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Cancellation through `ServerTrustURLProtocol`: `URLSessionTask.cancel()` and the cancellation
/// of a Swift task awaiting `data(for:)` call `stopLoading()`, which cancels the load's Swift
/// task (and with it the transfer); Foundation reports `URLError.cancelled` once. That the
/// transfer itself ended (Foundation reports `cancelled` either way) shows in the client's TCP
/// table: its connection closes, where a transfer left to finish would stay pooled.
@Suite(
    "URLSession drop-in: cancellation",
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
        // The head and the first chunk are out; nginx now holds the rest for 10 s, longer than a
        // loaded machine takes from here to the cancel (with 3 s the body once completed first,
        // and the finished transfer's connection stayed pooled, as it should).
        #expect(await eventually(within: 30) { recorder.events == [.response(200)] }, "\(recorder.events)")
        #expect(lab.openConnectionsToExtras == 1)
        task.cancel()
        #expect(await recorder.waitForCompletion(seconds: 10))
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorder.events == [.response(200), .complete(.cancelled)], "\(recorder.events)")
        #expect(task.state == .completed)
        #expect(await eventually(within: 20) { lab.openConnectionsToExtras == 0 }, "the transfer's connection stayed open")
        // nginx ends the response after its pause; nothing of it reaches the delegate.
        #expect(await eventually(within: 20) { lab.extrasRequests.contains { $0.contains("GET /stall-body") } })
        #expect(recorder.events == [.response(200), .complete(.cancelled)], "nothing was delivered after the cancel: \(recorder.events)")
    }

    @Test("cancelling the Swift task awaiting data(for:) fails it with URLError.cancelled and tears the transfer down")
    func cancelSwiftTask() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())
        let url = lab.extrasURL("/slow")
        let waiting = Task { await urlError { try await urlSession.data(from: url) } }
        #expect(await eventually(within: 30) { lab.openConnectionsToExtras == 1 }, "the request never connected")
        waiting.cancel()
        let error = await waiting.value
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        #expect(await eventually(within: 20) { lab.openConnectionsToExtras == 0 }, "the transfer's connection stayed open")
    }

    @Test("suspend() stops the load and resume() starts it over: the task completes once, whole")
    func suspendAndResume() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let recorder = DelegateRecorder()
        let urlSession = lab.urlSession(try lab.httpSession(), delegate: recorder)
        // Six ticks 2 s apart: a loaded machine suspends well before the body ends (with the
        // 2.5 s /trickle, the body once finished first and its connection stayed pooled).
        let task = urlSession.dataTask(with: lab.extrasURL("/trickle-slow"))
        task.resume()
        // The first request is in flight (its head arrived), and its body is not yet delivered.
        #expect(await eventually(within: 30) { recorder.events == [.response(200)] }, "\(recorder.events)")
        #expect(lab.openConnectionsToExtras == 1)
        task.suspend()
        #expect(task.state == .suspended)
        #expect(await eventually(within: 20) { lab.openConnectionsToExtras == 0 }, "the suspended load's connection stayed open")
        task.resume()
        #expect(await recorder.waitForCompletion())
        let body = (1...6).map { "tick \($0)\n" }.joined()
        // The second load's head, then the whole body once, then one completion.
        #expect(recorder.events == [.response(200), .response(200), .data(body.utf8.count), .complete(nil)], "\(recorder.events)")
        #expect(String(decoding: recorder.body, as: UTF8.self) == body)
        #expect(await eventually { lab.extrasRequests.filter { $0.contains("GET /trickle-slow") }.count == 2 }, "\(lab.extrasRequests)")
    }
}
