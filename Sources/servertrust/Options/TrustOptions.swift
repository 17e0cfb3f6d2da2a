import CertificateParsing
import Glibc
import ServerTrust
import TrustEvaluation

/// The trust flags `evaluate` and `get` share, turned into the ``TrustPolicy`` and decider they
/// describe: the one place the CLI makes a trust policy from its flags, so both commands parse
/// pins alike (``SPKIPin``: `sha256/`, `sha256//`, bare base64, `sha384/`, `sha512/`) and decide
/// alike.
///
/// - `--policy FILE`: the policy file's per-host rules, alone.
/// - `--mode`, `--pinned-cert` or `--compat` (and always for `evaluate`): an AFNetworking
///   ``SecurityPolicy`` (strict semantics unless `--compat`), then the `--pin` pins checked on
///   the path the policy validated (``ProvenChain``).
/// - Otherwise (`get`): chain validation with the host (`--no-validate-domain` drops the host),
///   with the `--pin` pins on the validated path; `--allow-invalid` skips validation, so pins
///   then match the signature chain (the leaf and the certificates that verifiably signed it;
///   `--pinnedpubkey` pins, leaf-scoped, the leaf alone as curl's `-k --pinnedpubkey`), and
///   without pins nothing is checked (curl's `-k`).
/// - `--anchors` adds roots to the system's, `--anchors-only` trusts only them.
/// - `--crl FILE` (curl's `--crlfile`): CRLs every chain is checked against, whatever decides
///   it; alone, hard-fail, so every certificate of the path but the anchor must be covered.
/// - `--revocation off|soft-fail|hard-fail`, `--revocation-depth leaf|chain`, `--crl-cache DIR`:
///   the revocation setting of every host (``RevocationPolicy``), over a policy file's: the
///   staple, `--crl`'s CRLs and CRLs fetched from the distribution points (cached in DIR too).
/// - `--ct`, `--ct-policy`, `--ct-log-list`: Certificate Transparency for every host
///   (`TrustOptions+CT.swift`).
///
/// curl's spellings, with curl's meaning (curl(1)):
/// - `--cacert FILE`: "Tells curl to use the specified certificate file to verify the peer";
///   the bundle replaces the default one, so it is `--anchors FILE --anchors-only`. Repeated,
///   the files add up (curl keeps the last one); with `--anchors` too, those are the only roots
///   as well.
/// - `--insecure` (`-k` in `get`): curl's "skip the verification step", our `--allow-invalid`.
/// - `--pinnedpubkey 'sha256//…;sha256//…'` or `--pinnedpubkey FILE` (a PEM or DER public
///   key): "A public key is extracted from this certificate and if it does not exactly match
///   the public key provided to this option, curl aborts the connection" — the leaf's key
///   only, so these pins have ``PinScope/leaf`` (a `--pin` may name any certificate of the
///   validated path). With `--pin` as well, both must match.
struct TrustOptions {
    static let valueNames = Set([
        "--anchors", "--cacert", "--pin", "--pinnedpubkey", "--mode", "--pinned-cert", "--policy", "--crl", "--revocation", "--revocation-depth",
        "--crl-cache",
    ]).union(certificateTransparencyNames)
    static let flagNames: Set<String> = ["--anchors-only", "--no-validate-domain", "--allow-invalid", "--insecure", "--strict", "--compat"]

    let values: [String: [String]]
    let flags: Set<String>

    private func all(_ name: String) -> [String] { values[name] ?? [] }

    /// Whether chain validation is skipped (`--allow-invalid`, curl's `--insecure`).
    var allowsInvalid: Bool { flags.contains("--allow-invalid") || flags.contains("--insecure") }

    /// Whether any pin option is given.
    var hasPins: Bool { values["--pin"] != nil || values["--pinnedpubkey"] != nil }

    /// The `--pin` pins, each parsed by the library's one pin parser, and the `--pinnedpubkey`
    /// pins, which curl matches against the leaf alone.
    func pins() throws -> [SPKIPin] {
        let anywhere = try all("--pin").map { text in
            do { return try SPKIPin(text) } catch let error as PolicyConfigurationError { throw CLIError("--pin '\(text)': \(error.message)") }
        }
        return try anywhere + all("--pinnedpubkey").flatMap(Self.curlPins)
    }

    /// curl's `--pinnedpubkey` argument: "any number of base64 encoded sha256 hashes preceded
    /// by 'sha256//' and separated by ';'", or else "the file name of your pinned public key"
    /// in PEM or DER. Leaf scope: curl compares the key of the certificate the server sent
    /// for itself, never an issuer's.
    static func curlPins(_ text: String) throws -> [SPKIPin] {
        guard text.hasPrefix("sha256//") else {
            // Not curl's list: a key file, or, when no such file exists and the text has the
            // shape of a pin, a pin mistyped (one slash, bare base64, a hex fingerprint,
            // sha1//), which is named as such rather than as a missing file.
            if access(text, F_OK) != 0, let problem = misspelledCurlPin(text) {
                throw CLIError("--pinnedpubkey '\(text)': \(problem); \(curlForms)")
            }
            let digest = SHA256.hash(try publicKeyFile(text))
            do { return [try SPKIPin(algorithm: .sha256, digest: digest, scope: .leaf)] } catch { throw CLIError("--pinnedpubkey \(text): \(error.message)") }
        }
        return try text.split(separator: ";", omittingEmptySubsequences: false).map { item in
            // curl's list is sha256 only (its other digests are not pins it accepts here).
            guard item.hasPrefix("sha256//") else {
                throw CLIError(
                    "--pinnedpubkey: '\(item)' is not sha256//BASE64\(misspelledCurlPin(String(item)).map { " (\($0))" } ?? ""); \(curlForms)")
            }
            do { return try SPKIPin(String(item), scope: .leaf) } catch let error as PolicyConfigurationError {
                throw CLIError(
                    "--pinnedpubkey '\(item)': \(error.message.replacingOccurrences(of: "; a pin is " + SPKIPin.acceptedForms, with: "")); \(curlForms)")
            }
        }
    }

    /// What `--pinnedpubkey` accepts, for messages (curl(1)).
    static let curlForms = "--pinnedpubkey takes 'sha256//BASE64[;sha256//BASE64…]' (two slashes) or a PEM or DER public key file"

    /// Why `text`, which is not curl's `sha256//` form, looks like a pin rather than a file
    /// name; `nil` when it does not.
    static func misspelledCurlPin(_ text: String) -> String? {
        let lower = text.lowercased()
        if let slash = lower.firstIndex(of: "/"), ["sha1", "md5", "sha384", "sha512"].contains(String(lower[..<slash])) {
            return "\(lower[..<slash]) is not a digest curl pins with (sha256 only)"
        }
        if SPKIPin.hexFingerprintDigits(Substring(text)) != nil {
            return "this looks like a hex certificate fingerprint, not a pin (the base64 SHA-256 of the public key; 'servertrust pins FILE' prints it)"
        }
        if lower.hasPrefix("sha256/"), (try? SPKIPin(text)) != nil { return "one slash is OkHttp's form; curl writes sha256//" }
        if !lower.hasPrefix("sha"), (try? SPKIPin(text)) != nil { return "bare base64 needs the sha256// prefix here" }
        return nil
    }

    /// The SubjectPublicKeyInfo DER of a `--pinnedpubkey` file: a PEM `PUBLIC KEY` block (as
    /// `openssl pkey -pubout` writes it) or DER. A certificate is refused by name: curl wants
    /// the key, and `servertrust pins FILE` prints the pin of a certificate's key.
    static func publicKeyFile(_ path: String) throws -> [UInt8] {
        let bytes: [UInt8]
        do { bytes = try InputFile.read(path) } catch let error as CLIError { throw CLIError("--pinnedpubkey \(error.message); \(curlForms)") }
        if PEMDocument.looksLikePEM(bytes) {
            let documents: [PEMDocument]
            do { documents = try PEMDocument.parseAll(String(decoding: bytes, as: UTF8.self)) } catch {
                throw CLIError("--pinnedpubkey \(path): \(error)")
            }
            if let key = documents.first(where: { $0.label == "PUBLIC KEY" }) {
                do { return Array(try SubjectPublicKeyInfo(derEncoded: key.derBytes).derBytes) } catch {
                    throw CLIError("--pinnedpubkey \(path): the PUBLIC KEY block is not a public key (\(error))")
                }
            }
            let labels = Set(documents.map(\.label))
            let what = labels.contains("CERTIFICATE") ? "a certificate (PEM CERTIFICATE)" : FileKind.describe(bytes) ?? "PEM without a PUBLIC KEY block"
            throw CLIError(
                "--pinnedpubkey \(path): not a public key: looks like \(what); curl wants a PUBLIC KEY ('servertrust pins FILE' prints a certificate's pin)")
        }
        if let key = try? SubjectPublicKeyInfo(derEncoded: bytes) { return Array(key.derBytes) }
        let what = (try? Certificate(derEncoded: bytes)) != nil ? "a certificate (DER)" : FileKind.describe(bytes) ?? "binary data that is not DER"
        throw CLIError(
            "--pinnedpubkey \(path): not a public key: looks like \(what); curl wants a PUBLIC KEY ('servertrust pins FILE' prints a certificate's pin)")
    }

    /// `--compat` or the default strict semantics (`--strict` is accepted and changes nothing).
    func semantics() throws -> PolicySemantics {
        if flags.contains("--compat") && flags.contains("--strict") { throw CLIError("--compat and --strict exclude each other") }
        return flags.contains("--compat") ? .compat : .strict
    }

    /// The `--anchors` and `--cacert` certificates and whether they are the only anchors
    /// (`--anchors-only`, or any `--cacert`: curl's bundle replaces the system's).
    func customAnchors() throws -> (certificates: [Certificate], only: Bool) {
        let cacerts = all("--cacert")
        let only = flags.contains("--anchors-only") || !cacerts.isEmpty
        if only && all("--anchors").isEmpty && cacerts.isEmpty { throw CLIError("--anchors-only needs --anchors FILE") }
        let anchors = try all("--anchors").flatMap { try FileKind.certificates($0, option: "--anchors") }
        return (try anchors + cacerts.flatMap { try FileKind.certificates($0, option: "--cacert") }, only)
    }

    /// The decider the flags describe: their ``TrustPolicy`` on the system roots (none with
    /// `--anchors-only` or `--cacert`), at `clock`'s time.
    /// - Parameters:
    ///   - host: The host the chain is for (`--pin`'s pin set is made for it).
    ///   - alwaysPolicy: Make a ``SecurityPolicy`` even without `--mode` (`evaluate`).
    ///   - reporter: Where a policy file's pin failures are reported.
    ///   - clock: "Now".
    func decider(host: String, alwaysPolicy: Bool, reporter: (any PinFailureReporter)? = nil, clock: TrustClock = .system) throws
        -> ServerTrustDecider
    {
        let (_, only) = try customAnchors()
        let system: TrustStore
        do {
            system = only ? .empty : try TrustStore.system()
        } catch {
            throw CLIError("system trust store: \(error)")
        }
        return ServerTrustDecider(policy: try trustPolicy(host: host, alwaysPolicy: alwaysPolicy).reporting(to: reporter), anchors: system, clock: clock)
    }

    /// The flags as one ``TrustPolicy``: a policy file's rules, or the policy the trust flags
    /// describe, with the command line's anchors (`--anchors`, `--cacert`) and CRLs (`--crl`)
    /// added to every host's policy, as a layer over the file.
    func trustPolicy(host: String, alwaysPolicy: Bool) throws -> TrustPolicy {
        let revocation = try revocationFlags()
        let (custom, only) = try customAnchors()
        let crls = try revocationLists() ?? []
        let certificateTransparency = try certificateTransparency()
        let base = try unlayeredPolicy(host: host, alwaysPolicy: alwaysPolicy)
        guard !custom.isEmpty || only || !crls.isEmpty || revocation.isGiven || certificateTransparency != nil else { return base }
        return base.mapHosts { policy in
            var policy = policy
            if !custom.isEmpty || only {
                let anchors = policy.anchors.store.certificates + custom
                policy.anchors = TrustAnchors(anchors, only: policy.anchors.only || only, source: "--anchors/--cacert")
            }
            policy.revocation = revocation.applied(to: policy.revocation.adding(crls))
            if let certificateTransparency { policy.certificateTransparency = certificateTransparency }
            return policy
        }
    }

    /// `--revocation`, `--revocation-depth` and `--crl-cache`, checked.
    func revocationFlags() throws -> RevocationFlags {
        var flags = RevocationFlags()
        if let text = values["--revocation"]?.last {
            guard let mode = RevocationMode(rawValue: text) else { throw CLIError("--revocation: '\(text)' is not off, soft-fail or hard-fail") }
            flags.mode = mode
        }
        if let text = values["--revocation-depth"]?.last {
            guard let depth = RevocationDepth(rawValue: text) else { throw CLIError("--revocation-depth: '\(text)' is not leaf or chain") }
            flags.depth = depth
        }
        if let folder = values["--crl-cache"]?.last {
            guard !folder.isEmpty else { throw CLIError("--crl-cache: an empty folder name") }
            flags.cacheDirectory = folder
        }
        if flags.mode == .off, values["--crl"] != nil { throw CLIError("--crl cannot be combined with --revocation off") }
        // Without a mode, the depth and the folder apply to a policy file's revocation setting.
        if flags.mode == .off || (flags.mode == nil && values["--policy"] == nil) {
            for (option, given) in [("--revocation-depth", flags.depth != nil), ("--crl-cache", flags.cacheDirectory != nil)] where given {
                throw CLIError("\(option) needs --revocation soft-fail or hard-fail (or a --policy file that checks revocation)")
            }
        }
        return flags
    }

    /// The revocation flags, laid over each host's setting.
    struct RevocationFlags {
        var mode: RevocationMode?
        var depth: RevocationDepth?
        var cacheDirectory: String?

        var isGiven: Bool { mode != nil || depth != nil || cacheDirectory != nil }

        /// `setting` with the flags applied: a mode replaces the setting's (with the staple and
        /// fetched CRLs as sources, its CRLs kept); a depth or a folder changes a setting that
        /// checks revocation.
        func applied(to setting: RevocationPolicy) -> RevocationPolicy {
            var setting = setting
            if let mode {
                guard mode != .off else { return .off }
                var fetching = RevocationPolicy.Fetching.distributionPoints(cacheDirectory: cacheDirectory)
                if case .distributionPoints(let folder) = setting.fetching { fetching = .distributionPoints(cacheDirectory: cacheDirectory ?? folder) }
                setting = RevocationPolicy(
                    mode: mode, depth: depth ?? (setting.isOn ? setting.depth : .chain), revocationLists: setting.revocationLists, fetching: fetching)
            } else if setting.isOn {
                if let depth { setting.depth = depth }
                if let cacheDirectory, case .distributionPoints = setting.fetching { setting.fetching = .distributionPoints(cacheDirectory: cacheDirectory) }
            }
            return setting
        }
    }

    /// The `--crl` files' CRLs, or `nil` without any.
    func revocationLists() throws -> [CertificateRevocationList]? {
        let files = all("--crl")
        guard !files.isEmpty else { return nil }
        return try files.flatMap { path throws -> [CertificateRevocationList] in
            let bytes = try InputFile.read(path)
            // What the file is instead, in words ("a certificate", "text", "a private key").
            func kind() -> String? {
                FileKind.describe(bytes) ?? ((try? Certificate.load(bytes)).map { $0.count == 1 ? "a certificate" : "certificates" })
            }
            let crls: [CertificateRevocationList]
            do { crls = try CertificateRevocationList.load(bytes) } catch {
                throw CLIError("--crl \(path): not a CRL (PEM or DER)\(kind().map { ": looks like \($0)" } ?? ": \(error)")")
            }
            // A PEM file with no X509 CRL block (a certificate bundle given by mistake) would
            // otherwise add no CRL and, hard-fail, refuse every server with "status unknown".
            guard !crls.isEmpty else {
                throw CLIError("--crl \(path): not a CRL (PEM or DER)\(kind().map { ": looks like \($0)" } ?? ": no X509 CRL block")")
            }
            return crls
        }
    }

    /// The policy of the flags before the command line's anchors and CRLs: a policy file's, or
    /// one host policy. With `--pin`, hosts other than `host` (a redirect's) are refused: their
    /// pins are unknown, and pins that covered only the first host would leave the others
    /// unpinned.
    private func unlayeredPolicy(host: String, alwaysPolicy: Bool) throws -> TrustPolicy {
        if let path = values["--policy"]?.last {
            let conflicting =
                ["--mode", "--pinned-cert", "--pin", "--pinnedpubkey"].filter { values[$0] != nil }
                + ["--allow-invalid", "--insecure", "--no-validate-domain", "--strict", "--compat"].filter { flags.contains($0) }
            guard conflicting.isEmpty else { throw CLIError("--policy cannot be combined with \(conflicting.joined(separator: ", "))") }
            // The pins' lint findings are warnings: the file is valid, and decides as written.
            do {
                return try PolicyFile.load(contentsOf: path, at: CommandClock.now) {
                    Console.writeStderr("servertrust: warning: --policy \(path): \($0)")
                }
            } catch {
                throw CLIError("--policy \(path): " + error.problems.map(\.description).joined(separator: "; "))
            }
        }
        let semantics = try semantics()
        let validatesDomain = !flags.contains("--no-validate-domain")
        let allowInvalid = allowsInvalid
        let pinSet = try adHocPinSet(host: host)
        let usesPolicy = alwaysPolicy || values["--mode"] != nil || values["--pinned-cert"] != nil || flags.contains("--compat")
        let hostPolicy: HostTrustPolicy
        if usesPolicy {
            let mode: PinningMode
            switch values["--mode"]?.last ?? "none" {
            case "none": mode = .none
            case "public-key": mode = .publicKey
            case "certificate": mode = .certificate
            case let other: throw CLIError("--mode: '\(other)' is not none, public-key or certificate")
            }
            let policy = SecurityPolicy(
                pinningMode: mode, pinnedCertificates: try all("--pinned-cert").flatMap { try FileKind.certificates($0, option: "--pinned-cert") },
                allowInvalidCertificates: allowInvalid, validatesDomainName: validatesDomain, semantics: semantics)
            // The pins after the policy, on the path the policy validated; when the policy
            // validated nothing, on the signature chain (ProvenChain).
            hostPolicy = HostTrustPolicy(evaluator: policy, pins: pinSet?.hosts.first, source: "command line")
        } else if let pinSet {
            hostPolicy = HostTrustPolicy(
                evaluator: SPKIPinsTrustEvaluator(
                    configuration: pinSet, performDefaultValidation: !allowInvalid, validateHost: validatesDomain && !allowInvalid),
                source: "command line")
        } else {
            hostPolicy = HostTrustPolicy(
                evaluator: allowInvalid ? DisabledTrustEvaluator() : DefaultTrustEvaluator(validateHost: validatesDomain), source: "command line")
        }
        guard pinSet != nil else { return TrustPolicy(hostPolicy) }
        let pattern: HostPattern
        do { pattern = try HostPattern(host) } catch { throw CLIError("'\(host)': \(error.message)") }
        return TrustPolicy(rules: [TrustPolicy.Rule(pattern, hostPolicy)], unmatched: nil)
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
