public import CertificateParsing

/// The CT logs an app trusts, and how old that knowledge is.
///
/// The list is the app's input, never built in: Chrome's published lists may not be used to
/// enforce CT in other clients without Google's permission (googlechrome.github.io/
/// CertificateTransparency/log_lists.html), so the app ships Apple's list, its own, or one it
/// is allowed to use. Module `ServerTrust` reads the v3 JSON form Chrome and Apple publish,
/// optionally checking a detached signature (`CTLogList(json:)`); this type is what the
/// evaluation needs from it.
///
/// A list older than the maximum age ``CertificateTransparency`` is given (by default
/// ``defaultMaximumAge``, 70 days, as Chrome and Firefox do) stops enforcement with a note
/// instead of refusing every connection: logs change state, and a stale list would refuse
/// certificates logged to logs it has never heard of.
public struct CTLogList: Hashable, Sendable {
    /// Where ``timestamp`` came from.
    public enum TimestampSource: String, Hashable, Sendable {
        /// The list's own `log_list_timestamp` (Chrome's v3 lists carry one).
        case listed
        /// Supplied by the app when loading the list (Apple's list has no timestamp; the time
        /// it was downloaded or its `Last-Modified` date).
        case supplied
        /// Neither: the newest state change in the list, a lower bound of when it was
        /// published, so the list can only look older than it is, never fresher.
        case newestStateChange
    }

    /// The logs, in list order.
    public let logs: [CTLog]
    /// When the list was current (see ``timestampSource``).
    public let timestamp: ASN1Time
    /// Where ``timestamp`` came from.
    public let timestampSource: TimestampSource
    /// The list's `version` text, if it has one.
    public let version: String?
    /// Log ID → index in ``logs``.
    private let index: [[UInt8]: Int]
    /// The logs' verification keys, made once per list (by index in ``logs``), so that every
    /// evaluation with this list shares them.
    private let keys: KeyCache

    /// Chrome's and Firefox's maximum list age: 70 days (10 weeks), in seconds.
    public static let defaultMaximumAge: Int64 = 70 * 86_400

    /// Creates a list.
    ///
    /// - Parameters:
    ///   - logs: The logs; no two may share a key.
    ///   - timestamp: When the list was current; `nil` uses the newest state change of `logs`
    ///     (``TimestampSource/newestStateChange``), or the Unix epoch for a list without states.
    ///   - timestampSource: Where an explicit `timestamp` came from.
    ///   - version: The list's version text.
    /// - Throws: ``CTLogListError`` (``CTLogListError/Code/duplicateLog``) when two entries
    ///   share a log ID: which one's state and operator applied would be a guess.
    public init(logs: [CTLog], timestamp: ASN1Time?, timestampSource: TimestampSource = .listed, version: String? = nil) throws(CTLogListError) {
        var index: [[UInt8]: Int] = [:]
        for (position, log) in logs.enumerated() {
            if let earlier = index[log.logID] {
                throw CTLogListError(
                    .duplicateLog, at: "",
                    "log ID \(log.logIDBase64) appears twice (\"\(logs[earlier].name)\" and \"\(log.name)\")")
            }
            index[log.logID] = position
        }
        self.logs = logs
        self.index = index
        self.keys = KeyCache(count: logs.count)
        self.version = version
        if let timestamp {
            self.timestamp = timestamp
            self.timestampSource = timestampSource
        } else {
            self.timestamp = logs.compactMap { $0.state?.since }.max() ?? ASN1Time(secondsSince1970: 0)
            self.timestampSource = .newestStateChange
        }
    }

    /// The log with `logID`, if listed.
    ///
    /// - Parameter logID: A 32-byte log ID.
    /// - Returns: The log, or `nil`.
    public func log(id logID: some Collection<UInt8>) -> CTLog? {
        index[Array(logID)].map { logs[$0] }
    }

    /// `log`'s key for `verifier`, made the first time it is asked for.
    func verificationKey<V: SignatureVerifier>(for log: CTLog, verifier: V) -> Result<V.Key, SignatureError> {
        guard let position = index[log.logID] else { return Result { () throws(SignatureError) in try verifier.makeKey(log.publicKeyInfo) } }
        return keys.verificationKey(at: position, of: verifier, spki: log.publicKeyInfo)
    }

    /// The list's age at `time`, in seconds (negative if it claims to be from the future).
    ///
    /// - Parameter time: Seconds since 1970.
    /// - Returns: `time - timestamp`.
    public func age(at time: Int64) -> Int64 {
        time.subtractingReportingOverflow(timestamp.secondsSince1970).partialValue
    }

    /// Equal when the logs, timestamp and version are.
    public static func == (lhs: CTLogList, rhs: CTLogList) -> Bool {
        lhs.logs == rhs.logs && lhs.timestamp == rhs.timestamp && lhs.timestampSource == rhs.timestampSource && lhs.version == rhs.version
    }

    /// Hashes the log count and timestamp.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(logs.count)
        hasher.combine(timestamp)
    }
}

/// Why a log list could not be used: malformed JSON, a field of the wrong type, a log whose ID
/// is not its key's hash, two logs with one key, a signature that does not verify.
///
/// Errors compare by ``code`` only; ``path`` (a JSON path such as
/// `$.operators[1].logs[0].key`) and ``reason`` say where and what.
public struct CTLogListError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// Not JSON, or JSON with a repeated member name.
        case malformedJSON
        /// A required member is absent.
        case missingField
        /// A member has the wrong JSON type.
        case wrongType
        /// A value is malformed: bad base64, a key that is not a SubjectPublicKeyInfo, a date
        /// that is not RFC 3339, a log with two states.
        case invalidValue
        /// A `log_id` that is not the SHA-256 of the log's `key`.
        case logIDMismatch
        /// Two logs with the same log ID.
        case duplicateLog
        /// The detached signature does not verify with the app's key.
        case badSignature
        /// The signature key is of a kind that cannot sign lists.
        case unsupportedKey
    }

    /// The kind of problem.
    public let code: Code
    /// Where: a JSON path, or empty for the whole list.
    public let path: String
    /// What was wrong, for people.
    public let reason: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of problem.
    ///   - path: A JSON path, or empty.
    ///   - reason: A one-line explanation.
    public init(_ code: Code, at path: String, _ reason: String) {
        self.code = code
        self.path = path
        self.reason = reason
    }

    /// The same error at `path` when it had none.
    ///
    /// - Parameter path: A JSON path.
    /// - Returns: The error, located.
    public func at(_ path: String) -> CTLogListError {
        self.path.isEmpty ? CTLogListError(code, at: path, reason) : self
    }

    /// Errors are equal when their ``code`` is.
    public static func == (lhs: CTLogListError, rhs: CTLogListError) -> Bool { lhs.code == rhs.code }
    /// Hashes the ``code``.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// `CT log list <code> at <path>: <reason>`.
    public var description: String {
        path.isEmpty ? "CT log list \(code.rawValue): \(reason)" : "CT log list \(code.rawValue) at \(path): \(reason)"
    }
}
