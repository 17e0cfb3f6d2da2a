internal import Foundation
internal import ServerTrustHTTP
internal import Synchronization

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

/// A 401 answered as Foundation's own loader answers it, for one load: the challenge goes to
/// the task's delegate (`urlSession(_:task:didReceive:completionHandler:)`, on the session's
/// delegate queue) with the credential the session's `urlCredentialStorage` proposes, and
/// without a delegate that credential is used; the request is then sent again with the
/// credential, through the same `HTTPSession` and its trust decision.
///
/// This reproduces swift-corelibs-foundation's `_ProtocolClient`
/// (`urlProtocolDidFinishLoading(_:)` and `urlProtocol(_:didReceive:)` in
/// `URLSession/URLSessionTask.swift`): the protection space of the response's first Basic or
/// Digest challenge; the proposed credential is the storage's first for that space (by key),
/// else its default, unless it is the one that just failed; `.useCredential` and default
/// handling with a proposal retry, `.cancelAuthenticationChallenge` and
/// `.rejectProtectionSpace` cancel the task, default handling without a proposal completes
/// with the 401; the credential that led to an answer other than 401 is stored for the space.
/// Foundation's loader cannot be asked to do this itself for a custom protocol: it answers a
/// challenge by replacing the protocol with its own `_HTTPURLProtocol`, which would send the
/// request outside the app's trust policy.
///
/// Two limits of our own: only a 401 from the origin the request was sent to is answered (a
/// redirect the session followed to another origin ends there, so no credential is sent to
/// the first origin for the second's space), and at most ``maximumAttempts`` credentials are
/// tried per load, so a delegate that keeps answering with a wrong password cannot loop.
struct URLSessionAuthentication {
    /// Credentials tried per load.
    static let maximumAttempts = 16

    enum Outcome {
        /// Send the request again with this credential.
        case retry(Credential)
        /// The 401 is the answer.
        case deliver
        /// The delegate cancelled the challenge: the task fails with `URLError.cancelled`.
        case cancel
    }

    let settings: FoundationSessionSettings?
    let requestURL: URL
    private(set) var previousFailureCount = 0
    /// The credential last sent, and its space.
    private var lastUsed: (space: URLProtectionSpace, credential: URLCredential)?

    init(settings: FoundationSessionSettings?, requestURL: URL) {
        self.settings = settings
        self.requestURL = requestURL
    }

    /// What to do about `head`: anything but a 401 with a Basic or Digest challenge from the
    /// request's origin is delivered.
    mutating func answer(_ head: HTTPResponse, response: HTTPURLResponse?) async -> Outcome {
        guard head.statusCode == 401, let settings, previousFailureCount < Self.maximumAttempts,
            let space = Self.protectionSpace(head, requestURL: requestURL)
        else { return .deliver }
        var proposed = Self.proposedCredential(for: space, storage: settings.credentialStorage)
        if let proposal = proposed, let lastUsed, lastUsed.credential == proposal { proposed = nil }
        let challenge = URLAuthenticationChallenge(
            protectionSpace: space, proposedCredential: proposed, previousFailureCount: previousFailureCount,
            failureResponse: response, error: nil, sender: ChallengeSender())
        previousFailureCount += 1
        let disposition: (URLSession.AuthChallengeDisposition, URLCredential?)
        if let delegate = settings.delegate {
            disposition = await Self.ask(delegate, challenge, settings)
        } else {
            disposition = (.performDefaultHandling, nil)
        }
        let chosen: URLCredential?
        switch disposition.0 {
        case .useCredential: chosen = disposition.1 ?? proposed
        case .performDefaultHandling: chosen = proposed
        case .cancelAuthenticationChallenge, .rejectProtectionSpace: return .cancel
        @unknown default: return .cancel
        }
        guard let credential = chosen, let user = credential.user else { return .deliver }
        lastUsed = (space, credential)
        return .retry(.user(user, password: credential.password ?? "", persistence: .none))
    }

    /// After the final response: the credential that got past the 401 is stored for its space
    /// (under the instance already there, when there is one: see ``proposedCredential(for:storage:)``).
    func remember(_ head: HTTPResponse) {
        guard head.statusCode != 401, let lastUsed, let storage = settings?.credentialStorage else { return }
        let space = storage.allCredentials.keys.first { Self.sameSpace($0, lastUsed.space) } ?? lastUsed.space
        storage.set(lastUsed.credential, for: space)
    }

    /// The space of the response's first Basic or Digest challenge, when the 401 comes from
    /// the request's origin.
    static func protectionSpace(_ head: HTTPResponse, requestURL: URL) -> URLProtectionSpace? {
        guard let answered = URL(string: head.url), let scheme = answered.scheme?.lowercased(), let host = answered.host?.lowercased(),
            scheme == requestURL.scheme?.lowercased(), host == requestURL.host?.lowercased(),
            port(answered) == port(requestURL), let challenge = head.passwordChallenges.first
        else { return nil }
        let method = challenge.method == .httpDigest ? NSURLAuthenticationMethodHTTPDigest : NSURLAuthenticationMethodHTTPBasic
        return URLProtectionSpace(host: host, port: port(answered), protocol: scheme, realm: challenge.realm, authenticationMethod: method)
    }

    private static func port(_ url: URL) -> Int { url.port ?? (url.scheme?.lowercased() == "http" ? 80 : 443) }

    /// The storage's first credential for `space` by user name, else its default one
    /// (`_ProtocolClient.urlProtocolDidFinishLoading(_:)`). Spaces are matched by value (host,
    /// port, protocol, realm, method, proxy): swift-corelibs-foundation's `URLProtectionSpace`
    /// does not override `isEqual`/`hash`, so the storage's own lookups match only the very
    /// instance a credential was stored under, never the space of a response.
    static func proposedCredential(for space: URLProtectionSpace, storage: URLCredentialStorage?) -> URLCredential? {
        guard let storage else { return nil }
        for (stored, credentials) in storage.allCredentials where sameSpace(stored, space) {
            if let first = credentials.keys.sorted().first, let credential = credentials[first] { return credential }
            if let credential = storage.defaultCredential(for: stored) { return credential }
        }
        return storage.defaultCredential(for: space)
    }

    /// Whether two protection spaces are the same by value.
    static func sameSpace(_ a: URLProtectionSpace, _ b: URLProtectionSpace) -> Bool {
        a.host.lowercased() == b.host.lowercased() && a.port == b.port && a.protocol?.lowercased() == b.protocol?.lowercased()
            && a.realm == b.realm && a.authenticationMethod == b.authenticationMethod && a.isProxy() == b.isProxy()
    }

    /// The delegate's answer, asked on the session's delegate queue; a handler called twice
    /// counts once, and a load that ends meanwhile stops waiting (as cancelled).
    static func ask(
        _ delegate: any URLSessionTaskDelegate, _ challenge: URLAuthenticationChallenge, _ settings: FoundationSessionSettings
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        let reply = ChallengeAnswer()
        let box = DelegateCall(delegate: delegate, challenge: challenge, settings: settings)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                reply.wait(continuation)
                box.settings.session.delegateQueue.addOperation {
                    box.delegate.urlSession(box.settings.session, task: box.settings.task, didReceive: box.challenge) { disposition, credential in
                        reply.answer(disposition, credential)
                    }
                }
            }
        } onCancel: {
            reply.answer(.cancelAuthenticationChallenge, nil)
        }
    }
}

/// The delegate, the challenge and the settings, carried to the delegate queue.
private struct DelegateCall: @unchecked Sendable {
    // @unchecked Sendable: handed once to the session's delegate queue, where Foundation
    // itself calls the delegate with such a challenge; nothing else touches them meanwhile.
    let delegate: any URLSessionTaskDelegate
    let challenge: URLAuthenticationChallenge
    let settings: FoundationSessionSettings
}

/// The one answer of a delegate's completion handler.
private final class ChallengeAnswer: @unchecked Sendable {
    // @unchecked Sendable: the state is behind the mutex; a URLCredential is immutable.
    private struct State {
        var continuation: CheckedContinuation<(URLSession.AuthChallengeDisposition, URLCredential?), Never>?
        var answer: (URLSession.AuthChallengeDisposition, URLCredential?)?
        var resumed = false
    }
    private let state = Mutex(State())

    func wait(_ continuation: CheckedContinuation<(URLSession.AuthChallengeDisposition, URLCredential?), Never>) {
        let ready = state.withLock { state -> (URLSession.AuthChallengeDisposition, URLCredential?)? in
            guard let answer = state.answer, !state.resumed else {
                state.continuation = continuation
                return nil
            }
            state.resumed = true
            return answer
        }
        if let ready { continuation.resume(returning: ready) }
    }

    func answer(_ disposition: URLSession.AuthChallengeDisposition, _ credential: URLCredential?) {
        let waiting = state.withLock { state -> CheckedContinuation<(URLSession.AuthChallengeDisposition, URLCredential?), Never>? in
            guard state.answer == nil else { return nil }
            state.answer = (disposition, credential)
            guard let continuation = state.continuation else { return nil }
            state.continuation = nil
            state.resumed = true
            return continuation
        }
        waiting?.resume(returning: (disposition, credential))
    }
}

/// The challenge's sender: URLSession delegates answer through their completion handler, so
/// nothing is ever sent here (as with Foundation's own `URLSessionAuthenticationChallengeSender`).
private final class ChallengeSender: NSObject, URLAuthenticationChallengeSender {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}
