#if canImport(FoundationNetworking)
    internal import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif

extension URLSessionConfiguration {
    /// A copy of `base` whose `protocolClasses` start with `protocolClass`, so that every
    /// `http`, `https`, `ws` and `wss` request of a `URLSession` made from it goes through that
    /// class's session (``ServerTrustURLProtocol/session(for:)``): Foundation asks the classes
    /// in order and takes the first whose `canInit(with:)` answers `true`. Foundation's other
    /// protocols stay after it, for the schemes it does not claim.
    ///
    /// ```swift
    /// ServerTrustURLProtocol.register(httpSession)
    /// let urlSession = URLSession(configuration: .serverTrust())
    /// ```
    ///
    /// - Parameters:
    ///   - protocolClass: ``ServerTrustURLProtocol`` or a subclass with its own session.
    ///   - base: The configuration to copy (default `URLSessionConfiguration.default`).
    /// - Returns: The new configuration.
    public static func serverTrust(
        _ protocolClass: ServerTrustURLProtocol.Type = ServerTrustURLProtocol.self, base: URLSessionConfiguration = .default
    ) -> URLSessionConfiguration {
        let configuration = base.copy() as? URLSessionConfiguration ?? base
        let others = (configuration.protocolClasses ?? []).filter { ObjectIdentifier($0) != ObjectIdentifier(protocolClass) }
        configuration.protocolClasses = [protocolClass] + others
        return configuration
    }
}
