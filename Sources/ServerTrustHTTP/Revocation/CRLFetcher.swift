internal import CCurl
internal import COpenSSL
internal import CServerTrustShims
package import TrustEvaluation

/// One blocking HTTP GET of a CRL with libcurl, on the calling thread, with its own easy handle.
///
/// It is called from inside a TLS handshake's certificate-verify callback, on a transfer lane's
/// thread, so it never touches that lane's multi handle or its connections: `curl_easy_perform`
/// runs its own transfer (and connection) to completion or to the deadline, then the handle is
/// cleaned up. Errors of the fetch's own TLS (an `https` CRL URL) must not reach the handshake
/// that waits on the same thread, whose `SSL_get_error` reads the thread's OpenSSL error queue:
/// libcurl clears the queue before its handshake and drains it when reporting a failure, and the
/// fetch also marks the queue before and pops to the mark after, so that holds whatever path
/// libcurl takes (StapleTimingTests runs a failing `https` fetch inside a status callback).
///
/// What the request never carries: cookies (no cookie engine), credentials (no user name or
/// password, `.netrc` ignored, URLs with user information are refused before they get here by
/// ``/TrustEvaluation/CRLLocations``), client certificates (none is configured), compression
/// (no `Accept-Encoding`, so the size cap applies to what the server sends), proxies from the
/// environment. Redirects are followed up to ``maximumRedirects`` times, to `http` and `https`
/// only. The body is cut at ``maximumSize`` bytes (announced by Content-Length or counted as it
/// arrives). The deadline bounds connection, TLS, redirects and body together.
///
/// **`https` CRL URLs.** The server's certificate is not verified. A CRL authenticates itself:
/// its signature by the CA's key and its thisUpdate/nextUpdate are what the revocation check
/// relies on, and a Web PKI CRL is published over plain `http` anyway (CA/B BR §7.1.2.11.2), so
/// TLS on the fetch adds confidentiality, not authenticity. Verifying it would need a trust
/// decision (and revocation checking) inside the revocation check, a recursion with its own
/// failure modes (a CRL server whose certificate is revoked or expired would make every status
/// unknown) for no gain against an on-path attacker, who can block either fetch.
package struct CRLFetcher: Sendable {
    /// The largest body accepted, in bytes.
    package var maximumSize: Int
    /// The most redirects followed.
    package var maximumRedirects: Int
    /// The `User-Agent` sent.
    package var userAgent: String

    /// Creates a fetcher.
    package init(maximumSize: Int, maximumRedirects: Int, userAgent: String = "ServerTrust-CRL-fetcher/1") {
        self.maximumSize = maximumSize
        self.maximumRedirects = maximumRedirects
        self.userAgent = userAgent
    }

    /// What the server answered.
    package enum Reply: Sendable, Equatable {
        /// 200: the body, and the validators to revalidate it with.
        case body([UInt8], etag: String?, lastModified: String?)
        /// 304 to a conditional request.
        case notModified
    }

    /// GETs `url`, conditionally when validators are given, blocking until the answer or the
    /// deadline.
    ///
    /// - Parameters:
    ///   - url: An `http` or `https` URL.
    ///   - etag: A previous response's `ETag`, sent as `If-None-Match`.
    ///   - lastModified: A previous response's `Last-Modified`, sent as `If-Modified-Since`.
    ///   - deadline: When to give up.
    /// - Returns: The reply, or why there is none.
    package func fetch(_ url: String, etag: String? = nil, lastModified: String? = nil, until deadline: ContinuousClock.Instant)
        -> Result<Reply, CRLUnavailable>
    {
        let remaining = ContinuousClock.now.duration(to: deadline)
        let milliseconds = Int(remaining.components.seconds) * 1000 + Int(remaining.components.attoseconds / 1_000_000_000_000_000)
        guard milliseconds >= 1 else { return .failure(.noTimeLeft) }
        guard Curl.initialized, let handle = curl_easy_init() else { return .failure(.unreachable("curl_easy_init failed")) }
        defer { curl_easy_cleanup(handle) }
        let state = FetchState(limit: maximumSize)
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errorBuffer.deallocate() }
        var headerLines: [String] = []
        if let etag { headerLines.append("If-None-Match: \(etag)") }
        if let lastModified { headerLines.append("If-Modified-Since: \(lastModified)") }
        let headers = headerLines.isEmpty ? nil : CurlSList(headerLines)
        if !headerLines.isEmpty, headers == nil { return .failure(.unreachable("curl_slist_append failed")) }

        let opaque = Unmanaged.passUnretained(state).toOpaque()
        var failure: CURLoption?
        func long(_ option: CURLoption, _ value: Int) {
            if CServerTrustShims_curl_easy_setopt_long(handle, option, value) != CURLE_OK, failure == nil { failure = option }
        }
        func string(_ option: CURLoption, _ value: String) {
            if CServerTrustShims_curl_easy_setopt_string(handle, option, value) != CURLE_OK, failure == nil { failure = option }
        }
        func pointer(_ option: CURLoption, _ value: UnsafeMutableRawPointer?) {
            if CServerTrustShims_curl_easy_setopt_pointer(handle, option, value) != CURLE_OK, failure == nil { failure = option }
        }
        string(CURLOPT_URL, url)
        long(CURLOPT_NOSIGNAL, 1)
        pointer(CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer))
        string(CURLOPT_PROTOCOLS_STR, "http,https")
        string(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        long(CURLOPT_FOLLOWLOCATION, maximumRedirects > 0 ? 1 : 0)
        long(CURLOPT_MAXREDIRS, maximumRedirects)
        long(CURLOPT_TIMEOUT_MS, milliseconds)
        long(CURLOPT_CONNECTTIMEOUT_MS, milliseconds)
        if CServerTrustShims_curl_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maximumSize)) != CURLE_OK {
            failure = failure ?? CURLOPT_MAXFILESIZE_LARGE
        }
        // See the type's documentation: a CRL authenticates itself.
        long(CURLOPT_SSL_VERIFYPEER, 0)
        long(CURLOPT_SSL_VERIFYHOST, 0)
        string(CURLOPT_PROXY, "")  // no proxy from the environment
        string(CURLOPT_NOPROXY, "")
        long(CURLOPT_NETRC, Int(CURL_NETRC_IGNORED.rawValue))
        string(CURLOPT_USERAGENT, userAgent)
        if let headers { pointer(CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers.pointer)) }
        if CServerTrustShims_curl_easy_setopt_write_function(handle, crlWriteCallback) != CURLE_OK { failure = failure ?? CURLOPT_WRITEFUNCTION }
        pointer(CURLOPT_WRITEDATA, opaque)
        if CServerTrustShims_curl_easy_setopt_header_function(handle, crlHeaderCallback) != CURLE_OK {
            failure = failure ?? CURLOPT_HEADERFUNCTION
        }
        pointer(CURLOPT_HEADERDATA, opaque)
        if let failure { return .failure(.unreachable("curl_easy_setopt(\(failure.rawValue)) failed")) }

        // The handshake waiting in this thread reads OpenSSL's error queue (see the type's
        // documentation).
        ERR_set_mark()
        let code = withExtendedLifetime((state, headers)) { curl_easy_perform(handle) }
        ERR_pop_to_mark()

        switch code {
        case CURLE_OK: break
        case CURLE_OPERATION_TIMEDOUT: return .failure(.timedOut)
        case CURLE_FILESIZE_EXCEEDED: return .failure(.tooLarge(limit: maximumSize))
        case CURLE_WRITE_ERROR where state.exceeded: return .failure(.tooLarge(limit: maximumSize))
        case CURLE_TOO_MANY_REDIRECTS: return .failure(.tooManyRedirects(limit: maximumRedirects))
        default:
            let detail = String(cString: errorBuffer)
            return .failure(.unreachable(detail.isEmpty ? Curl.describe(code) : detail))
        }
        var status = 0
        _ = CServerTrustShims_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        switch status {
        case 200: return .success(.body(state.body, etag: state.etag, lastModified: state.lastModified))
        case 304 where etag != nil || lastModified != nil: return .success(.notModified)
        case 300...399 where maximumRedirects == 0: return .failure(.tooManyRedirects(limit: 0))
        default: return .failure(.httpStatus(status))
        }
    }
}

/// The body and validators of one fetch, written by curl's callbacks on the fetching thread.
private final class FetchState {
    let limit: Int
    var body: [UInt8] = []
    var etag: String?
    var lastModified: String?
    /// The body passed the limit (the write callback refused it).
    var exceeded = false

    init(limit: Int) { self.limit = limit }

    func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard body.count + bytes.count <= limit else {
            exceeded = true
            return 0
        }
        body.append(contentsOf: bytes)
        return bytes.count
    }

    /// One header line. Each response of a redirect chain starts with its status line, which
    /// clears what an earlier one said, so the validators are the final response's.
    func header(_ line: UnsafeRawBufferPointer) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            if line.starts(with: Array("HTTP/".utf8)) {
                etag = nil
                lastModified = nil
            }
            return
        }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        guard name == "etag" || name == "last-modified" else { return }
        let blank: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]
        let value = String(decoding: line[(colon + 1)...].drop { blank.contains($0) }.reversed().drop { blank.contains($0) }.reversed(), as: UTF8.self)
        if name == "etag" { etag = value.isEmpty ? nil : value } else { lastModified = value.isEmpty ? nil : value }
    }
}

private let crlWriteCallback: curl_write_callback = { data, size, count, userdata in
    guard let userdata else { return 0 }
    let state = Unmanaged<FetchState>.fromOpaque(userdata).takeUnretainedValue()
    guard let data else { return 0 }
    return state.receive(UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: size * count))
}

private let crlHeaderCallback: curl_write_callback = { data, size, count, userdata in
    guard let userdata, let data else { return 0 }
    Unmanaged<FetchState>.fromOpaque(userdata).takeUnretainedValue().header(UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: size * count))
    return size * count
}
