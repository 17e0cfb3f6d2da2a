import CertificateParsing
import ServerTrust
import TrustEvaluation

/// The trust flags `evaluate` and `get` share, turned into the ServerTrust evaluator and
/// decider they describe: the one place the CLI makes a trust policy from its flags, so both
/// commands parse pins alike (``SPKIPin``: `sha256/`, `sha256//`, bare base64, `sha384/`,
/// `sha512/`) and decide alike.
///
/// - `--policy FILE`: the policy file's per-host rules, alone.
/// - `--mode`, `--pinned-cert` or `--compat` (and always for `evaluate`): an AFNetworking
///   ``SecurityPolicy`` (strict semantics unless `--compat`), then the `--pin` pins checked on
///   the path the policy validated (``ProvenChain``).
/// - Otherwise (`get`): chain validation with the host (`--no-validate-domain` drops the host),
///   with the `--pin` pins on the validated path; `--allow-invalid` skips validation, so pins
///   then match the leaf alone (curl's `-k --pinnedpubkey`), and without pins nothing is
///   checked (curl's `-k`).
/// - `--anchors` adds roots to the system's, `--anchors-only` trusts only them.
/// - `--crl FILE` (curl's `--crlfile`): CRLs every chain is checked against, whatever decides
///   it; hard-fail, so every certificate of the path but the anchor must be covered.
struct TrustOptions {
    static let valueNames: Set<String> = ["--anchors", "--pin", "--mode", "--pinned-cert", "--policy", "--crl"]
    static let flagNames: Set<String> = ["--anchors-only", "--no-validate-domain", "--allow-invalid", "--strict", "--compat"]

    let values: [String: [String]]
    let flags: Set<String>

    private func all(_ name: String) -> [String] { values[name] ?? [] }

    /// The `--pin` pins, each parsed by the library's one pin parser.
    func pins() throws -> [SPKIPin] {
        try all("--pin").map { text in
            do { return try SPKIPin(text) } catch let error as PolicyConfigurationError { throw CLIError("--pin '\(text)': \(error.message)") }
        }
    }

    /// `--compat` or the default strict semantics (`--strict` is accepted and changes nothing).
    func semantics() throws -> PolicySemantics {
        if flags.contains("--compat") && flags.contains("--strict") { throw CLIError("--compat and --strict exclude each other") }
        return flags.contains("--compat") ? .compat : .strict
    }

    /// The `--anchors` certificates and whether they are the only anchors.
    func customAnchors() throws -> (certificates: [Certificate], only: Bool) {
        let files = all("--anchors")
        let only = flags.contains("--anchors-only")
        if only && files.isEmpty { throw CLIError("--anchors-only needs --anchors FILE") }
        return (try files.flatMap(GetCommand.certificates), only)
    }

    /// The decider the flags describe: the evaluator below on the system roots (none with
    /// `--anchors-only`), at `clock`'s time.
    /// - Parameters:
    ///   - host: The host the chain is for (`--pin`'s pin set is made for it).
    ///   - alwaysPolicy: Make a ``SecurityPolicy`` even without `--mode` (`evaluate`).
    ///   - reporter: Where a policy file's pin failures are reported.
    ///   - clock: "Now".
    func decider(host: String, alwaysPolicy: Bool, reporter: (any PinFailureReporter)? = nil, clock: TrustClock = .system) throws
        -> ServerTrustDecider
    {
        let (custom, only) = try customAnchors()
        let system: TrustStore
        do {
            system = only ? .empty : try TrustStore.system()
        } catch {
            throw CLIError("system trust store: \(error)")
        }
        var evaluator = try self.evaluator(host: host, alwaysPolicy: alwaysPolicy, reporter: reporter)
        if !custom.isEmpty { evaluator = AnchoredTrustEvaluator(anchors: custom, anchorsOnly: only, evaluator: evaluator) }
        return ServerTrustDecider(evaluator, anchors: system, revocationLists: try revocationLists(), clock: clock)
    }

    /// The `--crl` files' CRLs, or `nil` without any.
    func revocationLists() throws -> [CertificateRevocationList]? {
        let files = all("--crl")
        guard !files.isEmpty else { return nil }
        return try files.flatMap { path throws -> [CertificateRevocationList] in
            do { return try CertificateRevocationList.load(try CLI.readFile(path)) } catch let error as CLIError { throw error } catch {
                throw CLIError("--crl \(path): not a CRL (PEM or DER): \(error)")
            }
        }
    }

    /// The evaluator the flags describe, before anchors. With `--pin`, hosts other than `host`
    /// (a redirect's) are refused: their pins are unknown, and pins that covered only the first
    /// host would leave the others unpinned.
    func evaluator(host: String, alwaysPolicy: Bool, reporter: (any PinFailureReporter)?) throws -> any ServerTrustEvaluating {
        let evaluator = try unscopedEvaluator(host: host, alwaysPolicy: alwaysPolicy, reporter: reporter)
        guard values["--pin"] != nil else { return evaluator }
        let pattern: HostPattern
        do { pattern = try HostPattern(host) } catch { throw CLIError("'\(host)': \(error.message)") }
        return ServerTrustManager(allHostsMustBeEvaluated: true, rules: [ServerTrustManager.Rule(pattern, evaluator)])
    }

    private func unscopedEvaluator(host: String, alwaysPolicy: Bool, reporter: (any PinFailureReporter)?) throws -> any ServerTrustEvaluating {
        if let path = values["--policy"]?.last {
            let conflicting = ["--mode", "--pinned-cert", "--pin"].filter { values[$0] != nil }
                + ["--allow-invalid", "--no-validate-domain", "--strict", "--compat"].filter { flags.contains($0) }
            guard conflicting.isEmpty else { throw CLIError("--policy cannot be combined with \(conflicting.joined(separator: ", "))") }
            let policy: PolicyFile
            do { policy = try PolicyFile.load(contentsOf: path) } catch {
                throw CLIError("--policy \(path): " + error.problems.map(\.description).joined(separator: "; "))
            }
            return policy.makeManager(reporter: reporter)
        }
        let semantics = try semantics()
        let validatesDomain = !flags.contains("--no-validate-domain")
        let allowInvalid = flags.contains("--allow-invalid")
        let pinSet = try adHocPinSet(host: host)
        let usesPolicy = alwaysPolicy || values["--mode"] != nil || values["--pinned-cert"] != nil || flags.contains("--compat")
        guard usesPolicy else {
            if let pinSet {
                return SPKIPinsTrustEvaluator(configuration: pinSet, performDefaultValidation: !allowInvalid, validateHost: validatesDomain && !allowInvalid)
            }
            return allowInvalid ? DisabledTrustEvaluator() : DefaultTrustEvaluator(validateHost: validatesDomain)
        }
        let mode: PinningMode
        switch values["--mode"]?.last ?? "none" {
        case "none": mode = .none
        case "public-key": mode = .publicKey
        case "certificate": mode = .certificate
        case let other: throw CLIError("--mode: '\(other)' is not none, public-key or certificate")
        }
        let policy = SecurityPolicy(
            pinningMode: mode, pinnedCertificates: try all("--pinned-cert").flatMap(GetCommand.certificates),
            allowInvalidCertificates: allowInvalid, validatesDomainName: validatesDomain, semantics: semantics)
        guard let pinSet else { return policy }
        // The pins after the policy, on the path the policy validated (the composite hands it
        // on); when the policy validated nothing, on the leaf alone.
        return CompositeTrustEvaluator(evaluators: [policy, SPKIPinsTrustEvaluator(configuration: pinSet, performDefaultValidation: false, validateHost: false)])
    }

    /// The `--pin` pins as a pin set for `host`: an ad-hoc check, like curl's `--pinnedpubkey`,
    /// so the backup-pin rule (for deployed configurations) does not apply.
    private func adHocPinSet(host: String) throws -> PinningConfiguration? {
        let pins = try pins()
        guard !pins.isEmpty else { return nil }
        let pattern: HostPattern
        do { pattern = try HostPattern(host) } catch { throw CLIError("'\(host)': \(error.message)") }
        do {
            return try PinningConfiguration([PinnedHost(pattern: pattern, pins: pins, requiresBackupPin: false)])
        } catch {
            throw CLIError("--pin: " + error.problems.map(\.message).joined(separator: "; "))
        }
    }
}
