import CertificateParsing
import Foundation
import ServerTrustLab
import Testing

/// The line `servertrust get` prints when a request fails, in words instead of internal
/// names (`leafIsCertificateAuthority`, `DER truncated`, libcurl's "Out of memory"), each
/// with its exit code, and curl's outcome on the same server or file beside it. Key slots:
/// keySlot 113-114 (339-344), direct slots 345-346.
@Suite("servertrust get: messages in words, with their exit codes")
struct PlainMessagesTests {
    typealias Setup = CurlSpellingsTests.Setup
    static let host = CurlSpellingsTests.host
    static var now: Int64 { CurlSpellingsTests.now }

    /// The first line on stderr.
    static func firstLine(_ result: CLIRunner.Result) -> String {
        String(result.stderr.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }

    // MARK: - Trust rejections

    /// A server whose certificate is refused, the words our first line must say, and what
    /// curl says of the same server.
    struct RejectionRow: Sendable, CustomTestStringConvertible {
        let name: String
        /// What the first line says after `servertrust: get: server trust rejected: HOST:PORT: `.
        let says: String
        /// curl's exit code and a part of its message.
        let curlStatus: Int32
        let curlSays: String
        /// Internal names the first line must not carry.
        let hidden: [String]
        let identity: (@Sendable (LabPKI) throws -> LabTLSServer.Identity)?
        let arguments: @Sendable (Setup) -> [String]
        var testDescription: String { name }
    }

    static let selfSignedKey = 345

    static func selfSigned(ca: Bool) throws -> LabTLSServer.Identity {
        let key = try LabKey.shared(.p256, slot: selfSignedKey)
        var extensions: [LabExtension] = [.basicConstraints(ca: ca), .subjectAltName([.forHost(host)]), .subjectKeyIdentifier()]
        if !ca { extensions.insert(.keyUsage([.digitalSignature]), at: 1) }
        let certificate = try LabCertificate.issue(
            LabCertificateSpec(subject: LabName([("CN", host)]), notBefore: now - LabClock.day, notAfter: now + 30 * LabClock.day, extensions: extensions),
            subjectKey: key)
        return LabTLSServer.Identity(chain: [certificate], key: key)
    }

    static let rejectionRows: [RejectionRow] = [
        RejectionRow(
            name: "self-signed, cA asserted (openssl req -x509)", says: "self-signed certificate, not trusted (\"CN=\(host)\"); trust it with --cacert FILE",
            curlStatus: 60, curlSays: "self-signed certificate", hidden: ["leafIsCertificateAuthority", "chainValidationFailed"],
            identity: { _ in try PlainMessagesTests.selfSigned(ca: true) }, arguments: { _ in [] }),
        RejectionRow(
            name: "self-signed, not a CA", says: "self-signed certificate, not trusted (\"CN=\(host)\"); trust it with --cacert FILE",
            curlStatus: 60, curlSays: "self-signed certificate", hidden: ["untrustedRoot"],
            identity: { _ in try PlainMessagesTests.selfSigned(ca: false) }, arguments: { _ in [] }),
        RejectionRow(
            name: "another host's certificate", says: "certificate is not valid for \(host) (it is for other.example.test)",
            curlStatus: 60, curlSays: "no alternative certificate subject name matches", hidden: ["hostValidationFailed", "hostnameMismatch"],
            identity: { pki in
                LabTLSServer.Identity(
                    chain: [
                        try pki.issueLeaf(
                            host: "other.example.test", notBefore: PlainMessagesTests.now - LabClock.day,
                            notAfter: PlainMessagesTests.now + LabClock.day), pki.intermediate,
                    ], key: pki.leafKey)
            }, arguments: { ["--cacert", $0.root] }),
        RejectionRow(
            name: "a root nobody trusts",
            says:
                "certificate not trusted: no trusted issuer found for \"CN=ServerTrust Lab Root CA P-256,O=ServerTrust Lab,C=US\"; add the issuing CA with --cacert FILE",
            curlStatus: 60, curlSays: "unable to get local issuer certificate", hidden: ["untrustedRoot"],
            identity: nil, arguments: { _ in [] }),
        RejectionRow(
            name: "an expired certificate", says: "certificate expired: expired at ", curlStatus: 60, curlSays: "certificate has expired",
            hidden: ["chainValidationFailed"],
            identity: { pki in
                LabTLSServer.Identity(
                    chain: [
                        try pki.issueLeaf(
                            host: PlainMessagesTests.host, notBefore: PlainMessagesTests.now - 10 * LabClock.day,
                            notAfter: PlainMessagesTests.now - LabClock.day), pki.intermediate,
                    ], key: pki.leafKey)
            }, arguments: { ["--cacert", $0.root] }),
        RejectionRow(
            name: "a pin that does not match", says: "public key does not match the pinned public key (the server's key is sha256//",
            curlStatus: 90, curlSays: "public key does not match pinned public key", hidden: ["spkiPinningFailed", "SPKIPinsTrustEvaluator"],
            identity: nil, arguments: { ["--cacert", $0.root, "--pinnedpubkey", "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="] }),
    ]

    @Test("a refused server: exit 1, one line in words first (the decision record follows), as curl refuses it", arguments: rejectionRows)
    func rejection(_ row: RejectionRow) async throws {
        let setup = try Setup(keySlot: 113, leaf: row.identity)
        defer { setup.server.stop() }
        let pair = try await setup.both(row.arguments(setup))
        #expect(pair.curl.status == row.curlStatus && pair.curl.stderr.contains(row.curlSays), "\(pair.summary)")
        #expect(pair.ours.status == 1, "\(pair.summary)")
        let line = Self.firstLine(pair.ours)
        let prefix = "servertrust: get: server trust rejected: \(Self.host):\(setup.server.port): "
        #expect(line.hasPrefix(prefix + row.says), "\(line)")
        for name in row.hidden { #expect(!line.contains(name), "\(name) in \(line)") }
        // The record after the line keeps the evidence, internal names included.
        #expect(pair.ours.stderr.contains("\ndecision:  rejected — "), "\(pair.ours.stderr)")
        #expect(setup.server.statistics.requestsServed == 0)
    }

    @Test("the self-signed server's own certificate as --cacert: trusted (exit 0), as by curl")
    func selfSignedTrustedWhenGiven() async throws {
        let identity = try Self.selfSigned(ca: true)
        let setup = try Setup(keySlot: 113, leaf: { _ in identity })
        defer { setup.server.stop() }
        let pair = try await setup.both(["--cacert", try LabFiles.write(identity.chain[0].pem, to: setup.directory + "/self.pem")])
        #expect(pair.curl.status == 0 && pair.ours.status == 0, "\(pair.summary)")
    }

    // MARK: - Files that are not what the option wants

    /// A file given where a certificate (or key) belongs, and what our one line says.
    struct FileRow: Sendable, CustomTestStringConvertible {
        let name: String
        /// The options, given the file's path.
        let arguments: @Sendable (String) -> [String]
        let content: @Sendable () throws -> [UInt8]
        /// The line after `servertrust: get: `, `{}` standing for the path.
        let says: String
        /// curl's exit code for the same arguments, when curl has the option.
        let curlStatus: Int32?
        var testDescription: String { name }
    }

    static func leafKey() throws -> LabKey { try LabKey.shared(.p256, slot: 346) }
    static func certificatePEM() throws -> String {
        try LabCertificate.issue(LabPKI.leafSpec(host: host, keyAlgorithm: .p256), subjectKey: leafKey()).pem
    }

    static let text: @Sendable () throws -> [UInt8] = { Array("# servers\nwww.example.test 443\n".utf8) }
    static let pkcs12: @Sendable () throws -> [UInt8] = {
        let key = try PlainMessagesTests.leafKey()
        return try LabPKCS12.create(
            certificate: try LabCertificate.issue(LabPKI.leafSpec(host: host, keyAlgorithm: .p256), subjectKey: key),
            key: key, chain: [], password: "pw")
    }
    static let privateKeyPEM: @Sendable () throws -> [UInt8] = { Array(try PlainMessagesTests.leafKey().privateKeyPEM().utf8) }

    static let fileRows: [FileRow] = [
        FileRow(
            name: "--cacert: text", arguments: { ["--cacert", $0] }, content: text, says: "--cacert {}: not a certificate: looks like text", curlStatus: 77),
        FileRow(
            name: "--cacert: PKCS#12", arguments: { ["--cacert", $0] }, content: pkcs12, says: "--cacert {}: not a certificate: looks like PKCS#12",
            curlStatus: 77),
        FileRow(
            name: "--cacert: a private key (PEM)", arguments: { ["--cacert", $0] }, content: privateKeyPEM,
            says: "--cacert {}: not a certificate: looks like a private key (PEM PRIVATE KEY)", curlStatus: 77),
        FileRow(
            name: "--cacert: a private key (DER)", arguments: { ["--cacert", $0] }, content: { try PlainMessagesTests.leafKey().privateKeyDER() },
            says: "--cacert {}: not a certificate: looks like a private key (DER)", curlStatus: 77),
        FileRow(
            name: "--cacert: a public key (PEM)", arguments: { ["--cacert", $0] },
            content: { Array(LabPEM.encode(try PlainMessagesTests.leafKey().publicKeyInfoDER, label: "PUBLIC KEY").utf8) },
            says: "--cacert {}: not a certificate: looks like a public key (PEM PUBLIC KEY)", curlStatus: 77),
        FileRow(
            name: "--cacert: an empty file", arguments: { ["--cacert", $0] }, content: { [] },
            says: "--cacert {}: not a certificate: looks like an empty file", curlStatus: 77),
        // Bytes that are none of these keep the parser's account (it may be a damaged certificate).
        FileRow(
            name: "--cacert: random bytes", arguments: { ["--cacert", $0] }, content: { [0x30, 0x82, 0x01, 0x00, 0x30, 0x01, 0xFF] },
            says: "--cacert {}: DER ", curlStatus: 77),
        FileRow(
            name: "--anchors: text", arguments: { ["--anchors", $0] }, content: text, says: "--anchors {}: not a certificate: looks like text", curlStatus: nil),
        FileRow(
            name: "--pinned-cert: PKCS#12", arguments: { ["--mode", "certificate", "--pinned-cert", $0] }, content: pkcs12,
            says: "--pinned-cert {}: not a certificate: looks like PKCS#12", curlStatus: nil),
        FileRow(
            name: "--proxy-cacert: text", arguments: { ["--proxy", "https://127.0.0.1:9", "--proxy-cacert", $0] }, content: text,
            says: "--proxy-cacert {}: not a certificate: looks like text", curlStatus: nil),
        FileRow(
            name: "--cert: text", arguments: { ["--cert", $0] }, content: text, says: "--cert {}: not a certificate or PKCS#12: looks like text", curlStatus: 58
        ),
        FileRow(
            name: "--cert: a private key", arguments: { ["--cert", $0] }, content: privateKeyPEM,
            says: "--cert {}: not a certificate: looks like a private key (PEM PRIVATE KEY) (give the certificate with --cert and its key with --key)",
            curlStatus: 58),
        FileRow(
            name: "--cert: a certificate without its key", arguments: { ["--cert", $0] }, content: { Array(try PlainMessagesTests.certificatePEM().utf8) },
            says: "--cert {}: a certificate without its private key (give the key with --key FILE, or use a PKCS#12 file)", curlStatus: 58),
        FileRow(
            name: "--cert: PKCS#12 without its password", arguments: { ["--cert", $0, "--cert-type", "P12"] }, content: pkcs12,
            says: "--cert {}: needs a password (--cert FILE:PASSWORD, or --pass env:NAME or file:PATH)", curlStatus: 58),
        FileRow(
            name: "--cert-type PEM for a PKCS#12 file", arguments: { ["--cert", $0 + ":pw", "--cert-type", "PEM"] }, content: pkcs12,
            says: "--cert-type PEM, but --cert {} is PKCS#12", curlStatus: 58),
        FileRow(
            name: "--pinnedpubkey: a certificate, not a key", arguments: { ["-k", "--pinnedpubkey", $0] },
            content: { Array(try PlainMessagesTests.certificatePEM().utf8) },
            says: "--pinnedpubkey {}: not a public key: looks like a certificate (PEM CERTIFICATE); curl wants a PUBLIC KEY", curlStatus: 90),
        FileRow(
            name: "--pinnedpubkey: text", arguments: { ["-k", "--pinnedpubkey", $0] }, content: text,
            says: "--pinnedpubkey {}: not a public key: looks like text", curlStatus: 90),
    ]

    @Test("a file that is not what the option wants: exit 2, one line saying what it looks like, nothing sent", arguments: fileRows)
    func notACertificate(_ row: FileRow) async throws {
        let setup = try Setup(keySlot: 114)
        defer { setup.server.stop() }
        let path = try LabFiles.write(try row.content(), to: setup.directory + "/given")
        let ours = try await CLIRunner.run(["get", setup.url, "--resolve", setup.resolve] + row.arguments(path), environment: setup.environment)
        #expect(ours.status == 2, "\(ours.stderr)")
        #expect(ours.stdout.isEmpty && ours.stderr.split(separator: "\n").count == 1, "\(ours.stderr)")
        #expect(ours.stderr.hasPrefix("servertrust: get: " + row.says.replacingOccurrences(of: "{}", with: path)), "\(ours.stderr)")
        #expect(setup.server.statistics.connectionsAccepted == 0)
        // curl refuses the same file too, with its own code for it (77: CA file; 58: client
        // certificate; 90: pinned key, after connecting: ours is refused before).
        if let curlStatus = row.curlStatus {
            let curl = try await CLIRunner.run(
                ["-sS", "--resolve", setup.resolve] + row.arguments(path) + [setup.url],
                environment: setup.environment, executable: CurlBeside.curl)
            #expect(curl.status == curlStatus, "curl: \(curl.stderr)")
        }
    }

    @Test("evaluate: a chain file or --anchors that is not a certificate says what it looks like (exit 2)")
    func evaluateNotACertificate() async throws {
        let directory = try CLIRunner.temporaryDirectory()
        let notes = try LabFiles.write(try Self.text(), to: directory + "/notes.txt")
        let chain = try LabFiles.write(try Self.certificatePEM(), to: directory + "/chain.pem")
        let p12 = try LabFiles.write(try Self.pkcs12(), to: directory + "/client.p12")
        let asChain = try await CLIRunner.run(["evaluate", notes, "--host", Self.host])
        #expect(asChain.status == 2 && asChain.stderr == "servertrust: evaluate: \(notes): not a certificate: looks like text\n", "\(asChain.stderr)")
        let asAnchors = try await CLIRunner.run(["evaluate", chain, "--host", Self.host, "--cacert", p12])
        #expect(
            asAnchors.status == 2 && asAnchors.stderr == "servertrust: evaluate: --cacert \(p12): not a certificate: looks like PKCS#12\n",
            "\(asAnchors.stderr)")
    }

    // MARK: - Oversized response headers

    @Test("a response header field over 100 KiB: exit 4, 'response header larger than 102400 bytes', where curl says 'Out of memory' (27)")
    func oversizedHeaderField() async throws {
        let setup = try Setup(
            keySlot: 114,
            configure: { configuration in
                configuration.handler = { request in
                    let size = Int(request.path.dropFirst()) ?? 0
                    return LabHTTPResponse(headers: [("X-Big", String(repeating: "a", count: size))], body: .bytes(Array("ok".utf8)))
                }
            })
        defer { setup.server.stop() }
        func both(_ size: Int) async throws -> CurlBeside.Pair {
            try await CurlBeside.run(
                setup.server.url(host: Self.host, path: "/\(size)"), resolve: setup.resolve, ["--cacert", setup.root],
                environment: setup.environment)
        }
        let large = try await both(200_000)
        #expect(large.curl.status == 27 && large.curl.stderr.contains("Out of memory"), "\(large.summary)")
        #expect(large.ours.status == 4, "\(large.summary)")
        #expect(
            large.ours.stderr == "servertrust: get: response header larger than 102400 bytes (one header field; libcurl's limit, curl 27)\n",
            "\(large.summary)")
        // The library's own description (what --json's "error" carries) says it too.
        let json = try await CLIRunner.run(
            ["get", setup.server.url(host: Self.host, path: "/200000"), "--resolve", setup.resolve, "--cacert", setup.root, "--json"],
            environment: setup.environment)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(
            object["error"] as? String
                == "transport failure: response headers too large: response header field larger than 102400 bytes (libcurl's CURL_MAX_HTTP_HEADER) (curl 27)",
            "\(json.stdout)")
        // Just under the limit both read it.
        let fits = try await both(100_000)
        #expect(fits.curl.status == 0 && fits.ours.status == 0 && fits.ours.stdout == "ok", "\(fits.summary)")
    }

    @Test("response headers over 300 KiB in all: exit 4 with curl's own words ('Too large response headers'), as curl's 56")
    func oversizedHeaderSection() async throws {
        let setup = try Setup(
            keySlot: 114,
            configure: { configuration in
                configuration.handler = { _ in
                    LabHTTPResponse(headers: (0..<40).map { ("X-Field-\($0)", String(repeating: "b", count: 8_000)) }, body: .bytes(Array("ok".utf8)))
                }
            })
        defer { setup.server.stop() }
        let pair = try await setup.both(["--cacert", setup.root])
        #expect(pair.curl.status == 56 && pair.ours.status == 4, "\(pair.summary)")
        #expect(Self.firstLine(pair.ours).contains("Too large response headers: "), "\(pair.summary)")
    }
}
