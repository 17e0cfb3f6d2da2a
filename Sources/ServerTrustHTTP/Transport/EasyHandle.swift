internal import CCurl
internal import CServerTrustShims
internal import Glibc
internal import ServerTrust
internal import Synchronization

/// Owns one `CURL*` easy handle and its error buffer. It belongs to one ``TransferLane`` and
/// is used only on that lane's thread; between transfers it waits in the lane's idle pool
/// (re-initialised with `curl_easy_reset`, which keeps nothing of the previous request but
/// the share). Every C callback gets this object through its userdata pointer
/// (`Unmanaged.passUnretained`); the lane keeps it alive until after `curl_multi_cleanup`,
/// so it outlives every transfer and every connection handshake that can call back into it.
/// Its mutable properties are lane-thread state without overlapping accesses, so they skip
/// the dynamic exclusivity check (see ``Transfer``).
final class EasyHandle {
    let handle: UnsafeMutableRawPointer
    unowned let lane: TransferLane
    let core: SessionCore
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The transfer being run, `nil` while idle.
    @exclusivity(unchecked) var transfer: Transfer?
    /// Whether a transfer with a caller's `Host` field has run on the handle (its pool:
    /// ``TransferLane``).
    @exclusivity(unchecked) var hasRunCustomHost = false
    /// The `CURLOPT_CURLU` URL set on the handle (curl reads it during transfers).
    @exclusivity(unchecked) private var parsedURL: CurlURL?
    /// The `CURLOPT_HTTPHEADER` list set on the handle (curl reads it during transfers).
    @exclusivity(unchecked) private var headerList: CurlSList?
    /// The `CURLOPT_PROXYHEADER` list set on the handle: the fields of a tunnel's `CONNECT`.
    @exclusivity(unchecked) private var proxyHeaderList: CurlSList?
    /// The field lines of the header block being received, as curl delivered them: a buffer
    /// owned (and freed) by this handle and reused for every transfer, so a header line
    /// costs a copy into it and nothing else; the block becomes an array once, at its end.
    @exclusivity(unchecked) private var headerBytes: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var headerCapacity = 1024
    @exclusivity(unchecked) private var headerCount = 0
    /// Whether a status line has opened a block that has not ended yet.
    @exclusivity(unchecked) private var blockOpen = false
    /// Whether the current response's header block is still open: no blank line has ended
    /// it yet. Read by the lane before ``collectInfo(into:)`` closes it.
    var isHeaderBlockOpen: Bool { blockOpen }
    /// What the connection being opened brings besides the certificates (staple, SCTs), and a
    /// decision waiting for the staple.
    let handshake = HandshakeCapture()
    /// The settings the handle is set to, when the next transfer may find them still right.
    @exclusivity(unchecked) private var configuredFor: TransferOptions.Settings?

    /// TLS handshakes begun on the connection being opened, reset by curl's socket-option
    /// callback for every new socket. Only counted behind an `https://` proxy.
    @exclusivity(unchecked) private var handshakesOnNewConnection = 0

    /// Whose certificate the TLS connection being set up will present. libcurl calls the
    /// `SSL_CTX` hook for every TLS connection of a transfer, the proxy's included, and says
    /// nothing about which one it is. Behind an `https://` proxy, a new connection always
    /// runs the proxy's handshake first (curl opens the socket, speaks TLS to the proxy,
    /// sends `CONNECT`, then starts the origin's TLS inside the tunnel), so the first
    /// handshake after a new socket is the proxy's. (Were curl ever to deviate from that
    /// order, a decider would be handed the other peer's chain checked against its own peer's
    /// host name, which host-name validation rejects unless proxy and origin share a name.)
    func handshakeRole() -> TLSHooks.Role {
        guard core.proxyTrust != nil else { return .origin }
        defer { handshakesOnNewConnection += 1 }
        return handshakesOnNewConnection == 0 ? .proxy : .origin
    }

    /// A new socket: the next TLS handshake is the first of its connection.
    func socketOpened() {
        handshakesOnNewConnection = 0
    }

    init?(lane: TransferLane, core: SessionCore) {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.lane = lane
        self.core = core
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        headerBytes = .allocate(byteCount: 1024, alignment: 1)
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
        headerBytes.deallocate()
    }

    /// Takes `transfer` (the lane calls this before configuring the handle for it).
    func begin(_ transfer: Transfer) {
        self.transfer = transfer
        headerCount = 0
        blockOpen = false
    }

    private var opaqueSelf: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// The text curl wrote for the last failure.
    var errorText: String { String(cString: errorBuffer) }

    // MARK: - Configuration

    /// Sets every option from `options` (``TransferOptions``: the transfer's only input here)
    /// and the session's configuration, unless the handle is still set to equal
    /// ``TransferOptions/reusableSettings``. Returns the streamed body's reader, opened now,
    /// if the request has one.
    func configure(_ options: TransferOptions) throws(HTTPError) -> StreamedBodyReader? {
        errorBuffer[0] = 0
        let settings = options.settings
        // A keep-alive loop of identical requests finds every option already right: no
        // curl_easy_reset and some forty curl_easy_setopt calls.
        let reusable = options.reusableSettings
        if let reusable, reusable == configuredFor { return nil }
        configuredFor = nil
        let configuration = core.configuration
        curl_easy_reset(handle)
        var failure: (CURLoption, CURLcode)?
        func check(_ option: CURLoption, _ code: CURLcode) {
            if code != CURLE_OK && failure == nil { failure = (option, code) }
        }
        func setLong(_ option: CURLoption, _ value: Int) { check(option, CServerTrustShims_curl_easy_setopt_long(handle, option, value)) }
        func setString(_ option: CURLoption, _ value: String?) {
            // curl copies string options (CURLOPT_POSTFIELDS excepted, which is not set here).
            if let value {
                check(option, CServerTrustShims_curl_easy_setopt_string(handle, option, value))
            } else {
                check(option, CServerTrustShims_curl_easy_setopt_string(handle, option, nil))
            }
        }
        func setPointer(_ option: CURLoption, _ value: UnsafeMutableRawPointer?) {
            check(option, CServerTrustShims_curl_easy_setopt_pointer(handle, option, value))
        }
        /// `lines` as the list option `option`; curl reads the list during transfers, so the
        /// caller keeps what this returns (`nil`, and no option set, for no lines).
        func setList(_ option: CURLoption, _ lines: [String]) throws(HTTPError) -> CurlSList? {
            guard !lines.isEmpty else { return nil }
            guard let list = CurlSList(lines) else { throw .invalidRequest("curl_slist_append failed") }
            check(option, CServerTrustShims_curl_easy_setopt_slist(handle, option, list.pointer))
            return list
        }

        // curl_easy_reset above dropped the previous CURLU, so it may go now.
        parsedURL = CurlURL(settings.target.url)
        if let parsedURL {
            setPointer(CURLOPT_CURLU, UnsafeMutableRawPointer(parsedURL.pointer))
        } else {
            setString(CURLOPT_URL, settings.target.url)
        }
        setLong(CURLOPT_NOSIGNAL, 1)
        setPointer(CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer))
        setPointer(CURLOPT_SHARE, core.share.handle)
        setString(CURLOPT_PROTOCOLS_STR, "http,https")
        setLong(CURLOPT_FOLLOWLOCATION, 0)  // redirects are ours: the decision runs for every host

        // Callbacks: all reach this object through their userdata.
        check(CURLOPT_WRITEFUNCTION, CServerTrustShims_curl_easy_setopt_write_function(handle, easyWriteCallback))
        setPointer(CURLOPT_WRITEDATA, opaqueSelf)
        check(CURLOPT_HEADERFUNCTION, CServerTrustShims_curl_easy_setopt_header_function(handle, easyHeaderCallback))
        setPointer(CURLOPT_HEADERDATA, opaqueSelf)
        // Every transfer passes here once its connection is up, before the request is sent:
        // where a resumed connection is decided (ConnectionTrust).
        check(CURLOPT_PREREQFUNCTION, CServerTrustShims_curl_easy_setopt_prereq_function(handle, easyPrerequestCallback))
        setPointer(CURLOPT_PREREQDATA, opaqueSelf)
        if options.reportsProgress {
            check(CURLOPT_XFERINFOFUNCTION, CServerTrustShims_curl_easy_setopt_xferinfo_function(handle, easyProgressCallback))
            setPointer(CURLOPT_XFERINFODATA, opaqueSelf)
            setLong(CURLOPT_NOPROGRESS, 0)
        }

        // TLS: our verify callback decides. VERIFYPEER must stay 1 (under SSL_VERIFY_NONE
        // OpenSSL ignores the callback's verdict); VERIFYHOST 0 (the host is the decider's
        // business); no CA file or directory, so curl parses no bundle per connection.
        setLong(CURLOPT_SSL_VERIFYPEER, 1)
        setLong(CURLOPT_SSL_VERIFYHOST, 0)
        setString(CURLOPT_CAINFO, nil)
        setString(CURLOPT_CAPATH, nil)
        check(CURLOPT_SSL_CTX_FUNCTION, CServerTrustShims_curl_easy_setopt_ssl_ctx_function(handle, easySSLContextCallback))
        setPointer(CURLOPT_SSL_CTX_DATA, opaqueSelf)
        setLong(CURLOPT_SSLVERSION, Self.curlVersion(configuration.minimumTLSVersion(for: settings.target.host)))
        setLong(CURLOPT_SSL_SESSIONID_CACHE, configuration.tlsSessionResumption && settings.scope.usesSessionCache ? 1 : 0)
        setLong(CURLOPT_HTTP_VERSION, core.usesHTTP2 ? Int(CURL_HTTP_VERSION_2TLS) : Int(CURL_HTTP_VERSION_1_1))
        if let age = configuration.maximumConnectionAge { setLong(CURLOPT_MAXLIFETIME_CONN, Self.curlDuration(age, unit: 1)) }

        if configuration.acceptsCompressedResponses { setString(CURLOPT_ACCEPT_ENCODING, "") }
        // An empty cookie file turns libcurl's cookie engine on without reading anything:
        // cookies live in the share's jar, matched by RFC 6265 domain and path rules and
        // libpsl's public-suffix check.
        if configuration.storesCookies { setString(CURLOPT_COOKIEFILE, "") }
        // RESOLVE entries become permanent entries of the session's shared DNS cache once a
        // transfer has loaded them; curl would otherwise parse the list again per transfer.
        if let list = core.resolveList, settings.loadsResolveList {
            check(CURLOPT_RESOLVE, CServerTrustShims_curl_easy_setopt_slist(handle, CURLOPT_RESOLVE, list.pointer))
        }
        // No exceptions to the proxy, or to having none: an empty NOPROXY overrides no_proxy /
        // NO_PROXY from the environment ("explicitly enables the proxy for all host names,
        // even if there is an environment variable set for it", CURLOPT_NOPROXY(3)), which
        // would otherwise send requests around a configured proxy.
        setString(CURLOPT_NOPROXY, "")
        if let proxy = configuration.proxy {
            setString(CURLOPT_PROXY, proxy.url)
            if let proxyHost = core.proxyTrust?.host {
                // An https:// proxy: its certificate is decided by our callback too (see
                // handshakeRole), against no CA file curl would parse per connection.
                setLong(CURLOPT_PROXY_SSL_VERIFYPEER, 1)
                setLong(CURLOPT_PROXY_SSL_VERIFYHOST, 0)
                setString(CURLOPT_PROXY_CAINFO, nil)
                setString(CURLOPT_PROXY_CAPATH, nil)
                // The proxy is a TLS server of its own: a per-host minimum that names it holds
                // for it as for any host (ATS's NSExceptionMinimumTLSVersion is per domain).
                setLong(CURLOPT_PROXY_SSLVERSION, Self.curlVersion(configuration.minimumTLSVersion(for: proxyHost)))
                check(CURLOPT_SOCKOPTFUNCTION, CServerTrustShims_curl_easy_setopt_sockopt_function(handle, easySocketOptionCallback))
                setPointer(CURLOPT_SOCKOPTDATA, opaqueSelf)
            }
            let credential: (user: String, password: String)?
            if let explicit = settings.proxyCredential {
                credential = (explicit.user, explicit.password)
            } else if case .password(let user, let password)? = proxy.credential?.kind {
                credential = (user, password)
            } else {
                credential = nil
            }
            if let credential {
                setString(CURLOPT_PROXYUSERNAME, credential.user)
                setString(CURLOPT_PROXYPASSWORD, credential.password)
                setLong(CURLOPT_PROXYAUTH, Curl.authBasic)
            }
        } else {
            setString(CURLOPT_PROXY, "")  // ignore http_proxy/https_proxy from the environment
        }
        setLong(CURLOPT_TIMEOUT_MS, Self.curlDuration(settings.timeout, unit: 1000))
        setLong(CURLOPT_CONNECTTIMEOUT_MS, Self.curlDuration(configuration.connectTimeout, unit: 1000))
        if settings.scope.opensOwnConnection {
            setLong(CURLOPT_FRESH_CONNECT, 1)
            setLong(CURLOPT_FORBID_REUSE, 1)
        }

        // Method and body.
        let method = settings.method
        var reader: StreamedBodyReader?
        var bodyLength: Int64 = 0
        if method == .head {
            setLong(CURLOPT_NOBODY, 1)
        } else if method == .get && !options.hasBody {
            setLong(CURLOPT_HTTPGET, 1)
        } else {
            switch options.body {
            case .streamed(let streamed):
                // Read as it is sent: curl asks for the bytes through the read callback, and
                // seeks back if it must send the body again within this hop (a reused
                // connection found dead after the request went out). Our own retries
                // (redirects, 401) are new hops and open the files again.
                let opened = try StreamedBodyReader(streamed)
                reader = opened
                bodyLength = opened.size
                setLong(CURLOPT_POST, 1)
                check(CURLOPT_POSTFIELDSIZE_LARGE, CServerTrustShims_curl_easy_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(opened.size)))
                check(CURLOPT_READFUNCTION, CServerTrustShims_curl_easy_setopt_read_function(handle, easyReadCallback))
                setPointer(CURLOPT_READDATA, opaqueSelf)
                check(CURLOPT_SEEKFUNCTION, CServerTrustShims_curl_easy_setopt_seek_function(handle, easySeekCallback))
                setPointer(CURLOPT_SEEKDATA, opaqueSelf)
            case .bytes(let bytes):
                bodyLength = Int64(bytes.buffer.count)
                check(CURLOPT_POSTFIELDSIZE_LARGE, CServerTrustShims_curl_easy_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bodyLength)))
                setPointer(CURLOPT_POSTFIELDS, bytes.buffer.baseAddress)
            case .empty:
                if method == .post || method == .put || method == .patch {
                    setLong(CURLOPT_POSTFIELDSIZE, 0)
                    setString(CURLOPT_COPYPOSTFIELDS, "")
                }
            }
            if method != .post { setString(CURLOPT_CUSTOMREQUEST, method.rawValue) }
        }

        let headers = HTTPHeaders(settings.headers.fields)
        if let refused = RequestValidation.checkFraming(headers, bodyLength: method == .head ? 0 : bodyLength) { throw refused }
        var lines: [String] = []
        var proxyLines: [String] = []
        // A caller's `Proxy-Authorization` is the proxy's credential (RFC 9110 §11.7.2). An
        // https:// request through a proxy sends its fields inside the CONNECT tunnel, to the
        // origin (CURLOPT_HEADEROPT's default, CURLHEADER_SEPARATE): there the field goes to
        // the CONNECT request instead (CURLOPT_PROXYHEADER), never to the origin.
        let tunnels = configuration.proxy != nil && settings.target.isHTTPS
        for field in settings.headers.fields {
            let line = "\(field.name): \(field.value)"
            if tunnels && field.name.lowercased() == "proxy-authorization" {
                proxyLines.append(line)
            } else {
                lines.append(line)
            }
        }
        if options.hasBody {
            // No `Expect: 100-continue` round trip; curl would otherwise add it for large
            // bodies (never without one, so a bodiless request needs no entry, and with no
            // list at all curl skips its per-transfer scans of it).
            if headers["Expect"] == nil { lines.append("Expect:") }
            // Without a Content-Type curl would label every body as a form.
            if headers["Content-Type"] == nil { lines.append("Content-Type:") }
        }
        headerList = try setList(CURLOPT_HTTPHEADER, lines)
        proxyHeaderList = try setList(CURLOPT_PROXYHEADER, proxyLines)

        if let credential = settings.credential {
            setString(CURLOPT_USERNAME, credential.user)
            setString(CURLOPT_PASSWORD, credential.password)
            setLong(CURLOPT_HTTPAUTH, credential.schemes)
        }

        if let (option, code) = failure {
            throw .invalidRequest("curl_easy_setopt(\(option.rawValue)) failed: \(Curl.describe(code))")
        }
        configuredFor = reusable
        return reader
    }

    /// `seconds` as a whole count of `unit`ths of a second for a libcurl `long` option: at least 1
    /// (zero and below, and NaN, are the shortest limit, never "none"), and at most `Int32.max`
    /// (about 24.8 days in milliseconds), which also stands for `.infinity`: `Int(_:)` traps on a
    /// value it cannot hold, and a caller's "no limit" must not crash the process.
    static func curlDuration(_ seconds: Double, unit: Double) -> Int {
        let value = (seconds * unit).rounded(.up)
        guard value >= 1 else { return 1 }
        return value < Double(Int32.max) ? Int(value) : Int(Int32.max)
    }

    static func curlVersion(_ version: TLSVersion) -> Int {
        switch version {
        case .tls1_0: return Int(CURL_SSLVERSION_TLSv1_0)
        case .tls1_1: return Int(CURL_SSLVERSION_TLSv1_1)
        case .tls1_2: return Int(CURL_SSLVERSION_TLSv1_2)
        case .tls1_3: return Int(CURL_SSLVERSION_TLSv1_3)
        }
    }

    // MARK: - Data callbacks

    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let transfer else { return 0 }
        switch transfer.spec.sink {
        case .memory(let limit):
            // Counted once decoded, so a small compressed body cannot inflate past the limit.
            guard transfer.response.body.count + bytes.count <= limit else {
                transfer.callbackFailure = .responseBodyTooLarge(limit: limit)
                return 0
            }
            transfer.response.body.append(contentsOf: bytes)
        case .file(let download):
            guard admitDecoded(bytes.count, download.decodedBudget, transfer) else { return 0 }
            do {
                try download.write(bytes)
            } catch {
                transfer.callbackFailure = error
                return 0
            }
        case .stream(let channel):
            // The body begins: the head is final (no header block follows the body but
            // trailers), and the waiting task gets it now.
            if transfer.streamHead == nil {
                captureHead(into: transfer)
                transfer.deliverHead(transfer.response)
            }
            // Checked before the offer and counted after it: a paused chunk is offered again.
            guard admitDecoded(bytes.count, channel.decodedBudget, transfer, commit: false) else { return 0 }
            guard channel.offer(bytes) else { return Curl.writePause }
            channel.decodedBudget?.add(bytes.count)
        }
        return bytes.count
    }

    /// Whether `count` more decoded bytes fit the sink's ``DecodedBodyBudget`` (a failure
    /// stops the transfer with ``HTTPError/responseBodyTooLarge(limit:)``).
    private func admitDecoded(_ count: Int, _ budget: DecodedBodyBudget?, _ transfer: Transfer, commit: Bool = true) -> Bool {
        guard let budget else { return true }
        let accepting = core.configuration.acceptsCompressedResponses
        guard budget.admit(count, commit: commit, decoding: { DecodedBodyBudget.isDecoded(transfer.response.finalHeaders, accepting: accepting) }) else {
            transfer.callbackFailure = .responseBodyTooLarge(limit: budget.limit)
            return false
        }
        return true
    }

    /// The next bytes of a streamed body (``TransferSpec/streamedBody``).
    func readBody(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        guard let transfer, let reader = transfer.bodyReader else { return Curl.readAbort }
        do {
            return try reader.read(into: buffer, capacity: capacity)
        } catch {
            transfer.callbackFailure = error
            return Curl.readAbort
        }
    }

    /// Moves the streamed body's position (curl rewinds it to resend the body, always with
    /// `SEEK_SET`; any other origin is answered "cannot seek", which makes curl fail the hop).
    func seekBody(to offset: Int64, whence: Int32) -> Int32 {
        guard whence == SEEK_SET else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        guard let reader = transfer?.bodyReader, reader.seek(to: offset) else { return Int32(CURL_SEEKFUNC_FAIL) }
        return Int32(CURL_SEEKFUNC_OK)
    }

    /// One header line as curl delivers it (status line, field, or the blank line ending a
    /// block). Field lines are kept as bytes: ``HTTPHeaders`` decodes them when read.
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard transfer != nil, let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        let line = base.assumingMemoryBound(to: UInt8.self)
        var end = bytes.count
        while end > 0 && (line[end - 1] == 10 || line[end - 1] == 13) { end -= 1 }
        if end == 0 {
            // End of a header block.
            if blockOpen, let transfer { closeHeaderBlock(of: transfer) }
        } else if end >= 5 && line[0] == UInt8(ascii: "H") && line[1] == UInt8(ascii: "T") && line[2] == UInt8(ascii: "T")
            && line[3] == UInt8(ascii: "P") && line[4] == UInt8(ascii: "/")
        {
            blockOpen = true
            headerCount = 0
        } else {
            // curl hands over lines ending in CRLF; a last line without one must not run into
            // the next when parsed, so one byte more is reserved for a LF.
            let needed = headerCount + bytes.count + 1
            if needed > headerCapacity {
                let capacity = max(needed, headerCapacity * 2)
                let grown = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
                grown.copyMemory(from: headerBytes, byteCount: headerCount)
                headerBytes.deallocate()
                headerBytes = grown
                headerCapacity = capacity
            }
            (headerBytes + headerCount).copyMemory(from: base, byteCount: bytes.count)
            headerCount += bytes.count
            if line[bytes.count - 1] != 10 {
                headerBytes.storeBytes(of: 10, toByteOffset: headerCount, as: UInt8.self)
                headerCount += 1
            }
        }
        return bytes.count
    }

    /// The block received so far becomes the response's headers.
    private func closeHeaderBlock(of transfer: Transfer) {
        transfer.response.finalHeaders = HTTPHeaders(receivedLines: Array(UnsafeRawBufferPointer(start: headerBytes, count: headerCount)))
        headerCount = 0
        blockOpen = false
    }

    func reportProgress(downloadTotal: Int64, downloaded: Int64, uploadTotal: Int64, uploaded: Int64) -> Int32 {
        guard let transfer else { return 0 }
        if let handler = transfer.spec.uploadProgress, uploaded != transfer.lastUpload {
            transfer.lastUpload = uploaded
            handler(TransferProgress(completed: uploaded, total: uploadTotal > 0 ? uploadTotal : nil))
        }
        if let handler = transfer.spec.downloadProgress, downloaded != transfer.lastDownload {
            transfer.lastDownload = downloaded
            handler(TransferProgress(completed: downloaded, total: downloadTotal > 0 ? downloadTotal : nil))
        }
        return 0
    }

    // MARK: - Completion

    /// Reads curl's counters into the transfer's response.
    func collectInfo(into transfer: Transfer) {
        captureHead(into: transfer)
        func seconds(_ info: CURLINFO) -> Double {
            var micros: curl_off_t = 0
            _ = CServerTrustShims_curl_easy_getinfo_off_t(handle, info, &micros)
            return Double(micros) / 1e6
        }
        transfer.response.timing = HTTPTiming(
            nameLookup: seconds(CURLINFO_NAMELOOKUP_TIME_T), connect: seconds(CURLINFO_CONNECT_TIME_T),
            tlsHandshake: seconds(CURLINFO_APPCONNECT_TIME_T), firstByte: seconds(CURLINFO_STARTTRANSFER_TIME_T),
            total: seconds(CURLINFO_TOTAL_TIME_T))
    }

    /// The response's status, version, connection facts and decisions, as far as they are
    /// known (at the end of the transfer, or when a streamed body begins).
    private func captureHead(into transfer: Transfer) {
        var value = 0
        if CServerTrustShims_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &value) == CURLE_OK {
            transfer.response.statusCode = value
        }
        value = 0
        // Only a proxy's CONNECT answers (curl reports 0 without one).
        if core.configuration.proxy != nil, CServerTrustShims_curl_easy_getinfo_long(handle, CURLINFO_HTTP_CONNECTCODE, &value) == CURLE_OK {
            transfer.response.connectCode = value
        }
        value = 0
        if CServerTrustShims_curl_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &value) == CURLE_OK {
            switch value {
            case Int(CURL_HTTP_VERSION_2_0): transfer.response.httpVersion = "HTTP/2"
            case Int(CURL_HTTP_VERSION_1_0): transfer.response.httpVersion = "HTTP/1.0"
            case Int(CURL_HTTP_VERSION_3): transfer.response.httpVersion = "HTTP/3"
            default: transfer.response.httpVersion = "HTTP/1.1"
            }
        }
        value = 0
        if CServerTrustShims_curl_easy_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &value) == CURLE_OK {
            transfer.response.usedNewConnection = value > 0
        }
        if blockOpen { closeHeaderBlock(of: transfer) }
        let target = transfer.spec.target
        if target.isHTTPS {
            // This transfer's own decision (its handshake, or its resumed connection's), or
            // the decision its reused connection was accepted with.
            if let decision = transfer.trustDecision {
                transfer.response.trustDecisionBox = transfer.connectionRecord.map(\.decided) ?? DecisionBox(decision)
            } else {
                transfer.response.trustDecisionBox = transfer.connectionRecord?.reused
            }
        }
        if core.hasHTTPSProxy {
            // A full proxy handshake on this transfer's connection decided it (proxy TLS
            // sessions are never resumed, TLSHooks); a reused connection reports the
            // session's last accepted proxy decision, as for origins.
            transfer.response.proxyTrustDecisionBox = (transfer.proxyTrustDecision ?? core.lastProxyDecision()?.reused).map(DecisionBox.init)
        }
    }
}

// MARK: - C entry points (capture-free closures; context comes from the userdata pointer)

let easyWriteCallback: curl_write_callback = { data, size, count, userdata in
    guard let userdata else { return 0 }
    return Unmanaged<EasyHandle>.fromOpaque(userdata)._withUnsafeGuaranteedRef { easy in
        guard let data else { return easy.receiveBody(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return easy.receiveBody(UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: size * count))
    }
}

let easyHeaderCallback: curl_write_callback = { data, size, count, userdata in
    guard let userdata, let data else { return 0 }
    // Called once per header line: borrow the handle (the lane keeps it alive) rather than
    // retain and release it each time.
    return Unmanaged<EasyHandle>.fromOpaque(userdata)._withUnsafeGuaranteedRef { easy in
        easy.receiveHeaderLine(UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: size * count))
    }
}

let easyReadCallback: curl_read_callback = { buffer, size, count, userdata in
    guard let buffer, let userdata else { return Curl.readAbort }
    return Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue().readBody(into: buffer, capacity: size * count)
}

let easySeekCallback: curl_seek_callback = { userdata, offset, whence in
    guard let userdata else { return Int32(CURL_SEEKFUNC_FAIL) }
    return Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue().seekBody(to: Int64(offset), whence: whence)
}

let easyProgressCallback: curl_xferinfo_callback = { userdata, downloadTotal, downloaded, uploadTotal, uploaded in
    guard let userdata else { return 0 }
    let easy = Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue()
    return easy.reportProgress(
        downloadTotal: Int64(downloadTotal), downloaded: Int64(downloaded),
        uploadTotal: Int64(uploadTotal), uploaded: Int64(uploaded))
}

let easySSLContextCallback: curl_ssl_ctx_callback = { _, sslContext, userdata in
    guard let sslContext, let userdata else { return CURLE_SSL_CERTPROBLEM }
    let role = Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue().handshakeRole()
    TLSHooks.install(on: OpaquePointer(sslContext), context: userdata, role: role)
    return CURLE_OK
}

let easySocketOptionCallback: curl_sockopt_callback = { userdata, _, _ in
    if let userdata { Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue().socketOpened() }
    return Int32(CURL_SOCKOPT_OK)
}
