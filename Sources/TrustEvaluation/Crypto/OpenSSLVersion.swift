internal import COpenSSL

/// The libcrypto in use, for reports and benchmark rows ("OpenSSL 3.0.19 27 Jan 2026").
package enum OpenSSLVersion {
    /// `OpenSSL_version(OPENSSL_VERSION)`.
    package static var text: String {
        guard let pointer = OpenSSL_version(OPENSSL_VERSION) else { return "OpenSSL" }
        return String(cString: pointer)
    }
}
