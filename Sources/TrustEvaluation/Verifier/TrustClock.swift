#if canImport(Glibc)
    import Glibc
#endif

/// Where an evaluation gets "now" from: the system clock in production, a fixed or stepped
/// clock in tests.
///
/// The one clock of the library and the only way to say "now": a decision reads its clock once
/// and hands that instant to every validation (``Verifier/validate(leaf:intermediates:at:checks:trace:)``),
/// pin window, pin-set expiry, report date and rate limit of the decision, so nothing
/// time-dependent needs the wall clock to be tested. Apple's `SecTrustSetVerifyDate` is the only injectable clock
/// among the systems we reproduce; a fixed instant there is a fixed clock here.
public struct TrustClock: Sendable {
    private let source: @Sendable () -> Int64

    /// A clock reading seconds since 1970 from `now`.
    /// - Parameter now: Returns the current instant in seconds since 1970 (UTC).
    public init(_ now: @escaping @Sendable () -> Int64) {
        self.source = now
    }

    /// The current instant, in seconds since 1970 (UTC).
    public func now() -> Int64 { source() }

    /// The system's real-time clock (`CLOCK_REALTIME`).
    public static let system = TrustClock {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec)
    }

    /// A clock that always reads `instant`.
    /// - Parameter instant: Seconds since 1970 (UTC).
    /// - Returns: The fixed clock.
    public static func fixed(_ instant: Int64) -> TrustClock {
        TrustClock { instant }
    }
}
