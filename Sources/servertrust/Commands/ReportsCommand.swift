import Foundation
import ServerTrustCollector

/// `servertrust reports summary|load`: the collector's store in the terminal, and its load
/// benchmark.
enum ReportsCommand {
    static let usage = """
        usage: servertrust reports summary --db sqlite:PATH|postgres://… [--host H] [--app BUNDLE] [--since T] [--until T] [--limit N] [--json]
               servertrust reports load --db sqlite:PATH|postgres://… [--reports N] [--connections C] [--json]

          summary   what the dashboard shows: reports by class, hosts, app versions, every distinct failing
                    chain with its class and the reason (T: RFC 3339 or seconds since 1970)
          load      starts `servertrust collect` on the database, posts N distinct TrustKit-format reports
                    over C keep-alive connections, and prints sustained reports per second, latency
                    percentiles, and the reports stored against those acknowledged

        exit codes: 0 success (load: stored equals acknowledged), 1 load lost or failed reports, 2 bad input
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let sub = arguments.first, sub != "--help", sub != "-h" else {
            print(usage)
            return arguments.isEmpty ? ExitCode.badInput : ExitCode.success
        }
        let rest = Array(arguments.dropFirst())
        switch sub {
        case "summary": return try summary(rest)
        case "load": return try CollectorLoad.run(rest)
        default: throw CLIError("unknown subcommand '\(sub)' (summary, load)")
        }
    }

    static func summary(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments, flags: ["--help", "--json"], values: ["--db", "--host", "--app", "--since", "--until", "--limit"])
        if options.flags.contains("--help") {
            print(usage)
            return ExitCode.success
        }
        guard let db = options.value("--db") else { throw CLIError("summary: --db is required") }
        let location: DatabaseLocation
        do { location = try DatabaseLocation(db) } catch { throw CLIError(error.description) }
        if case .sqlite(let path) = location, !FileManager.default.fileExists(atPath: path) {
            throw CLIError("\(path): no such database")
        }
        var query: [String: String] = [:]
        for name in ["host", "app", "since", "until"] { query[name] = options.value("--" + name) }
        let filter: ReportFilter
        do { filter = try Collector.filter(query) } catch { throw CLIError(error.description) }
        let now = Int64(Date().timeIntervalSince1970)
        do {
            let store = try ReportStore(location, now: now)
            let summary = try store.summary(filter, now: now)
            let chains = try store.chains(filter, limit: try options.int("--limit", default: 20))
            if options.flags.contains("--json") {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                struct Output: Encodable {
                    let summary: Summary
                    let chains: [ChainSummary]
                }
                Console.writeStdout(String(decoding: try encoder.encode(Output(summary: summary, chains: chains)), as: UTF8.self) + "\n")
            } else {
                Console.writeStdout(SummaryText.render(summary, chains: chains))
            }
        } catch let error as StoreError {
            throw CLIError(error.description)
        }
        return ExitCode.success
    }
}
