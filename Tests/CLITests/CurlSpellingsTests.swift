import CertificateParsing
import Foundation
import ServerTrustLab
import Testing

/// `servertrust get` with curl's spellings, each run beside `/usr/bin/curl` with the same
/// arguments on the same server: the two outcomes must be of one kind (``CurlBeside``). Key
/// slots: keySlot 110-112 (330-338), direct slot 350 (the ClientSetup's client PKI is keySlot 112).
@Suite("servertrust get: curl's spellings, beside curl")
struct CurlSpellingsTests {
    static let host = "www.example.test"
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// A server for `host` under a fresh Lab PKI, and the files curl and we are given.
    struct Setup {
        let pki: LabPKI
        let server: LabTLSServer
        let directory: String
        let root: String
        /// A bundle with only an unrelated root: the "system" roots (`SSL_CERT_FILE`), so that
        /// the Lab root is trusted only when given.
        let unrelatedRoots: String
        let leafPin: String
        let intermediatePin: String

        init(
            keySlot: Int = 110, leaf: ((LabPKI) throws -> LabTLSServer.Identity)? = nil,
            configure: (inout LabTLSServer.Configuration) -> Void = { _ in }
        ) throws {
            pki = try LabPKI.webChain(
                host: CurlSpellingsTests.host, leafNotBefore: CurlSpellingsTests.now - LabClock.day,
                leafNotAfter: CurlSpellingsTests.now + 30 * LabClock.day, keySlot: keySlot)
            var configuration = LabTLSServer.Configuration(identity: try leaf?(pki) ?? .init(pki: pki), name: "curl-beside")
            configure(&configuration)
            server = try LabTLSServer.started(configuration)
            directory = try CLIRunner.temporaryDirectory()
            root = try LabFiles.write(pki.root.pem, to: directory + "/root.pem")
            // P-384: a root of another name (the Lab names its roots after the algorithm), so
            // that the Lab root is unknown rather than a same-named root with another key.
            let unrelated = try LabPKI.webChain(host: "unrelated.test", algorithm: .p384, keySlot: 111)
            unrelatedRoots = try LabFiles.write(unrelated.root.pem, to: directory + "/unrelated-roots.pem")
            leafPin = "sha256//" + (try Certificate(derEncoded: pki.leaf.der)).spkiSHA256Base64
            intermediatePin = "sha256//" + (try Certificate(derEncoded: pki.intermediate.der)).spkiSHA256Base64
        }

        var url: String { server.url(host: CurlSpellingsTests.host) }
        var resolve: String { "\(CurlSpellingsTests.host):\(server.port):127.0.0.1" }
        /// The "system" roots for both programs: `SSL_CERT_FILE` for us (as OpenSSL reads
        /// it), and `CURL_CA_BUNDLE` too for curl, which prefers it to `SSL_CERT_FILE` (and the
        /// environment this runs in may set it).
        var environment: [String: String] { Self.systemRoots(unrelatedRoots) }

        static func systemRoots(_ path: String) -> [String: String] { ["SSL_CERT_FILE": path, "CURL_CA_BUNDLE": path] }

        func both(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> CurlBeside.Pair {
            try await CurlBeside.run(url, resolve: resolve, arguments, environment: environment.merging(extra) { _, new in new })
        }
    }

    /// One spelling on one server: the arguments both programs get and the exit code curl
    /// must give (ours is ``CurlBeside/ourExitCode(forCurl:)`` of it).
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let curlStatus: Int32
        let arguments: @Sendable (Setup) throws -> [String]
        var testDescription: String { name }
    }

    static let trustRows: [Row] = [
        Row(name: "trusted: --cacert ROOT", curlStatus: 0) { ["--cacert", $0.root] },
        Row(name: "untrusted: no --cacert, the root unknown", curlStatus: 60) { _ in [] },
        Row(name: "insecure: -k on the untrusted server", curlStatus: 0) { _ in ["-k"] },
        Row(name: "insecure: --insecure on the untrusted server", curlStatus: 0) { _ in ["--insecure"] },
        Row(name: "pinned, matching: --pinnedpubkey sha256//LEAF", curlStatus: 0) { ["--cacert", $0.root, "--pinnedpubkey", $0.leafPin] },
        Row(name: "pinned, matching: a ;-list whose second pin is the leaf's", curlStatus: 0) { setup in
            ["--cacert", setup.root, "--pinnedpubkey", "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=;" + setup.leafPin]
        },
        Row(name: "pinned, matching: --pinnedpubkey PEM-FILE", curlStatus: 0) { setup in
            [
                "--cacert", setup.root, "--pinnedpubkey",
                try LabFiles.write(LabPEM.encode(setup.pki.leafKey.publicKeyInfoDER, label: "PUBLIC KEY"), to: setup.directory + "/leaf.pub.pem"),
            ]
        },
        Row(name: "pinned, matching: --pinnedpubkey DER-FILE", curlStatus: 0) { setup in
            ["--cacert", setup.root, "--pinnedpubkey", try LabFiles.write(setup.pki.leafKey.publicKeyInfoDER, to: setup.directory + "/leaf.pub.der")]
        },
        Row(name: "pinned, mismatching: a stranger's key", curlStatus: 90) { setup in
            ["--cacert", setup.root, "--pinnedpubkey", "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="]
        },
        // curl pins the leaf's key only: the genuine intermediate's pin does not do.
        Row(name: "pinned, mismatching: the intermediate's key (curl pins the leaf)", curlStatus: 90) {
            ["--cacert", $0.root, "--pinnedpubkey", $0.intermediatePin]
        },
        Row(name: "pinned but untrusted: the leaf's pin does not make the chain trusted", curlStatus: 60) { ["--pinnedpubkey", $0.leafPin] },
        Row(name: "insecure and pinned, matching: -k --pinnedpubkey LEAF", curlStatus: 0) { ["-k", "--pinnedpubkey", $0.leafPin] },
        Row(name: "insecure and pinned, mismatching: -k --pinnedpubkey INTERMEDIATE", curlStatus: 90) { ["-k", "--pinnedpubkey", $0.intermediatePin] },
    ]

    @Test("trust spellings: the same kind of outcome as curl's", arguments: trustRows)
    func trust(_ row: Row) async throws {
        let setup = try Setup()
        defer { setup.server.stop() }
        let pair = try await setup.both(try row.arguments(setup))
        #expect(pair.curl.status == row.curlStatus, "\(pair.summary)")
        #expect(pair.ours.status == CurlBeside.ourExitCode(forCurl: pair.curl.status), "\(pair.summary)")
        if pair.ours.status == 0 {
            #expect(pair.ours.stdout == pair.curl.stdout && pair.ours.stdout == "hello from curl-beside", "\(pair.summary)")
        } else {
            #expect(pair.ours.stderr.hasPrefix("servertrust: get: server trust rejected: "), "\(pair.summary)")
        }
    }

    @Test("--cacert trusts only its bundle (curl's meaning), where --anchors adds to the system roots")
    func cacertReplacesTheSystemRoots() async throws {
        let setup = try Setup()
        defer { setup.server.stop() }
        // The Lab root is a "system" root here: without --cacert both trust the server.
        let system = Setup.systemRoots(setup.root)
        let plain = try await setup.both([], environment: system)
        #expect(plain.curl.status == 0 && plain.ours.status == 0, "\(plain.summary)")
        // --cacert with an unrelated root: curl no longer trusts the system root, nor do we.
        let replaced = try await setup.both(["--cacert", setup.unrelatedRoots], environment: system)
        #expect(replaced.curl.status == 60 && replaced.ours.status == 1, "\(replaced.summary)")
        // Our --anchors adds the root instead, so the system root still counts.
        let added = try await CLIRunner.run(
            ["get", setup.url, "--resolve", setup.resolve, "--anchors", setup.unrelatedRoots],
            environment: setup.environment.merging(system) { _, new in new })
        #expect(added.status == 0, "\(added.stderr)")
        // Two --cacert files add up (curl keeps the last one; ours trusts both).
        let both = try await CLIRunner.run(
            ["get", setup.url, "--resolve", setup.resolve, "--cacert", setup.unrelatedRoots, "--cacert", setup.root],
            environment: setup.environment)
        #expect(both.status == 0, "\(both.stderr)")
    }

    @Test("-k says in --json's decision that nothing was checked; -k --pinnedpubkey that only the pinned key was")
    func insecureDecision() async throws {
        let setup = try Setup()
        defer { setup.server.stop() }
        func decision(_ arguments: [String]) async throws -> [String: Any] {
            let result = try await CLIRunner.run(["get", setup.url, "--resolve", setup.resolve, "--json"] + arguments, environment: setup.environment)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            return try #require(object["decision"] as? [String: Any])
        }
        let insecure = try await decision(["-k"])
        #expect(insecure["checked"] as? String == "nothing", "\(insecure)")
        #expect(insecure["verifiedChain"] == nil)
        #expect((insecure["notes"] as? [String])?.contains { $0.contains("never use it in production") } == true, "\(insecure)")
        let pinned = try await decision(["-k", "--pinnedpubkey", setup.leafPin])
        #expect(pinned["checked"] as? String == "pinned key only", "\(pinned)")
        let verified = try await decision(["--cacert", setup.root])
        #expect(verified["checked"] as? String == "chain" && (verified["verifiedChain"] as? [Any])?.count == 3, "\(verified)")
        let verifiedPinned = try await decision(["--cacert", setup.root, "--pinnedpubkey", setup.leafPin])
        #expect(verifiedPinned["checked"] as? String == "chain and pinned key", "\(verifiedPinned)")
        // A refusal carries no "checked": it is what was refused that matters (failureKind).
        let refused = try await CLIRunner.run(["get", setup.url, "--resolve", setup.resolve, "--json"], environment: setup.environment)
        let refusedObject = try #require(try JSONSerialization.jsonObject(with: Data(refused.stdout.utf8)) as? [String: Any])
        let refusedDecision = try #require(refusedObject["decision"] as? [String: Any])
        #expect(refused.status == 1 && refusedDecision["checked"] == nil && refusedDecision["failureKind"] as? String == "untrustedRoot", "\(refusedDecision)")
    }

    @Test("hostname mismatch and a self-signed server: rejected by both, trusted by both with -k")
    func otherServers() async throws {
        let wrongHost = try Setup(leaf: { pki in
            LabTLSServer.Identity(
                chain: [
                    try pki.issueLeaf(
                        host: "other.example.test", notBefore: Self.now - LabClock.day,
                        notAfter: Self.now + LabClock.day), pki.intermediate,
                ], key: pki.leafKey)
        })
        defer { wrongHost.server.stop() }
        let mismatch = try await wrongHost.both(["--cacert", wrongHost.root])
        #expect(mismatch.curl.status == 60 && mismatch.ours.status == 1, "\(mismatch.summary)")
        let mismatchInsecure = try await wrongHost.both(["--cacert", wrongHost.root, "-k"])
        #expect(mismatchInsecure.curl.status == 0 && mismatchInsecure.ours.status == 0, "\(mismatchInsecure.summary)")

        let key = try LabKey.shared(.p256, slot: 350)
        let selfSigned = try LabCertificate.issue(
            LabCertificateSpec(
                subject: LabName([("CN", Self.host)]), notBefore: Self.now - LabClock.day, notAfter: Self.now + 30 * LabClock.day,
                extensions: [.basicConstraints(ca: true), .subjectAltName([.forHost(Self.host)]), .subjectKeyIdentifier()]),
            subjectKey: key)
        let setup = try Setup(leaf: { _ in LabTLSServer.Identity(chain: [selfSigned], key: key) })
        defer { setup.server.stop() }
        let rejected = try await setup.both([])
        #expect(rejected.curl.status == 60 && rejected.curl.stderr.contains("self-signed certificate"), "\(rejected.summary)")
        #expect(rejected.ours.status == 1, "\(rejected.summary)")
        let trusted = try await setup.both(["--cacert", try LabFiles.write(selfSigned.pem, to: setup.directory + "/self.pem")])
        #expect(trusted.curl.status == 0 && trusted.ours.status == 0, "\(trusted.summary)")
        let insecure = try await setup.both(["-k"])
        #expect(insecure.curl.status == 0 && insecure.ours.status == 0, "\(insecure.summary)")
    }

    @Test("-fsSL, -sS, -sk as a curl script writes them: a 404 is curl 22 and our 3, a redirect is followed by both")
    func scriptFlags() async throws {
        let setup = try Setup(configure: { configuration in
            configuration.handler = { request in
                switch request.path {
                case "/missing": return .text("gone", status: 404)
                case "/moved": return LabHTTPResponse(status: 302, headers: [("Location", "/")], body: .bytes([]))
                default: return .text("hello from curl-beside")
                }
            }
        })
        defer { setup.server.stop() }
        func both(_ path: String, _ arguments: [String]) async throws -> CurlBeside.Pair {
            try await CurlBeside.run(setup.server.url(host: Self.host, path: path), resolve: setup.resolve, arguments, environment: setup.environment)
        }
        for flags in [["-fsSL"], ["-f", "-s", "-S", "-L"], ["--fail", "--silent", "--show-error", "--location"]] {
            let missing = try await both("/missing", flags + ["--cacert", setup.root])
            #expect(missing.curl.status == 22 && missing.ours.status == 3, "\(flags): \(missing.summary)")
            let moved = try await both("/moved", flags + ["--cacert", setup.root])
            #expect(moved.curl.status == 0 && moved.ours.status == 0 && moved.ours.stdout == moved.curl.stdout, "\(flags): \(moved.summary)")
        }
        let insecure = try await both("/", ["-sk"])
        #expect(insecure.curl.status == 0 && insecure.ours.status == 0, "\(insecure.summary)")
        // Only flags bundle: a value option inside a bundle, or a letter that is no flag, is an
        // unknown option before anything is sent.
        for bundle in ["-sX", "-fz"] {
            let result = try await CLIRunner.run(["get", setup.url, "--resolve", setup.resolve, bundle])
            #expect(result.status == 2 && result.stderr == "servertrust: get: unknown option \(bundle)\n", "\(result.stderr)")
        }
    }

    @Test("evaluate takes the trust spellings too (TrustOptions): --cacert only its roots, --insecure, --pinnedpubkey on the leaf")
    func evaluateSpellings() async throws {
        let files = EvaluateCommandTests.files
        func evaluate(_ arguments: [String]) async throws -> Int32 {
            try await EvaluateCommandTests.evaluate([files.chain, "--host", EvaluateCommandTests.host] + arguments).status
        }
        let leafPin = files.leafPin.replacingOccurrences(of: "sha256/", with: "sha256//")
        let intermediatePin = files.intermediatePin.replacingOccurrences(of: "sha256/", with: "sha256//")
        // The generated system roots hold the chain's root: --cacert with another root replaces them.
        #expect(try await evaluate([]) == 0)
        #expect(try await evaluate(["--cacert", files.interceptionRoot]) == 1)
        #expect(try await evaluate(["--anchors", files.interceptionRoot]) == 0)
        #expect(try await evaluate(["--cacert", files.root]) == 0)
        #expect(try await evaluate(["--pinnedpubkey", leafPin]) == 0)
        // The intermediate's key is pinned by --pin (any position) but not by --pinnedpubkey.
        #expect(try await evaluate(["--pin", files.intermediatePin]) == 0)
        #expect(try await evaluate(["--pinnedpubkey", intermediatePin]) == 1)
        #expect(try await evaluate(["--pinnedpubkey", intermediatePin, "--pin", files.intermediatePin]) == 1, "both must match")
        // --insecure is --allow-invalid: AFNetworking's allowInvalidCertificates (which, with the
        // domain validated and nothing pinned, AFNetworking still rejects early).
        func intercepted(_ arguments: [String]) async throws -> Int32 {
            try await EvaluateCommandTests.evaluate([files.intercepted, "--host", EvaluateCommandTests.host] + arguments).status
        }
        #expect(try await intercepted([]) == 1)
        #expect(try await intercepted(["--insecure", "--no-validate-domain"]) == 0)
        #expect(try await (intercepted(["--insecure"]) == intercepted(["--allow-invalid"])))
    }

    // MARK: - Timeouts

    @Test("--connect-timeout on a server that never answers the handshake: curl 28, ours 4, within the limit")
    func connectTimeout() async throws {
        let setup = try Setup(configure: { $0.behavior = .stall })
        defer { setup.server.stop() }
        for spelling in [["--connect-timeout", "1"], ["--connect-timeout", "0.5"]] {
            let pair = try await setup.both(["--cacert", setup.root] + spelling)
            let elapsed = pair.curl.elapsed + pair.ours.elapsed
            #expect(pair.curl.status == 28 && pair.ours.status == 4, "\(spelling): \(pair.summary)")
            #expect(pair.ours.stderr.hasPrefix("servertrust: get: timed out: "), "\(pair.summary)")
            #expect(elapsed < .seconds(6), "\(spelling): both runs took \(elapsed)")
        }
    }

    @Test("-m/--max-time limits the whole transfer; --connect-timeout does not (a response 1.5 s late)")
    func maxTime() async throws {
        let setup = try Setup(configure: { configuration in
            configuration.handler = { _ in
                usleep(1_500_000)
                return .text("late")
            }
        })
        defer { setup.server.stop() }
        for spelling in [["-m", "0.5"], ["--max-time", "0.5"]] {
            let pair = try await setup.both(["--cacert", setup.root] + spelling)
            #expect(pair.curl.status == 28 && pair.ours.status == 4, "\(spelling): \(pair.summary)")
            #expect(pair.ours.stderr.hasPrefix("servertrust: get: timed out: "), "\(pair.summary)")
        }
        let connectOnly = try await setup.both(["--cacert", setup.root, "--connect-timeout", "0.5"])
        #expect(connectOnly.curl.status == 0 && connectOnly.ours.status == 0, "\(connectOnly.summary)")
        #expect(connectOnly.ours.stdout == "late" && connectOnly.curl.stdout == "late")
        let roomy = try await setup.both(["--cacert", setup.root, "-m", "10"])
        #expect(roomy.curl.status == 0 && roomy.ours.status == 0, "\(roomy.summary)")
    }

    @Test("-m and --connect-timeout refuse what is not a positive number of seconds, naming the spelling given")
    func badTimeouts() async throws {
        for (arguments, names) in [
            (["-m", "soon"], "-m must be"), (["--max-time", "-1"], "--max-time must be"),
            (["--connect-timeout", "0"], "--connect-timeout must be"), (["--connect-timeout", "inf"], "--connect-timeout must be"),
        ] {
            let result = try await CLIRunner.run(["get", "https://\(Self.host)/"] + arguments)
            #expect(result.status == 2 && result.stderr.hasPrefix("servertrust: get: \(names) a positive number of seconds"), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
    }

    // MARK: - Client certificates

    /// A server that requires a client certificate from the Lab client CA, and the client's files.
    struct ClientSetup {
        let setup: Setup
        let p12: String
        let pem: String
        let key: String

        init() throws {
            let clientPKI = try LabPKI.webChain(host: "client.example.test", keySlot: 112)
            let spec = LabCertificateSpec(
                subject: LabName([("CN", "curl-beside client")]), notBefore: CurlSpellingsTests.now - LabClock.day,
                notAfter: CurlSpellingsTests.now + 30 * LabClock.day,
                extensions: [
                    .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["clientAuth"]),
                    .subjectKeyIdentifier(), .authorityKeyIdentifier(),
                ])
            let clientLeaf = try LabCertificate.issue(spec, subjectKey: clientPKI.leafKey, issuer: clientPKI.intermediateIssuer)
            setup = try Setup(configure: { $0.clientAuthentication = .init(trustedCertificates: [clientPKI.root]) })
            let pfx = try LabPKCS12.create(certificate: clientLeaf, key: clientPKI.leafKey, chain: [clientPKI.intermediate], password: "pw")
            p12 = try LabFiles.write(pfx, to: setup.directory + "/client.p12")
            pem = try LabFiles.write(LabPEM.bundle([clientLeaf, clientPKI.intermediate]), to: setup.directory + "/client.pem")
            key = try LabFiles.write(try clientPKI.leafKey.privateKeyPEM(), to: setup.directory + "/client.key")
        }
    }

    @Test("--cert FILE:PASS --cert-type P12, --cert PEM --key KEY, -E: accepted by the server for both; a wrong password is curl 58, ours 2")
    func clientCertificates() async throws {
        let client = try ClientSetup()
        let setup = client.setup
        defer { setup.server.stop() }
        let trust = ["--cacert", setup.root]
        for arguments in [
            ["--cert", client.p12 + ":pw", "--cert-type", "P12"], ["--cert", client.p12, "--cert-type", "p12", "--pass", "pw"],
            ["-E", client.p12 + ":pw", "--cert-type", "P12"], ["--cert", client.pem, "--key", client.key],
            ["--cert", client.pem, "--key", client.key, "--cert-type", "PEM"],
        ] {
            let pair = try await setup.both(trust + arguments)
            #expect(pair.curl.status == 0 && pair.ours.status == 0, "\(arguments): \(pair.summary)")
        }
        let wrong = try await setup.both(trust + ["--cert", client.p12 + ":nope", "--cert-type", "P12"])
        #expect(wrong.curl.status == 58 && wrong.ours.status == 2, "\(wrong.summary)")
        #expect(wrong.ours.stderr == "servertrust: get: --cert \(client.p12): wrong password\n", "\(wrong.summary)")
        // Without any certificate the server ends the handshake: a TLS failure for both.
        let none = try await setup.both(trust)
        #expect(none.curl.status != 0 && CurlBeside.ourExitCode(forCurl: none.curl.status) == 4 && none.ours.status == 4, "\(none.summary)")
        // curl assumes PEM without --cert-type ("If not specified, PEM is assumed") and cannot
        // read the PKCS#12 file; we read what the file is.
        let untyped = try await setup.both(trust + ["--cert", client.p12 + ":pw"])
        #expect(untyped.curl.status == 58 && untyped.ours.status == 0, "\(untyped.summary)")
        // The type given must be the file's.
        let mistyped = try await CLIRunner.run(
            ["get", setup.url, "--resolve", setup.resolve] + trust + ["--cert", client.pem, "--key", client.key, "--cert-type", "P12"])
        #expect(mistyped.status == 2 && mistyped.stderr.contains("--cert-type P12, but --cert \(client.pem) is PEM text"), "\(mistyped.stderr)")
        // Requests reached the server only with a certificate: 5 pairs, and our untyped run.
        #expect(setup.server.statistics.requestsServed == 11)
    }

    @Test("--cert's colon: FILE:PASS splits at the first unescaped colon; \\: is a colon of the file name, as curl parses it")
    func certColonEscapes() async throws {
        let client = try ClientSetup()
        let setup = client.setup
        defer { setup.server.stop() }
        let colonPath = setup.directory + "/client:x.p12"
        try FileManager.default.copyItem(atPath: client.p12, toPath: colonPath)
        let escaped = colonPath.replacingOccurrences(of: ":", with: "\\:") + ":pw"
        let pair = try await setup.both(["--cacert", setup.root, "--cert", escaped, "--cert-type", "P12"])
        #expect(pair.curl.status == 0 && pair.ours.status == 0, "\(pair.summary)")
        // Unescaped, the colon ends the name for both: the file "…/client" does not exist.
        let unescaped = try await setup.both(["--cacert", setup.root, "--cert", colonPath + ":pw", "--cert-type", "P12"])
        #expect(unescaped.curl.status == 58 && unescaped.ours.status == 2, "\(unescaped.summary)")
        #expect(unescaped.ours.stderr.contains("--cert \(setup.directory)/client: No such file or directory"), "\(unescaped.summary)")
    }

    // MARK: - --version

    @Test("--version and -V: exit 0, and the libcurl named is the one curl --version names")
    func version() async throws {
        let curl = try await CLIRunner.run(["--version"], executable: CurlBeside.curl)
        #expect(curl.status == 0)
        let libcurl = try #require(curl.stdout.split(separator: " ").first { $0.hasPrefix("libcurl/") })
        for arguments in [["--version"], ["-V"], ["get", "--version"], ["get", "-V"]] {
            let ours = try await CLIRunner.run(arguments)
            #expect(ours.status == 0 && ours.stderr.isEmpty, "\(arguments): \(ours.stderr)")
            let first = ours.stdout.split(separator: "\n").first ?? ""
            #expect(first.hasPrefix("servertrust 0.") && first.split(separator: " ").contains(libcurl), "\(arguments): \(ours.stdout)")
            #expect(ours.stdout.contains("OpenSSL 3"), "\(arguments): \(ours.stdout)")
        }
    }
}
