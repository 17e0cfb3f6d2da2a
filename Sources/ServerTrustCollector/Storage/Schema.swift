import Foundation

/// The collector's schema, one for both backends, and its migrations.
///
/// `collector_schema_migrations` records every migration applied (version, description,
/// time). ``migrate(_:clock:)`` applies the missing ones in order, each in its own
/// transaction, under a lock (SQLite's write lock, a PostgreSQL transaction-level advisory
/// lock), so several collectors starting at once against one PostgreSQL database migrate it
/// exactly once. A database migrated by a newer collector (a version this one does not know)
/// is refused rather than written with a schema this code does not understand.
package enum Schema {
    /// One migration: statements with `{id}` for the backend's auto-numbered primary key.
    package struct Migration: Sendable {
        package let version: Int64
        package let description: String
        package let statements: [String]
    }

    /// The migrations, oldest first. Never edit one that shipped; add the next.
    package static let migrations: [Migration] = [
        Migration(
            version: 1, description: "chains, reports (deduplicated per window), their indexes",
            statements: [
                """
                CREATE TABLE chains (
                    id {id},
                    fingerprint TEXT NOT NULL UNIQUE,
                    certificates TEXT NOT NULL,
                    leaf_subject TEXT NOT NULL,
                    leaf_pin TEXT NOT NULL,
                    issuer TEXT NOT NULL,
                    root TEXT NOT NULL,
                    classification TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    validates BIGINT NOT NULL,
                    classified_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE reports (
                    id {id},
                    dedupe_key TEXT NOT NULL,
                    window_start BIGINT NOT NULL,
                    chain_id BIGINT NOT NULL REFERENCES chains(id),
                    first_received BIGINT NOT NULL,
                    last_received BIGINT NOT NULL,
                    occurrences BIGINT NOT NULL,
                    reported_at BIGINT,
                    hostname TEXT NOT NULL,
                    port BIGINT NOT NULL,
                    noted_hostname TEXT NOT NULL,
                    include_subdomains BIGINT,
                    enforce_pinning BIGINT,
                    validation_result BIGINT NOT NULL,
                    known_pins TEXT NOT NULL,
                    known_pins_expiration BIGINT,
                    app_bundle_id TEXT,
                    app_version TEXT,
                    app_vendor_id TEXT,
                    app_platform TEXT,
                    app_platform_version TEXT,
                    reporter_version TEXT,
                    served_certificates TEXT,
                    source TEXT NOT NULL,
                    unknown_fields TEXT NOT NULL,
                    UNIQUE (dedupe_key, window_start)
                )
                """,
                "CREATE INDEX reports_last_received ON reports (last_received)",
                "CREATE INDEX reports_hostname ON reports (hostname)",
                "CREATE INDEX reports_chain ON reports (chain_id)",
                "CREATE INDEX reports_app ON reports (app_bundle_id)",
            ])
    ]

    /// The newest version this code knows.
    package static var currentVersion: Int64 { migrations.last?.version ?? 0 }

    /// Brings the database to ``currentVersion``.
    /// - Returns: The versions applied now (empty when it was up to date).
    @discardableResult
    package static func migrate(_ connection: any SQLConnection, now: Int64) throws(StoreError) -> [Int64] {
        let ledger =
            "CREATE TABLE IF NOT EXISTS collector_schema_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL, applied_at BIGINT NOT NULL)"
        // Two PostgreSQL sessions creating the same table at once can both pass IF NOT EXISTS
        // and one fails on the catalog's unique index; the second try sees the table.
        do { _ = try connection.execute(ledger) } catch { _ = try connection.execute(ledger) }
        var applied: [Int64] = []
        for migration in migrations {
            let done: Bool = try connection.transaction { () throws(StoreError) -> Bool in
                if connection.dialect == .postgres { _ = try connection.execute("SELECT pg_advisory_xact_lock(7274201)") }
                let newest = try connection.execute("SELECT MAX(version) FROM collector_schema_migrations").first?.int(0) ?? 0
                guard newest <= currentVersion else {
                    throw StoreError(
                        "migrate", "the database is at schema version \(newest), newer than this collector's \(currentVersion): upgrade the collector")
                }
                guard newest < migration.version else { return false }
                for statement in migration.statements { _ = try connection.execute(expand(statement, connection.dialect)) }
                _ = try connection.execute(
                    "INSERT INTO collector_schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
                    [.integer(migration.version), .text(migration.description), .integer(now)])
                return true
            }
            if done { applied.append(migration.version) }
        }
        return applied
    }

    /// The version the database is at.
    package static func version(_ connection: any SQLConnection) throws(StoreError) -> Int64 {
        try connection.execute("SELECT MAX(version) FROM collector_schema_migrations").first?.int(0) ?? 0
    }

    static func expand(_ statement: String, _ dialect: SQLDialect) -> String {
        let id = dialect == .sqlite ? "INTEGER PRIMARY KEY AUTOINCREMENT" : "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
        return statement.replacingOccurrences(of: "{id}", with: id)
    }
}
