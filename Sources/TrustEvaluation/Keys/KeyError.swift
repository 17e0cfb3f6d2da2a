/// Why a private key or an identity (certificate + key) could not be loaded.
///
/// Errors compare by ``code`` only, like the project's other error types; ``reason`` names what
/// was being read and what went wrong, including OpenSSL's own explanation where it gave one.
public struct KeyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// The input is not a well-formed key, certificate or PKCS #12 file (bad PEM, bad DER,
        /// truncated data, trailing bytes).
        case malformed
        /// The password is wrong, or missing for encrypted input. For PKCS #12 this is decided
        /// by the MAC (RFC 7292 §4); for encrypted PKCS #8 a failed decryption is reported
        /// this way because AES-CBC gives no other way to tell a wrong password from damage.
        case wrongPassword
        /// The input is well formed but uses an algorithm this library or libcrypto does not
        /// support (a DSA key, a legacy RC2-encrypted PKCS #12 without OpenSSL's legacy provider).
        case unsupported
        /// No private key was found where one is required (a PKCS #12 with certificates only,
        /// PEM text without a key block).
        case missingKey
        /// No certificate was found where one is required.
        case missingCertificate
        /// The private key does not belong to the certificate.
        case keyMismatch
        /// The file could not be read (missing, unreadable, not a regular file, too large).
        case unreadable
    }

    /// The kind of failure.
    public let code: Code
    /// What was being read and why it failed, on one line.
    public let reason: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - reason: What was being read and why it failed.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// An error whose reason ends with a drained OpenSSL error queue.
    static func openSSL(_ code: Code, _ reason: String, _ operation: String) -> KeyError {
        KeyError(code, "\(reason) (\(OpenSSLError.drain(operation)))")
    }

    /// Errors are equal when their codes are.
    public static func == (lhs: KeyError, rhs: KeyError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// `"key <code>: <reason>"`.
    public var description: String { "key \(code.rawValue): \(reason)" }
}
