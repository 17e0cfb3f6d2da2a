internal import ServerTrust

extension HTTPSession {
    /// One request through the session's hooks: each attempt adapted (the request's own
    /// interceptor, then the session's), sent by `send`, its outcome shown to the retriers
    /// (the interceptors, then the retry policy) and to the event monitors. Without hooks the
    /// request is sent as it is, at no cost.
    nonisolated(nonsending) func attempts<Output>(
        _ request: HTTPRequest, head: (Output) -> HTTPResponse, send: (HTTPRequest) async throws(HTTPError) -> Output
    ) async throws(HTTPError) -> Output {
        // Without hooks a request is sent once, as it is: no copy of the configuration and no
        // allocation on the way (this is every request of a session that sets none).
        guard
            request.interceptor != nil || configuration.interceptor != nil || configuration.retryPolicy != nil
                || !configuration.eventMonitors.isEmpty
        else { return try await send(request) }
        let configuration = self.configuration
        let interceptors = [request.interceptor, configuration.interceptor].compactMap { $0 }
        let monitors = configuration.eventMonitors
        let started = ContinuousClock.now
        var attempt = 0
        while true {
            attempt += 1
            var sent = request
            do throws(HTTPError) {
                for interceptor in interceptors { sent = try await interceptor.adapt(sent, for: self) }
            } catch {
                finish(request, .failure(error), attempts: attempt, started: started, monitors: monitors)
                throw error
            }
            for monitor in monitors { monitor.requestDidStart(sent, attempt: attempt) }
            let outcome: Result<Output, HTTPError>
            do throws(HTTPError) {
                outcome = .success(try await send(sent))
            } catch {
                outcome = .failure(error)
            }
            let result = outcome.map(head)
            let context = RetryContext(request: request, sentRequest: sent, attempt: attempt, result: result)
            var decision = RetryDecision.doNotRetry
            for interceptor in interceptors where decision == .doNotRetry { decision = await interceptor.retry(context, for: self) }
            if decision == .doNotRetry, let policy = configuration.retryPolicy { decision = await policy.retry(context, for: self) }
            guard case .retry(let delay) = decision, !Task.isCancelled else {
                finish(request, result, attempts: attempt, started: started, monitors: monitors)
                return try outcome.get()
            }
            for monitor in monitors { monitor.request(sent, willRetryAfter: delay, attempt: attempt, outcome: result) }
            if delay > .zero {
                do {
                    try await configuration.retryClock.sleep(for: delay)
                } catch {
                    finish(request, .failure(.cancelled), attempts: attempt, started: started, monitors: monitors)
                    throw HTTPError.cancelled
                }
            }
        }
    }

    private func finish(
        _ request: HTTPRequest, _ result: Result<HTTPResponse, HTTPError>, attempts: Int, started: ContinuousClock.Instant, monitors: [any EventMonitor]
    ) {
        guard !monitors.isEmpty else { return }
        let elapsed = started.duration(to: .now).components
        let response = try? result.get()
        let metrics = HTTPRequestMetrics(
            attempts: attempts, redirects: response?.redirects.count ?? 0, lastHopTiming: response?.timing,
            duration: Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
        for monitor in monitors { monitor.request(request, didFinishWith: result, metrics: metrics) }
    }
}
