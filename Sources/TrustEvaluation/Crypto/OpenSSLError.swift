internal import COpenSSL

/// A failed libcrypto call, with the thread's OpenSSL error queue as it stood at that moment.
///
/// OpenSSL reports *why* something failed only through a thread-local queue. Every failure
/// path in this module drains it into one of these (nio-ssl `BoringSSLError.buildErrorStack`),
/// so a stale entry can never be blamed on a later, unrelated call.
public struct OpenSSLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One entry of the OpenSSL error queue.
    public struct Entry: Hashable, Sendable, CustomStringConvertible {
        /// The packed error code (`ERR_get_error`), library and reason together.
        public let code: UInt
        /// The text `ERR_error_string_n` gives for it, e.g.
        /// `error:1C800064:Provider routines::bad decrypt`.
        public let text: String

        /// The text.
        public var description: String { text }
    }

    /// The operation that failed, usually the OpenSSL function name.
    public let operation: String
    /// The drained queue, oldest entry first (may be empty when OpenSSL left no reason).
    public let stack: [Entry]

    /// Creates an error from already-collected entries.
    ///
    /// - Parameters:
    ///   - operation: The operation that failed.
    ///   - stack: The OpenSSL error entries, oldest first.
    public init(operation: String, stack: [Entry] = []) {
        self.operation = operation
        self.stack = stack
    }

    /// `"<operation> failed: <entry>; <entry>"`, on one line.
    public var description: String {
        let detail = stack.isEmpty ? "no OpenSSL error reported" : stack.map(\.text).joined(separator: "; ")
        return "\(operation) failed: \(detail)"
    }

    /// Builds an error for `operation`, emptying the calling thread's error queue.
    static func drain(_ operation: String) -> OpenSSLError {
        OpenSSLError(operation: operation, stack: drainEntries())
    }

    /// Empties the calling thread's error queue and returns its entries, oldest first.
    static func drainEntries() -> [Entry] {
        var entries: [Entry] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            entries.append(Entry(code: code, text: text(of: code)))
        }
        return entries
    }

    /// Discards whatever is queued, before a call whose failure will be inspected (so only its
    /// own errors are seen) and after an expected failure (so nothing leaks into later calls).
    static func clear() {
        ERR_clear_error()
    }

    /// `ERR_error_string_n` into a buffer; 256 bytes is what OpenSSL documents as enough.
    static func text(of code: UInt) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            guard let base = buffer.baseAddress else { return "error:\(String(code, radix: 16))" }
            ERR_error_string_n(code, base, buffer.count)
            return String(cString: base)
        }
    }
}

extension OpenSSLError.Entry {
    /// `ERR_GET_LIB` of the code.
    var library: Int32 { ERR_GET_LIB(code) }
    /// `ERR_GET_REASON` of the code (common reasons keep their `ERR_RFLAG_COMMON` bit).
    var reason: Int32 { ERR_GET_REASON(code) }
}

extension OpenSSLError {
    /// Whether the queue says an algorithm is missing rather than the input being wrong:
    /// `ERR_R_UNSUPPORTED` / `ERR_R_FETCH_FAILED` (no provider offers it, e.g. RC2 without the
    /// legacy provider) or EVP's unsupported-cipher, -algorithm and -KDF reasons.
    var reportsUnsupportedAlgorithm: Bool {
        let common: Set<Int32> = [
            Int32(truncatingIfNeeded: ERR_R_UNSUPPORTED), Int32(truncatingIfNeeded: ERR_R_FETCH_FAILED),
        ]
        let evp: Set<Int32> = [
            EVP_R_UNSUPPORTED_ALGORITHM, EVP_R_UNSUPPORTED_CIPHER, EVP_R_UNSUPPORTED_KEY_DERIVATION_FUNCTION,
            EVP_R_UNSUPPORTED_PRF, EVP_R_UNKNOWN_CIPHER,
        ]
        // OpenSSL 3's decoders also say "unsupported" when no decoder accepts malformed input;
        // ASN.1 errors in the same queue mean the input, not the algorithm, is at fault.
        guard !stack.contains(where: { $0.library == ERR_LIB_ASN1 }) else { return false }
        return stack.contains { entry in
            common.contains(entry.reason) || (entry.library == ERR_LIB_EVP && evp.contains(entry.reason))
        }
    }
}
