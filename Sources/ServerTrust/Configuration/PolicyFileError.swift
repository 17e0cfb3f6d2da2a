/// Every problem found in one configuration, one ``PolicyConfigurationError`` each.
public struct PolicyFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problems, in the order found (entries first, then cross-entry checks such as
    /// duplicate patterns).
    public let problems: [PolicyConfigurationError]

    /// Wraps problems (at least one).
    /// - Parameter problems: The problems found.
    public init(_ problems: [PolicyConfigurationError]) {
        self.problems = problems
    }

    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
