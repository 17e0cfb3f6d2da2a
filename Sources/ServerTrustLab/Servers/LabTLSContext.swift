internal import COpenSSL
internal import CServerTrustShims
internal import Glibc

// OpenSSL ownership for the Lab servers. Three owners, one C object each:
//   LabServerIdentity  – an X509 leaf plus a STACK_OF(X509) chain (the key stays in its LabKey)
//   LabSSLContext      – an SSL_CTX, complete after init and never mutated, so it may be shared
//   LabTLSConnection   – an SSL on one socket, used only by the thread serving that socket

/// TLS protocol versions a Lab server or relay can be limited to.
// swift-format-ignore: AlwaysUseLowerCamelCase
// (tls1_2 spells the version as OpenSSL and the TLS RFCs do: TLS1_2_VERSION, "TLS 1.2".)
public enum LabTLSVersion: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// TLS 1.0 (OpenSSL 3 needs security level 0 for it; offered for downgrade tests only).
    case tls1_0
    /// TLS 1.1 (same caveat as TLS 1.0).
    case tls1_1
    /// TLS 1.2.
    case tls1_2
    /// TLS 1.3.
    case tls1_3

    /// The name OpenSSL reports (`SSL_get_version`), such as `TLSv1.3`.
    public var description: String {
        switch self {
        case .tls1_0: return "TLSv1"
        case .tls1_1: return "TLSv1.1"
        case .tls1_2: return "TLSv1.2"
        case .tls1_3: return "TLSv1.3"
        }
    }

    var openSSLValue: Int32 {
        switch self {
        case .tls1_0: return TLS1_VERSION
        case .tls1_1: return TLS1_1_VERSION
        case .tls1_2: return TLS1_2_VERSION
        case .tls1_3: return TLS1_3_VERSION
        }
    }
}

/// Parses one DER certificate into an owned `X509 *` (the caller frees it).
func labX509(from certificate: LabCertificate) throws -> OpaquePointer {
    let der = certificate.der
    return try der.withUnsafeBufferPointer { buffer throws -> OpaquePointer in
        var cursor = buffer.baseAddress
        guard let x509 = d2i_X509(nil, &cursor, buffer.count) else { throw LabError.openSSL("d2i_X509") }
        // d2i advances the cursor; anything left over means the DER was not one certificate.
        guard let end = cursor, let start = buffer.baseAddress, end - start == buffer.count else {
            X509_free(x509)
            throw LabError.invalid("d2i_X509", "trailing bytes after the certificate")
        }
        return x509
    }
}

/// Re-encodes a borrowed `X509 *` as a ``LabCertificate``.
func labCertificate(from x509: OpaquePointer) -> LabCertificate? {
    let length = i2d_X509(x509, nil)
    guard length > 0 else { return nil }
    var der = [UInt8](repeating: 0, count: Int(length))
    let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
        var cursor = buffer.baseAddress
        return i2d_X509(x509, &cursor)
    }
    guard written == length else { return nil }
    return try? LabCertificate(der: der)
}

/// A certificate chain and key ready to be installed on an `SSL_CTX` or `SSL`.
final class LabServerIdentity: @unchecked Sendable {
    // @unchecked Sendable: the X509 and the stack are never modified after init; installing
    // them only takes references (X509_up_ref), which OpenSSL does atomically.

    /// The certificates as given, leaf first.
    let certificates: [LabCertificate]
    /// The private key (its `EVP_PKEY` stays owned by the LabKey).
    let key: LabKey
    /// Owned `X509 *` of the leaf.
    private let leaf: OpaquePointer
    /// Owned `STACK_OF(X509) *` of the certificates after the leaf.
    private let chain: OpaquePointer
    /// A TLS-encoded SCT list for the `signed_certificate_timestamp` extension, if any.
    let signedCertificateTimestamps: [UInt8]?

    /// - Throws: ``LabError`` if `certificates` is empty or a certificate does not parse.
    init(certificates: [LabCertificate], key: LabKey, signedCertificateTimestamps: [UInt8]? = nil) throws {
        guard let first = certificates.first else {
            throw LabError.invalid("LabServerIdentity", "a served chain needs at least the leaf certificate")
        }
        guard let stack = CServerTrustShims_sk_X509_new_null() else { throw LabError.openSSL("sk_X509_new_null") }
        do {
            for certificate in certificates.dropFirst() {
                let x509 = try labX509(from: certificate)
                // sk_X509_push hands the reference to the stack, which pop_free releases.
                guard CServerTrustShims_sk_X509_push(stack, x509) > 0 else {
                    X509_free(x509)
                    throw LabError.openSSL("sk_X509_push")
                }
            }
            self.leaf = try labX509(from: first)
        } catch {
            CServerTrustShims_sk_X509_pop_free(stack)
            throw error
        }
        self.chain = stack
        self.certificates = certificates
        self.key = key
        self.signedCertificateTimestamps = signedCertificateTimestamps
    }

    deinit {
        X509_free(leaf)
        CServerTrustShims_sk_X509_pop_free(chain)
    }

    /// Makes this the context's default certificate, key and chain.
    func install(on context: OpaquePointer) throws {
        // SSL_CTX_use_cert_and_key takes its own references to all three, so ownership here
        // is unchanged; it also checks that the key matches the leaf.
        guard SSL_CTX_use_cert_and_key(context, leaf, key.pkey, chain, 1) == 1 else {
            throw LabError.openSSL("SSL_CTX_use_cert_and_key")
        }
        if let scts = signedCertificateTimestamps {
            // Server info v2 (what `openssl s_server -serverinfo` loads): a 4-byte context, then
            // the extension's type and length-prefixed data. The context sends it in a TLS 1.2
            // ServerHello and in the leaf's TLS 1.3 CertificateEntry (RFC 8446 §4.4.2); OpenSSL
            // sends it only to a client that offered the extension in its ClientHello.
            guard scts.count <= 0xFFFF else { throw LabError.invalid("LabServerIdentity", "SCT list over 65535 bytes") }
            let contexts = UInt32(SSL_EXT_CLIENT_HELLO) | UInt32(SSL_EXT_TLS1_2_SERVER_HELLO) | UInt32(SSL_EXT_TLS1_3_CERTIFICATE)
            let type = UInt16(TLSEXT_TYPE_signed_certificate_timestamp)
            let serverInfo: [UInt8] =
                [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: contexts >> $0) } + [UInt8(type >> 8), UInt8(type & 0xFF)]
                + [UInt8(scts.count >> 8), UInt8(scts.count & 0xFF)] + scts
            let installed = serverInfo.withUnsafeBufferPointer {
                SSL_CTX_use_serverinfo_ex(context, UInt32(SSL_SERVERINFOV2), $0.baseAddress, $0.count)
            }
            guard installed == 1 else { throw LabError.openSSL("SSL_CTX_use_serverinfo_ex") }
        }
    }

    /// Replaces the connection's certificate, key and chain (from a certificate callback).
    func install(onConnection ssl: OpaquePointer) -> Bool {
        SSL_use_cert_and_key(ssl, leaf, key.pkey, chain, 1) == 1
    }
}

/// ALPN identifiers in preference order, reachable from OpenSSL's select callback.
private final class LabALPNPreference: Sendable {
    let protocols: [[UInt8]]

    init(_ protocols: [String]) {
        self.protocols = protocols.map { Array($0.utf8) }.filter { !$0.isEmpty && $0.count < 256 }
    }

    /// The offset and length, inside the client's wire-format list, of the first protocol of
    /// ours that the client offered (server preference wins, as RFC 7301 §3.2 suggests).
    func select(from offered: UnsafeBufferPointer<UInt8>) -> (offset: Int, length: Int)? {
        for wanted in protocols {
            var index = 0
            while index < offered.count {
                let length = Int(offered[index])
                let start = index + 1
                guard start + length <= offered.count else { return nil }
                if length == wanted.count, offered[start..<(start + length)].elementsEqual(wanted) {
                    return (start, length)
                }
                index = start + length
            }
        }
        return nil
    }

    /// The client-side wire format: each protocol prefixed by its length.
    var wireFormat: [UInt8] { protocols.flatMap { [UInt8($0.count)] + $0 } }
}

/// Per-host identities consulted by the certificate callback (SNI selection).
private final class LabSNITable: Sendable {
    let identities: [String: LabServerIdentity]

    init(_ identities: [String: LabServerIdentity]) {
        self.identities = identities
    }
}

/// Client-certificate checking on a server context.
struct LabClientVerification {
    /// CA certificates a client chain must lead to.
    var trustedCertificates: [LabCertificate]
    /// Whether a client without a certificate fails the handshake.
    var required: Bool
}

/// An owned `SSL_CTX *`, configured completely in its initializer.
final class LabSSLContext: @unchecked Sendable {
    // @unchecked Sendable: the SSL_CTX is fully configured before init returns and never
    // modified afterwards; OpenSSL documents that such a factory may be used from several
    // threads at once to create SSL objects (openssl-threads(7)). Its session cache is
    // internally locked.

    /// The owned `SSL_CTX *`.
    let pointer: OpaquePointer
    /// Objects the C callbacks reach through raw `arg` pointers; they live as long as the context.
    private let callbackObjects: [AnyObject]

    private init(pointer: OpaquePointer, callbackObjects: [AnyObject]) {
        self.pointer = pointer
        self.callbackObjects = callbackObjects
    }

    deinit { SSL_CTX_free(pointer) }

    /// A server context.
    ///
    /// - Parameters:
    ///   - identity: The default certificate chain and key; `nil` leaves none (the relay
    ///     installs a minted one per connection).
    ///   - sniIdentities: Identities selected by lower-cased SNI host name.
    ///   - minimumVersion: Lowest TLS version accepted.
    ///   - maximumVersion: Highest TLS version accepted.
    ///   - alpn: Protocols to select from the client's offer, in preference order.
    ///   - clientVerification: Client-certificate policy, or `nil` not to ask for one.
    ///   - sessionResumption: Session cache and tickets on (TLS 1.2 IDs and tickets, TLS 1.3 tickets).
    ///   - sessionIDContext: Distinguishes this server's sessions (required when verifying clients).
    static func server(
        identity: LabServerIdentity?,
        sniIdentities: [String: LabServerIdentity],
        minimumVersion: LabTLSVersion,
        maximumVersion: LabTLSVersion,
        alpn: [String],
        clientVerification: LabClientVerification?,
        sessionResumption: Bool,
        sessionIDContext: String
    ) throws -> LabSSLContext {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw LabError.openSSL("SSL_CTX_new") }
        var callbackObjects: [AnyObject] = []
        do {
            try configureCommon(context, minimumVersion: minimumVersion, maximumVersion: maximumVersion)
            if let identity { try identity.install(on: context) }

            if !sniIdentities.isEmpty {
                let table = LabSNITable(sniIdentities)
                callbackObjects.append(table)
                // The certificate callback runs after the ClientHello (so the SNI is known)
                // and before certificate selection; a name without an entry keeps the default.
                SSL_CTX_set_cert_cb(
                    context,
                    { ssl, arg in
                        guard let ssl, let arg else { return 0 }
                        guard let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) else { return 1 }
                        let table = Unmanaged<LabSNITable>.fromOpaque(arg).takeUnretainedValue()
                        guard let identity = table.identities[String(cString: name).lowercased()] else { return 1 }
                        return identity.install(onConnection: ssl) ? 1 : 0
                    }, Unmanaged.passUnretained(table).toOpaque())
            }

            if !alpn.isEmpty {
                let preference = LabALPNPreference(alpn)
                callbackObjects.append(preference)
                SSL_CTX_set_alpn_select_cb(
                    context,
                    { _, out, outLength, offered, offeredLength, arg in
                        guard let out, let outLength, let offered, let arg else { return SSL_TLSEXT_ERR_NOACK }
                        let preference = Unmanaged<LabALPNPreference>.fromOpaque(arg).takeUnretainedValue()
                        let list = UnsafeBufferPointer(start: offered, count: Int(offeredLength))
                        // No overlap: continue without ALPN (what most servers do) rather than abort.
                        guard let choice = preference.select(from: list) else { return SSL_TLSEXT_ERR_NOACK }
                        // The selection must point into a buffer that outlives the callback; the
                        // client's list does (OpenSSL copies the choice before freeing it).
                        out.pointee = offered + choice.offset
                        outLength.pointee = UInt8(choice.length)
                        return SSL_TLSEXT_ERR_OK
                    }, Unmanaged.passUnretained(preference).toOpaque())
            }

            if let clientVerification {
                guard let store = SSL_CTX_get_cert_store(context) else { throw LabError.openSSL("SSL_CTX_get_cert_store") }
                for certificate in clientVerification.trustedCertificates {
                    let x509 = try labX509(from: certificate)
                    defer { X509_free(x509) }
                    // Both calls take their own reference; the deferred free drops ours.
                    guard X509_STORE_add_cert(store, x509) == 1 else { throw LabError.openSSL("X509_STORE_add_cert") }
                    guard SSL_CTX_add_client_CA(context, x509) == 1 else { throw LabError.openSSL("SSL_CTX_add_client_CA") }
                }
                let mode = SSL_VERIFY_PEER | (clientVerification.required ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0)
                SSL_CTX_set_verify(context, mode, nil)
            }

            let idContext = Array(sessionIDContext.utf8.prefix(32))
            guard SSL_CTX_set_session_id_context(context, idContext, UInt32(idContext.count)) == 1 else {
                throw LabError.openSSL("SSL_CTX_set_session_id_context")
            }
            if sessionResumption {
                _ = CServerTrustShims_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_SERVER))
            } else {
                // Off means off for both versions: no server cache, no TLS 1.2 tickets, and no
                // TLS 1.3 NewSessionTicket messages at all.
                _ = CServerTrustShims_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_OFF))
                SSL_CTX_set_options(context, CServerTrustShims_SSL_OP_NO_TICKET())
                guard SSL_CTX_set_num_tickets(context, 0) == 1 else { throw LabError.openSSL("SSL_CTX_set_num_tickets") }
            }
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        return LabSSLContext(pointer: context, callbackObjects: callbackObjects)
    }

    /// A client context that accepts any server certificate, as interception proxies do
    /// towards the real upstream.
    static func permissiveClient(alpn: [String], minimumVersion: LabTLSVersion, maximumVersion: LabTLSVersion) throws -> LabSSLContext {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw LabError.openSSL("SSL_CTX_new") }
        do {
            try configureCommon(context, minimumVersion: minimumVersion, maximumVersion: maximumVersion)
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            let wire = LabALPNPreference(alpn).wireFormat
            // Unlike most OpenSSL calls, set_alpn_protos returns 0 on success.
            if !wire.isEmpty, SSL_CTX_set_alpn_protos(context, wire, UInt32(wire.count)) != 0 {
                throw LabError.openSSL("SSL_CTX_set_alpn_protos")
            }
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        return LabSSLContext(pointer: context, callbackObjects: [])
    }

    /// A client context configured by `configure`, keeping `callbackObjects` (what its C
    /// callbacks reach through raw pointers) alive as long as the context.
    static func client(
        minimumVersion: LabTLSVersion, maximumVersion: LabTLSVersion, callbackObjects: [AnyObject], configure: (OpaquePointer) throws -> Void
    ) throws -> LabSSLContext {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw LabError.openSSL("SSL_CTX_new") }
        do {
            try configureCommon(context, minimumVersion: minimumVersion, maximumVersion: maximumVersion)
            try configure(context)
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        return LabSSLContext(pointer: context, callbackObjects: callbackObjects)
    }

    private static func configureCommon(_ context: OpaquePointer, minimumVersion: LabTLSVersion, maximumVersion: LabTLSVersion) throws {
        guard CServerTrustShims_SSL_CTX_set_min_proto_version(context, minimumVersion.openSSLValue) == 1,
            CServerTrustShims_SSL_CTX_set_max_proto_version(context, maximumVersion.openSSLValue) == 1
        else {
            throw LabError.openSSL("SSL_CTX_set_min/max_proto_version")
        }
        if minimumVersion < .tls1_2 {
            // OpenSSL 3's default security level 1 refuses TLS 1.0/1.1 (SHA-1 signatures).
            SSL_CTX_set_security_level(context, 0)
        }
        // Non-blocking sockets: a retried SSL_write may come from a different Swift array
        // buffer, and partial writes let the write loop advance by what was taken.
        _ = CServerTrustShims_SSL_CTX_set_mode(context, Int(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER))
        SSL_CTX_set_options(context, CServerTrustShims_SSL_OP_NO_COMPRESSION())
    }
}

extension LabTLSVersion: Comparable {
    /// Older versions sort first.
    public static func < (lhs: LabTLSVersion, rhs: LabTLSVersion) -> Bool {
        lhs.openSSLValue < rhs.openSSLValue
    }
}

/// The result of one non-blocking TLS read.
enum LabTLSRead {
    /// Bytes were read.
    case data([UInt8])
    /// Nothing yet; wait for the socket to become readable (or writable, for `wantWrite`).
    case wantRead
    /// TLS needs to write before it can read (key update, renegotiation).
    case wantWrite
    /// The peer closed the connection.
    case closed
}

/// An owned `SSL *` over one socket, used by exactly one thread.
final class LabTLSConnection {
    /// The socket underneath.
    let socket: LabSocket
    /// The owned `SSL *`.
    let ssl: OpaquePointer
    /// Keeps the `SSL_CTX` (and its callback objects) alive at least as long as the `SSL`.
    private let context: LabSSLContext

    /// - Throws: ``LabIOEnd/failed(_:)`` if OpenSSL cannot create the connection.
    init(socket: LabSocket, context: LabSSLContext) throws(LabIOEnd) {
        guard let ssl = SSL_new(context.pointer) else {
            throw .failed("SSL_new: " + LabError.drainOpenSSLErrors().joined(separator: "; "))
        }
        guard SSL_set_fd(ssl, socket.descriptor) == 1 else {
            SSL_free(ssl)
            throw .failed("SSL_set_fd: " + LabError.drainOpenSSLErrors().joined(separator: "; "))
        }
        self.socket = socket
        self.ssl = ssl
        self.context = context
    }

    deinit { SSL_free(ssl) }

    /// Runs the server (`SSL_accept`) or client (`SSL_connect`) handshake to completion.
    func handshake(asServer: Bool, until deadline: LabDeadline, stop: LabStopFlag) throws(LabIOEnd) {
        while true {
            ERR_clear_error()
            let result = asServer ? SSL_accept(ssl) : SSL_connect(ssl)
            if result == 1 { return }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ: try socket.wait(for: Int16(POLLIN), until: deadline, stop: stop)
            case SSL_ERROR_WANT_WRITE: try socket.wait(for: Int16(POLLOUT), until: deadline, stop: stop)
            case let code: throw failure(code, operation: asServer ? "SSL_accept" : "SSL_connect")
            }
        }
    }

    /// One non-blocking read attempt of up to `limit` bytes.
    func tryRead(limit: Int = 16_384) throws(LabIOEnd) -> LabTLSRead {
        var buffer = [UInt8](repeating: 0, count: limit)
        ERR_clear_error()
        let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32(limit)) }
        if count > 0 { return .data(Array(buffer[..<Int(count)])) }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closed
        case SSL_ERROR_SYSCALL:
            // errno 0 here is an EOF without close_notify, which HTTP clients often do.
            if errno == 0 || errno == ECONNRESET {
                _ = LabError.drainOpenSSLErrors()
                return .closed
            }
            throw failure(SSL_ERROR_SYSCALL, operation: "SSL_read")
        case let code:
            // OpenSSL 3 reports a missing close_notify as an SSL error ("unexpected eof").
            let reason = failure(code, operation: "SSL_read")
            if case .failed(let text) = reason, text.contains("unexpected eof") { return .closed }
            throw reason
        }
    }

    /// Reads at least one byte, waiting up to `deadline`; throws ``LabIOEnd/closed`` at EOF.
    func read(limit: Int = 16_384, until deadline: LabDeadline, stop: LabStopFlag) throws(LabIOEnd) -> [UInt8] {
        while true {
            switch try tryRead(limit: limit) {
            case .data(let bytes): return bytes
            case .wantRead: try socket.wait(for: Int16(POLLIN), until: deadline, stop: stop)
            case .wantWrite: try socket.wait(for: Int16(POLLOUT), until: deadline, stop: stop)
            case .closed: throw .closed
            }
        }
    }

    /// Writes all of `bytes`.
    func writeAll(_ bytes: [UInt8], until deadline: LabDeadline, stop: LabStopFlag) throws(LabIOEnd) {
        var offset = 0
        while offset < bytes.count {
            ERR_clear_error()
            let chunk = Int32(min(bytes.count - offset, 1 << 20))
            let count = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress.map { $0 + offset }, chunk) }
            if count > 0 {
                offset += Int(count)
                continue
            }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ: try socket.wait(for: Int16(POLLIN), until: deadline, stop: stop)
            case SSL_ERROR_WANT_WRITE: try socket.wait(for: Int16(POLLOUT), until: deadline, stop: stop)
            case SSL_ERROR_ZERO_RETURN: throw .closed
            case let code: throw failure(code, operation: "SSL_write")
            }
        }
    }

    /// Sends close_notify once, without waiting for the peer's (the socket closes next).
    func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        _ = LabError.drainOpenSSLErrors()
    }

    // MARK: Negotiated parameters

    /// The SNI host name the client sent, if any.
    var serverName: String? {
        SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
    }

    /// The negotiated protocol version, e.g. `TLSv1.3`.
    var version: String { String(cString: SSL_get_version(ssl)) }

    /// The ALPN protocol both sides agreed on, if any.
    var alpnProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// Whether the handshake resumed an earlier session.
    var sessionReused: Bool { SSL_session_reused(ssl) == 1 }

    /// The certificates the peer sent, leaf first.
    var peerCertificates: [LabCertificate] {
        var certificates: [LabCertificate] = []
        if let leaf = SSL_get1_peer_certificate(ssl) {
            defer { X509_free(leaf) }
            if let certificate = labCertificate(from: leaf) { certificates.append(certificate) }
        }
        // Borrowed. On a server it holds only the certificates after the client's leaf.
        if let chain = SSL_get_peer_cert_chain(ssl) {
            for index in 0..<CServerTrustShims_sk_X509_num(chain) {
                guard let x509 = CServerTrustShims_sk_X509_value(chain, index),
                    let certificate = labCertificate(from: x509)
                else { continue }
                if certificates.first != certificate { certificates.append(certificate) }
            }
        }
        return certificates
    }

    /// Maps an `SSL_get_error` code to an I/O end, draining the thread's error queue.
    private func failure(_ code: Int32, operation: String) -> LabIOEnd {
        let savedErrno = errno
        let errors = LabError.drainOpenSSLErrors()
        switch code {
        case SSL_ERROR_ZERO_RETURN: return .closed
        case SSL_ERROR_SYSCALL:
            if errors.isEmpty && savedErrno == 0 { return .closed }
            return .failed("\(operation): syscall errno \(savedErrno) \(errors.joined(separator: "; "))")
        default:
            return .failed("\(operation): error \(code) \(errors.joined(separator: "; "))")
        }
    }
}
