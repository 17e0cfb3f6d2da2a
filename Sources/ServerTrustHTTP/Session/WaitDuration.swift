extension Duration {
    /// The longest wait a configured number of seconds turns into: about 31,700 years, which
    /// stands for "no limit" (`.infinity`) and for any finite value past it.
    package static let longestWait: Duration = .seconds(1_000_000_000_000)

    /// `seconds` as a `Duration` a sleep or deadline can take: NaN, zero and below are `.zero`,
    /// and anything past ``longestWait`` (`.infinity` among them) is ``longestWait``.
    /// `Duration.milliseconds(Int64(seconds * 1000))` traps on a value `Int64` cannot hold, and
    /// a caller's "no limit" must not crash the process.
    ///
    /// - Parameter seconds: A time interval in seconds, as configurations spell it.
    /// - Returns: The interval, clamped to `.zero ... longestWait`, to the nearest nanosecond
    ///   rounded up, so a positive interval never becomes no wait.
    package static func wait(seconds: Double) -> Duration {
        guard seconds > 0 else { return .zero }  // NaN too
        guard seconds < 1_000_000_000_000 else { return longestWait }
        return .nanoseconds(Int64((seconds * 1e9).rounded(.up)))
    }
}
