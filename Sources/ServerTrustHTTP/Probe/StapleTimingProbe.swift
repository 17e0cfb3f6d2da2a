internal import CCurl
internal import COpenSSL
internal import CServerTrustShims
internal import Synchronization

/// Where a stapled OCSP response can be read during a TLS handshake made like the transport's
/// (libcurl, our `SSL_CTX` hooks, status_request asked for through ``OCSPStapling``): what the
/// certificate-verify callback and the status callback each see. The experiment behind
/// ``OCSPStapling``'s documentation; nothing is trusted or decided here, the verify callback
/// accepts whatever is served and the connection ends after one `HEAD`.
package enum StapleTimingProbe {
    /// What one handshake showed.
    package struct Observation: Sendable, Equatable {
        /// The negotiated version, as OpenSSL names it.
        package var tlsVersion: String?
        /// Whether the certificate-verify callback ran.
        package var verifyCallbackRan = false
        /// The staple as the certificate-verify callback could read it.
        package var inVerifyCallback: [UInt8]?
        /// Whether the status callback ran.
        package var statusCallbackRan = false
        /// The staple as the status callback could read it.
        package var inStatusCallback: [UInt8]?
        /// The `signed_certificate_timestamp` extension's bytes as the verify callback could read
        /// them, when the probe offered the extension (``SignedCertificateTimestampExtension``).
        package var sctsInVerifyCallback: [UInt8]?
        /// The same, as the status callback could read them.
        package var sctsInStatusCallback: [UInt8]?
    }

    /// Why a probe could not connect: curl's words.
    package struct Failure: Error, Sendable {
        /// curl's text.
        package let reason: String
    }

    /// The TLS versions to pin a probe to.
    package enum Version: Sendable {
        /// TLS 1.2 only.
        case tls12
        /// TLS 1.3 only.
        case tls13
    }

    /// Connects to `host:port` at `address`, pinned to `version`, asks for a staple and records
    /// where it was visible; runs `duringStatusCallback` inside the status callback, as a
    /// revocation check reading the staple there would run (a CRL fetch, say). With
    /// `offersSCTExtension`, the ClientHello also offers the `signed_certificate_timestamp`
    /// extension, read as the transport reads it.
    ///
    /// - Returns: The observation, or curl's error text.
    package static func observe(
        host: String, port: Int, address: String, version: Version, timeout: Double = 10, offersSCTExtension: Bool = false,
        duringStatusCallback: (@Sendable () -> Void)? = nil
    ) -> Result<Observation, Failure> {
        guard Curl.initialized, let handle = curl_easy_init() else { return .failure(Failure(reason: "curl_easy_init failed")) }
        defer { curl_easy_cleanup(handle) }
        let recorder = Recorder(duringStatusCallback: duringStatusCallback, offersSCTExtension: offersSCTExtension)
        let opaque = Unmanaged.passUnretained(recorder).toOpaque()
        guard let resolve = CurlSList(["\(host):\(port):\(address)"]) else { return .failure(Failure(reason: "curl_slist_append failed")) }
        let versionOption = version == .tls12 ? CURL_SSLVERSION_TLSv1_2 | CURL_SSLVERSION_MAX_TLSv1_2 : CURL_SSLVERSION_TLSv1_3 | CURL_SSLVERSION_MAX_TLSv1_3
        _ = CServerTrustShims_curl_easy_setopt_string(handle, CURLOPT_URL, "https://\(host):\(port)/")
        _ = CServerTrustShims_curl_easy_setopt_slist(handle, CURLOPT_RESOLVE, resolve.pointer)
        _ = CServerTrustShims_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = CServerTrustShims_curl_easy_setopt_long(handle, CURLOPT_NOBODY, 1)
        _ = CServerTrustShims_curl_easy_setopt_long(handle, CURLOPT_SSLVERSION, Int(versionOption))
        _ = CServerTrustShims_curl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, Int(timeout * 1000))
        _ = CServerTrustShims_curl_easy_setopt_string(handle, CURLOPT_PROXY, "")
        // As the transport: VERIFYPEER 1 so OpenSSL runs the verify callback, no CA file.
        _ = CServerTrustShims_curl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
        _ = CServerTrustShims_curl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 0)
        _ = CServerTrustShims_curl_easy_setopt_string(handle, CURLOPT_CAINFO, nil)
        _ = CServerTrustShims_curl_easy_setopt_string(handle, CURLOPT_CAPATH, nil)
        _ = CServerTrustShims_curl_easy_setopt_ssl_ctx_function(handle, probeSSLContextCallback)
        _ = CServerTrustShims_curl_easy_setopt_pointer(handle, CURLOPT_SSL_CTX_DATA, opaque)
        let code = withExtendedLifetime((recorder, resolve)) { curl_easy_perform(handle) }
        guard code == CURLE_OK else { return .failure(Failure(reason: Curl.describe(code))) }
        return .success(recorder.observation.withLock { $0 })
    }

    /// The observations, written by the callbacks on the probing thread.
    final class Recorder: Sendable {
        let observation = Mutex(Observation())
        let duringStatusCallback: (@Sendable () -> Void)?
        let offersSCTExtension: Bool
        /// Written and read only by the probing thread's handshake callbacks.
        nonisolated(unsafe) let capture = HandshakeCapture()
        init(duringStatusCallback: (@Sendable () -> Void)?, offersSCTExtension: Bool) {
            self.duringStatusCallback = duringStatusCallback
            self.offersSCTExtension = offersSCTExtension
        }
    }
}

private let probeSSLContextCallback: curl_ssl_ctx_callback = { _, sslContext, userdata in
    guard let sslContext, let userdata else { return CURLE_SSL_CERTPROBLEM }
    let context = OpaquePointer(sslContext)
    SSL_CTX_set_cert_verify_callback(
        context,
        { storeContext, arg in
            guard let storeContext, let arg else { return 0 }
            let recorder = Unmanaged<StapleTimingProbe.Recorder>.fromOpaque(arg).takeUnretainedValue()
            let ssl = X509_STORE_CTX_get_ex_data(storeContext, SSL_get_ex_data_X509_STORE_CTX_idx()).map(OpaquePointer.init)
            let scts = recorder.capture.signedCertificateTimestamps
            recorder.observation.withLock { observation in
                observation.verifyCallbackRan = true
                observation.inVerifyCallback = ssl.flatMap(OCSPStapling.staple(of:))
                observation.sctsInVerifyCallback = scts
            }
            return 1
        }, userdata)
    let recorder = Unmanaged<StapleTimingProbe.Recorder>.fromOpaque(userdata).takeUnretainedValue()
    if recorder.offersSCTExtension { SignedCertificateTimestampExtension.request(on: context, into: recorder.capture) }
    OCSPStapling.request(
        on: context,
        statusCallback: { ssl, arg in
            guard let ssl, let arg else { return 0 }
            let recorder = Unmanaged<StapleTimingProbe.Recorder>.fromOpaque(arg).takeUnretainedValue()
            recorder.duringStatusCallback?()
            let scts = recorder.capture.signedCertificateTimestamps
            recorder.observation.withLock { observation in
                observation.sctsInStatusCallback = scts
                observation.statusCallbackRan = true
                observation.inStatusCallback = OCSPStapling.staple(of: ssl)
                observation.tlsVersion = TLSHooks.versionName(ssl)
            }
            return 1
        }, argument: userdata)
    return CURLE_OK
}
