internal import COpenSSL
internal import CServerTrustShims

/// Stapled OCSP on our TLS connections: asking for it (the status_request extension, RFC 6066
/// §8) and reading what the server sent.
///
/// When the staple is there, in OpenSSL 3.0's client (`ssl/statem/statem_clnt.c`,
/// `extensions_clnt.c`), and what the experiment against nginx with `ssl_stapling_file` shows
/// (`StapleTimingTests`):
///
/// - **TLS 1.3**: the OCSP response rides in the status_request extension of the leaf's
///   CertificateEntry (RFC 8446 §4.4.2.1). `tls_process_server_certificate` parses the entries'
///   extensions, storing the leaf's response, before `tls_post_process_server_certificate` runs
///   the chain verification; so the certificate-verify callback already sees it.
/// - **TLS 1.2**: the response comes in its own CertificateStatus message, after the Certificate
///   message, and the chain is verified as soon as the Certificate message is processed; so the
///   certificate-verify callback never sees it.
/// - **Both**: the status callback (`SSL_CTX_set_tlsext_status_cb`) runs in
///   `tls_process_initial_server_flight`, after ServerHelloDone in TLS 1.2 and after the
///   server's Finished in TLS 1.3, with the response or none: in either version before the client
///   sends a byte of application data, and early enough to abort the handshake (a 0 return
///   sends the bad_certificate_status_response alert). It is not called for a resumed session,
///   which has no Certificate message; OpenSSL keeps no staple in the session either.
///
/// So the one place a decision can read the staple for both versions is the status callback.
enum OCSPStapling {
    /// The status callback's signature: the connection and the argument given to
    /// ``request(on:statusCallback:argument:)``; return 1 to go on, 0 to abort the handshake.
    typealias StatusCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32

    /// Asks for a stapled OCSP response on the connections made from `context` (curl creates
    /// the `SSL` from the context after the `CURLOPT_SSL_CTX_FUNCTION` callback returns, and
    /// `SSL_new` copies the status type), and installs `statusCallback` with `argument`.
    static func request(on context: OpaquePointer, statusCallback: StatusCallback, argument: UnsafeMutableRawPointer?) {
        _ = CServerTrustShims_SSL_CTX_set_tlsext_status_type(context, TLSEXT_STATUSTYPE_ocsp)
        _ = CServerTrustShims_SSL_CTX_set_tlsext_status_cb(context, statusCallback, argument)
    }

    /// The DER OCSP response the server stapled on `ssl` so far, copied; `nil` when none has
    /// arrived (yet).
    static func staple(of ssl: OpaquePointer) -> [UInt8]? {
        var response: UnsafePointer<UInt8>?
        let length = CServerTrustShims_SSL_get_tlsext_status_ocsp_resp(ssl, &response)
        guard length > 0, let response else { return nil }
        return Array(UnsafeBufferPointer(start: response, count: length))
    }
}
