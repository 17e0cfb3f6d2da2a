import TrustEvaluation

/// The one clock of the commands: the time their decisions and reports are made at.
enum CommandClock {
    /// The current time, seconds since 1970.
    static var now: Int64 { TrustClock.system.now() }
}
