import CertificateParsing
import Foundation
import TrustEvaluation

/// `servertrust inspect FILE... [--json]`: what a certificate file holds;
/// `servertrust inspect https://HOST[:PORT]`: what a server serves (``InspectHost``).
enum InspectCommand {
    static let usage = """
        usage: servertrust inspect FILE... [--json]
               servertrust inspect https://HOST[:PORT] [--resolve HOST:PORT:ADDR] [--timeout S] [--handshake-only]
                                   [--proxy URL] [--cacert FILE | --anchors FILE | trust options of get] [--json]

        FILE: prints every certificate in PEM files and bundles (explanatory text allowed) and DER
        files, as `openssl x509 -text -noout` would, one block per certificate.

        https://HOST[:PORT] (default port 443): connects, like `openssl s_client -showcerts`, and shows
        what the server serves: TLS version, ALPN, and each certificate of the chain as sent (subject,
        issuer, validity and days left, SANs, key, signature algorithm, SHA-256 fingerprint, SPKI pin);
        then whether the chain verifies for HOST against the system roots (SSL_CERT_FILE /
        SSL_CERT_DIR, default /etc/ssl/certs/ca-certificates.crt), or under the trust options given
        (--cacert FILE for a private CA, --anchors, --pin, --policy, …: as servertrust get takes them),
        with the validated path, and if not, why.
        The chain is recorded, never trusted; one HEAD / request is sent (no credentials) to learn the
        HTTP protocol. Through --proxy it shows what a client on that network is served: an
        intercepting proxy's minted chain (Charles, mitmproxy, a corporate TLS inspector) fails to
        verify unless its root is among the system roots.

        options:
          --json                    JSON: files, an array with one object per certificate; a host, one
                                    object with the connection facts and "certificates" (README)
          --resolve HOST:PORT:ADDR  connect to ADDR for HOST:PORT (as curl); TLS and the checks use HOST
          --timeout SECONDS         for connecting, the handshake and the HEAD request (default 10)
          --handshake-only          abort once the certificates arrive: nothing is sent, ALPN not shown
          --cacert FILE             decide with only these roots (a private CA; repeatable), as get does
          --anchors FILE            roots added to the system roots (repeatable); also --anchors-only, --pin,
                                    --pinnedpubkey, --crl, --policy, --mode, --pinned-cert, --compat,
                                    --no-validate-domain, --insecure, --revocation, --ct (servertrust get --help)
          --ct-log-list FILE        a CT log list (Chrome's v3 JSON or Apple's list): each embedded SCT is shown
                                    with its log's name and whether it verifies (the issuer must be among the
                                    certificates shown), and what Apple's and Chrome's CT policies make of them
          \(ProxyOptions.usage)

        exit codes: 0 success (a host: its chain verifies), 1 a host's chain does not verify against the
        system roots or the trust options (everything is still shown), 2 unreadable or malformed input or bad usage,
        4 connection or TLS failure
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(
            arguments, flags: Set(["--json", "--help", "--handshake-only"]).union(ChainVerification.flagNames),
            values: Set(["--resolve", "--timeout"]).union(ProxyOptions.names).union(ChainVerification.valueNames))
        SecretArguments.blank(options.secretPositions, in: arguments)
        if options.flags.contains("--help") {
            Console.printSafe(usage)
            return ExitCode.success
        }
        guard !options.positionals.isEmpty else {
            throw CLIError("no file or https:// URL given (usage: servertrust inspect FILE... | https://HOST[:PORT]; --help)")
        }
        if let url = options.positionals.first(where: HTTPSTarget.looksLikeURL) {
            guard options.positionals.count == 1 else { throw CLIError("give one https:// URL, or files, not both or several URLs") }
            return try InspectHost.run(url, options: options)
        }
        // --ct-log-list names the logs of the SCTs a file's certificates embed; the other trust
        // options decide a server's chain.
        for option in ["--resolve", "--timeout"] + ProxyOptions.names.sorted() + ChainVerification.valueNames.subtracting(["--ct-log-list"]).sorted()
        where options.values[option] != nil {
            throw CLIError("\(option) is for an https:// URL, not files")
        }
        for flag in ["--handshake-only"] + ChainVerification.flagNames.sorted() where options.flags.contains(flag) {
            throw CLIError("\(flag) is for an https:// URL, not files")
        }
        var loaded: [(file: String, certificates: [Certificate])] = []
        for path in options.positionals {
            // A file on disk is read as a pinned-certificate file is (a note for a tolerated quirk).
            loaded.append((path, try FileKind.certificates(path, tolerant: true)))
        }
        let scts = try InspectSCTs.make(options, certificates: loaded.flatMap(\.certificates), now: CommandClock.now)
        if options.flags.contains("--json") {
            var items: [JSON] = []
            for (file, certificates) in loaded {
                for (index, certificate) in certificates.enumerated() {
                    items.append(json(certificate, file: file, index: index, scts: scts))
                }
            }
            Console.printSafe(JSON.array(items).rendered)
        } else {
            var first = true
            for (file, certificates) in loaded {
                for (index, certificate) in certificates.enumerated() {
                    if !first { Console.printSafe("") }
                    first = false
                    Console.printSafe(human(certificate, file: file, index: index, count: certificates.count, scts: scts))
                }
            }
        }
        return ExitCode.success
    }

    /// The JSON object of one certificate (schema in the README, shared with later subcommands).
    static func json(_ c: Certificate, file: String?, index: Int, scts: InspectSCTs? = nil) -> JSON {
        var pairs: [(String, JSON)] = []
        if let file { pairs.append(("file", .string(file))) }
        pairs += [
            ("index", .int(index)),
            ("subject", .string(c.subject.rfc4514)),
            ("issuer", .string(c.issuer.rfc4514)),
            ("serial", .string(c.serialNumber.hex)),
            ("version", .int(c.version.rawValue + 1)),
            ("notBefore", .string(c.notBefore.rfc3339)),
            ("notAfter", .string(c.notAfter.rfc3339)),
            ("sha256", .string(Hex.encode(c.sha256Fingerprint))),
            ("sha1", .string(Hex.encode(c.sha1Fingerprint))),
            ("spkiSHA256", .string(c.spkiSHA256Base64)),
            ("keyAlgorithm", .string(c.subjectPublicKeyInfo.key.algorithmName)),
            ("keySize", .int(c.subjectPublicKeyInfo.key.bitSize)),
            ("signatureAlgorithm", .string(c.signatureAlgorithm.description)),
            ("san", .array(c.subjectAlternativeNames.map { .string($0.description) })),
            ("isCA", .bool(c.isCertificateAuthority)),
        ]
        if let pathLength = c.extensions.basicConstraints?.pathLengthConstraint { pairs.append(("pathLength", .int(pathLength))) }
        if let ku = c.extensions.keyUsage { pairs.append(("keyUsage", .array(ku.setNames.map { .string($0) }))) }
        if let eku = c.extensions.extendedKeyUsage {
            pairs.append(("extendedKeyUsage", .array(eku.usages.map { .string(ExtendedKeyUsage.name(of: $0)) })))
        }
        pairs.append(("selfIssued", .bool(c.isSelfIssued)))
        pairs += revocationJSON(c)
        if let list = sctJSON(c, context: scts) { pairs.append(("scts", list)) }
        return .object(pairs)
    }

    static func colonHex(_ bytes: [UInt8]) -> String {
        bytes.map { Hex.encode([$0]).uppercased() }.joined(separator: ":")
    }

    /// `29 days left`, `expired 3 days ago`, `not yet valid: starts in 2 days`.
    static func validityNote(_ c: Certificate, now: Int64) -> String {
        let day: Int64 = 86_400
        func days(_ seconds: Int64) -> String { seconds / day == 1 ? "1 day" : "\(seconds / day) days" }
        if now < c.notBefore.secondsSince1970 { return "not yet valid: starts in \(days(c.notBefore.secondsSince1970 - now))" }
        if now > c.notAfter.secondsSince1970 { return "EXPIRED \(days(now - c.notAfter.secondsSince1970)) ago" }
        let left = c.notAfter.secondsSince1970 - now
        return left < day ? "expires within a day" : "\(days(left)) left"
    }

    static func human(_ c: Certificate, file: String, index: Int, count: Int, now: Int64 = CommandClock.now, scts: InspectSCTs? = nil) -> String {
        var lines: [(String, String)] = [
            ("Subject", c.subject.rfc4514.isEmpty ? "(empty)" : c.subject.rfc4514),
            ("Issuer", c.issuer.rfc4514.isEmpty ? "(empty)" : c.issuer.rfc4514 + (c.isSelfIssued ? "  (self-issued)" : "")),
            ("Serial", c.serialNumber.hex),
            ("Valid", "\(c.notBefore.rfc3339) to \(c.notAfter.rfc3339) (\(validityNote(c, now: now)))"),
            ("Key", "\(c.subjectPublicKeyInfo.key.algorithmName) \(c.subjectPublicKeyInfo.key.bitSize) bits"),
            ("Signature", c.signatureAlgorithm.description),
        ]
        if !c.subjectAlternativeNames.isEmpty {
            lines.append(("SAN", c.subjectAlternativeNames.map(\.description).joined(separator: ", ")))
        }
        if let bc = c.extensions.basicConstraints {
            lines.append(("CA", bc.isCertificateAuthority ? "yes" + (bc.pathLengthConstraint.map { " (path length \($0))" } ?? "") : "no"))
        }
        if let ku = c.extensions.keyUsage { lines.append(("Key usage", ku.description)) }
        if let eku = c.extensions.extendedKeyUsage {
            lines.append(("Ext. key usage", eku.usages.map(ExtendedKeyUsage.name(of:)).joined(separator: ", ")))
        }
        lines.append(("SHA-256", colonHex(c.sha256Fingerprint)))
        lines.append(("SPKI pin", "sha256/\(c.spkiSHA256Base64)"))
        lines += revocationLines(c)
        lines += sctLines(c, context: scts)
        let width = lines.map(\.0.count).max() ?? 0
        var out = "\(file) [\(index + 1)/\(count)]\n"
        out += lines.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count) + "  " + $0.1 }.joined(separator: "\n")
        return out
    }
}
