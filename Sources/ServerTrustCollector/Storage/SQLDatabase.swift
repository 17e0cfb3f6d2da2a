/// A value bound to, or read from, an SQL statement. Only these three: the schema stores
/// integers and text, so no value's meaning depends on a driver's type mapping.
package enum SQLValue: Hashable, Sendable {
    /// SQL NULL.
    case null
    /// A 64-bit integer.
    case integer(Int64)
    /// UTF-8 text.
    case text(String)

    /// `.text(value)`, or `.null` for `nil`.
    package static func optional(_ value: String?) -> SQLValue { value.map(SQLValue.text) ?? .null }
    /// `.integer(value)`, or `.null` for `nil`.
    package static func optional(_ value: Int64?) -> SQLValue { value.map(SQLValue.integer) ?? .null }
    /// 1 or 0.
    package static func bool(_ value: Bool) -> SQLValue { .integer(value ? 1 : 0) }
}

/// One result row. SQLite returns typed values; libpq (text format) returns text, which the
/// accessors convert, so callers read both the same way.
package struct SQLRow: Sendable {
    /// The columns, in the order the query selected them.
    package let values: [SQLValue]

    /// Column `index` as an integer (text holding a decimal integer, as libpq returns `SUM`
    /// and `COUNT`, is converted); `nil` for NULL, text that is no integer, or no such column.
    package func int(_ index: Int) -> Int64? {
        guard index < values.count else { return nil }
        switch values[index] {
        case .integer(let value): return value
        case .text(let text): return Int64(text)
        case .null: return nil
        }
    }

    /// Column `index` as text; `nil` for NULL or no such column.
    package func text(_ index: Int) -> String? {
        guard index < values.count else { return nil }
        switch values[index] {
        case .integer(let value): return String(value)
        case .text(let text): return text
        case .null: return nil
        }
    }
}

/// The SQL a backend speaks where the two differ.
package enum SQLDialect: String, Sendable {
    /// SQLite 3 (Debian's libsqlite3).
    case sqlite
    /// PostgreSQL through libpq.
    case postgres
}

/// A database failure: what was being done, and the driver's message.
package struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What failed, in words (`open`, `migrate`, `insert report`…).
    package let operation: String
    /// The driver's message.
    package let message: String

    package init(_ operation: String, _ message: String) {
        self.operation = operation
        self.message = message
    }

    package var description: String { "\(operation): \(message)" }
}

/// One connection to a database. Not shareable: every connection has exactly one owner at a
/// time (the writer thread, or the reader behind its lock). Statements carry `?` placeholders
/// whatever the backend; values are always bound, never spliced into the text.
package protocol SQLConnection: AnyObject {
    /// The backend's dialect.
    var dialect: SQLDialect { get }
    /// Runs one statement with `parameters` bound to its `?` placeholders, in order.
    func execute(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow]
}

extension SQLConnection {
    /// Runs one statement without parameters.
    package func execute(_ sql: String) throws(StoreError) -> [SQLRow] { try execute(sql, []) }

    /// Runs `body` inside a transaction: committed when it returns, rolled back when it throws.
    /// SQLite takes the write lock at once (`BEGIN IMMEDIATE`), so two writers never deadlock
    /// upgrading a read lock.
    package func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        _ = try execute(dialect == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            _ = try execute("COMMIT")
            return result
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }
}
