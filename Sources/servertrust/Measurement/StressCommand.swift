internal import CServerTrustShims
import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import TrustEvaluation

#if canImport(Glibc)
    import Glibc
#endif

/// `servertrust stress load|faults`: the load and leak checks of issue 7 §3–4, run against
/// ServerTrustLab servers in this process.
///
/// They are a command rather than tests because resident memory and open descriptors are
/// per-process figures: Swift Testing runs suites in parallel in one process, where neither
/// can be attributed to one test. Here nothing else runs, so the figures are the client's
/// (plus the loopback server's, which is stopped before descriptors are counted).
enum StressCommand {
    static let usage = """
        usage: servertrust stress load [--keepalive N] [--new-connections N] [--in-flight N]
                                      [--memory-checkpoint N] [--json]
               servertrust stress faults [--json]

        stress load starts a local TLS server and sends it, through one HTTPSession:
          --keepalive N             N GET requests over keep-alive connections (default 10000)
          --new-connections N       then N requests each on a new connection with a full TLS
                                    handshake and trust decision (default 1000)
          --in-flight N             requests in flight at once, in both phases (default 64)
          --memory-checkpoint N     take the first memory figure after N requests (default 1000)
        It reports resident memory (VmRSS) at the checkpoint and at the end, open
        descriptors before the session exists and after it is invalidated, and the rates. The
        server runs in a child process (stress serve), so every figure is the client's.
        It fails if any request fails, memory grew by more than 10%, or a descriptor leaked.

        stress faults meets every ServerTrustLab fault (servers that close or stall mid-handshake,
        mid-headers or mid-body, TLS alerts, a proxy refusing CONNECT, an unresolvable host, a
        50-certificate chain, a 1 MiB certificate, a refused connection) with a new HTTPSession
        each, and checks the typed error, the time it took against the timeout, and that open
        descriptors are back to the baseline once the session and the servers are gone.

          --json                    one JSON object on stdout instead of the table

        stress serve is the server side of stress load, which runs it as a child process so that
        the figures it reports are the client's alone; it is not meant to be run by hand.

        exit codes: 0 every check passed, 1 a check failed (the output says which), 2 bad input
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let kind = arguments.first else { throw CLIError("which check? load or faults (usage: servertrust stress --help)") }
        let rest = Array(arguments.dropFirst())
        switch kind {
        case "load": return try load(rest)
        case "faults": return try faults(rest)
        case "serve": return try serve(rest)
        case "--help", "-h", "help":
            print(usage)
            return ExitCode.success
        default: throw CLIError("unknown check '\(kind)' (available: load, faults; see servertrust stress --help)")
        }
    }

    // MARK: - Process figures

    /// Resident set size in KiB (`VmRSS` of /proc/self/status).
    /// What the C allocator has handed out and not taken back, in KiB (0 where malloc is not
    /// glibc's, as under AddressSanitizer). A leak grows this; resident memory also grows when
    /// the allocator keeps freed pages for reuse (a thread's new arena, fragmentation), which
    /// depends on how the threads interleave, so it is the looser of the two bounds.
    static func heapKiB() -> Int {
        // AddressSanitizer's allocator serves malloc; glibc's figures would describe an
        // allocator nobody uses.
        guard dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") == nil else { return 0 }
        return CServerTrustShims_heap_in_use() / 1024
    }

    static func residentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Open descriptors (entries of /proc/self/fd, less the one the listing itself uses).
    static func descriptorCount() -> Int {
        openDescriptors().count
    }

    /// Each open descriptor and what it points to, for naming a leak.
    static func openDescriptors() -> [Int32: String] {
        guard let directory = opendir("/proc/self/fd") else { return [:] }
        defer { closedir(directory) }
        let own = dirfd(directory)
        var result: [Int32: String] = [:]
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let descriptor = Int32(name), descriptor != own else { continue }
            var buffer = [CChar](repeating: 0, count: 512)
            let length = readlink("/proc/self/fd/\(name)", &buffer, buffer.count - 1)
            result[descriptor] = length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        }
        return result
    }

    /// Threads of this process (entries of /proc/self/task).
    static func threadCount() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).count
    }

    /// Waits up to `seconds` for the descriptor count to come down to `baseline` (threads that
    /// were told to stop may close their last socket a moment after `stop()` returns).
    static func settledDescriptors(baseline: Int, within seconds: Double = 3) -> Int {
        let end = BenchCommand.now() + seconds
        var count = descriptorCount()
        while count > baseline && BenchCommand.now() < end {
            usleep(20_000)
            count = descriptorCount()
        }
        return count
    }

    static func parseOptions(_ arguments: [String], values: Set<String>) throws -> Options? {
        let options = try Options(arguments, flags: ["--help", "--json"], values: values)
        if options.flags.contains("--help") {
            print(usage)
            return nil
        }
        guard options.positionals.isEmpty else {
            throw CLIError("unexpected argument '\(options.positionals[0])' (usage: servertrust stress --help)")
        }
        return options
    }

    static func anchors(_ root: LabCertificate) throws -> TrustStore {
        TrustStore([try Certificate(derEncoded: root.der)], sources: ["ServerTrustLab root"])
    }

    /// One request and back, so that what libcurl and OpenSSL set up once per process (and
    /// keep) is in place before a baseline is taken: it is not a leak of any request.
    static func warmUp() throws {
        let now = Int64(time(nil))
        let pki = try LabPKI.webChain(
            host: "warmup.example.test", leafNotBefore: now - LabClock.day,
            leafNotAfter: now + 30 * LabClock.day, keySlot: 63)
        let server = try LabTLSServer.started(.init(identity: .init(pki: pki), name: "warmup"))
        defer { server.stop() }
        var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(DefaultTrustEvaluator(), anchors: try anchors(pki.root)))
        configuration.resolve = ["warmup.example.test:\(server.port):127.0.0.1"]
        let session = try HTTPSession(configuration: configuration)
        defer { session.invalidate() }
        let url = server.url(host: "warmup.example.test")
        let outcome = Blocking.run { () -> String? in
            do {
                _ = try await session.get(url)
                return nil
            } catch {
                return "\(error)"
            }
        }
        if let outcome { throw CLIError("warm-up request failed: \(outcome)", code: 1) }
    }

    static func rounded(_ value: Double, _ digits: Int = 1) -> Double {
        BenchHTTPS.rounded(value, digits)
    }

    // MARK: - load

    struct LoadReport: Sendable {
        var completed = 0
        var errors = 0
        var firstError: String?
        var residentAfterFirst: Int?
        var heapAfterFirst: Int?
        var keepAliveSeconds = 0.0
        var newConnectionSeconds = 0.0
        var newConnectionsMade = 0
    }

    /// The point at which the first memory figure is taken, unless `--memory-checkpoint`
    /// says otherwise (issue 7 §4: "within 10% of what it was after the first 1,000").
    static let defaultMemoryCheckpoint = 1000
    /// How much the heap in use may grow from the checkpoint to the end: the leak bound
    /// (issue 7 §4's 10%).
    static let allowedGrowth = 0.10
    /// How much resident memory may grow when the heap is measured too. Measured: +1.9–2.2%
    /// alone and +0.6–1.4% beside three busy loops, but +12.6% once during the whole test suite
    /// (53,796 → 60,560 KiB), with no growth in requests or connections to explain it: pages a
    /// malloc arena kept, not a leak. Where the heap cannot be measured, resident memory is held
    /// to ``allowedGrowth``.
    static let allowedResidentGrowth = 0.25

    static func load(_ arguments: [String]) throws -> Int32 {
        guard let options = try parseOptions(arguments, values: ["--keepalive", "--new-connections", "--in-flight", "--memory-checkpoint"]) else {
            return ExitCode.success
        }
        let keepAlive = try options.int("--keepalive", default: 10_000)
        let newConnections = try options.int("--new-connections", default: 1000)
        let inFlight = try options.int("--in-flight", default: 64)
        let memoryCheckpoint = try options.int("--memory-checkpoint", default: defaultMemoryCheckpoint)
        // Explicitly asked for, the checkpoint must be reached; the default is simply not
        // reached by shorter runs (the first figure is then "n/a").
        if options.value("--memory-checkpoint") != nil, !(1...max(1, keepAlive + newConnections)).contains(memoryCheckpoint) {
            throw CLIError("--memory-checkpoint must be between 1 and the number of requests (\(keepAlive + newConnections))")
        }
        guard inFlight >= 1 else { throw CLIError("--in-flight must be at least 1") }
        guard keepAlive + newConnections > 0 else { throw CLIError("nothing to do: --keepalive and --new-connections are both 0") }
        let json = options.flags.contains("--json")

        try warmUp()
        // The server runs in a child process: its threads, buffers and per-connection records
        // would otherwise be counted as the client's memory. The baseline is taken with it
        // running, so the descriptors compared are the client's alone.
        let server = try StressServerProcess(connections: max(128, inFlight * 2))
        defer { _ = server.stop() }
        let descriptorsBefore = descriptorCount()
        let threadsBefore = threadCount()

        let host = StressServerProcess.host
        let body = StressServerProcess.body
        var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(DefaultTrustEvaluator(), anchors: try anchors(server.root)))
        configuration.resolve = ["\(host):\(server.port):127.0.0.1"]
        // Every request may have its own connection: "in flight" means on the wire.
        configuration.maximumConnectionsPerHost = inFlight
        // New connections do the full handshake and trust decision (no resumption), the
        // heavier path and the one where a per-connection leak would show.
        configuration.tlsSessionResumption = false
        configuration.timeout = 60
        let session = try HTTPSession(configuration: configuration)
        let url = "https://\(host):\(server.port)/load"

        let report = Blocking.run { () -> LoadReport in
            var report = LoadReport()
            var keepAliveRequest = HTTPRequest(.get, url)
            keepAliveRequest.usesFreshConnection = false
            var freshRequest = HTTPRequest(.get, url)
            freshRequest.usesFreshConnection = true
            let phases: [(request: HTTPRequest, count: Int)] = [(keepAliveRequest, keepAlive), (freshRequest, newConnections)]
            for (phase, (request, count)) in phases.enumerated() where count > 0 {
                let started = BenchCommand.now()
                await withTaskGroup(of: String?.self) { group in
                    var issued = 0
                    func issue() {
                        issued += 1
                        group.addTask {
                            do {
                                let response = try await session.send(request)
                                guard response.statusCode == 200, response.body == body else {
                                    return "HTTP \(response.statusCode), \(response.body.count) bytes"
                                }
                                return nil
                            } catch {
                                return "\(error)"
                            }
                        }
                    }
                    while issued < min(inFlight, count) { issue() }
                    while let failure = await group.next() {
                        report.completed += 1
                        if let failure {
                            report.errors += 1
                            if report.firstError == nil { report.firstError = failure }
                        }
                        if report.completed == memoryCheckpoint {
                            report.residentAfterFirst = residentKiB()
                            report.heapAfterFirst = heapKiB()
                        }
                        if issued < count { issue() }
                    }
                }
                if phase == 0 { report.keepAliveSeconds = BenchCommand.now() - started } else { report.newConnectionSeconds = BenchCommand.now() - started }
            }
            return report
        }
        let residentEnd = residentKiB()
        let heapEnd = heapKiB()
        session.invalidate()
        let descriptorsAfter = settledDescriptors(baseline: descriptorsBefore)
        let threadsAfter = threadCount()
        let residentAfterTeardown = residentKiB()
        let connectionsAccepted = server.stop() ?? -1

        let residentFirst = report.residentAfterFirst ?? residentEnd
        let growth = residentFirst > 0 ? Double(residentEnd - residentFirst) / Double(residentFirst) : 0
        let heapFirst = report.heapAfterFirst ?? heapEnd
        let heapMeasured = heapFirst > 0
        let heapGrowth = heapMeasured ? Double(heapEnd - heapFirst) / Double(heapFirst) : 0
        let residentBound = heapMeasured ? allowedResidentGrowth : allowedGrowth
        var failures: [String] = []
        if report.errors > 0 { failures.append("\(report.errors) request(s) failed, first: \(report.firstError ?? "?")") }
        if heapGrowth > allowedGrowth {
            failures.append("heap in use grew \(rounded(heapGrowth * 100))% (\(heapFirst) → \(heapEnd) KiB), more than \(Int(allowedGrowth * 100))%")
        }
        if growth > residentBound {
            failures.append("resident memory grew \(rounded(growth * 100))% (\(residentFirst) → \(residentEnd) KiB), more than \(Int(residentBound * 100))%")
        }
        if descriptorsAfter > descriptorsBefore { failures.append(leakMessage(before: descriptorsBefore, after: descriptorsAfter)) }
        let ok = failures.isEmpty

        let keepAliveRate = keepAlive > 0 ? Double(keepAlive) / max(report.keepAliveSeconds, 1e-9) : 0
        let newConnectionRate = newConnections > 0 ? Double(newConnections) / max(report.newConnectionSeconds, 1e-9) : 0
        if json {
            let object: JSON = .object([
                ("check", .string("load")), ("keepalive_requests", .int(keepAlive)), ("new_connection_requests", .int(newConnections)),
                ("in_flight", .int(inFlight)), ("completed", .int(report.completed)), ("errors", .int(report.errors)),
                ("first_error", report.firstError.map(JSON.string) ?? .null),
                ("server_connections_accepted", .int(connectionsAccepted)),
                ("keepalive_seconds", .double(rounded(report.keepAliveSeconds, 3))),
                ("keepalive_requests_per_second", .double(rounded(keepAliveRate))),
                ("new_connection_seconds", .double(rounded(report.newConnectionSeconds, 3))),
                ("new_connections_per_second", .double(rounded(newConnectionRate))),
                ("memory_checkpoint", .int(memoryCheckpoint)),
                ("rss_at_checkpoint_kib", report.residentAfterFirst.map(JSON.int) ?? .null),
                ("rss_end_kib", .int(residentEnd)), ("rss_growth_percent", .double(rounded(growth * 100, 2))),
                ("rss_after_teardown_kib", .int(residentAfterTeardown)),
                ("heap_at_checkpoint_kib", heapMeasured ? .int(heapFirst) : .null), ("heap_end_kib", heapMeasured ? .int(heapEnd) : .null),
                ("heap_growth_percent", heapMeasured ? .double(rounded(heapGrowth * 100, 2)) : .null),
                ("fds_before", .int(descriptorsBefore)), ("fds_after", .int(descriptorsAfter)),
                ("threads_before", .int(threadsBefore)), ("threads_after", .int(threadsAfter)),
                ("failures", .array(failures.map(JSON.string))), ("ok", .bool(ok)),
            ])
            Console.writeStdout(object.rendered + "\n")
        } else {
            var text = """
                keep-alive:       \(keepAlive) requests in \(rounded(report.keepAliveSeconds, 2)) s (\(rounded(keepAliveRate)) requests/s), \(inFlight) in flight
                new connections:  \(newConnections) requests in \(rounded(report.newConnectionSeconds, 2)) s (\(rounded(newConnectionRate)) requests/s), \(inFlight) in flight
                server saw:       \(connectionsAccepted) connections; \(report.errors) request(s) failed
                heap in use:      \(heapMeasured ? "\(heapFirst) KiB after the first \(memoryCheckpoint), \(heapEnd) KiB at the end (\(rounded(heapGrowth * 100, 2))%)" : "n/a (not glibc's malloc)")
                resident memory:  \(report.residentAfterFirst.map { "\($0) KiB" } ?? "n/a") after the first \(memoryCheckpoint), \(residentEnd) KiB at the end (\(rounded(growth * 100, 2))%), \(residentAfterTeardown) KiB after teardown
                descriptors:      \(descriptorsBefore) before the session, \(descriptorsAfter) after it is invalidated
                threads:          \(threadsBefore) before, \(threadsAfter) after

                """
            text += ok ? "ok\n" : failures.map { "FAILED: \($0)\n" }.joined()
            Console.writeStdout(text)
        }
        if !ok { Console.writeStderr("servertrust: stress load: \(failures.joined(separator: "; "))") }
        return ok ? ExitCode.success : 1
    }

    static func leakMessage(before: Int, after: Int) -> String {
        "\(after - before) descriptor(s) leaked (\(before) before, \(after) after): "
            + openDescriptors().sorted { $0.key < $1.key }.suffix(after - before).map { "\($0.key) → \($0.value)" }.joined(separator: ", ")
    }

    // MARK: - faults

    /// What each fault must produce: `error/kind` strings (`transport/tlsHandshakeFailed`,
    /// `timedOut`, `serverTrustRejected/chainTooLong`), the same table FaultInjectionTests asserts.
    static func expected(_ fault: LabFault) -> Set<String> {
        switch fault {
        case .connectionRefused: return ["transport/cannotConnect"]
        case .closeAfterAccept, .closeMidHandshake, .alertHandshakeFailure, .alertProtocolVersion, .megabyteCertificate:
            return ["transport/tlsHandshakeFailed"]
        case .stallInHandshake, .stallBeforeResponse, .stallMidBody: return ["timedOut"]
        case .emptyReply, .closeMidHeaders, .closeMidHeadersWithoutNotify, .closeMidBody, .closeMidBodyWithoutNotify:
            return ["transport/connectionLost"]
        case .proxyRefusesConnect: return ["proxyRefused/403"]
        // On a machine whose DNS server does not answer, resolution ends by the timeout.
        case .unresolvableHost: return ["transport/hostNotFound", "timedOut"]
        case .chainOf50Certificates: return ["serverTrustRejected/chainTooLong"]
        }
    }

    /// The request timeout per fault: short where only the timeout can end the request,
    /// long elsewhere (so a hang shows up as `timedOut`, not as the expected error).
    static func timeout(_ fault: LabFault) -> Double {
        if fault.endsOnlyByClientTimeout { return 2 }
        return fault == .unresolvableHost ? 5 : 15
    }

    /// Scheduling slack on a loaded machine.
    static let slack = 10.0

    static func classify(_ error: HTTPError?) -> String {
        switch error {
        case nil: return "success"
        case .transport(let transport)?: return "transport/\(transport.kind.rawValue)"
        case .timedOut?: return "timedOut"
        case .proxyRefused(let status, _)?: return "proxyRefused/\(status)"
        case .serverTrustRejected(let decision)?: return "serverTrustRejected/\(decision.validationFailure?.kind.rawValue ?? "-")"
        case let other?: return "\(other)".prefix { $0 != ":" }.replacingOccurrences(of: " ", with: "_")
        }
    }

    struct FaultResult {
        var fault: LabFault
        var outcome: String
        var expected: Set<String>
        var message: String
        var seconds: Double
        var timeout: Double
        var descriptorsAfter: Int
        var matches: Bool { expected.contains(outcome) }
        var inTime: Bool { seconds < timeout + StressCommand.slack }
    }

    static func faults(_ arguments: [String]) throws -> Int32 {
        guard let options = try parseOptions(arguments, values: []) else { return ExitCode.success }
        let json = options.flags.contains("--json")

        try warmUp()
        // The fault certificates are built once per process; build them before the baseline.
        try LabFaultSetup.start(.chainOf50Certificates).stop()
        let baseline = descriptorCount()
        var results: [FaultResult] = []
        for fault in LabFault.allCases {
            let setup = try LabFaultSetup.start(fault)
            var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(DefaultTrustEvaluator(), anchors: try anchors(setup.root)))
            configuration.resolve = setup.resolve
            configuration.proxy = setup.proxyURL.map { ProxyConfiguration(url: $0) }
            configuration.timeout = timeout(fault)
            configuration.connectTimeout = timeout(fault)
            let session = try HTTPSession(configuration: configuration)
            let url = setup.url
            let started = BenchCommand.now()
            let error = Blocking.run { () -> HTTPError? in
                do throws(HTTPError) {
                    _ = try await session.get(url)
                    return nil
                } catch {
                    return error
                }
            }
            let seconds = BenchCommand.now() - started
            session.invalidate()
            setup.stop()
            // Where the DNS server does not answer, curl gives up at its timeout but glibc's
            // lookup (and its UDP socket) lives on in curl's resolver thread until the resolver's
            // own retries end (resolv.conf: 5 s × 2 attempts by default); allow for that.
            let settle = fault == .unresolvableHost ? 15.0 : 3.0
            results.append(
                FaultResult(
                    fault: fault, outcome: classify(error), expected: expected(fault),
                    message: error.map { "\($0)" } ?? "succeeded", seconds: seconds, timeout: timeout(fault),
                    descriptorsAfter: settledDescriptors(baseline: baseline, within: settle)))
        }
        let final = settledDescriptors(baseline: baseline)
        var failures: [String] = []
        for result in results {
            if !result.matches {
                failures.append(
                    "\(result.fault.rawValue): expected \(result.expected.sorted().joined(separator: " or ")), got \(result.outcome) (\(result.message))")
            }
            if !result.inTime { failures.append("\(result.fault.rawValue): took \(rounded(result.seconds, 2)) s, timeout \(result.timeout) s") }
            if result.descriptorsAfter > baseline {
                failures.append("\(result.fault.rawValue): \(result.descriptorsAfter - baseline) descriptor(s) still open afterwards")
            }
        }
        if final > baseline { failures.append(leakMessage(before: baseline, after: final)) }
        let ok = failures.isEmpty

        if json {
            let rows: [JSON] = results.map { result in
                .object([
                    ("fault", .string(result.fault.rawValue)), ("outcome", .string(result.outcome)),
                    ("expected", .array(result.expected.sorted().map(JSON.string))), ("matches", .bool(result.matches)),
                    ("error", .string(result.message)), ("seconds", .double(rounded(result.seconds, 3))),
                    ("timeout", .double(result.timeout)), ("in_time", .bool(result.inTime)),
                    ("fds_after", .int(result.descriptorsAfter)),
                ])
            }
            let object: JSON = .object([
                ("check", .string("faults")), ("fds_before", .int(baseline)), ("fds_after", .int(final)),
                ("faults", .array(rows)), ("failures", .array(failures.map(JSON.string))), ("ok", .bool(ok)),
            ])
            Console.writeStdout(object.rendered + "\n")
        } else {
            var text = ""
            for result in results {
                let mark = result.matches && result.inTime && result.descriptorsAfter <= baseline ? "ok  " : "FAIL"
                let name = result.fault.rawValue.padding(toLength: 30, withPad: " ", startingAt: 0)
                let outcome = result.outcome.padding(toLength: 34, withPad: " ", startingAt: 0)
                text += "\(mark) \(name) \(outcome) \(String(format: "%6.3f", result.seconds)) s (timeout \(Int(result.timeout)) s)  \(result.message)\n"
            }
            text += "descriptors: \(baseline) before, \(final) after\n"
            text += ok ? "ok\n" : failures.map { "FAILED: \($0)\n" }.joined()
            Console.writeStdout(text)
        }
        if !ok { Console.writeStderr("servertrust: stress faults: \(failures.joined(separator: "; "))") }
        return ok ? ExitCode.success : 1
    }
}

// MARK: - The load server process

extension StressCommand {
    /// `stress serve`: a LabTLSServer for `stress load`, in its own process. Prints
    /// `ready PORT ROOT-DER-HEX`, serves until its stdin closes, then prints
    /// `connections N` (connections accepted) and exits.
    static func serve(_ arguments: [String]) throws -> Int32 {
        guard let options = try parseOptions(arguments, values: ["--connections"]) else { return ExitCode.success }
        let now = Int64(time(nil))
        let pki = try LabPKI.webChain(
            host: StressServerProcess.host, leafNotBefore: now - LabClock.day,
            leafNotAfter: now + 30 * LabClock.day, keySlot: 62)
        let body = StressServerProcess.body
        var configuration = LabTLSServer.Configuration(identity: .init(pki: pki), name: "stress-load")
        configuration.handler = { _ in LabHTTPResponse(status: 200, body: .bytes(body)) }
        configuration.maximumConnections = try options.int("--connections", default: 128)
        let server = try LabTLSServer.started(configuration)
        Console.writeStdout("ready \(server.port) \(pki.root.der.map { String(format: "%02x", $0) }.joined())\n")
        var byte: UInt8 = 0
        while read(0, &byte, 1) > 0 {}
        let accepted = server.statistics.connectionsAccepted
        server.stop()
        Console.writeStdout("connections \(accepted)\n")
        return ExitCode.success
    }
}

/// The child process running `servertrust stress serve`.
final class StressServerProcess {
    static let host = "load.example.test"
    /// Every response's body.
    static let body = [UInt8](repeating: UInt8(ascii: "s"), count: 256)

    let port: UInt16
    let root: LabCertificate
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var stopped = false

    /// Starts the child and waits for its `ready` line.
    init(connections: Int) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        process.arguments = ["stress", "serve", "--connections", String(connections)]
        process.standardInput = input
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw CLIError("cannot start the load server: \(error)", code: 1)
        }
        let fields = Self.readLine(output).split(separator: " ")
        guard fields.count == 3, fields[0] == "ready", let port = UInt16(fields[1]),
            let root = try? LabCertificate(der: Self.bytes(hex: fields[2]))
        else {
            process.terminate()
            throw CLIError("the load server did not start", code: 1)
        }
        self.port = port
        self.root = root
    }

    /// Closes the child's stdin and waits for it; returns the connections it accepted.
    func stop() -> Int? {
        guard !stopped else { return nil }
        stopped = true
        try? input.fileHandleForWriting.close()
        let fields = Self.readLine(output).split(separator: " ")
        process.waitUntilExit()
        try? output.fileHandleForReading.close()
        return fields.count == 2 && fields[0] == "connections" ? Int(fields[1]) : nil
    }

    /// One line of the child's stdout (without the newline); empty at EOF.
    private static func readLine(_ output: Pipe) -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        let descriptor = output.fileHandleForReading.fileDescriptor
        while read(descriptor, &byte, 1) == 1, byte != 10 { line.append(byte) }
        return String(decoding: line, as: UTF8.self)
    }

    private static func bytes(hex: Substring) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return [] }
            result.append(byte)
            index = next
        }
        return result
    }
}
