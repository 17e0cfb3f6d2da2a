import CertificateParsing
#if canImport(Glibc)
import Glibc
#endif

/// `servertrust demo`. The live policy-matrix demo arrives with the HTTPS client (issue 6);
/// until then the main job summarises the system trust bundle, as the foundation issue allows.
enum DemoCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments, flags: ["--json", "--help"], values: [])
        if options.flags.contains("--help") {
            print("usage: servertrust demo [--json]\n\nSummarises the system trust bundle (SSL_CERT_FILE, default /etc/ssl/certs/ca-certificates.crt).")
            return ExitCode.success
        }
        let path = getenv("SSL_CERT_FILE").map { String(cString: $0) } ?? "/etc/ssl/certs/ca-certificates.crt"
        let bytes = try CLI.readFile(path)
        let certificates: [Certificate]
        do { certificates = try Certificate.load(bytes) } catch { throw CLIError("\(path): \(error)") }
        if options.flags.contains("--json") {
            print(JSON.array(certificates.enumerated().map { InspectCommand.json($0.element, file: path, index: $0.offset) }).rendered)
            return ExitCode.success
        }
        var byKey: [String: Int] = [:]
        for c in certificates { byKey["\(c.subjectPublicKeyInfo.key.algorithmName) \(c.subjectPublicKeyInfo.key.bitSize)", default: 0] += 1 }
        print("System trust bundle: \(path)")
        print("  \(certificates.count) root certificates, all parsed strictly from DER")
        print("  keys: " + byKey.sorted { $0.value > $1.value }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))
        let soonest = certificates.min { $0.notAfter < $1.notAfter }
        if let soonest { print("  first to expire: \(soonest.subject.rfc4514) on \(soonest.notAfter.rfc3339)") }
        print("")
        print("First three roots (servertrust inspect \(path) shows all):")
        for (i, c) in certificates.prefix(3).enumerated() {
            print(InspectCommand.human(c, file: path, index: i, count: certificates.count))
        }
        return ExitCode.success
    }
}
