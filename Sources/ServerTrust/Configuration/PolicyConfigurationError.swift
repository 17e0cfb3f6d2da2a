/// One problem in a policy configuration: what kind, where (a JSON path such as
/// `$.hosts[2].pins[0]`, or a file path), and why.
///
/// Configuration is validated in full before use and every problem is reported, not only the
/// first (``PolicyFileError``), so one edit can fix them all. TrustKit raises one
/// `NSException` for the first problem; AFNetworking crashes on a bad pinned file (AF #3768)
/// and Alamofire silently drops it (Alamofire #3363) — both are what this type replaces.
public struct PolicyConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of configuration problems.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// The text is not JSON, or a certificate file cannot be read.
        case unreadable
        /// The file parses but is not a certificate (PEM/DER) where one is required.
        case notACertificate
        /// A required key is absent.
        case missingKey
        /// A key this schema does not define (usually a typo).
        case unknownKey
        /// A value of the wrong JSON type.
        case wrongType
        /// A value of the right type but not an allowed one (unknown mode, bad URI, …).
        case invalidValue
        /// A pin that is not `sha256/…`, `sha256//…`, `sha384/…`, `sha512/…` or bare base64 of
        /// the right length.
        case invalidPin
        /// A host pattern that is not a DNS name, `*.name`, `**.name` or an IP literal, or a
        /// wildcard over a public suffix.
        case invalidHostPattern
        /// Two entries for the same host pattern.
        case duplicateHostPattern
        /// A date that is neither `yyyy-MM-dd` nor RFC 3339.
        case invalidDate
        /// Enforced pinning with fewer than two pins (RFC 7469 §4.3, TrustKit's rule).
        case missingBackupPin
        /// A pinned host with no pins at all.
        case noPins
        /// An exclusion (`excludeFromParentPolicy`) that no other entry's pattern covers.
        case excludeWithoutParent
        /// Options that cannot be combined (keys for an evaluator that is not used, an
        /// exclusion entry with other keys, `*.` with `includeSubdomains`, …).
        case conflictingOptions
        /// A `version` this library does not know.
        case unsupportedVersion
        /// A key or value a signed pin set may not hold: file paths (`certificates`, `anchors`),
        /// which name files on the signer's machine, and the `disabled` evaluator
        /// (docs/pinset-format.md).
        case notAllowedInPinSet
        /// A key that appears twice in one JSON object (a JSON parser would silently keep
        /// one: `"enforcePinning": true, …, "enforcePinning": false`).
        case duplicateKey
    }

    /// The kind of problem.
    public let kind: Kind
    /// Where: a JSON path (`$.hosts[0].pins[1]`) or a file path.
    public let path: String
    /// Why, in one line.
    public let message: String

    /// Creates an error.
    /// - Parameters:
    ///   - kind: The kind of problem.
    ///   - path: Where it is.
    ///   - message: Why it is a problem.
    public init(_ kind: Kind, path: String, _ message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    /// `path: message`, one line.
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }

    /// The same problem located at `path`.
    func at(_ path: String) -> PolicyConfigurationError { PolicyConfigurationError(kind, path: path, message) }
}
