import Foundation
import Synchronization
public import TrustEvaluation

/// Lets an identical failure report through at most once per interval, and remembers what it
/// let through in a file, so a restart does not resend (TrustKit's limiter is in memory only
/// and resets every 24 hours: `TSKReportsRateLimiter`).
///
/// The store is a small JSON object `{"version": 1, "sent": {"<report key>": <seconds>}}`,
/// rewritten atomically after each report let through, with entries older than the interval
/// dropped. An unreadable or corrupt store starts empty: the worst outcome is one duplicate
/// report, never a lost decision.
public final class ReportRateLimiter: Sendable {
    /// The interval, in seconds.
    public let interval: Int64
    /// The file remembering sent reports, or `nil` for memory only.
    public let storePath: String?
    private let clock: TrustClock
    private let sent: Mutex<[String: Int64]>

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
        return table
    }

    private func save(_ table: [String: Int64]) {
        guard let storePath else { return }
        let object: [String: Any] = ["version": 1, "sent": table.mapValues { NSNumber(value: $0) }]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        try? data.write(to: URL(fileURLWithPath: storePath), options: .atomic)
    }
}
