import CertificateParsing
#if canImport(Glibc)
import Glibc
#endif

/// `servertrust bench evaluate …`: the plug-in interface of ../shared/bench (README there).
/// This build implements the `parse` mode; the evaluation modes need the trust evaluator.
enum BenchCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        guard let kind = arguments.first else { throw CLIError("usage: servertrust bench evaluate --chain DIR --mode MODE [--iterations N]") }
        switch kind {
        case "evaluate": return try evaluate(Array(arguments.dropFirst()))
        default: throw CLIError("unknown benchmark '\(kind)' (available: evaluate)")
        }
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
            arguments, flags: [], values: ["--chain", "--host", "--mode", "--iterations", "--warmup", "--time", "--trust"])
        guard let chain = options.value("--chain") else { throw CLIError("--chain DIR is required") }
        let mode = options.value("--mode") ?? "evaluate"
        let iterations = try options.int("--iterations", default: 2000)
        let warmup = try options.int("--warmup", default: max(50, iterations / 10))
        let metaText = String(decoding: try CLI.readFile(chain + "/meta.json"), as: UTF8.self)
        let alg = jsonString(metaText, key: "alg") ?? "unknown"
        let leaf = try CLI.readFile(chain + "/leaf.der")
        var intermediates: [[UInt8]] = []
        for index in 1...16 {
            let name = chain + "/intermediates/" + (index < 10 ? "0\(index)" : "\(index)") + ".der"
            guard access(name, R_OK) == 0 else { break }
            intermediates.append(try CLI.readFile(name))
        }
        switch mode {
        case "parse":
            var sink = 0
            func once() throws {
                let l = try Certificate(derEncoded: leaf)
                sink &+= l.extensions.all.count
                for der in intermediates {
                    let c = try Certificate(derEncoded: der)
                    sink &+= c.extensions.all.count
                }
            }
            do {
                for _ in 0..<warmup { try once() }
                let start = now()
                let cpuStart = cpuNow()
                for _ in 0..<iterations { try once() }
                let seconds = now() - start
                let cpu = cpuNow() - cpuStart
                let n = Double(max(iterations, 1))
                print(JSON.object([
                    ("impl", .string("servertrust")), ("bench", .string("parse")), ("alg", .string(alg)),
                    ("iterations", .int(iterations)), ("seconds", .double(seconds)), ("ops_per_sec", .double(n / seconds)),
                    ("us_per_op", .double(seconds / n * 1e6)), ("cpu_us_per_op", .double(cpu / n * 1e6)),
                    ("certs_per_op", .int(1 + intermediates.count)), ("ok", .bool(sink > 0)), ("lib", .string("servertrust 0.1")),
                ]).rendered)
            } catch {
                throw CLIError("parse failed: \(error)", code: 1)
            }
            return ExitCode.success
        default:
            throw CLIError("mode '\(mode)' needs the trust evaluator, which this build does not have yet (available: parse)")
        }
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
