import CertificateParsing
import ServerTrustHTTP
import TrustEvaluation

#if canImport(Glibc)
    import Glibc
#endif

enum CLI {
    static let usage = """
        usage: servertrust <command> [options]

        commands:
          inspect FILE... [--json]     show the certificates in PEM/DER files and bundles
          inspect https://HOST[:PORT]  what a server serves: TLS version, ALPN, the chain, and whether it verifies
          pins FILE|https://HOST       the pins to configure, with a backup: ServerTrust, TrustKit, OkHttp, ATS, curl
          pins lint|check ...          a policy's pins: the shapes that break at renewals; a live health check
          pinset keygen|sign|verify|serve  signed pin-set updates: signing keys, documents, a loopback endpoint
          evaluate CHAIN.pem --host H  judge a served chain offline (AFNetworking policy, pins, policy file; --help)
          get URL [options]            one HTTPS request through the policy flags of evaluate, curl-style options
          demo [--json]                the policy matrix, live: local servers, a man-in-the-middle, 12 policies × 6 situations
          collect --db LOCATION        the pin-failure report collector: POST /report, a dashboard, a JSON API (SQLite or PostgreSQL)
          reports summary|load         the collector's reports in the terminal; its load benchmark
          bench evaluate|https ...     benchmark plug-ins for ../shared/bench (servertrust bench --help)
          stress load|faults [--json]  load and fault checks against local servers: memory, descriptors, typed errors
          limbo-serve                  x509-limbo conformance server (limbo-jsonl/1 on stdin/stdout)
          help                         this text
          --version, -V                servertrust's version, and the libcurl and OpenSSL it runs on

        every command takes --help.
        exit codes: 0 success, 1 trust rejected, 2 bad input (more per command: see its --help)
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            Console.writeStderr(usage)
            return ExitCode.badInput
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "inspect": return try InspectCommand.run(rest)
            case "evaluate": return try EvaluateCommand.run(rest)
            case "demo": return try DemoCommand.run(rest)
            case "bench": return try BenchCommand.run(rest)
            case "stress": return try StressCommand.run(rest)
            case "get": return try GetCommand.run(rest)
            case "limbo-serve": return try LimboServeCommand.run(rest)
            case "pins": return try PinsCommand.run(rest)
            case "pinset": return try PinSetCommand.run(rest)
            case "collect": return try CollectCommand.run(rest)
            case "reports": return try ReportsCommand.run(rest)
            case "help", "--help", "-h":
                print(usage)
                return ExitCode.success
            case "--version", "-V":
                print(ProgramVersion.text)
                return ExitCode.success
            default:
                throw CLIError("unknown command '\(command)' (try 'servertrust help')")
            }
        } catch let error as CLIError {
            Console.writeStderr("servertrust: \(Console.oneLine(command)): \(Console.oneLine(error.message))")
            return error.code
        } catch {
            Console.writeStderr("servertrust: \(Console.oneLine(command)): \(Console.oneLine("\(error)"))")
            return ExitCode.badInput
        }
    }
}
