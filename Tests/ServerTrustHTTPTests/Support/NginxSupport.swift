import CertificateParsing
import Foundation
import ServerTrustLab
import Synchronization
import TrustEvaluation

#if canImport(Glibc)
    import Glibc
#endif

// Support for the integration tests against real servers (nginx, mitmdump): finding the
// tools, free loopback ports, processes that are always stopped, and an nginx instance with a
// generated PKI.

/// The external tools the integration tests use, and whether their absence is a failure.
///
/// On a developer machine without nginx or mitmdump the integration suites are disabled; with
/// `SERVERTRUST_REQUIRE_INTEGRATION=1` (what `.ci/run` exports) they always run, and a missing
/// tool fails them.
enum IntegrationTools {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// `SERVERTRUST_REQUIRE_INTEGRATION=1`: a missing tool is a test failure, not a skip.
    static var isRequired: Bool { environment["SERVERTRUST_REQUIRE_INTEGRATION"] == "1" }

    /// `SERVERTRUST_NGINX`, else `/usr/sbin/nginx` (Debian's `nginx-light`), else `nginx` on `PATH`.
    static var nginx: String? {
        executable(environment["SERVERTRUST_NGINX"], candidates: ["/usr/sbin/nginx"], name: "nginx")
    }

    /// The echo module of Debian's `libnginx-mod-http-echo`, for responses of unknown length.
    static var nginxEchoModule: String? {
        let path = environment["SERVERTRUST_NGINX_ECHO_MODULE"] ?? "/usr/lib/nginx/modules/ngx_http_echo_module.so"
        return FileManager.default.isReadableFile(atPath: path) ? path : nil
    }

    /// `SERVERTRUST_MITMDUMP`, else the venv `.ci/run` makes (`~/.cache/servertrust-venv`), else `PATH`.
    static var mitmdump: String? {
        let home = environment["HOME"] ?? NSHomeDirectory()
        return executable(environment["SERVERTRUST_MITMDUMP"], candidates: [home + "/.cache/servertrust-venv/bin/mitmdump"], name: "mitmdump")
    }

    /// `SERVERTRUST_SWIFT`, else `swift` on `PATH`: the toolchain that builds the example package.
    static var swift: String? { executable(environment["SERVERTRUST_SWIFT"], candidates: [], name: "swift") }

    /// `openssl`, for the htpasswd hash.
    static var openssl: String? { executable(nil, candidates: ["/usr/bin/openssl"], name: "openssl") }

    /// Whether the nginx suite runs: nginx is installed, or the environment requires it.
    static var nginxSuiteEnabled: Bool { isRequired || nginx != nil }
    /// Whether the mitmproxy suite runs: nginx and mitmdump are installed, or the environment requires them.
    static var mitmproxySuiteEnabled: Bool { isRequired || (nginx != nil && mitmdump != nil) }

    /// The path of a required tool, or an error naming how to get it.
    static func require(_ path: String?, _ name: String, install: String) throws -> String {
        guard let path else {
            throw IntegrationError(
                "\(name) not found (\(install))"
                    + (isRequired ? "; SERVERTRUST_REQUIRE_INTEGRATION=1 makes this a failure" : ""))
        }
        return path
    }

    private static func executable(_ override: String?, candidates: [String], name: String) -> String? {
        if let override, !override.isEmpty {
            return FileManager.default.isExecutableFile(atPath: override) ? override : nil
        }
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        for directory in (environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// A setup failure of an integration test (missing tool, a server that would not start).
struct IntegrationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Free TCP ports on 127.0.0.1, found by binding port 0 and releasing the socket.
enum LoopbackPorts {
    /// `count` distinct ports the kernel just handed out. They are free when this returns; a
    /// server started on them may still lose a race for one (start-up retries with new ports).
    static func reserve(_ count: Int) throws -> [UInt16] {
        var sockets: [Int32] = []
        defer { for socket in sockets { close(socket) } }
        var ports: [UInt16] = []
        for _ in 0..<count {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw IntegrationError("socket(): errno \(errno)") }
            sockets.append(descriptor)
            var address = loopback(port: 0)
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw IntegrationError("bind(127.0.0.1:0): errno \(errno)") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            guard named == 0 else { throw IntegrationError("getsockname(): errno \(errno)") }
            ports.append(UInt16(bigEndian: address.sin_port))
        }
        return ports
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func isListening(_ port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return connected == 0
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

/// A child process the test started, with its output in a file; ``stop()`` ends exactly that
/// process (SIGTERM, then SIGKILL after a grace period) and reaps it. Dropping the last
/// reference stops it too, so a failing test never leaves it running.
///
/// Spawned by ``LabChildProcess``, not Foundation's `Process`: an nginx or mitmdump lives for
/// a whole test, and with `Process` it could inherit a descriptor another thread opened at the
/// same moment (another child's termination socket, a client's output pipe), whose owner then
/// waited forever.
final class ManagedProcess: Sendable {
    /// What the process was started as, for messages.
    let name: String
    /// The file receiving its stdout and stderr.
    let outputPath: String
    /// Its process id.
    var pid: Int32 { child.pid }
    private let child: LabChildProcess

    /// Starts `executable` with `arguments`, stdin from /dev/null, output to `outputPath`.
    init(name: String, executable: String, arguments: [String], environment: [String: String] = [:], outputPath: String) throws {
        child = try LabChildProcess(executable, arguments, adding: environment, stdoutPath: outputPath, stderrPath: outputPath)
        self.name = name
        self.outputPath = outputPath
    }

    deinit { stop() }

    /// Whether it has not exited yet.
    var isRunning: Bool { child.isRunning }

    /// What it wrote so far.
    var output: String {
        String(decoding: FileManager.default.contents(atPath: outputPath) ?? Data(), as: UTF8.self)
    }

    /// Sends SIGTERM (SIGKILL after `grace` seconds) to this process only, and waits for it;
    /// its exit status. Once it has exited, later calls return the same status at once.
    @discardableResult
    func stop(grace: Double = 10) -> Int32 {
        child.stop(grace: .milliseconds(Int64(grace * 1000)))
    }

    /// Polls `ready` until it holds (`true`), the process exits or `timeout` passes (`false`).
    func wait(timeout: Double, until ready: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if ready() { return true }
            if !isRunning { return false }
            usleep(20_000)
        }
        return ready()
    }
}

// MARK: - nginx

/// One nginx master process (`daemon off`, its own prefix, pid file and logs) serving the
/// `server` blocks it was started with on 127.0.0.1, on ports picked by binding port 0.
final class NginxInstance: Sendable {
    /// The prefix directory: `nginx.conf`, `nginx.pid`, `logs/`, `tmp/`.
    let prefix: String
    /// The ports handed to the server blocks, in order.
    let ports: [UInt16]
    let process: ManagedProcess

    /// Writes `nginx.conf` for `serverBlocks(ports)` and starts nginx, retrying with new ports
    /// when one was taken in between.
    ///
    /// - Parameters:
    ///   - prefix: An existing directory.
    ///   - portCount: How many ports the blocks need.
    ///   - serverBlocks: The `server { … }` blocks for the given ports.
    static func start(prefix: String, portCount: Int, serverBlocks: ([UInt16]) -> String) throws -> NginxInstance {
        let nginx = try IntegrationTools.require(IntegrationTools.nginx, "nginx", install: "apt-get install nginx-light")
        for directory in ["logs", "tmp"] {
            try FileManager.default.createDirectory(atPath: prefix + "/" + directory, withIntermediateDirectories: true)
        }
        var lastFailure = ""
        for attempt in 1...5 {
            let ports = try LoopbackPorts.reserve(portCount)
            let configuration = header(prefix: prefix) + serverBlocks(ports) + "}\n"
            try Data(configuration.utf8).write(to: URL(fileURLWithPath: prefix + "/nginx.conf"))
            try? FileManager.default.removeItem(atPath: prefix + "/nginx.pid")
            let process = try ManagedProcess(
                name: "nginx", executable: nginx,
                arguments: ["-p", prefix + "/", "-c", prefix + "/nginx.conf", "-e", prefix + "/logs/error.log"],
                outputPath: prefix + "/logs/nginx.out")
            // nginx writes its pid file after binding every listening socket.
            let ready = process.wait(timeout: 60) {
                guard let text = try? String(contentsOfFile: prefix + "/nginx.pid", encoding: .utf8),
                    Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) == process.pid
                else { return false }
                return ports.allSatisfy(LoopbackPorts.isListening)
            }
            if ready { return NginxInstance(prefix: prefix, ports: ports, process: process) }
            process.stop()
            let errors = (try? String(contentsOfFile: prefix + "/logs/error.log", encoding: .utf8)) ?? ""
            lastFailure = errors + process.output
            guard lastFailure.contains("Address already in use"), attempt < 5 else { break }
        }
        throw IntegrationError("nginx did not start:\n\(lastFailure)")
    }

    private init(prefix: String, ports: [UInt16], process: ManagedProcess) {
        self.prefix = prefix
        self.ports = ports
        self.process = process
    }

    /// Everything up to the `server` blocks; the caller closes the `http` block.
    private static func header(prefix: String) -> String {
        var text = ""
        if let echo = IntegrationTools.nginxEchoModule { text += "load_module \(echo);\n" }
        text += """
            daemon off;
            master_process on;
            worker_processes 1;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/logs/error.log notice;

            """
        // As root, workers would run as `nobody`; keep them as the test's user.
        if getuid() == 0 { text += "user root root;\n" }
        text += """
            events { worker_connections 1024; }
            http {
                types { text/plain txt; text/html html; application/json json; }
                default_type application/octet-stream;
                log_format servertrust '$connection $connection_requests $ssl_protocol "$request" $status "$remote_user" "$ssl_client_verify"';
                access_log \(prefix)/logs/access.log servertrust;
                client_body_temp_path \(prefix)/tmp/body;
                proxy_temp_path \(prefix)/tmp/proxy;
                fastcgi_temp_path \(prefix)/tmp/fastcgi;
                uwsgi_temp_path \(prefix)/tmp/uwsgi;
                scgi_temp_path \(prefix)/tmp/scgi;
                keepalive_requests 10000;
                keepalive_timeout 60s;
                server_tokens off;

            """
        return text
    }

    /// Stops the master process (workers end with it).
    func stop() { process.stop() }

    /// The lines of an access log written by a server block (`access_log logs/NAME.log`).
    func accessLog(_ name: String) -> [String] {
        let text = (try? String(contentsOfFile: "\(prefix)/logs/\(name).log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }
}

/// The nginx of the integration tests: a generated PKI and one nginx with a server block per
/// situation, each on its own port, and the files (anchors, client identity, pins) a client
/// needs. Every server block logs to `logs/<site>.log`, so a test can tell which requests
/// reached nginx.
final class NginxLab: Sendable {
    /// The server blocks.
    enum Site: String, CaseIterable, Sendable {
        /// The genuine chain (leaf, intermediate) for ``NginxLab/host``; Basic auth, gzip, chunked, redirect.
        case valid
        /// A certificate from the same CA for another host.
        case wrongHost = "wrong-host"
        /// The genuine host's certificate, expired yesterday.
        case expired
        /// A self-signed certificate for the host that an app pins.
        case pinnedSelfSigned = "pinned-self-signed"
        /// ``NginxLab/otherHost`` with a chain from another CA: the redirect target.
        case other
        /// The genuine chain; `ssl_verify_client on` with the client CA.
        case clientCertificate = "client-certificate"

        /// The host a client asks for on this server.
        var host: String { self == .other ? NginxLab.otherHost : NginxLab.host }
    }

    static let host = "www.nginx.test"
    static let otherHost = "other.nginx.test"
    static let user = "alice"
    static let password = "nginx secret"
    static let realm = "ServerTrust nginx"
    static let index = "hello from nginx\n"
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// Root → intermediate → leaf for ``host``; also issues the wrong-host and expired leaves.
    let pki: LabPKI
    /// Another CA, for ``otherHost``.
    let otherPKI: LabPKI
    /// The CA of client certificates (`ssl_client_certificate`).
    let clientPKI: LabPKI
    /// A client certificate from ``clientPKI``'s intermediate (EKU clientAuth).
    let clientLeaf: LabCertificate
    /// The self-signed certificate of ``Site/pinnedSelfSigned``.
    let selfSigned: LabCertificate
    /// The working directory (nginx prefix, certificates, keys, documents).
    let directory: String
    /// The large text file served with gzip.
    let largeText: String
    let nginx: NginxInstance

    /// Generates everything and starts nginx. Call ``stop()`` (in a `defer`) when done.
    init() throws {
        let now = Self.now
        let day = LabClock.day
        let directory = NSTemporaryDirectory() + "servertrust-nginx-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/html/private", withIntermediateDirectories: true)
        self.directory = directory
        do {
            pki = try LabPKI.webChain(host: Self.host, leafNotBefore: now - day, leafNotAfter: now + 30 * day, keySlot: 60)
            otherPKI = try LabPKI.webChain(
                host: Self.otherHost, algorithm: .p384, leafNotBefore: now - day,
                leafNotAfter: now + 30 * day, keySlot: 61)
            clientPKI = try LabPKI.webChain(host: "client.nginx.test", leafNotBefore: now - day, leafNotAfter: now + 30 * day, keySlot: 62)
            clientLeaf = try LabCertificate.issue(
                LabCertificateSpec(
                    subject: LabName([("O", "ServerTrust Lab"), ("CN", "nginx client")]), notBefore: now - day, notAfter: now + 30 * day,
                    extensions: [
                        .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["clientAuth"]),
                        .subjectKeyIdentifier(), .authorityKeyIdentifier(),
                    ]),
                subjectKey: clientPKI.leafKey, issuer: clientPKI.intermediateIssuer)
            let selfSignedKey = try LabKey.shared(.p256, slot: 3 * 63)
            selfSigned = try LabCertificate.issue(
                LabPKI.leafSpec(host: Self.host, keyAlgorithm: .p256, notBefore: now - day, notAfter: now + 365 * day), subjectKey: selfSignedKey)
            let wrongHostLeaf = try pki.issueLeaf(host: "wrong.nginx.test", notBefore: now - day, notAfter: now + 30 * day)
            let expiredLeaf = try pki.issueLeaf(host: Self.host, notBefore: now - 60 * day, notAfter: now - day)

            // Certificates and keys in nginx's form: chain files leaf first.
            let key = try LabFiles.write(try pki.leafKey.privateKeyPEM(), to: directory + "/leaf.key")
            let chains: [Site: (chain: String, key: String)] = [
                .valid: (try LabFiles.writeBundle(pki.serverChain, to: directory + "/valid.pem"), key),
                .wrongHost: (try LabFiles.writeBundle([wrongHostLeaf, pki.intermediate], to: directory + "/wrong-host.pem"), key),
                .expired: (try LabFiles.writeBundle([expiredLeaf, pki.intermediate], to: directory + "/expired.pem"), key),
                .pinnedSelfSigned: (
                    try LabFiles.writeBundle([selfSigned], to: directory + "/self-signed.pem"),
                    try LabFiles.write(try selfSignedKey.privateKeyPEM(), to: directory + "/self-signed.key")
                ),
                .other: (
                    try LabFiles.writeBundle(otherPKI.serverChain, to: directory + "/other.pem"),
                    try LabFiles.write(try otherPKI.leafKey.privateKeyPEM(), to: directory + "/other.key")
                ),
                .clientCertificate: (directory + "/valid.pem", key),
            ]
            let clientCA = try LabFiles.write(clientPKI.root.pem, to: directory + "/client-ca.pem")
            _ = try LabFiles.write(pki.root.pem, to: directory + "/root.pem")
            _ = try LabFiles.write(otherPKI.root.pem, to: directory + "/other-root.pem")
            _ = try LabFiles.write(selfSigned.pem, to: directory + "/pinned.pem")
            _ = try LabFiles.write(LabPEM.bundle([clientLeaf, clientPKI.intermediate]), to: directory + "/client.pem")
            _ = try LabFiles.write(try clientPKI.leafKey.privateKeyPEM(), to: directory + "/client.key")

            // Documents: an index, a protected page, a large text for gzip.
            var large = ""
            for line in 0..<20_000 { large += "line \(line): the quick brown fox jumps over the lazy dog\n" }
            largeText = large
            try Data(Self.index.utf8).write(to: URL(fileURLWithPath: directory + "/html/index.txt"))
            try Data("welcome to the private area\n".utf8).write(to: URL(fileURLWithPath: directory + "/html/private/index.txt"))
            try Data(large.utf8).write(to: URL(fileURLWithPath: directory + "/html/large.txt"))
            try Data("start <!--# echo var=\"ssl_protocol\" --> end\n".utf8).write(to: URL(fileURLWithPath: directory + "/html/chunked.html"))
            try Data("\(Self.user):\(try Self.apr1(Self.password))\n".utf8).write(to: URL(fileURLWithPath: directory + "/htpasswd"))

            nginx = try NginxInstance.start(prefix: directory, portCount: Site.allCases.count) { ports in
                var blocks = ""
                for (site, port) in zip(Site.allCases, ports) {
                    guard let files = chains[site] else { continue }
                    blocks += Self.serverBlock(
                        site, port: port, chain: files.chain, key: files.key, ports: ports,
                        directory: directory, clientCA: clientCA)
                }
                return blocks
            }
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// One `server` block.
    private static func serverBlock(
        _ site: Site, port: UInt16, chain: String, key: String, ports: [UInt16],
        directory: String, clientCA: String
    ) -> String {
        let otherPort = ports[Site.allCases.firstIndex(of: .other) ?? 0]
        var block = """
                server {
                    listen 127.0.0.1:\(port) ssl;
                    server_name \(site.host);
                    ssl_certificate \(chain);
                    ssl_certificate_key \(key);
                    ssl_protocols TLSv1.2 TLSv1.3;
                    root \(directory)/html;
                    index index.txt;
                    access_log \(directory)/logs/\(site.rawValue).log servertrust;

            """
        switch site {
        case .valid:
            // Chunked: a response of unknown length (the echo module when installed, else SSI).
            let chunked =
                IntegrationTools.nginxEchoModule != nil
                ? "location = /chunked { default_type text/plain; chunked_transfer_encoding on; echo \"first chunk\"; echo_flush; echo_sleep 0.05; echo \"second chunk\"; }"
                : "location = /chunked { default_type text/plain; chunked_transfer_encoding on; ssi on; ssi_types *; try_files /chunked.html =404; }"
            block += """
                        location /private/ { auth_basic "\(realm)"; auth_basic_user_file \(directory)/htpasswd; }
                        location = /large.txt { gzip on; gzip_types *; gzip_min_length 1024; gzip_comp_level 6; }
                        \(chunked)
                        location = /redirect { return 302 https://\(otherHost):\(otherPort)/landing?from=www; }
                        location = /item { default_type text/plain; return 200 "item $arg_n\\n"; }

                """
        case .other:
            block += """
                        location = /landing { default_type text/plain; return 200 "landed on \(otherHost) $args authorization=[$http_authorization]\\n"; }

                """
        case .clientCertificate:
            block += """
                        ssl_client_certificate \(clientCA);
                        ssl_verify_client on;
                        ssl_verify_depth 2;
                        location = /whoami { default_type text/plain; return 200 "client $ssl_client_s_dn verify=$ssl_client_verify\\n"; }

                """
        case .wrongHost, .expired, .pinnedSelfSigned:
            break
        }
        return block + "        }\n"
    }

    /// An Apache MD5 (`$apr1$`) hash, as `htpasswd` writes it (nginx also reads `{PLAIN}`,
    /// crypt and SHA forms).
    static func apr1(_ password: String) throws -> String {
        let openssl = try IntegrationTools.require(IntegrationTools.openssl, "openssl", install: "apt-get install openssl")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = ["passwd", "-apr1", password]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let hash = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, hash.hasPrefix("$apr1$") else { throw IntegrationError("openssl passwd -apr1 failed: \(hash)") }
        return hash
    }

    /// Generates everything and starts nginx, off the cooperative pool.
    static func started() async throws -> NginxLab { try await offPool { try NginxLab() } }

    /// Stops nginx and removes the directory.
    func stop() {
        nginx.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func port(_ site: Site) -> UInt16 { nginx.ports[Site.allCases.firstIndex(of: site) ?? 0] }

    /// `https://HOST:PORT/path` for a site.
    func url(_ site: Site, _ path: String = "/") -> String { "https://\(site.host):\(port(site))\(path)" }

    /// curl-style `--resolve` entries sending every site's host and port to 127.0.0.1.
    var resolve: [String] { Site.allCases.map { "\($0.host):\(port($0)):127.0.0.1" } }

    /// The requests nginx logged for a site (a TLS handshake that the client aborted logs none).
    func requests(_ site: Site) -> [String] { nginx.accessLog(site.rawValue) }

    /// Files written for clients.
    var rootPath: String { directory + "/root.pem" }
    var otherRootPath: String { directory + "/other-root.pem" }
    var pinnedPath: String { directory + "/pinned.pem" }
    var clientCertificatePath: String { directory + "/client.pem" }
    var clientKeyPath: String { directory + "/client.key" }

    // Parsed certificates.
    func certificate(_ lab: LabCertificate) throws -> Certificate { try Certificate(derEncoded: lab.der) }
    /// Both roots, as a client's custom anchors.
    func anchors() throws -> TrustStore {
        TrustStore([try certificate(pki.root), try certificate(otherPKI.root)], sources: ["nginx lab roots"])
    }
    /// The client identity (leaf, intermediate, key).
    func clientIdentity() throws -> Identity {
        try Identity(
            certificate: try certificate(clientLeaf), privateKey: try PrivateKey(pemEncoded: try clientPKI.leafKey.privateKeyPEM()),
            chain: [try certificate(clientPKI.intermediate)])
    }
}

/// Runs blocking work (waiting for a child process) on a thread of its own, so the few
/// threads of Swift concurrency's cooperative pool (on Linux, libdispatch's global queues,
/// as wide as the CPU count) stay free for the other tests running in parallel.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// Polls `condition` every 20 ms for up to `seconds` (log lines are written just after a
/// response goes out); returns whether it held.
func eventually(within seconds: Double = 5, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return true
}

// MARK: - The servertrust binary

/// Runs the built `servertrust` executable as a user would.
enum ServertrustCLI {
    struct Result: CustomStringConvertible, Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
        var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    }

    /// The binary beside the test bundle in SwiftPM's build folder.
    static func binary() throws -> String {
        var url = Bundle.main.bundleURL
        while url.pathComponents.count > 1 {
            let candidate = url.appendingPathComponent("servertrust").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            url.deleteLastPathComponent()
        }
        throw IntegrationError("the servertrust binary is not beside the test bundle \(Bundle.main.bundleURL.path)")
    }

    /// Runs the binary off the cooperative pool.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Result {
        try await offPool { try runBlocking(arguments, environment: environment) }
    }

    static func runBlocking(_ arguments: [String], environment: [String: String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try binary())
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        let errorPath = NSTemporaryDirectory() + "servertrust-cli-stderr-" + UUID().uuidString
        guard FileManager.default.createFile(atPath: errorPath, contents: nil), let errorFile = FileHandle(forWritingAtPath: errorPath) else {
            throw IntegrationError("cannot create \(errorPath)")
        }
        defer {
            try? errorFile.close()
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = errorFile
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errors = FileManager.default.contents(atPath: errorPath) ?? Data()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: data, as: UTF8.self),
            stderr: String(decoding: errors, as: UTF8.self))
    }
}
