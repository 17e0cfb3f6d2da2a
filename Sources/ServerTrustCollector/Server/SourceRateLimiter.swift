import Synchronization

/// A token bucket per source address: each source may post `perMinute` reports a minute, in
/// bursts of up to `burst`. What protects the store from one device (or one attacker) in a
/// loop; deduplication then keeps what passes from adding rows.
///
/// The table is bounded: past ``maximumSources`` entries, the buckets that are full again
/// (sources quiet for a while) are forgotten, and if none is, the whole table starts over
/// (an attacker with many addresses gets at most one burst each per reset, never memory).
package final class SourceRateLimiter: Sendable {
    package let perMinute: Int
    package let burst: Int
    package let maximumSources: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    /// - Parameters:
    ///   - perMinute: Reports a source may post a minute; 0 turns the limit off.
    ///   - burst: The most in a row.
    ///   - maximumSources: Sources remembered.
    package init(perMinute: Int, burst: Int? = nil, maximumSources: Int = 100_000) {
        self.perMinute = perMinute
        self.burst = max(1, burst ?? max(10, perMinute / 2))
        self.maximumSources = maximumSources
    }

    /// Whether `source` may post now (and, if so, spends one token). `now` in seconds.
    package func admit(_ source: String, now: Double) -> Bool {
        guard perMinute > 0 else { return true }
        let rate = Double(perMinute) / 60
        let capacity = Double(burst)
        return buckets.withLock { table in
            var bucket = table[source] ?? Bucket(tokens: capacity, updated: now)
            bucket.tokens = min(capacity, bucket.tokens + max(0, now - bucket.updated) * rate)
            bucket.updated = now
            guard bucket.tokens >= 1 else {
                table[source] = bucket
                return false
            }
            bucket.tokens -= 1
            if table[source] == nil, table.count >= maximumSources {
                table = table.filter { capacity - ($0.value.tokens + max(0, now - $0.value.updated) * rate) > 0.5 }
                if table.count >= maximumSources { table = [:] }
            }
            table[source] = bucket
            return true
        }
    }

    /// Seconds until `source` has a token again (for `Retry-After`).
    package var retryAfterSeconds: Int { perMinute > 0 ? max(1, Int((60.0 / Double(perMinute)).rounded(.up))) : 0 }
}
