import Foundation
import Synchronization
public import TrustEvaluation

/// Lets an identical failure report through at most once per interval, and remembers what it
/// let through in a file, so a restart does not resend (TrustKit's limiter is in memory only
/// and resets every 24 hours: `TSKReportsRateLimiter`).
///
/// Reports are "identical" when they are about the same host, pins and failure
/// (``PinFailureReport/rateLimitKey``), whatever chain was served: the chain is the attacker's
/// to vary, so it must not open a new report per connection.
///
/// The store is a small JSON object `{"version": 1, "sent": {"<report key>": <seconds>}}`,
/// rewritten atomically only when a report is let through, with entries older than the
/// interval dropped and at most ``maximumEntries`` kept (the oldest go first), so its size and
/// the cost of a rewrite stay bounded. An unreadable or corrupt store starts empty: the worst
/// outcome is one duplicate report, never a lost decision.
public final class ReportRateLimiter: Sendable {
    /// The interval, in seconds.
    public let interval: Int64
    /// The file remembering sent reports, or `nil` for memory only.
    public let storePath: String?
    private let clock: TrustClock
    private let sent: Mutex<[String: Int64]>

    /// The most reports remembered at once.
    public static let maximumEntries = 1024

    /// How many reports are remembered now.
    package var entryCount: Int { sent.withLock { $0.count } }

    /// Creates a limiter.
    /// - Parameters:
    ///   - storePath: Where to remember sent reports; `nil` keeps them in memory only.
    ///   - interval: The minimum time between identical reports (default 24 hours).
    ///   - clock: The time source.
    public init(storePath: String?, interval: Int64 = 86_400, clock: TrustClock = .system) {
        self.storePath = storePath
        self.interval = interval
        self.clock = clock
        self.sent = Mutex(Self.load(storePath))
    }

    /// Whether `report` may be sent now; if so, records it as sent.
    /// - Parameter report: The report.
    /// - Returns: `false` when an identical report was sent less than ``interval`` ago.
    public func shouldSend(_ report: PinFailureReport) -> Bool {
        let now = clock.now()
        let key = report.rateLimitKey
        let snapshot: [String: Int64]? = sent.withLock { table in
            if let last = table[key], now - last < interval, now >= last { return nil }
            table = table.filter { now - $0.value < interval && now >= $0.value }
            if table.count >= Self.maximumEntries {
                let oldest = table.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.prefix(table.count - Self.maximumEntries + 1)
                for entry in oldest { table.removeValue(forKey: entry.key) }
            }
            table[key] = now
            return table
        }
        guard let snapshot else { return false }
        save(snapshot)
        return true
    }

    private static func load(_ path: String?) -> [String: Int64] {
        guard let path, let bytes = try? TrustStore.readFile(path),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let entries = object["sent"] as? [String: Any]
        else { return [:] }
        var table: [String: Int64] = [:]
        for (key, value) in entries {
            if let number = value as? NSNumber { table[key] = number.int64Value }
        }
        // A store written by hand or by an older version may hold more; keep the newest.
        guard table.count > maximumEntries else { return table }
        return Dictionary(uniqueKeysWithValues: table.sorted { ($0.value, $0.key) > ($1.value, $1.key) }.prefix(maximumEntries).map { ($0.key, $0.value) })
    }

    private func save(_ table: [String: Int64]) {
        guard let storePath else { return }
        let object: [String: Any] = ["version": 1, "sent": table.mapValues { NSNumber(value: $0) }]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        try? data.write(to: URL(fileURLWithPath: storePath), options: .atomic)
    }
}
