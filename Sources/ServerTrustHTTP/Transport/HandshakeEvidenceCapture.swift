internal import COpenSSL
internal import CServerTrustShims
internal import ServerTrust
internal import Synchronization

/// What an origin connection's handshake brings besides the certificates, and the decision
/// waiting for it: lane-thread state of one ``EasyHandle``, reset for every new connection
/// (curl makes one `SSL_CTX` per connection, and the handle opens one at a time).
///
/// **Where the decision is made.** When the host's policy needs nothing beyond the
/// certificates (revocation off: ``/ServerTrust/HostTrustPolicy/handshakeEvidence`` is empty),
/// nothing is asked of the server and the certificate-verify callback decides, as it always
/// did. When it needs the stapled OCSP response, the decision moves to where the staple has
/// certainly arrived, the status callback (``OCSPStapling``): in TLS 1.2 the CertificateStatus
/// message follows the Certificate message, so the verify callback cannot see it. The verify
/// callback then only reads the chain into ``pending`` and lets the handshake go on; the
/// status callback decides on the chain with its staple and aborts the handshake on a refusal
/// (returning 0 sends `bad_certificate_status_response`), so the request is never sent and the
/// transfer reports ``HTTPError/serverTrustRejected(_:)`` with the decision.
///
/// In OpenSSL 3.0's client state machine (`ssl/statem/statem_clnt.c`) the status callback
/// runs in `tls_process_initial_server_flight`, at the end of the server's first flight
/// (ServerHelloDone in TLS 1.2; the server's Finished, in `tls_process_finished`, in TLS 1.3),
/// before the client writes anything of its own: its Certificate message and every byte of
/// application data come after. One thing runs earlier: the certificate callback that picks a
/// client certificate (`tls_prepare_client_certificate`) is called while the flight is read,
/// right after CertificateRequest in TLS 1.2 and after CertificateVerify in TLS 1.3. By then
/// the staple has arrived in both versions (TLS 1.2's CertificateStatus precedes
/// CertificateRequest; TLS 1.3's rides in the Certificate message), so a decision still
/// waiting is made there, first (``EasyHandle/answerCertificateRequest(_:)``): a refused server
/// is never offered a certificate, and no handler is asked for one on its behalf; the status
/// callback then returns that decision's verdict.
///
/// A resumed session has no Certificate message and no verify callback (TLS 1.3 still runs the
/// status callback, without a staple, which lets the handshake go on): it is decided before the
/// request (``EasyHandle/connectionReady()``) on the chain the session kept, which carries no
/// staple and no SCTs of its own; the staple the session's first handshake brought is used
/// there (``HandshakeEvidenceMemory``, with the TLS SCTs it brought), else CRLs settle it (cached, usually).
final class HandshakeCapture {
    /// What was asked of the server on the connection being opened.
    private(set) var requested: HandshakeEvidence = []
    /// The `signed_certificate_timestamp` extension's bytes for the leaf, when asked for and
    /// sent.
    var signedCertificateTimestamps: [UInt8]?
    /// The chain the verify callback read, waiting for the status callback's decision.
    private var pending: (ssl: OpaquePointer, served: ServedChain)?

    /// A new connection asks for `evidence`.
    func reset(requesting evidence: HandshakeEvidence) {
        requested = evidence
        signedCertificateTimestamps = nil
        pending = nil
    }

    /// Keeps `served` for the status callback when the decision waits for the staple on
    /// `ssl`; `false` when it is to be made now.
    func waitsForStaple(_ served: ServedChain, on ssl: OpaquePointer) -> Bool {
        guard requested.contains(.stapledOCSPResponse) else { return false }
        pending = (ssl, served)
        return true
    }

    /// Whether a decision on `ssl` waits for the staple.
    func hasPending(for ssl: OpaquePointer) -> Bool { pending?.ssl == ssl }

    /// The chain kept for `ssl` by ``waitsForStaple(_:on:)``, once.
    func takePending(for ssl: OpaquePointer) -> ServedChain? {
        guard let pending, pending.ssl == ssl else { return nil }
        self.pending = nil
        return pending.served
    }
}

/// The TLS `signed_certificate_timestamp` extension (type 18, RFC 6962 §3.3.1) on our
/// connections, as an OpenSSL custom extension: offered empty in the ClientHello, and read
/// from the TLS 1.2 ServerHello or from the TLS 1.3 leaf's CertificateEntry (`chainidx` 0; the
/// other entries' are ignored). OpenSSL accepts a custom extension of this type as long as its
/// own CT validation is off, which libcurl never switches on.
enum SignedCertificateTimestampExtension {
    /// Offers the extension on the connections made from `context`, the server's answer going
    /// to `capture` (which must outlive them: the ``EasyHandle`` that owns it does).
    static func request(on context: OpaquePointer, into capture: HandshakeCapture) {
        let contexts = UInt32(SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_2_SERVER_HELLO | SSL_EXT_TLS1_3_CERTIFICATE)
        _ = SSL_CTX_add_custom_ext(
            context, UInt32(TLSEXT_TYPE_signed_certificate_timestamp), contexts, nil, nil, nil,
            { _, _, _, bytes, length, _, chainIndex, _, argument in
                guard chainIndex == 0, let argument else { return 1 }
                let capture = Unmanaged<HandshakeCapture>.fromOpaque(argument).takeUnretainedValue()
                capture.signedCertificateTimestamps = bytes.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
                return 1
            }, Unmanaged.passUnretained(capture).toOpaque())
    }
}

extension EasyHandle {
    /// A new origin connection is being set up from `context`: asks the server for what the
    /// decider needs for this host (derived from the policy: ``SessionCore/handshakeEvidence(forHost:)``)
    /// and installs what reads it. Nothing is asked, and nothing installed, when nothing is
    /// needed.
    func requestEvidence(on context: OpaquePointer) {
        let evidence = transfer.map { core.handshakeEvidence(forHost: $0.spec.target.host) } ?? []
        handshake.reset(requesting: evidence)
        if evidence.contains(.stapledOCSPResponse) {
            OCSPStapling.request(on: context, statusCallback: easyStatusCallback, argument: Unmanaged.passUnretained(self).toOpaque())
        }
        if evidence.contains(.signedCertificateTimestamps) {
            SignedCertificateTimestampExtension.request(on: context, into: handshake)
        }
    }

    /// The decision waiting for the staple, made now on the chain the verify callback kept,
    /// with the staple (or none) and the SCTs: in the status callback, or earlier, when the
    /// server asks for a client certificate (``answerCertificateRequest(_:)``). A decision
    /// already made in this handshake is its verdict; `false` aborts the handshake.
    func decidePending(_ ssl: OpaquePointer) -> Bool {
        guard let transfer else { return false }
        guard let kept = handshake.takePending(for: ssl) else {
            if let record = ConnectionTrust.record(of: ssl) { return record.decided.decision.isTrusted }
            // A resumed TLS 1.3 session: OpenSSL calls the status callback at the server's
            // Finished even without a Certificate message. No handshake decides it; it is
            // decided before the request, on the chain its session kept (connectionReady).
            if SSL_session_reused(ssl) == 1 { return true }
            // The status callback without a chain read first: nothing to decide on.
            let target = transfer.spec.target
            transfer.trustDecision =
                transfer.trustDecision
                ?? .rejected(
                    ServedChain(certificates: [], host: target.host, port: target.port), by: "transport", .emptyChain,
                    "the certificate status arrived without a certificate chain")
            return false
        }
        let served = ServedChain(
            certificates: kept.certificates, host: kept.host, port: kept.port, tlsVersion: TLSHooks.versionName(ssl) ?? kept.tlsVersion,
            cipher: kept.cipher, alpn: kept.alpn, stapledOCSPResponse: OCSPStapling.staple(of: ssl),
            signedCertificateTimestamps: handshake.signedCertificateTimestamps ?? kept.signedCertificateTimestamps)
        return decide(served, ssl: ssl, for: transfer)
    }
}

/// OpenSSL's status callback on origin connections whose decision waits for the staple.
let easyStatusCallback: OCSPStapling.StatusCallback = { ssl, argument in
    guard let ssl, let argument else { return 0 }
    return Unmanaged<EasyHandle>.fromOpaque(argument).takeUnretainedValue().decidePending(ssl) ? 1 : 0
}

/// The last stapled OCSP response and TLS SCT extension each leaf came with in an accepted
/// full handshake of this session, for the connections decided without a handshake's own: a
/// resumed TLS session (OpenSSL keeps neither in the session; TLS 1.3 resumption has no
/// Certificate message) and a kept-alive connection decided again after
/// ``HTTPSession/replaceServerTrust(_:)``. Both are signed evidence about one certificate (a
/// staple by its CA, an SCT by a log), checked again by every decision that reads them (issuer,
/// signer and window for a staple; log key, time and policy for SCTs), so what an earlier
/// handshake brought is as good as the handshake's own while it is current. Without it, such
/// connections would fall back to CRLs, and a server that only staples would be "status
/// unknown", and one that sends its SCTs only in the TLS extension not CT-compliant, on every
/// resumption. A refused decision about a leaf forgets what it came with (a new staple may say
/// revoked), and the memory is bounded.
final class HandshakeEvidenceMemory: Sendable {
    /// What one leaf came with.
    struct Evidence {
        var stapledOCSPResponse: [UInt8]?
        var signedCertificateTimestamps: [UInt8]?
    }

    /// Leaves remembered at most (then it starts over).
    static let capacity = 256
    private let evidence = Mutex<[[UInt8]: Evidence]>([:])

    /// Remembers what an accepted decision's handshake brought, or forgets the leaf's after a
    /// refusal.
    func record(_ decision: TrustDecision) {
        guard let leaf = decision.served.leaf else { return }
        let key = leaf.sha256Fingerprint
        let brought = Evidence(
            stapledOCSPResponse: decision.served.stapledOCSPResponse, signedCertificateTimestamps: decision.served.signedCertificateTimestamps)
        evidence.withLock { evidence in
            guard decision.isTrusted, brought.stapledOCSPResponse != nil || brought.signedCertificateTimestamps != nil else {
                evidence[key] = nil
                return
            }
            if evidence.count >= Self.capacity { evidence.removeAll() }
            // A handshake that brought only one kind keeps what an earlier one brought of the other.
            var kept = evidence[key] ?? Evidence()
            if let staple = brought.stapledOCSPResponse { kept.stapledOCSPResponse = staple }
            if let scts = brought.signedCertificateTimestamps { kept.signedCertificateTimestamps = scts }
            evidence[key] = kept
        }
    }

    /// `served` with what was last seen for its leaf, of the kinds `wanted`, where it came
    /// without them.
    func adding(to served: ServedChain, _ wanted: HandshakeEvidence) -> ServedChain {
        guard let leaf = served.leaf, let seen = evidence.withLock({ $0[leaf.sha256Fingerprint] }) else { return served }
        let staple = served.stapledOCSPResponse ?? (wanted.contains(.stapledOCSPResponse) ? seen.stapledOCSPResponse : nil)
        let scts = served.signedCertificateTimestamps ?? (wanted.contains(.signedCertificateTimestamps) ? seen.signedCertificateTimestamps : nil)
        guard staple != served.stapledOCSPResponse || scts != served.signedCertificateTimestamps else { return served }
        return ServedChain(
            certificates: served.certificates, host: served.host, port: served.port, tlsVersion: served.tlsVersion, cipher: served.cipher,
            alpn: served.alpn, stapledOCSPResponse: staple, signedCertificateTimestamps: scts)
    }
}
