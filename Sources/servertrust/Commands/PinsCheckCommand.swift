import CertificateParsing
import ServerTrust
import ServerTrustHTTP
import TrustEvaluation

/// `servertrust pins check https://HOST --policy FILE`: a policy's pins against what the server
/// serves today (``PinHealth``): every valid path, which pin matches where, what a renewal of the
/// leaf with a new key tomorrow would do, the decision the policy makes, and the lint of the pins
/// against this chain.
enum PinsCheckCommand {
    static let usage = """
        usage: servertrust pins check https://HOST[:PORT] --policy FILE [--cacert FILE] [--resolve HOST:PORT:ADDR] [--json]

        Connects (the handshake only: nothing is sent), builds every valid path of the chain the server
        serves against the roots clients have (SSL_CERT_FILE / SSL_CERT_DIR, or --cacert, plus the
        policy's anchors for the host), and prints for each pin the policy configures for HOST whether
        it matches now and on which path; for each pin set whether it would still match if the leaf
        were renewed with a new key tomorrow, and if the CA also issued it from another intermediate;
        then the decision the policy makes for this chain, and what servertrust pins lint finds.

        options:
          --policy FILE             the policy file (required)
          --cacert FILE             the roots clients have, instead of the system's (repeatable)
          --resolve HOST:PORT:ADDR  connect to ADDR for HOST:PORT (as curl)
          --timeout SECONDS         for connecting and the handshake (default 10)
          --json                    one JSON object: host, port, rule, paths, pins, pinSets, decision, lint

        exit codes: 0 the policy trusts the server, 1 it refuses it (or no rule covers the host),
        2 unreadable or malformed input or bad usage, 4 connection or TLS failure
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments, flags: ["--help", "--json"], values: ["--policy", "--cacert", "--resolve", "--timeout"])
        if options.flags.contains("--help") {
            print(usage)
            return ExitCode.success
        }
        guard options.positionals.count == 1, let source = options.positionals.first, HTTPSTarget.looksLikeURL(source) else {
            throw CLIError("one https://HOST[:PORT] expected (usage: servertrust pins check https://HOST --policy FILE; --help)")
        }
        guard let policyPath = options.value("--policy") else { throw CLIError("--policy FILE is required (usage: servertrust pins check --help)") }
        let policy: TrustPolicy
        do { policy = try PolicyFile.load(contentsOf: policyPath) } catch {
            throw CLIError("--policy \(policyPath): " + error.problems.map(\.description).joined(separator: "; "))
        }
        let roots = try roots(options)
        let target = try HTTPSTarget(source, resolve: options.values["--resolve"] ?? [])
        let probe = try target.probe(timeout: try HTTPSTarget.timeout(options), request: .handshakeOnly)
        let now = CommandClock.now
        guard let health = PinHealth(policy: policy, chain: probe.chain, host: target.host, roots: roots, at: now) else {
            throw CLIError("--policy \(policyPath): no rule covers \(target.host) and hosts no rule covers are refused", code: ExitCode.rejected)
        }
        let decision = ServerTrustDecider(policy: policy, anchors: roots, clock: .fixed(now)).decide(
            ServedChain(certificates: probe.chain, host: target.host, port: target.port))
        let lint = policy.lint(chain: probe.chain, anchors: roots, at: now)
        if options.flags.contains("--json") {
            print(json(health, target: target, decision: decision, lint: lint).rendered)
        } else {
            print(human(health, target: target, policy: policyPath, decision: decision, lint: lint))
        }
        return decision.isTrusted ? ExitCode.success : ExitCode.rejected
    }

    /// The roots clients have: `--cacert` files (curl's meaning: they replace the system's), else
    /// the system store (`SSL_CERT_FILE` / `SSL_CERT_DIR`).
    static func roots(_ options: Options) throws -> TrustStore {
        let files = options.values["--cacert"] ?? []
        guard files.isEmpty else {
            return TrustStore(try files.flatMap { try FileKind.certificates($0, option: "--cacert") }, sources: files)
        }
        do { return try TrustStore.system() } catch { throw CLIError("system trust store: \(error) (give --cacert FILE)") }
    }

    static func path(_ certificates: [Certificate]) -> String {
        certificates.map { Console.oneLine($0.subject.rfc4514) }.joined(separator: " ← ")
    }

    static func human(_ health: PinHealth, target: HTTPSTarget, policy: String, decision: TrustDecision, lint: [PinLintFinding]) -> String {
        var lines = ["Pins of \(Console.oneLine(policy)) for \(target.authority) (rule: \(health.rule.map(Console.oneLine) ?? "hosts no rule covers"))", ""]
        if health.paths.isEmpty {
            lines.append("Valid paths: none (\(Console.oneLine(health.failure?.description ?? "no path")))")
        } else {
            lines.append("Valid paths (\(health.paths.count)):")
            for (index, path) in health.paths.enumerated() { lines.append("  \(index + 1). " + Self.path(path)) }
        }
        lines.append("")
        if health.pins.isEmpty {
            lines.append("Pins: none configured for \(target.host)")
        } else {
            lines.append("Pins:")
            for report in health.pins {
                let matches =
                    report.matches.isEmpty
                    ? "no match now (on no valid path: a spare key, or a key this server no longer uses)"
                    : "matches now: "
                        + report.matches.map { "path \($0.path + 1) position \($0.position) (\(Console.oneLine($0.subject)))" }.joined(separator: "; ")
                lines.append("  \(report.pin) [\(report.pin.scope.rawValue), \(report.source)]: \(matches)")
            }
            lines.append("")
            for set in health.sets {
                let now =
                    set.pathsNow.isEmpty
                    ? "NO valid path carries them now" + (set.enforced ? ": the server is refused" : " (report-only)")
                    : "satisfied now on path " + set.pathsNow.map { String($0 + 1) }.joined(separator: ", ")
                lines.append("\(set.source) for \(Console.oneLine(set.hosts)): \(now)")
                lines.append(
                    "  leaf renewed with a new key tomorrow: "
                        + (set.afterLeafRenewal ? "still satisfied" : "REFUSED (only the leaf's key matches: pin a CA key)"))
                lines.append(
                    "  and issued from another intermediate: "
                        + (set.afterIntermediateChange ? "still satisfied" : "REFUSED (pin the root of each valid path, and a spare key)"))
            }
        }
        lines.append("")
        lines.append(
            "Decision with this policy: "
                + (decision.isTrusted
                    ? "trusted" + (decision.record.validatedPath.map { " (path " + Self.path($0.certificates) + ")" } ?? "")
                    : "refused: " + Console.oneLine(decision.failure.map(String.init(describing:)) ?? "")))
        if !lint.isEmpty {
            lines.append("")
            lines.append("Lint (servertrust pins lint with this chain):")
            for finding in lint { lines.append("  " + Console.oneLine(finding.description)) }
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ health: PinHealth, target: HTTPSTarget, decision: TrustDecision, lint: [PinLintFinding]) -> JSON {
        .object([
            ("host", .string(target.host)), ("port", .int(target.port)), ("rule", health.rule.map(JSON.string) ?? .null),
            ("paths", .array(health.paths.map { .array($0.map { .string($0.subject.rfc4514) }) })),
            (
                "pins",
                .array(
                    health.pins.map { report in
                        .object([
                            ("pin", .string(report.pin.description)), ("scope", .string(report.pin.scope.rawValue)), ("source", .string(report.source)),
                            (
                                "matches",
                                .array(
                                    report.matches.map {
                                        .object([("path", .int($0.path + 1)), ("position", .int($0.position)), ("subject", .string($0.subject))])
                                    })
                            ),
                        ])
                    })
            ),
            (
                "pinSets",
                .array(
                    health.sets.map { set in
                        .object([
                            ("hosts", .string(set.hosts)), ("source", .string(set.source)), ("enforced", .bool(set.enforced)),
                            ("pathsNow", .array(set.pathsNow.map { .int($0 + 1) })), ("afterLeafRenewal", .bool(set.afterLeafRenewal)),
                            ("afterIntermediateChange", .bool(set.afterIntermediateChange)),
                        ])
                    })
            ),
            (
                "decision",
                .object([
                    ("trusted", .bool(decision.isTrusted)),
                    ("failure", decision.failure.map { .string(String(describing: $0)) } ?? .null),
                ])
            ),
            ("lint", .array(lint.map(PinsLintCommand.json))),
        ])
    }
}
