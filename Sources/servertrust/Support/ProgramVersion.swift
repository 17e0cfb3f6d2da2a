import ServerTrustHTTP
import TrustEvaluation

/// What `servertrust --version` and `servertrust get --version` print.
enum ProgramVersion {
    /// The command's version.
    static let number = "0.1"

    /// What `--version` prints, after curl's `--version`: the first line names the program and
    /// the libraries under it (libcurl's own version line: the libcurl and TLS library that
    /// carry the requests), the second the libcrypto that makes the trust decisions.
    static var text: String {
        "servertrust \(number) \(HTTPSession.libcurlVersion)\nTrust decisions: ServerTrust on \(OpenSSLVersion.text)"
    }
}
