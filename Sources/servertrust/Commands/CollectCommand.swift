import CertificateParsing
import Dispatch
import Foundation
import ServerTrustCollector
import TrustEvaluation

/// `servertrust collect`: the pin-failure report collector (issue 28), in the foreground until
/// SIGTERM or SIGINT, which shut it down gracefully.
enum CollectCommand {
    static let usage = """
        usage: servertrust collect --db sqlite:PATH|postgres://… [--listen HOST:PORT] [options]

        Receives pin-failure reports (TrustKit's JSON, as ServerTrust and TrustKit post them) at
        POST /report, stores them in SQLite or PostgreSQL, classifies every distinct failing chain
        (likely rotation, unexpected public CA, likely interception, invalid chain) and serves a
        dashboard at / and a JSON API at /api/summary and /api/chains (filters: host, app, since,
        until). Prints its URL on the first line; SIGTERM or Ctrl-C stop it gracefully (requests in
        progress finish, every acknowledged report is stored).

        options:
          --listen HOST:PORT      address and port (default 127.0.0.1:8470; port 0 picks one; [::1]:PORT)
          --db LOCATION           sqlite:PATH (WAL, synchronous=FULL) or postgres://USER@HOST:PORT/DB
          --token-file FILE       the token reading the dashboard and API requires (Authorization:
                                  Bearer TOKEN or ?token=TOKEN); also SERVERTRUST_COLLECTOR_TOKEN.
                                  Needed unless HOST is a loopback address; posting never needs it
          --retain-days N         delete reports older than N days (default 90; 0 keeps all)
          --rate-limit N          reports a source address may post a minute (default 120; 0: off)
          --dedupe-window S       identical reports within S seconds are counted in one row (default 3600)
          --max-report-bytes N    the largest report body (default 65536)
          --max-connections N     connections at once (default 256)
          --idle-timeout S        seconds a connection may be idle (default 30)
          --public-roots FILE     the public roots chains are classified against (default: the system store)
          --expected-ca FILE      CA certificates (PEM) your certificates are issued under; a failing chain
                                  through one of them is a likely rotation (repeatable)
          --tls-cert FILE --tls-key FILE   serve HTTPS directly (else put nginx in front: README)
          --trust-forwarded-for   behind a loopback proxy, rate-limit by the last X-Forwarded-For address
          --access-log FILE       one line per request: time, address, method, path, status

        exit codes: 0 stopped by a signal, 2 bad usage or a database that cannot be opened
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(
            arguments, flags: ["--help", "--trust-forwarded-for"],
            values: [
                "--listen", "--db", "--token-file", "--retain-days", "--rate-limit", "--dedupe-window", "--max-report-bytes", "--max-connections",
                "--idle-timeout", "--public-roots", "--expected-ca", "--tls-cert", "--tls-key", "--access-log",
            ])
        if options.flags.contains("--help") {
            print(usage)
            return ExitCode.success
        }
        guard options.positionals.isEmpty else { throw CLIError("unexpected argument '\(options.positionals[0])' (servertrust collect --help)") }
        let configuration = try configuration(options)
        let collector: Collector
        do {
            collector = try Collector(configuration)
        } catch {
            throw CLIError(error.description)
        }
        Console.writeStdout(
            "collecting pin-failure reports at \(collector.baseURL)/report (dashboard \(collector.baseURL)/, database \(configuration.database))\n")
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
        collector.shutdown()
        let statistics = collector.statistics
        Console.writeStdout(
            "stopped: \(statistics.acknowledged) reports acknowledged and stored, \(statistics.refused) refused, "
                + "\(statistics.rateLimited) rate-limited, \(statistics.failed) not stored (503)\n")
        _ = sources
        return ExitCode.success
    }

    static func configuration(_ options: Options) throws -> Collector.Configuration {
        guard let db = options.value("--db") else { throw CLIError("--db sqlite:PATH or --db postgres://… is required") }
        var configuration: Collector.Configuration
        do {
            configuration = Collector.Configuration(database: try DatabaseLocation(db))
        } catch {
            throw CLIError(error.message)
        }
        let listen = options.value("--listen") ?? "127.0.0.1:8470"
        guard let colon = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: colon)...]) else {
            throw CLIError("--listen must be HOST:PORT, got '\(listen)'")
        }
        var host = String(listen[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        configuration.host = host
        configuration.port = port
        if let path = options.value("--token-file") {
            let token = String(decoding: try InputFile.read(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else { throw CLIError("\(path): empty token") }
            configuration.token = token
        } else if let token = ProcessInfo.processInfo.environment["SERVERTRUST_COLLECTOR_TOKEN"], !token.isEmpty {
            configuration.token = token
        }
        configuration.retainDays = try options.int("--retain-days", default: 90)
        // Retention deletes what was received before now minus that many days, in seconds since
        // 1970: days whose seconds do not fit in 64 bits would trap when it first runs.
        guard configuration.retainDays <= Int(Int64.max / 86_400) else {
            throw CLIError("--retain-days must be at most \(Int64.max / 86_400), got '\(configuration.retainDays)' (0 keeps everything)")
        }
        configuration.rateLimitPerMinute = try options.int("--rate-limit", default: 120)
        configuration.deduplicationWindow = Int64(max(1, try options.int("--dedupe-window", default: 3600)))
        configuration.limits.bodyBytes = max(1024, try options.int("--max-report-bytes", default: 65_536))
        configuration.limits.connections = UInt32(clamping: max(1, try options.int("--max-connections", default: 256)))
        configuration.limits.idleSeconds = UInt32(clamping: max(1, try options.int("--idle-timeout", default: 30)))
        if let path = options.value("--public-roots") {
            do {
                configuration.publicRoots = try TrustStore(contentsOf: [path])
            } catch {
                throw CLIError(error.description)
            }
        }
        for path in options.values["--expected-ca"] ?? [] {
            let certificates: [Certificate]
            do { certificates = try Certificate.load(try InputFile.read(path)) } catch let error as CLIError { throw error } catch {
                throw CLIError("\(path): \(error)")
            }
            if let leaf = certificates.first(where: { !$0.isCertificateAuthority }) {
                throw CLIError("\(path): \(leaf.subject.rfc4514) is not a CA certificate (--expected-ca takes the CAs your certificates come from)")
            }
            configuration.expectedCAs += certificates
        }
        switch (options.value("--tls-cert"), options.value("--tls-key")) {
        case (let certificate?, let key?):
            configuration.tls = (String(decoding: try InputFile.read(certificate), as: UTF8.self), String(decoding: try InputFile.read(key), as: UTF8.self))
        case (nil, nil): break
        default: throw CLIError("--tls-cert and --tls-key go together")
        }
        configuration.trustForwardedFor = options.flags.contains("--trust-forwarded-for")
        configuration.accessLogPath = options.value("--access-log")
        return configuration
    }
}

extension StoreError {
    /// The error as one line.
    var message: String { description }
}
