import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import TrustEvaluation

/// An `https://HOST[:PORT]` argument with the `--resolve` entry that applies to it.
struct HTTPSTarget {
    let host: String
    let port: Int
    /// The address to connect to instead of resolving `host` (from `--resolve`).
    let connectTo: String?

    /// `https://host:port/` (brackets around IPv6 literals).
    var url: String { "https://\(authority)/" }
    var authority: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    /// Whether a positional argument names a server rather than a file.
    static func looksLikeURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("https://") || lower.hasPrefix("http://")
    }

    /// Parses `https://HOST[:PORT][/…]` and picks the `--resolve HOST:PORT:ADDR` entry for it.
    init(_ text: String, resolve entries: [String]) throws {
        guard text.lowercased().hasPrefix("https://") else {
            throw CLIError("'\(text)' is not an https:// URL (plain http has no certificate to show)")
        }
        guard let components = URLComponents(string: text), var host = components.host, !host.isEmpty else {
            throw CLIError("'\(text)' is not a URL (expected https://HOST[:PORT])")
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard components.user == nil, components.password == nil else { throw CLIError("'\(text)': credentials in the URL are not used") }
        let port = components.port ?? 443
        guard (1...65535).contains(port) else { throw CLIError("'\(text)': port \(port) is not in 1-65535") }
        self.host = host
        self.port = port
        var address: String?
        for entry in entries {
            let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, !parts[0].isEmpty, let entryPort = Int(parts[1]), !parts[2].isEmpty else {
                throw CLIError("--resolve '\(entry)' is not HOST:PORT:ADDRESS")
            }
            guard String(parts[0]).lowercased() == host.lowercased() && entryPort == port else {
                throw CLIError("--resolve '\(entry)' does not match \(host):\(port)")
            }
            var value = String(parts[2])
            if value.hasPrefix("[") && value.hasSuffix("]") { value = String(value.dropFirst().dropLast()) }
            address = value
        }
        self.connectTo = address
    }

    /// Connects (through `proxy`, if given) and records what the server serves; network and
    /// TLS failures are exit 4.
    func probe(timeout: Double, request: TLSProbe.Request, proxy: ProxyConfiguration? = nil) throws -> ProbeResult {
        let host = self.host
        let port = self.port
        let address = connectTo
        let result = Blocking.run { () -> Result<ProbeResult, HTTPError> in
            do throws(HTTPError) {
                return .success(
                    try await TLSProbe.fetch(
                        host: host, port: port, connectTo: address, timeout: timeout, request: request,
                        proxy: proxy))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let probe): return probe
        case .failure(.invalidRequest(let reason)): throw CLIError("\(url): \(reason)")
        case .failure(let error): throw CLIError("\(url): \(error)", code: GetCommand.networkError)
        }
    }

    /// The `--timeout` value (default 10 s).
    static func timeout(_ options: Options) throws -> Double {
        guard let text = options.value("--timeout") else { return 10 }
        guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
            throw CLIError("--timeout must be a positive number of seconds, got '\(text)'")
        }
        return seconds
    }
}

/// Whether a served chain is trusted for a host: by the trust options given (`--cacert`,
/// `--anchors`, `--pin`, `--policy`, … as `get` takes them, ``TrustOptions``), and without
/// any, against the system roots with the host checked, which is what a default HTTPS client
/// decides. `inspect https://` and `pins` show it; the decision is the one `get` with the same
/// options would make.
struct ChainVerification {
    let verified: Bool
    let path: [Certificate]?
    let failure: ValidationFailure?
    /// Why not, when the refusal is not a path-validation failure (a pin, a policy rule), or
    /// why the decision could not be made.
    let problem: String?
    /// What the chain was checked against, for messages: "the system roots", "--cacert ca.pem".
    let against: String
    /// What the accepting decision rested on (``CurlOutput/checked(_:)``), `nil` when refused.
    let checked: String?

    var reason: String? { failure?.description ?? problem }

    /// The trust options of `get` that `inspect https://` and `pins` take too.
    static let valueNames = TrustOptions.valueNames
    static let flagNames = TrustOptions.flagNames

    /// The trust options among `options`, with what they check against in words.
    static func trustOptions(_ options: Options) -> (TrustOptions, against: String) {
        let trust = TrustOptions(values: options.values.filter { valueNames.contains($0.key) }, flags: options.flags.intersection(flagNames))
        var against: String
        let cacerts = options.values["--cacert"] ?? []
        let anchors = options.values["--anchors"] ?? []
        if !cacerts.isEmpty || options.flags.contains("--anchors-only") {
            against = "the roots in " + (cacerts + anchors).joined(separator: ", ")
        } else if !anchors.isEmpty {
            against = "the system roots and " + anchors.joined(separator: ", ")
        } else {
            against = "the system roots"
        }
        if let policy = options.values["--policy"]?.last { against += " under --policy \(policy)" }
        if trust.hasPins { against += " with the pins given" }
        return (trust, against)
    }

    /// The decider the options describe for `host`; bad options are exit 2 before connecting.
    static func decider(_ trust: TrustOptions, host: String) throws -> ServerTrustDecider {
        try trust.decider(host: host, alwaysPolicy: false)
    }

    init(chain: [Certificate], host: String, decider: ServerTrustDecider, against: String) {
        self.against = against
        guard !chain.isEmpty else {
            (verified, path, failure, problem, checked) = (false, nil, nil, "no certificate served", nil)
            return
        }
        let decision = decider.decide(ServedChain(certificates: chain, host: host))
        verified = decision.isTrusted
        path = decision.verifiedChain
        failure = decision.validationFailure
        problem = decision.failure.flatMap { $0.validationFailure == nil ? $0.description : nil }
        checked = decision.isTrusted ? CurlOutput.checked(decision) : nil
    }
}

/// `servertrust inspect https://HOST[:PORT]`: what a server serves, and whether a default
/// client would trust it.
enum InspectHost {
    static func run(_ argument: String, options: Options) throws -> Int32 {
        let target = try HTTPSTarget(argument, resolve: options.values["--resolve"] ?? [])
        let timeout = try HTTPSTarget.timeout(options)
        let proxy = try ProxyOptions.configuration(options)
        let (trust, against) = ChainVerification.trustOptions(options)
        let decider = try ChainVerification.decider(trust, host: target.host)
        let probe = try target.probe(
            timeout: timeout, request: options.flags.contains("--handshake-only") ? .handshakeOnly : .head,
            proxy: proxy)
        let verification = ChainVerification(chain: probe.chain, host: target.host, decider: decider, against: against)
        let scts = try InspectSCTs.make(options, certificates: probe.chain, now: CommandClock.now)
        if options.flags.contains("--json") {
            Console.printSafe(json(probe, target: target, proxy: proxy, verification: verification, scts: scts).rendered)
        } else {
            Console.printSafe(
                human(
                    probe, target: target, proxy: proxy, verification: verification,
                    handshakeOnly: options.flags.contains("--handshake-only"), scts: scts))
        }
        return verification.verified ? ExitCode.success : ExitCode.rejected
    }

    /// The host form's JSON object (README "The commands", `inspect https://HOST[:PORT]`).
    static func json(_ probe: ProbeResult, target: HTTPSTarget, proxy: ProxyConfiguration?, verification: ChainVerification, scts: InspectSCTs? = nil)
        -> JSON
    {
        .object([
            ("url", .string(target.url)),
            ("host", .string(target.host)),
            ("port", .int(target.port)),
            ("connectTo", target.connectTo.map(JSON.string) ?? .null),
            ("proxy", proxy.map { .string($0.url) } ?? .null),
            ("tlsVersion", probe.tlsVersion.map(JSON.string) ?? .null),
            ("cipher", probe.cipher.map(JSON.string) ?? .null),
            ("alpn", probe.alpn.map(JSON.string) ?? .null),
            ("httpStatus", probe.httpStatus.map(JSON.int) ?? .null),
            ("requestError", probe.requestError.map { .string("\($0)") } ?? .null),
            ("verified", .bool(verification.verified)),
            ("verification", verification.reason.map(JSON.string) ?? .null),
            ("failureKind", verification.failure.map { .string($0.kind.rawValue) } ?? .null),
            ("verifiedChain", verification.path.map { .array($0.map { .string($0.subject.rfc4514) }) } ?? .null),
            ("certificates", .array(probe.chain.enumerated().map { InspectCommand.json($0.element, file: nil, index: $0.offset, scts: scts) })),
        ])
    }

    static func human(
        _ probe: ProbeResult, target: HTTPSTarget, proxy: ProxyConfiguration?, verification: ChainVerification,
        handshakeOnly: Bool, scts: InspectSCTs? = nil
    ) -> String {
        var lines: [(String, String)] = []
        lines.append(("Protocol", probe.tlsVersion ?? "unknown"))
        lines.append(("Cipher", probe.cipher ?? "unknown"))
        if let alpn = probe.alpn {
            lines.append(("ALPN", alpn + (probe.httpStatus.map { " (HEAD / answered \($0))" } ?? "")))
        } else if handshakeOnly {
            lines.append(("ALPN", "not shown (--handshake-only sends no request)"))
        } else {
            lines.append(("ALPN", "unknown (the HEAD request failed: \(probe.requestError.map { "\($0)" } ?? "no response"))"))
        }
        if verification.verified {
            let checked = verification.checked.flatMap { $0 == "chain" ? nil : " (checked: \($0))" } ?? ""
            lines.append(("Verified", "yes, for \(target.host) against \(verification.against)\(checked)"))
            if let path = verification.path {
                lines.append(("Path", path.map { $0.subject.rfc4514.isEmpty ? "(empty subject)" : $0.subject.rfc4514 }.joined(separator: "  <-  ")))
            }
        } else {
            lines.append(("Verified", "NO, for \(target.host) against \(verification.against): \(verification.reason ?? "unknown")"))
        }
        let width = lines.map(\.0.count).max() ?? 0
        var out =
            "Connected to \(target.authority)" + (target.connectTo.map { " (\($0), from --resolve)" } ?? "")
            + (proxy.map { " through the proxy \($0.url)" } ?? "") + "\n"
        out += lines.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count) + "  " + $0.1 }.joined(separator: "\n")
        out += "\n\nServed chain: \(probe.chain.count) certificate\(probe.chain.count == 1 ? "" : "s")"
        for (index, certificate) in probe.chain.enumerated() {
            out += "\n\n" + InspectCommand.human(certificate, file: target.url, index: index, count: probe.chain.count, scts: scts)
        }
        return out
    }
}
