/// The fixed clock every Lab fixture is dated against.
///
/// Fixtures are generated at test time with validity computed from this constant rather than
/// from the wall clock, so a certificate never "expires" in the repository and a test that
/// evaluates trust at ``reference`` gets the same answer forever.
public enum LabClock {
    /// 2026-01-01T00:00:00Z, in Unix seconds: the "now" that tests evaluate trust at.
    public static let reference: Int64 = 1_767_225_600

    /// One day in seconds.
    public static let day: Int64 = 86_400

    /// 365 days in seconds (the Lab's "year", used only to place validity windows).
    public static let year: Int64 = 365 * 86_400
}
