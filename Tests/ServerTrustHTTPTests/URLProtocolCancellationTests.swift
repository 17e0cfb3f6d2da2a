import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerTrustURLSession
import Synchronization
import Testing

/// Cancellation through `ServerTrustURLProtocol`: `URLSessionTask.cancel()` and the cancellation
/// of a Swift task awaiting `data(for:)` call `stopLoading()`, which cancels the load's Swift
/// task (and with it the transfer); Foundation reports `URLError.cancelled` once.
@Suite("URLSession drop-in: cancellation",
       .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct URLProtocolCancellationTests {
    @Test("cancel() ends a request the server holds for 5 s at once, with cancelled, completing once")
    func cancelTask() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let recorder = DelegateRecorder()
        let urlSession = lab.urlSession(try lab.httpSession(), delegate: recorder)
        let task = urlSession.dataTask(with: lab.extrasURL("/slow"))
        task.resume()
        try await Task.sleep(for: .milliseconds(500))
        let start = ContinuousClock.now
        task.cancel()
        #expect(await recorder.waitForCompletion(seconds: 10))
        #expect(ContinuousClock.now - start < .seconds(2))
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorder.events == [.complete(.cancelled)], "\(recorder.events)")
        #expect(task.state == .completed)
        // The request was in flight when it was cancelled (nginx logs it when its sleep ends).
        #expect(await eventually(within: 8) { lab.extrasRequests.contains { $0.contains("GET /slow") } }, "\(lab.extrasRequests)")
    }

    @Test("cancelling the Swift task awaiting data(for:) fails it with URLError.cancelled")
    func cancelSwiftTask() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())
        let url = lab.extrasURL("/slow")
        let waiting = Task { await urlError { try await urlSession.data(from: url) } }
        try await Task.sleep(for: .milliseconds(500))
        let start = ContinuousClock.now
        waiting.cancel()
        let error = await waiting.value
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    @Test("suspend() stops the load and resume() starts it over: the task completes once, whole")
    func suspendAndResume() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())
        let calls = Mutex(0)
        let result: CompletionResult = await withCheckedContinuation { continuation in
            let task = urlSession.dataTask(with: lab.extrasURL("/trickle")) { data, response, error in
                calls.withLock { $0 += 1 }
                continuation.resume(returning: CompletionResult(data: data, response: response, error: error))
            }
            task.resume()
            Thread.sleep(forTimeInterval: 0.3)
            task.suspend()
            Thread.sleep(forTimeInterval: 0.3)
            task.resume()
        }
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.text == (1...5).map { "tick \($0)\n" }.joined())
        try await Task.sleep(for: .milliseconds(300))
        #expect(calls.withLock { $0 } == 1)
        #expect(await eventually { lab.extrasRequests.filter { $0.contains("GET /trickle") }.count == 2 }, "\(lab.extrasRequests)")
    }
}
