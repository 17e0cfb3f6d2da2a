import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import TrustEvaluation

/// `servertrust pins FILE|https://HOST[:PORT]`: the pin configuration for a server, ready to
/// paste, in ServerTrust's policy format and the TrustKit, OkHttp, ATS and curl forms, with a
/// proposed backup pin and warnings about expiry and incomplete chains.
enum PinsCommand {
    static let usage = """
        usage: servertrust pins FILE [--host H] [--cacert FILE] [options]
               servertrust pins https://HOST[:PORT] [--resolve HOST:PORT:ADDR | --proxy URL] [--cacert FILE] [options]
               servertrust pins lint POLICY [--chain CHAIN.pem] [--json]     (servertrust pins lint --help)
               servertrust pins check https://HOST --policy FILE             (servertrust pins check --help)

        Prints the SPKI pins (RFC 7469: base64 SHA-256 of a certificate's public key) to configure for
        a server, from a PEM/DER chain file (leaf first, as the server sends it) or from the chain the
        server serves (the handshake is aborted once it arrives; nothing is sent), as:
          json      a ServerTrust policy file (docs/policy-schema.md; servertrust evaluate --policy)
          trustkit  a TrustKit configuration dictionary as JSON (kTSK… keys; in Info.plist they are
                    TSKConfiguration / TSKPinnedDomains / TSKPublicKeyHashes / …)
          okhttp    Kotlin: CertificatePinner.Builder().add("host", "sha256/…")
          ats       Info.plist XML: NSAppTransportSecurity / NSPinnedDomains with SPKI-SHA256-BASE64
          curl      curl --pinnedpubkey 'sha256//…;sha256//…'
        The pins proposed are CA keys, not the server's own: the root of every valid path of the chain
        against the system roots (both roots of a cross-sign) and the intermediates on those paths, so
        that renewals (every 47 days by 2029, often with a new key) and a CA's rotation among its
        intermediates do not lock clients out. The leaf's key is proposed only when there is no CA
        (a self-signed server). It warns when a pinned certificate expires within 30 days and when the
        chain is incomplete (it does not reach a self-signed certificate and the last certificate's
        issuer is not among the system roots: SSL_CERT_FILE / SSL_CERT_DIR). Check the result with
        servertrust pins lint POLICY --chain CHAIN.pem, and live with servertrust pins check.

        ServerTrust's policy, like TrustKit, enforces a pin set of at least two distinct pins, whatever
        the server sends. Only a spare key held offline survives a change of CA as well, so without
        --backup-pin you are warned that no pin is a true spare.
        Make a spare key, keep it offline, and pin it:
          openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out spare.key
          openssl pkey -in spare.key -pubout -outform DER | openssl dgst -sha256 -binary | openssl base64

        options:
          --host H                  the host the pins are for (FILE form; default: the leaf's first SAN)
          --format json|trustkit|okhttp|ats|curl|all
                                    what to print (default all: the analysis, then every form);
                                    a single form prints only that form, warnings go to stderr
          --backup-pin sha256/BASE64
                                    a spare key's pin to add (repeatable; also sha256//… or bare base64)
          --cacert FILE             a private CA's roots: the chain is checked against them alone and the
                                    backup pin is taken from them (repeatable; as get takes it)
          --anchors FILE            roots added to the system roots (repeatable); also --anchors-only, --pin,
                                    --pinnedpubkey, --crl, --policy, --compat, --no-validate-domain,
                                    --insecure (servertrust get --help): the report says whether the
                                    chain is trusted under them
          --resolve HOST:PORT:ADDR  connect to ADDR for HOST:PORT (as curl)
          --timeout SECONDS         for connecting and the handshake (default 10)
          \(ProxyOptions.usage)

        exit codes: 0 printed (warnings included), 2 unreadable or malformed input or bad usage,
        4 connection or TLS failure
        """

    enum Format: String, CaseIterable {
        case json, trustkit, okhttp, ats, curl, all
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        switch arguments.first {
        case "lint": return try PinsLintCommand.run(Array(arguments.dropFirst()))
        case "check": return try PinsCheckCommand.run(Array(arguments.dropFirst()))
        default: break
        }
        let options = try Options(
            arguments, flags: Set(["--help"]).union(ChainVerification.flagNames),
            values: Set(["--host", "--format", "--resolve", "--timeout", "--backup-pin"]).union(ProxyOptions.names).union(ChainVerification.valueNames))
        SecretArguments.blank(options.secretPositions, in: arguments)
        if options.flags.contains("--help") {
            Console.printSafe(usage)
            return ExitCode.success
        }
        guard options.positionals.count == 1, let source = options.positionals.first else {
            throw CLIError(
                options.positionals.isEmpty
                    ? "no file or https:// URL given (usage: servertrust pins FILE|https://HOST; --help)"
                    : "one FILE or https:// URL expected, got \(options.positionals.count)")
        }
        let formatText = options.value("--format") ?? "all"
        guard let format = Format(rawValue: formatText) else {
            throw CLIError("--format: '\(formatText)' is not json, trustkit, okhttp, ats, curl or all")
        }
        var spares: [SPKIPin] = []
        for text in options.values["--backup-pin"] ?? [] {
            let pin: SPKIPin
            do { pin = try SPKIPin(text) } catch { throw CLIError("--backup-pin '\(text)': \(error.message)") }
            guard pin.algorithm == .sha256 else { throw CLIError("--backup-pin '\(text)': TrustKit, OkHttp, ATS and curl take sha256 pins only") }
            if !spares.contains(pin) { spares.append(pin) }
        }

        let chain: [Certificate]
        let host: String
        var port = 443
        let origin: String
        if HTTPSTarget.looksLikeURL(source) {
            guard options.value("--host") == nil else { throw CLIError("--host is for the FILE form; the URL names the host") }
            let target = try HTTPSTarget(source, resolve: options.values["--resolve"] ?? [])
            // Bad trust options are bad input before anything is sent.
            _ = try ChainVerification.decider(ChainVerification.trustOptions(options).0, host: target.host)
            let probe = try target.probe(
                timeout: try HTTPSTarget.timeout(options), request: .handshakeOnly,
                proxy: try ProxyOptions.configuration(options))
            chain = probe.chain
            host = target.host
            port = target.port
            origin = "served by \(target.url)"
        } else {
            for option in ["--resolve", "--timeout"] + ProxyOptions.names.sorted() where options.values[option] != nil {
                throw CLIError("\(option) is for an https:// URL, not a file")
            }
            chain = try FileKind.certificates(source)
            guard !chain.isEmpty else { throw CLIError("\(source): no certificate") }
            if let given = options.value("--host") {
                host = given
            } else if let name = defaultHost(chain[0]) {
                host = name
            } else {
                throw CLIError("\(source): the leaf has no DNS or IP SAN to take the host from; give --host H")
            }
            origin = "from \(source)"
        }
        let pattern: HostPattern
        do { pattern = try HostPattern(host) } catch { throw CLIError("--host '\(host)': \(error.message)") }
        guard pattern.kind == .exact else { throw CLIError("--host '\(host)': give one host name, not a pattern (edit the output for subdomains)") }

        let (trust, against) = ChainVerification.trustOptions(options)
        let verification = ChainVerification(chain: chain, host: host, decider: try ChainVerification.decider(trust, host: host), against: against)
        let plan = PinPlan(
            chain: chain, host: host, spares: spares, now: CommandClock.now, roots: try Self.roots(trust), verification: verification)
        switch format {
        case .all:
            Console.printSafe(report(plan, origin: origin, port: port))
        default:
            for warning in plan.warnings { Console.writeStderr("servertrust: pins: warning: \(warning)") }
            Console.printSafe(render(format, plan, port: port))
        }
        return ExitCode.success
    }

    /// Where `pins` looks for the root a chain leads to: the `--cacert` / `--anchors` roots
    /// and, unless those are the only ones, the system roots (as the decision is made).
    static func roots(_ trust: TrustOptions) throws -> PinPlan.Roots {
        let (custom, only) = try trust.customAnchors()
        let given = TrustStore(custom, sources: ["the roots given"])
        if only { return PinPlan.Roots(store: given, name: "the --cacert roots", problem: nil) }
        do {
            let system = try TrustStore.system()
            return PinPlan.Roots(
                store: custom.isEmpty ? system : system + given, name: custom.isEmpty ? "the system roots" : "the system roots and --anchors",
                problem: nil)
        } catch {
            return PinPlan.Roots(store: custom.isEmpty ? nil : given, name: "the --anchors roots", problem: "\(error)")
        }
    }

    /// The leaf's first DNS name (not a wildcard) or IP address SAN.
    static func defaultHost(_ leaf: Certificate) -> String? {
        for name in leaf.subjectAlternativeNames {
            if case .dnsName(let dns) = name, !dns.contains("*") { return dns }
            if case .ipAddress = name, name.description.hasPrefix("IP:") { return String(name.description.dropFirst(3)) }
        }
        return nil
    }

    // MARK: - Output

    static func render(_ format: Format, _ plan: PinPlan, port: Int) -> String {
        switch format {
        case .json: return prettyJSON(serverTrustPolicy(plan))
        case .trustkit: return prettyJSON(trustKit(plan))
        case .okhttp: return okHttp(plan)
        case .ats: return ats(plan)
        case .curl: return curl(plan, port: port)
        case .all: return report(plan, origin: "", port: port)
        }
    }

    static func report(_ plan: PinPlan, origin: String, port: Int) -> String {
        var out = "Pins for \(plan.host) (\(origin), \(plan.chain.count) certificate\(plan.chain.count == 1 ? "" : "s"))\n"
        let verification = plan.verification
        if verification.verified {
            out += "Verified for \(plan.host) against \(verification.against)"
            if let path = verification.path { out += ": " + path.map(\.subject.rfc4514).joined(separator: "  <-  ") }
            out += "\n\n"
        } else {
            out += "NOT verified for \(plan.host) against \(verification.against): \(verification.reason ?? "unknown")\n\n"
        }
        var rows: [(String, String, String)] = []
        for key in plan.keys {
            rows.append((key.role, key.pin, key.label))
        }
        for spare in plan.spares {
            rows.append(
                (
                    "spare", spare.description,
                    plan.sparesOutsideChain.contains(spare)
                        ? "--backup-pin, a key held in reserve"
                        : "--backup-pin, but this key IS in the chain"
                ))
        }
        let roleWidth = rows.map(\.0.count).max() ?? 0
        let pinWidth = rows.map(\.1.count).max() ?? 0
        for row in rows {
            out += "  " + pad(row.0, roleWidth) + "  " + pad(row.1, pinWidth) + "  " + row.2 + "\n"
        }
        out += "\n"
        for key in plan.proposed {
            out +=
                "Pin:     \(key.pin)  (\(key.role == "leaf" ? "the server's own key: there is no CA" : "the \(key.role)'s key"), \(key.certificate.subject.rfc4514))\n"
        }
        for line in plan.explanation { out += "  " + line + "\n" }
        if !plan.warnings.isEmpty {
            out += "\n" + plan.warnings.map { "warning: " + $0 }.joined(separator: "\n") + "\n"
        }
        let sections: [(String, String)] = [
            (
                "ServerTrust policy (docs/policy-schema.md; servertrust evaluate --policy FILE)"
                    + (plan.enforces ? "" : ", report-only until a second pin is added"), prettyJSON(serverTrustPolicy(plan))
            ),
            (
                "TrustKit (TrustKit.initSharedInstance(withConfiguration:), or Info.plist TSKConfiguration with TSK… keys)",
                prettyJSON(trustKit(plan))
            ),
            ("OkHttp (Kotlin)", okHttp(plan)),
            ("App Transport Security (Info.plist)", ats(plan)),
            ("curl", curl(plan, port: port)),
        ]
        for (title, body) in sections {
            out += "\n== \(title) ==\n" + body + "\n"
        }
        return out.hasSuffix("\n") ? String(out.dropLast()) : out
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// ServerTrust's policy format: one `spkiPins` entry; other hosts keep default validation.
    static func serverTrustPolicy(_ plan: PinPlan) -> JSON {
        .object([
            ("version", .int(1)),
            ("allHostsMustBeEvaluated", .bool(false)),
            (
                "hosts",
                .array([
                    .object([
                        ("host", .string(plan.host)),
                        ("pins", .array(plan.pins.map { .string($0) })),
                        ("enforcePinning", .bool(plan.enforces)),
                    ])
                ])
            ),
        ])
    }

    /// TrustKit's configuration dictionary (the `kTSK…` constants' names, as ServerTrust's
    /// `PolicyFile` and TrustKit's Swift/Objective-C examples write them).
    static func trustKit(_ plan: PinPlan) -> JSON {
        .object([
            ("kTSKSwizzleNetworkDelegates", .bool(false)),
            (
                "kTSKPinnedDomains",
                .object([
                    (
                        plan.host,
                        .object([
                            ("kTSKIncludeSubdomains", .bool(false)),
                            // TrustKit refuses to enforce fewer than 2 pins; so does ServerTrust.
                            ("kTSKEnforcePinning", .bool(plan.enforces)),
                            ("kTSKDisableDefaultReportUri", .bool(true)),
                            ("kTSKPublicKeyHashes", .array(plan.pins.map { .string(String($0.dropFirst("sha256/".count))) })),
                        ])
                    )
                ])
            ),
        ])
    }

    static func okHttp(_ plan: PinPlan) -> String {
        var lines = ["// OkHttp accepts the connection when any certificate of the verified chain has one of these keys."]
        lines.append("val certificatePinner = CertificatePinner.Builder()")
        for (pin, comment) in plan.pinsWithComments {
            lines.append("    .add(\"\(plan.host)\", \"\(pin)\") // \(comment)")
        }
        lines.append("    .build()")
        lines.append("val client = OkHttpClient.Builder().certificatePinner(certificatePinner).build()")
        return lines.joined(separator: "\n")
    }

    /// ATS: the proposed CA keys as `NSPinnedCAIdentities`; the leaf as `NSPinnedLeafIdentities`
    /// only with a spare key (or no CA), since ATS requires both sets to match when both exist.
    static func ats(_ plan: PinPlan) -> String {
        let caPins = plan.proposed.filter { $0.role != "leaf" }.map(\.pin)
        var leafPins: [String] = []
        if caPins.isEmpty || !plan.spares.isEmpty {
            leafPins = [plan.leafKey.pin] + plan.spares.map(\.description)
        }
        func identities(_ key: String, _ pins: [String]) -> [String] {
            guard !pins.isEmpty else { return [] }
            var lines = ["\t\t\t<key>\(key)</key>", "\t\t\t<array>"]
            for pin in pins {
                lines += [
                    "\t\t\t\t<dict>", "\t\t\t\t\t<key>SPKI-SHA256-BASE64</key>",
                    "\t\t\t\t\t<string>\(pin.dropFirst("sha256/".count))</string>", "\t\t\t\t</dict>",
                ]
            }
            return lines + ["\t\t\t</array>"]
        }
        var lines: [String] = []
        if caPins.isEmpty {
            lines.append("<!-- No CA in the chain: the leaf's key is pinned; add a spare key's pin (--backup-pin) before shipping. -->")
        } else if leafPins.isEmpty {
            lines.append("<!-- ATS checks NSPinnedCAIdentities against the CA certificates of the chain. The leaf is not pinned here:")
            lines.append("     with both keys ATS requires both to match, so a re-keyed server would be refused. -->")
        } else {
            lines.append("<!-- ATS requires both sets to match: the leaf's key or the spare, and one of the CA keys. -->")
        }
        if IPAddressText.parse(plan.host) != nil {
            lines.append("<!-- ATS pins domain names; \(plan.host) is an IP address, which NSPinnedDomains does not cover. -->")
        }
        lines += [
            "<key>NSAppTransportSecurity</key>", "<dict>", "\t<key>NSPinnedDomains</key>", "\t<dict>",
            "\t\t<key>\(xmlEscaped(plan.host))</key>", "\t\t<dict>", "\t\t\t<key>NSIncludesSubdomains</key>", "\t\t\t<false/>",
        ]
        lines += identities("NSPinnedCAIdentities", caPins)
        lines += identities("NSPinnedLeafIdentities", leafPins)
        lines += ["\t\t</dict>", "\t</dict>", "</dict>"]
        return lines.joined(separator: "\n")
    }

    /// curl compares only the server's own key with `--pinnedpubkey`, so CA pins are left out.
    static func curl(_ plan: PinPlan, port: Int) -> String {
        let pins = ([plan.leafKey.pin] + plan.spares.map(\.description)).map { "sha256//" + $0.dropFirst("sha256/".count) }
        let authority = (plan.host.contains(":") ? "[\(plan.host)]" : plan.host) + (port == 443 ? "" : ":\(port)")
        return "# curl checks --pinnedpubkey against the server's own key only, so CA keys are not listed:\n"
            + "# this pin breaks at the next renewal with a new key (the other forms pin CA keys).\n"
            + "curl --pinnedpubkey '\(pins.joined(separator: ";"))' https://\(authority)/"
    }

    static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// Indented JSON, for configuration files people read and edit.
    static func prettyJSON(_ value: JSON, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case .array(let items) where !items.isEmpty:
            return "[\n" + items.map { inner + prettyJSON($0, indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let pairs) where !pairs.isEmpty:
            return "{\n"
                + pairs.map { key, item in
                    var quoted = ""
                    JSON.quote(key, into: &quoted)
                    return inner + quoted + ": " + prettyJSON(item, indent: inner)
                }.joined(separator: ",\n") + "\n" + indent + "}"
        default:
            return value.rendered
        }
    }
}

/// What to pin for a chain (CA keys of every valid path), and what to warn about.
struct PinPlan {
    struct Key {
        let certificate: Certificate
        /// `leaf`, `intermediate` or `root`.
        let role: String
        /// Found among the roots (``PinPlan/Roots``) rather than served.
        let fromSystemRoots: Bool
        var rootsName = "the system roots"
        let now: Int64

        var pin: String { "sha256/" + certificate.spkiSHA256Base64 }
        var label: String {
            let subject = certificate.subject.rfc4514.isEmpty ? "(empty subject)" : certificate.subject.rfc4514
            return subject + " (" + (fromSystemRoots ? "from \(rootsName), " : "")
                + InspectCommand.validityNote(certificate, now: now) + ")"
        }
    }

    /// Where the root of a chain is looked for: the trust options' roots and, unless they are
    /// the only ones, the system roots; `store` is `nil` when none can be read (`problem`).
    struct Roots {
        let store: TrustStore?
        let name: String
        let problem: String?
    }

    let host: String
    let chain: [Certificate]
    /// Whether the chain is trusted for ``host`` under the trust options (or the system roots).
    let verification: ChainVerification
    /// The leaf, the CA certificates of the chain, and the root found in the system roots.
    let keys: [Key]
    /// The pins proposed: the root of every valid path, then the intermediates on them (the
    /// leaf's key only when there is no CA).
    let proposed: [Key]
    let spares: [SPKIPin]
    /// The spare pins whose keys are not in the chain: true spares, which survive a change of
    /// every key of this chain.
    let sparesOutsideChain: [SPKIPin]
    let explanation: [String]
    let warnings: [String]

    var leafKey: Key { keys[0] }
    /// The pins of every form that takes CA keys: the proposed keys, the spares.
    var pins: [String] { pinsWithComments.map(\.0) }
    /// The backup-pin rule of ServerTrust's policy files and of TrustKit: enforcing needs at
    /// least two distinct pins (``PinningConfiguration``); a single pin is written report-only.
    var enforces: Bool { Set(pins).count >= 2 }

    var pinsWithComments: [(String, String)] {
        var result = proposed.map { ($0.pin, "\($0.role): " + $0.certificate.subject.rfc4514) }
        for spare in spares where !result.contains(where: { $0.0 == spare.description }) {
            result.append((spare.description, "backup: a spare key held in reserve"))
        }
        return result
    }

    init(chain: [Certificate], host: String, spares: [SPKIPin], now: Int64, roots: Roots, verification: ChainVerification) {
        self.host = host
        self.chain = chain
        self.spares = spares
        self.verification = verification
        let leaf = chain[0]
        var warnings: [String] = []
        var explanation: [String] = []
        let system = roots.store
        if let problem = roots.problem {
            warnings.append(
                "the system roots cannot be read (\(problem)): the root and the chain's completeness are "
                    + (system == nil ? "not checked" : "checked against the roots given only"))
        }
        if !verification.verified {
            warnings.append(
                "the chain does not verify for \(host) against \(verification.against) (\(verification.reason ?? "unknown")): "
                    + "pins do not make a chain trusted; a private CA's root goes to --cacert")
        }

        for index in chain.indices.dropLast() where chain[index].issuer != chain[index + 1].subject {
            warnings.append(
                "certificate \(index + 2) (\(chain[index + 1].subject.rfc4514)) did not issue certificate \(index + 1) "
                    + "(\(chain[index].subject.rfc4514)): the chain is out of order or carries an unrelated certificate")
        }

        // The CA certificates of the chain, and the roots of every valid path: served
        // (self-signed, last), or among the system roots (both roots of a cross-sign).
        var keys = [Key(certificate: leaf, role: "leaf", fromSystemRoots: false, now: now)]
        let last = chain[chain.count - 1]
        let standalone = chain.count == 1 && leaf.isSelfIssued
        for certificate in chain.dropFirst() {
            let isRoot = certificate == last && certificate.isSelfIssued
            keys.append(Key(certificate: certificate, role: isRoot ? "root" : "intermediate", fromSystemRoots: false, now: now))
        }
        var paths: [[Certificate]] = []
        var complete = last.isSelfIssued || system == nil
        if let system {
            paths = Verifier(anchors: system, policy: .basicX509).validPaths(leaf: leaf, intermediates: Array(chain.dropFirst()), at: now).paths.map(
                \.certificates)
            complete = complete || !paths.isEmpty || system.certificates.contains { $0.subject == last.issuer }
            for root in paths.compactMap(\.last) where !keys.contains(where: { $0.certificate == root }) {
                var key = Key(certificate: root, role: "root", fromSystemRoots: true, now: now)
                key.rootsName = roots.name
                keys.append(key)
            }
        }
        if !complete {
            // The missing issuer of a CA certificate that ends the served chain is most likely
            // its root (servers do not send roots): a private CA's root, which clients are
            // given, not served. The missing issuer of a lone leaf is an intermediate.
            let advice =
                last.isCertificateAuthority
                ? "if it is your private root CA, give it with --cacert FILE (clients trust it the same way); if it is an "
                    + "intermediate, make the server send it (clients that do not fetch missing intermediates, Android, curl "
                    + "and ServerTrust among them, refuse the chain)"
                : "make the server send its intermediates (clients that do not fetch missing intermediates, Android, curl and "
                    + "ServerTrust among them, refuse the chain), or give the issuing CA with --cacert FILE"
            warnings.append(
                "the chain is incomplete: the last certificate (\(last.subject.rfc4514)) was issued by \(last.issuer.rfc4514), "
                    + "which is neither in the chain nor among \(roots.name): \(advice)")
        }
        self.keys = keys

        // The proposal: the root of every valid path, then the intermediates on them; without a
        // valid path, the CA certificates served. Keys, not certificates: a CA re-issued on the
        // same key is one pin.
        let onPaths = paths.flatMap { $0.dropFirst() }
        let rootKeys = paths.isEmpty ? keys.filter { $0.role == "root" } : keys.filter { key in paths.contains { $0.last == key.certificate } }
        let intermediates = keys.filter { key in key.role == "intermediate" && (paths.isEmpty || onPaths.contains(key.certificate)) }
        var proposed: [Key] = []
        for key in rootKeys + intermediates where !proposed.contains(where: { $0.pin == key.pin }) { proposed.append(key) }
        if proposed.isEmpty { proposed = [keys[0]] }
        self.proposed = proposed
        if proposed.contains(where: { $0.role != "leaf" }) {
            explanation += [
                "Why CA keys: a pin on the server's own key breaks at the first renewal with a new key, and",
                "certificates now live for weeks (47 days by 2029; ACME clients make a new key by default).",
                "A root's key stays the same across renewals and across the intermediates a CA rotates among",
                "(Let's Encrypt picks one at each renewal); with a cross-signed root, clients may build the path",
                "to either root, so both are pinned. The cost: a certificate this CA issues for \(host) to",
                "someone else passes the pin check too (still one CA instead of every public one).",
            ]
        }
        explanation += [
            "Safest of all: also pin a spare key you keep offline (--backup-pin), which survives a change of",
            "CA too (RFC 7469 §4.3). ServerTrust, like TrustKit, enforces any two distinct pins; a pin set",
            "without a true spare is a warning here and in servertrust evaluate --explain, never a refusal.",
        ]

        let chainPins = Set(keys.map(\.certificate.spkiSHA256Base64))
        let outside = spares.filter { !chainPins.contains(Base64.encode($0.digest)) }
        sparesOutsideChain = outside
        for spare in spares where !outside.contains(spare) {
            warnings.append("--backup-pin \(spare) is the key of a certificate in the chain, not a key held in reserve")
        }
        if !proposed.contains(where: { $0.role != "leaf" }) {
            warnings.append(
                (standalone ? "the leaf is self-signed" : "no CA certificate was served or found among \(roots.name)")
                    + ": there is no CA key to pin, so the leaf's key is; pin a spare key (--backup-pin) before shipping, "
                    + "or a re-key locks every client out")
        }
        if outside.isEmpty {
            warnings.append(
                "no pin is a true spare: every pin is a key of this chain, so a change of CA (or of its key) "
                    + "locks every client out until an update ships; add --backup-pin with a key you keep offline (see --help)")
        }
        if Set(proposed.map(\.pin)).count < 2 && spares.isEmpty {
            warnings.append(
                "with a single pin the ServerTrust and TrustKit forms are report-only (enforcePinning / kTSKEnforcePinning "
                    + "false): enforcing needs at least 2 distinct pins")
        }
        let day: Int64 = 86_400
        for key in proposed {
            let left = key.certificate.notAfter.secondsSince1970 - now
            let what = "the pinned \(key.role) \(key.certificate.subject.rfc4514)"
            if left < 0 {
                warnings.append("\(what) expired on \(key.certificate.notAfter.rfc3339)")
            } else if left < 30 * day {
                warnings.append(
                    "\(what) expires in \(left / day) day\(left / day == 1 ? "" : "s") (\(key.certificate.notAfter.rfc3339)): "
                        + (key.role == "leaf"
                            ? "its successor may come with a new key; ship that key's pin before then"
                            : "pins on its key stop helping when it is replaced; check the CA's successor key"))
            }
        }
        self.explanation = explanation
        self.warnings = warnings
    }
}
