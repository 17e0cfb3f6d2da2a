internal import CCollectorShims
internal import CSQLite

/// One SQLite connection (Debian's libsqlite3), the sole owner of its `sqlite3` handle and of
/// the prepared statements it caches; both are released in `deinit`.
///
/// Opened in WAL mode with `synchronous=FULL`: a transaction is on disk, WAL file synced,
/// when `COMMIT` returns, so a report acknowledged after its commit survives the process being
/// killed and the machine losing power (SQLite's "Write-Ahead Logging" and "PRAGMA
/// synchronous" documentation: NORMAL in WAL mode may lose the last transactions on power
/// loss, FULL does not). Readers on other connections do not block the writer.
package final class SQLiteConnection: SQLConnection {
    package let dialect = SQLDialect.sqlite
    /// The database file.
    package let path: String
    private let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (creating if needed) the database at `path`.
    /// - Parameters:
    ///   - path: The file.
    ///   - busyTimeout: Milliseconds to wait for another connection's write lock.
    package init(path: String, busyTimeout: Int32 = 10_000) throws(StoreError) {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &opened, flags, nil)
        guard let opened else { throw StoreError("open \(path)", "out of memory") }
        guard status == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(opened))
            sqlite3_close_v2(opened)
            throw StoreError("open \(path)", message)
        }
        self.handle = opened
        self.path = path
        sqlite3_busy_timeout(opened, busyTimeout)
        sqlite3_extended_result_codes(opened, 1)
        let mode = try execute("PRAGMA journal_mode=WAL").first?.text(0)
        guard mode?.lowercased() == "wal" else { throw StoreError("open \(path)", "WAL journal mode refused (got \(mode ?? "nothing"))") }
        _ = try execute("PRAGMA synchronous=FULL")
        _ = try execute("PRAGMA foreign_keys=ON")
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    package func execute(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        guard Int(sqlite3_bind_parameter_count(statement)) == parameters.count else {
            throw StoreError("bind", "\(parameters.count) values for \(sqlite3_bind_parameter_count(statement)) placeholders")
        }
        for (offset, value) in parameters.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(statement, index)
            case .integer(let number): status = sqlite3_bind_int64(statement, index, number)
            case .text(let text):
                status = text.withCString { pointer in
                    CCollectorShims_sqlite3_bind_text_transient(statement, index, pointer, Int32(text.utf8.count))
                }
            }
            guard status == SQLITE_OK else { throw StoreError("bind", message) }
        }
        var rows: [SQLRow] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw StoreError(Self.operation(sql), message) }
            let columns = sqlite3_column_count(statement)
            var values: [SQLValue] = []
            values.reserveCapacity(Int(columns))
            for column in 0..<columns {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_NULL: values.append(.null)
                case SQLITE_INTEGER: values.append(.integer(sqlite3_column_int64(statement, column)))
                default:
                    if let text = sqlite3_column_text(statement, column) {
                        let count = Int(sqlite3_column_bytes(statement, column))
                        values.append(.text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)))
                    } else {
                        values.append(.null)
                    }
                }
            }
            rows.append(SQLRow(values: values))
        }
    }

    private var message: String { String(cString: sqlite3_errmsg(handle)) }

    private func prepared(_ sql: String) throws(StoreError) -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else { throw StoreError("prepare \(Self.operation(sql))", message) }
        statements[sql] = statement
        return statement
    }

    /// The first words of a statement, for error messages.
    static func operation(_ sql: String) -> String {
        sql.split(whereSeparator: { $0 == " " || $0 == "\n" }).prefix(3).joined(separator: " ")
    }
}
