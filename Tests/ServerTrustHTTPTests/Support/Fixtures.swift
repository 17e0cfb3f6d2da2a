import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import TrustEvaluation

/// Loopback servers and sessions for the HTTPS client tests. libcurl and OpenSSL check
/// validity against the wall clock, so every leaf here is valid around now.
enum Lab {
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// A web PKI whose leaf is valid today.
    static func pki(host: String, keySlot: Int = 40, algorithm: LabKeyAlgorithm = .p256) throws -> LabPKI {
        try LabPKI.webChain(
            host: host, algorithm: algorithm, leafNotBefore: now - LabClock.day,
            leafNotAfter: now + 30 * LabClock.day, keySlot: keySlot)
    }

    /// Another leaf from `pki`'s intermediate, valid today unless times are given.
    static func identity(_ pki: LabPKI, host: String, notBefore: Int64? = nil, notAfter: Int64? = nil) throws -> LabTLSServer.Identity {
        let leaf = try pki.issueLeaf(host: host, notBefore: notBefore ?? now - LabClock.day, notAfter: notAfter ?? now + 30 * LabClock.day)
        return LabTLSServer.Identity(chain: [leaf, pki.intermediate], key: pki.leafKey)
    }

    /// Starts a server for `identity`.
    static func server(
        _ identity: LabTLSServer.Identity, name: String = "lab",
        configure: (inout LabTLSServer.Configuration) -> Void = { _ in }
    ) throws -> LabTLSServer {
        var configuration = LabTLSServer.Configuration(identity: identity, name: name)
        configure(&configuration)
        return try LabTLSServer.started(configuration)
    }

    static func certificate(_ lab: LabCertificate) throws -> Certificate { try Certificate(derEncoded: lab.der) }

    /// The decider most tests want: chain validation with the host name against `anchors`
    /// and, given `pins`, an SPKI pin set for the `hosts` patterns checked on the validated path
    /// (with `validates: false`, on the signature chain: the leaf and the certificates that signed it).
    static func decider(
        anchors: TrustStore, pins: [SPKIPin] = [], hosts: [String] = ["**.example.test", "**.nginx.test"], validates: Bool = true
    ) throws -> ServerTrustDecider {
        guard !pins.isEmpty else { return ServerTrustDecider(DefaultTrustEvaluator(), anchors: anchors) }
        let sets = try hosts.map { PinnedHost(pattern: try HostPattern($0), pins: pins, requiresBackupPin: false) }
        let configuration = try PinningConfiguration(sets)
        return ServerTrustDecider(
            SPKIPinsTrustEvaluator(configuration: configuration, performDefaultValidation: validates, validateHost: validates), anchors: anchors)
    }

    /// A decider from a closure: `nil` accepts, a string rejects with that reason.
    static func decider(_ name: String, _ body: @escaping @Sendable (PeerTrust) -> String?) -> ServerTrustDecider {
        ServerTrustDecider(ClosureEvaluator(name: name, body: body), anchors: .empty)
    }

    static func anchors(_ pki: LabPKI) throws -> TrustStore { TrustStore([try certificate(pki.root)], sources: ["lab root"]) }

    /// A session trusting `pki`'s root, with `host` resolved to the server.
    static func session(
        trusting pki: LabPKI, resolving entries: [(host: String, server: LabTLSServer)],
        configure: (inout HTTPSessionConfiguration) -> Void = { _ in }
    ) throws -> HTTPSession {
        var configuration = HTTPSessionConfiguration(serverTrust: try decider(anchors: try anchors(pki)))
        configuration.resolve = entries.map { "\($0.host):\($0.server.port):127.0.0.1" }
        configuration.timeout = 20
        configure(&configuration)
        return try HTTPSession(configuration: configuration)
    }

    /// A client certificate (EKU clientAuth) from `pki`'s intermediate.
    static func clientLeaf(_ pki: LabPKI, name: String = "lab client") throws -> LabCertificate {
        let spec = LabCertificateSpec(
            subject: LabName([("CN", name)]), notBefore: now - LabClock.day, notAfter: now + 30 * LabClock.day,
            extensions: [
                .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["clientAuth"]),
                .subjectKeyIdentifier(), .authorityKeyIdentifier(),
            ])
        return try LabCertificate.issue(spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer)
    }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "servertrust-http-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// The first instant a condition holds, polled every 0.2 ms on a thread of its own rather
/// than from a task: a loaded test run can keep the cooperative pool from running a task for
/// seconds, which would be read as the time the condition took.
final class Watch: Sendable {
    private let seen = Mutex<ContinuousClock.Instant?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Starts watching `condition` for at most `seconds`.
    init(for seconds: Double, _ condition: @escaping @Sendable () -> Bool) {
        let thread = Thread { [self] in
            let clock = ContinuousClock()
            let end = clock.now + .milliseconds(Int(seconds * 1000))
            while clock.now < end {
                if condition() {
                    let now = clock.now
                    self.seen.withLock { $0 = now }
                    break
                }
                usleep(200)
            }
            self.done.signal()
        }
        thread.start()
    }

    /// When the condition first held, waiting up to `seconds` for the watch to end; `nil`
    /// if it never held.
    func instant(within seconds: Double) async -> ContinuousClock.Instant? {
        let done = self.done
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                _ = done.wait(timeout: .now() + seconds)
                done.signal()
                continuation.resume()
            }
        }
        return seen.withLock { $0 }
    }
}

/// A thread-safe list for recording what callbacks saw.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
}

extension HTTPError {
    /// The decision of a trust rejection, if this is one.
    var rejection: TrustDecision? {
        if case .serverTrustRejected(let decision) = self { return decision }
        return nil
    }
}

/// Runs `body`, returning its ``HTTPError`` (`nil` if it succeeds or throws anything else).
func failure<T>(_ body: () async throws -> T) async -> HTTPError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? HTTPError
    }
}

/// A test's own evaluator: `body` returns `nil` to accept or the reason to reject.
struct ClosureEvaluator: ServerTrustEvaluating {
    let name: String
    let body: @Sendable (PeerTrust) -> String?

    func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        if let reason = body(trust) { return .rejected(trust.served, by: name, .customEvaluationFailed, reason) }
        return .accepted(trust.served, by: name, "accepted by \(name)")
    }
}

/// The repository root: the nearest folder above `file` that holds `Package.swift`, so a test
/// finds the repository's files wherever in the test folders it lives.
func repositoryRoot(_ file: String = #filePath) -> URL {
    var folder = URL(fileURLWithPath: file).deletingLastPathComponent()
    while folder.path != "/", !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
        folder = folder.deletingLastPathComponent()
    }
    return folder
}
