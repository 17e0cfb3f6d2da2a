/// Where the reports live: `sqlite:PATH` (the default, embedded) or a PostgreSQL URL
/// (`postgres://…` / `postgresql://…`, shared by several collectors).
package enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    /// An SQLite file.
    case sqlite(path: String)
    /// A PostgreSQL connection URL, as libpq reads it.
    case postgres(url: String)

    /// Parses `--db`: `sqlite:PATH`, `postgres://…` or `postgresql://…`.
    package init(_ text: String) throws(StoreError) {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw StoreError("--db", "sqlite: needs a file path (sqlite:/var/lib/servertrust/reports.db)") }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(url: text)
        } else {
            throw StoreError("--db", "expected sqlite:PATH or postgres://… (got \(text.prefix(12))…)")
        }
    }

    /// Opens one new connection.
    package func connect() throws(StoreError) -> any SQLConnection {
        switch self {
        case .sqlite(let path): return try SQLiteConnection(path: path)
        case .postgres(let url): return try PostgresConnection(url: url)
        }
    }

    /// The location without a password (for the first line and logs).
    package var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:" + path
        case .postgres(let url):
            // postgres://user:secret@host/db → postgres://user:***@host/db
            guard let schemeEnd = url.range(of: "://"), let at = url[schemeEnd.upperBound...].firstIndex(of: "@") else { return url }
            let credentials = url[schemeEnd.upperBound..<at]
            guard let colon = credentials.firstIndex(of: ":") else { return url }
            return String(url[..<colon]) + ":***" + String(url[at...])
        }
    }
}
