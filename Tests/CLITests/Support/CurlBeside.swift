import Foundation

/// Runs `/usr/bin/curl` and `servertrust get` with the same arguments against the same
/// server, and says which of our exit codes each curl exit code corresponds to: the test of
/// a curl spelling is that curl's outcome and ours are the same kind of outcome.
enum CurlBeside {
    static let curl = "/usr/bin/curl"

    /// Both runs' results.
    struct Pair {
        let curl: CLIRunner.Result
        let ours: CLIRunner.Result
        /// One line for an expectation's message.
        var summary: String { "curl \(curl.status) [\(curl.stderr.prefix(160))] / servertrust \(ours.status) [\(ours.stderr.prefix(300))]" }
    }

    /// `servertrust get`'s exit code for the outcome curl reports as `code` (curl(1) "EXIT
    /// CODES"): 0 success; 60 (peer certificate cannot be authenticated with known CA
    /// certificates) and 90 (SSL public key does not match pinned public key) are trust
    /// rejections, 1; 58 (problem with the local client certificate) is bad input, 2; 22
    /// (HTTP error, with `-f`) is 3; 7 (couldn't connect), 18, 27, 28 (timeout), 35 (TLS
    /// handshake), 52, 55 (send error), 56 (receive error) are network or TLS failures, 4.
    /// (curl's `--opt=value` is not curl's: curl takes the value as the next argument only.)
    static func ourExitCode(forCurl code: Int32) -> Int32? {
        switch code {
        case 0: return 0
        case 60, 90: return 1
        case 58: return 2
        case 22: return 3
        case 7, 18, 27, 28, 35, 52, 55, 56: return 4
        default: return nil
        }
    }

    /// Runs both: curl as `curl -sS --resolve R ARGUMENTS URL`, ours as
    /// `servertrust get URL --resolve R ARGUMENTS`.
    static func run(_ url: String, resolve: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> Pair {
        let curlResult = try await CLIRunner.run(["-sS", "--resolve", resolve] + arguments + [url], environment: environment, executable: curl)
        let ours = try await CLIRunner.run(["get", url, "--resolve", resolve] + arguments, environment: environment)
        return Pair(curl: curlResult, ours: ours)
    }
}
