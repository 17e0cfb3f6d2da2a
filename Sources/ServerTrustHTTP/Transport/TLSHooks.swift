internal import COpenSSL
internal import CServerTrustShims
internal import CertificateParsing
internal import ServerTrust
internal import TrustEvaluation

/// The OpenSSL side of the transport: what the `CURLOPT_SSL_CTX_FUNCTION` callback installs
/// on each new connection's `SSL_CTX` (curl makes one per connection, just before the
/// handshake; nothing here touches the context afterwards).
enum TLSHooks {
    /// Whose certificate a TLS connection presents.
    enum Role {
        /// The origin server: the session's decider and challenge handlers decide.
        case origin
        /// An `https://` proxy: ``ProxyConfiguration/serverTrust`` decides.
        case proxy
    }

    /// Installs the certificate-verify callback (our decision replaces OpenSSL's chain
    /// verification) and, for origin servers, the client-certificate callback (called only
    /// when the server sends a CertificateRequest; a proxy that asks gets no certificate).
    /// `context` is the ``EasyHandle`` that opens the connection.
    static func install(on context: OpaquePointer, context easy: UnsafeMutableRawPointer, role: Role) {
        if role == .proxy {
            // No TLS session of the proxy's is kept, so none is resumed: a resumed handshake
            // brings no certificate, and the verify callback, the proxy's only decision, would
            // not run (an origin's resumed connection is decided at the pre-request callback
            // instead, ConnectionTrust). libcurl enables the client cache before it calls us
            // and stores sessions only from OpenSSL's new-session callback, which a context
            // with caching off never calls (SSL_CTX_set_session_cache_mode(3)).
            _ = CServerTrustShims_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_OFF))
            SSL_CTX_set_cert_verify_callback(
                context,
                { storeContext, arg in
                    guard let storeContext, let arg else { return 0 }
                    return TLSHooks.verdict(Unmanaged<EasyHandle>.fromOpaque(arg).takeUnretainedValue().verifyProxy(storeContext), storeContext)
                }, easy)
            return
        }
        SSL_CTX_set_cert_verify_callback(
            context,
            { storeContext, arg in
                guard let storeContext, let arg else { return 0 }
                return TLSHooks.verdict(Unmanaged<EasyHandle>.fromOpaque(arg).takeUnretainedValue().verifyServer(storeContext), storeContext)
            }, easy)
        Unmanaged<EasyHandle>.fromOpaque(easy).takeUnretainedValue().requestEvidence(on: context)
        SSL_CTX_set_cert_cb(
            context,
            { ssl, arg in
                guard let ssl, let arg else { return 0 }
                let easy = Unmanaged<EasyHandle>.fromOpaque(arg).takeUnretainedValue()
                return easy.answerCertificateRequest(ssl) ? 1 : 0
            }, easy)
    }

    /// The certificate-verify callback's return value; a rejection is recorded as an
    /// application verification failure (curl then reports 60).
    private static func verdict(_ accepted: Bool, _ storeContext: OpaquePointer) -> Int32 {
        if accepted { return 1 }
        X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
        return 0
    }

    /// Version, resumption and ALPN of a live connection.
    static func describe(ssl: OpaquePointer, into response: inout RawResponse) {
        response.tlsVersion = versionName(ssl)
        response.tlsSessionResumed = SSL_session_reused(ssl) == 1
    }

    /// `SSL_get_version`'s text; the usual versions as literals (this runs per response, and
    /// decoding the C string each time showed in profiles).
    static func versionName(_ ssl: OpaquePointer) -> String? {
        switch SSL_version(ssl) {
        case 0x0304: return "TLSv1.3"
        case 0x0303: return "TLSv1.2"
        case 0x0302: return "TLSv1.1"
        case 0x0301: return "TLSv1"
        default: return SSL_get_version(ssl).map { String(cString: $0) }
        }
    }

    /// The DER of every certificate in a borrowed `STACK_OF(X509)`.
    static func derChain(_ stack: OpaquePointer?) -> [[UInt8]] {
        guard let stack else { return [] }
        var chain: [[UInt8]] = []
        let count = CServerTrustShims_sk_X509_num(stack)
        guard count > 0 else { return [] }
        for index in 0..<count {
            guard let x509 = CServerTrustShims_sk_X509_value(stack, index), let der = derBytes(x509) else { continue }
            chain.append(der)
        }
        return chain
    }

    static func derBytes(_ x509: OpaquePointer) -> [UInt8]? {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        return written == length ? bytes : nil
    }

    /// RFC 4514 strings of the CA names a server sent with its CertificateRequest.
    static func acceptableCANames(_ ssl: OpaquePointer) -> [String] {
        guard let names = SSL_get_client_CA_list(ssl) else { return [] }
        let count = OPENSSL_sk_num(names)
        guard count > 0 else { return [] }
        var result: [String] = []
        for index in 0..<count {
            guard let name = OPENSSL_sk_value(names, index) else { continue }
            let x509Name = OpaquePointer(name)
            let length = i2d_X509_NAME(x509Name, nil)
            guard length > 0 else { continue }
            var bytes = [UInt8](repeating: 0, count: Int(length))
            _ = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
                var cursor = buffer.baseAddress
                return i2d_X509_NAME(x509Name, &cursor)
            }
            if let parsed = try? DistinguishedName(derEncoded: bytes) { result.append(parsed.rfc4514) }
        }
        return result
    }
}

extension EasyHandle {
    /// The certificate-verify callback's work: read the served chain, decide (running the
    /// challenge handlers if any), record the decision on the transfer. Runs on the lane
    /// thread inside `SSL_connect`.
    func verifyServer(_ storeContext: OpaquePointer) -> Bool {
        guard let transfer else { return false }
        let target = transfer.spec.target
        let (der, ssl) = Self.presented(storeContext)
        let served: ServedChain
        switch Self.servedChain(der, ssl: ssl, host: target.host, port: target.port, signedCertificateTimestamps: handshake.signedCertificateTimestamps) {
        case .success(let chain): served = chain
        case .failure(let rejection):
            transfer.trustDecision = rejection.decision
            return false
        }
        // A decision that needs the stapled OCSP response is made where it has arrived, in
        // the status callback (HandshakeCapture).
        if let ssl, handshake.waitsForStaple(served, on: ssl) { return true }
        return decide(served, ssl: ssl, for: transfer)
    }

    /// Decides `served` for `transfer` (running the challenge handlers if any), records the
    /// decision on the transfer and, accepted, on the connection.
    func decide(_ served: ServedChain, ssl: OpaquePointer?, for transfer: Transfer) -> Bool {
        let (decider, generation) = core.trust
        let decision = decideServerTrust(served, for: transfer, by: decider)
        transfer.trustDecision = decision
        if !handshake.requested.isEmpty { core.handshakeEvidenceMemory.record(decision) }
        // The decision belongs to this connection from now on, and says who made it
        // (ConnectionTrust).
        if decision.isTrusted, let ssl {
            ConnectionTrust.attach(ConnectionTrust.Record(decision, by: transfer.scope.decider(generation: generation)), to: ssl)
        }
        return decision.isTrusted
    }

    /// The connection is up and nothing has been sent for this transfer (libcurl's
    /// pre-request callback): reads the TLS facts, and makes sure the origin connection was
    /// accepted by the decision this transfer would get now
    /// (``ConnectionTrust/admission(of:for:generation:)``). A connection decided in its
    /// handshake (now, or for an earlier request it served) carries its decision and who made
    /// it. One that carries none resumed a TLS session, so no handshake decided it; one decided
    /// under a decider since replaced (``HTTPSession/replaceServerTrust(_:)``) no longer holds
    /// its decision. Either is decided now, on the chain its TLS session keeps, at the current
    /// time, and refused (the request is never sent) unless that decision accepts it. One
    /// accepted by another party (a request's own handler, for a request under the session's
    /// decider, or anyone but itself, for a request with its own handler) is refused outright.
    func connectionReady() -> Bool {
        guard let transfer else { return false }
        let target = transfer.spec.target
        guard target.isHTTPS else { return true }
        guard let ssl = ConnectionTrust.originSSL(of: handle) else {
            transfer.trustDecision = .rejected(
                ServedChain(certificates: [], host: target.host, port: target.port), by: "transport", .emptyChain,
                "no TLS connection to decide for an https URL")
            return false
        }
        TLSHooks.describe(ssl: ssl, into: &transfer.response)
        let record = ConnectionTrust.record(of: ssl)
        switch ConnectionTrust.admission(of: record, for: transfer.scope, generation: core.trustGeneration.load(ordering: .acquiring)) {
        case .admit:
            transfer.connectionRecord = record
            return true
        case .refuse(let reason):
            let served = record?.decided.decision.served ?? ServedChain(certificates: [], host: target.host, port: target.port)
            transfer.trustDecision = .rejected(
                served, by: "transport", .customEvaluationFailed, "\(reason): refused before the request was sent on it")
            return false
        case .decideAgain:
            break
        }
        var served: ServedChain
        switch Self.servedChain(TLSHooks.derChain(SSL_get_peer_cert_chain(ssl)), ssl: ssl, host: target.host, port: target.port) {
        case .success(let chain) where !chain.certificates.isEmpty: served = chain
        case .success(let chain):
            transfer.trustDecision = .rejected(chain, by: "transport", .emptyChain, "the TLS session kept no certificate chain to decide")
            return false
        case .failure(let rejection):
            transfer.trustDecision = rejection.decision
            return false
        }
        // No handshake brought a staple or SCTs now: what the last accepted handshake brought
        // for this leaf, of the kinds the host's policy reads (HandshakeEvidenceMemory).
        let wanted = core.handshakeEvidence(forHost: target.host)
        if !wanted.isEmpty { served = core.handshakeEvidenceMemory.adding(to: served, wanted) }
        let (decider, generation) = core.trust
        let decision = decideServerTrust(served, for: transfer, by: decider)
        transfer.trustDecision = decision
        guard decision.isTrusted else { return false }
        let decided = ConnectionTrust.Record(decision, by: transfer.scope.decider(generation: generation))
        ConnectionTrust.attach(decided, to: ssl)
        transfer.connectionRecord = decided
        return true
    }

    /// The same for an `https://` proxy's own chain: ``ProxyConfiguration/serverTrust``
    /// decides it against the proxy's host name. The session's decider, its pins and its
    /// challenge handlers are for origin servers and never see it.
    func verifyProxy(_ storeContext: OpaquePointer) -> Bool {
        guard let transfer, let proxy = core.proxyTrust else { return false }
        let decision: TrustDecision
        let (der, ssl) = Self.presented(storeContext)
        switch Self.servedChain(der, ssl: ssl, host: proxy.host, port: proxy.port) {
        case .success(let served): decision = proxy.decider.decide(served)
        case .failure(let rejection): decision = rejection.decision
        }
        transfer.proxyTrustDecision = decision
        if decision.isTrusted { core.rememberProxy(decision) }
        return decision.isTrusted
    }

    /// A chain that cannot be read, as the decision that rejects it.
    struct UnreadableChain: Error {
        var decision: TrustDecision
    }

    /// What the verify callback was handed: the served certificates (leaf first) and the
    /// connection's `SSL`.
    private static func presented(_ storeContext: OpaquePointer) -> (der: [[UInt8]], ssl: OpaquePointer?) {
        let ssl = X509_STORE_CTX_get_ex_data(storeContext, SSL_get_ex_data_X509_STORE_CTX_idx()).map(OpaquePointer.init)
        var der = TLSHooks.derChain(X509_STORE_CTX_get0_untrusted(storeContext))
        if der.isEmpty, let leaf = X509_STORE_CTX_get0_cert(storeContext), let bytes = TLSHooks.derBytes(leaf) {
            der = [bytes]
        }
        return (der, ssl)
    }

    /// The chain the peer served (`der`, leaf first), with what the handshake has settled so
    /// far (version, suite, ALPN). A certificate we cannot parse rejects the chain: it is never
    /// trusted.
    private static func servedChain(_ der: [[UInt8]], ssl: OpaquePointer?, host: String, port: Int, signedCertificateTimestamps: [UInt8]? = nil)
        -> Result<ServedChain, UnreadableChain>
    {
        var version: String?
        var cipher: String?
        var alpn: String?
        if let ssl {
            if let text = SSL_get_version(ssl) { version = String(cString: text) }
            // The certificate arrives after ServerHello (and, in TLS 1.3, EncryptedExtensions),
            // so the suite and the ALPN choice are settled; the suite is still "pending" here.
            if let suite = SSL_get_current_cipher(ssl) ?? SSL_get_pending_cipher(ssl), let name = SSL_CIPHER_get_name(suite) {
                cipher = String(cString: name)
            }
            var selected: UnsafePointer<UInt8>?
            var length: UInt32 = 0
            SSL_get0_alpn_selected(ssl, &selected, &length)
            if let selected, length > 0 {
                alpn = String(decoding: UnsafeBufferPointer(start: selected, count: Int(length)), as: UTF8.self)
            }
        }
        var certificates: [Certificate] = []
        certificates.reserveCapacity(der.count)
        for (index, bytes) in der.enumerated() {
            do {
                certificates.append(try ParsedCertificateCache.shared.certificate(bytes))
            } catch {
                let served = ServedChain(certificates: certificates, host: host, port: port, tlsVersion: version, cipher: cipher, alpn: alpn)
                return .failure(
                    UnreadableChain(decision: .rejected(served, by: "parser", .malformedCertificate, "certificate \(index) is malformed: \(error)")))
            }
        }
        return .success(
            ServedChain(
                certificates: certificates, host: host, port: port, tlsVersion: version, cipher: cipher, alpn: alpn,
                signedCertificateTimestamps: signedCertificateTimestamps))
    }

    /// Server trust with the challenge flow: the session-level handler if set, else the
    /// task-level handler, else the session's decider.
    private func decideServerTrust(_ served: ServedChain, for transfer: Transfer, by decider: ServerTrustDecider) -> TrustDecision {
        let configuration = core.configuration
        let space = ProtectionSpace(host: transfer.spec.target.host, port: served.port, protocol: "https", authenticationMethod: .serverTrust)
        let challenge = AuthenticationChallenge(
            protectionSpace: space, previousFailureCount: 0, proposedCredential: nil,
            servedChain: served, failureResponse: nil, defaultDecider: decider)
        let disposition: ChallengeDisposition
        if let handler = configuration.sessionChallengeHandler {
            disposition = lane.runningHandler { handler(challenge) }
        } else if let handler = transfer.spec.requestChallengeHandler ?? configuration.taskChallengeHandler {
            switch lane.runningHandler({ runTaskHandler(handler, challenge, for: transfer) }) {
            case .success(let answer):
                disposition = answer
            case .failure(let error):
                transfer.challengeFailure = error
                return .rejected(served, by: "challenge handler", .customEvaluationFailed, "\(error)")
            }
        } else {
            return decider.decide(served)
        }
        switch disposition {
        case .useCredential(let credential?):
            if case .serverTrust = credential.kind {
                return .accepted(served, by: "challenge handler", "the handler trusted the served chain")
            }
            return decider.decide(served)
        case .useCredential(nil), .performDefaultHandling, .rejectProtectionSpace:
            return decider.decide(served)
        case .cancelAuthenticationChallenge:
            transfer.challengeFailure = .challengeCancelled(space)
            return .rejected(served, by: "challenge handler", .customEvaluationFailed, "the handler cancelled the server-trust challenge")
        }
    }

    /// A task-level handler's four outcomes, waiting (on this thread) for a later answer;
    /// the request's task cancellation ends the wait at once.
    private func runTaskHandler(
        _ handler: TaskChallengeHandler, _ challenge: AuthenticationChallenge,
        for transfer: Transfer
    ) -> Result<ChallengeDisposition, HTTPError> {
        let reply = ChallengeReply()
        switch handler(challenge, ChallengeCompletion(reply: reply)) {
        case .disposition(let disposition): return .success(disposition)
        case .credential(let credential): return .success(.useCredential(credential))
        case .error(let error): return .failure(.challengeFailed(challenge.protectionSpace, error))
        case .later:
            guard let answer = transfer.waitBlocking(for: reply, timeout: core.configuration.challengeTimeout) else {
                if transfer.cancelRequested.load(ordering: .sequentiallyConsistent) { return .failure(.cancelled) }
                return .failure(.challengeCancelled(challenge.protectionSpace))
            }
            return .success(answer)
        }
    }

    /// The client-certificate callback's work: present a preset or remembered identity, or
    /// ask the handlers. Returning `true` without installing anything sends no certificate.
    ///
    /// Only the session's own answers are remembered for the session (and so presented
    /// without asking to its later connections): a preset identity, or a session-level
    /// handler's credential with a persistence. A request's own handler answers for that
    /// request's connection alone (``ConnectionScope/isolated(request:)``); its identity is
    /// never remembered, whatever its persistence, so it never becomes another request's
    /// client certificate.
    func answerCertificateRequest(_ ssl: OpaquePointer) -> Bool {
        guard let transfer else { return false }
        let target = transfer.spec.target
        // A client certificate is chosen only for a server this connection's decision accepted.
        // OpenSSL asks for it while it reads the server's flight (after CertificateRequest in
        // TLS 1.2, after CertificateVerify in TLS 1.3), before the status callback; the staple
        // has arrived by then in both versions, so a decision waiting for it is made here
        // (HandshakeCapture), and a refusal ends the handshake before any certificate is chosen.
        if handshake.hasPending(for: ssl), !decidePending(ssl) { return false }
        guard ConnectionTrust.record(of: ssl) != nil else {
            transfer.trustDecision =
                transfer.trustDecision
                ?? .rejected(
                    ServedChain(certificates: [], host: target.host, port: target.port), by: "transport", .customEvaluationFailed,
                    "the server asked for a client certificate before it was accepted")
            return false
        }
        if let identity = core.presetIdentity(host: target.host, port: target.port) {
            return Self.use(identity, on: ssl)
        }
        let configuration = core.configuration
        let space = ProtectionSpace(
            host: target.host, port: target.port, protocol: "https", authenticationMethod: .clientCertificate,
            distinguishedNames: TLSHooks.acceptableCANames(ssl))
        let challenge = AuthenticationChallenge(
            protectionSpace: space, previousFailureCount: 0, proposedCredential: nil,
            servedChain: nil, failureResponse: nil, defaultDecider: nil)
        let disposition: ChallengeDisposition
        var answeredForSession = true
        if let handler = configuration.sessionChallengeHandler {
            disposition = lane.runningHandler { handler(challenge) }
        } else if let handler = transfer.spec.requestChallengeHandler ?? configuration.taskChallengeHandler {
            answeredForSession = transfer.spec.requestChallengeHandler == nil
            switch lane.runningHandler({ runTaskHandler(handler, challenge, for: transfer) }) {
            case .success(let answer): disposition = answer
            case .failure(let error):
                transfer.challengeFailure = error
                return false
            }
        } else {
            return true
        }
        switch disposition {
        case .useCredential(let credential?):
            guard case .identity(let identity) = credential.kind else { return true }
            if answeredForSession && credential.persistence != .none { try? core.credentials.set(credential, for: space) }
            return Self.use(identity, on: ssl)
        case .useCredential(nil), .performDefaultHandling, .rejectProtectionSpace:
            return true
        case .cancelAuthenticationChallenge:
            transfer.challengeFailure = .challengeCancelled(space)
            return false
        }
    }

    /// Puts an identity's certificate, chain and key on one connection's `SSL`.
    private static func use(_ identity: Identity, on ssl: OpaquePointer) -> Bool {
        func x509(_ certificate: Certificate) -> OpaquePointer? {
            certificate.derBytes.withUnsafeBufferPointer { buffer in
                var cursor = buffer.baseAddress
                return d2i_X509(nil, &cursor, buffer.count)
            }
        }
        guard let leaf = x509(identity.certificate) else { return false }
        defer { X509_free(leaf) }  // SSL_use_certificate takes its own reference
        guard SSL_use_certificate(ssl, leaf) == 1 else { return false }
        let keyInstalled = identity.privateKey.withUnsafeEVPPKEY { key in SSL_use_PrivateKey(ssl, key) == 1 }
        guard keyInstalled else { return false }
        for certificate in identity.chain {
            guard let extra = x509(certificate) else { return false }
            defer { X509_free(extra) }  // add1 takes its own reference
            guard CServerTrustShims_SSL_add1_chain_cert(ssl, extra) == 1 else { return false }
        }
        return true
    }
}
