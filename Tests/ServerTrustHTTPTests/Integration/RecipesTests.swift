import Foundation
import ServerTrustLab
import Testing

/// The README's recipes, as an app would use them. Every `swift` block of "Use it in your app",
/// "URLSession on Linux" and "Rotating pins" is compiled from the README's own text, each block
/// a file of its own with exactly the imports it shows, in a copy of `examples/Recipes` (a
/// package of its own that depends on this one by path). The example's functions are the same
/// blocks without their imports (checked character for character), and the test runs each one
/// against an nginx it starts, so a recipe that stops compiling, or stops working, fails here.
/// The pinned recipes are also run against an impostor whose CA the client trusts (a corporate
/// proxy's, Charles'), which they must refuse while an unpinned session accepts it.
@Suite("README recipes: an app package with one import, against nginx", .enabled(if: IntegrationTools.nginxSuiteEnabled))
struct RecipesTests {
    static let repository = repositoryRoot()
    static let examplePackage = repository.appendingPathComponent("examples/Recipes")
    static let recipesSource = examplePackage.appendingPathComponent("Sources/recipes/Recipes.swift")

    /// The README sections whose `swift` blocks are recipes (compiled, and run through the example).
    static let recipeSections = ["## Use it in your app", "## URLSession on Linux: `ServerTrustURLSession`", "## Rotating pins"]

    /// The recipe blocks of the README, as written (imports included); not the Package.swift fragment.
    static func readmeRecipes() throws -> [String] {
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        return recipeSections.flatMap { swiftBlocks(inSection: $0, of: readme) }.filter { !$0.hasPrefix("// Package.swift") }
    }

    /// A block without its leading `import` lines and the blank line after them.
    static func withoutImports(_ block: String) -> String {
        var lines = block.split(separator: "\n", omittingEmptySubsequences: false)
        while let first = lines.first, first.hasPrefix("import ") { lines.removeFirst() }
        if lines.first?.isEmpty == true { lines.removeFirst() }
        return lines.joined(separator: "\n")
    }

    @Test("every recipe block of the README shows its imports, and without them is in the example package, character for character")
    func readmeBlocksAreTheExample() throws {
        let source = try String(contentsOf: Self.recipesSource, encoding: .utf8)
        let blocks = try Self.readmeRecipes()
        #expect(blocks.count >= 11, "a block per recipe, the URLSession one and the app's side of 'Rotating pins'")
        for block in blocks {
            #expect(block.hasPrefix("import "), "a README recipe shows its imports:\n\(block)")
            #expect(source.contains(Self.withoutImports(block)), "README block not in examples/Recipes/Sources/recipes/Recipes.swift:\n\(block)")
        }
    }

    @Test("the README's recipe blocks compile as written; each recipe works against nginx; the pinned ones refuse a trusted impostor")
    func recipesRunAgainstNginx() async throws {
        let lab = try await offPool { try RecipeLab() }
        defer { lab.stop() }
        let recipes = try await offPool { try Self.buildExample(in: lab.directory) }
        func run(_ arguments: [String], trusting bundle: String? = nil) async throws -> ServertrustCLI.Result {
            try await offPool { try Self.run(recipes, arguments, certFile: bundle ?? lab.trustedBundle) }
        }
        let genuine = lab.url(.genuine, "/hello")
        let impostor = lab.url(.impostor, "/hello")

        // A private CA: trusted through its file alone, when the system roots do not include it.
        let privateCA = try await run(["private-ca", genuine, lab.rootPath], trusting: lab.impostorRootPath)
        #expect(privateCA.status == 0 && privateCA.stdout == RecipeLab.hello, "\(privateCA)")
        let wrongCA = try await run(["private-ca", genuine, lab.impostorRootPath], trusting: lab.impostorRootPath)
        #expect(wrongCA.status == 1 && wrongCA.stdout.hasPrefix("error:"), "\(wrongCA)")

        // A private CA and pins: the CA file holds both roots (the CA also issued a certificate
        // for the name to someone else, here the impostor's root); the pins tell them apart.
        let caPins = try await run(["private-ca-pins", genuine, RecipeLab.host, lab.trustedBundle] + lab.pins, trusting: lab.impostorRootPath)
        #expect(caPins.status == 0 && caPins.stdout == RecipeLab.hello, "\(caPins)")
        let caPinsImpostor = try await run(["private-ca-pins", impostor, RecipeLab.host, lab.trustedBundle] + lab.pins, trusting: lab.impostorRootPath)
        #expect(caPinsImpostor.status == 1 && caPinsImpostor.stdout.contains("spkiPinningFailed"), "\(caPinsImpostor)")
        let caPinsWrongCA = try await run(["private-ca-pins", genuine, RecipeLab.host, lab.impostorRootPath] + lab.pins, trusting: lab.rootPath)
        #expect(caPinsWrongCA.status == 1 && caPinsWrongCA.stdout.hasPrefix("error:"), "only the CA file's roots: \(caPinsWrongCA)")

        // Existing URLSession code through the drop-in: the private CA, the session's extra field sent.
        let urlSession = try await run(["urlsession", lab.url(.genuine, "/api-key"), lab.rootPath], trusting: lab.impostorRootPath)
        #expect(urlSession.status == 0 && urlSession.stdout == "key=recipes\n", "\(urlSession)")

        // Pinning: the genuine server passes, the impostor (whose CA the system trusts) is refused.
        let pinned: [(name: String, arguments: (String) -> [String])] = [
            ("pinned-certificates", { [$0, lab.pinnedCertificatesFolder] }),
            ("pins", { [$0, RecipeLab.host] + lab.pins }),
            ("policy-file", { [$0, lab.policyFilePath] }),
        ]
        for recipe in pinned {
            let accepted = try await run([recipe.name] + recipe.arguments(genuine))
            #expect(accepted.status == 0 && accepted.stdout == RecipeLab.hello, "\(recipe.name) genuine: \(accepted)")
            let refused = try await run([recipe.name] + recipe.arguments(impostor))
            #expect(refused.status == 1 && refused.stdout.hasPrefix("error:"), "\(recipe.name) impostor: \(refused)")
        }
        // Without pins the impostor is accepted: the refusals above are the pins' doing.
        let unpinned = try await run(["basic-auth", lab.url(.impostor, "/private/"), RecipeLab.user, RecipeLab.password])
        #expect(unpinned.status == 0 && unpinned.stdout == RecipeLab.privateText, "\(unpinned)")

        // Basic authentication, answered on the 401; a wrong password stays a 401.
        let basic = try await run(["basic-auth", lab.url(.genuine, "/private/"), RecipeLab.user, RecipeLab.password])
        #expect(basic.status == 0 && basic.stdout == RecipeLab.privateText, "\(basic)")
        let wrongPassword = try await run(["basic-auth", lab.url(.genuine, "/private/"), RecipeLab.user, "wrong"])
        #expect(wrongPassword.status == 1 && wrongPassword.stdout.contains("401"), "\(wrongPassword)")

        // A client certificate from a PKCS #12 file; nginx names the subject it verified.
        let client = try await run(["client-certificate", lab.url(.clientCertificate, "/whoami"), RecipeLab.host, lab.p12Path, RecipeLab.p12Password])
        #expect(client.status == 0 && client.stdout == "client CN=recipes client,O=ServerTrust Lab verify=SUCCESS\n", "\(client)")
        let badP12 = try await run(["client-certificate", lab.url(.clientCertificate, "/whoami"), RecipeLab.host, lab.p12Path, "wrong"])
        #expect(badP12.status == 1 && badP12.stdout.contains("wrongPassword"), "\(badP12)")

        // JSON: the POSTed body as nginx received it, and a Decodable GET of application/*+json.
        let json = try await run(["json", lab.url(.genuine, "/echo"), lab.url(.genuine, "/user")])
        #expect(json.status == 0, "\(json)")
        let lines = json.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[1] == "user 42 bob", "\(json)")
        let posted = lines.first.flatMap { $0.hasPrefix("posted ") ? Data($0.dropFirst(7).utf8) : nil } ?? Data()
        let echoed = try? JSONSerialization.jsonObject(with: posted) as? [String: Any]
        #expect(echoed?["id"] as? Int == 7 && echoed?["name"] as? String == "alice", "\(json)")

        // A multipart upload streamed from a file: nginx echoes the body it received.
        let upload = try await run(["upload", lab.url(.genuine, "/echo"), lab.photoPath])
        #expect(upload.status == 0, "\(upload)")
        for expected in [
            "Content-Disposition: form-data; name=\"title\"\r\n\r\nholiday\r\n",
            "Content-Disposition: form-data; name=\"photo\"; filename=\"photo.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
                + RecipeLab.photo + "\r\n",
        ] {
            #expect(upload.stdout.contains(expected), "upload body lacks \(expected.debugDescription): \(upload)")
        }
    }

    /// The ```swift blocks between `heading` and the next `## ` heading.
    static func swiftBlocks(inSection heading: String, of markdown: String) -> [String] {
        guard let start = markdown.range(of: "\n" + heading + "\n") else { return [] }
        var section = markdown[start.upperBound...]
        if let end = section.range(of: "\n## ") { section = section[..<end.lowerBound] }
        var blocks: [String] = []
        var current: [Substring]?
        for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// `swift build` of a copy of the example package with one more target, `readme`, whose
    /// files are the README's recipe blocks as written (one file each, its imports its own), in
    /// a build folder of its own; the executable.
    static func buildExample(in directory: String) throws -> String {
        let scratch = directory + "/recipes-build"
        let package = directory + "/recipes-package"
        try FileManager.default.createDirectory(atPath: package + "/Sources/readme", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: examplePackage.path + "/Sources/recipes", toPath: package + "/Sources/recipes")
        for (index, block) in try readmeRecipes().enumerated() {
            try Data((block + "\n").utf8).write(to: URL(fileURLWithPath: package + "/Sources/readme/Recipe\(index + 1).swift"))
        }
        let manifest = """
            // swift-tools-version:6.0
            import PackageDescription

            let package = Package(
                name: "Recipes",
                dependencies: [.package(path: "\(repository.path)")],
                targets: [
                    .executableTarget(name: "recipes", dependencies: [.product(name: "ServerTrustKit", package: "\(repository.lastPathComponent)")]),
                    // The README's blocks, compiled as written.
                    .target(name: "readme", dependencies: [.product(name: "ServerTrustKit", package: "\(repository.lastPathComponent)")]),
                ],
                swiftLanguageModes: [.v6]
            )

            """
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: package + "/Package.swift"))
        let swift = try IntegrationTools.require(IntegrationTools.swift, "swift", install: "the Swift toolchain on PATH")
        let result = try Self.execute(
            swift, ["build", "--package-path", package, "--scratch-path", scratch], environment: [:], timeout: 1500)
        guard result.status == 0 else { throw IntegrationError("swift build of examples/Recipes failed:\n\(result.stdout)\n\(result.stderr)") }
        let warnings = (result.stdout + result.stderr).split(separator: "\n").filter { $0.contains("warning:") }
        guard warnings.isEmpty else { throw IntegrationError("examples/Recipes builds with warnings:\n\(warnings.joined(separator: "\n"))") }
        return scratch + "/debug/recipes"
    }

    /// One recipe, with `SSL_CERT_FILE` as its system roots.
    static func run(_ recipes: String, _ arguments: [String], certFile: String) throws -> ServertrustCLI.Result {
        try execute(recipes, arguments, environment: ["SSL_CERT_FILE": certFile, "SSL_CERT_DIR": "/nonexistent"], timeout: 120)
    }

    /// Runs `executable` to its end (killed after `timeout` seconds), stdout and stderr kept
    /// apart. Spawned by ``LabChildProcess``: a `swift build` runs for minutes, and a child
    /// of Foundation's `Process` could meanwhile hold a descriptor another test's process waits on.
    static func execute(_ executable: String, _ arguments: [String], environment: [String: String], timeout: Double) throws -> ServertrustCLI.Result {
        let directory = NSTemporaryDirectory() + "servertrust-recipes-run-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stdout = directory + "/stdout"
        let stderr = directory + "/stderr"
        let child = try LabChildProcess(executable, arguments, adding: environment, stdoutPath: stdout, stderrPath: stderr)
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        while child.isRunning && ContinuousClock.now < deadline { usleep(50_000) }
        let status = child.stop(grace: .seconds(5))
        let read = { (path: String) in String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) }
        return ServertrustCLI.Result(status: status, stdout: read(stdout), stderr: read(stderr))
    }
}

/// The recipes' servers: one nginx with the genuine site for `localhost` (a private CA), a
/// site that asks for a client certificate, and an impostor for the same name whose chain
/// comes from an interception CA that the recipes' "system roots" trust.
final class RecipeLab: Sendable {
    enum Site: String, CaseIterable, Sendable {
        case genuine
        case clientCertificate = "client-certificate"
        case impostor
    }

    static let host = "localhost"
    static let hello = "hello from the recipes' nginx\n"
    static let privateText = "the private area\n"
    static let user = "alice"
    static let password = "recipe secret"
    static let p12Password = "p12 secret"
    static let photo = "JFIF pretend photo bytes\n"

    let directory: String
    let nginx: NginxInstance
    /// The SPKI pins of the genuine intermediate and of a backup key (`openssl`-computed).
    let pins: [String]

    var rootPath: String { directory + "/root.pem" }
    var impostorRootPath: String { directory + "/impostor-root.pem" }
    /// The genuine root and the interception root: what the recipes' system trusts.
    var trustedBundle: String { directory + "/trusted.pem" }
    var pinnedCertificatesFolder: String { directory + "/pinned" }
    var policyFilePath: String { directory + "/policy.json" }
    var p12Path: String { directory + "/client.p12" }
    var photoPath: String { directory + "/photo.jpg" }

    init() throws {
        let now = Int64(Date().timeIntervalSince1970)
        let day = LabClock.day
        let directory = NSTemporaryDirectory() + "servertrust-recipes-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/html/private", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/pinned", withIntermediateDirectories: true)
        self.directory = directory
        do {
            let pki = try LabPKI.webChain(host: Self.host, leafNotBefore: now - day, leafNotAfter: now + 30 * day, keySlot: 110)
            let impostor = try LabPKI.webChain(host: Self.host, leafNotBefore: now - day, leafNotAfter: now + 30 * day, keySlot: 111)
            let clientPKI = try LabPKI.webChain(host: "client.recipes.test", leafNotBefore: now - day, leafNotAfter: now + 30 * day, keySlot: 112)
            let clientLeaf = try LabCertificate.issue(
                LabCertificateSpec(
                    subject: LabName([("O", "ServerTrust Lab"), ("CN", "recipes client")]), notBefore: now - day, notAfter: now + 30 * day,
                    extensions: [
                        .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["clientAuth"]),
                        .subjectKeyIdentifier(), .authorityKeyIdentifier(),
                    ]),
                subjectKey: clientPKI.leafKey, issuer: clientPKI.intermediateIssuer)

            let genuineChain = try LabFiles.writeBundle(pki.serverChain, to: directory + "/genuine.pem")
            let genuineKey = try LabFiles.write(try pki.leafKey.privateKeyPEM(), to: directory + "/genuine.key")
            let impostorChain = try LabFiles.writeBundle(impostor.serverChain, to: directory + "/impostor.pem")
            let impostorKey = try LabFiles.write(try impostor.leafKey.privateKeyPEM(), to: directory + "/impostor.key")
            let clientCA = try LabFiles.write(clientPKI.root.pem, to: directory + "/client-ca.pem")
            _ = try LabFiles.write(pki.root.pem, to: directory + "/root.pem")
            _ = try LabFiles.write(impostor.root.pem, to: directory + "/impostor-root.pem")
            _ = try LabFiles.write(pki.root.pem + impostor.root.pem, to: directory + "/trusted.pem")
            // AFNetworking's .cer: DER; the recipe pins the genuine intermediate.
            _ = try LabFiles.write(pki.intermediate.der, to: directory + "/pinned/intermediate.cer")
            _ = try LabFiles.write(
                try LabPKCS12.create(
                    certificate: clientLeaf, key: clientPKI.leafKey, chain: [clientPKI.intermediate],
                    password: Self.p12Password), to: directory + "/client.p12")
            let intermediatePath = try LabFiles.write(pki.intermediate.pem, to: directory + "/intermediate.pem")
            let backupPath = try LabFiles.write(
                LabPEM.encode(try LabKey.shared(.p256, slot: 340).publicKeyInfoDER, label: "PUBLIC KEY"), to: directory + "/backup-key.pem")
            let pins = ["sha256/" + (try Self.openSSLPin(certificate: intermediatePath)), "sha256/" + (try Self.openSSLPin(publicKey: backupPath))]
            self.pins = pins
            let policy: [String: Any] = [
                "version": 1,
                "hosts": [["host": Self.host, "pins": pins]],
            ]
            try JSONSerialization.data(withJSONObject: policy, options: [.prettyPrinted, .sortedKeys]).write(
                to: URL(fileURLWithPath: directory + "/policy.json"))

            try Data(Self.hello.utf8).write(to: URL(fileURLWithPath: directory + "/html/hello"))
            try Data(Self.privateText.utf8).write(to: URL(fileURLWithPath: directory + "/html/private/index.txt"))
            try Data(Self.photo.utf8).write(to: URL(fileURLWithPath: directory + "/photo.jpg"))
            try Data("\(Self.user):\(try NginxLab.apr1(Self.password))\n".utf8).write(to: URL(fileURLWithPath: directory + "/htpasswd"))
            _ = try IntegrationTools.require(
                IntegrationTools.nginxEchoModule, "nginx's echo module",
                install: "apt-get install libnginx-mod-http-echo")

            nginx = try NginxInstance.start(prefix: directory, portCount: Site.allCases.count) { ports in
                zip(Site.allCases, ports).map { site, port in
                    let (chain, key) = site == .impostor ? (impostorChain, impostorKey) : (genuineChain, genuineKey)
                    var block = """
                            server {
                                listen 127.0.0.1:\(port) ssl;
                                server_name \(Self.host);
                                ssl_certificate \(chain);
                                ssl_certificate_key \(key);
                                root \(directory)/html;
                                index index.txt;
                                default_type text/plain;
                                client_body_buffer_size 1m;
                                location /private/ { auth_basic "recipes"; auth_basic_user_file \(directory)/htpasswd; }
                                location = /echo { echo_read_request_body; echo_request_body; }
                                location = /user { default_type application/vnd.example.user+json; return 200 '{"id":42,"name":"bob"}'; }
                                location = /api-key { return 200 "key=$http_x_api_key\\n"; }

                        """
                    if site == .clientCertificate {
                        block += """
                                    ssl_client_certificate \(clientCA);
                                    ssl_verify_client on;
                                    ssl_verify_depth 2;
                                    location = /whoami { return 200 "client $ssl_client_s_dn verify=$ssl_client_verify\\n"; }

                            """
                    }
                    return block + "        }\n"
                }.joined()
            }
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    func stop() {
        nginx.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func url(_ site: Site, _ path: String) -> String {
        "https://\(Self.host):\(nginx.ports[Site.allCases.firstIndex(of: site) ?? 0])\(path)"
    }

    /// The base64 SHA-256 of a certificate's SubjectPublicKeyInfo, the way curl's and OWASP's
    /// pinning guides compute it with the openssl CLI.
    static func openSSLPin(certificate path: String) throws -> String {
        try openSSLPin(publicKeyPEM: try shell("openssl x509 -in '\(path)' -pubkey -noout"))
    }

    static func openSSLPin(publicKey path: String) throws -> String {
        try openSSLPin(publicKeyPEM: try String(contentsOfFile: path, encoding: .utf8))
    }

    private static func openSSLPin(publicKeyPEM: String) throws -> String {
        let file = NSTemporaryDirectory() + "servertrust-recipes-key-" + UUID().uuidString + ".pem"
        try Data(publicKeyPEM.utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        return try shell("openssl pkey -pubin -in '\(file)' -outform DER | openssl dgst -sha256 -binary | openssl base64 -A")
    }

    private static func shell(_ command: String) throws -> String {
        let result = try RecipesTests.execute("/bin/sh", ["-c", command], environment: [:], timeout: 60)
        guard result.status == 0, !result.stdout.isEmpty else { throw IntegrationError("\(command): \(result)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
