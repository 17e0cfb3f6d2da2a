import CertificateParsing
import ServerTrust
import ServerTrustHTTP
import TrustEvaluation

/// `servertrust evaluate CHAIN.pem --host H [options]`: judges a served chain offline, as an
/// AFNetworking `AFSecurityPolicy` (strict semantics by default, `--compat` for AFNetworking's
/// exact ones), optionally with SPKI pins, or with a policy file (``TrustOptions``); prints the
/// decision (and with `--explain` or `--json` its full record).
///
/// Exit codes: 0 trusted, 1 rejected, 2 bad input (one line on stderr).
enum EvaluateCommand {
    static let usage = """
        usage: servertrust evaluate CHAIN.pem --host H [options]

        Judges CHAIN.pem (the leaf first, then what the server sends) for host H, with no connection to it
        (CRLs named by the certificates are fetched when revocation is checked, unless --offline).
        System roots come from SSL_CERT_FILE / SSL_CERT_DIR (default /etc/ssl/certs/ca-certificates.crt).

        options:
          --at RFC3339              evaluate at this instant (default: now)
          --mode none|public-key|certificate
                                    AFNetworking pinning mode (default none)
          --allow-invalid           allowInvalidCertificates = YES (curl's spelling: --insecure)
          --no-validate-domain      validatesDomainName = NO
          --pinned-cert FILE        a pinned certificate, PEM or DER (repeatable)
          --pin sha256/BASE64       an SPKI pin checked after the policy on the path it validated, any position
                                    (repeatable; also sha256//…, sha384/…, sha512/…, bare base64); without a
                                    validated path (--allow-invalid) only the leaf can match
          --anchors FILE            extra trust anchors, added to the system roots (repeatable)
          --anchors-only            trust only the --anchors certificates
          --cacert FILE             curl's spelling: trust only these roots (--anchors FILE --anchors-only)
          --pinnedpubkey 'sha256//BASE64[;…]' | FILE
                                    curl's pin: the leaf's public key must be one of these (FILE: a PEM or DER
                                    public key)
          --crl FILE                CRLs (PEM or DER) the path must be covered by and not revoked in (repeatable;
                                    alone hard-fail, with --revocation one more source)
          --revocation off|soft-fail|hard-fail
                                    check revocation from --crl and the CRLs the certificates' distribution
                                    points name (fetched); soft-fail accepts a status that cannot be found
                                    (default: off, or the --policy file's)
          --revocation-depth leaf|chain
                                    the leaf only, or every certificate but the anchor (default chain)
          --crl-cache DIR           keep fetched CRLs in DIR (created, mode 0700), as well as in memory
          --offline                 fetch nothing: only --crl counts
          --ct off|report|require   Certificate Transparency for chains that end at a system root: report
                                    notes a non-compliant chain and accepts it, require refuses it (default off)
          --ct-policy apple|chrome  the CT policy the SCTs are judged by (default apple)
          --ct-log-list FILE        the CT log list (Chrome's v3 JSON or Apple's list) the SCTs are checked
                                    against; required with --ct report|require
          --compat                  AFNetworking's exact semantics, quirks included (default: strict, the
                                    quirks fixed; --strict is accepted)
          --policy FILE             a JSON policy file (docs/policy-schema.md) instead of the options above
          --explain                 print the decision record
          --json                    print the decision record as JSON

        exit codes: 0 trusted, 1 rejected, 2 bad input
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(
            arguments, flags: TrustOptions.flagNames.union(["--explain", "--json", "--help", "--offline"]),
            values: TrustOptions.valueNames.union(["--host", "--at"]))
        if options.flags.contains("--help") {
            Console.printSafe(usage)
            return ExitCode.success
        }
        guard options.positionals.count == 1, let chainPath = options.positionals.first else {
            throw CLIError(
                options.positionals.isEmpty
                    ? "no chain file given (usage: servertrust evaluate CHAIN.pem --host H)" : "one chain file expected, got \(options.positionals.count)")
        }
        guard let host = options.value("--host"), !host.isEmpty else { throw CLIError("--host is required") }
        // A name that cannot be a reference identity would only ever give "hostname mismatch"
        // (exit 1); it is bad input (exit 2).
        guard ServerIdentity.isValidReference(PeerName.host(host)) else {
            throw CLIError("--host '\(host)' is not a host name or an IP address")
        }
        if options.flags.contains("--json") && options.flags.contains("--explain") { throw CLIError("--json and --explain cannot be combined") }

        let chain = try certificates(chainPath)
        // `--at` is the decision's clock, fixed (SecTrustSetVerifyDate): the one way to set "now".
        var clock = TrustClock.system
        if let text = options.value("--at") {
            guard let time = ASN1Time(rfc3339: text) else { throw CLIError("--at: '\(text)' is not an RFC 3339 time (e.g. 2026-01-01T00:00:00Z)") }
            clock = .fixed(time.secondsSince1970)
        }
        let trustOptions = TrustOptions(values: options.values, flags: options.flags)
        var decider = try trustOptions.decider(host: host, alwaysPolicy: true, clock: clock)
        // CRLs named by the chain's distribution points are fetched as a connection would fetch
        // them, unless --offline says not to (the record then says they were not fetched).
        if !options.flags.contains("--offline") {
            do { decider = try decider.withCRLFetching() } catch { throw CLIError("--crl-cache \(error.directory): \(error.reason)") }
        }
        let decision = decider.decide(ServedChain(certificates: chain, host: host))

        if options.flags.contains("--json") {
            Console.printSafe(decision.record.jsonText)
        } else if options.flags.contains("--explain") {
            Console.printSafe(decision.record.explanation)
        } else if let failure = decision.failure {
            Console.printSafe("rejected: \(failure)")
            if let message = decision.record.pinFailureMessage { Console.printSafe(message) }
        } else {
            Console.printSafe("trusted: \(host) (\(decision.record.evaluator); \(decision.record.policy))")
            if let pin = decision.record.matchedPin { Console.printSafe("pin: \(pin)") }
            for note in decision.record.notes { Console.printSafe("note: \(note)") }
        }
        return decision.isTrusted ? ExitCode.success : ExitCode.rejected
    }

    /// The certificates of a PEM or DER file; bad input is a one-line error naming the file.
    static func certificates(_ path: String) throws -> [Certificate] {
        try FileKind.certificates(path)
    }
}
