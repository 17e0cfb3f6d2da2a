import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import Synchronization
import TrustEvaluation

/// `servertrust get URL …`: one HTTPS request through ``HTTPSession`` with the policy flags of
/// `servertrust evaluate`, curl's request flags, and exit codes for scripts.
enum GetCommand {
    static let usage = """
        usage: servertrust get URL [options]

        One HTTP(S) request, like curl, through HTTPSession: the server's chain is judged by the trust
        options below inside the TLS handshake, before any request byte is sent. The body goes to stdout.
        curl's spellings mean what they mean to curl (--cacert, -k, --pinnedpubkey, --cert FILE:PASS,
        --cert-type, -m, --connect-timeout, --version); see README "get URL: one request, in curl's spellings".

        trust (default: the system roots, host checked):
          --cacert FILE             trust only these roots, PEM or DER (curl's bundle; repeatable, the files
                                    add up)
          --anchors FILE            extra trust anchors, added to the system roots (repeatable)
          --anchors-only            trust only --anchors, not the system roots
          --crl FILE                CRLs (PEM or DER) every certificate of the path but the anchor must be
                                    covered by and not revoked in (curl's --crlfile; repeatable; with
                                    --revocation, one more source)
          --revocation off|soft-fail|hard-fail
                                    check revocation from the server's stapled OCSP response, --crl and the
                                    CRLs the certificates' distribution points name (fetched, cached);
                                    soft-fail accepts a status that cannot be found (default: off, or the
                                    --policy file's)
          --revocation-depth leaf|chain
                                    the leaf only, or every certificate but the anchor (default chain)
          --crl-cache DIR           keep fetched CRLs in DIR (created, mode 0700), as well as in memory
          --ct off|report|require   Certificate Transparency for chains that end at a system root: report
                                    notes a non-compliant chain and accepts it, require refuses it (default off)
          --ct-policy apple|chrome  the CT policy the SCTs are judged by (default apple)
          --ct-log-list FILE        the CT log list (Chrome's v3 JSON or Apple's list) the SCTs are checked
                                    against; required with --ct report|require
          --pinnedpubkey 'sha256//BASE64[;sha256//BASE64…]' | --pinnedpubkey FILE
                                    the leaf's public key must be one of these (curl's; FILE: a PEM or DER
                                    public key); with -k only the leaf's key is checked, as by curl
          --pin sha256/BASE64       an SPKI pin a certificate of the validated path must carry (repeatable;
                                    also sha256//…, sha384/…, sha512/…, bare base64); other hosts are refused
          --mode none|public-key|certificate
                                    AFNetworking pinning mode with --pinned-cert (ServerTrust.SecurityPolicy)
          --pinned-cert FILE        a pinned certificate for --mode (repeatable)
          --compat                  SecurityPolicy with AFNetworking's exact semantics (default: strict;
                                    --strict is accepted)
          --no-validate-domain      do not check the host name
          -k, --insecure, --allow-invalid
                                    skip chain validation: with pins they match the leaf and the certificates
                                    that verifiably signed it, without any pin nothing is checked (--json's
                                    decision says "checked": "nothing")
          --policy FILE             a JSON policy file (docs/policy-schema.md) instead of --mode, --pinned-cert,
                                    --pin, --strict, --no-validate-domain, -k (--anchors and --cacert add roots);
                                    pin failures are posted to its reportUris (system roots, never its pins)
        request:
          -X, --request METHOD      the method (default GET, or POST with -d)
          -d, --data DATA           a body; @FILE reads a file (repeatable, joined with &)
          -T, --upload-file FILE    send FILE as the body, streamed as it is sent (PUT unless -X)
          -F, --form NAME=VALUE     a multipart/form-data field (POST unless -X; repeatable); NAME=@FILE
                                    adds FILE as a file part, streamed as it is sent (NAME=@FILE;type=MIME)
          -H, --header 'Name: value'  a header (repeatable)
          -u, --user USER[:PASS]    Basic credentials, sent preemptively (Digest answered on 401)
          --user-password SOURCE    -u's password from env:NAME, file:PATH (its first line) or pass:TEXT,
                                    so that it is not in argv (then -u USER)
          -E, --cert FILE[:PASS]    a client certificate: PKCS#12, or PEM certificate (and key); a colon in
                                    FILE is written \\:
          --cert-type PEM|DER|P12   the --cert file's type (default: what the file is)
          --key FILE                the private key of a PEM or DER --cert
          --pass PASS               the --cert password; env:NAME, file:PATH or pass:TEXT read it from the
                                    environment or a file instead of argv
          \(ProxyOptions.usage)
          --resolve HOST:PORT:ADDR  connect to ADDR for HOST:PORT (as curl; repeatable)
          -m, --max-time SECONDS    for the whole request (default 60; also --timeout; fractions allowed)
          --connect-timeout SECONDS for the connection and TLS handshake (default 30)
          --max-redirs N            redirects to follow (default 10; 0 returns the 3xx)
        output:
          -o, --output FILE         write the body to FILE (a progress bar on a terminal)
          --compressed              ask for a compressed response (Accept-Encoding) and decode it; without
                                    it the body is written as received, as curl does (decoded bodies are
                                    bounded: HTTPSessionConfiguration.maximumDecodedBodySize, 1 GiB)
          -v, --verbose             the request and response lines and the trust decision on stderr, as curl's
                                    (> request, < response, * notes; credentials shown as [redacted])
          -i, --include             the response's status line and fields on stdout before the body
          -I, --head                a HEAD request; its status line and fields on stdout
          --json                    print status, headers, timing, TLS version and the decision (and an https
                                    proxy's, proxyDecision) as JSON
          -V, --version             print the versions of servertrust, libcurl and OpenSSL
          -s, -S, -f, -L            accepted for curl's sake (-fsSL): no progress bar; the rest is what get
                                    always does (errors shown, exit 3 for HTTP >= 400, redirects followed)

        exit codes: 0 2xx/3xx, 1 trust rejected, 2 bad input, 3 HTTP status >= 400, 4 other network or TLS failure
        (curl's 60 and 90 are our 1; its 58 and 77, a bad --cert or --cacert, our 2; its 7, 28, 35, 56 our 4)
        """

    static let httpError: Int32 = 3
    static let networkError: Int32 = 4

    struct Arguments {
        var url: String?
        var values: [String: [String]] = [:]
        var flags: Set<String> = []
        /// How the user spelled each option, by its canonical name (`-m` for `--timeout`), for
        /// messages.
        var spellings: [String: String] = [:]

        /// Where the values of ``SecretArguments/options`` sit.
        var secretPositions: [SecretArguments.Position] = []

        func value(_ name: String) -> String? { values[name]?.last }
        func all(_ name: String) -> [String] { values[name] ?? [] }
        func spelling(_ name: String) -> String { spellings[name] ?? name }
    }

    /// Every value option by its spellings: curl's short and long forms map to one name.
    static let valueOptions: [String: String] = [
        "-X": "--request", "--request": "--request", "-d": "--data", "--data": "--data", "-T": "--upload-file", "--upload-file": "--upload-file",
        "-F": "--form", "--form": "--form", "-H": "--header", "--header": "--header",
        "-u": "--user", "--user": "--user", "--user-password": "--user-password", "-o": "--output", "--output": "--output",
        "-E": "--cert", "--cert": "--cert", "--cert-type": "--cert-type", "--key": "--key",
        "--pass": "--pass", "--resolve": "--resolve",
        // curl's -m/--max-time is our --timeout: "Maximum time in seconds that you allow each
        // transfer to take" (fractions allowed, as curl allows them).
        "--timeout": "--timeout", "-m": "--timeout", "--max-time": "--timeout",
        "--connect-timeout": "--connect-timeout", "--max-redirs": "--max-redirs",
    ].merging(TrustOptions.valueNames.union(ProxyOptions.names).map { ($0, $0) }) { first, _ in first }
    /// Every flag by its spellings (curl's `-k` is `--insecure`, `-V` is `--version`).
    ///
    /// curl's `-s`, `-S`, `-f` and `-L` (as in `curl -fsSL`) are accepted because what they ask
    /// for is what `get` does anyway: `--silent` hides the progress bar (the only meter here),
    /// errors are always shown (`--show-error`), an HTTP status >= 400 always exits non-zero
    /// (`--fail`; 3 where curl's is 22), and redirects are always followed up to
    /// `--max-redirs` (`--location`).
    static let flagOptions: [String: String] = [
        "--json": "--json", "--help": "--help", "-k": "--insecure", "--version": "--version", "-V": "--version",
        "-s": "--silent", "--silent": "--silent", "-S": "--show-error", "--show-error": "--show-error",
        "-f": "--fail", "--fail": "--fail", "-L": "--location", "--location": "--location",
        "--compressed": "--compressed", "-v": "--verbose", "--verbose": "--verbose", "-i": "--include", "--include": "--include",
        "-I": "--head", "--head": "--head",
    ].merging(TrustOptions.flagNames.map { ($0, $0) }) { first, _ in first }

    /// curl's bundled one-letter flags (`-fsSL`, `-sk`), split into their letters: only
    /// flags bundle, so a value option inside a bundle is an unknown option, as are letters
    /// that are no flag.
    static func unbundled(_ argument: String) -> [String]? {
        guard argument.count > 2, argument.hasPrefix("-"), !argument.hasPrefix("--") else { return nil }
        let letters = argument.dropFirst().map { "-\($0)" }
        return letters.allSatisfy { flagOptions[$0] != nil } ? letters : nil
    }

    static func parse(_ arguments: [String]) throws -> Arguments {
        var parsed = Arguments()
        var index = 0
        while index < arguments.count {
            var argument = arguments[index]
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                inline = String(argument[argument.index(after: equals)...])
                argument = String(argument[..<equals])
            }
            if let name = valueOptions[argument] {
                let value: String
                if let inline {
                    value = inline
                    if SecretArguments.options.contains(name) { parsed.secretPositions.append(.init(argument: index, offset: argument.utf8.count + 1)) }
                } else {
                    index += 1
                    guard index < arguments.count else { throw CLIError("\(argument) needs a value") }
                    value = arguments[index]
                    if SecretArguments.options.contains(name) { parsed.secretPositions.append(.init(argument: index, offset: 0)) }
                }
                parsed.values[name, default: []].append(value)
                parsed.spellings[name] = argument
            } else if let name = flagOptions[argument], inline == nil {
                parsed.flags.insert(name)
                parsed.spellings[name] = argument
            } else if let letters = unbundled(argument) {
                for letter in letters {
                    parsed.flags.insert(flagOptions[letter] ?? letter)
                    parsed.spellings[flagOptions[letter] ?? letter] = letter
                }
            } else if argument.hasPrefix("-") && argument.count > 1 {
                throw CLIError("unknown option \(argument)")
            } else {
                guard parsed.url == nil else { throw CLIError("more than one URL ('\(parsed.url!)', '\(argument)')") }
                parsed.url = argument
            }
            index += 1
        }
        // curl pairs each -o and -T with a URL of its own ("Got more output options than URLs"
        // is a warning there, and the extra file goes unused); `get` takes one URL, so a second
        // file would silently win or be dropped: it is bad input.
        for name in ["--output", "--upload-file"] where parsed.all(name).count > 1 {
            throw CLIError(
                "\(parsed.spelling(name)) is given \(parsed.all(name).count) times; get takes one URL and one \(name == "--output" ? "output" : "upload") file")
        }
        return parsed
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try parse(arguments)
        SecretArguments.blank(parsed.secretPositions, in: arguments)
        if parsed.flags.contains("--help") {
            print(usage)
            return ExitCode.success
        }
        if parsed.flags.contains("--version") {
            print(ProgramVersion.text)
            return ExitCode.success
        }
        guard let url = parsed.url else { throw CLIError("a URL is required (try 'servertrust get --help')") }
        let reporter = reportPoster(parsed)
        let (configuration, request) = try build(parsed, url: url, reporter: reporter)
        let session: HTTPSession
        do {
            session = try HTTPSession(configuration: configuration)
        } catch {
            throw CLIError("\(error)")
        }
        defer { session.invalidate() }
        let json = parsed.flags.contains("--json")
        let verbose = parsed.flags.contains("--verbose")
        // -i, and -I (a HEAD), print the response head on stdout before the body, as curl does.
        let includeHead = parsed.flags.contains("--include") || parsed.flags.contains("--head")
        if includeHead && (json || parsed.value("--output") != nil) {
            throw CLIError(
                "\(parsed.spelling(parsed.flags.contains("--head") ? "--head" : "--include")) prints the head on stdout: it cannot be combined with --json or -o"
            )
        }
        if verbose {
            let lines = CurlOutput.requestLines(request, defaults: configuration.defaultHeaders, hasCredential: request.credential != nil)
            Console.writeStderr(lines.joined(separator: "\n"))
        }
        // Without -o or --json the body goes to stdout as it arrives, never held whole in memory
        // (as curl writes it); --json holds it (it is part of the object), within the body limit.
        let streamsToStdout = !json && parsed.value("--output") == nil
        let result = Blocking.run { () -> Result<HTTPResponse, HTTPError> in
            do throws(HTTPError) {
                guard streamsToStdout else { return .success(try await session.send(request)) }
                let streamed = try await session.stream(request)
                if verbose { Console.writeStderr(CurlOutput.responseLines(streamed.head).joined(separator: "\n")) }
                if includeHead { Console.writeStdout(CurlOutput.responseHead(streamed.head)) }
                var iterator = streamed.body.makeAsyncIterator()
                do {
                    while let chunk = try await iterator.next() { writeBytes(chunk) }
                } catch let error as HTTPError {
                    return .failure(error)
                } catch {
                    return .failure(.cancelled)
                }
                return .success(streamed.head)
            } catch {
                return .failure(error)
            }
        }
        if let reporter, !Blocking.run({ await reporter.waitUntilIdle(timeout: 10) }) {
            Console.writeStderr("servertrust: get: \(reporter.pendingUploads) pin-failure report(s) still unsent after 10 s")
        }
        switch result {
        case .success(let response):
            if parsed.value("--output") != nil && isatty(2) != 0 && !parsed.flags.contains("--silent") { Console.writeStderr("") }
            if verbose && !streamsToStdout { Console.writeStderr(CurlOutput.responseLines(response).joined(separator: "\n")) }
            if json {
                Console.writeStdout(responseJSON(response, includeBody: parsed.value("--output") == nil, outputPath: parsed.value("--output")).rendered + "\n")
            }
            if response.statusCode >= 400 {
                Console.writeStderr("servertrust: get: HTTP \(response.statusCode) from \(response.url)")
                return httpError
            }
            return ExitCode.success
        case .failure(let error):
            if json { Console.writeStdout(errorJSON(error).rendered + "\n") }
            Console.writeStderr("servertrust: get: \(Console.oneLine(UserMessages.describe(error)))")
            if case .serverTrustRejected(let decision) = error {
                Console.writeStderr(decision.explanation)
            }
            switch error {
            case .serverTrustRejected, .proxyTrustRejected: return ExitCode.rejected
            case .invalidURL, .invalidRequest: return ExitCode.badInput
            case .fileError(let path, _) where path == parsed.value("--output") || path == parsed.value("--upload-file"):
                return ExitCode.badInput
            default: return networkError
            }
        }
    }

    // MARK: - Building the session and the request

    static func build(_ parsed: Arguments, url: String, reporter: (any PinFailureReporter)? = nil) throws -> (HTTPSessionConfiguration, HTTPRequest) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = components.host, !host.isEmpty
        else {
            throw CLIError("'\(url)' is not an http or https URL")
        }
        let trustOptions = TrustOptions(values: parsed.values, flags: parsed.flags)
        var configuration = HTTPSessionConfiguration(serverTrust: try trustOptions.decider(host: host, alwaysPolicy: false, reporter: reporter))
        // curl's default: no Accept-Encoding, and the body written as it was received (a
        // server that sends gzip anyway gets its gzip written, not expanded); --compressed
        // asks for and decodes it, within the library's bound on decoded bodies.
        configuration.acceptsCompressedResponses = parsed.flags.contains("--compressed")
        // Certificate Transparency in report mode (--ct report, or a policy file's) says what it
        // would have refused, on stderr.
        if parsed.value("--ct") != nil || parsed.value("--policy") != nil { configuration.eventMonitors.append(ReportedViolationPrinter()) }
        configuration.resolve = parsed.all("--resolve")
        for entry in configuration.resolve {
            let parts = entry.split(separator: ":", maxSplits: 2)
            guard parts.count == 3, Int(parts[1]) != nil else { throw CLIError("--resolve '\(entry)' is not HOST:PORT:ADDRESS") }
        }
        if let timeout = try seconds(parsed, "--timeout") { configuration.timeout = timeout }
        // curl's --connect-timeout: "Maximum time in seconds that you allow curl's connection
        // to take. This only limits the connection phase", the TLS handshake included.
        if let timeout = try seconds(parsed, "--connect-timeout") { configuration.connectTimeout = timeout }
        if let redirects = parsed.value("--max-redirs") {
            guard let count = Int(redirects), count >= 0 else { throw CLIError("--max-redirs must be a non-negative integer") }
            configuration.maximumRedirects = count
        }
        configuration.proxy = try ProxyOptions.configuration(
            url: parsed.value("--proxy"), user: parsed.value("--proxy-user"),
            userPassword: parsed.value("--proxy-user-password"),
            caCertificates: parsed.all("--proxy-cacert"))
        let client = ClientCertificateOptions(
            certificate: parsed.value("--cert"), type: parsed.value("--cert-type"),
            key: parsed.value("--key"), pass: parsed.value("--pass"))
        if let identity = try client.identity() { configuration.clientIdentities[host.lowercased()] = identity }

        var request = HTTPRequest(.get, url)
        let data = parsed.all("--data")
        if !data.isEmpty {
            var parts: [[UInt8]] = []
            for item in data {
                if item.hasPrefix("@") { parts.append(try InputFile.read(String(item.dropFirst()))) } else { parts.append(Array(item.utf8)) }
            }
            request.body = Array(parts.joined(separator: [UInt8(ascii: "&")]))
            request.method = .post
            request.headers["Content-Type"] = "application/x-www-form-urlencoded"
        }
        let fields = parsed.all("--form")
        if !fields.isEmpty {
            guard data.isEmpty, parsed.value("--upload-file") == nil else { throw CLIError("-F cannot be combined with -d or -T (one body)") }
            request = try MultipartRequestSerializer().serialize(request, with: try form(fields))
            request.method = .post
        }
        if let upload = parsed.value("--upload-file") {
            guard data.isEmpty else { throw CLIError("-T and -d cannot be combined (one body)") }
            // Streamed from the file as it is sent (curl's -T, a PUT unless -X says otherwise).
            request.bodyFilePath = upload
            request.method = .put
        }
        if parsed.flags.contains("--head") {
            // A HEAD request has no body (RFC 9110 §9.3.2): the data would be dropped unsent.
            // curl refuses the pair too ("You can only select one HTTP request method!").
            guard data.isEmpty, fields.isEmpty, parsed.value("--upload-file") == nil else {
                throw CLIError("\(parsed.spelling("--head")) cannot be combined with -d, -F or -T (a HEAD request has no body)")
            }
            request.method = .head
        }
        if let method = parsed.value("--request") {
            guard !method.isEmpty, method.allSatisfy({ $0.isLetter }) else { throw CLIError("-X '\(method)' is not a method") }
            request.method = HTTPMethod(rawValue: method.uppercased())
        }
        for header in parsed.all("--header") {
            guard let colon = header.firstIndex(of: ":"), colon != header.startIndex else {
                throw CLIError("-H '\(header)' is not 'Name: value'")
            }
            let name = String(header[..<colon])
            let value = header[header.index(after: colon)...].drop { $0 == " " }
            request.headers[name] = String(value)
        }
        if let user = parsed.value("--user") {
            let (name, password) = try PasswordSource.credentials(
                user, option: parsed.spelling("--user"), passwordSource: parsed.value("--user-password"),
                sourceOption: "--user-password")
            request.credential = .user(name, password: password, persistence: .none)
            request.sendsCredentialPreemptively = true
        } else if parsed.value("--user-password") != nil {
            throw CLIError("--user-password needs -u USER")
        }
        if let output = parsed.value("--output") {
            request.destinationPath = output
            if isatty(2) != 0 && !parsed.flags.contains("--silent") {
                request.downloadProgress = { progress in
                    guard let total = progress.total, total > 1_000_000 else { return }
                    let fraction = Double(progress.completed) / Double(total)
                    let filled = Int(fraction * 40)
                    Console.writeProgress(
                        "\r[" + String(repeating: "#", count: filled) + String(repeating: " ", count: 40 - filled)
                            + "] \(Int(fraction * 100))% \(progress.completed / 1024) KiB")
                }
            }
        }
        return (configuration, request)
    }

    /// A positive number of seconds (curl takes fractions: `-m 0.5`), or `nil` when absent.
    static func seconds(_ parsed: Arguments, _ name: String) throws -> Double? {
        guard let text = parsed.value(name) else { return nil }
        guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
            throw CLIError("\(parsed.spelling(name)) must be a positive number of seconds, got '\(text)'")
        }
        return seconds
    }

    /// curl's `-F` fields: `NAME=VALUE`, or `NAME=@FILE[;type=MIME]` for a file part (its file
    /// checked now, read while the request is sent).
    static func form(_ fields: [String]) throws -> MultipartFormData {
        var form = MultipartFormData()
        for field in fields {
            guard let equals = field.firstIndex(of: "="), equals != field.startIndex else {
                throw CLIError("-F '\(field)' is not NAME=VALUE or NAME=@FILE")
            }
            let name = String(field[..<equals])
            let value = field[field.index(after: equals)...]
            guard value.hasPrefix("@") else {
                form.append(name: name, value: String(value))
                continue
            }
            var path = String(value.dropFirst())
            var contentType = "application/octet-stream"
            if let marker = path.range(of: ";type=") {
                contentType = String(path[marker.upperBound...])
                path = String(path[..<marker.lowerBound])
                guard contentType.contains("/") else { throw CLIError("-F '\(field)': type '\(contentType)' is not a media type") }
            }
            do {
                try form.appendFile(name: name, path: path, contentType: contentType)
            } catch {
                throw CLIError("-F \(name): \(error)")
            }
        }
        return form
    }

    /// With `--policy`: the poster of pin-failure reports, through its own session on the system
    /// roots (never the policy's pins), with the `--resolve` entries. It makes no connection
    /// unless a report is sent; each outcome is one line on stderr.
    static func reportPoster(_ parsed: Arguments) -> HTTPPinFailureReporter? {
        guard parsed.value("--policy") != nil else { return nil }
        return HTTPPinFailureReporter(resolve: parsed.all("--resolve"), timeout: 10) { delivery in
            switch delivery.result {
            case .success(let status):
                Console.writeStderr("servertrust: get: pin-failure report for \(delivery.report.hostname) sent to \(delivery.reportURI): HTTP \(status)")
            case .failure(let error):
                Console.writeStderr("servertrust: get: pin-failure report for \(delivery.report.hostname) not sent to \(delivery.reportURI): \(error)")
            }
        }
    }

    // MARK: - Output

    static func decisionJSON(_ decision: TrustDecision) -> JSON {
        var pairs: [(String, JSON)] = [
            ("verdict", .string(decision.verdict.rawValue)),
            ("evaluator", .string(decision.evaluator)),
            ("reason", .string(decision.reason)),
            ("host", decision.host.map(JSON.string) ?? .null),
            ("port", .int(decision.port)),
            ("fromEarlierHandshake", .bool(decision.isFromEarlierHandshake)),
            (
                "servedChain",
                .array(
                    decision.servedChain.map { certificate in
                        .object([
                            ("subject", .string(certificate.subject.rfc4514)), ("issuer", .string(certificate.issuer.rfc4514)),
                            ("spkiSHA256", .string(certificate.spkiSHA256Base64)),
                        ])
                    })
            ),
        ]
        if decision.isTrusted { pairs.append(("checked", .string(CurlOutput.checked(decision)))) }
        // What the whole-path checks found (revocation: what settled each certificate).
        if let findings = decision.record.validatedPath?.findings, !findings.isEmpty {
            pairs.append(("pathChecks", .array(findings.map { .string($0.description) })))
        }
        if !decision.record.notes.isEmpty { pairs.append(("notes", .array(decision.record.notes.map(JSON.string)))) }
        if let failure = decision.validationFailure { pairs.append(("failureKind", .string(failure.kind.rawValue))) }
        if let verified = decision.verifiedChain { pairs.append(("verifiedChain", .array(verified.map { .string($0.subject.rfc4514) }))) }
        return .object(pairs)
    }

    /// - Parameter outputPath: with `-o`, the body went to this file, so its size is reported.
    /// Size of a file in bytes (0 if it cannot be read).
    static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    static func responseJSON(_ response: HTTPResponse, includeBody: Bool, outputPath: String? = nil) -> JSON {
        var pairs: [(String, JSON)] = [
            ("url", .string(response.url)),
            ("status", .int(response.statusCode)),
            ("httpVersion", .string(response.httpVersion)),
            ("tlsVersion", response.tlsVersion.map(JSON.string) ?? .null),
            ("tlsSessionResumed", .bool(response.tlsSessionResumed)),
            ("headers", .array(response.headers.fields.map { .array([.string($0.name), .string($0.value)]) })),
            (
                "timing",
                .object([
                    ("nameLookup", .double(response.timing.nameLookup)), ("connect", .double(response.timing.connect)),
                    ("tlsHandshake", .double(response.timing.tlsHandshake)), ("firstByte", .double(response.timing.firstByte)),
                    ("total", .double(response.timing.total)),
                ])
            ),
            ("redirects", .array(response.redirects.map { .object([("status", .int($0.statusCode)), ("location", .string($0.location))]) })),
            ("decision", response.trustDecision.map(decisionJSON) ?? .null),
            ("proxyDecision", response.proxyTrustDecision.map(decisionJSON) ?? .null),
            ("bodyBytes", .int(outputPath.map(fileSize) ?? response.body.count)),
        ]
        if includeBody { pairs.append(("body", .string(response.text))) }
        return .object(pairs)
    }

    static func errorJSON(_ error: HTTPError) -> JSON {
        var pairs: [(String, JSON)] = [("error", .string("\(error)"))]
        if case .serverTrustRejected(let decision) = error { pairs.append(("decision", decisionJSON(decision))) }
        if case .proxyTrustRejected(let decision) = error { pairs.append(("proxyDecision", decisionJSON(decision))) }
        return .object(pairs)
    }

    static func writeBytes(_ bytes: [UInt8]) {
        var rest = bytes[...]
        while !rest.isEmpty {
            let written = rest.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            rest = rest.dropFirst(written)
        }
    }
}
