internal import CCurl
internal import COpenSSL
internal import CServerTrustShims
internal import ServerTrust
internal import Synchronization

/// A trust decision belongs to its connection.
///
/// The decision made in a connection's full handshake is stored on that connection's `SSL`
/// object (an ex_data slot that retains it and is released with the `SSL`), so a request that
/// reuses the connection reports exactly the decision that connection was accepted with, and
/// a connection that carries no decision was not decided in a handshake: it resumed a TLS
/// session, and is decided now, before the request is sent, on the chain the session kept
/// (``EasyHandle/connectionReady()``, from libcurl's `CURLOPT_PREREQFUNCTION`). So every new
/// connection, full or resumed, gets the session's decision at the current time, with the
/// current pins: a leaf that expired since the session was made, or a pin set that changed, is
/// refused on the next new connection, resumption on or off.
///
/// The record also says who decided (``Decider``): the session's decider, or one request's own
/// challenge handler. Which connections a request may use at all is ``ConnectionScope`` (its
/// own pool for a request with a handler); ``admission(of:for:generation:)`` is the check
/// behind it, made before every request is sent on a connection.
enum ConnectionTrust {
    /// Who accepted a connection.
    enum Decider: Equatable {
        /// The session: its decider of this generation (``SessionCore/replaceTrust(_:)``
        /// counts them) and its session-level challenge handlers.
        case session(generation: Int)
        /// One request's own challenge handler (``ConnectionScope/isolated(request:)``): it
        /// may have trusted what the session's decider refuses, and presented a client
        /// certificate of that request's.
        case request(UInt64)
    }

    /// The decision of one connection, with the box a reusing request reports (made once, so a
    /// keep-alive request costs a pointer read).
    final class Record: Sendable {
        let decided: DecisionBox
        let reused: DecisionBox
        let decider: Decider

        init(_ decision: TrustDecision, by decider: Decider) {
            decided = DecisionBox(decision)
            reused = DecisionBox(decision.reused)
            self.decider = decider
        }
    }

    /// What a request about to be sent on a connection may do with it.
    enum Admission: Equatable {
        /// Send: the connection was accepted by the decision that would be made for the
        /// request now.
        case admit
        /// Decide the connection now, on the chain its TLS session kept: it resumed a session
        /// (no handshake decided it), or its session decider has been replaced since.
        case decideAgain
        /// Never send on it (the reason, for the refusing decision): another party's decision
        /// is no decision for this request, and deciding again cannot undo a client
        /// certificate presented on it.
        case refuse(String)
    }

    /// Whether a request of `scope` may be sent on a connection carrying `record` (`nil`: a
    /// connection no handshake decided), `generation` being the session decider's now.
    ///
    /// Requests under the session's decider ride connections their session accepted, of any
    /// earlier generation once decided again; a request with its own handler rides only the
    /// connection its own handshake opened. This is the defence behind the pools
    /// (``TransferEngine``): were a connection ever shared across them, by reuse, resumption
    /// or HTTP/2 multiplexing, the request is refused before a byte of it is sent.
    static func admission(of record: Record?, for scope: ConnectionScope, generation: Int) -> Admission {
        switch (scope, record?.decider) {
        case (.isolated(let own), .request(let decider)?) where decider == own:
            return .admit
        case (.isolated, .request?):
            return .refuse("the connection was accepted by another request's challenge handler")
        case (.isolated, .session?):
            return .refuse("the connection was accepted by the session's decider, not by this request's challenge handler")
        case (.isolated, nil):
            // It neither resumes nor caches TLS sessions: its connection is decided in its own
            // full handshake, or it is not its own.
            return .refuse("the connection was not decided in this request's own handshake")
        case (.session, .session(let decided)?), (.fresh, .session(let decided)?):
            return decided == generation ? .admit : .decideAgain
        case (.session, .request?), (.fresh, .request?):
            return .refuse("the connection was accepted by another request's challenge handler, never by this session's decider")
        case (.session, nil), (.fresh, nil):
            return .decideAgain
        }
    }

    /// The ex_data slot of the origin connection's `SSL`: a retained ``Record``, released when
    /// OpenSSL frees the `SSL` (its only owner from then on).
    static let slot: Int32 = CServerTrustShims_SSL_get_ex_new_index { _, pointer, _, _, _, _ in
        guard let pointer else { return }
        Unmanaged<Record>.fromOpaque(pointer).release()
    }

    /// Stores an accepted decision on its connection.
    static func attach(_ record: Record, to ssl: OpaquePointer) {
        if let previous = SSL_get_ex_data(ssl, slot) {
            Unmanaged<Record>.fromOpaque(previous).release()
        }
        SSL_set_ex_data(ssl, slot, Unmanaged.passRetained(record).toOpaque())
    }

    /// The decision the connection was accepted with, if it was decided.
    static func record(of ssl: OpaquePointer) -> Record? {
        SSL_get_ex_data(ssl, slot).map { Unmanaged<Record>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The `SSL` of the transfer's origin connection (libcurl's `CURLINFO_TLS_SSL_PTR`), while
    /// the transfer runs.
    static func originSSL(of handle: UnsafeMutableRawPointer) -> OpaquePointer? {
        var raw: UnsafeMutableRawPointer?
        guard CServerTrustShims_curl_easy_getinfo_pointer(handle, CURLINFO_TLS_SSL_PTR, &raw) == CURLE_OK, let raw else { return nil }
        let info = raw.assumingMemoryBound(to: curl_tlssessioninfo.self).pointee
        guard info.backend == CURLSSLBACKEND_OPENSSL, let internals = info.internals else { return nil }
        return OpaquePointer(internals)
    }
}

/// Which connections and TLS sessions a request may use, derived from the request alone: a
/// connection or TLS session serves a request only when that request would reach the same
/// decision the connection was accepted with.
///
/// - ``session``: the session's own decision (its decider and its session-level handlers)
///   judges the request's server, so any connection of the session accepted by it may serve
///   it, and its TLS sessions may be resumed (a resumed connection is decided again).
/// - ``fresh``: `usesFreshConnection`: a new connection, and with it a new decision; the TLS
///   session may still be resumed, since the resumed connection is decided too. Once
///   decided, it is a connection of the session like any other (HTTP/2 may multiplex the
///   session's requests onto it while it is open).
/// - ``isolated(request:)``: the request brings its own challenge handler, whose answers for
///   the server (trust, a client certificate) may differ from the session's. Its transfers run
///   on lanes of their own (``TransferEngine``), whose connection pools hold no request
///   without one; its connection is never taken from the pool, never put back
///   (`CURLOPT_FRESH_CONNECT`, `CURLOPT_FORBID_REUSE`: no other transfer of its pool joins it,
///   by reuse or multiplexing), and its TLS session is neither resumed nor cached
///   (`CURLOPT_SSL_SESSIONID_CACHE` 0), so its handler is asked in a full handshake, and
///   nothing it trusted or presented serves another request. The number tells the request's
///   transfers apart, for ``ConnectionTrust/admission(of:for:generation:)``.
enum ConnectionScope: Equatable {
    case session
    case fresh
    case isolated(request: UInt64)

    /// The next ``isolated(request:)`` number (never reused: 2^64 transfers do not happen).
    private static let nextRequest = Atomic<UInt64>(1)

    /// - Parameters:
    ///   - hasRequestHandler: The request has a server-trust handler of its own.
    ///   - usesFreshConnection: The request asks for a new connection.
    init(hasRequestHandler: Bool, usesFreshConnection: Bool) {
        if hasRequestHandler {
            self = .isolated(request: Self.nextRequest.add(1, ordering: .relaxed).oldValue)
        } else {
            self = usesFreshConnection ? .fresh : .session
        }
    }

    /// Whether the request runs apart from the session's requests (its own lanes).
    var isIsolated: Bool {
        if case .isolated = self { return true }
        return false
    }
    /// `CURLOPT_FRESH_CONNECT` and `CURLOPT_FORBID_REUSE`.
    var opensOwnConnection: Bool { self != .session }
    /// Whether the session's TLS session cache is used.
    var usesSessionCache: Bool { !isIsolated }

    /// Who decides the connection this request opens.
    func decider(generation: Int) -> ConnectionTrust.Decider {
        if case .isolated(let request) = self { return .request(request) }
        return .session(generation: generation)
    }
}

/// libcurl's pre-request callback: the connection is up (new, resumed or reused) and nothing
/// has been sent on it for this request.
let easyPrerequestCallback: curl_prereq_callback = { userdata, _, _, _, _ in
    guard let userdata else { return CURL_PREREQFUNC_ABORT }
    return Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue().connectionReady() ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT
}
