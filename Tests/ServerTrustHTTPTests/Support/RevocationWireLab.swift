import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import TrustEvaluation

/// The servers of the end-to-end revocation tests, all on 127.0.0.1: a CRL distribution point
/// (``CRLServer``: nginx over plain HTTP, with its misbehaving answers and an access log), and
/// one nginx with a TLS server per situation, each presenting a chain whose certificates name
/// CRLs on that distribution point:
///
/// - root → issuing CA A (distribution point `/crl/root.crl`) → leaves whose distribution
///   point is the situation's URL (`/crl/issuing.crl`, a forged, a stale or another partition's
///   CRL, an oversized or never-ending answer, a slow one, a server that is down);
/// - root → issuing CA B, revoked by the root's CRL → a leaf (`/crl/b.crl`);
/// - stapling servers (`ssl_stapling_file`, responses made by `openssl ocsp`) over TLS 1.2 only
///   and TLS 1.3 only, stapling `good`, `revoked`, or a response signed by a certificate the
///   issuer never delegated OCSP to; their leaf's own CRL URL is never published, so only the
///   staple can settle it; two of them also ask for a client certificate.
final class RevocationWireLab: Sendable {
    static let host = "revocation.lab.test"
    static let index = "revocation lab\n"

    /// What a leaf's distribution point serves.
    enum Point: String, CaseIterable, Sendable {
        /// The issuing CA's current CRL (revoking ``Site/revokedLeaf``).
        case issuing = "/crl/issuing.crl"
        /// A CRL in the issuing CA's name signed by another key.
        case forged = "/crl/forged.crl"
        /// The issuing CA's CRL, past its nextUpdate.
        case stale = "/crl/stale.crl"
        /// The issuing CA's CRL for another partition (issuingDistributionPoint
        /// `/crl/partition-2.crl`).
        case partition = "/crl/partition-1.crl"
        /// 200 KiB announced by Content-Length.
        case oversizedAnnounced = "/crl/big.crl"
        /// 1 MiB without Content-Length.
        case oversized = "/unbounded"
        /// A body that never ends.
        case neverEnding = "/never-ending"
        /// The issuing CA's CRL at 256 bytes per second.
        case slow = "/slow/issuing.crl"
        /// Never published (404).
        case missing = "/crl/staple-leaf.crl"
        /// A port nothing listens on.
        case serverDown = "/down.crl"
    }

    /// A TLS server: its leaf's distribution point, its issuing CA, and the staple it sends.
    enum Site: String, CaseIterable, Sendable {
        case good
        case revokedLeaf = "revoked-leaf"
        case revokedIntermediate = "revoked-intermediate"
        case forged, stale, partition
        case oversizedAnnounced = "oversized-announced"
        case oversized
        case neverEnding = "never-ending"
        case serverDown = "server-down"
        case slow
        case stapleGood12 = "staple-good-1.2"
        case stapleGood13 = "staple-good-1.3"
        case stapleRevoked12 = "staple-revoked-1.2"
        case stapleRevoked13 = "staple-revoked-1.3"
        case stapleUndelegated12 = "staple-undelegated-1.2"
        case stapleUndelegated13 = "staple-undelegated-1.3"
        case stapleRevokedClientAuth12 = "staple-revoked-client-auth-1.2"
        case stapleRevokedClientAuth13 = "staple-revoked-client-auth-1.3"
        case stapleGoodClientAuth12 = "staple-good-client-auth-1.2"
        case stapleGoodClientAuth13 = "staple-good-client-auth-1.3"

        var point: Point {
            switch self {
            case .good, .revokedLeaf: return .issuing
            case .revokedIntermediate: return .issuing  // unused: its leaf names /crl/b.crl
            case .forged: return .forged
            case .stale: return .stale
            case .partition: return .partition
            case .oversizedAnnounced: return .oversizedAnnounced
            case .oversized: return .oversized
            case .neverEnding: return .neverEnding
            case .serverDown: return .serverDown
            case .slow: return .slow
            default: return .missing
            }
        }

        enum Staple: String { case good, revoked, undelegated }
        var staple: Staple? {
            switch self {
            case .stapleGood12, .stapleGood13, .stapleGoodClientAuth12, .stapleGoodClientAuth13: return .good
            case .stapleRevoked12, .stapleRevoked13, .stapleRevokedClientAuth12, .stapleRevokedClientAuth13: return .revoked
            case .stapleUndelegated12, .stapleUndelegated13: return .undelegated
            default: return nil
            }
        }

        /// The only protocol a stapling server speaks (`nil`: 1.2 and 1.3).
        var tlsVersion: String? {
            guard staple != nil else { return nil }
            return rawValue.hasSuffix("1.2") ? "TLSv1.2" : "TLSv1.3"
        }

        var asksForClientCertificate: Bool { rawValue.contains("client-auth") }
    }

    let directory: String
    let crl: CRLServer
    let nginx: NginxInstance
    let root: Certificate
    /// The issuing CA A (its CRL is `/crl/issuing.crl`).
    let issuingCA: LabIssuer
    /// The root (its CRL is `/crl/root.crl`).
    let rootIssuer: LabIssuer
    /// Where the `serverDown` distribution point points: a port held closed for the lab's
    /// life (a port merely found free can be taken by a server another test starts, which then
    /// answers the fetch).
    let downPort: LabClosedPort
    /// Serial numbers, for the tests' expectations.
    let revokedLeafSerial: [UInt8]
    /// A client identity any of the client-certificate servers accepts.
    let clientIdentity: Identity

    static func started() async throws -> RevocationWireLab { try await offPool { try RevocationWireLab() } }

    private init() throws {
        let now = Int64(Date().timeIntervalSince1970)
        let day = LabClock.day
        let directory = NSTemporaryDirectory() + "servertrust-revocation-lab-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/html", withIntermediateDirectories: true)
        self.directory = directory
        let crl = try CRLServer.start()
        self.crl = crl
        do {
            let down = try LabClosedPort()
            downPort = down
            func url(_ point: Point) -> String {
                point == .serverDown ? "http://127.0.0.1:\(down.port)\(point.rawValue)" : crl.url(point.rawValue)
            }
            let key = { (n: Int) in try LabKey.shared(.p256, slot: 3 * 151 + n) }
            let rootKey = try key(0)
            let rootCertificate = try LabCertificate.issue(
                LabCertificateSpec(
                    subject: LabName([("O", "ServerTrust Lab"), ("CN", "Revocation Lab Root")]), notBefore: now - 365 * day, notAfter: now + 365 * day,
                    extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]),
                subjectKey: rootKey)
            let rootIssuer = LabIssuer(certificate: rootCertificate, key: rootKey)
            self.rootIssuer = rootIssuer
            func ca(_ name: String, _ keyNumber: Int) throws -> LabIssuer {
                let caKey = try key(keyNumber)
                let certificate = try LabCertificate.issue(
                    LabCertificateSpec(
                        subject: LabName([("O", "ServerTrust Lab"), ("CN", name)]), notBefore: now - 30 * day, notAfter: now + 365 * day,
                        extensions: [
                            .basicConstraints(ca: true, pathLength: 0), .keyUsage([.digitalSignature, .keyCertSign, .cRLSign]),
                            .subjectKeyIdentifier(), .authorityKeyIdentifier(), .crlDistributionPoints([crl.url("/crl/root.crl")]),
                        ]),
                    subjectKey: caKey, issuer: rootIssuer)
                return LabIssuer(certificate: certificate, key: caKey)
            }
            let issuingCA = try ca("Revocation Lab Issuing CA A", 1)
            self.issuingCA = issuingCA
            let revokedCA = try ca("Revocation Lab Issuing CA B", 2)
            let leafKey = try key(3)
            func leaf(_ distributionPoint: String, issuer: LabIssuer) throws -> LabCertificate {
                try LabCertificate.issue(
                    LabPKI.leafSpec(
                        host: Self.host, keyAlgorithm: .p256, notBefore: now - day, notAfter: now + 30 * day,
                        extraExtensions: [.crlDistributionPoints([distributionPoint])]),
                    subjectKey: leafKey, issuer: issuer)
            }
            var leaves: [Site: [LabCertificate]] = [:]
            for site in Site.allCases {
                switch site {
                case .revokedIntermediate: leaves[site] = [try leaf(crl.url("/crl/b.crl"), issuer: revokedCA), revokedCA.certificate]
                default: leaves[site] = [try leaf(url(site.point), issuer: issuingCA), issuingCA.certificate]
                }
            }
            guard let revokedLeaf = leaves[.revokedLeaf]?.first, let stapleLeaf = leaves[.stapleGood12]?.first else {
                throw IntegrationError("no leaves were made")
            }
            revokedLeafSerial = revokedLeaf.serialNumber

            // The CRLs, current at the real time (connections are decided on the system clock).
            func crlDER(_ signer: LabIssuer, revoking serials: [[UInt8]] = [], number: Int, thisUpdate: Int64 = now - 60, nextUpdate: Int64 = now + 3 * day)
                throws -> [UInt8]
            {
                try LabCRL.issue(
                    LabCRLSpec(
                        entries: serials.map { LabRevokedEntry(serial: $0, revocationDate: now - day, reason: 1) }, thisUpdate: thisUpdate,
                        nextUpdate: nextUpdate, number: number), signer: signer)
            }
            try crl.publish(try crlDER(rootIssuer, revoking: [revokedCA.certificate.serialNumber], number: 3), as: "root.crl")
            try crl.publish(try crlDER(issuingCA, revoking: [revokedLeafSerial], number: 7), as: "issuing.crl")
            try crl.publish(try crlDER(revokedCA, number: 1), as: "b.crl")
            try crl.publish(try crlDER(LabIssuer(certificate: issuingCA.certificate, key: try key(4)), number: 8), as: "forged.crl")
            try crl.publish(try crlDER(issuingCA, number: 5, thisUpdate: now - 8 * day, nextUpdate: now - day), as: "stale.crl")
            var partition = LabCRLSpec(thisUpdate: now - 60, nextUpdate: now + 3 * day, number: 9)
            partition.issuingDistributionPoint = LabIssuingDistributionPoint(name: .fullName([.uri(crl.url("/crl/partition-2.crl"))]))
            try crl.publish(try LabCRL.issue(partition, signer: issuingCA), as: "partition-1.crl")
            try crl.publish([UInt8](repeating: 0x30, count: 200 << 10), as: "big.crl")

            // Staples, made by `openssl ocsp` as a responder from an index file.
            let undelegated = try LabOCSP.responderCertificate(
                issuer: issuingCA, key: try key(5), name: "Revocation Lab Undelegated Responder", extendedKeyUsage: ["serverAuth"],
                notBefore: now - day, notAfter: now + 30 * day)
            let staples: [Site.Staple: [UInt8]] = [
                .good: try OpenSSLOCSP.respond(for: stapleLeaf, issuer: issuingCA, revoked: false, in: directory + "/ocsp-good"),
                .revoked: try OpenSSLOCSP.respond(for: stapleLeaf, issuer: issuingCA, revoked: true, in: directory + "/ocsp-revoked"),
                .undelegated: try OpenSSLOCSP.respond(
                    for: stapleLeaf, issuer: issuingCA, signer: LabIssuer(certificate: undelegated, key: try key(5)), revoked: false,
                    in: directory + "/ocsp-undelegated"),
            ]
            // Every stapling site serves the same leaf (the staple names its serial).
            for site in Site.allCases where site.staple != nil { leaves[site] = [stapleLeaf, issuingCA.certificate] }

            root = try Certificate(derEncoded: rootCertificate.der)
            let clientKey = try key(6)
            let clientCertificate = try LabCertificate.issue(
                LabCertificateSpec(
                    subject: LabName([("CN", "revocation lab client")]), notBefore: now - day, notAfter: now + 30 * day,
                    extensions: [.basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["clientAuth"])]),
                subjectKey: clientKey)
            clientIdentity = try Identity(
                certificate: try Certificate(derEncoded: clientCertificate.der), privateKey: try PrivateKey(pemEncoded: try clientKey.privateKeyPEM()),
                chain: [])

            let keyPath = try LabFiles.write(try leafKey.privateKeyPEM(), to: directory + "/leaf.key")
            var chains: [Site: String] = [:]
            for site in Site.allCases { chains[site] = try LabFiles.writeBundle(leaves[site] ?? [], to: directory + "/\(site.rawValue).pem") }
            var stapleFiles: [Site.Staple: String] = [:]
            for (kind, der) in staples { stapleFiles[kind] = try LabFiles.write(der, to: directory + "/\(kind.rawValue).ocsp") }
            try Data(Self.index.utf8).write(to: URL(fileURLWithPath: directory + "/html/index.txt"))
            nginx = try NginxInstance.start(prefix: directory + "/nginx", portCount: Site.allCases.count) { ports in
                zip(Site.allCases, ports).enumerated().map { number, served in
                    let (site, port) = served
                    var options = "ssl_protocols \(site.tlsVersion ?? "TLSv1.2 TLSv1.3"); ssl_session_cache shared:revocation_\(number):1m;"
                    if let staple = site.staple, let file = stapleFiles[staple] { options += " ssl_stapling on; ssl_stapling_file \(file);" }
                    if site.asksForClientCertificate { options += " ssl_verify_client optional_no_ca;" }
                    return """
                                server {
                                    listen 127.0.0.1:\(port) ssl;
                                    server_name \(Self.host);
                                    ssl_certificate \(chains[site] ?? "");
                                    ssl_certificate_key \(keyPath);
                                    \(options)
                                    root \(directory)/html;
                                    index index.txt;
                                    access_log \(directory)/nginx/logs/\(site.rawValue).log servertrust;
                                }

                        """
                }.joined()
            }
        } catch {
            crl.stop()
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    func stop() {
        nginx.stop()
        crl.stop()
        downPort.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func port(_ site: Site) -> UInt16 { nginx.ports[Site.allCases.firstIndex(of: site) ?? 0] }
    func url(_ site: Site, _ path: String = "/") -> String { "https://\(Self.host):\(port(site))\(path)" }
    var resolve: [String] { Site.allCases.map { "\(Self.host):\(port($0)):127.0.0.1" } }
    /// The requests a TLS server logged (a handshake the client aborted logs none).
    func requests(_ site: Site) -> [String] { nginx.accessLog(site.rawValue) }
    /// The CRL server's logged requests for a distribution point's path.
    func fetches(_ path: String) -> [String] { crl.requests(for: path) }

    /// A provider of its own (its own cache), with a 64 KiB size cap, so each test counts its
    /// own fetches and the oversized answers are over the cap.
    static func provider() throws -> FetchingCRLProvider {
        FetchingCRLProvider(cache: try CRLCache(), configuration: FetchingCRLProvider.Configuration(maximumSize: 64 << 10))
    }

    /// The revocation setting under test: the mode and depth, this provider, a 3 s budget.
    static func revocation(_ mode: RevocationMode, depth: RevocationDepth = .chain, provider: FetchingCRLProvider) -> RevocationPolicy {
        RevocationPolicy(mode: mode, depth: depth, fetching: .provider(provider), timeBudget: .seconds(3))
    }

    /// A session trusting only the lab's root, revocation as given, on `clock`.
    func session(
        _ revocation: RevocationPolicy, clock: TrustClock = .system, _ configure: (inout HTTPSessionConfiguration) -> Void = { _ in }
    ) throws -> HTTPSession {
        let decider = ServerTrustDecider(policy: TrustPolicy(HostTrustPolicy(revocation: revocation)), anchors: TrustStore([root]), clock: clock)
        var configuration = HTTPSessionConfiguration(serverTrust: decider)
        configuration.resolve = resolve
        configuration.timeout = 30
        configure(&configuration)
        return try HTTPSession(configuration: configuration)
    }
}

/// OCSP responses made by OpenSSL's own responder (`openssl ocsp -index`), not by the code
/// under test nor by the Lab's encoder: a request for the leaf, then the response an index
/// file gives it, signed by the issuer or by `signer`.
enum OpenSSLOCSP {
    static func respond(for leaf: LabCertificate, issuer: LabIssuer, signer: LabIssuer? = nil, revoked: Bool, in directory: String) throws -> [UInt8] {
        let openssl = try IntegrationTools.require(IntegrationTools.openssl, "openssl", install: "apt-get install openssl")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let issuerPath = try LabFiles.write(issuer.certificate.pem, to: directory + "/issuer.pem")
        let leafPath = try LabFiles.write(leaf.pem, to: directory + "/leaf.pem")
        let responder = signer ?? issuer
        let signerPath = try LabFiles.write(responder.certificate.pem, to: directory + "/signer.pem")
        let signerKey = try LabFiles.write(try responder.key.privateKeyPEM(), to: directory + "/signer.key")
        // index.txt: status, expiry, revocation date[,reason], serial (hex), file, subject.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyMMddHHmmss'Z'"
        let expiry = formatter.string(from: Date().addingTimeInterval(30 * 86_400))
        let revokedAt = formatter.string(from: Date().addingTimeInterval(-86_400))
        let serial = leaf.serialNumber.map { String(format: "%02X", $0) }.joined()
        let line =
            revoked
            ? "R\t\(expiry)\t\(revokedAt),keyCompromise\t\(serial)\tunknown\t/CN=\(RevocationWireLab.host)\n"
            : "V\t\(expiry)\t\t\(serial)\tunknown\t/CN=\(RevocationWireLab.host)\n"
        try Data(line.utf8).write(to: URL(fileURLWithPath: directory + "/index.txt"))
        try run(openssl, ["ocsp", "-issuer", issuerPath, "-cert", leafPath, "-no_nonce", "-reqout", directory + "/request.der"])
        try run(
            openssl,
            [
                "ocsp", "-index", directory + "/index.txt", "-CA", issuerPath, "-rsigner", signerPath, "-rkey", signerKey, "-reqin",
                directory + "/request.der", "-respout", directory + "/response.der", "-ndays", "2",
            ])
        return Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/response.der")))
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw IntegrationError("openssl \(arguments.prefix(1).joined()) failed: \(String(decoding: output, as: UTF8.self))")
        }
    }
}
