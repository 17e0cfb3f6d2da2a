public import ServerTrustHTTP
internal import Synchronization

#if canImport(FoundationNetworking)
    internal import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif

/// A `URLProtocol` that serves the `http` and `https` requests of a `URLSession` through an
/// `HTTPSession`, so that code written for `URLSession` connects under the app's
/// trust policy (private anchors, SPKI or certificate pins, client certificates) on Linux,
/// where Foundation's own HTTP protocol offers no server-trust challenge and trusts only the
/// system roots.
///
/// Register the session once, list the class in the configuration, and leave the rest of the
/// `URLSession` code as it is:
///
/// ```swift
/// ServerTrustURLProtocol.register(try HTTPSession(configuration: policy))
/// let configuration = URLSessionConfiguration.default
/// configuration.protocolClasses = [ServerTrustURLProtocol.self]
/// let urlSession = URLSession(configuration: configuration)
/// let (data, response) = try await urlSession.data(from: url)
/// ```
///
/// (``FoundationNetworking/URLSessionConfiguration/serverTrust(_:base:)`` returns such a configuration.)
/// A refused server fails the task with `URLError.serverCertificateUntrusted`, whose user info
/// carries the `TrustDecision` under `NSURLErrorFailingURLPeerTrustErrorKey`
/// (where Apple's URLSession puts the `SecTrust`); read it with
/// ``Foundation/URLError/serverTrustDecision``.
///
/// ## What Apple's URLProtocol contract gets
///
/// - `canInit(with:)` claims every `http`, `https`, `ws` and `wss` request, so none falls
///   through to Foundation's own protocols and their weaker trust. A request it cannot serve
///   fails; it is never sent another way (no session registered, a WebSocket or download task:
///   `URLError.unsupportedURL`).
/// - `startLoading()` sends the request with `HTTPSession.stream(_:)` and
///   reports, in the order Apple's URLProtocol clients expect, `urlProtocol(_:didReceive:cacheStoragePolicy:)`
///   when the final response's head arrives, then `urlProtocol(_:didLoad:)` and
///   `urlProtocolDidFinishLoading(_:)`, or `urlProtocol(_:didFailWithError:)` with a `URLError`
///   (``ServerTrustURLProtocol/urlError(for:url:)``). Nothing is cached
///   (`URLCache.StoragePolicy.notAllowed`).
/// - `stopLoading()` cancels the Swift task of the load; the client hears nothing more from it
///   (`URLSessionTask.cancel()` then reports `URLError.cancelled` itself). `suspend()` calls it
///   too, and `resume()` calls `startLoading()` again: the request then starts over, as Apple
///   documents for tasks other than downloads.
/// - The `URLSession`'s configuration applies as Foundation's own loader applies it
///   (`_HTTPURLProtocol.configureEasyHandle`): `httpAdditionalHeaders` are sent with every
///   request that does not set a field of the same name; the idle limit is the request's
///   `timeoutInterval` when it was set, else `timeoutIntervalForRequest`;
///   `timeoutIntervalForResource` bounds the whole request; `Set-Cookie` goes to
///   `httpCookieStorage` (unless `httpCookieAcceptPolicy` is `.never`); a POST with a body
///   and no `Content-Type` is sent as `application/x-www-form-urlencoded`. The session is read
///   from the task (its `session` property is internal to FoundationNetworking) through
///   `Mirror`, read only; where it cannot be found, the request alone applies.
/// - `URLRequest.timeoutInterval` is an idle limit, as Apple defines it: the load fails with
///   `URLError.timedOut` when nothing is sent or received for that long. The whole request is
///   limited by the session's `HTTPSessionConfiguration.timeout` or the idle
///   limit, whichever is longer, and by `timeoutIntervalForResource`.
/// - A 401 with a Basic or Digest challenge from the request's origin is answered as
///   Foundation answers it: the task's delegate (`urlSession(_:task:didReceive:completionHandler:)`,
///   on the session's delegate queue) gets the challenge with the credential
///   `urlCredentialStorage` proposes, default handling uses that credential, and the request
///   is sent again with the credential chosen, through the same `HTTPSession` and its trust
///   decision; the credential that succeeded is stored for the protection space.
/// - Redirects are followed by the `HTTPSession` under its rules (its
///   `HTTPSessionConfiguration.maximumRedirects`, no `https` to `http`, no
///   `Authorization`, `Cookie` or (without a proxy) `Proxy-Authorization` field to another
///   origin, the trust decision for every new host);
///   `HTTPURLResponse.url` is the final URL. With `maximumRedirects` 0 the redirect response
///   itself is delivered.
/// - The request's header fields are sent as given, except `Content-Length`,
///   `Transfer-Encoding` and `Connection`, which the transport sets from what it sends (Apple
///   lists them among the reserved fields URLSession may ignore).
/// - Data tasks and upload tasks work, also through the `async` methods (`data(for:)`,
///   `upload(for:from:)`, `upload(for:fromFile:)`) and with a `URLSessionDataDelegate`. An
///   upload file is streamed from disk, never read into memory.
///
/// ## What swift-corelibs-foundation does not let a URLProtocol do
///
/// Read in swift-corelibs-foundation 6.3.1, `Sources/FoundationNetworking`:
///
/// - **Download tasks.** `_ProtocolClient.urlProtocolDidFinishLoading(_:)`
///   (`URLSession/URLSessionTask.swift`) hands the download's file to the delegate from
///   `urlProtocol.properties[.temporaryFileURL] as! URL` and to a completion handler
///   from the same key, and `URLSession.download(for:delegate:)` unwraps it with `location!`.
///   `properties` and its keys are internal to FoundationNetworking, so only Foundation's own
///   protocols can set the file: a custom protocol that finished a download task would crash
///   the app. Download tasks therefore fail at once with `URLError.unsupportedURL`, before
///   anything is sent. Use a data task, or `HTTPRequest.destinationPath`.
/// - **Redirects reported to the delegate.** `_ProtocolClient.urlProtocol(_:wasRedirectedTo:redirectResponse:)`
///   is `fatalError("… doesn't currently handle redirects directly.")`, so the delegate's
///   `urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)` cannot be
///   asked; the session follows redirects itself (above).
/// - **Body chunks.** `_ProtocolClient.urlProtocol(_:didLoad:)` keeps only the latest chunk
///   (`properties[.responseData] = data`) for a task with a completion handler (and the
///   `async` methods), and whether a task has one is internal (`URLSession.behaviour(for:)`).
///   The body is therefore collected and delivered in one `didLoad`, as Foundation's own
///   `_NativeProtocol.completeTask()` does for in-memory bodies, up to the session's
///   `HTTPSessionConfiguration.maximumResponseBodySize` (beyond it:
///   `URLError.dataLengthExceedsMaximum`).
/// - **Passing a challenge to Foundation.** `_ProtocolClient.urlProtocol(_:didReceive:)`
///   answers a challenge by replacing the task's protocol with Foundation's `_HTTPURLProtocol`
///   and sending the request again through it, outside this policy; and
///   `urlProtocolDidFinishLoading(_:)` raises that challenge itself for any 401 response with a
///   `WWW-Authenticate` field (and, without a delegate or a stored credential, never completes
///   the task). So no challenge is ever passed to Foundation: this protocol asks the delegate
///   and the credential storage itself (above), the session's own
///   `HTTPSessionConfiguration.taskChallengeHandler` and `CredentialStore` still apply, and
///   a 401 that reaches the app has its `WWW-Authenticate` fields renamed to
///   ``withheldChallengeField``. (swift-corelibs-foundation's `URLProtectionSpace` has no
///   `isEqual`/`hash`, so `URLCredentialStorage` finds a credential only under the very space
///   instance it was stored with; spaces are matched by value here instead.)
/// - **Upload bodies.** `uploadTask(with:from:)` and `uploadTask(with:fromFile:)` keep the
///   body in the task's internal `knownBody`, not in the request a protocol is given. It is
///   read through `Mirror` (read only; Foundation sets it once, when the task is made); if it
///   cannot be found, the task fails with `URLError.requestBodyStreamExhausted` rather than
///   send the request without its body. `uploadTask(withStreamedRequest:)` asks the delegate
///   for the body through the session, which a protocol cannot reach: it fails the same way.
///   A request's `httpBodyStream` is read into memory before it is sent.
/// - **Caching.** `_ProtocolClient.completeTask` stores a response in `urlCache` only when
///   `(urlProtocol as? _NativeProtocol)?.canCache(_:)` allows it, which no protocol outside
///   FoundationNetworking can be; responses are therefore never cached (this protocol reports
///   `URLCache.StoragePolicy.notAllowed`), and `requestCachePolicy` / `URLRequest.cachePolicy`
///   always load from the network.
/// - **Per-session connection settings.** `httpMaximumConnectionsPerHost` and
///   `httpShouldUsePipelining` are options of the session's libcurl multi handle
///   (`_MultiHandle.init(configuration:)`); connections here belong to the registered
///   `HTTPSession`, shared by every `URLSession` that uses it, and follow its configuration.
/// - **Cookies of redirects.** The session follows redirects itself (below), so only the final
///   response's `Set-Cookie` fields reach `httpCookieStorage`; Foundation's loader stores those
///   of every hop (`_EasyHandle.setCookies(headerData:)`).
/// - **Progress.** Upload and download progress (`countOfBytesSent`, `didSendBodyData`) are
///   `internal(set)` and stay at zero.
/// - **`URLSession.shared`.** `URLSessionTask._protocolClass` consults the configuration's
///   `protocolClasses` before the classes of `URLProtocol.registerClass(_:)`, and the default
///   list already holds `_HTTPURLProtocol`, so the shared session cannot be covered: make a
///   session with this class in its configuration.
///
/// ## Several policies
///
/// ``register(_:)`` sets the session of this class. For URL sessions with different policies,
/// or a policy per host, subclass and override ``session(for:)``:
///
/// ```swift
/// final class PaymentsProtocol: ServerTrustURLProtocol {
///     override class func session(for request: URLRequest) -> HTTPSession? { Payments.httpSession }
/// }
/// let configuration = URLSessionConfiguration.serverTrust(PaymentsProtocol.self)
/// ```
open class ServerTrustURLProtocol: URLProtocol {
    private static let registered = Mutex<HTTPSession?>(nil)

    /// The load in progress (`startLoading()` to `stopLoading()`). Foundation calls both on the
    /// task's serial work queue; the lock only makes that assumption unnecessary.
    private let current = Mutex<URLProtocolLoad?>(nil)

    /// Sets the session through which this class sends requests, replacing any earlier one.
    /// Loads already running keep the session they started with.
    /// - Parameter session: The session with the app's policy.
    public static func register(_ session: HTTPSession) {
        registered.withLock { $0 = session }
    }

    /// Removes the registered session: requests claimed afterwards fail with
    /// `URLError.unsupportedURL` (they are never sent without the policy).
    public static func unregister() {
        registered.withLock { $0 = nil }
    }

    /// The session a request of this class goes through: the one given to ``register(_:)``, or
    /// `nil` (the request then fails, unsent). Subclasses override it to give their own, for
    /// example one per host. It is called on Foundation's threads, once per load.
    /// - Parameter request: The request about to be loaded.
    /// - Returns: The session, or `nil` to refuse the request.
    open class func session(for request: URLRequest) -> HTTPSession? {
        registered.withLock { $0 }
    }

    /// The user-info key of the `HTTPError` behind a `URLError` this protocol
    /// reports (``Foundation/URLError/serverTrustHTTPError``).
    public static let httpErrorKey = "ServerTrustHTTPError"

    /// The name under which a 401 response delivered to the app carries the server's
    /// `WWW-Authenticate` fields (see "Authentication challenges" above).
    public static let withheldChallengeField = "X-ServerTrust-WWW-Authenticate"

    /// The schemes claimed: those served, and `ws`/`wss`, refused rather than left to
    /// Foundation's WebSocket protocol and its trust.
    static let claimedSchemes: Set<String> = ["http", "https", "ws", "wss"]

    /// Whether this protocol takes the request: every `http`, `https`, `ws` and `wss` URL.
    /// - Parameter request: The request Foundation is about to load.
    /// - Returns: `true` for those schemes.
    public override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme?.lowercased() else { return false }
        return claimedSchemes.contains(scheme)
    }

    /// The request unchanged: the session normalizes what it sends.
    /// - Parameter request: A request.
    /// - Returns: `request`.
    public override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    /// Two requests are cache-equivalent when they are equal; nothing is cached anyway.
    /// - Parameters:
    ///   - a: A request.
    ///   - b: Another.
    /// - Returns: `a == b`.
    public override class func requestIsCacheEquivalent(_ a: URLRequest, to b: URLRequest) -> Bool {
        a == b
    }

    /// Starts the load (again, after a `stopLoading()` for `suspend()`): see the type's
    /// discussion for what the client is told.
    public override func startLoading() {
        let load = URLProtocolLoad(urlProtocol: self, client: client)
        let previous = current.withLock { current -> URLProtocolLoad? in
            defer { current = load }
            return current
        }
        previous?.stop()
        switch URLRequestConversion.prepare(request, task: task, session: type(of: self).session(for: request)) {
        case .failure(let error):
            load.fail(error)
        case .success(let prepared):
            load.start(prepared)
        }
    }

    /// Stops the load: its Swift task is cancelled, its connection closed, and the client
    /// hears nothing more from it.
    public override func stopLoading() {
        current.withLock { $0 }?.stop()
    }
}
