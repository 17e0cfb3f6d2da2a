import CertificateParsing
import ServerTrust
import TrustEvaluation

/// `servertrust evaluate CHAIN.pem --host H [options]`: judges a served chain offline, as an
/// AFNetworking `AFSecurityPolicy` (compat by default, `--strict` for the fixed semantics),
/// optionally with SPKI pins, or with a policy file; prints the decision (and with `--explain`
/// or `--json` its full record).
///
/// Exit codes: 0 trusted, 1 rejected, 2 bad input (one line on stderr).
enum EvaluateCommand {
    static let usage = """
        usage: servertrust evaluate CHAIN.pem --host H [options]

        Judges CHAIN.pem (the leaf first, then what the server sends) for host H, offline.
        System roots come from SSL_CERT_FILE / SSL_CERT_DIR (default /etc/ssl/certs/ca-certificates.crt).

        options:
          --at RFC3339              evaluate at this instant (default: now)
          --mode none|public-key|certificate
                                    AFNetworking pinning mode (default none)
          --allow-invalid           allowInvalidCertificates = YES
          --no-validate-domain      validatesDomainName = NO
          --pinned-cert FILE        a pinned certificate, PEM or DER (repeatable)
          --pin sha256/BASE64       an SPKI pin checked after the policy, any chain position (repeatable;
                                    also sha256//…, sha384/…, sha512/…, bare base64)
          --anchors FILE            extra trust anchors, added to the system roots (repeatable)
          --anchors-only            trust only the --anchors certificates
          --strict                  strict semantics (AFNetworking's quirks fixed) instead of compat
          --policy FILE             a JSON policy file (docs/policy-schema.md) instead of the options above
          --explain                 print the decision record
          --json                    print the decision record as JSON

        exit codes: 0 trusted, 1 rejected, 2 bad input
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(
            arguments,
            flags: ["--allow-invalid", "--no-validate-domain", "--anchors-only", "--strict", "--explain", "--json", "--help"],
            values: ["--host", "--at", "--mode", "--pinned-cert", "--pin", "--anchors", "--policy"])
        if options.flags.contains("--help") {
            print(usage)
            return ExitCode.success
        }
        guard options.positionals.count == 1, let chainPath = options.positionals.first else {
            throw CLIError(options.positionals.isEmpty ? "no chain file given (usage: servertrust evaluate CHAIN.pem --host H)" : "one chain file expected, got \(options.positionals.count)")
        }
        guard let host = options.value("--host"), !host.isEmpty else { throw CLIError("--host is required") }
        // A name that cannot be a reference identity would only ever give "hostname mismatch"
        // (exit 1); it is bad input (exit 2).
        guard ServerIdentity.isValidReference(PeerName.host(host)) else {
            throw CLIError("--host '\(host)' is not a host name or an IP address")
        }
        if options.flags.contains("--json") && options.flags.contains("--explain") { throw CLIError("--json and --explain cannot be combined") }

        let chain = try certificates(chainPath)
        var verifyTime: Int64?
        if let text = options.value("--at") {
            guard let time = ASN1Time(rfc3339: text) else { throw CLIError("--at: '\(text)' is not an RFC 3339 time (e.g. 2026-01-01T00:00:00Z)") }
            verifyTime = time.secondsSince1970
        }
        let system: TrustStore
        do { system = try TrustStore.system() } catch { throw CLIError("system trust store: \(error)") }
        var trust = PeerTrust(certificates: chain, host: host, systemAnchors: system, verifyTime: verifyTime)
        let anchorFiles = options.values["--anchors"] ?? []
        if options.flags.contains("--anchors-only") && anchorFiles.isEmpty { throw CLIError("--anchors-only needs at least one --anchors FILE") }
        trust.anchors = try anchorFiles.flatMap(certificates)
        trust.anchorsOnly = options.flags.contains("--anchors-only")

        let decision: PolicyDecision
        if let policyPath = options.value("--policy") {
            let conflicting = ["--mode", "--pinned-cert", "--pin"].filter { options.values[$0] != nil }
                + ["--allow-invalid", "--no-validate-domain", "--strict"].filter { options.flags.contains($0) }
            guard conflicting.isEmpty else { throw CLIError("--policy cannot be combined with \(conflicting.joined(separator: ", "))") }
            let policy: PolicyFile
            do { policy = try PolicyFile.load(contentsOf: policyPath) } catch {
                throw CLIError("\(policyPath): " + error.problems.map(\.description).joined(separator: "; "))
            }
            decision = policy.makeManager().decide(trust, forHost: host)
        } else {
            decision = try securityPolicyEvaluator(options, host: host).decide(trust, forHost: host)
        }

        if options.flags.contains("--json") {
            print(decision.record.jsonText)
        } else if options.flags.contains("--explain") {
            print(decision.record.explanation)
        } else if let failure = decision.failure {
            print("rejected: \(failure)")
            if let message = decision.record.pinFailureMessage { print(message) }
        } else {
            print("trusted: \(host) (\(decision.record.evaluator); \(decision.record.policy))")
            if let pin = decision.record.matchedPin { print("pin: \(pin)") }
            for note in decision.record.notes { print("note: \(note)") }
        }
        return decision.isTrusted ? ExitCode.success : ExitCode.rejected
    }

    /// The AFNetworking policy the options describe, followed by the `--pin` check if any.
    static func securityPolicyEvaluator(_ options: Options, host: String) throws -> any ServerTrustEvaluating {
        let mode: PinningMode
        switch options.value("--mode") ?? "none" {
        case "none": mode = .none
        case "public-key": mode = .publicKey
        case "certificate": mode = .certificate
        case let other: throw CLIError("--mode: '\(other)' is not none, public-key or certificate")
        }
        var policy = SecurityPolicy(
            pinningMode: mode, pinnedCertificates: try (options.values["--pinned-cert"] ?? []).flatMap(certificates),
            semantics: options.flags.contains("--strict") ? .strict : .compat)
        policy.allowInvalidCertificates = options.flags.contains("--allow-invalid")
        policy.validatesDomainName = !options.flags.contains("--no-validate-domain")
        let pinTexts = options.values["--pin"] ?? []
        guard !pinTexts.isEmpty else { return policy }
        var pins: [SPKIPin] = []
        for text in pinTexts {
            do { pins.append(try SPKIPin(text)) } catch { throw CLIError("--pin '\(text)': \(error.message)") }
        }
        let pattern: HostPattern
        do { pattern = try HostPattern(host) } catch { throw CLIError("--host '\(host)': \(error.message)") }
        // An ad-hoc check, like curl's --pinnedpubkey: the backup-pin rule is for deployed
        // configurations, and the policy above has already judged the chain.
        let pinSet: PinningConfiguration
        do { pinSet = try PinningConfiguration([PinnedHost(pattern: pattern, pins: pins, requiresBackupPin: false)]) } catch {
            throw CLIError("--pin: " + error.problems.map(\.message).joined(separator: "; "))
        }
        let pinCheck = SPKIPinsTrustEvaluator(configuration: pinSet, performDefaultValidation: false, validateHost: false)
        return CompositeTrustEvaluator(evaluators: [policy, pinCheck])
    }

    /// The certificates of a PEM or DER file; bad input is a one-line error naming the file.
    static func certificates(_ path: String) throws -> [Certificate] {
        let bytes = try CLI.readFile(path)
        do {
            return try Certificate.load(bytes)
        } catch {
            throw CLIError("\(path): \(error)")
        }
    }
}
