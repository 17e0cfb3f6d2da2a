import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import TrustEvaluation

#if canImport(Glibc)
    import Glibc
#endif

/// `servertrust bench h2 …` and `servertrust bench download …`: the HTTP/2 and bulk modes of
/// scripts/https-h2-bulk.sh, beside `curl --parallel --http2` and Go's net/http. Trust as in
/// `bench https`: the chain against `--cainfo`, the host, and the SPKI pin.
enum BenchParallel {
    /// The usage text, `kind`'s synopsis first.
    static func usage(_ kind: String) -> String {
        let synopses = ["h2", "download"].sorted { a, _ in a == kind }.map { "servertrust bench \($0) --url URL --cainfo FILE [options]" }
        return "usage: " + synopses.joined(separator: "\n       ") + "\n\n" + details
    }

    static let details = """
        bench h2: one untimed GET opens an HTTP/2 connection, then --requests GETs are sent --concurrency at a
        time, multiplexed over that connection; prints requests, errors, connections (new connections opened
        by the timed GETs: 0 when all were multiplexed), protocol, seconds, req_per_sec, us_per_req and
        client_cpu_us_per_req.
        bench download: one GET whose body is streamed and discarded; prints bytes, seconds, mb_per_sec,
        client_cpu_s and maxrss_kb (the process's peak resident memory).

        options:
          --url URL                 https://HOST:PORT/PATH (required)
          --cainfo FILE             the trust anchors, PEM (required)
          --connect-ip IP           connect to IP for the URL's host (default 127.0.0.1)
          --pin sha256//BASE64      an SPKI pin the server's chain must carry
          --requests N              h2: timed GETs (default 10000)
          --concurrency C           h2: GETs in flight (default 100)
          --http1                   download: HTTP/1.1 only (default: HTTP/2 when the server offers it)
          --alg A                   a label copied into the JSON line

        exit codes: 0 every request succeeded, 1 some request failed, 2 bad input
        """

    static func run(_ kind: String, _ arguments: [String]) throws -> Int32 {
        let options = try Options(
            arguments, flags: ["--help", "--http1"],
            values: ["--url", "--connect-ip", "--cainfo", "--pin", "--requests", "--concurrency", "--alg"])
        if options.flags.contains("--help") {
            print(usage(kind))
            return ExitCode.success
        }
        guard options.positionals.isEmpty else { throw CLIError("unexpected argument '\(options.positionals[0])' (usage: servertrust bench \(kind) --help)") }
        guard let url = options.value("--url"), let cainfo = options.value("--cainfo") else {
            throw CLIError("--url and --cainfo are required (usage: servertrust bench \(kind) --help)")
        }
        let session = try BenchHTTPS.makeSession(
            url: url, cainfo: cainfo, connectIP: options.value("--connect-ip") ?? "127.0.0.1", pin: options.value("--pin")
        ) { configuration in
            configuration.allowsHTTP2 = !options.flags.contains("--http1")
            configuration.timeout = 600
        }
        defer { session.invalidate() }
        let alg = options.value("--alg") ?? "unknown"
        let json: JSON
        let ok: Bool
        if kind == "h2" {
            let requests = try options.int("--requests", default: 10_000)
            let concurrency = try options.int("--concurrency", default: 100)
            guard requests > 0, concurrency > 0 else { throw CLIError("--requests and --concurrency must be positive") }
            (json, ok) = parallel(session: session, url: url, requests: requests, concurrency: concurrency, alg: alg)
        } else {
            (json, ok) = download(session: session, url: url, alg: alg)
        }
        Console.writeStdout(json.rendered + "\n")
        return ok ? ExitCode.success : 1
    }

    static func cpuAndPeakMemory() -> (cpu: Double, maxrssKB: Int) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return (cpu, Int(usage.ru_maxrss))
    }

    /// Requests `concurrency` at a time over the session, after one that opens the connection.
    static func parallel(session: HTTPSession, url: String, requests: Int, concurrency: Int, alg: String) -> (JSON, Bool) {
        struct Batch: Sendable {
            var errors = 0
            var newConnections = 0
            var protocols: Set<String> = []
            var firstError: String?
        }
        let request = HTTPRequest(.get, url)
        let (seconds, cpu, batch) = Blocking.run { () -> (Double, Double, Batch) in
            var warm = Batch()
            do {
                warm.protocols.insert(try await session.send(request).httpVersion)
            } catch {
                warm.errors += 1
                warm.firstError = "warm-up: \(error)"
                return (0, 0, warm)
            }
            let start = BenchCommand.now()
            let cpuStart = cpuAndPeakMemory().cpu
            let total = await withTaskGroup(of: Batch.self) { group -> Batch in
                // `concurrency` workers, each sending its share one after another: at most
                // `concurrency` requests in flight, as curl --parallel-max and the Go peer do.
                for worker in 0..<concurrency {
                    let share = requests / concurrency + (worker < requests % concurrency ? 1 : 0)
                    group.addTask {
                        var mine = Batch()
                        for _ in 0..<share {
                            do {
                                let response = try await session.send(request)
                                mine.protocols.insert(response.httpVersion)
                                if response.usedNewConnection { mine.newConnections += 1 }
                                if response.statusCode != 200 { mine.errors += 1 }
                            } catch {
                                mine.errors += 1
                                if mine.firstError == nil { mine.firstError = "\(error)" }
                            }
                        }
                        return mine
                    }
                }
                var sum = warm
                for await part in group {
                    sum.errors += part.errors
                    sum.newConnections += part.newConnections
                    sum.protocols.formUnion(part.protocols)
                    if sum.firstError == nil { sum.firstError = part.firstError }
                }
                return sum
            }
            return (BenchCommand.now() - start, cpuAndPeakMemory().cpu - cpuStart, total)
        }
        if let first = batch.firstError { Console.writeStderr("servertrust: bench h2: \(first)") }
        let ok = batch.errors == 0 && seconds > 0
        let n = Double(requests)
        let json: JSON = .object([
            ("impl", .string("servertrust")), ("bench", .string("h2-parallel")), ("alg", .string(alg)), ("requests", .int(requests)),
            ("concurrency", .int(concurrency)), ("errors", .int(batch.errors)), ("connections", .int(batch.newConnections)),
            ("protocol", .string(batch.protocols.sorted().joined(separator: ","))), ("seconds", .double(BenchHTTPS.rounded(seconds, 6))),
            ("req_per_sec", .double(BenchHTTPS.rounded(n / max(seconds, 1e-9), 1))), ("us_per_req", .double(BenchHTTPS.rounded(seconds * 1e6 / n, 2))),
            ("client_cpu_us_per_req", .double(BenchHTTPS.rounded(cpu * 1e6 / n, 2))), ("ok", .bool(ok)),
        ])
        return (json, ok)
    }

    /// One GET whose body is streamed and dropped chunk by chunk.
    static func download(session: HTTPSession, url: String, alg: String) -> (JSON, Bool) {
        var request = HTTPRequest(.get, url)
        request.timeout = 600
        let sending = request
        let (bytes, seconds, cpu, version, failure) = Blocking.run { () -> (Int, Double, Double, String, String?) in
            let start = BenchCommand.now()
            let cpuStart = cpuAndPeakMemory().cpu
            var bytes = 0
            do {
                let response = try await session.stream(sending)
                guard response.head.statusCode == 200 else { return (0, 0, 0, "", "HTTP \(response.head.statusCode)") }
                for try await chunk in response.body { bytes += chunk.count }
                return (bytes, BenchCommand.now() - start, cpuAndPeakMemory().cpu - cpuStart, response.head.httpVersion, nil)
            } catch {
                return (bytes, 0, 0, "", "\(error)")
            }
        }
        if let failure { Console.writeStderr("servertrust: bench download: \(failure)") }
        let ok = failure == nil && bytes > 0
        let json: JSON = .object([
            ("impl", .string("servertrust")), ("bench", .string("download")), ("alg", .string(alg)), ("protocol", .string(version)),
            ("bytes", .int(bytes)), ("seconds", .double(BenchHTTPS.rounded(seconds, 4))),
            ("mb_per_sec", .double(BenchHTTPS.rounded(Double(bytes) / max(seconds, 1e-9) / 1e6, 1))), ("client_cpu_s", .double(BenchHTTPS.rounded(cpu, 3))),
            ("maxrss_kb", .int(cpuAndPeakMemory().maxrssKB)), ("ok", .bool(ok)),
        ])
        return (json, ok)
    }
}
