/// A pin that matched a certificate of the chain.
public struct PinMatch: Hashable, Sendable, CustomStringConvertible {
    /// The pin.
    public let pin: SPKIPin
    /// The chain position (0 = leaf).
    public let position: Int

    /// `sha256/… (leaf scope) at chain position 0`.
    public var description: String { "\(pin) (\(pin.scope.rawValue) scope) at chain position \(position)" }
}
