internal import CCollectorShims
internal import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP request as the collector's handler sees it: complete, body included.
package struct ServerRequest: Sendable {
    /// `GET`, `POST`…
    package let method: String
    /// The path, without the query (libmicrohttpd has percent-decoded it).
    package let path: String
    /// Header values by lowercased name (the first of repeated headers).
    package let headers: [String: String]
    /// Query arguments, decoded (the first of repeated arguments).
    package let query: [String: String]
    /// The body.
    package let body: [UInt8]
    /// The peer's address (the proxy's, behind one).
    package let clientAddress: String

    package init(method: String, path: String, headers: [String: String], query: [String: String], body: [UInt8], clientAddress: String) {
        self.method = method
        self.path = path
        self.headers = headers
        self.query = query
        self.body = body
        self.clientAddress = clientAddress
    }
}

/// The handler's answer.
package struct ServerResponse: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: [UInt8]

    package init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// An HTTP/1.1 server on libmicrohttpd (Debian's libmicrohttpd12), the maintained parser and
/// connection handling under the collector; this type owns the daemon and adds nothing to the
/// protocol.
///
/// One thread per connection (a handler may wait for a durable commit without holding up
/// other connections), strict request parsing (`MHD_OPTION_STRICT_FOR_CLIENT`: a request
/// libmicrohttpd would have to guess about is refused, the request-smuggling defence), and the
/// ``Limits``: connections, connections per address, idle time, the bytes of request line and
/// headers, the body. A body whose `Content-Length` is over the limit is answered 413 before
/// it is read; a chunked body that grows past it has its connection closed at once.
///
/// ``quiesce()`` stops accepting while connections in progress finish; ``stop()`` then closes
/// them and joins their threads (what SIGTERM does, in that order).
package final class HTTPServer: Sendable {
    /// What one server accepts.
    package struct Limits: Sendable {
        /// Connections at once (`--max-connections`).
        package var connections: UInt32 = 256
        /// Connections one address may hold; 0 for none (behind a proxy every client has its address).
        package var connectionsPerAddress: UInt32 = 64
        /// Seconds a connection may be idle.
        package var idleSeconds: UInt32 = 30
        /// Bytes for the request line and headers (and libmicrohttpd's buffers): a request
        /// whose headers do not fit is refused with 431.
        package var headerBytes = 32 * 1024
        /// Bytes of a request body.
        package var bodyBytes = 64 * 1024

        package init() {}
    }

    /// The port listened on.
    package let port: UInt16
    /// The limits in force.
    package let limits: Limits
    private let daemon: Mutex<OpaquePointer?>
    private let listenSocket = Mutex<Int32>(-1)
    private let core: Core

    /// What the C callbacks reach through their context pointer; kept alive by the server.
    final class Core: Sendable {
        let handler: @Sendable (ServerRequest) -> ServerResponse
        let bodyLimit: Int

        init(handler: @escaping @Sendable (ServerRequest) -> ServerResponse, bodyLimit: Int) {
            self.handler = handler
            self.bodyLimit = bodyLimit
        }
    }

    /// One request in progress, owned by libmicrohttpd's request context between the first
    /// callback and the completion notice (retained there, released there).
    final class Exchange {
        let method: String
        let path: String
        let headers: [String: String]
        let query: [String: String]
        let clientAddress: String
        var body: [UInt8] = []
        var answered = false

        init(method: String, path: String, headers: [String: String], query: [String: String], clientAddress: String) {
            self.method = method
            self.path = path
            self.headers = headers
            self.query = query
            self.clientAddress = clientAddress
        }
    }

    /// Starts listening.
    /// - Parameters:
    ///   - address: An IPv4 or IPv6 literal.
    ///   - port: The port, 0 for any.
    ///   - limits: The limits.
    ///   - tls: PEM certificate chain and key to serve HTTPS (GnuTLS inside libmicrohttpd).
    ///   - handler: Answers a complete request; runs on the connection's thread.
    package init(
        address: String, port: UInt16, limits: Limits = Limits(), tls: (certificatePEM: String, keyPEM: String)? = nil,
        handler: @escaping @Sendable (ServerRequest) -> ServerResponse
    ) throws(StoreError) {
        let core = Core(handler: handler, bodyLimit: limits.bodyBytes)
        let context = Unmanaged.passUnretained(core).toOpaque()
        let started: OpaquePointer? = address.withCString { addressText in
            Self.withOptionalCString(tls?.certificatePEM) { certificate in
                Self.withOptionalCString(tls?.keyPEM) { key in
                    var settings = CCollectorShims_ServerSettings(
                        address: addressText, port: port, connection_limit: limits.connections,
                        per_address_connection_limit: limits.connectionsPerAddress, connection_timeout: limits.idleSeconds,
                        connection_memory_limit: limits.headerBytes, tls_certificate_pem: certificate, tls_key_pem: key)
                    return CCollectorShims_start_daemon(&settings, accessHandler, context, completedHandler, context)
                }
            }
        }
        guard let started else {
            throw StoreError("listen on \(address):\(port)", "libmicrohttpd did not start: \(String(cString: strerror(errno)))")
        }
        self.core = core
        self.limits = limits
        self.port = CCollectorShims_bound_port(started)
        self.daemon = Mutex(started)
    }

    deinit { stop() }

    /// Stops accepting connections; those open go on until ``stop()``.
    package func quiesce() {
        daemon.withLock { daemon in
            guard let daemon else { return }
            let socket = MHD_quiesce_daemon(daemon)
            if socket >= 0 { listenSocket.withLock { $0 = socket } }
        }
    }

    /// Closes every connection, joins the connection threads and frees the daemon. A request
    /// whose handler is running finishes first.
    package func stop() {
        guard
            let running = daemon.withLock({ daemon -> OpaquePointer? in
                defer { daemon = nil }
                return daemon
            })
        else { return }
        MHD_stop_daemon(running)
        let socket = listenSocket.withLock { socket -> Int32 in
            defer { socket = -1 }
            return socket
        }
        if socket >= 0 { close(socket) }
    }

    private static func withOptionalCString<T>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
        guard let text else { return body(nil) }
        return text.withCString { body($0) }
    }
}

// MARK: - libmicrohttpd callbacks

/// Collects one kind of connection value (headers or query arguments) into a dictionary.
private final class ValueCollector {
    var values: [String: String] = [:]
    let lowercased: Bool
    init(lowercased: Bool) { self.lowercased = lowercased }
}

private func connectionValues(_ connection: OpaquePointer?, _ kind: MHD_ValueKind, lowercased: Bool) -> [String: String] {
    let collector = ValueCollector(lowercased: lowercased)
    let context = Unmanaged.passUnretained(collector).toOpaque()
    _ = MHD_get_connection_values(
        connection, kind,
        { context, _, key, value in
            guard let context, let key else { return .YES }
            let collector = Unmanaged<ValueCollector>.fromOpaque(context).takeUnretainedValue()
            var name = String(cString: key)
            if collector.lowercased { name = name.lowercased() }
            if collector.values[name] == nil { collector.values[name] = value.map { String(cString: $0) } ?? "" }
            return .YES
        }, context)
    return withExtendedLifetime(collector) { collector.values }
}

private func queue(_ response: ServerResponse, on connection: OpaquePointer?) -> MHD_Result {
    let made = response.body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let made else { return .NO }
    defer { MHD_destroy_response(made) }
    for (name, value) in response.headers {
        // libmicrohttpd refuses a header holding CR or LF; so does the collector (no value
        // from a report ever reaches a header).
        _ = MHD_add_response_header(made, name, value)
    }
    return MHD_queue_response(connection, UInt32(response.status), made)
}

private let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, uploadData, uploadSize, requestContext in
    guard let context, let requestContext, let uploadSize else { return .NO }
    let core = Unmanaged<HTTPServer.Core>.fromOpaque(context).takeUnretainedValue()
    guard let pointer = requestContext.pointee else {
        // Headers are in: make the exchange, and refuse an announced oversized body at once
        // (before `100 Continue`, so the client never sends it).
        var addressBuffer = [CChar](repeating: 0, count: 64)
        let address =
            CCollectorShims_client_address(connection, &addressBuffer, addressBuffer.count) == 0
            ? String(decoding: addressBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
        let exchange = HTTPServer.Exchange(
            method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "/",
            headers: connectionValues(connection, .HEADER_KIND, lowercased: true),
            query: connectionValues(connection, .GET_ARGUMENT_KIND, lowercased: false), clientAddress: address)
        requestContext.pointee = Unmanaged.passRetained(exchange).toOpaque()
        // Both framings at once is the request-smuggling shape: RFC 9112 §6.3 lets a server
        // refuse it and requires the connection closed after the answer (libmicrohttpd 0.9.75
        // decodes the chunks and keeps the connection, so a request hidden after the body
        // would be served). Refused here, before any body byte is read, and closed.
        if exchange.headers["content-length"] != nil, exchange.headers["transfer-encoding"] != nil {
            exchange.answered = true
            return queue(
                ServerResponse(
                    status: 400, headers: [("Content-Type", "application/json"), ("Connection", "close")],
                    body: Array(#"{"error":"Content-Length and Transfer-Encoding together"}"#.utf8)), on: connection)
        }
        if let length = exchange.headers["content-length"], let bytes = Int(length), bytes > core.bodyLimit {
            exchange.answered = true
            return queue(HTTPServer.tooLarge(core.bodyLimit), on: connection)
        }
        return .YES
    }
    let exchange = Unmanaged<HTTPServer.Exchange>.fromOpaque(pointer).takeUnretainedValue()
    let size = uploadSize.pointee
    if size > 0 {
        uploadSize.pointee = 0
        guard !exchange.answered else { return .YES }
        guard exchange.body.count + size <= core.bodyLimit, let uploadData else {
            // A body without Content-Length (chunked) that passes the limit: libmicrohttpd
            // accepts a response only once the body is complete, and reading the rest of an
            // unbounded upload to answer it is what the limit exists to avoid, so the
            // connection is closed here, unanswered.
            exchange.answered = true
            exchange.body = []
            return .NO
        }
        uploadData.withMemoryRebound(to: UInt8.self, capacity: size) { exchange.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size)) }
        return .YES
    }
    guard !exchange.answered else { return .YES }
    exchange.answered = true
    let request = ServerRequest(
        method: exchange.method, path: exchange.path, headers: exchange.headers, query: exchange.query, body: exchange.body,
        clientAddress: exchange.clientAddress)
    return queue(core.handler(request), on: connection)
}

private let completedHandler: MHD_RequestCompletedCallback = { _, _, requestContext, _ in
    guard let requestContext, let pointer = requestContext.pointee else { return }
    Unmanaged<HTTPServer.Exchange>.fromOpaque(pointer).release()
    requestContext.pointee = nil
}

extension HTTPServer {
    static func tooLarge(_ limit: Int) -> ServerResponse {
        ServerResponse(
            status: 413, headers: [("Content-Type", "application/json"), ("Connection", "close")],
            body: Array(#"{"error":"the body is larger than \#(limit) bytes"}"#.utf8))
    }
}
