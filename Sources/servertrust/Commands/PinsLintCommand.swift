import CertificateParsing
import ServerTrust
import TrustEvaluation

/// `servertrust pins lint POLICY [--chain CHAIN.pem] [--json]`: the pin shapes that break at a
/// renewal or a change of CA (``TrustPolicy/lint(chain:anchors:at:)``), each with a fix.
enum PinsLintCommand {
    static let usage = """
        usage: servertrust pins lint POLICY [--chain CHAIN.pem] [--cacert FILE] [--json]

        Checks a policy file's pins (docs/policy-schema.md, or a TrustKit configuration as JSON) for the
        shapes that break when certificates live 47 days and CAs rotate intermediates, and says how to
        fix each. With --chain (what the server sends today, leaf first) the rules that need the
        server's keys run too, on every valid path of that chain against the roots clients have:
        SSL_CERT_FILE / SSL_CERT_DIR, or --cacert.

        rules (level):
          leafOnly (error)                       only leaf keys or leaf certificates are pinned
          noSpareKey (warning)                   every pin names a key of the current chain
          singleIntermediate (error or warning)  the only CA key pinned is one intermediate's (error for
                                                 a CA known to rotate them: Let's Encrypt, Google, Amazon)
          certificatesExpireFirst (warning)      every certificate with a pinned key expires before the set
          crossSignedSuccessorNotPinned (warning)  a pinned root's cross-signed successor is trusted, unpinned
          expiryPassed (error)                   the pin set expired: its pins are not enforced
          expiryTooFar (warning)                 the pin set expires more than a year from now
          noMatchToday (error)                   no valid path of the chain carries the pins
          chainNotValid, chainNotCovered (warning)  the chain given cannot be judged

        options:
          --chain FILE     the server's chain (PEM or DER, leaf first)
          --cacert FILE    the roots clients have, instead of the system's (repeatable)
          --json           {"policy", "findings": [{"rule", "level", "hosts", "pin", "message", "fix"}],
                            "errors", "warnings"}

        exit codes: 0 no error-level finding (warnings included), 1 an error-level finding,
        2 unreadable or malformed input or bad usage
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments, flags: ["--help", "--json"], values: ["--chain", "--cacert"])
        if options.flags.contains("--help") {
            print(usage)
            return ExitCode.success
        }
        guard options.positionals.count == 1, let path = options.positionals.first else {
            throw CLIError(
                options.positionals.isEmpty ? "no policy file given (usage: servertrust pins lint POLICY; --help)" : "one policy file expected")
        }
        let policy: TrustPolicy
        do { policy = try PolicyFile.load(contentsOf: path) } catch {
            throw CLIError("\(path): " + error.problems.map(\.description).joined(separator: "; "))
        }
        var chain: [Certificate]?
        if let chainPath = options.value("--chain") {
            let certificates = try FileKind.certificates(chainPath, option: "--chain")
            guard !certificates.isEmpty else { throw CLIError("--chain \(chainPath): no certificate") }
            chain = certificates
        }
        let roots = try PinsCheckCommand.roots(options)
        let findings = policy.lint(chain: chain, anchors: roots, at: CommandClock.now)
        let errors = findings.filter { $0.level == .error }.count
        if options.flags.contains("--json") {
            print(json(findings, policy: path).rendered)
        } else {
            print(human(findings, policy: path))
        }
        return errors > 0 ? ExitCode.rejected : ExitCode.success
    }

    static func human(_ findings: [PinLintFinding], policy: String) -> String {
        let errors = findings.filter { $0.level == .error }.count
        let warnings = findings.count - errors
        var lines: [String] = []
        for finding in findings {
            lines.append(Console.oneLine("\(finding.level.rawValue): \(finding.rule.rawValue): \(finding.hosts)" + (finding.pin.map { ": \($0)" } ?? "")))
            lines.append("  " + Console.oneLine(finding.message))
            lines.append("  fix: " + Console.oneLine(finding.fix))
        }
        lines.append(
            Console.oneLine(policy) + ": "
                + (findings.isEmpty
                    ? "no findings" : "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"))
        return lines.joined(separator: "\n")
    }

    static func json(_ findings: [PinLintFinding], policy: String) -> JSON {
        .object([
            ("policy", .string(policy)),
            ("findings", .array(findings.map(json))),
            ("errors", .int(findings.filter { $0.level == .error }.count)),
            ("warnings", .int(findings.filter { $0.level == .warning }.count)),
        ])
    }

    static func json(_ finding: PinLintFinding) -> JSON {
        .object([
            ("rule", .string(finding.rule.rawValue)), ("level", .string(finding.level.rawValue)), ("hosts", .string(finding.hosts)),
            ("pin", finding.pin.map(JSON.string) ?? .null), ("message", .string(finding.message)), ("fix", .string(finding.fix)),
        ])
    }
}
