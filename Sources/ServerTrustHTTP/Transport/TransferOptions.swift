/// How one transfer's curl handle is set up: derived from its ``TransferSpec`` in this one
/// place, and the only input of ``EasyHandle/configure(_:)`` (which reads nothing of the
/// request beside it, only the session's fixed configuration).
///
/// ``settings`` is what may stay on a handle for its next transfer: when a transfer's settings
/// equal those its handle was last set to, the handle is left as it is, so a keep-alive loop
/// of identical requests costs no `curl_easy_reset` and none of the forty-odd
/// `curl_easy_setopt` calls. The rest is per transfer and never compared (a body, progress
/// reporting, a response body that goes to a file or a stream): a transfer with any of it is
/// set up in full, and so is the one after it.
struct TransferOptions {
    /// The options that can be compared, and stay on the handle.
    struct Settings: Equatable {
        let target: RequestTarget
        let method: HTTPMethod
        let headers: HeaderFields
        /// Seconds for the whole hop.
        let timeout: Double
        /// User, password and the `CURLAUTH_*` mask for the origin.
        let credential: Credential?
        /// The request's own proxy credential (Basic), before the configuration's.
        let proxyCredential: ProxyCredential?
        let scope: ConnectionScope
        /// Whether the session's `resolve` list is still to be loaded into the shared DNS
        /// cache (once loaded, a handle set up with it is set up again without it).
        let loadsResolveList: Bool
    }

    struct Credential: Equatable {
        let user: String
        let password: String
        let schemes: Int
    }

    struct ProxyCredential: Equatable {
        let user: String
        let password: String
    }

    /// Header fields, read out of the request's ``HTTPHeaders`` once, and compared in place,
    /// name and value, in order (no strings built).
    struct HeaderFields: Equatable {
        let fields: [(name: String, value: String)]
        static func == (lhs: HeaderFields, rhs: HeaderFields) -> Bool {
            lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
        }

        /// Whether a `Host` field with a value is among them: libcurl then sends it, and picks
        /// the cookies it sends by its host (http.c `Curl_http_host`, `cookiehost`).
        var setsHost: Bool {
            fields.contains { $0.name.utf8.count == 4 && $0.name.lowercased() == "host" && $0.value.contains { $0 != " " && $0 != "\t" } }
        }
    }

    /// The request body as curl reads it.
    enum Body {
        case empty
        /// In memory curl reads as it sends (`CURLOPT_POSTFIELDS`).
        case bytes(RequestBytes)
        /// Read while it is sent (``StreamedBodyReader``, opened when the handle is set up).
        case streamed(StreamedBody)
    }

    let settings: Settings
    let body: Body
    /// Whether curl reports progress (an upload or download progress handler).
    let reportsProgress: Bool
    /// Whether the response body is kept in memory (not written to a download's file or
    /// handed to a stream).
    let keepsResponseInMemory: Bool

    /// Whether the request has a body (``Body/empty`` is none).
    var hasBody: Bool {
        if case .empty = body { return false }
        return true
    }

    /// ``settings`` when nothing per transfer rides on the handle: what the next transfer may
    /// find still set.
    var reusableSettings: Settings? {
        guard !hasBody, !reportsProgress, keepsResponseInMemory else { return nil }
        return settings
    }

    /// Reads `spec` in place (a copy would retain each of its references) and copies a body
    /// into memory curl may read.
    ///
    /// - Parameters:
    ///   - spec: The hop.
    ///   - loadsResolveList: The session's `resolve` list is still to be loaded.
    init(_ spec: borrowing TransferSpec, loadsResolveList: Bool) {
        settings = Settings(
            target: spec.target, method: spec.method, headers: HeaderFields(fields: spec.headers.fields), timeout: spec.timeout,
            credential: spec.httpCredential.map { Credential(user: $0.user, password: $0.password, schemes: $0.schemes) },
            proxyCredential: spec.proxyCredential.map { ProxyCredential(user: $0.user, password: $0.password) },
            scope: ConnectionScope(hasRequestHandler: spec.requestChallengeHandler != nil, usesFreshConnection: spec.usesFreshConnection),
            loadsResolveList: loadsResolveList)
        if let streamed = spec.streamedBody {
            body = .streamed(streamed)
        } else if let bytes = spec.body.flatMap(RequestBytes.init) {
            body = .bytes(bytes)
        } else {
            body = .empty
        }
        reportsProgress = spec.uploadProgress != nil || spec.downloadProgress != nil
        if case .memory = spec.sink {
            keepsResponseInMemory = true
        } else {
            keepsResponseInMemory = false
        }
    }
}

/// A request body copied once into memory that curl may read until the hop ends
/// (`CURLOPT_POSTFIELDS` is not copied by curl, and lets curl rewind for authentication);
/// its only owner.
final class RequestBytes {
    let buffer: UnsafeMutableRawBufferPointer

    /// `nil` for an empty body (nothing to send).
    init?(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return nil }
        buffer = .allocate(byteCount: bytes.count, alignment: 1)
        buffer.copyBytes(from: bytes)
    }

    deinit { buffer.deallocate() }
}
