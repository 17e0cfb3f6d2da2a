public import CertificateParsing

/// The certificates a server presented on one TLS connection, and where the client was
/// connecting: the input of every server-trust decision (what `SecTrust` is created from on
/// Apple platforms).
///
/// It is the bag the server sent, nothing more: a man in the middle controls all of it, so
/// only the leaf's key is proven (by the handshake) and any other certificate counts only once
/// an evaluation has put it on a validated path (``ProvenChain``).
public struct ServedChain: Sendable {
    /// The certificates in the order the server sent them, leaf first.
    public let certificates: [Certificate]
    /// The host from the request URL (not the address connected to), without brackets for
    /// IPv6; `nil` when the chain is judged without a connection and no host is named.
    public let host: String?
    /// The port from the request URL.
    public let port: Int
    /// The negotiated protocol version as OpenSSL names it (`TLSv1.3`), when known.
    public let tlsVersion: String?
    /// The negotiated cipher suite (OpenSSL's name), if known.
    public let cipher: String?
    /// The application protocol the server selected by ALPN, if any.
    public let alpn: String?
    /// The stapled OCSP response DER.
    public let ocspResponse: [UInt8]?
    /// The TLS extension's SignedCertificateTimestampList bytes.
    public let signedCertificateTimestamps: [UInt8]?

    /// Creates a served chain.
    ///
    /// - Parameters:
    ///   - certificates: Leaf first, as served.
    ///   - host: The host the client wanted.
    ///   - port: The port the client wanted.
    ///   - tlsVersion: The negotiated version, if known.
    ///   - cipher: The negotiated cipher suite, if known.
    ///   - alpn: The ALPN protocol selected, if any.
    ///   - ocspResponse: The stapled OCSP response DER.
    ///   - signedCertificateTimestamps: The TLS extension's SignedCertificateTimestampList bytes.
    public init(
        certificates: [Certificate], host: String?, port: Int = 443, tlsVersion: String? = nil, cipher: String? = nil, alpn: String? = nil,
        ocspResponse: [UInt8]? = nil, signedCertificateTimestamps: [UInt8]? = nil
    ) {
        self.certificates = certificates
        self.host = host
        self.port = port
        self.tlsVersion = tlsVersion
        self.cipher = cipher
        self.alpn = alpn
        self.ocspResponse = ocspResponse
        self.signedCertificateTimestamps = signedCertificateTimestamps
    }

    /// The leaf, if the server sent any certificate.
    public var leaf: Certificate? { certificates.first }
}
