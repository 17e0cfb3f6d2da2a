import CertificateParsing

/// `servertrust inspect FILE... [--json]`: what a certificate file holds.
enum InspectCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments, flags: ["--json", "--help"], values: [])
        if options.flags.contains("--help") {
            print("usage: servertrust inspect FILE... [--json]\n\nPrints every certificate in PEM or DER files and bundles.\nexit codes: 0 success, 2 unreadable or malformed input")
            return ExitCode.success
        }
        guard !options.positionals.isEmpty else { throw CLIError("no file given (usage: servertrust inspect FILE... [--json])") }
        var loaded: [(file: String, certificates: [Certificate])] = []
        for path in options.positionals {
            let bytes = try CLI.readFile(path)
            do {
                loaded.append((path, try Certificate.load(bytes)))
            } catch {
                throw CLIError("\(path): \(error)")
            }
        }
        if options.flags.contains("--json") {
            var items: [JSON] = []
            for (file, certificates) in loaded {
                for (index, certificate) in certificates.enumerated() {
                    items.append(json(certificate, file: file, index: index))
                }
            }
            print(JSON.array(items).rendered)
        } else {
            var first = true
            for (file, certificates) in loaded {
                for (index, certificate) in certificates.enumerated() {
                    if !first { print("") }
                    first = false
                    print(human(certificate, file: file, index: index, count: certificates.count))
                }
            }
        }
        return ExitCode.success
    }

    /// The JSON object of one certificate (schema in the README, shared with later subcommands).
    static func json(_ c: Certificate, file: String?, index: Int) -> JSON {
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
        return .object(pairs)
    }

    static func colonHex(_ bytes: [UInt8]) -> String {
        bytes.map { Hex.encode([$0]).uppercased() }.joined(separator: ":")
    }

    static func human(_ c: Certificate, file: String, index: Int, count: Int) -> String {
        var lines: [(String, String)] = [
            ("Subject", c.subject.rfc4514.isEmpty ? "(empty)" : c.subject.rfc4514),
            ("Issuer", c.issuer.rfc4514.isEmpty ? "(empty)" : c.issuer.rfc4514 + (c.isSelfIssued ? "  (self-issued)" : "")),
            ("Serial", c.serialNumber.hex),
            ("Valid", "\(c.notBefore.rfc3339) to \(c.notAfter.rfc3339)"),
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
        let width = lines.map(\.0.count).max() ?? 0
        var out = "\(file) [\(index + 1)/\(count)]\n"
        out += lines.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count) + "  " + $0.1 }.joined(separator: "\n")
        return out
    }
}
