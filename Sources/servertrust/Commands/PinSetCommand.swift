import CertificateParsing
import Dispatch
import Foundation
import ServerTrust
import ServerTrustLab
import Synchronization
import TrustEvaluation

/// `servertrust pinset keygen|sign|verify|serve`: the operator's side of signed pin sets
/// (docs/pinset-format.md), and a loopback endpoint that serves one.
enum PinSetCommand {
    static let usage = """
        usage: servertrust pinset keygen --out KEY.pem [--algorithm ed25519|p256]
               servertrust pinset sign POLICY.json --key KEY.pem --serial N [--expires-in DAYS | --expires TIME]
                                       [--issued TIME] [--next-key BASE64 --next-key BASE64] [--out FILE]
               servertrust pinset verify DOCUMENT.json --key BASE64 --key BASE64 [--after-serial N] [--at TIME]
                                       [--skew SECONDS] [--json]
               servertrust pinset serve DOCUMENT.json --cert CHAIN.pem --key KEY.pem [--path /pinset.json] [--ipv6]

        Signed pin sets let an app receive new pins without an update (docs/pinset-format.md):
          keygen   makes an update-signing key (Ed25519 by default), writes it to KEY.pem with mode 0600
                   (never over an existing file) and prints its public key in the form the app embeds
                   (PinSetSigningKey(base64:)). Make two, keep them offline; they are never TLS keys.
          sign     signs a policy file (docs/policy-schema.md; pins only, no file paths) as pin set N:
                   prints the document (or writes it to FILE, atomically). --next-key (twice or more)
                   rotates the signing keys: later documents must be signed by one of those.
          verify   checks a document as an app that ships the given keys would: envelope, key, signature,
                   schema, serial (greater than --after-serial, default 0) and validity at --at (default
                   now) with --skew seconds of tolerance (default 300).
          serve    serves DOCUMENT.json over HTTPS on 127.0.0.1 (--ipv6: ::1) only, with an ETag
                   (If-None-Match answers 304), reading the file again on every request so replacing it
                   publishes a new set. Prints the URL on its first line; runs until SIGINT or SIGTERM.
        TIME is RFC 3339 (2027-01-01T00:00:00Z) or yyyy-MM-dd.

        exit codes: 0 success (verify: the document is accepted), 1 verify: the document is refused
        (the reason on stderr), 2 bad input or bad usage
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let sub = arguments.first else {
            throw CLIError("a subcommand is needed: keygen, sign, verify or serve (servertrust pinset --help)")
        }
        if sub == "--help" || sub == "-h" {
            print(usage)
            return ExitCode.success
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") {
            print(usage)
            return ExitCode.success
        }
        switch sub {
        case "keygen": return try keygen(rest)
        case "sign": return try sign(rest)
        case "verify": return try verify(rest)
        case "serve": return try serve(rest)
        default: throw CLIError("unknown subcommand '\(sub)' (keygen, sign, verify, serve)")
        }
    }

    // MARK: - keygen

    static func keygen(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments, flags: ["--help"], values: ["--out", "--algorithm"])
        guard options.positionals.isEmpty else { throw CLIError("keygen: unexpected argument '\(options.positionals[0])'") }
        guard let out = options.value("--out") else { throw CLIError("keygen: --out KEY.pem is required") }
        let name = options.value("--algorithm") ?? "ed25519"
        guard let algorithm = SigningAlgorithm(rawValue: name) else { throw CLIError("keygen: --algorithm must be ed25519 or p256, not '\(name)'") }
        let key = try PrivateKey.generate(algorithm)
        let signingKey = try PinSetSigningKey(publicKeyOf: key)
        try writeNew(Array(try key.pkcs8PEM().utf8), to: out, mode: 0o600)
        print(
            """
            wrote \(out) (\(algorithm) private key, mode 0600): keep it offline
            public key: \(signingKey.base64)
            key id:     \(signingKey.keyID)
            in the app: try PinSetSigningKey(base64: "\(signingKey.base64)")
            """)
        return ExitCode.success
    }

    /// Creates `path` (never over an existing file) with `mode`, writes and fsyncs it.
    static func writeNew(_ bytes: [UInt8], to path: String, mode: mode_t) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw CLIError("\(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        // The umask cannot widen 0600, but an explicit fchmod states the intent.
        fchmod(descriptor, mode)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw CLIError("\(path): \(String(cString: strerror(errno)))") }
            written += n
        }
        guard fsync(descriptor) == 0 else { throw CLIError("\(path): \(String(cString: strerror(errno)))") }
    }

    // MARK: - sign

    static func sign(_ arguments: [String]) throws -> Int32 {
        let options = try Options(
            arguments, flags: ["--help"], values: ["--key", "--serial", "--expires-in", "--expires", "--issued", "--next-key", "--out"])
        guard options.positionals.count == 1 else { throw CLIError("sign: one POLICY.json is needed (usage: servertrust pinset --help)") }
        guard let keyPath = options.value("--key") else { throw CLIError("sign: --key KEY.pem is required") }
        guard let serialText = options.value("--serial") else { throw CLIError("sign: --serial N is required") }
        guard let serial = Int64(serialText), (1...PinSetDocument.maximumSerial).contains(serial) else {
            throw CLIError("sign: --serial must be an integer from 1 to \(PinSetDocument.maximumSerial), not '\(serialText)'")
        }
        let now = TrustClock.system.now()
        let issuedAt = try options.value("--issued").map { try time($0, "--issued") } ?? now
        let expiresAt: Int64
        if let text = options.value("--expires") {
            guard options.value("--expires-in") == nil else { throw CLIError("sign: give --expires or --expires-in, not both") }
            expiresAt = try time(text, "--expires")
        } else {
            let daysText = options.value("--expires-in") ?? "90"
            guard let days = Int64(daysText), (1...3650).contains(days) else { throw CLIError("sign: --expires-in must be 1 to 3650 days, not '\(daysText)'") }
            expiresAt = issuedAt + days * 86_400
        }
        let key = try readPrivateKey(keyPath)
        let nextKeys = try options.values["--next-key"].map { texts in try texts.map { text in try signingKey(text, "--next-key") } }
        let policy = try InputFile.read(options.positionals[0])
        let document: [UInt8]
        do {
            document = try PinSetDocument.sign(
                policyJSON: policy, serial: serial, issuedAt: issuedAt, expiresAt: expiresAt, nextSigningKeys: nextKeys, key: key)
        } catch {
            throw CLIError("sign: \(options.positionals[0]): \(error.summary)")
        }
        if let out = options.value("--out") {
            do { try PinSetStore.writeAtomically(document, to: out, mode: 0o644) } catch { throw CLIError("sign: \(error.message)") }
            Console.writeStderr("signed pin set \(serial) (expires \(ASN1Time(secondsSince1970: expiresAt).rfc3339)) -> \(out)")
        } else {
            Console.writeStdout(String(decoding: document, as: UTF8.self))
        }
        return ExitCode.success
    }

    static func readPrivateKey(_ path: String) throws -> PrivateKey {
        let text = String(decoding: try InputFile.read(path), as: UTF8.self)
        do { return try PrivateKey(pemEncoded: text) } catch { throw CLIError("\(path): \(error.reason)") }
    }

    static func signingKey(_ text: String, _ option: String) throws -> PinSetSigningKey {
        do { return try PinSetSigningKey(base64: text) } catch { throw CLIError("\(option): \(error.message)") }
    }

    static func time(_ text: String, _ option: String) throws -> Int64 {
        if let time = ASN1Time(rfc3339: text) { return time.secondsSince1970 }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).compactMap { Int($0) }
        if parts.count == 3, text.utf8.count == 10, let time = ASN1Time(year: parts[0], month: parts[1], day: parts[2], hour: 0, minute: 0, second: 0) {
            return time.secondsSince1970
        }
        throw CLIError("\(option): '\(text)' is not an RFC 3339 time or a yyyy-MM-dd date")
    }

    // MARK: - verify

    static func verify(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments, flags: ["--help", "--json"], values: ["--key", "--after-serial", "--at", "--skew"])
        guard options.positionals.count == 1 else { throw CLIError("verify: one DOCUMENT.json is needed") }
        let keys = try (options.values["--key"] ?? []).map { try signingKey($0, "--key") }
        let after = options.value("--after-serial").map { Int64($0) } ?? 0
        guard let after else { throw CLIError("verify: --after-serial must be an integer") }
        let at = try options.value("--at").map { try time($0, "--at") }
        let skew = Int64(try options.int("--skew", default: 300))
        let rules: PinSetRules
        do {
            rules = try PinSetRules(signingKeys: keys, baselineSerial: after, clockSkew: skew, clock: at.map(TrustClock.fixed) ?? .system)
        } catch {
            throw CLIError("verify: \(error.message)" + (keys.count < 2 ? " (give each key the app ships with --key)" : ""))
        }
        let path = options.positionals[0]
        let bytes = try InputFile.read(path)
        let chain = PinSetChain(rules: rules)
        do {
            let document = try chain.verify(bytes)
            if options.flags.contains("--json") {
                print(
                    JSON.object([
                        ("file", .string(path)), ("accepted", .bool(true)), ("serial", .int(Int(document.serial))),
                        ("issuedAt", .string(ASN1Time(secondsSince1970: document.issuedAt).rfc3339)),
                        ("expiresAt", .string(ASN1Time(secondsSince1970: document.expiresAt).rfc3339)),
                        ("keyId", .string(document.signedBy.keyID)), ("hosts", .array(document.pins.hosts.map { .string($0.pattern.description) })),
                        ("nextSigningKeys", document.nextSigningKeys.map { .array($0.map { .string($0.base64) }) } ?? .null),
                    ]).rendered)
            } else {
                print(
                    "\(path): pin set \(document.serial) verifies: signed by \(document.signedBy), valid \(ASN1Time(secondsSince1970: document.issuedAt).rfc3339) to \(ASN1Time(secondsSince1970: document.expiresAt).rfc3339), \(document.pins.hosts.count) host entries"
                        + (document.nextSigningKeys.map { ", rotates the signing keys to \($0.count) keys" } ?? ""))
            }
            return ExitCode.success
        } catch {
            if options.flags.contains("--json") {
                print(
                    JSON.object([
                        ("file", .string(path)), ("accepted", .bool(false)), ("kind", .string(error.kind.rawValue)), ("reason", .string(error.summary)),
                        ("problems", .array(error.problems.map { .string($0.description) })),
                    ]).rendered)
            }
            Console.writeStderr("servertrust: pinset verify: \(path): refused: \(error.summary)")
            return ExitCode.rejected
        }
    }

    // MARK: - serve

    static func serve(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments, flags: ["--help", "--ipv6"], values: ["--cert", "--key", "--path"])
        guard options.positionals.count == 1 else { throw CLIError("serve: one DOCUMENT.json is needed") }
        guard let certPath = options.value("--cert"), let keyPath = options.value("--key") else {
            throw CLIError("serve: --cert CHAIN.pem and --key KEY.pem are required (the endpoint's TLS identity)")
        }
        let path = options.value("--path") ?? "/pinset.json"
        guard path.hasPrefix("/") else { throw CLIError("serve: --path must start with /") }
        let documentPath = options.positionals[0]
        _ = try InputFile.read(documentPath)
        let chain: [LabCertificate]
        let key: LabKey
        do {
            chain = try LabPEM.decode(String(decoding: try InputFile.read(certPath), as: UTF8.self))
                .filter { $0.label == "CERTIFICATE" }.map { try LabCertificate(der: $0.der) }
            key = try LabKey(privateKeyPEM: String(decoding: try InputFile.read(keyPath), as: UTF8.self))
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError("serve: cannot load the TLS identity: \(error)")
        }
        guard !chain.isEmpty else { throw CLIError("serve: \(certPath) holds no certificate") }
        let endpoint = try PinSetEndpoint(
            identity: LabTLSServer.Identity(chain: chain, key: key), path: path, address: options.flags.contains("--ipv6") ? .ipv6 : .ipv4
        ) { try? InputFile.read(documentPath) }
        Console.writeStdout(
            servingLines(
                documentPath, leaf: try? Certificate(derEncoded: chain[0].der), ipv6: options.flags.contains("--ipv6"), port: endpoint.port, path: path))
        let stop = DispatchSemaphore(value: 0)
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            sources.append(source)
        }
        stop.wait()
        endpoint.stop()
        _ = sources
        return ExitCode.success
    }
}

extension PinSetCommand {
    /// What `serve` prints: the URL a client fetches, named by the host its certificate is
    /// for (a URL on 127.0.0.1 would fail the host check of every client, ours included,
    /// unless the certificate names that address), and, when that host is not the loopback
    /// address itself, how to reach it (`--resolve`, as curl and `servertrust get` take it).
    static func servingLines(_ document: String, leaf: Certificate?, ipv6: Bool, port: UInt16, path: String) -> String {
        let loopback = ipv6 ? "::1" : "127.0.0.1"
        let host = leaf.flatMap(PinsCommand.defaultHost) ?? loopback
        let authority = (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        var text = "serving \(document) at https://\(authority)\(path)\n"
        if IPAddressText.parse(host) != IPAddressText.parse(loopback) {
            let address = ipv6 ? "[::1]" : loopback
            text += "listening on \(address):\(port) only: reach \(host) there with --resolve \(host):\(port):\(address)\n"
        }
        return text
    }
}

/// A loopback HTTPS endpoint serving one pin-set document: `GET PATH` answers 200 with the
/// document and a strong entity tag (its SHA-256), or 304 when `If-None-Match` names that tag;
/// anything else is 404. The document is read from `source` on every request, so replacing it
/// publishes a new set. `servertrust pinset serve` and the demo's rotation scene use it.
final class PinSetEndpoint: Sendable {
    let server: LabTLSServer

    init(
        identity: LabTLSServer.Identity, path: String, address: LabLoopbackAddress = .ipv4, name: String = "pinset-endpoint",
        source: @escaping @Sendable () -> [UInt8]?
    ) throws {
        var configuration = LabTLSServer.Configuration(identity: identity, name: name)
        configuration.address = address
        configuration.handler = { request in
            guard request.path == path, request.method == "GET" || request.method == "HEAD" else {
                return LabHTTPResponse(status: 404, body: .bytes(Array("not found\n".utf8)))
            }
            guard let document = source() else { return LabHTTPResponse(status: 503, body: .bytes(Array("no document\n".utf8))) }
            let etag = "\"" + Hex.encode(SHA256.hash(document)) + "\""
            if request.header("If-None-Match") == etag {
                return LabHTTPResponse(status: 304, headers: [("ETag", etag)], body: .bytes([]))
            }
            return LabHTTPResponse(status: 200, headers: [("Content-Type", "application/json"), ("ETag", etag)], body: .bytes(document))
        }
        server = try LabTLSServer.started(configuration)
    }

    var port: UInt16 { server.port }

    func stop() { server.stop() }
}
