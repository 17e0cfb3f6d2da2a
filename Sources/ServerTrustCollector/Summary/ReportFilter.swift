/// Which reports a summary or a chain list covers: by host, by app bundle and by time (a
/// report row counts when its first-to-last-received span meets the interval).
package struct ReportFilter: Sendable, Hashable, Codable {
    /// An exact host name.
    package var host: String?
    /// An exact `app-bundle-id`.
    package var app: String?
    /// Seconds since 1970, inclusive.
    package var since: Int64?
    /// Seconds since 1970, inclusive.
    package var until: Int64?

    package init(host: String? = nil, app: String? = nil, since: Int64? = nil, until: Int64? = nil) {
        self.host = host
        self.app = app
        self.since = since
        self.until = until
    }

    /// Whether nothing is filtered.
    package var isEmpty: Bool { host == nil && app == nil && since == nil && until == nil }

    /// The `WHERE` conditions on `reports r`, with their values (always bound, never spliced).
    func sql() -> (clause: String, values: [SQLValue]) {
        var conditions: [String] = []
        var values: [SQLValue] = []
        if let host {
            conditions.append("r.hostname = ?")
            values.append(.text(host))
        }
        if let app {
            conditions.append("r.app_bundle_id = ?")
            values.append(.text(app))
        }
        if let since {
            conditions.append("r.last_received >= ?")
            values.append(.integer(since))
        }
        if let until {
            conditions.append("r.first_received <= ?")
            values.append(.integer(until))
        }
        return (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "), values)
    }
}
