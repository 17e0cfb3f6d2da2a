internal import CertificateParsing
internal import Foundation
public import ServerTrust
internal import Synchronization
public import TrustEvaluation

/// Where a credential applies, as `URLProtectionSpace` describes it.
public struct ProtectionSpace: Hashable, Sendable, CustomStringConvertible {
    /// The kind of challenge.
    public enum AuthenticationMethod: String, Hashable, Sendable {
        /// The server's certificate chain must be judged (connection level).
        case serverTrust
        /// The server asks for a client certificate (connection level).
        case clientCertificate
        /// HTTP Basic (RFC 7617).
        case httpBasic
        /// HTTP Digest (RFC 7616).
        case httpDigest
    }

    /// The server (or proxy) host.
    public let host: String
    /// The port.
    public let port: Int
    /// `https` or `http` (for a proxy: the proxy's scheme).
    public let `protocol`: String
    /// The realm from `WWW-Authenticate` / `Proxy-Authenticate`, for HTTP authentication.
    public let realm: String?
    /// What kind of challenge.
    public let authenticationMethod: AuthenticationMethod
    /// `true` when the challenge comes from the proxy (407).
    public let isProxy: Bool
    /// For ``AuthenticationMethod/clientCertificate``: the acceptable CA names the server
    /// sent (RFC 4514), possibly empty. Not part of equality.
    public let distinguishedNames: [String]

    /// Creates a protection space.
    ///
    /// - Parameters:
    ///   - host: The host.
    ///   - port: The port.
    ///   - protocol: `https` or `http`.
    ///   - realm: The realm, if any.
    ///   - authenticationMethod: The kind of challenge.
    ///   - isProxy: Whether a proxy asks.
    ///   - distinguishedNames: Acceptable CA names (client certificates).
    public init(
        host: String, port: Int, protocol: String, realm: String? = nil, authenticationMethod: AuthenticationMethod,
        isProxy: Bool = false, distinguishedNames: [String] = []
    ) {
        self.host = host.lowercased()
        self.port = port
        self.protocol = `protocol`
        self.realm = realm
        self.authenticationMethod = authenticationMethod
        self.isProxy = isProxy
        self.distinguishedNames = distinguishedNames
    }

    /// Whether the challenge is about the connection (server trust, client certificate)
    /// rather than one request.
    public var isConnectionLevel: Bool {
        authenticationMethod == .serverTrust || authenticationMethod == .clientCertificate
    }

    /// Equal when everything but ``distinguishedNames`` is (the key of the credential store).
    public static func == (lhs: ProtectionSpace, rhs: ProtectionSpace) -> Bool {
        lhs.host == rhs.host && lhs.port == rhs.port && lhs.protocol == rhs.protocol && lhs.realm == rhs.realm
            && lhs.authenticationMethod == rhs.authenticationMethod && lhs.isProxy == rhs.isProxy
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(self.protocol)
        hasher.combine(realm)
        hasher.combine(authenticationMethod)
        hasher.combine(isProxy)
    }

    /// `httpBasic https://host:port realm="r"` (with `proxy` for proxies), one line.
    public var description: String {
        var text = "\(authenticationMethod.rawValue) \(isProxy ? "proxy " : "")\(self.protocol)://\(host):\(port)"
        if let realm { text += " realm=\"\(realm)\"" }
        return text
    }
}

/// A credential answering a challenge (`URLCredential`).
public struct Credential: Sendable, CustomStringConvertible {
    /// How long the credential is remembered.
    public enum Persistence: String, Sendable, Hashable {
        /// Used for this request only.
        case none
        /// Remembered by the session (in memory) for the protection space.
        case forSession
        /// Remembered by the session and written to the credential store file (mode 0600).
        /// Only user/password credentials are written; identities stay in memory.
        case permanent
    }

    /// What the credential holds.
    public enum Kind: Sendable {
        /// A user name and password (Basic, Digest, proxy).
        case password(user: String, password: String)
        /// A client certificate and its private key.
        case identity(Identity)
        /// "Trust this server" (the credential made from a server trust; accepts the chain).
        case serverTrust
    }

    /// The contents.
    public let kind: Kind
    /// How long it is remembered.
    public let persistence: Persistence

    /// Creates a credential.
    ///
    /// - Parameters:
    ///   - kind: The contents.
    ///   - persistence: How long to remember it.
    public init(_ kind: Kind, persistence: Persistence = .forSession) {
        self.kind = kind
        self.persistence = persistence
    }

    /// A user/password credential.
    ///
    /// - Parameters:
    ///   - user: The user name.
    ///   - password: The password.
    ///   - persistence: How long to remember it.
    /// - Returns: The credential.
    public static func user(_ user: String, password: String, persistence: Persistence = .forSession) -> Credential {
        Credential(.password(user: user, password: password), persistence: persistence)
    }

    /// A client-certificate credential.
    ///
    /// - Parameters:
    ///   - identity: Certificate and key.
    ///   - persistence: How long to remember it.
    /// - Returns: The credential.
    public static func identity(_ identity: Identity, persistence: Persistence = .forSession) -> Credential {
        Credential(.identity(identity), persistence: persistence)
    }

    /// The credential that accepts the served chain (`+[NSURLCredential credentialForTrust:]`).
    public static let trust = Credential(.serverTrust, persistence: .none)

    /// Never prints the password.
    public var description: String {
        switch kind {
        case .password(let user, _): return "password credential for \(user) (\(persistence.rawValue))"
        case .identity(let identity): return "identity \(identity.certificate.subject.rfc4514) (\(persistence.rawValue))"
        case .serverTrust: return "server-trust credential"
        }
    }
}

/// What a challenge handler decides (`NSURLSessionAuthChallengeDisposition`).
public enum ChallengeDisposition: Sendable {
    /// Use this credential (for server trust: accept the chain; `nil` behaves like
    /// ``performDefaultHandling``, as URLSession does).
    case useCredential(Credential?)
    /// What the session does without a handler: run its ``/ServerTrust/ServerTrustDecider`` for server
    /// trust, present a preset identity for client certificates, and use a remembered or
    /// request credential for HTTP authentication.
    case performDefaultHandling
    /// Fail the request with ``HTTPError/challengeCancelled(_:)``.
    case cancelAuthenticationChallenge
    /// Decline this protection space: the next offered HTTP scheme is tried, or the 401/407
    /// response is returned; for server trust this is default handling, for client
    /// certificates no certificate is sent.
    case rejectProtectionSpace
}

/// AFNetworking's four answers of a task-level challenge handler.
public enum ChallengeOutcome: Sendable {
    /// A disposition, decided now.
    case disposition(ChallengeDisposition)
    /// Use this credential.
    case credential(Credential)
    /// Cancel the challenge; the request fails with this error (``HTTPError/challengeFailed(_:_:)``).
    case error(any Error)
    /// The handler answers later through the ``ChallengeCompletion`` it was given. The
    /// request waits (up to the session's `challengeTimeout`); a connection-level challenge
    /// waits on its transfer thread.
    case later
}

/// The one-shot answer channel handed to a task-level handler for ``ChallengeOutcome/later``.
/// Calling it more than once has no effect after the first call.
public struct ChallengeCompletion: Sendable {
    let reply: ChallengeReply

    /// Answers the challenge.
    ///
    /// - Parameter disposition: The answer.
    public func callAsFunction(_ disposition: ChallengeDisposition) {
        reply.answer(disposition)
    }
}

/// One authentication challenge (`NSURLAuthenticationChallenge`).
public struct AuthenticationChallenge: Sendable {
    /// Where the credential would apply.
    public let protectionSpace: ProtectionSpace
    /// How many times a credential for this protection space already failed in this task.
    public let previousFailureCount: Int
    /// The credential the session would use with default handling, if it has one.
    public let proposedCredential: Credential?
    /// For server-trust challenges: the chain the server presented.
    public let servedChain: ServedChain?
    /// For HTTP authentication: the 401/407 response that carried the challenge.
    public let failureResponse: HTTPResponse?
    let defaultDecider: ServerTrustDecider?

    /// Runs the session's decider on the served chain (what default handling would do),
    /// so a handler can combine it with its own checks.
    ///
    /// - Returns: The decision, or `nil` for challenges other than server trust.
    public func evaluateDefaultTrust() -> TrustDecision? {
        guard let servedChain, let defaultDecider else { return nil }
        return defaultDecider.decide(servedChain)
    }
}

/// A session-level handler: receives connection-level challenges (server trust, client
/// certificate) for every task when set. It runs synchronously on the transfer thread inside
/// the TLS handshake; while it runs, new requests of the session are given to another
/// transfer thread (see ``HTTPSessionConfiguration/maximumTransferThreads``).
public typealias SessionChallengeHandler = @Sendable (AuthenticationChallenge) -> ChallengeDisposition

/// A task-level handler (AFNetworking's `authenticationChallengeHandler`): receives HTTP
/// authentication challenges, and connection-level challenges when no session-level handler
/// is set. Answer now, or return ``ChallengeOutcome/later`` and call the completion.
public typealias TaskChallengeHandler = @Sendable (AuthenticationChallenge, ChallengeCompletion) -> ChallengeOutcome

/// The shared state between a handler that answers later and the waiting request.
final class ChallengeReply: Sendable {
    private struct State {
        var answer: ChallengeDisposition?
        var expired = false
        var waiter: CheckedContinuation<ChallengeDisposition?, Never>?
    }
    private let state = Mutex(State())
    private let semaphore = DispatchSemaphore(value: 0)

    func answer(_ disposition: ChallengeDisposition) {
        let waiter: CheckedContinuation<ChallengeDisposition?, Never>? = state.withLock { state in
            guard state.answer == nil, !state.expired else { return nil }
            state.answer = disposition
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        semaphore.signal()
        waiter?.resume(returning: disposition)
    }

    /// Ends a wait at once, unanswered (the request's task was cancelled): a blocked
    /// ``waitBlocking(timeout:)`` returns `nil`, a suspended ``wait(timeout:)`` resumes with
    /// `nil`, and a later answer is ignored.
    func cancel() {
        expire()
        semaphore.signal()
    }

    /// Blocks the calling thread until answered, cancelled (``cancel()``) or `timeout`
    /// seconds pass.
    func waitBlocking(timeout: Double) -> ChallengeDisposition? {
        _ = semaphore.wait(timeout: .now() + timeout)
        return state.withLock { state in
            state.expired = true
            return state.answer
        }
    }

    /// Suspends until answered, `timeout` seconds pass, or the task is cancelled.
    func wait(timeout: Double) async -> ChallengeDisposition? {
        let timer = Task { [self] in
            // Duration.wait: `.infinity` or a huge timeout is the longest wait, in effect none,
            // as the blocking wait's clamped DispatchTime is; never a trap in a conversion.
            try? await Task.sleep(for: .wait(seconds: timeout))
            expire()
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ChallengeDisposition?, Never>) in
                let ready: ChallengeDisposition?? = state.withLock { state in
                    if let answer = state.answer { return .some(answer) }
                    if state.expired { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if case .some(let answer) = ready { continuation.resume(returning: answer) }
            }
        } onCancel: {
            expire()
        }
    }

    private func expire() {
        let waiter: CheckedContinuation<ChallengeDisposition?, Never>? = state.withLock { state in
            guard state.answer == nil else { return nil }
            state.expired = true
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: nil)
    }
}
