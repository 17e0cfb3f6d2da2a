internal import Glibc
internal import Synchronization

// The plumbing shared by LabTLSServer and LabMITMRelay: loopback listeners, owned sockets,
// deadline-and-stop-aware waiting, and joinable POSIX threads. Everything here is internal;
// the public types expose only ports, counters and Lab values.

/// How long a single `poll` may sleep before a blocked thread re-checks its stop flag.
///
/// Polling the flag (instead of a wake-up pipe) keeps every descriptor a server owns a TCP
/// socket, so a test can attribute each of them through `/proc/net/tcp`; 50 ms bounds how long
/// `stop()` waits for a blocked thread.
let labPollSlice: Duration = .milliseconds(50)

/// The reasons a blocking socket operation ends without producing data.
enum LabIOEnd: Error, Equatable {
    /// The owning server was stopped.
    case stopped
    /// The operation's deadline passed.
    case timedOut
    /// The peer closed the connection (clean EOF or TLS close_notify).
    case closed
    /// A socket or TLS failure, with the OS or OpenSSL reason.
    case failed(String)
}

/// A process-wide stop flag for one server: set once by `stop()`, read by every thread.
final class LabStopFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Whether the owner has been stopped.
    var isSet: Bool { flag.load(ordering: .acquiring) }

    /// Sets the flag; every wait notices within ``labPollSlice``.
    func set() { flag.store(true, ordering: .releasing) }
}

/// A point in monotonic time after which an operation gives up.
struct LabDeadline {
    let instant: ContinuousClock.Instant

    /// A deadline `seconds` from now.
    static func after(_ seconds: Double) -> LabDeadline {
        LabDeadline(instant: .now + .milliseconds(Int64(seconds * 1000)))
    }

    /// Milliseconds to pass to `poll`: what remains, capped at ``labPollSlice``, never negative.
    var pollMilliseconds: Int32 {
        let remaining = instant - .now
        let capped = min(remaining, labPollSlice)
        let (seconds, attoseconds) = capped.components
        return Int32(max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000))
    }

    var hasPassed: Bool { ContinuousClock.now >= instant }
}

/// The loopback interface a server binds to.
public enum LabLoopbackAddress: Sendable, Hashable, CustomStringConvertible {
    /// `127.0.0.1`.
    case ipv4
    /// `::1`.
    case ipv6

    /// The address as URL-host text without brackets (`127.0.0.1` or `::1`).
    public var description: String {
        switch self {
        case .ipv4: return "127.0.0.1"
        case .ipv6: return "::1"
        }
    }
}

/// `strerror` text for the current `errno`.
func labErrnoText(_ operation: String) -> String {
    let code = errno
    return "\(operation): \(String(cString: strerror(code))) (errno \(code))"
}

/// One owned socket descriptor, closed exactly once (by ``close()`` or `deinit`).
final class LabSocket: @unchecked Sendable {
    // @unchecked Sendable: a socket moves from the thread that accepted or created it to the
    // one thread that serves it (the hand-off is ordered by pthread_create / pthread_join) and
    // is never used from two threads at once.

    /// The descriptor, or -1 once closed.
    private(set) var descriptor: Int32

    /// Adopts `descriptor` (takes ownership: this object closes it).
    init(adopting descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close() }

    /// Closes the descriptor if still open; later calls do nothing.
    func close() {
        guard descriptor >= 0 else { return }
        _ = Glibc.close(descriptor)
        descriptor = -1
    }

    // MARK: Creating

    /// A non-blocking, close-on-exec listening socket on `address`, port chosen by the OS.
    static func listen(on address: LabLoopbackAddress, backlog: Int32 = 128) throws -> (LabSocket, UInt16) {
        let (listener, port) = try bound(on: address)
        guard Glibc.listen(listener.descriptor, backlog) == 0 else { throw LabError.invalid("listen", labErrnoText("listen")) }
        return (listener, port)
    }

    /// A non-blocking, close-on-exec socket bound to `address`, port chosen by the OS, not
    /// listening. Without `SO_REUSEADDR`, no other socket can bind the port while it lives.
    static func bound(on address: LabLoopbackAddress) throws -> (LabSocket, UInt16) {
        let family = address == .ipv4 ? AF_INET : AF_INET6
        // SOCK_CLOEXEC matters: Foundation's Process does not close inherited descriptors, so
        // without it every `curl` a test spawns would hold our socket (and its port) open.
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw LabError.invalid("socket", labErrnoText("socket")) }
        let owned = LabSocket(adopting: descriptor)
        let status: Int32
        switch address {
        case .ipv4:
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = 0
            socketAddress.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
            status = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6:
            var only: Int32 = 1
            _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &only, socklen_t(MemoryLayout<Int32>.size))
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = 0
            socketAddress.sin6_addr = in6addr_loopback
            status = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
        guard status == 0 else { throw LabError.invalid("bind(\(address))", labErrnoText("bind")) }
        return (owned, try owned.localPort())
    }

    /// Connects to `host:port` (name or IP literal), non-blocking, within `deadline`.
    static func connect(host: String, port: UInt16, deadline: LabDeadline, stop: LabStopFlag) throws(LabIOEnd) -> LabSocket {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        guard status == 0, let first = results else {
            throw .failed("getaddrinfo(\(host)): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var lastFailure = "no address for \(host)"
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            cursor = entry.pointee.ai_next
            let descriptor = socket(
                entry.pointee.ai_family,
                entry.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                entry.pointee.ai_protocol)
            guard descriptor >= 0 else {
                lastFailure = labErrnoText("socket")
                continue
            }
            let candidate = LabSocket(adopting: descriptor)
            if Glibc.connect(descriptor, entry.pointee.ai_addr, entry.pointee.ai_addrlen) != 0 {
                guard errno == EINPROGRESS else {
                    lastFailure = labErrnoText("connect")
                    continue
                }
                try candidate.wait(for: Int16(POLLOUT), until: deadline, stop: stop)
                var socketError: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &socketError, &length)
                guard socketError == 0 else {
                    lastFailure = "connect(\(host):\(port)): \(String(cString: strerror(socketError)))"
                    continue
                }
            }
            candidate.disableNagle()
            return candidate
        }
        throw .failed(lastFailure)
    }

    /// Accepts one pending connection as a non-blocking, close-on-exec socket, or `nil` when
    /// none is pending.
    func accept() -> LabSocket? {
        // accept4 (atomic SOCK_CLOEXEC) is a GNU extension Swift's Glibc module does not
        // export; the microseconds between accept and fcntl are the only window in which a
        // concurrently spawned process could inherit the connection.
        let accepted = Glibc.accept(descriptor, nil, nil)
        guard accepted >= 0 else { return nil }
        _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
        _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK)
        let connection = LabSocket(adopting: accepted)
        connection.disableNagle()
        return connection
    }

    /// Turns off Nagle's algorithm: request/response traffic of small writes would otherwise
    /// meet delayed ACKs and stall 40 ms per keep-alive round trip.
    private func disableNagle() {
        var on: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// The bound local port.
    func localPort() throws -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard result == 0 else { throw LabError.invalid("getsockname", labErrnoText("getsockname")) }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
        default:
            throw LabError.invalid("getsockname", "unexpected address family \(storage.ss_family)")
        }
    }

    // MARK: Waiting and plaintext I/O

    /// Waits until the socket is ready for `events` (`POLLIN` / `POLLOUT`), the deadline
    /// passes, or the stop flag is set.
    func wait(for events: Int16, until deadline: LabDeadline, stop: LabStopFlag) throws(LabIOEnd) {
        while true {
            if stop.isSet { throw .stopped }
            if deadline.hasPassed { throw .timedOut }
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, deadline.pollMilliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .failed(labErrnoText("poll")) }
        }
    }

    /// Waits until either socket is readable (or writable, per `events`), for relaying.
    static func waitEither(
        _ first: (LabSocket, Int16), _ second: (LabSocket, Int16),
        until deadline: LabDeadline, stop: LabStopFlag
    ) throws(LabIOEnd) {
        while true {
            if stop.isSet { throw .stopped }
            if deadline.hasPassed { throw .timedOut }
            var entries = [
                pollfd(fd: first.0.descriptor, events: first.1, revents: 0),
                pollfd(fd: second.0.descriptor, events: second.1, revents: 0),
            ]
            let ready = poll(&entries, 2, deadline.pollMilliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .failed(labErrnoText("poll")) }
        }
    }

    /// Reads whatever is available (at most `limit` bytes), waiting for at least one byte.
    /// With `peek`, the bytes stay queued for the next reader (the TLS layer).
    func receive(limit: Int, peek: Bool = false, until deadline: LabDeadline, stop: LabStopFlag) throws(LabIOEnd) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, limit, peek ? Int32(MSG_PEEK) : 0) }
            if count > 0 { return Array(buffer[..<count]) }
            if count == 0 { throw .closed }
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { throw .failed(labErrnoText("recv")) }
            try wait(for: Int16(POLLIN), until: deadline, stop: stop)
        }
    }

    /// One non-blocking read of at most `limit` bytes: `nil` when nothing is queued; throws
    /// ``LabIOEnd/closed`` at end of stream.
    func tryReceive(limit: Int) throws(LabIOEnd) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, limit, Int32(MSG_DONTWAIT)) }
        if count > 0 { return Array(buffer[..<count]) }
        if count == 0 { throw .closed }
        guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { throw .failed(labErrnoText("recv")) }
        return nil
    }

    /// Discards exactly `count` already-queued bytes (after a peek).
    func discard(_ count: Int, until deadline: LabDeadline, stop: LabStopFlag) throws(LabIOEnd) {
        var remaining = count
        while remaining > 0 {
            remaining -= try receive(limit: remaining, until: deadline, stop: stop).count
        }
    }

    /// Writes all of `bytes` in plaintext, without raising SIGPIPE.
    func sendAll(_ bytes: [UInt8], until deadline: LabDeadline, stop: LabStopFlag) throws(LabIOEnd) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes {
                send(descriptor, $0.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                offset += count
                continue
            }
            guard count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                throw .failed(labErrnoText("send"))
            }
            try wait(for: Int16(POLLOUT), until: deadline, stop: stop)
        }
    }
}

/// A process-wide sequence for naming servers and their threads.
let labInstanceCounter = Atomic<Int>(0)

/// Joinable POSIX threads for one server: an accept thread plus one thread per connection.
///
/// Finished connection threads are joined ("reaped") by the accept loop as it goes, and
/// ``joinAll()`` joins the rest, so after `stop()` no thread of the server exists any more.
final class LabThreadGroup: Sendable {
    /// The name every thread of the group carries (Linux keeps at most 15 bytes).
    let name: String

    private struct State {
        var nextID = 0
        var running: [Int: pthread_t] = [:]
        var finished: [Int] = []
    }

    private let state = Mutex(State())

    init(name: String) {
        self.name = name
    }

    /// Threads started and not yet joined.
    var liveCount: Int { state.withLock { $0.running.count } }

    /// Starts `body` on a new thread.
    ///
    /// - Throws: ``LabError`` if the thread cannot be created.
    func spawn(_ body: @escaping @Sendable () -> Void) throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        let name = self.name
        let task = LabThreadStart { [weak self] in
            labPrepareThread(named: name)
            body()
            self?.state.withLock { $0.finished.append(id) }
        }
        let context = Unmanaged.passRetained(task).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<LabThreadStart>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, context)
        guard created == 0 else {
            Unmanaged<LabThreadStart>.fromOpaque(context).release()
            throw LabError.invalid("pthread_create", "error \(created)")
        }
        state.withLock { $0.running[id] = thread }
    }

    /// Joins every thread that has announced it is finishing.
    func reapFinished() {
        let done = state.withLock { state -> [pthread_t] in
            var threads: [pthread_t] = []
            var pending: [Int] = []
            for id in state.finished {
                if let thread = state.running.removeValue(forKey: id) { threads.append(thread) } else { pending.append(id) }
            }
            state.finished = pending
            return threads
        }
        for thread in done { _ = pthread_join(thread, nil) }
    }

    /// Joins every thread of the group (they must already have been told to stop).
    func joinAll() {
        let all = state.withLock { state -> [pthread_t] in
            let threads = Array(state.running.values)
            state.running.removeAll()
            state.finished.removeAll()
            return threads
        }
        for thread in all { _ = pthread_join(thread, nil) }
    }
}

/// The closure a new thread runs, boxed so it can cross `pthread_create` as a raw pointer.
private final class LabThreadStart: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// Names the calling thread (so `/proc/self/task/*/comm`, `top -H` and gdb show whose it is)
/// and blocks SIGPIPE on it: OpenSSL writes to sockets with plain `write`, and a peer that has
/// already gone must produce EPIPE on this thread, not kill the test process.
func labPrepareThread(named name: String) {
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGPIPE)
    pthread_sigmask(SIG_BLOCK, &signals, nil)
    // pthread_setname_np is a GNU extension the Glibc module does not export; the procfs file
    // is the same kernel interface.
    let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard file >= 0 else { return }
    defer { _ = close(file) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
}

/// An accept loop on a loopback listener that hands each connection to its own thread.
///
/// Connections beyond `maximumConnections` wait in the kernel backlog until a thread frees up.
final class LabListener: Sendable {
    /// The group all of this listener's threads belong to.
    let threads: LabThreadGroup
    /// Set by ``stop()``; every wait of every thread polls it.
    let stopFlag: LabStopFlag

    private let maximumConnections: Int
    private let onConnection: @Sendable (LabSocket, Int) -> Void

    private struct State {
        var listener: LabSocket?
        var acceptThread: pthread_t?
        var port: UInt16 = 0
        var started = false
        var stopped = false
    }

    private let state = Mutex(State())
    /// Held for the whole of ``stop()``, so a second concurrent caller returns only once the
    /// first has joined everything. Connection threads never take it, so joining under it
    /// cannot deadlock.
    private let stopping = Mutex(())

    /// - Parameters:
    ///   - threadName: Name for every thread (15 bytes at most survive).
    ///   - maximumConnections: Connection threads alive at once.
    ///   - stopFlag: The flag ``stop()`` sets; shared with whatever serves the connections,
    ///     which keeps it from having to reference the listener (and form a cycle).
    ///   - onConnection: Runs on the connection's own thread with the socket and its
    ///     zero-based accept index; the socket is closed after it returns.
    init(
        threadName: String, maximumConnections: Int, stopFlag: LabStopFlag,
        onConnection: @escaping @Sendable (LabSocket, Int) -> Void
    ) {
        self.threads = LabThreadGroup(name: threadName)
        self.stopFlag = stopFlag
        self.maximumConnections = max(1, maximumConnections)
        self.onConnection = onConnection
    }

    /// The listening port, or 0 before ``start(on:)``.
    var port: UInt16 { state.withLock { $0.port } }

    /// Binds, listens, and starts the accept thread.
    ///
    /// - Returns: The port the OS chose.
    /// - Throws: ``LabError`` if already started, or binding / thread creation fails.
    func start(on address: LabLoopbackAddress) throws -> UInt16 {
        try state.withLock { state throws -> Void in
            guard !state.started else { throw LabError.invalid("start", "a Lab server can be started only once") }
            state.started = true
        }
        let (listener, port) = try LabSocket.listen(on: address)
        var acceptThread = pthread_t()
        let task = LabThreadStart { [self] in
            labPrepareThread(named: threads.name)
            acceptLoop(listener)
        }
        let context = Unmanaged.passRetained(task).toOpaque()
        let created = pthread_create(
            &acceptThread, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<LabThreadStart>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, context)
        guard created == 0 else {
            Unmanaged<LabThreadStart>.fromOpaque(context).release()
            throw LabError.invalid("pthread_create", "error \(created)")
        }
        state.withLock {
            $0.listener = listener
            $0.acceptThread = acceptThread
            $0.port = port
        }
        return port
    }

    /// Stops accepting, ends every connection, joins every thread and closes the listening
    /// socket. Idempotent; must not be called from one of the listener's own threads.
    func stop() {
        stopping.withLock { _ in
            let (acceptThread, listener) = state.withLock { state -> (pthread_t?, LabSocket?) in
                guard !state.stopped else { return (nil, nil) }
                state.stopped = true
                defer {
                    state.acceptThread = nil
                    state.listener = nil
                }
                return (state.acceptThread, state.listener)
            }
            stopFlag.set()
            // The accept thread first: once it is joined nothing spawns connection threads.
            if let acceptThread { _ = pthread_join(acceptThread, nil) }
            threads.joinAll()
            listener?.close()
        }
    }

    private func acceptLoop(_ listener: LabSocket) {
        var index = 0
        while !stopFlag.isSet {
            threads.reapFinished()
            // At capacity, leave new connections in the backlog instead of refusing them.
            let atCapacity = threads.liveCount >= maximumConnections
            var entry = pollfd(fd: listener.descriptor, events: atCapacity ? 0 : Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, LabDeadline.after(1).pollMilliseconds)
            guard ready > 0, !atCapacity else { continue }
            while !stopFlag.isSet, threads.liveCount < maximumConnections, let connection = listener.accept() {
                let connectionIndex = index
                index += 1
                let handler = onConnection
                do {
                    try threads.spawn {
                        handler(connection, connectionIndex)
                        connection.close()
                    }
                } catch {
                    connection.close()
                }
            }
        }
    }
}
