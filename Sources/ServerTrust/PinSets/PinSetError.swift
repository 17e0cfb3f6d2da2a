/// Why a signed pin set (docs/pinset-format.md) was refused, or why a stored one could not be
/// used: what kind of problem, and where.
///
/// A refused document never changes the pins in force: the client keeps the set it had.
public struct PinSetError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of problems, in the order a document is checked.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// Larger than ``PinSetDocument/maximumSize`` (or a store larger than its bound): refused
        /// before it is parsed.
        case tooLarge
        /// Not a document of this format: the envelope or the payload is malformed, or the payload
        /// breaks a rule of the policy-file schema (``problems`` lists each at its JSON path).
        case malformed
        /// Signed by a key that is not trusted now (never shipped, or rotated out).
        case unknownKey
        /// The signature does not verify over the payload bytes under the named key.
        case badSignature
        /// The serial is not greater than the one in force: a rollback to an older set or a
        /// replay of the current one with other contents (TUF's rollback attack).
        case serialNotIncreasing
        /// `issuedAt` is later than now plus the clock-skew tolerance.
        case notYetValid
        /// `expiresAt` is earlier than now minus the clock-skew tolerance (TUF's freeze attack:
        /// an old document served forever).
        case expired
        /// Accepting it would keep more than ``PinSetRules/maximumKeyRotations`` key-rotation
        /// documents.
        case tooManyKeyRotations
        /// The rules themselves are unusable (fewer than two distinct signing keys, a skew out of
        /// range).
        case invalidRules
        /// The store on disk cannot be read, is corrupt, or holds a document that no longer
        /// verifies (torn, truncated or tampered with); it was ignored.
        case storeUnusable
        /// The store could not be written; the document is in force until the process ends.
        case storeWriteFailed
    }

    /// The kind of problem.
    public let kind: Kind
    /// Why, in one line.
    public let message: String
    /// For ``Kind/malformed`` payloads: every problem found, each at its JSON path.
    public let problems: [PolicyConfigurationError]

    /// Creates an error.
    /// - Parameters:
    ///   - kind: The kind of problem.
    ///   - message: Why, in one line.
    ///   - problems: The schema problems, for ``Kind/malformed``.
    public init(_ kind: Kind, _ message: String, problems: [PolicyConfigurationError] = []) {
        self.kind = kind
        self.message = message
        self.problems = problems
    }

    /// `kind: message`, then one line per schema problem.
    public var description: String {
        ([kind.rawValue + ": " + message] + problems.map { "  " + $0.description }).joined(separator: "\n")
    }

    /// One line: `kind: message (first problem; N more)`.
    public var summary: String {
        guard let first = problems.first else { return kind.rawValue + ": " + message }
        return "\(kind.rawValue): \(message) (\(first)\(problems.count > 1 ? "; \(problems.count - 1) more" : ""))"
    }
}
