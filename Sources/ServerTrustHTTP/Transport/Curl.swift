internal import CCurl
internal import CServerTrustShims
internal import Glibc

/// Process-wide libcurl facts. `curl_global_init` runs once, before any handle exists (this
/// libcurl is built thread-safe, so the lazy initialisation may race with nothing else).
enum Curl {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    /// Whether this libcurl can negotiate HTTP/2 (ALPN `h2`).
    static let supportsHTTP2: Bool = {
        guard let info = curl_version_info(CURLVERSION_TENTH) else { return false }
        return info.pointee.features & CURL_VERSION_HTTP2 != 0
    }()

    /// `libcurl/7.88.1 OpenSSL/3.0.19 …`.
    static let versionText: String = String(cString: curl_version())

    /// curl's text for a code.
    static func describe(_ code: CURLcode) -> String {
        String(cString: curl_easy_strerror(code))
    }

    /// `CURLAUTH_BASIC` and `CURLAUTH_DIGEST` (casting macros the importer cannot see).
    static let authBasic = 1
    static let authDigest = 2
    /// `CURL_READFUNC_ABORT`: a read callback's "stop the transfer".
    static let readAbort = 0x1000_0000
    /// `CURL_WRITEFUNC_PAUSE` (a macro the importer cannot see): pause the transfer; curl offers the
    /// same bytes again after `curl_easy_pause(CURLPAUSE_CONT)`.
    static let writePause = 0x1000_0001
}

extension TransportError {
    /// A libcurl failure by kind: the one place its codes (curl.h, libcurl 7.88) are read.
    /// The code stays in the diagnostic text (`curl 7`), the error buffer's text (or curl's
    /// text for the code) is the message.
    ///
    /// - Parameters:
    ///   - code: The transfer's result.
    ///   - errorText: What curl wrote into the error buffer.
    ///   - headerSectionUnfinished: The response's header section was still open.
    ///   - tunnelRefused: An `https://` or `http://` proxy answered CONNECT with a non-2xx
    ///     status (curl reports 56 for it).
    init(curl code: CURLcode.RawValue, errorText: String, headerSectionUnfinished: Bool, tunnelRefused: Bool) {
        let summary = Curl.describe(CURLcode(rawValue: code))
        let message = errorText.isEmpty ? summary : errorText
        let diagnostic = "curl \(code)"
        if tunnelRefused {
            self.init(.proxyFailed, message: message, diagnostic: diagnostic)
            return
        }
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST.rawValue, CURLE_COULDNT_RESOLVE_PROXY.rawValue:
            self.init(.hostNotFound, message: message, diagnostic: diagnostic)
        case CURLE_COULDNT_CONNECT.rawValue, CURLE_INTERFACE_FAILED.rawValue:
            self.init(.cannotConnect, message: message, diagnostic: diagnostic)
        case CURLE_OPERATION_TIMEDOUT.rawValue:
            self.init(.timedOut, message: message, diagnostic: diagnostic)
        case CURLE_SSL_CLIENTCERT.rawValue:
            self.init(.clientCertificateRequired, message: message, diagnostic: diagnostic)
        case CURLE_SSL_CONNECT_ERROR.rawValue, CURLE_SEND_ERROR.rawValue, CURLE_RECV_ERROR.rawValue:
            // TLS 1.3 clients finish the handshake before the server has judged their
            // certificate, so its alert arrives as a send or receive error.
            if let kind = Self.clientCertificateAlert(errorText) {
                self.init(kind, message: message, diagnostic: diagnostic)
            } else if code == CURLE_SSL_CONNECT_ERROR.rawValue {
                self.init(.tlsHandshakeFailed, message: message, diagnostic: diagnostic)
            } else if code == CURLE_RECV_ERROR.rawValue && headerSectionUnfinished && errorText.hasPrefix("Too large response headers") {
                // libcurl's limit on a whole header section (300 KiB in 7.88), reported as a
                // receive error.
                self.init(.responseHeadersTooLarge, message: message, diagnostic: diagnostic)
            } else {
                self.init(.connectionLost, message: message, diagnostic: diagnostic)
            }
        case CURLE_SSL_CERTPROBLEM.rawValue, CURLE_SSL_CIPHER.rawValue, CURLE_PEER_FAILED_VERIFICATION.rawValue, CURLE_USE_SSL_FAILED.rawValue,
            CURLE_SSL_ENGINE_NOTFOUND.rawValue, CURLE_SSL_ENGINE_SETFAILED.rawValue, CURLE_SSL_ENGINE_INITFAILED.rawValue, CURLE_SSL_CACERT_BADFILE.rawValue,
            CURLE_SSL_SHUTDOWN_FAILED.rawValue, CURLE_SSL_CRL_BADFILE.rawValue, CURLE_SSL_ISSUER_ERROR.rawValue, CURLE_SSL_PINNEDPUBKEYNOTMATCH.rawValue,
            CURLE_SSL_INVALIDCERTSTATUS.rawValue:
            self.init(.tlsHandshakeFailed, message: message, diagnostic: diagnostic)
        case CURLE_PROXY.rawValue:
            self.init(.proxyFailed, message: message, diagnostic: diagnostic)
        case CURLE_PARTIAL_FILE.rawValue, CURLE_GOT_NOTHING.rawValue, CURLE_HTTP2.rawValue, CURLE_HTTP2_STREAM.rawValue:
            self.init(.connectionLost, message: message, diagnostic: diagnostic)
        case CURLE_WEIRD_SERVER_REPLY.rawValue, CURLE_UNSUPPORTED_PROTOCOL.rawValue:
            // 1 is also libcurl's answer to an HTTP/0.9 response.
            self.init(.invalidResponse, message: message, diagnostic: diagnostic)
        case CURLE_OUT_OF_MEMORY.rawValue where headerSectionUnfinished:
            // No memory shortage: a header field longer than CURL_MAX_HTTP_HEADER (the curl
            // CLI prints "Out of memory" too). Say what it is.
            let limit = Self.maximumResponseHeaderField
            self.init(
                .responseHeadersTooLarge, message: "response header field larger than \(limit) bytes (libcurl's CURL_MAX_HTTP_HEADER)",
                diagnostic: diagnostic)
            responseHeaderLimit = limit
        case CURLE_BAD_CONTENT_ENCODING.rawValue:
            self.init(.contentDecodingFailed, message: message, diagnostic: diagnostic)
        default:
            self.init(.other, message: message, diagnostic: diagnostic)
        }
    }

    /// libcurl 7.88 reports `CURLE_OK` for an HTTP/1.1 response whose connection closes inside
    /// the header section (status line and some fields, no blank line; curl's CLI exits 0
    /// too). Such a response is truncated, not complete: it fails as a body cut short does
    /// (there is no curl code to report).
    static let closedInHeaderSection = TransportError(
        .connectionLost, message: "connection closed inside the response header section (no blank line after the fields)",
        diagnostic: "")

    /// A TLS alert from the server about the client's certificate, as OpenSSL words it in
    /// curl's message (`… alert certificate required`, `… alert bad certificate`).
    private static func clientCertificateAlert(_ message: String) -> Kind? {
        let text = message.lowercased()
        guard text.contains("alert") else { return nil }
        if text.contains("certificate required") { return .clientCertificateRequired }
        let rejections = [
            "bad certificate", "unknown ca", "certificate unknown", "certificate revoked", "certificate expired",
            "unsupported certificate", "access denied",
        ]
        return rejections.contains(where: text.contains) ? .clientCertificateRejected : nil
    }
}

/// Owns one `curl_slist`. Immutable after `init`, and curl only reads a list while a transfer
/// uses it, so one list may serve transfers on several threads at once.
final class CurlSList: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<curl_slist>?

    /// Builds the list; `nil` if curl could not allocate it.
    init?(_ lines: [String]) {
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for line in lines {
            guard let appended = curl_slist_append(list, line) else {
                curl_slist_free_all(list)
                return nil
            }
            list = appended
        }
        self.pointer = list
    }

    deinit { curl_slist_free_all(pointer) }
}

/// Owns one `CURLU`: a request URL parsed once and handed to curl with `CURLOPT_CURLU`.
/// With a plain `CURLOPT_URL` curl parses the string again for every transfer and rebuilds
/// a normalised copy of it; with a `CURLU` it duplicates the parsed parts instead, which
/// matters to a handle that repeats the same URL (keep-alive). The easy handle that set it
/// keeps it until its options change (curl only reads it, during transfers).
final class CurlURL {
    let pointer: OpaquePointer

    /// Parses `url` with the flags curl itself uses for `CURLOPT_URL` (`CURLU_GUESS_SCHEME`,
    /// `CURLU_NON_SUPPORT_SCHEME`), so the result is the same; `nil` when curl refuses it
    /// (then `CURLOPT_URL` reports curl's own error).
    init?(_ url: String) {
        guard let handle = curl_url() else { return nil }
        let flags: UInt32 = 1 << 9 | 1 << 3  // CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME (macros Swift does not import)
        guard curl_url_set(handle, CURLUPART_URL, url, flags) == CURLUE_OK else {
            curl_url_cleanup(handle)
            return nil
        }
        pointer = handle
    }

    deinit { curl_url_cleanup(pointer) }

    /// The host libcurl connects to for `url`, as its URL API reads it: percent-decoded and,
    /// for an internationalized name, converted to A-labels the way its connection does
    /// (`CURLU_PUNYCODE`: libidn2's UTS #46 non-transitional mapping, transitional when that
    /// fails); `nil` when curl refuses the URL or cannot convert its host.
    static func connectedHost(_ url: String) -> String? {
        guard let parsed = CurlURL(url) else { return nil }
        var host: UnsafeMutablePointer<CChar>?
        // CURLU_PUNYCODE (a macro Swift does not import).
        guard curl_url_get(parsed.pointer, CURLUPART_HOST, &host, 1 << 12) == CURLUE_OK, let host else { return nil }
        defer { curl_free(host) }
        return String(cString: host)
    }
}

/// Owns one `CURLSH` sharing the DNS cache and TLS sessions among the easy handles of one
/// session (never connections: curl does not support sharing a connection pool between
/// threads, and each transfer thread has its own multi handle and pool). The lock callbacks
/// make it safe to use from every transfer thread of the session.
final class CurlShare: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    /// One mutex per `curl_lock_data` value; allocated once, never moved.
    private let locks: UnsafeMutablePointer<pthread_mutex_t>
    private static let lockCount = Int(CURL_LOCK_DATA_LAST.rawValue) + 1

    init(sharesTLSSessions: Bool, sharesCookies: Bool = false) throws(HTTPError) {
        _ = Curl.initialized
        guard let handle = curl_share_init() else { throw HTTPError.invalidRequest("curl_share_init failed") }
        self.handle = handle
        locks = .allocate(capacity: Self.lockCount)
        for index in 0..<Self.lockCount { pthread_mutex_init(locks + index, nil) }
        let lock: curl_lock_function = { _, data, _, userptr in
            guard let userptr else { return }
            pthread_mutex_lock(userptr.assumingMemoryBound(to: pthread_mutex_t.self) + Int(data.rawValue))
        }
        let unlock: curl_unlock_function = { _, data, userptr in
            guard let userptr else { return }
            pthread_mutex_unlock(userptr.assumingMemoryBound(to: pthread_mutex_t.self) + Int(data.rawValue))
        }
        _ = CServerTrustShims_curl_share_setopt_pointer(handle, CURLSHOPT_USERDATA, UnsafeMutableRawPointer(locks))
        _ = CServerTrustShims_curl_share_setopt_lockfunc(handle, lock)
        _ = CServerTrustShims_curl_share_setopt_unlockfunc(handle, unlock)
        _ = CServerTrustShims_curl_share_setopt_long(handle, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_DNS.rawValue))
        if sharesTLSSessions {
            _ = CServerTrustShims_curl_share_setopt_long(handle, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
        }
        if sharesCookies {
            // One cookie jar for every transfer thread of the session.
            _ = CServerTrustShims_curl_share_setopt_long(handle, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue))
        }
    }

    /// Runs after every easy handle using the share was cleaned up (the lanes hold the share
    /// and clean their handles first).
    deinit {
        curl_share_cleanup(handle)
        for index in 0..<Self.lockCount { pthread_mutex_destroy(locks + index) }
        locks.deallocate()
    }
}
