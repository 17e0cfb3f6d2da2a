internal import CCurl
internal import COpenSSL
internal import CServerTrustShims
internal import ServerTrust

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
/// Which connections a request may use at all is ``ConnectionScope``.
enum ConnectionTrust {
    /// The decision of one connection, with the box a reusing request reports (made once, so a
    /// keep-alive request costs a pointer read).
    final class Record: Sendable {
        let decided: DecisionBox
        let reused: DecisionBox
        /// The session's decider generation the decision was made under.
        let generation: Int

        init(_ decision: TrustDecision, generation: Int) {
            decided = DecisionBox(decision)
            reused = DecisionBox(decision.reused)
            self.generation = generation
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
///   session may still be resumed, since the resumed connection is decided too.
/// - ``isolated``: the request brings its own challenge handler, whose answer for the server
///   may differ from the session's. Its connection is never taken from the pool, never put
///   back, and its TLS session is neither resumed nor cached (`CURLOPT_SSL_SESSIONID_CACHE`
///   0), so its handler is asked in a full handshake, and nothing it trusted serves another
///   request.
enum ConnectionScope: Equatable {
    case session
    case fresh
    case isolated

    /// - Parameters:
    ///   - hasRequestHandler: The request has a server-trust handler of its own.
    ///   - usesFreshConnection: The request asks for a new connection.
    init(hasRequestHandler: Bool, usesFreshConnection: Bool) {
        if hasRequestHandler {
            self = .isolated
        } else {
            self = usesFreshConnection ? .fresh : .session
        }
    }

    /// `CURLOPT_FRESH_CONNECT` and `CURLOPT_FORBID_REUSE`.
    var opensOwnConnection: Bool { self != .session }
    /// Whether the session's TLS session cache is used.
    var usesSessionCache: Bool { self != .isolated }
}

/// libcurl's pre-request callback: the connection is up (new, resumed or reused) and nothing
/// has been sent on it for this request.
let easyPrerequestCallback: curl_prereq_callback = { userdata, _, _, _, _ in
    guard let userdata else { return CURL_PREREQFUNC_ABORT }
    return Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue().connectionReady() ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT
}
