internal import CLibPQ

#if canImport(Glibc)
    import Glibc
#endif

/// One PostgreSQL connection through libpq, the sole owner of its `PGconn` (closed in
/// `deinit`); every `PGresult` is cleared in the call that made it.
///
/// Statements are prepared once per connection (`PQprepare`) and run with `PQexecPrepared`,
/// values always sent as separate parameters in text format, never spliced into SQL. A
/// transaction is durable when `COMMIT` returns (the server's default `synchronous_commit=on`
/// flushes the WAL first). A connection the server dropped is re-opened before the next
/// statement; a statement that fails because of it fails, so nothing is acknowledged on a
/// write that did not happen.
package final class PostgresConnection: SQLConnection {
    package let dialect = SQLDialect.postgres
    private let handle: OpaquePointer
    /// Prepared statement names by SQL text (this connection's, lost on a reset).
    private var prepared: [String: String] = [:]

    /// Connects with a libpq connection string or `postgres://` / `postgresql://` URL.
    package init(url: String) throws(StoreError) {
        guard let connection = PQconnectdb(url) else { throw StoreError("connect", "out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(connection))
            PQfinish(connection)
            throw StoreError("connect to PostgreSQL", message)
        }
        handle = connection
        // Notices ("relation already exists, skipping") would go to stderr through libpq's
        // default processor; the collector reports errors itself.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        _ = try execute("SET client_min_messages = warning")
    }

    deinit { PQfinish(handle) }

    package func execute(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        if PQstatus(handle) != CONNECTION_OK {
            PQreset(handle)
            prepared = [:]
            guard PQstatus(handle) == CONNECTION_OK else { throw StoreError("reconnect to PostgreSQL", Self.trimmed(PQerrorMessage(handle))) }
        }
        let name = try statementName(sql, parameterCount: parameters.count)
        var texts: [UnsafeMutablePointer<CChar>?] = parameters.map { value in
            switch value {
            case .null: return nil
            case .integer(let number): return strdup(String(number))
            case .text(let text): return strdup(text)
            }
        }
        defer { for text in texts { free(text) } }
        let result = texts.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: max(buffer.count, 1)) { values in
                PQexecPrepared(handle, name, Int32(parameters.count), parameters.isEmpty ? nil : values, nil, nil, 0)
            }
        }
        defer { PQclear(result) }
        return try rows(result, operation: SQLiteConnection.operation(sql))
    }

    private func statementName(_ sql: String, parameterCount: Int) throws(StoreError) -> String {
        if let name = prepared[sql] { return name }
        let name = "st\(prepared.count + 1)"
        let result = PQprepare(handle, name, Self.numbered(sql), Int32(parameterCount), nil)
        defer { PQclear(result) }
        _ = try rows(result, operation: "prepare " + SQLiteConnection.operation(sql))
        prepared[sql] = name
        return name
    }

    private func rows(_ result: OpaquePointer?, operation: String) throws(StoreError) -> [SQLRow] {
        guard let result else { throw StoreError(operation, Self.trimmed(PQerrorMessage(handle))) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return []
        case PGRES_TUPLES_OK:
            let count = PQntuples(result)
            let columns = PQnfields(result)
            var rows: [SQLRow] = []
            rows.reserveCapacity(Int(count))
            for row in 0..<count {
                var values: [SQLValue] = []
                for column in 0..<columns {
                    if PQgetisnull(result, row, column) == 1 {
                        values.append(.null)
                    } else {
                        values.append(.text(String(cString: PQgetvalue(result, row, column))))
                    }
                }
                rows.append(SQLRow(values: values))
            }
            return rows
        default:
            throw StoreError(operation, Self.trimmed(PQresultErrorMessage(result)))
        }
    }

    /// `?` placeholders as PostgreSQL's `$1`, `$2`… (the collector's SQL has no `?` elsewhere).
    static func numbered(_ sql: String) -> String {
        var out = ""
        var index = 0
        for character in sql {
            if character == "?" {
                index += 1
                out += "$\(index)"
            } else {
                out.append(character)
            }
        }
        return out
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "unknown error" }
        return String(cString: message).split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
