public import CertificateParsing

/// One Certificate Transparency log as a log list describes it: its key, its operator (and
/// earlier operators), its state, the certificates it accepts and the API it speaks.
///
/// The field meanings are those of Chrome's v3 log list schema (`log_list_schema.json`),
/// which Apple's list also follows: `description`, `key`, `log_id`, `state`,
/// `temporal_interval`, `previous_operators`, `mmd`, and `logs` vs `tiled_logs`.
public struct CTLog: Hashable, Sendable, CustomStringConvertible {
    /// How the log is read; both kinds issue RFC 6962 SCTs (static-ct-api §"SCTs").
    public enum API: String, Hashable, Sendable {
        /// An RFC 6962 log (the list's `logs` array, with a `url`).
        case rfc6962
        /// A static-ct-api ("tiled") log (the list's `tiled_logs` array, with `submission_url`
        /// and `monitoring_url`).
        case staticCTAPI = "static-ct-api"
    }

    /// An earlier operator of the log (`previous_operators`): it ran the log until `endTime`.
    public struct PreviousOperator: Hashable, Sendable {
        /// The operator's name, as in the list's `operators`.
        public let name: String
        /// The last instant (exclusive) this operator ran the log.
        public let endTime: ASN1Time

        /// Creates an entry.
        ///
        /// - Parameters:
        ///   - name: The operator's name.
        ///   - endTime: When its operation ended.
        public init(name: String, endTime: ASN1Time) {
            self.name = name
            self.endTime = endTime
        }
    }

    /// The log ID: SHA-256 of ``publicKeyInfo``'s DER (RFC 6962 §3.2), always computed here.
    public let logID: [UInt8]
    /// The log's public key.
    public let publicKeyInfo: SubjectPublicKeyInfo
    /// The list's `description`, e.g. `Google 'Argon2026h1' log`.
    public let name: String
    /// The current operator (the `operators` entry that lists the log).
    public let operatorName: String
    /// Earlier operators, oldest first.
    public let previousOperators: [PreviousOperator]
    /// The log's state with the time it entered it; `nil` when the list gives none (never counts).
    public let state: CTLogState?
    /// The range of certificate expiry (notAfter) the log accepts, if it is sharded.
    public let temporalInterval: CTTemporalInterval?
    /// RFC 6962 or static-ct-api.
    public let api: API
    /// Maximum merge delay in seconds (`mmd`), if listed.
    public let maximumMergeDelay: Int?
    /// The submission URL (`url` or `submission_url`), if listed.
    public let url: String?

    /// Creates a log.
    ///
    /// - Parameters:
    ///   - publicKeyInfo: The log's key.
    ///   - name: Its description.
    ///   - operatorName: Its current operator.
    ///   - state: Its state, or `nil`.
    ///   - api: RFC 6962 or static-ct-api.
    ///   - temporalInterval: The notAfter range it accepts, if sharded.
    ///   - previousOperators: Earlier operators, in any order.
    ///   - maximumMergeDelay: `mmd` in seconds, if known.
    ///   - url: Its submission URL, if known.
    ///   - expectedLogID: The log ID the list states; when given, it must equal the SHA-256 of
    ///     `publicKeyInfo`, since a list whose ID and key disagree would make SCTs verify
    ///     under a key other than the one they name.
    /// - Throws: ``CTLogListError`` (``CTLogListError/Code/logIDMismatch``).
    public init(
        publicKeyInfo: SubjectPublicKeyInfo,
        name: String,
        operatorName: String,
        state: CTLogState?,
        api: API = .rfc6962,
        temporalInterval: CTTemporalInterval? = nil,
        previousOperators: [PreviousOperator] = [],
        maximumMergeDelay: Int? = nil,
        url: String? = nil,
        expectedLogID: [UInt8]? = nil
    ) throws(CTLogListError) {
        let logID = SHA256.hash(publicKeyInfo.derBytes)
        if let expectedLogID, expectedLogID != logID {
            throw CTLogListError(
                .logIDMismatch, at: "", "log \"\(name)\": log_id \(Base64.encode(expectedLogID)) is not the SHA-256 of its key (\(Base64.encode(logID)))")
        }
        self.logID = logID
        self.publicKeyInfo = publicKeyInfo
        self.name = name
        self.operatorName = operatorName
        self.state = state
        self.api = api
        self.temporalInterval = temporalInterval
        self.previousOperators = previousOperators.sorted { $0.endTime < $1.endTime }
        self.maximumMergeDelay = maximumMergeDelay
        self.url = url
    }

    /// The operator that ran the log when it issued an SCT at `timestamp` (milliseconds): the
    /// first previous operator whose end time is after it, else the current one. Chrome's CT
    /// policy: "each SCT's log operator is determined to be the operator at the time of SCT
    /// issuance, by comparing the SCT timestamp against the `previous_operators` timestamps".
    ///
    /// - Parameter timestamp: The SCT's timestamp in milliseconds.
    /// - Returns: The operator's name.
    public func operatorName(atMilliseconds timestamp: UInt64) -> String {
        for previous in previousOperators where Int64(clamping: timestamp / 1000) < previous.endTime.secondsSince1970 {
            return previous.name
        }
        return operatorName
    }

    /// The log ID in standard base64, as log lists write it.
    public var logIDBase64: String { Base64.encode(logID) }

    /// `<name> (<operator>, <state>)`.
    public var description: String { "\(name) (\(operatorName), \(state.map { $0.description } ?? "no state"))" }
}

/// A log's state in a log list and when it entered it (Chrome's CT Log Lifecycle Explainer:
/// Pending → Qualified → Usable → ReadOnly / Retired, or Rejected).
public struct CTLogState: Hashable, Sendable, CustomStringConvertible {
    /// The state.
    public enum Kind: Hashable, Sendable, CustomStringConvertible {
        /// Applied for inclusion; SCTs do not count.
        case pending
        /// Accepted; SCTs count.
        case qualified
        /// Accepted and relied on; SCTs count.
        case usable
        /// Frozen (no new entries) but still trusted; SCTs count.
        case readOnly
        /// No longer trusted for new SCTs; SCTs issued before the state's time may count.
        case retired
        /// Never accepted; SCTs do not count.
        case rejected
        /// A state name this library does not know (a newer schema); SCTs do not count.
        case unrecognized(String)

        /// The schema's spelling: `pending`, `qualified`, `usable`, `readonly`, `retired`, `rejected`.
        public var description: String {
            switch self {
            case .pending: return "pending"
            case .qualified: return "qualified"
            case .usable: return "usable"
            case .readOnly: return "readonly"
            case .retired: return "retired"
            case .rejected: return "rejected"
            case .unrecognized(let name): return name
            }
        }

        /// The kind for a schema name (`readonly` for read-only); unknown names are
        /// ``unrecognized(_:)``.
        ///
        /// - Parameter name: The key under `state`.
        public init(schemaName name: String) {
            switch name {
            case "pending": self = .pending
            case "qualified": self = .qualified
            case "usable": self = .usable
            case "readonly": self = .readOnly
            case "retired": self = .retired
            case "rejected": self = .rejected
            default: self = .unrecognized(name)
            }
        }
    }

    /// The state.
    public let kind: Kind
    /// When the log entered it.
    public let since: ASN1Time

    /// Creates a state.
    ///
    /// - Parameters:
    ///   - kind: The state.
    ///   - since: When it was entered.
    public init(_ kind: Kind, since: ASN1Time) {
        self.kind = kind
        self.since = since
    }

    /// `usable since 2025-01-01T00:00:00Z`.
    public var description: String { "\(kind) since \(since.rfc3339)" }
}

/// The certificates a sharded log accepts, by expiry: notAfter in
/// [``startInclusive``, ``endExclusive``) (`temporal_interval` in the v3 schema).
public struct CTTemporalInterval: Hashable, Sendable, CustomStringConvertible {
    /// The first notAfter accepted.
    public let startInclusive: ASN1Time
    /// The first notAfter no longer accepted.
    public let endExclusive: ASN1Time

    /// Creates an interval.
    ///
    /// - Parameters:
    ///   - startInclusive: The first notAfter accepted.
    ///   - endExclusive: The first notAfter no longer accepted.
    public init(startInclusive: ASN1Time, endExclusive: ASN1Time) {
        self.startInclusive = startInclusive
        self.endExclusive = endExclusive
    }

    /// Whether a certificate expiring at `notAfter` belongs to the shard.
    ///
    /// - Parameter notAfter: The certificate's notAfter.
    /// - Returns: `true` when `startInclusive <= notAfter < endExclusive`.
    public func contains(_ notAfter: ASN1Time) -> Bool { startInclusive <= notAfter && notAfter < endExclusive }

    /// `[start, end)` in RFC 3339.
    public var description: String { "[\(startInclusive.rfc3339), \(endExclusive.rfc3339))" }
}
