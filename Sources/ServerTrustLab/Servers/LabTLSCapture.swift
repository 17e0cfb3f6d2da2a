internal import COpenSSL
internal import CServerTrustShims

/// What a TLS server hands a client that asks for everything Certificate Transparency and
/// stapled OCSP use: its certificates as sent, the `extension_data` of its
/// `signed_certificate_timestamp` extension (type 18; in TLS 1.2 from the ServerHello, in TLS 1.3
/// from the leaf's CertificateEntry, RFC 6962 §3.3 and RFC 8446 §4.4.2) and the stapled OCSP
/// response.
///
/// A test-side capture made with OpenSSL alone (a custom extension for type 18 with
/// `SSL_CTX_add_custom_ext`, the status request, `SSL_get_peer_cert_chain`), so the bytes a
/// library decision is given in a test come from the wire, not from the library's own transport.
/// The server's certificate is not verified: the capture only records.
package struct LabTLSCapture: Sendable {
    /// The certificates the server sent, leaf first.
    package let chain: [LabCertificate]
    /// The SCT list of the TLS extension, or `nil` when the server sent none.
    package let signedCertificateTimestamps: [UInt8]?
    /// The stapled OCSP response, or `nil`.
    package let ocspResponse: [UInt8]?
    /// The negotiated version (`TLSv1.3`).
    package let tlsVersion: String

    /// Connects to `address`:`port`, handshakes for `serverName` (SNI) offering the SCT and
    /// status_request extensions, and returns what the server sent.
    ///
    /// - Parameters:
    ///   - address: The address to connect to.
    ///   - port: The port.
    ///   - serverName: The SNI name.
    ///   - version: Limit the handshake to this version (`nil`: TLS 1.2 or 1.3).
    ///   - timeout: Seconds for connecting and the handshake.
    /// - Returns: The capture.
    /// - Throws: ``LabError`` when the connection or the handshake fails.
    package static func capture(
        address: String = "127.0.0.1", port: UInt16, serverName: String, version: LabTLSVersion? = nil, timeout: Double = 10
    ) throws -> LabTLSCapture {
        let box = ExtensionBox()
        let context = try LabSSLContext.client(minimumVersion: version ?? .tls1_2, maximumVersion: version ?? .tls1_3, callbackObjects: [box]) { context in
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            _ = CServerTrustShims_SSL_CTX_set_tlsext_status_type(context, TLSEXT_STATUSTYPE_ocsp)
            let contexts = UInt32(SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_2_SERVER_HELLO | SSL_EXT_TLS1_3_CERTIFICATE)
            let added = SSL_CTX_add_custom_ext(
                context, 18, contexts, labOfferEmptyExtension, nil, nil, labKeepLeafExtension, Unmanaged.passUnretained(box).toOpaque())
            guard added == 1 else { throw LabError.openSSL("SSL_CTX_add_custom_ext(18)") }
        }
        let stop = LabStopFlag()
        let deadline = LabDeadline.after(timeout)
        let connection: LabTLSConnection
        do {
            let socket = try LabSocket.connect(host: address, port: port, deadline: deadline, stop: stop)
            connection = try LabTLSConnection(socket: socket, context: context)
            _ = CServerTrustShims_SSL_set_tlsext_host_name(connection.ssl, serverName)
            try connection.handshake(asServer: false, until: deadline, stop: stop)
        } catch {
            throw LabError.invalid("LabTLSCapture", "\(address):\(port): \(error)")
        }
        defer { SSL_shutdown(connection.ssl) }
        var chain: [LabCertificate] = []
        if let stack = SSL_get_peer_cert_chain(connection.ssl) {
            for index in 0..<CServerTrustShims_sk_X509_num(stack) {
                guard let x509 = CServerTrustShims_sk_X509_value(stack, index), let certificate = labCertificate(from: x509) else {
                    throw LabError.invalid("LabTLSCapture", "certificate \(index) cannot be re-encoded")
                }
                chain.append(certificate)
            }
        }
        var response: UnsafePointer<UInt8>?
        let length = CServerTrustShims_SSL_get_tlsext_status_ocsp_resp(connection.ssl, &response)
        let staple = length > 0 ? response.map { Array(UnsafeBufferPointer(start: $0, count: length)) } : nil
        return LabTLSCapture(
            chain: chain, signedCertificateTimestamps: box.bytes, ocspResponse: staple, tlsVersion: String(cString: SSL_get_version(connection.ssl)))
    }

    /// Where the parse callback leaves the extension's bytes (one handshake, one thread).
    final class ExtensionBox {
        var bytes: [UInt8]?
    }
}

/// The client's type-18 extension: empty in the ClientHello (RFC 6962 §3.3: "clients […]
/// send an empty extension_data").
private func labOfferEmptyExtension(
    _ ssl: OpaquePointer?, _ type: UInt32, _ context: UInt32, _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    _ length: UnsafeMutablePointer<Int>?, _ x509: OpaquePointer?, _ chainIndex: Int, _ alert: UnsafeMutablePointer<Int32>?,
    _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    out?.pointee = nil
    length?.pointee = 0
    return 1
}

/// Keeps the server's type-18 bytes: from the ServerHello, or from the leaf's CertificateEntry.
private func labKeepLeafExtension(
    _ ssl: OpaquePointer?, _ type: UInt32, _ context: UInt32, _ input: UnsafePointer<UInt8>?, _ length: Int, _ x509: OpaquePointer?,
    _ chainIndex: Int, _ alert: UnsafeMutablePointer<Int32>?, _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    guard let argument else { return 1 }
    if context & UInt32(SSL_EXT_TLS1_3_CERTIFICATE) != 0 && chainIndex != 0 { return 1 }
    let box = Unmanaged<LabTLSCapture.ExtensionBox>.fromOpaque(argument).takeUnretainedValue()
    box.bytes = input.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
    return 1
}
