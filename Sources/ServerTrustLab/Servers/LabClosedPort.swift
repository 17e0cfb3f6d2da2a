internal import Synchronization

/// A loopback TCP port where nothing listens, held for as long as this object lives: a
/// connection to it is refused (the kernel answers the SYN with a reset).
///
/// The port is bound by a socket that never listens and does not set `SO_REUSEADDR`, so no
/// other socket can take it meanwhile. A port merely found free (bound, then released) can be
/// taken at once by a server that a test running in parallel starts, and a request meant to be
/// refused then reaches that server instead.
///
/// ```swift
/// let closed = try LabClosedPort()
/// defer { closed.close() }
/// // curl https://127.0.0.1:\(closed.port)/   → curl: (7) Failed to connect … Connection refused
/// ```
package final class LabClosedPort: Sendable {
    /// The port, on `127.0.0.1` (or `::1` for ``LabLoopbackAddress/ipv6``).
    package let port: UInt16
    private let socket: Mutex<LabSocket?>

    /// Binds a port chosen by the OS.
    ///
    /// - Parameter address: The loopback address to bind.
    /// - Throws: ``LabError`` when the socket cannot be created or bound.
    package init(on address: LabLoopbackAddress = .ipv4) throws {
        let (socket, port) = try LabSocket.bound(on: address)
        self.port = port
        self.socket = Mutex(socket)
    }

    /// Releases the port (later calls do nothing); `deinit` does the same.
    package func close() {
        let socket = self.socket.withLock { held -> LabSocket? in
            defer { held = nil }
            return held
        }
        socket?.close()
    }

    deinit { close() }
}
