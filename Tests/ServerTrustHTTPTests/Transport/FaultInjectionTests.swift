import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

// Issue 7 §3: every network fault ServerTrustLab can produce, met by a real HTTPSession
// (libcurl + OpenSSL). Each row names the exact HTTPError case (and transport or validation
// failure kind) it must produce, and bounds how long that may take. Descriptor and memory
// figures are measured out of process by `servertrust stress faults` (CLITests/StressCommandTests):
// suites run in parallel here, so only per-connection checks are exact in this process.

@Suite("fault injection: each network fault is a typed error within its timeout")
struct FaultInjectionTests {
    /// What a row must fail with.
    enum Expected: Sendable, CustomStringConvertible {
        /// `HTTPError.transport` of this kind; the message must contain `detail`.
        case transport(TransportError.Kind, detail: String)
        /// `HTTPError.timedOut`.
        case timedOut
        /// `HTTPError.serverTrustRejected` with this validation failure.
        case trustRejected(ValidationFailure.Kind)
        /// `HTTPError.transport` of this kind, or `HTTPError.timedOut` if the step it names
        /// could not finish within the timeout (name resolution on a machine whose DNS server
        /// does not answer).
        case transportOrTimeout(TransportError.Kind)
        /// `HTTPError.proxyRefused` with this CONNECT status.
        case proxyRefused(statusCode: Int)

        var description: String {
            switch self {
            case .transport(let kind, let detail): return "transport(\(kind.rawValue), \"\(detail)\")"
            case .timedOut: return "timedOut"
            case .trustRejected(let kind): return "serverTrustRejected(\(kind))"
            case .transportOrTimeout(let kind): return "transport(\(kind.rawValue)) or timedOut"
            case .proxyRefused(let status): return "proxyRefused(\(status))"
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var fault: LabFault
        /// The request and connect timeout. Stalls get a short one (the test waits it out);
        /// every other fault a long one, so a hang would surface as `timedOut`, not as the
        /// expected error.
        var timeout: Double
        var expected: Expected

        var testDescription: String { "\(fault.rawValue) → \(expected)" }
    }

    /// Scheduling slack on a loaded 2-core CI machine: no row may take longer than its timeout
    /// plus this.
    static let slack = 10.0
    static let stall = 2.0
    static let generous = 15.0

    static let rows: [Row] = [
        Row(fault: .connectionRefused, timeout: generous, expected: .transport(.cannotConnect, detail: "Failed to connect")),
        // The server closes with the ClientHello unread, so the kernel usually sends a reset
        // ("Recv failure: Connection reset by peer"); if the close wins the race with the
        // ClientHello it is a plain EOF. Either way: a failed handshake, any detail.
        Row(fault: .closeAfterAccept, timeout: generous, expected: .transport(.tlsHandshakeFailed, detail: "")),
        Row(fault: .closeMidHandshake, timeout: generous, expected: .transport(.tlsHandshakeFailed, detail: "")),
        Row(fault: .stallInHandshake, timeout: stall, expected: .timedOut),
        Row(fault: .alertHandshakeFailure, timeout: generous, expected: .transport(.tlsHandshakeFailed, detail: "handshake failure")),
        Row(fault: .alertProtocolVersion, timeout: generous, expected: .transport(.tlsHandshakeFailed, detail: "protocol version")),
        Row(fault: .emptyReply, timeout: generous, expected: .transport(.connectionLost, detail: "Empty reply")),
        // A response cut short is a lost connection whether or not TLS ended cleanly: libcurl
        // 7.88 takes a missing close_notify as EOF, so HTTP framing is what tells. (Cut inside
        // the header section, libcurl itself reports success; HTTPSession fails it as well.)
        Row(fault: .closeMidHeaders, timeout: generous, expected: .transport(.connectionLost, detail: "header section")),
        Row(fault: .closeMidHeadersWithoutNotify, timeout: generous, expected: .transport(.connectionLost, detail: "header section")),
        Row(fault: .closeMidBody, timeout: generous, expected: .transport(.connectionLost, detail: "1024 bytes remaining")),
        Row(fault: .closeMidBodyWithoutNotify, timeout: generous, expected: .transport(.connectionLost, detail: "1024 bytes remaining")),
        Row(fault: .stallBeforeResponse, timeout: stall, expected: .timedOut),
        Row(fault: .stallMidBody, timeout: stall, expected: .timedOut),
        Row(fault: .proxyRefusesConnect, timeout: generous, expected: .proxyRefused(statusCode: 403)),
        Row(fault: .unresolvableHost, timeout: 5, expected: .transportOrTimeout(.hostNotFound)),
        Row(fault: .chainOf50Certificates, timeout: generous, expected: .trustRejected(.chainTooLong)),
        Row(fault: .megabyteCertificate, timeout: generous, expected: .transport(.tlsHandshakeFailed, detail: "excessive message size")),
    ]

    @Test("the table covers every fault the Lab produces")
    func tableIsComplete() {
        #expect(Set(Self.rows.map(\.fault)) == Set(LabFault.allCases))
    }

    @Test(arguments: rows)
    func fault(_ row: Row) async throws {
        let setup = try LabFaultSetup.start(row.fault)
        defer { setup.stop() }
        var configuration = HTTPSessionConfiguration(
            serverTrust: try Lab.decider(anchors: TrustStore([try Certificate(derEncoded: setup.root.der)], sources: ["lab root"])))
        configuration.resolve = setup.resolve
        configuration.proxy = setup.proxyURL.map { ProxyConfiguration(url: $0) }
        configuration.timeout = row.timeout
        configuration.connectTimeout = row.timeout
        let session = try HTTPSession(configuration: configuration)

        // The request runs on the session's transfer thread (`transferExecutor`) and the clock
        // is read there. Suites share one process whose cooperative pool has as many threads
        // as cores (2 on CI), and other suites block them for seconds at a time (the CLI tests
        // wait for child processes): an await resumed on the pool could come back long after
        // the error arrived, and the bound would measure the harness instead of the library.
        let url = setup.url
        let (error, elapsed) = await withTaskExecutorPreference(session.transferExecutor) {
            let started = ContinuousClock.now
            let error = await failure { try await session.get(url) }
            return (error, (ContinuousClock.now - started).seconds)
        }

        switch (row.expected, error) {
        case (.transport(let kind, let detail), .transport(let transport)?):
            #expect(transport.kind == kind, "\(transport)")
            #expect(detail.isEmpty || transport.message.contains(detail), "\(transport)")
        case (.timedOut, .timedOut(let transport)?):
            #expect(transport.kind == .timedOut)
            // The timeout really fired: curl never ends a request early, so this cannot flake.
            #expect(elapsed >= row.timeout * 0.9, "ended after \(elapsed) s")
        case (.trustRejected(let kind), .serverTrustRejected(let decision)?):
            #expect(decision.validationFailure?.kind == kind, "\(decision)")
        case (.transportOrTimeout(let kind), .transport(let transport)?):
            #expect(transport.kind == kind, "\(transport)")
        case (.transportOrTimeout, .timedOut?):
            break
        case (.proxyRefused(let status), .proxyRefused(let actual, let transport)?):
            #expect(actual == status, "\(transport)")
            #expect(transport.kind == .proxyFailed, "\(transport)")
        default:
            Issue.record("expected \(row.expected), got \(error.map { "\($0)" } ?? "no HTTPError")")
        }
        #expect(elapsed < row.timeout + Self.slack, "took \(elapsed) s")

        // No connection to the faulty peer outlives the session.
        session.invalidate()
        let ports = Set([setup.server?.port, setup.relay?.port].compactMap { $0 })
        if !ports.isEmpty {
            #expect(
                await eventually { connectedSockets(toPorts: ports).isEmpty },
                "sockets still connected to \(ports): \(connectedSockets(toPorts: ports))")
        }
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Descriptors of this process that are TCP sockets connected to one of `ports` on the peer
/// side: exact per server, whatever other suites running in parallel open.
func connectedSockets(toPorts ports: Set<UInt16>) -> [Int32] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.compactMap(Int32.init).filter { descriptor in
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        guard status == 0 else { return false }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return ports.contains(
                withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
                })
        case AF_INET6:
            return ports.contains(
                withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
                })
        default:
            return false
        }
    }.sorted()
}
