import CertificateParsing
import Dispatch
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import TrustEvaluation

/// `servertrust demo`: proves the AFNetworking policy matrix live, on this machine.
///
/// It makes a throwaway PKI, starts local TLS servers for six situations (the genuine server,
/// a certificate for another host from the same CA, an expired certificate, a pinned
/// self-signed certificate, an attacker's self-signed certificate, and a man-in-the-middle
/// relay whose interception CA the user trusts, the Charles case), then connects to each with
/// `HTTPSession` under all 12 combinations of pinning mode × allowInvalidCertificates ×
/// validatesDomainName, in AFNetworking-compatible and strict semantics, and compares every
/// outcome with the expected table below (derived from AFNetworking's AFSecurityPolicy.m,
/// `evaluateServerTrust:forDomain:`).
enum DemoCommand {
    static let host = "api.demo.test"

    /// The situations, in column order.
    enum Situation: String, CaseIterable, Sendable {
        // Column order follows the reference's fixtures A–E, then the proxy (F).
        case genuine
        case wrongHost = "wrong-host"
        case pinnedSelfSigned = "pinned-self-signed"
        case attacker
        case expired
        case mitm
        // The attack on pinning itself (OkHttp's CVE-2016-2402): the genuine, public, pinned
        // intermediate appended to an impostor's chain.
        case attackerWithPinned = "attacker+int"
        case mitmWithPinned = "mitm+int"

        var title: String {
            switch self {
            case .genuine: return "genuine"
            case .wrongHost: return "other host"
            case .expired: return "expired"
            case .pinnedSelfSigned: return "pinned self-signed"
            case .attacker: return "attacker self-signed"
            case .mitm: return "MITM (trusted proxy CA)"
            case .attackerWithPinned: return "attacker self-signed + the genuine pinned intermediate"
            case .mitmWithPinned: return "MITM (trusted proxy CA) + the genuine pinned intermediate"
            }
        }

        /// What a person should want: only the genuine server and the deliberately pinned
        /// self-signed one are the real server.
        var isLegitimate: Bool { self == .genuine || self == .pinnedSelfSigned }

        /// Column heading in the matrix.
        var column: String {
            switch self {
            case .pinnedSelfSigned: return "pinned-self"
            default: return rawValue
            }
        }
    }

    /// One row of the matrix.
    struct Combination: Sendable, Hashable {
        let mode: PinningMode
        let allowInvalid: Bool
        let validatesDomain: Bool
    }

    static let combinations: [Combination] = PinningMode.allCases.flatMap { mode in
        [(false, true), (false, false), (true, true), (true, false)].map {
            Combination(mode: mode, allowInvalid: $0.0, validatesDomain: $0.1)
        }
    }

    /// Expected outcomes (true = accepted), columns in `Situation.allCases` order, with the
    /// genuine chain's intermediate and the self-signed certificate pinned. Rows follow
    /// the 12 combinations in mode, allowInvalidCertificates, validatesDomainName order; "CA
    /// pinned" cells are accepted in the rows where AFSecurityPolicy.m accepts a chain whose
    /// CA key or certificate is pinned.
    ///
    /// The last two columns append the genuine pinned intermediate to the attacker's and the
    /// MITM's chains. On Apple, AFNetworking compares pins with the chain `trustd` built: the
    /// evaluated chain in rows #5, #6 and #9-#12 (the MITM's ends at its own root, the
    /// attacker's does not validate), and in #7 and #8 the chain `SecTrust` links by signatures
    /// from the leaf, where a certificate that signed nothing below it never appears. So no
    /// pinning row accepts either; only the non-pinning rows behave as in their own columns.
    static let compatExpected: [Combination: [Bool]] = {
        let rows: [(PinningMode, Bool, Bool, String)] = [
            (.none, false, true, "+----+-+"),  // #1 system trust + host: the MITM is trusted
            (.none, false, false, "++---+-+"),  // #2 no host check: any trusted cert for any host
            (.none, true, true, "--------"),  // #3 early NO: "MUST use pinning"
            (.none, true, false, "++++++++"),  // #4 nothing evaluated: everything accepted
            (.publicKey, false, true, "+-------"),  // #5
            (.publicKey, false, false, "++------"),  // #6 CA key pinned covers the other host
            (.publicKey, true, true, "+++-+---"),  // #7 key match only: host and expiry unchecked
            (.publicKey, true, false, "+++-+---"),  // #8
            (.certificate, false, true, "+-------"),  // #9
            (.certificate, false, false, "++------"),  // #10
            (.certificate, true, true, "+-+-----"),  // #11 anchored on pins, host checked
            (.certificate, true, false, "+++-----"),  // #12
        ]
        var table: [Combination: [Bool]] = [:]
        for (mode, allowInvalid, validates, cells) in rows {
            table[Combination(mode: mode, allowInvalid: allowInvalid, validatesDomain: validates)] = cells.map { $0 == "+" }
        }
        return table
    }()

    /// Strict semantics fix AFNetworking's public-key quirk: with allowInvalidCertificates the
    /// pinned keys become the only anchors and the chain is still validated (host when
    /// validatesDomainName, expiry always), so #7 refuses the other host and the expired
    /// certificate and #8 the expired one (ServerTrust's `PolicySemantics.strict`).
    static let strictExpected: [Combination: [Bool]] = {
        var table = compatExpected
        table[Combination(mode: .publicKey, allowInvalid: true, validatesDomain: true)] = "+-+-----".map { $0 == "+" }
        table[Combination(mode: .publicKey, allowInvalid: true, validatesDomain: false)] = "+++-----".map { $0 == "+" }
        return table
    }()

    struct Cell: Sendable {
        let combination: Combination
        let strict: Bool
        let situation: Situation
        let expected: Bool
        let actual: Bool
        let reason: String
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments, flags: ["--json", "--help", "--no-color"], values: [])
        if options.flags.contains("--help") {
            print(
                """
                usage: servertrust demo [--json] [--no-color]

                Starts local TLS servers (genuine, other host, expired, pinned self-signed, attacker,
                man-in-the-middle) and runs every AFNetworking policy combination against each, through
                the HTTPS client, in compat and strict semantics, then the rotation scene: the API server
                moves to a key the installed pins do not cover, and signed pin-set updates (forged,
                tampered, served by a man in the middle, replayed, and the operator's) are fetched and
                verified live. Prints the matrix and the scene. It stops every server and deletes its
                temporary folder when it ends, also on Ctrl-C.

                options:
                  --json        {"matrix": [one object per cell: mode, allowInvalidCertificates,
                                validatesDomainName, strict, situation, expected, actual, reason],
                                "rotation": [one object per step: step, expected, actual, detail]}
                  --no-color    no colour (the default when stdout is not a terminal)

                exit codes: 0 every cell and step is as expected, 1 some is not, 2 bad usage
                """)
            return ExitCode.success
        }
        guard options.positionals.isEmpty else { throw CLIError("unexpected argument '\(options.positionals[0])' (usage: servertrust demo --help)") }
        let started = Date()
        let lab = try DemoLab()
        let cleanup = DemoCleanup(lab: lab)
        cleanup.installSignalHandler()
        defer { cleanup.run() }

        let cells = try runMatrix(lab)
        let elapsed = Date().timeIntervalSince(started)
        let rotationStarted = Date()
        let steps = try runRotation(in: lab.directory)
        let rotationElapsed = Date().timeIntervalSince(rotationStarted)
        let reportsStarted = Date()
        let reports = try DemoReports.runBlocking(lab)
        let reportsElapsed = Date().timeIntervalSince(reportsStarted)
        if options.flags.contains("--json") {
            print(
                JSON.object([
                    ("matrix", .array(cells.map(json))), ("rotation", .array(steps.map(DemoRotation.json))),
                    ("reports", .array(reports.steps.map(DemoRotation.json))), ("dashboard", .string(reports.database)),
                ]).rendered)
        } else {
            let color = !options.flags.contains("--no-color") && isatty(1) == 1
            printMatrix(cells, color: color, elapsed: elapsed)
            DemoRotation.print(steps, elapsed: rotationElapsed)
            DemoReports.print(reports, elapsed: reportsElapsed)
        }
        let passed = cells.allSatisfy { $0.expected == $0.actual } && steps.allSatisfy(\.matches) && reports.steps.allSatisfy(\.matches)
        return passed ? ExitCode.success : ExitCode.rejected
    }

    /// The rotation scene, run to completion from this synchronous command.
    static func runRotation(in directory: String) throws -> [DemoRotation.Step] {
        let result = Mutex<Result<[DemoRotation.Step], any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let steps = try await DemoRotation.run(in: directory)
                result.withLock { $0 = .success(steps) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        guard let outcome = result.withLock({ $0 }) else { throw CLIError("the rotation scene did not finish") }
        return try outcome.get()
    }

    /// Runs every cell through `HTTPSession`, a few at a time.
    static func runMatrix(_ lab: DemoLab) throws -> [Cell] {
        var jobs: [(Combination, Bool, Situation)] = []
        for strict in [false, true] {
            for combination in combinations {
                for situation in Situation.allCases { jobs.append((combination, strict, situation)) }
            }
        }
        let results = CellBox()
        let group = DispatchGroup()
        let limit = DispatchSemaphore(value: 8)
        for (index, job) in jobs.enumerated() {
            limit.wait()
            group.enter()
            Task.detached {
                let cell = await runCell(lab, combination: job.0, strict: job.1, situation: job.2)
                results.set(index, cell)
                limit.signal()
                group.leave()
            }
        }
        group.wait()
        return (0..<jobs.count).compactMap { results.get($0) }
    }

    static func runCell(_ lab: DemoLab, combination: Combination, strict: Bool, situation: Situation) async -> Cell {
        let expected = (strict ? strictExpected : compatExpected)[combination]?[Situation.allCases.firstIndex(of: situation) ?? 0] ?? false
        let policy = SecurityPolicy(
            pinningMode: combination.mode, pinnedCertificates: lab.pinned,
            allowInvalidCertificates: combination.allowInvalid, validatesDomainName: combination.validatesDomain,
            semantics: strict ? .strict : .compat)
        let port = lab.port(for: situation)
        var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(policy, anchors: lab.systemAnchors))
        configuration.resolve = ["\(host):\(port):127.0.0.1"]
        configuration.timeout = 10
        configuration.connectTimeout = 5
        let actual: Bool
        let reason: String
        do {
            let session = try HTTPSession(configuration: configuration)
            defer { session.invalidate() }
            let response = try await session.get("https://\(host):\(port)/")
            actual = (200..<300).contains(response.statusCode)
            reason = actual ? "accepted" : "HTTP \(response.statusCode)"
        } catch {
            actual = false
            reason = shortReason(error)
        }
        return Cell(combination: combination, strict: strict, situation: situation, expected: expected, actual: actual, reason: reason)
    }

    /// One word for a refusal, from the decision the trust callback recorded.
    static func shortReason(_ error: HTTPError) -> String {
        guard case .serverTrustRejected(let decision) = error else { return "error" }
        if let failure = decision.validationFailure {
            switch failure.kind {
            case .hostnameMismatch: return "wrong-host"
            case .expired, .notYetValid: return "expired"
            case .untrustedRoot, .badSignature, .notCertificateAuthority: return "untrusted"
            default: return failure.kind.rawValue
            }
        }
        let kind = decision.reason.prefix { $0.isLetter }
        switch kind {
        case "allowInvalidCertificatesRequiresPinning": return "needs-pins"
        case "hostValidationFailed": return "wrong-host"
        case "certificatePinningFailed", "publicKeyPinningFailed", "spkiPinningFailed": return "not-pinned"
        case "chainValidationFailed": return "untrusted"
        default: return kind.isEmpty ? "rejected" : String(kind)
        }
    }

    static func json(_ cell: Cell) -> JSON {
        .object([
            ("mode", .string(cell.combination.mode.rawValue)),
            ("allowInvalidCertificates", .bool(cell.combination.allowInvalid)),
            ("validatesDomainName", .bool(cell.combination.validatesDomain)),
            ("strict", .bool(cell.strict)),
            ("situation", .string(cell.situation.rawValue)),
            ("expected", .string(cell.expected ? "accepted" : "rejected")),
            ("actual", .string(cell.actual ? "accepted" : "rejected")),
            ("reason", .string(cell.reason)),
        ])
    }

    static func trimmed(_ line: String) -> String {
        var line = line
        while line.last == " " { line.removeLast() }
        return line
    }

    static func printMatrix(_ cells: [Cell], color: Bool, elapsed: Double) {
        func paint(_ text: String, _ code: String) -> String { color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
        let width = 13
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        print("ServerTrust demo: AFNetworking's policy matrix against live local servers for \(host)")
        print("Pinned: the genuine chain's intermediate CA and the self-signed certificate. The client's \"system\"")
        print("store holds the public-like root and the Charles-style interception root the user installed.")
        for strict in [false, true] {
            print("")
            print(paint(strict ? "STRICT semantics (AFNetworking's quirks fixed)" : "COMPAT semantics (AFNetworking 4.x, bit for bit)", "1"))
            var header = pad("mode", 12) + pad("allowInv", 9) + pad("domain", 8)
            for situation in Situation.allCases { header += pad(situation.column, width) }
            print(trimmed(header))
            for combination in combinations {
                var line =
                    pad(combination.mode.rawValue, 12) + pad(combination.allowInvalid ? "YES" : "NO", 9)
                    + pad(combination.validatesDomain ? "YES" : "NO", 8)
                for situation in Situation.allCases {
                    guard let cell = cells.first(where: { $0.strict == strict && $0.combination == combination && $0.situation == situation })
                    else { continue }
                    // Surprising: an impostor accepted, or the genuine server refused.
                    let surprising = cell.actual != situation.isLegitimate && !(situation == .pinnedSelfSigned && !cell.actual)
                    var word = cell.actual ? "accepted" : cell.reason
                    if surprising { word += "!" }
                    if cell.actual != cell.expected { word = "MISMATCH" }
                    let padded = pad(word, width)
                    if cell.actual != cell.expected {
                        line += paint(padded, "1;41")
                    } else if surprising {
                        line += paint(padded, cell.actual ? "1;31" : "33")
                    } else {
                        line += paint(padded, cell.actual ? "32" : "2")
                    }
                }
                print(trimmed(line))
            }
        }
        let mismatches = cells.filter { $0.expected != $0.actual }
        print("")
        print("\"!\" marks a surprise: an impostor accepted, or the genuine server refused.")
        print("Columns: \(Situation.allCases.map { "\($0.column) = \($0.title)" }.joined(separator: "; ")).")
        print("")
        print("Three policies most apps should pick:")
        print("  1. System trust with hostname (mode none, allowInvalid NO, domain YES): no rotation cost, but a")
        print("     user-installed proxy CA (the MITM column) is trusted, which is what pinning exists to stop.")
        print("  2. Public-key pinning with a backup pin (SPKI sha256 pins of your key and a spare, or your CA's")
        print("     key): certificates can be re-issued on the same key freely; rotating the key needs an app")
        print("     update that ships the backup pin first.")
        print("  3. Certificate pinning (mode certificate, pin the intermediate or leaf): every renewal of the")
        print("     pinned certificate needs an app update before the old one expires.")
        print("")
        let total = cells.count
        print(
            "\(total - mismatches.count) of \(total) cells match the expected table"
                + (mismatches.isEmpty
                    ? ""
                    : "; mismatches: "
                        + mismatches.map {
                            "\($0.combination.mode.rawValue)/\($0.combination.allowInvalid)/\($0.combination.validatesDomain)/\($0.strict ? "strict" : "compat")/\($0.situation.rawValue)=\($0.reason)"
                        }.joined(separator: ", "))
                + String(format: " (%.1f s)", elapsed))
    }
}

/// Results filled in by concurrent cells.
final class CellBox: Sendable {
    private let cells = Mutex<[Int: DemoCommand.Cell]>([:])
    func set(_ index: Int, _ cell: DemoCommand.Cell) { cells.withLock { $0[index] = cell } }
    func get(_ index: Int) -> DemoCommand.Cell? { cells.withLock { $0[index] } }
}

/// The demo's PKI and servers, in a temporary folder.
final class DemoLab: Sendable {
    let directory: String
    let pinned: [Certificate]
    let systemAnchors: TrustStore
    /// The public-like root alone (what a collector counts as public) and the CA under it.
    let publicRoot: Certificate
    let issuingCA: Certificate
    private let servers: [DemoCommand.Situation: LabTLSServer]
    private let relay: LabMITMRelay
    /// The MITM again, sending the genuine pinned intermediate after each minted leaf.
    private let appendingRelay: LabMITMRelay

    init() throws {
        let template = NSTemporaryDirectory() + "servertrust-demo-XXXXXX"
        var buffer = Array(template.utf8CString)
        guard let made = mkdtemp(&buffer) else { throw CLIError("cannot create a temporary folder") }
        directory = String(cString: made)
        do {
            let now = Int64(Date().timeIntervalSince1970)
            let day: Int64 = 86_400
            let host = DemoCommand.host
            // A public-like root and intermediate, valid around now.
            let pki = try LabPKI.webChain(host: host, algorithm: .p256, leafNotBefore: now - day, leafNotAfter: now + 30 * day, keySlot: 70)
            let otherLeaf = try pki.issueLeaf(host: "other.demo.test", notBefore: now - day, notAfter: now + 30 * day)
            let expiredLeaf = try pki.issueLeaf(host: host, notBefore: now - 60 * day, notAfter: now - day)
            // The self-signed certificate the app pins, and an attacker's, for the same host.
            let pinnedKey = try LabKey.shared(.p256, slot: 213)
            let pinnedSelfSigned = try LabCertificate.issue(
                LabPKI.leafSpec(host: host, keyAlgorithm: .p256, notBefore: now - day, notAfter: now + 365 * day), subjectKey: pinnedKey)
            let attackerKey = try LabKey.shared(.p256, slot: 214)
            let attacker = try LabCertificate.issue(
                LabPKI.leafSpec(host: host, keyAlgorithm: .p256, notBefore: now - day, notAfter: now + 365 * day), subjectKey: attackerKey)
            // The interception CA a user installed to debug traffic (Charles, mitmproxy).
            let interceptionKey = try LabKey.shared(.p256, slot: 215)
            let interceptionRoot = try LabCertificate.issue(
                LabCertificateSpec(
                    subject: LabName([("O", "Charles Proxy"), ("CN", "Charles Proxy CA (demo)")]),
                    notBefore: now - 365 * day, notAfter: now + 365 * day,
                    extensions: [.basicConstraints(ca: true, pathLength: nil), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]),
                subjectKey: interceptionKey)

            func start(_ chain: [LabCertificate], _ key: LabKey, _ name: String) throws -> LabTLSServer {
                try LabTLSServer.started(LabTLSServer.Configuration(identity: .init(chain: chain, key: key), name: name))
            }
            var servers: [DemoCommand.Situation: LabTLSServer] = [:]
            servers[.genuine] = try start([pki.leaf, pki.intermediate], pki.leafKey, "demo-genuine")
            servers[.wrongHost] = try start([otherLeaf, pki.intermediate], pki.leafKey, "demo-other-host")
            servers[.expired] = try start([expiredLeaf, pki.intermediate], pki.leafKey, "demo-expired")
            servers[.pinnedSelfSigned] = try start([pinnedSelfSigned], pinnedKey, "demo-pinned")
            servers[.attacker] = try start([attacker], attackerKey, "demo-attacker")
            servers[.attackerWithPinned] = try start([attacker, pki.intermediate], attackerKey, "demo-attacker-appends")
            guard let genuinePort = servers[.genuine]?.port else { throw CLIError("the genuine server did not start") }
            var relayConfiguration = LabMITMRelay.Configuration(
                mode: .transparent(upstreamHost: "127.0.0.1", upstreamPort: genuinePort),
                interceptionCA: LabIssuer(certificate: interceptionRoot, key: interceptionKey), name: "demo-mitm")
            relayConfiguration.fallbackServerName = host
            relay = try LabMITMRelay.started(relayConfiguration)
            relayConfiguration.name = "demo-mitm-appends"
            relayConfiguration.interceptionChain = [pki.intermediate]
            appendingRelay = try LabMITMRelay.started(relayConfiguration)
            self.servers = servers

            _ = try LabFiles.writeBundle([pki.root, interceptionRoot], to: directory + "/system-anchors.pem")
            pinned = try [pki.intermediate, pinnedSelfSigned].map { try Certificate(derEncoded: $0.der) }
            systemAnchors = try TrustStore(contentsOf: [directory + "/system-anchors.pem"])
            publicRoot = try Certificate(derEncoded: pki.root.der)
            issuingCA = try Certificate(derEncoded: pki.intermediate.der)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    func port(for situation: DemoCommand.Situation) -> UInt16 {
        switch situation {
        case .mitm: return relay.port
        case .mitmWithPinned: return appendingRelay.port
        default: return servers[situation]?.port ?? 0
        }
    }

    func stop() {
        for server in servers.values { server.stop() }
        relay.stop()
        appendingRelay.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Stops the servers and removes the folder once, at exit or on Ctrl-C.
final class DemoCleanup: @unchecked Sendable {
    // @unchecked: `signalSource` is written once, before any signal can arrive, and only
    // kept alive here; `done` is protected by its mutex.
    private let lab: DemoLab
    private let done = Mutex(false)
    private var signalSource: (any DispatchSourceSignal)?

    init(lab: DemoLab) { self.lab = lab }

    func installSignalHandler() {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [self] in
            run()
            exit(130)
        }
        source.resume()
        signalSource = source
    }

    func run() {
        let first = done.withLock { value -> Bool in
            defer { value = true }
            return !value
        }
        if first { lab.stop() }
    }
}
