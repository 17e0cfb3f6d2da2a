import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import TrustEvaluation

/// `servertrust bench https …`: the HTTPS plug-in of ../shared/bench (README "Plug-in
/// interface"): GETs through ``HTTPSession`` with the chain evaluated against `--cainfo`, the
/// host checked and the SPKI pin enforced by the session's decider, like the libcurl anchor
/// with `CURLOPT_PINNEDPUBLICKEY`.
enum BenchHTTPS {
    static let usage = """
        usage: servertrust bench https --url URL --cainfo FILE [options]

        GETs URL through HTTPSession with the chain verified against --cainfo and the host checked (the
        libcurl anchor with CURLOPT_CAINFO and CURLOPT_PINNEDPUBLICKEY), one untimed warm-up request
        first, and prints one JSON line: requests, errors, req_per_sec, us_per_req, p50_us, p99_us, ok.

        options:
          --url URL                 https://HOST:PORT/PATH (required)
          --cainfo FILE             the trust anchors, PEM (required)
          --connect-ip IP           connect to IP for the URL's host (default 127.0.0.1)
          --pin sha256//BASE64      an SPKI pin the server's chain must carry
          --mode newconn|resume|keepalive
                                    a new connection and full handshake per request (default), a new
                                    connection resuming the TLS session, or one keep-alive connection
          --requests N              timed requests (default 500)
          --max-seconds S           stop after S seconds (default 50)
          --expect-bytes N          the body size every response must have (default 1024)
          --ct report|require, --ct-policy apple|chrome, --ct-log-list FILE
                                    Certificate Transparency as in get, --cainfo's roots counting as the system's
          --signature-memo on|off   on (default, as in the library): signature checks go through the
                                    process-wide memo of verified signatures; off: every signature is
                                    verified afresh (SignatureMemo.shared.isEnabled = false)
          --revocation off|soft-fail|hard-fail, --revocation-depth leaf|chain
                                    check revocation (default off): the staple, and the CRLs the chain's
                                    distribution points name, fetched once by the warm-up and then from
                                    the cache (scripts/https-revocation.sh)
          --alg A, --impl NAME      labels copied into the JSON line

        exit codes: 0 every request succeeded, 1 some request failed (the JSON line says how many),
        2 bad input
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(
            arguments, flags: ["--help"],
            values: Set([
                "--url", "--connect-ip", "--cainfo", "--pin", "--mode", "--requests", "--max-seconds", "--alg", "--impl", "--expect-bytes",
                "--signature-memo", "--revocation", "--revocation-depth",
            ]).union(TrustOptions.certificateTransparencyNames))
        if options.flags.contains("--help") {
            print(usage)
            return ExitCode.success
        }
        guard options.positionals.isEmpty else { throw CLIError("unexpected argument '\(options.positionals[0])' (usage: servertrust bench https --help)") }
        guard let url = options.value("--url"), let cainfo = options.value("--cainfo") else {
            throw CLIError("--url and --cainfo are required (usage: servertrust bench https --help)")
        }
        let mode = options.value("--mode") ?? "newconn"
        guard ["newconn", "resume", "keepalive"].contains(mode) else { throw CLIError("--mode: '\(mode)' is not newconn, resume or keepalive") }
        let requests = try options.int("--requests", default: 500)
        let maxSecondsText = options.value("--max-seconds") ?? "50"
        guard let maxSeconds = Double(maxSecondsText), maxSeconds > 0, maxSeconds.isFinite else {
            throw CLIError("--max-seconds must be a positive number, got '\(maxSecondsText)'")
        }
        let alg = options.value("--alg") ?? "unknown"
        let impl = options.value("--impl") ?? "servertrust"
        let expectedBytes = try options.int("--expect-bytes", default: 1024)
        let connectIP = options.value("--connect-ip") ?? "127.0.0.1"
        switch options.value("--signature-memo") ?? "on" {
        case "on": SignatureMemo.shared.isEnabled = true
        case "off": SignatureMemo.shared.isEnabled = false
        case let other: throw CLIError("--signature-memo: '\(other)' is not on or off")
        }
        var revocation = RevocationPolicy.off
        if let text = options.value("--revocation") {
            guard let mode = RevocationMode(rawValue: text) else { throw CLIError("--revocation: '\(text)' is not off, soft-fail or hard-fail") }
            revocation = RevocationPolicy(mode: mode)
        }
        if let text = options.value("--revocation-depth") {
            guard let depth = RevocationDepth(rawValue: text) else { throw CLIError("--revocation-depth: '\(text)' is not leaf or chain") }
            revocation.depth = depth
        }
        // --ct, --ct-policy, --ct-log-list as in `get`, with --cainfo as the system roots, so CT
        // applies to the server's chain: the cost of Certificate Transparency per connection.
        let certificateTransparency = try TrustOptions(values: options.values, flags: []).certificateTransparency() ?? .off
        let session = try makeSession(
            url: url, cainfo: cainfo, connectIP: connectIP, pin: options.value("--pin"), revocation: revocation,
            certificateTransparency: certificateTransparency
        ) { configuration in
            configuration.minimumTLSVersion = .tls1_3
            configuration.allowsHTTP2 = false
            configuration.tlsSessionResumption = mode != "newconn"
        }
        defer { session.invalidate() }
        var template = HTTPRequest(.get, url)
        template.usesFreshConnection = mode != "keepalive"
        let request = template

        // The loop runs on the session's transfer thread (HTTPSession.transferExecutor), as a
        // single-threaded client would: no thread switch between a response and the next
        // request, and each request runs inline there (the library's own path for requests
        // from that executor: HTTPSession.send, redirects, challenges and cancellation included).
        let executor = session.transferExecutor
        let report = Blocking.run { () -> Report in
            await withTaskExecutorPreference(executor) {
                await measure(session: session, request: request, requests: requests, maxSeconds: maxSeconds, expectedBytes: expectedBytes)
            }
        }
        if let firstError = report.firstError { Console.writeStderr("servertrust: bench https: \(firstError)") }
        let done = report.latencies.count
        let seconds = report.seconds
        let sorted = report.latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let rank = p * Double(sorted.count - 1)
            let low = Int(rank.rounded(.down))
            let high = min(low + 1, sorted.count - 1)
            return (sorted[low] + (sorted[high] - sorted[low]) * (rank - Double(low))) * 1e6
        }
        let ok = report.errors == 0 && done > 0 && !report.warmupFailed
        let perRequest = Double(max(done, 1))
        let json: JSON = .object([
            ("impl", .string(impl)), ("bench", .string("https-\(mode)")), ("alg", .string(alg)), ("requests", .int(done)),
            ("errors", .int(report.errors)), ("resumed", .int(report.resumed)), ("seconds", .double(rounded(seconds, 6))),
            ("req_per_sec", .double(rounded(Double(done) / max(seconds, 1e-9), 2))),
            ("us_per_req", .double(rounded(seconds * 1e6 / perRequest, 2))),
            ("client_cpu_us_per_req", .double(rounded(report.cpuSeconds * 1e6 / perRequest, 2))),
            ("p50_us", .double(rounded(percentile(0.5), 1))), ("p99_us", .double(rounded(percentile(0.99), 1))),
            ("min_us", .double(rounded((sorted.first ?? 0) * 1e6, 1))), ("ok", .bool(ok)),
            ("lib", .string("servertrust 0.1 (\(HTTPSession.libcurlVersion))")),
        ])
        Console.writeStdout(json.rendered + "\n")
        return ok ? ExitCode.success : 1
    }

    /// A session that connects to `connectIP` for the URL's host, trusts `cainfo`, and enforces
    /// `pin` on the validated path when given (libcurl's `--pinnedpubkey` beside us: curl checks
    /// the leaf; the pin the bench passes is the leaf's); no compression, redirects or default
    /// headers. `configure` sets the rest.
    static func makeSession(
        url: String, cainfo: String, connectIP: String, pin pinText: String?, revocation: RevocationPolicy = .off,
        certificateTransparency: CertificateTransparencyPolicy = .off,
        configure: (inout HTTPSessionConfiguration) -> Void
    ) throws -> HTTPSession {
        guard let components = URLComponents(string: url), let host = components.host else { throw CLIError("--url: '\(url)' is not a URL") }
        let port = components.port ?? 443
        let anchors: TrustStore
        do {
            anchors = try TrustStore(contentsOf: [cainfo])
        } catch {
            throw CLIError("--cainfo: \(error)")
        }
        var evaluator: any ServerTrustEvaluating = DefaultTrustEvaluator()
        if let text = pinText {
            let pin: SPKIPin
            do { pin = try SPKIPin(text) } catch { throw CLIError("--pin '\(text)': \(error.message)") }
            let pattern: HostPattern
            do { pattern = try HostPattern(host) } catch { throw CLIError("'\(host)': \(error.message)") }
            do {
                evaluator = SPKIPinsTrustEvaluator(
                    configuration: try PinningConfiguration([PinnedHost(pattern: pattern, pins: [pin], requiresBackupPin: false)]))
            } catch {
                throw CLIError("--pin: \(error)")
            }
        }
        let hostPolicy = HostTrustPolicy(evaluator: evaluator, revocation: revocation, certificateTransparency: certificateTransparency)
        var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(policy: TrustPolicy(hostPolicy), anchors: anchors))
        configuration.resolve = ["\(host):\(port):\(connectIP)"]
        configuration.acceptsCompressedResponses = false
        configuration.maximumRedirects = 0
        configuration.defaultHeaders = HTTPHeaders()
        configure(&configuration)
        do {
            return try HTTPSession(configuration: configuration)
        } catch {
            throw CLIError("\(error)")
        }
    }

    struct Report: Sendable {
        var latencies: [Double] = []
        var errors = 0
        var resumed = 0
        var seconds = 0.0
        var cpuSeconds = 0.0
        var warmupFailed = false
        var firstError: String?
    }

    static func rounded(_ value: Double, _ digits: Int) -> Double {
        let scale = pow(10.0, Double(digits))
        return (value * scale).rounded() / scale
    }

    /// One untimed warm-up request (DNS, the first TLS session), then the timed loop, bounded
    /// by the request count and the time limit.
    static func measure(session: HTTPSession, request: HTTPRequest, requests: Int, maxSeconds: Double, expectedBytes: Int) async -> Report {
        var report = Report()
        report.latencies.reserveCapacity(requests)
        var start = BenchCommand.now()
        var cpuStart = BenchCommand.cpuNow()
        for index in -1..<requests {
            let before = BenchCommand.now()
            var failed: String?
            var resumed = false
            do {
                let response = try await session.send(request)
                if response.statusCode != 200 || (expectedBytes >= 0 && response.body.count != expectedBytes) {
                    failed = "HTTP \(response.statusCode), \(response.body.count) bytes"
                }
                resumed = response.tlsSessionResumed
            } catch {
                failed = "\(error)"
            }
            let after = BenchCommand.now()
            if let failed {
                if report.firstError == nil { report.firstError = failed }
                if index < 0 {
                    report.warmupFailed = true
                    return report
                }
                report.errors += 1
                continue
            }
            if index < 0 {
                start = BenchCommand.now()
                cpuStart = BenchCommand.cpuNow()
                continue
            }
            report.latencies.append(after - before)
            if resumed { report.resumed += 1 }
            if after - start > maxSeconds { break }
        }
        report.seconds = BenchCommand.now() - start
        report.cpuSeconds = BenchCommand.cpuNow() - cpuStart
        return report
    }
}
