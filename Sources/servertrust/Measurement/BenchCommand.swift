import CertificateParsing
import Dispatch
import ServerTrust
import Synchronization
import TrustEvaluation

#if canImport(Glibc)
    import Glibc
#endif

/// `servertrust bench evaluate …`: the plug-in interface of ../shared/bench (README there).
/// Modes: evaluate, evaluate-preparsed, floor, parse, store-load (README there).
enum BenchCommand {
    static let usage = """
        usage: servertrust bench evaluate --chain DIR [options]
               servertrust bench https --url URL --cainfo FILE [options]   (see servertrust bench https --help)
               servertrust bench h2|download --url URL --cainfo FILE [options]   (see servertrust bench h2 --help)

        The benchmark plug-ins of ../shared/bench: each run prints one JSON line of results on stdout.

        bench evaluate times the chain work on a corpus folder DIR (leaf.der, intermediates/NN.der,
        trust-store.pem, meta.json with "host" and "validation_time"):
          --chain DIR               the corpus folder (required)
          --mode MODE               evaluate (parse and verify, default), evaluate-preparsed (verify only),
                                    floor (the signature checks alone), parse, store-load
          --iterations N            timed iterations (default 2000)
          --warmup W                untimed iterations first (default max(50, N/10))
          --host H                  the host to verify for (default: meta.json "host")
          --time UNIX               the validation time (default: meta.json "validation_time")
          --trust FILE              the anchors (default DIR/trust-store.pem)
          --signature-memo off|warm|miss
                                    off (default): every signature verified afresh, the like-for-like
                                    comparison with the peers; warm: through a memo of verified signatures
                                    that the warm-up filled (what a repeated chain costs); miss: through a
                                    one-entry memo that each check evicts, so every check misses (what the
                                    memo adds to a new chain). The JSON line's impl says which:
                                    servertrust, servertrust-memo-warm, servertrust-memo-miss
          --threads N               evaluate only: N threads evaluate at once, N × --iterations in all,
                                    through one verifier and memo (lock contention shows as CPU per
                                    evaluation rising with N); default 1

        exit codes: 0 success, 1 the chain does not verify (or a timed run failed), 2 bad input
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let kind = arguments.first else { throw CLIError("which benchmark? evaluate, https, h2 or download (usage: servertrust bench --help)") }
        switch kind {
        case "evaluate": return try evaluate(Array(arguments.dropFirst()))
        case "https": return try BenchHTTPS.run(Array(arguments.dropFirst()))
        case "h2", "download": return try BenchParallel.run(kind, Array(arguments.dropFirst()))
        case "ct-fixture": return try BenchCTFixture.run(Array(arguments.dropFirst()))
        case "--help", "-h", "help":
            print(usage)
            return ExitCode.success
        default: throw CLIError("unknown benchmark '\(kind)' (available: evaluate, https, h2, download, ct-fixture; see servertrust bench --help)")
        }
    }

    static func requireChain(_ outcome: ValidationOutcome) throws -> [Certificate] {
        guard let chain = outcome.chain else { throw CLIError("evaluation failed", code: 1) }
        return chain.certificates
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func cpuNow() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func evaluate(_ arguments: [String]) throws -> Int32 {
        let options = try Options(
            arguments, flags: ["--help"],
            values: ["--chain", "--host", "--mode", "--iterations", "--warmup", "--time", "--trust", "--signature-memo", "--threads"])
        if options.flags.contains("--help") {
            print(usage)
            return ExitCode.success
        }
        guard options.positionals.isEmpty else { throw CLIError("unexpected argument '\(options.positionals[0])' (usage: servertrust bench --help)") }
        guard let chain = options.value("--chain") else { throw CLIError("--chain DIR is required (usage: servertrust bench --help)") }
        let mode = options.value("--mode") ?? "evaluate"
        let iterations = try options.int("--iterations", default: 2000)
        let warmup = try options.int("--warmup", default: max(50, iterations / 10))
        let metaText = String(decoding: try InputFile.read(chain + "/meta.json"), as: UTF8.self)
        let alg = jsonString(metaText, key: "alg") ?? "unknown"
        let leaf = try InputFile.read(chain + "/leaf.der")
        var intermediates: [[UInt8]] = []
        for index in 1...16 {
            let name = chain + "/intermediates/" + (index < 10 ? "0\(index)" : "\(index)") + ".der"
            guard access(name, R_OK) == 0 else { break }
            intermediates.append(try InputFile.read(name))
        }
        let host = options.value("--host") ?? jsonString(metaText, key: "host") ?? "www.example.test"
        let time: Int64
        if let t = options.value("--time") {
            guard let v = Int64(t) else { throw CLIError("--time must be Unix seconds") }
            time = v
        } else {
            guard let v = jsonInt(metaText, key: "validation_time") else { throw CLIError("meta.json has no validation_time") }
            time = v
        }
        let trustPath = options.value("--trust") ?? chain + "/trust-store.pem"
        let trustBytes = try InputFile.read(trustPath)
        let policy = ValidationPolicy.sslServer(host: host)
        // Off: no signature memo, so every iteration verifies both signatures (the plug-in rule
        // that nothing keyed on the chain carries over). Warm: a memo of its own, filled by the
        // warm-up, so the timed iterations measure the hit path.
        let memoMode = options.value("--signature-memo") ?? "off"
        let memo: SignatureMemo?
        switch memoMode {
        case "off": memo = nil
        case "warm": memo = SignatureMemo()
        // One entry: the path's two checks evict each other, so each one misses, verifies and
        // inserts (with an eviction, as in a full memo).
        case "miss": memo = SignatureMemo(capacity: 1)
        default: throw CLIError("--signature-memo: '\(memoMode)' is not off, warm or miss")
        }
        let impl = memo == nil ? "servertrust" : "servertrust-memo-\(memoMode)"
        let threads = try options.int("--threads", default: 1)
        guard threads >= 1, threads == 1 || mode == "evaluate" else { throw CLIError("--threads must be at least 1, and more only with --mode evaluate") }
        let signatures = OpenSSLSignatureVerifier(memo: memo)

        // Each mode is one closure timed the same way; every mode does full work per iteration.
        var sink = 0
        let body: () throws -> Void
        let bench: String
        let perEvaluation: Bool
        switch mode {
        case "parse":
            bench = "parse"
            perEvaluation = false
            body = {
                sink &+= try Certificate(derEncoded: leaf).extensions.all.count
                for der in intermediates { sink &+= try Certificate(derEncoded: der).extensions.all.count }
            }
        case "store-load":
            bench = "store-load"
            perEvaluation = false
            body = { sink &+= TrustStore(try Certificate.load(trustBytes)).count }
        case "pin-check", "pin-check-baseline":
            // What an SPKI pin check adds to an evaluation: the check itself on the path the
            // evaluation validated (the only certificates a pin may match), with the leaf key
            // and a backup pinned. Digests come from the process-wide SPKI digest cache, as
            // they do on a connection.
            // `pin-check-baseline` does the same work without the check, so the difference of the
            // two (best in instructions: valgrind callgrind) is what the check adds.
            bench = mode
            perEvaluation = false
            let baseline = mode == "pin-check-baseline"
            let store = TrustStore(try Certificate.load(trustBytes))
            let verifier = Verifier(anchors: store, policy: policy)
            let check = verifier.validate(
                leaf: try Certificate(derEncoded: leaf), intermediates: try intermediates.map { try Certificate(derEncoded: $0) }, at: time)
            guard let verified = check.chain else { throw CLIError("evaluation failed: \(check.failure.map(String.init(describing:)) ?? "")", code: 1) }
            let pins: [SPKIPin]
            let configuration: PinningConfiguration
            do {
                pins = [
                    SPKIPin(certificate: verified.leaf),
                    try SPKIPin("sha256/" + Base64.encode([UInt8](repeating: 7, count: 32))),
                ]
                configuration = try PinningConfiguration([PinnedHost(pattern: try HostPattern(host), pins: pins)])
            } catch {
                throw CLIError("pin configuration: \(error)")
            }
            body = {
                let proven = ProvenChain(validated: verified)
                if baseline {
                    sink &+= proven.certificates.count
                    return
                }
                let result = configuration.check(proven, forHost: host, at: time)
                guard result.allowsConnection else { throw CLIError("pin check failed: \(result.detail)", code: 1) }
                sink &+= 1
            }
        case "evaluate", "evaluate-preparsed", "floor":
            let store = TrustStore(try Certificate.load(trustBytes))
            let verifier = Verifier(anchors: store, policy: policy, signatureVerifier: signatures)
            let parsedLeaf = try Certificate(derEncoded: leaf)
            let parsedIntermediates = try intermediates.map { try Certificate(derEncoded: $0) }
            // Fail loudly (the runner's preflight relies on it) if the chain does not verify.
            let check = verifier.validate(leaf: parsedLeaf, intermediates: parsedIntermediates, at: time)
            if let failure = check.failure { throw CLIError("evaluation failed: \(failure)", code: 1) }
            switch mode {
            case "evaluate" where threads > 1:
                bench = "evaluate"
                perEvaluation = true
                let failures = Mutex(0)
                let intermediateBytes = intermediates
                let run: @Sendable (Int) -> Void = { count in
                    var failed = 0
                    for _ in 0..<count {
                        guard let l = try? Certificate(derEncoded: leaf), let i = try? intermediateBytes.map({ try Certificate(derEncoded: $0) }),
                            verifier.validate(leaf: l, intermediates: i, at: time).isTrusted
                        else {
                            failed += 1
                            continue
                        }
                    }
                    failures.withLock { $0 += failed }
                }
                // One body call is one round of every thread doing `iterations` evaluations: the
                // timing loop below runs it once (warm-up runs it single-threaded).
                var round = 0
                body = {
                    round += 1
                    if round <= warmup {
                        run(1)
                    } else {
                        DispatchQueue.concurrentPerform(iterations: threads) { _ in run(iterations) }
                    }
                    guard failures.withLock({ $0 }) == 0 else { throw CLIError("evaluation failed", code: 1) }
                    sink &+= 1
                }
            case "evaluate":
                bench = "evaluate"
                perEvaluation = true
                body = {
                    // Fresh objects from the DER bytes every iteration: nothing keyed on the
                    // chain carries over (the plug-in rule in ../shared/bench/README.md).
                    let l = try Certificate(derEncoded: leaf)
                    let i = try intermediates.map { try Certificate(derEncoded: $0) }
                    let outcome = verifier.validate(leaf: l, intermediates: i, at: time)
                    guard outcome.isTrusted else { throw CLIError("evaluation failed", code: 1) }
                    sink &+= outcome.signatureChecks
                }
            case "evaluate-preparsed":
                bench = "evaluate-preparsed"
                perEvaluation = true
                body = {
                    let outcome = verifier.validate(leaf: parsedLeaf, intermediates: parsedIntermediates, at: time)
                    guard outcome.isTrusted else { throw CLIError("evaluation failed", code: 1) }
                    sink &+= outcome.signatureChecks
                }
            default:
                bench = "verify-floor"
                perEvaluation = false
                // The implementation's own signature checks on parsed certificates with keys
                // built once: the floor the other modes are compared with.
                let path = try requireChain(check)
                let ops = signatures
                let keys = try path.dropFirst().map { try ops.makeKey($0.subjectPublicKeyInfo) }
                let signed = Array(path.dropLast())
                body = {
                    for (certificate, key) in zip(signed, keys) {
                        guard ops.verify(signature: certificate.signature, over: certificate.tbsBytes, algorithm: certificate.signatureAlgorithm, key: key)
                        else {
                            throw CLIError("signature check failed", code: 1)
                        }
                        sink &+= 1
                    }
                }
            }
        default:
            throw CLIError("unknown mode '\(mode)' (evaluate, evaluate-preparsed, floor, parse, store-load, pin-check, pin-check-baseline)")
        }
        do {
            for _ in 0..<warmup { try body() }
            let start = now()
            let cpuStart = cpuNow()
            for _ in 0..<(threads > 1 ? 1 : iterations) { try body() }
            let seconds = now() - start
            let cpu = cpuNow() - cpuStart
            let n = Double(max(iterations * threads, 1))
            var pairs: [(String, JSON)] = [
                ("impl", .string(impl)), ("bench", .string(bench)), ("alg", .string(alg)), ("host", .string(host)),
                ("iterations", .int(iterations * threads)), ("seconds", .double(seconds)),
            ]
            if threads > 1 { pairs.append(("threads", .int(threads))) }
            if perEvaluation {
                pairs += [
                    ("evals_per_sec", .double(n / seconds)), ("us_per_eval", .double(seconds / n * 1e6)),
                    ("cpu_us_per_eval", .double(cpu / n * 1e6)), ("sig_verifications", .int(2)),
                ]
            } else {
                pairs += [("ops_per_sec", .double(n / seconds)), ("us_per_op", .double(seconds / n * 1e6)), ("cpu_us_per_op", .double(cpu / n * 1e6))]
            }
            pairs += [("ok", .bool(sink != 0)), ("lib", .string("servertrust 0.1 (\(OpenSSLVersion.text))"))]
            print(JSON.object(pairs).rendered)
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError("\(mode) failed: \(error)", code: 1)
        }
        return ExitCode.success
    }

    static func jsonInt(_ text: String, key: String) -> Int64? {
        guard let range = text.firstRange(of: "\"\(key)\"") else { return nil }
        let after = text[range.upperBound...].drop { $0 == " " || $0 == ":" }
        return Int64(String(after.prefix { $0.isNumber || $0 == "-" }))
    }

    /// Reads a top-level string value from meta.json without a JSON library.
    static func jsonString(_ text: String, key: String) -> String? {
        guard let range = text.firstRange(of: "\"\(key)\"") else { return nil }
        let after = text[range.upperBound...].drop { $0 == " " || $0 == ":" }
        guard after.first == "\"" else { return nil }
        let body = after.dropFirst()
        guard let end = body.firstIndex(of: "\"") else { return nil }
        return String(body[..<end])
    }
}
