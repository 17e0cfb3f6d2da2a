internal import Foundation

/// A log list naming Lab logs, written in Chrome's v3 JSON schema
/// (www.gstatic.com/ct/log_list/v3/log_list_schema.json) or in the shape of Apple's list
/// (valid.apple.com/ct/log_list/current_log_list.json: the same operators and logs, no
/// `log_list_timestamp`, `assetVersion` fields instead), optionally signed.
///
/// ```swift
/// let list = LabCTLogList(logs: [alpha, beta])
/// let json = try list.json()
/// let signature = try list.signature(over: json, with: listKey)
/// ```
public struct LabCTLogList: Sendable, Hashable {
    /// The JSON shape.
    public enum Format: Sendable, Hashable {
        /// Chrome's v3 schema, with `version` and `log_list_timestamp`.
        case chromeV3
        /// Apple's list: `version`, `assetVersion`, `assetVersionV2`, no timestamp.
        case apple
    }

    /// The logs; operators are grouped by ``LabCTLog/operatorName`` in first-seen order.
    public var logs: [LabCTLog]
    /// `log_list_timestamp` (Unix seconds).
    public var timestamp: Int64
    /// The list's `version`.
    public var version: String

    /// Creates a list.
    ///
    /// - Parameters:
    ///   - logs: The logs.
    ///   - timestamp: Its timestamp (default a day before ``LabClock/reference``).
    ///   - version: Its version text.
    public init(logs: [LabCTLog], timestamp: Int64 = LabClock.reference - LabClock.day, version: String = "1.0") {
        self.logs = logs
        self.timestamp = timestamp
        self.version = version
    }

    /// The list as JSON (keys sorted, so equal lists give equal bytes).
    ///
    /// - Parameter format: Chrome's v3 schema or Apple's shape.
    /// - Returns: UTF-8 JSON.
    /// - Throws: ``LabError`` if serialization fails.
    public func json(format: Format = .chromeV3) throws -> [UInt8] {
        var operatorNames: [String] = []
        for log in logs where !operatorNames.contains(log.operatorName) { operatorNames.append(log.operatorName) }
        let operators: [[String: Any]] = operatorNames.map { name in
            let own = logs.filter { $0.operatorName == name }
            let slug = name.lowercased().filter { $0.isLetter || $0.isNumber }
            return [
                "name": name,
                "email": ["ct@\(slug).example"],
                "logs": own.filter { !$0.isTiled }.map(Self.entry),
                "tiled_logs": own.filter(\.isTiled).map(Self.entry),
            ]
        }
        var top: [String: Any] = ["version": version, "operators": operators]
        switch format {
        case .chromeV3:
            top["log_list_timestamp"] = Self.rfc3339(timestamp)
        case .apple:
            top["assetVersion"] = 1
            top["assetVersionV2"] = 1
        }
        do {
            return Array(try JSONSerialization.data(withJSONObject: top, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]))
        } catch {
            throw LabError.invalid("LabCTLogList.json", "\(error)")
        }
    }

    /// A detached signature over `json` (as Chrome's `log_list.sig` is over `log_list.json`):
    /// RSASSA-PKCS1-v1_5 with SHA-256 for an RSA key, ECDSA with SHA-256 for an EC key,
    /// Ed25519 for an Ed25519 key.
    ///
    /// - Parameters:
    ///   - json: The exact bytes to sign.
    ///   - key: The list signing key.
    /// - Returns: The signature.
    /// - Throws: ``LabError`` if signing fails.
    public func signature(over json: [UInt8], with key: LabKey) throws -> [UInt8] {
        let scheme: LabSignatureScheme = key.algorithm.isEC ? .ecdsa(.sha256) : .default(for: key.algorithm)
        return try scheme.sign(json, with: key)
    }

    private static func entry(_ log: LabCTLog) -> [String: Any] {
        var state: [String: Any] = ["timestamp": rfc3339(log.stateSince)]
        if log.state == .readOnly {
            state["final_tree_head"] = ["tree_size": 1, "sha256_root_hash": Data(repeating: 0, count: 32).base64EncodedString()]
        }
        let slug = log.name.lowercased().filter { $0.isLetter || $0.isNumber }
        var entry: [String: Any] = [
            "description": log.name,
            "log_id": Data(log.logID).base64EncodedString(),
            "key": Data(log.key.publicKeyInfoDER).base64EncodedString(),
            "mmd": log.maximumMergeDelay,
            "state": [log.state.rawValue: state],
        ]
        if log.isTiled {
            entry["submission_url"] = "https://\(slug).example/"
            entry["monitoring_url"] = "https://\(slug)-tiles.example/"
        } else {
            entry["url"] = "https://\(slug).example/ct/v1/"
        }
        if let interval = log.temporalInterval {
            entry["temporal_interval"] = ["start_inclusive": rfc3339(interval.lowerBound), "end_exclusive": rfc3339(interval.upperBound)]
        }
        if !log.previousOperators.isEmpty {
            entry["previous_operators"] = log.previousOperators.map { ["name": $0.name, "end_time": rfc3339($0.endTime)] }
        }
        return entry
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`.
    static func rfc3339(_ seconds: Int64) -> String {
        let c = LabCalendar.components(seconds)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))T\(pad(c.hour, 2)):\(pad(c.minute, 2)):\(pad(c.second, 2))Z"
    }
}
