import CertificateParsing
import ServerTrust
import ServerTrustHTTP
import TrustEvaluation

/// The proxy options `get`, `inspect https://` and `pins https://` share: `--proxy URL`,
/// `--proxy-user USER:PASS` and `--proxy-cacert FILE` (repeatable), as curl spells them, and
/// `--proxy-user-password SOURCE` to keep the proxy password out of argv (``PasswordSource``).
enum ProxyOptions {
    /// The option names, for the commands' option tables.
    static let names: Set<String> = ["--proxy", "--proxy-user", "--proxy-user-password", "--proxy-cacert"]

    /// One line per option, for the usage texts.
    /// The first line carries no indentation: it is interpolated where a usage text has its own.
    static let usage = """
        --proxy URL               reach the server through an http:// or https:// proxy (CONNECT)
          --proxy-user USER:PASS    Basic credentials for the proxy
          --proxy-user-password SOURCE
                                    --proxy-user USER's password from env:NAME, file:PATH or pass:TEXT
          --proxy-cacert FILE       roots (PEM) an https:// proxy's certificate may chain to, besides the
                                    system roots (repeatable); the proxy's host name is always checked
        """

    /// The proxy `options` describe (the `inspect` and `pins` option parser).
    static func configuration(_ options: Options) throws -> ProxyConfiguration? {
        try configuration(
            url: options.value("--proxy"), user: options.value("--proxy-user"),
            userPassword: options.value("--proxy-user-password"), caCertificates: options.values["--proxy-cacert"] ?? [])
    }

    /// The proxy the options describe, or `nil` without `--proxy`.
    ///
    /// - Throws: ``CLIError`` for a URL that is not http(s), `--proxy-user` or `--proxy-cacert`
    ///   without a proxy that takes them, or an unreadable roots file.
    static func configuration(url: String?, user: String?, userPassword: String? = nil, caCertificates: [String]) throws -> ProxyConfiguration? {
        guard let url else {
            if user != nil || userPassword != nil || !caCertificates.isEmpty { throw CLIError("--proxy-user and --proxy-cacert need --proxy") }
            return nil
        }
        let isHTTPS = url.lowercased().hasPrefix("https://")
        guard isHTTPS || url.lowercased().hasPrefix("http://") else { throw CLIError("--proxy must be an http:// or https:// URL") }
        var proxy = ProxyConfiguration(url: url)
        if let user {
            let (name, password) = try PasswordSource.credentials(
                user, option: "--proxy-user", passwordSource: userPassword,
                sourceOption: "--proxy-user-password")
            proxy.credential = .user(name, password: password, persistence: .none)
        } else if userPassword != nil {
            throw CLIError("--proxy-user-password needs --proxy-user USER")
        }
        if !caCertificates.isEmpty {
            guard isHTTPS else { throw CLIError("--proxy-cacert needs an https:// --proxy") }
            let system: TrustStore
            do {
                system = try TrustStore.system()
            } catch {
                throw CLIError("system trust store: \(error)")
            }
            let roots = try caCertificates.flatMap { try FileKind.certificates($0, option: "--proxy-cacert") }
            proxy.serverTrust = ServerTrustDecider(DefaultTrustEvaluator(), anchors: system + TrustStore(roots, sources: caCertificates))
        }
        return proxy
    }
}
