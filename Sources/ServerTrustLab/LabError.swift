internal import COpenSSL

/// An error raised by the test PKI generator.
///
/// Every failure names the operation that failed, so a broken fixture points straight at the
/// step that produced it, and carries the OpenSSL error queue that was pending at that moment
/// (OpenSSL reports *why* only through that thread-local queue, which is drained here so stale
/// entries cannot leak into a later, unrelated error).
public struct LabError: Error, CustomStringConvertible, Sendable, Hashable {
    /// The operation that failed, usually the OpenSSL function or the Lab step name.
    public let operation: String
    /// A human-readable reason supplied by the Lab code.
    public let reason: String
    /// The OpenSSL error strings drained from the thread's error queue, oldest first.
    public let openSSLErrors: [String]

    /// Creates an error without consulting OpenSSL (for invalid Lab input).
    ///
    /// - Parameters:
    ///   - operation: The operation that failed.
    ///   - reason: Why it failed.
    ///   - openSSLErrors: OpenSSL error strings, if any.
    public init(operation: String, reason: String, openSSLErrors: [String] = []) {
        self.operation = operation
        self.reason = reason
        self.openSSLErrors = openSSLErrors
    }

    /// A one-line description: operation, reason, then the OpenSSL errors.
    public var description: String {
        var text = "ServerTrustLab: \(operation) failed: \(reason)"
        if !openSSLErrors.isEmpty {
            text += " [" + openSSLErrors.joined(separator: "; ") + "]"
        }
        return text
    }

    /// Builds an error for a failed OpenSSL call, draining the thread's OpenSSL error queue.
    static func openSSL(_ operation: String, _ reason: String = "OpenSSL call failed") -> LabError {
        LabError(operation: operation, reason: reason, openSSLErrors: drainOpenSSLErrors())
    }

    /// Builds an error for input the Lab cannot encode.
    static func invalid(_ operation: String, _ reason: String) -> LabError {
        LabError(operation: operation, reason: reason)
    }

    /// Empties the OpenSSL error queue of the calling thread and returns its entries as text.
    static func drainOpenSSLErrors() -> [String] {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let end = buffer.firstIndex(of: 0) ?? buffer.count
            messages.append(String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages
    }
}
