import CertificateParsing
import Synchronization

/// A validated, classified report on its way into the store.
package struct IncomingReport: Sendable {
    package let report: ReceivedReport
    package let fingerprint: String
    package let classification: ChainClassification
    /// When the collector received it, seconds since 1970.
    package let receivedAt: Int64
    /// The client address it came from.
    package let source: String

    /// - Parameter fingerprint: The chain row's identity: the report's
    ///   ``ReceivedReport/chainFingerprint`` unless the classification depended on more.
    package init(report: ReceivedReport, fingerprint: String? = nil, classification: ChainClassification, receivedAt: Int64, source: String) {
        self.report = report
        self.fingerprint = fingerprint ?? report.chainFingerprint
        self.classification = classification
        self.receivedAt = receivedAt
        self.source = source
    }
}

/// The reports and chains in SQLite or PostgreSQL, through one writer connection and one
/// reader connection, each with exactly one owner (its lock).
///
/// Writes come in batches (``record(_:)``), each one transaction: a batch is stored entirely
/// or not at all, and is durable when the call returns. Reports that repeat one already
/// stored within ``deduplicationWindow`` (same ``ReceivedReport/deduplicationKey``) add to its
/// `occurrences` instead of adding a row: `INSERT … ON CONFLICT (dedupe_key, window_start) DO
/// UPDATE`, atomic in both backends, so collectors sharing a PostgreSQL database count
/// together.
package final class ReportStore: Sendable {
    package let location: DatabaseLocation
    /// Seconds over which identical reports are counted in one row.
    package let deduplicationWindow: Int64
    private let writer: Mutex<Writer>
    private let reader: Mutex<any SQLConnection>

    private struct Writer: ~Copyable {
        var connection: any SQLConnection
        /// Chain ids by fingerprint, of committed rows only.
        var chainIDs: [String: Int64] = [:]
    }

    /// Opens the database and brings its schema up to date.
    /// - Parameters:
    ///   - location: The database.
    ///   - deduplicationWindow: Seconds (at least 1).
    ///   - now: The migration's timestamp.
    package init(_ location: DatabaseLocation, deduplicationWindow: Int64 = 3600, now: Int64) throws(StoreError) {
        self.location = location
        self.deduplicationWindow = max(1, deduplicationWindow)
        let connection = try location.connect()
        try Schema.migrate(connection, now: now)
        self.writer = Mutex(Writer(connection: connection))
        self.reader = Mutex(try location.connect())
    }

    // MARK: - Writing

    /// Stores `batch` in one transaction; durable when this returns.
    package func record(_ batch: [IncomingReport]) throws(StoreError) {
        guard !batch.isEmpty else { return }
        let window = deduplicationWindow
        try writer.withLock { (writer: inout Writer) throws(StoreError) in
            let connection = writer.connection
            let known = writer.chainIDs
            // A failed batch forgets the cached chain ids: one may name a chain another
            // collector's retention deleted meanwhile, and the next batch must look it up again.
            var failed = true
            defer { if failed { writer.chainIDs = [:] } }
            let added = try connection.transaction { () throws(StoreError) -> [String: Int64] in
                var added: [String: Int64] = [:]
                for item in batch {
                    let chainID: Int64
                    if let id = known[item.fingerprint] ?? added[item.fingerprint] {
                        chainID = id
                    } else {
                        chainID = try Self.insertChain(item, connection)
                        added[item.fingerprint] = chainID
                    }
                    try Self.insertReport(item, chainID: chainID, window: window, connection)
                }
                return added
            }
            failed = false
            writer.chainIDs.merge(added) { old, _ in old }
        }
    }

    private static func insertChain(_ item: IncomingReport, _ connection: any SQLConnection) throws(StoreError) -> Int64 {
        let verdict = item.classification
        _ = try connection.execute(
            """
            INSERT INTO chains (fingerprint, certificates, leaf_subject, leaf_pin, issuer, root, classification, reason, validates, classified_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (fingerprint) DO NOTHING
            """,
            [
                .text(item.fingerprint), .text(item.report.validatedChain.map(\.pemString).joined()), .text(verdict.leafSubject),
                .text(verdict.leafPin), .text(verdict.issuer), .text(verdict.root), .text(verdict.chainClass.rawValue), .text(verdict.reason),
                .bool(verdict.validatesAgainstPublicRoots), .integer(item.receivedAt),
            ])
        guard let id = try connection.execute("SELECT id FROM chains WHERE fingerprint = ?", [.text(item.fingerprint)]).first?.int(0) else {
            throw StoreError("insert chain", "the chain row is missing after its insert")
        }
        return id
    }

    private static func insertReport(_ item: IncomingReport, chainID: Int64, window: Int64, _ connection: any SQLConnection) throws(StoreError) {
        let report = item.report
        let app = report.app
        _ = try connection.execute(
            """
            INSERT INTO reports (dedupe_key, window_start, chain_id, first_received, last_received, occurrences, reported_at, hostname, port,
                noted_hostname, include_subdomains, enforce_pinning, validation_result, known_pins, known_pins_expiration, app_bundle_id,
                app_version, app_vendor_id, app_platform, app_platform_version, reporter_version, served_certificates, source, unknown_fields)
            VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (dedupe_key, window_start) DO UPDATE SET occurrences = reports.occurrences + 1,
                last_received = CASE WHEN excluded.last_received > reports.last_received THEN excluded.last_received ELSE reports.last_received END
            """,
            [
                .text(report.deduplicationKey), .integer(item.receivedAt - item.receivedAt % window), .integer(chainID),
                .integer(item.receivedAt), .integer(item.receivedAt), .optional(report.reportedAt), .text(report.hostname),
                .integer(Int64(report.port)), .text(report.notedHostname), .optional(report.includeSubdomains.map { $0 ? 1 : 0 }),
                .optional(report.enforcePinning.map { $0 ? 1 : 0 }), .integer(Int64(report.validationResult)),
                .text(report.knownPins.map(\.rfc7469).joined(separator: ",")), .optional(report.knownPinsExpiration), .optional(app.bundleID),
                .optional(app.version), .optional(app.vendorID), .optional(app.platform), .optional(app.platformVersion),
                .optional(app.reporterVersion), .optional(report.servedChain.map { $0.map(\.pemString).joined() }), .text(item.source),
                .text(report.unknownFields),
            ])
    }

    /// Deletes reports last received before `cutoff` and the chains no report refers to any
    /// more (`--retain-days`).
    /// - Returns: The report rows deleted.
    @discardableResult
    package func purge(receivedBefore cutoff: Int64) throws(StoreError) -> Int64 {
        try writer.withLock { (writer: inout Writer) throws(StoreError) -> Int64 in
            let connection = writer.connection
            let deleted = try connection.transaction { () throws(StoreError) -> Int64 in
                let count = try connection.execute("SELECT COUNT(*) FROM reports WHERE last_received < ?", [.integer(cutoff)]).first?.int(0) ?? 0
                _ = try connection.execute("DELETE FROM reports WHERE last_received < ?", [.integer(cutoff)])
                // Only chains first seen before the cutoff: a chain another collector has just
                // inserted, whose report is not committed yet, is left alone.
                _ = try connection.execute(
                    "DELETE FROM chains WHERE classified_at < ? AND NOT EXISTS (SELECT 1 FROM reports WHERE reports.chain_id = chains.id)",
                    [.integer(cutoff)])
                return count
            }
            writer.chainIDs = [:]
            return deleted
        }
    }

    // MARK: - Reading

    private func query(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> [SQLRow] {
        try reader.withLock { (connection: inout any SQLConnection) throws(StoreError) -> [SQLRow] in try connection.execute(sql, values) }
    }

    /// The summary of the reports `filter` selects.
    package func summary(_ filter: ReportFilter, now: Int64) throws(StoreError) -> Summary {
        let (clause, values) = filter.sql()
        let totals = try query(
            """
            SELECT COALESCE(SUM(r.occurrences), 0), COUNT(*), COUNT(DISTINCT r.chain_id), COUNT(DISTINCT r.hostname),
                COUNT(DISTINCT r.app_vendor_id), MIN(r.first_received), MAX(r.last_received) FROM reports r\(clause)
            """, values
        ).first
        var byClass: [ChainClass: Summary.ClassCount] = [:]
        for row in try query(
            "SELECT c.classification, COALESCE(SUM(r.occurrences), 0), COUNT(DISTINCT r.chain_id) FROM reports r JOIN chains c ON c.id = r.chain_id\(clause) GROUP BY c.classification",
            values)
        {
            guard let name = row.text(0), let chainClass = ChainClass(rawValue: name) else { continue }
            byClass[chainClass] = Summary.ClassCount(classification: chainClass, reports: row.int(1) ?? 0, chains: row.int(2) ?? 0)
        }
        var hosts: [String: Summary.HostCount] = [:]
        for row in try query(
            "SELECT r.hostname, c.classification, SUM(r.occurrences) FROM reports r JOIN chains c ON c.id = r.chain_id\(clause) GROUP BY r.hostname, c.classification",
            values)
        {
            guard let host = row.text(0), let name = row.text(1) else { continue }
            let count = row.int(2) ?? 0
            hosts[host, default: Summary.HostCount(host: host, reports: 0, byClass: [:])].reports += count
            hosts[host]?.byClass[name, default: 0] += count
        }
        let versions = try query(
            """
            SELECT COALESCE(r.app_bundle_id, ''), COALESCE(r.app_version, ''), SUM(r.occurrences) FROM reports r\(clause)
            GROUP BY COALESCE(r.app_bundle_id, ''), COALESCE(r.app_version, '') ORDER BY 3 DESC, 1, 2 LIMIT 25
            """, values
        ).map { Summary.AppVersionCount(app: $0.text(0) ?? "", version: $0.text(1) ?? "", reports: $0.int(2) ?? 0) }
        let first = totals?.int(5)
        let last = totals?.int(6)
        let span = (last ?? now) - (first ?? now)
        let bucket: Int64 = span <= 2 * 3600 ? 300 : span <= 3 * 86_400 ? 3600 : 86_400
        let timeline = try query(
            """
            SELECT r.hostname, c.classification, (r.first_received / CAST(? AS BIGINT)) * CAST(? AS BIGINT), SUM(r.occurrences)
            FROM reports r JOIN chains c ON c.id = r.chain_id\(clause) GROUP BY 1, 2, 3 ORDER BY 3, 1, 2
            """, [.integer(bucket), .integer(bucket)] + values
        ).compactMap { row -> Summary.TimelinePoint? in
            guard let host = row.text(0), let name = row.text(1), let chainClass = ChainClass(rawValue: name), let start = row.int(2) else { return nil }
            return Summary.TimelinePoint(host: host, classification: chainClass, start: start, reports: row.int(3) ?? 0)
        }
        return Summary(
            filter: filter, generatedAt: now, reports: totals?.int(0) ?? 0, storedRows: totals?.int(1) ?? 0, chains: totals?.int(2) ?? 0,
            hosts: totals?.int(3) ?? 0, devices: totals?.int(4) ?? 0, firstReceived: first, lastReceived: last,
            byClass: ChainClass.allCases.map { byClass[$0] ?? Summary.ClassCount(classification: $0, reports: 0, chains: 0) },
            byHost: hosts.values.sorted { ($0.reports, $1.host) > ($1.reports, $0.host) }, appVersions: versions, bucketSeconds: bucket,
            timeline: timeline)
    }

    /// The distinct failing chains `filter` selects, most reported first.
    package func chains(_ filter: ReportFilter, limit: Int = 50) throws(StoreError) -> [ChainSummary] {
        let (clause, values) = filter.sql()
        let rows = try query(
            """
            SELECT c.id, c.fingerprint, c.classification, c.reason, c.validates, c.root, c.issuer, c.leaf_subject, c.leaf_pin, c.certificates,
                MIN(r.first_received), MAX(r.last_received), SUM(r.occurrences), COUNT(DISTINCT r.app_vendor_id)
            FROM chains c JOIN reports r ON r.chain_id = c.id\(clause)
            GROUP BY c.id, c.fingerprint, c.classification, c.reason, c.validates, c.root, c.issuer, c.leaf_subject, c.leaf_pin, c.certificates
            ORDER BY 13 DESC, 2 LIMIT CAST(? AS BIGINT)
            """, values + [.integer(Int64(max(1, limit)))])
        var details: [Int64: (hosts: [String: Int64], versions: [String: Int64])] = [:]
        for row in try query(
            """
            SELECT r.chain_id, r.hostname, COALESCE(r.app_bundle_id, ''), COALESCE(r.app_version, ''), SUM(r.occurrences) FROM reports r\(clause)
            GROUP BY r.chain_id, r.hostname, COALESCE(r.app_bundle_id, ''), COALESCE(r.app_version, '')
            """, values)
        {
            guard let id = row.int(0), let host = row.text(1) else { continue }
            let count = row.int(4) ?? 0
            let app = [row.text(2) ?? "", row.text(3) ?? ""].filter { !$0.isEmpty }.joined(separator: " ")
            details[id, default: ([:], [:])].hosts[host, default: 0] += count
            details[id, default: ([:], [:])].versions[app.isEmpty ? "-" : app, default: 0] += count
        }
        func ranked(_ counts: [String: Int64]) -> [String] { counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map(\.key) }
        return rows.compactMap { row -> ChainSummary? in
            guard let id = row.int(0), let fingerprint = row.text(1), let chainClass = row.text(2).flatMap(ChainClass.init(rawValue:)) else { return nil }
            let verdict = ChainClassification(
                chainClass: chainClass, reason: row.text(3) ?? "", validatesAgainstPublicRoots: row.int(4) == 1, root: row.text(5) ?? "",
                issuer: row.text(6) ?? "", leafSubject: row.text(7) ?? "", leafPin: row.text(8) ?? "")
            return ChainSummary(
                fingerprint: fingerprint, classification: verdict, firstSeen: row.int(10) ?? 0, lastSeen: row.int(11) ?? 0, reports: row.int(12) ?? 0,
                devices: row.int(13) ?? 0, hosts: ranked(details[id]?.hosts ?? [:]), appVersions: ranked(details[id]?.versions ?? [:]),
                certificates: row.text(9) ?? "")
        }
    }

    /// Every stored `app-vendor-id` with its occurrences (tests and the load benchmark match
    /// them against what was acknowledged).
    package func vendorIDs() throws(StoreError) -> [String: Int64] {
        var result: [String: Int64] = [:]
        for row in try query("SELECT app_vendor_id, SUM(occurrences) FROM reports WHERE app_vendor_id IS NOT NULL GROUP BY app_vendor_id", []) {
            if let id = row.text(0) { result[id] = row.int(1) ?? 0 }
        }
        return result
    }

    /// The unknown members stored with each report of `host` (tests read them back).
    package func unknownFields(host: String) throws(StoreError) -> [String] {
        try query("SELECT unknown_fields FROM reports WHERE hostname = ? ORDER BY id", [.text(host)]).compactMap { $0.text(0) }
    }

    /// The schema version.
    package func schemaVersion() throws(StoreError) -> Int64 {
        try reader.withLock { (connection: inout any SQLConnection) throws(StoreError) -> Int64 in try Schema.version(connection) }
    }
}
