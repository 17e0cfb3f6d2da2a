internal import ServerTrust

/// One request from start to final response: hops, redirects, 401/407 challenges.
struct RequestExecution {
    let session: HTTPSession
    let request: HTTPRequest
    /// Its `configuration` is read field by field in place: copying the whole (large)
    /// configuration value per request cost more than the fields used.
    let core: SessionCore

    init(session: HTTPSession, request: HTTPRequest) {
        self.session = session
        self.request = request
        self.core = session.core
    }

    /// `nonisolated(nonsending)`, like ``TransferEngine/perform(_:)``: it continues on the
    /// executor of `HTTPSession.send` instead of hopping to the generic executor on entry; each
    /// such hop looked up the task's executor preference under the task's status lock.
    nonisolated(nonsending) func run() async throws(HTTPError) -> HTTPResponse {
        try await run(streaming: false).response
    }

    /// The request with its body streamed: the final response's head and its body channel.
    nonisolated(nonsending) func stream() async throws(HTTPError) -> HTTPStreamedResponse {
        guard request.destinationPath == nil else {
            throw HTTPError.invalidRequest("a streamed response has no destinationPath (the caller receives the body)")
        }
        let (response, body) = try await run(streaming: true)
        return HTTPStreamedResponse(head: response, body: body ?? HTTPBodyStream(BodyChannel.ended()))
    }

    /// The hops of one request. Every hop's body goes to a sink chosen by the request: memory
    /// (bounded by the body limit), a download's temporary file (committed over the
    /// destination only for the final response, discarded otherwise and on any failure), or,
    /// with `streaming`, a channel the caller reads; a hop that is not the final one
    /// (a redirect followed, a 401 answered) has its streamed body drained within the limit.
    nonisolated(nonsending) private func run(streaming: Bool) async throws(HTTPError) -> (response: HTTPResponse, body: HTTPBodyStream?) {
        // Nothing caller-given that is sent as it is may break a line of the request
        // (the session's own fields were checked when it was made).
        try RequestValidation.check(request)
        var target = try core.target(for: request.url)
        let bodyLimit = request.maximumResponseBodySize ?? core.configuration.maximumResponseBodySize
        guard bodyLimit >= 0 else { throw HTTPError.invalidRequest("maximumResponseBodySize must not be negative") }
        var method = request.method
        var body = request.body
        var streamedBody = request.streamedBody
        if body != nil && streamedBody != nil {
            throw HTTPError.invalidRequest("a request has either a body or a streamed body (a body file), not both")
        }
        var headers = request.headers.merging(defaults: core.configuration.defaultHeaders)
        let handler = request.challengeHandler ?? core.configuration.taskChallengeHandler
        // The request's credential belongs to the origin it was addressed to.
        let credentialOrigin = target
        var httpCredential: (user: String, password: String, schemes: Int)?
        if request.sendsCredentialPreemptively, case .password(let user, let password)? = request.credential?.kind {
            httpCredential = (user, password, Curl.authBasic)
        }
        var proxyCredential: (user: String, password: String)?
        var failures: [ProtectionSpace: Int] = [:]
        var redirects: [(statusCode: Int, location: String)] = []

        while true {
            // A new temporary file per hop: only the final hop's body may replace the destination.
            let decodedLimit = core.configuration.maximumDecodedBodySize
            let download = try request.destinationPath.map { path throws(HTTPError) in try PartialDownload(for: path, decodedLimit: decodedLimit) }
            // Every way out of this hop but the final commit (a failure, a redirect, a retry
            // with credentials) removes its temporary file now, before the caller hears of it;
            // after a commit this does nothing. Left to `deinit`, the file stays as long as the
            // transfer that wrote it is referenced, which the caller cannot see.
            defer { download?.discard() }
            let channel = streaming && download == nil ? BodyChannel(decodedLimit: decodedLimit) : nil
            let sink: BodySink = download.map { .file($0) } ?? channel.map { .stream($0) } ?? .memory(limit: bodyLimit)
            let spec = TransferSpec(
                target: target, method: method, headers: headers, body: body, streamedBody: streamedBody,
                timeout: request.timeout ?? core.configuration.timeout,
                httpCredential: httpCredential, proxyCredential: proxyCredential, usesFreshConnection: request.usesFreshConnection,
                sink: sink, uploadProgress: request.uploadProgress,
                downloadProgress: request.downloadProgress, requestChallengeHandler: request.challengeHandler)
            let transfer = await session.engine.perform(consume spec)
            let raw: RawResponse
            var hopFailure: HTTPError?
            switch transfer.arrival() {
            case .head(let head):
                raw = head
            case .finished(let failure):
                raw = transfer.takeResponse()
                hopFailure = failure
            }
            // A streamed body's reader; after a failed hop there is no body to read.
            let responseStream = hopFailure == nil ? channel.map(HTTPBodyStream.init) : nil
            let monitors = core.configuration.eventMonitors
            if !monitors.isEmpty {
                let decision: TrustDecision?
                switch hopFailure {
                case .serverTrustRejected(let rejected)?: decision = rejected
                default: decision = raw.trustDecisionBox?.decision
                }
                if let decision {
                    for monitor in monitors { monitor.request(request, didDecideTrust: decision) }
                    // Once per handshake's decision, not again for a request reusing its connection.
                    if !decision.isFromEarlierHandshake {
                        let unknown = decision.record.unknownRevocationStatus
                        if !unknown.isEmpty {
                            for monitor in monitors { monitor.request(request, didAcceptWithUnknownRevocationStatus: unknown, decision: decision) }
                        }
                        let violations = decision.record.reportedViolations
                        if !violations.isEmpty { for monitor in monitors { monitor.request(request, didReportViolations: violations, in: decision) } }
                    }
                }
            }
            if let error = hopFailure {
                // A proxy that refused the CONNECT with 407: a proxy challenge.
                if raw.connectCode == 407, let proxy = core.configuration.proxy {
                    let proxyTarget = try RequestTarget(proxy.url)
                    let offered = AuthenticateHeader.challenges(raw.finalHeaders.values("Proxy-Authenticate"))
                    let response = makeResponse(raw, target: target, redirects: redirects, statusCode: 407)
                    if let answer = try await authenticate(
                        offered, host: proxyTarget.host, port: proxyTarget.port, scheme: "http",
                        isProxy: true, response: response, proposed: proxy.credential,
                        failures: &failures, handler: handler)
                    {
                        proxyCredential = (answer.user, answer.password)
                        continue
                    }
                }
                // A refused tunnel is the proxy's answer, not a network failure: name it.
                if raw.connectCode >= 300, case .transport(let transportError) = error {
                    throw HTTPError.proxyRefused(statusCode: raw.connectCode, transportError)
                }
                throw error
            }
            // The raw response is consumed here (its fields move into the response), so what
            // follows reads the response.
            let response = makeResponse(consume raw, target: target, redirects: redirects)
            /// This hop's response is not the request's answer: its body goes nowhere.
            func intermediate() async throws(HTTPError) {
                download?.discard()
                if let responseStream { _ = try await responseStream.collect(upTo: bodyLimit) }
            }
            /// This hop's response is the answer.
            func final() throws(HTTPError) -> (response: HTTPResponse, body: HTTPBodyStream?) {
                try download?.commit()
                return (response, responseStream)
            }

            if response.statusCode == 401 {
                let offered = AuthenticateHeader.challenges(response.headers.values("WWW-Authenticate"))
                let proposed = target.hasSameOrigin(as: credentialOrigin) ? request.credential : nil
                if !offered.isEmpty,
                    let answer = try await authenticate(
                        offered, host: target.host, port: target.port, scheme: target.scheme, isProxy: false, response: response,
                        proposed: proposed, failures: &failures, handler: handler)
                {
                    try await intermediate()
                    httpCredential = answer
                    continue
                }
                return try final()
            }

            if Self.isRedirect(response.statusCode), core.configuration.maximumRedirects > 0,
                let location = response.headers["Location"]
            {
                guard redirects.count < core.configuration.maximumRedirects else { throw HTTPError.tooManyRedirects(redirects.count + 1) }
                let next: RequestTarget
                do {
                    next = try RequestTarget.resolve(location, against: target.url)
                } catch {
                    throw HTTPError.redirectRefused("bad Location '\(RequestValidation.displayed(location))'")
                }
                if target.isHTTPS && !next.isHTTPS && !core.configuration.allowsInsecureRedirects {
                    throw HTTPError.redirectRefused("\(target.url) -> \(next.url) leaves HTTPS")
                }
                // RFC 9110 §15.4: 303 always, and 301/302 after POST (as every browser and
                // URLSession do), continue with GET and no body.
                if (response.statusCode == 303 && method != .head) || ((response.statusCode == 301 || response.statusCode == 302) && method == .post) {
                    method = .get
                    body = nil
                    streamedBody = nil
                    headers.remove("Content-Type")
                    headers.remove("Content-Length")
                }
                if next.host != credentialOrigin.host {
                    // A caller's `Host` field names the host it was written for, and libcurl
                    // picks the cookies it sends by it: kept, it would send that host's cookies
                    // (and its name) to the new one. curl's own redirects send a custom `Host`
                    // to the first host only (http.c, `first_host`).
                    headers.remove("Host")
                }
                if !next.hasSameOrigin(as: target) {
                    // Credentials never follow a redirect to another origin (Fetch §4.4 step 13,
                    // curl's --location-trusted off); the decision runs for the new host.
                    headers.remove("Authorization")
                    headers.remove("Cookie")
                    // Without a proxy, a caller's `Proxy-Authorization` went to the origin as
                    // written, a credential like `Authorization`; the next origin does not get
                    // it. Through a proxy it is the proxy's (EasyHandle: the CONNECT request,
                    // or the proxied request itself), and the proxy is the same for every hop.
                    if core.configuration.proxy == nil { headers.remove("Proxy-Authorization") }
                    httpCredential = nil
                } else if !next.hasSameOrigin(as: credentialOrigin) {
                    httpCredential = nil
                }
                try await intermediate()
                for monitor in core.configuration.eventMonitors {
                    monitor.request(request, willRedirectFrom: target.url, to: next.url, statusCode: response.statusCode)
                }
                redirects.append((response.statusCode, location))
                target = next
                continue
            }
            return try final()
        }
    }

    private func makeResponse(
        _ raw: consuming RawResponse, target: RequestTarget, redirects: [(statusCode: Int, location: String)],
        statusCode: Int? = nil
    ) -> HTTPResponse {
        HTTPResponse(
            url: target.url, statusCode: statusCode ?? raw.statusCode, httpVersion: raw.httpVersion, headers: raw.finalHeaders, body: raw.body,
            timing: raw.timing, tlsVersion: raw.tlsVersion, tlsSessionResumed: raw.tlsSessionResumed,
            usedNewConnection: raw.usedNewConnection, trustDecisionBox: raw.trustDecisionBox,
            proxyTrustDecisionBox: raw.proxyTrustDecisionBox, redirects: redirects)
    }

    /// Runs the HTTP-authentication challenge flow for the offered schemes (Digest before
    /// Basic); returns the credential to retry with, or `nil` to return the 401/407 as is.
    nonisolated(nonsending) private func authenticate(
        _ offered: [AuthenticateHeader.Challenge], host: String, port: Int, scheme: String, isProxy: Bool, response: HTTPResponse,
        proposed: Credential?, failures: inout [ProtectionSpace: Int], handler: TaskChallengeHandler?
    ) async throws(HTTPError) -> (user: String, password: String, schemes: Int)? {
        let ordered = offered.filter { $0.method == .httpDigest } + offered.filter { $0.method == .httpBasic }
        for challengeOffer in ordered {
            // A proxy only gets Basic from us (the preemptive proxy credential is Basic).
            if isProxy && challengeOffer.method != .httpBasic { continue }
            let space = ProtectionSpace(
                host: host, port: port, protocol: scheme, realm: challengeOffer.realm,
                authenticationMethod: challengeOffer.method, isProxy: isProxy)
            let previous = failures[space, default: 0]
            // Give up after a few rejected credentials rather than loop with a server.
            guard previous < Self.maximumAttempts else { return nil }
            let remembered = session.core.credentials.credential(for: space)
            let candidate = proposed ?? remembered
            let challenge = AuthenticationChallenge(
                protectionSpace: space, previousFailureCount: previous, proposedCredential: candidate,
                servedChain: nil, failureResponse: response, defaultDecider: nil)
            let disposition: ChallengeDisposition
            if let handler {
                let reply = ChallengeReply()
                switch handler(challenge, ChallengeCompletion(reply: reply)) {
                case .disposition(let answer): disposition = answer
                case .credential(let credential): disposition = .useCredential(credential)
                case .error(let error): throw HTTPError.challengeFailed(space, error)
                case .later:
                    let answer = await reply.wait(timeout: core.configuration.challengeTimeout)
                    if Task.isCancelled { throw HTTPError.cancelled }
                    guard let answer else { throw HTTPError.challengeCancelled(space) }
                    disposition = answer
                }
            } else {
                disposition = .performDefaultHandling
            }
            let chosen: Credential?
            switch disposition {
            case .useCredential(let credential?):
                chosen = credential
            case .useCredential(nil), .performDefaultHandling:
                // Default handling tries the proposed credential once.
                chosen = previous == 0 ? candidate : nil
            case .cancelAuthenticationChallenge:
                throw HTTPError.challengeCancelled(space)
            case .rejectProtectionSpace:
                continue
            }
            guard let chosen, case .password(let user, let password) = chosen.kind else { return nil }
            // Whichever way it came (the request, the handler, the store), before it is sent
            // or remembered.
            try RequestValidation.checkCredential(
                user: user, password: password, origin: "credential for \(space)",
                isBasic: challengeOffer.method == .httpBasic)
            try session.core.credentials.set(chosen, for: space)
            failures[space] = previous + 1
            return (user, password, challengeOffer.method == .httpDigest ? Curl.authDigest : Curl.authBasic)
        }
        return nil
    }

    /// 301, 302, 303, 307, 308 (a switch: an array literal here was built per response).
    static func isRedirect(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: return true
        default: return false
        }
    }

    /// Credentials tried per protection space and request.
    static let maximumAttempts = 5
}
