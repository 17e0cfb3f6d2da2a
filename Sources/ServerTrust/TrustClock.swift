import Foundation

/// Where an evaluation gets "now" from: the system clock in production, a fixed or stepped
/// clock in tests.
///
/// Everything time-dependent in this module (chain validity when no ``PeerTrust/verifyTime`` is
/// set, pin-set expiry, per-pin windows, report dates, the report rate limiter) reads time
/// through a `TrustClock`, so none of it needs the wall clock to be tested. Apple's
/// `SecTrustSetVerifyDate` is the only injectable clock among the systems we reproduce
/// (anchors-features.md §(c) 18).
public struct TrustClock: Sendable {
    private let source: @Sendable () -> Int64

    /// A clock reading seconds since 1970 from `now`.
    /// - Parameter now: Returns the current instant in seconds since 1970 (UTC).
    public init(_ now: @escaping @Sendable () -> Int64) {
        self.source = now
    }

    /// The current instant, in seconds since 1970 (UTC).
    public func now() -> Int64 { source() }

    /// The system's real-time clock.
    public static let system = TrustClock { Int64(Date().timeIntervalSince1970) }

    /// A clock that always reads `instant`.
    /// - Parameter instant: Seconds since 1970 (UTC).
    /// - Returns: The fixed clock.
    public static func fixed(_ instant: Int64) -> TrustClock {
        TrustClock { instant }
    }
}
