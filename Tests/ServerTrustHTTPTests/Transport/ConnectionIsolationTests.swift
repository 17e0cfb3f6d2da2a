import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

@testable import ServerTrustHTTP

/// A request's own challenge handler decides its own connection and nothing else, HTTP/2
/// included (issue 23 item 4): the server trust it grants and the client certificate it
/// presents never serve another request, by keep-alive, TLS resumption or HTTP/2
/// multiplexing. Against nginx over HTTP/2 and HTTP/1.1, with request B sent while request
/// A's connection is open (A streams a slow body) or after A has finished, TLS resumption on
/// and off.
@Suite(
    "a request's own handler decides only its own connection: HTTP/2 and HTTP/1.1, concurrent and sequential",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct ConnectionIsolationTests {
    static let host = IsolationServer.host

    /// One situation: the protocol nginx speaks, whether B is sent while A's connection is
    /// open, and whether the session resumes TLS sessions.
    struct Case: Sendable, CustomTestStringConvertible {
        var http2: Bool
        var concurrent: Bool
        var resumption: Bool

        var testDescription: String {
            "\(http2 ? "HTTP/2" : "HTTP/1.1"), \(concurrent ? "concurrent" : "sequential"), resumption \(resumption ? "on" : "off")"
        }

        static let all: [Case] = [true, false].flatMap { http2 in
            [true, false].flatMap { concurrent in [true, false].map { Case(http2: http2, concurrent: concurrent, resumption: $0) } }
        }
    }

    /// A session whose decider trusts the server (its root) or refuses it (another root).
    static func session(_ server: IsolationServer, trustsServer: Bool, resumption: Bool) throws -> HTTPSession {
        let root = trustsServer ? server.pki : try Lab.pki(host: Self.host, keySlot: 82)
        var configuration = HTTPSessionConfiguration(serverTrust: try Lab.decider(anchors: try Lab.anchors(root)))
        configuration.resolve = server.resolve
        configuration.tlsSessionResumption = resumption
        configuration.timeout = 30
        return try HTTPSession(configuration: configuration)
    }

    /// Request A: its own handler trusts the server (or leaves it to the session's decider)
    /// and answers the client-certificate challenge with `identity` (remembered for the
    /// session by default, as `Credential.identity` makes it), or with none.
    static func requestA(
        _ url: String, trustsServer: Bool, identity: Identity?, asked: Recorder<ProtectionSpace.AuthenticationMethod>
    ) -> HTTPRequest {
        var request = HTTPRequest(.get, url)
        request.challengeHandler = { challenge, _ in
            let method = challenge.protectionSpace.authenticationMethod
            asked.append(method)
            switch method {
            case .serverTrust: return trustsServer ? .credential(.trust) : .disposition(.performDefaultHandling)
            case .clientCertificate: return identity.map { .credential(.identity($0)) } ?? .disposition(.rejectProtectionSpace)
            default: return .disposition(.performDefaultHandling)
            }
        }
        return request
    }

    /// Runs A, then B with `sendB` while A's body still arrives (concurrent: A asks for
    /// /slow, which sends its first line and then waits 6 s before the last, so B is sent well
    /// within it on a loaded machine, while A's stream is open on its connection) or after A
    /// has finished (sequential: A asks for /whoami). Returns A's response head, its whole
    /// body and B's outcome.
    static func run<B: Sendable>(
        _ server: IsolationServer, _ session: HTTPSession, http2: Bool, concurrent: Bool,
        requestA: (String) -> HTTPRequest, sendB: () async throws(HTTPError) -> B
    ) async throws -> (head: HTTPResponse, body: String, b: Result<B, HTTPError>) {
        if concurrent {
            let streamed = try await session.stream(requestA(server.url(http2: http2, "/slow")))
            let b = await outcome(sendB)
            let body = String(decoding: try await streamed.body.collect(upTo: 1 << 20), as: UTF8.self)
            return (streamed.head, body, b)
        }
        let response = try await session.send(requestA(server.url(http2: http2, "/whoami")))
        return (response, response.text, await outcome(sendB))
    }

    static func outcome<B>(_ body: () async throws(HTTPError) -> B) async -> Result<B, HTTPError> {
        do throws(HTTPError) {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    @Test("trust granted by a request's handler never serves a request under the session's decider", arguments: Case.all)
    func handlerTrustStaysOnItsConnection(_ situation: Case) async throws {
        let server = try await IsolationServer.started()
        defer { server.stop() }
        let session = try Self.session(server, trustsServer: false, resumption: situation.resumption)
        defer { session.invalidate() }
        let asked = Recorder<ProtectionSpace.AuthenticationMethod>()
        let (head, body, b) = try await Self.run(
            server, session, http2: situation.http2, concurrent: situation.concurrent,
            requestA: { Self.requestA($0, trustsServer: true, identity: nil, asked: asked) }
        ) { () async throws(HTTPError) in
            try await session.get(server.url(http2: situation.http2, "/whoami?request=B"))
        }
        #expect(head.statusCode == 200 && head.trustDecision?.evaluator == "challenge handler", "\(head)")
        #expect(head.httpVersion == (situation.http2 ? "HTTP/2" : "HTTP/1.1"))
        #expect(body.hasPrefix(situation.concurrent ? "start" : "dn=[]"), "\(body)")

        // B has no handler: the session's decider decides it, and refuses the server. Nothing
        // of B reached nginx.
        switch b {
        case .success(let response):
            Issue.record("request B was answered on a connection its session never accepted: \(response.statusCode) \(response.text)")
        case .failure(let error):
            let rejection = try #require(error.rejection, "\(error)")
            // The other root has the same name as the server's, so the path ends in a bad signature.
            #expect(
                rejection.evaluator == "DefaultTrustEvaluator" && [.untrustedRoot, .badSignature].contains(rejection.validationFailure?.kind),
                "\(rejection)")
        }
        let logged = await server.requests(http2: situation.http2, count: 1)
        #expect(logged.count == 1 && !logged.contains { $0.contains("request=B") }, "\(logged)")
        #expect(asked.all.first == .serverTrust)
    }

    @Test(
        "a client certificate a request's handler presents is never presented for another request",
        arguments: Case.all, [true, false])
    func handlerClientCertificateStaysOnItsConnection(_ situation: Case, sessionTrustsServer: Bool) async throws {
        let server = try await IsolationServer.started()
        defer { server.stop() }
        let session = try Self.session(server, trustsServer: sessionTrustsServer, resumption: situation.resumption)
        defer { session.invalidate() }
        let asked = Recorder<ProtectionSpace.AuthenticationMethod>()
        let (head, body, b) = try await Self.run(
            server, session, http2: situation.http2, concurrent: situation.concurrent,
            requestA: { Self.requestA($0, trustsServer: !sessionTrustsServer, identity: server.clientIdentity, asked: asked) }
        ) { () async throws(HTTPError) in
            try await session.get(server.url(http2: situation.http2, "/whoami?request=B"))
        }
        #expect(head.statusCode == 200, "\(head)")
        if !situation.concurrent {
            // A itself was sent under its certificate.
            #expect(body.hasPrefix("dn=[\(server.clientSubject)] verify=SUCCESS"), "\(body)")
        }
        #expect(asked.all.contains(.clientCertificate), "\(asked.all)")

        switch b {
        case .success(let response):
            guard sessionTrustsServer else {
                Issue.record("B was answered on a connection its session never accepted: \(response.text)")
                return
            }
            // B went out on a connection of its own, with no client certificate, and (with
            // resumption on) did not resume A's TLS session.
            #expect(response.text.hasPrefix("dn=[] verify=NONE"), "B was sent under A's client certificate: \(response.text)")
            #expect(response.text.contains("resumed=."), "\(response.text)")
            #expect(response.trustDecision?.evaluator == "DefaultTrustEvaluator", "\(String(describing: response.trustDecision))")
            if situation.resumption {
                // The session's own TLS sessions still resume, still without a certificate.
                var fresh = HTTPRequest(.get, server.url(http2: situation.http2, "/whoami?request=C"))
                fresh.usesFreshConnection = true
                let c = try await session.send(fresh)
                #expect(c.tlsSessionResumed && c.text.hasPrefix("dn=[] verify=NONE") && c.text.contains("resumed=r"), "\(c.text)")
            }
        case .failure(let error):
            #expect(!sessionTrustsServer, "\(error)")
            #expect(error.rejection?.evaluator == "DefaultTrustEvaluator", "\(error)")
        }
        // In nginx's own words: A's request was the only one with a certificate.
        let expected = sessionTrustsServer ? (situation.resumption ? 3 : 2) : 1
        let logged = await server.requests(http2: situation.http2, count: expected)
        #expect(logged.count == expected, "\(logged)")
        #expect(logged.filter { $0.hasSuffix(" SUCCESS") }.count == 1, "\(logged)")
        #expect(logged.filter { $0.contains("request=B") || $0.contains("request=C") }.allSatisfy { $0.hasSuffix(" NONE") }, "\(logged)")
    }

    @Test("two requests with their own handlers, at once over HTTP/2: each on its own connection, with its own certificate")
    func handlersNeverShare() async throws {
        let server = try await IsolationServer.started()
        defer { server.stop() }
        let session = try Self.session(server, trustsServer: false, resumption: true)
        defer { session.invalidate() }
        let asked = Recorder<ProtectionSpace.AuthenticationMethod>()
        let c = Self.requestA(server.url(http2: true, "/whoami?request=C"), trustsServer: true, identity: nil, asked: asked)
        let (head, _, other) = try await Self.run(
            server, session, http2: true, concurrent: true,
            requestA: { Self.requestA($0, trustsServer: true, identity: server.clientIdentity, asked: asked) }
        ) { () async throws(HTTPError) in
            try await session.send(c)
        }
        #expect(head.statusCode == 200)
        let answer = try other.get()
        #expect(answer.text.hasPrefix("dn=[] verify=NONE") && answer.text.contains("resumed=."), "\(answer.text)")
        #expect(answer.usedNewConnection && answer.trustDecision?.evaluator == "challenge handler")
    }

    @Test("requests without a handler keep sharing their connection and thread after one with a handler")
    func sessionRequestsStillShare() async throws {
        let server = try await IsolationServer.started()
        defer { server.stop() }
        let session = try Self.session(server, trustsServer: true, resumption: true)
        defer { session.invalidate() }
        let url = server.url(http2: true, "/whoami")
        let first = try await session.get(url)
        let asked = Recorder<ProtectionSpace.AuthenticationMethod>()
        _ = try await session.send(Self.requestA(url, trustsServer: false, identity: server.clientIdentity, asked: asked))
        let again = try await session.get(url)
        #expect(first.usedNewConnection && !again.usedNewConnection && again.trustDecision?.isFromEarlierHandshake == true)
        // Many at once: multiplexed on the session's connection (nginx numbers connections).
        let connections = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await session.get(url).text } }
            var seen = Set<String>()
            for try await text in group { seen.insert(String(text.split(separator: " ").first { $0.hasPrefix("connection=") } ?? "")) }
            return seen
        }
        #expect(connections.count == 1, "\(connections)")
        // The session's thread and one thread for requests with their own handlers.
        #expect(session.transferThreadCount == 2)
    }
}

/// The check behind the pools (issue 23 item 4, defence in depth): before a request is sent
/// on a connection, the connection's record must say it was accepted by the decision the
/// request would get now.
extension ConnectionIsolationTests {
    @Test("with the pools merged, a request under the session's decider is refused on a connection a request's handler accepted")
    func admissionRefusesWhatThePoolsWouldKeepApart() async throws {
        let server = try await IsolationServer.started()
        defer { server.stop() }
        for sessionTrustsServer in [false, true] {
            let session = try Self.session(server, trustsServer: sessionTrustsServer, resumption: true)
            defer { session.invalidate() }
            // What the pools prevent: A's transfer in the session's multi handle, where B is
            // multiplexed onto A's connection.
            session.engine.separatesIsolatedTransfers.store(false, ordering: .relaxed)
            let asked = Recorder<ProtectionSpace.AuthenticationMethod>()
            // A holds its stream open for 30 s (/hold), not /slow's 6 s: B must be sent while
            // A's connection is open, and on a loaded CI machine 6 s were once not enough, so B
            // opened a connection of its own (refused there by the decider, which proves
            // nothing about the admission rule). A is dropped, and so cancelled, once B is done.
            var streamedA: HTTPStreamedResponse? = try await session.stream(
                Self.requestA(server.url(http2: true, "/hold"), trustsServer: !sessionTrustsServer, identity: server.clientIdentity, asked: asked))
            let b = await Self.outcome { () async throws(HTTPError) in try await session.get(server.url(http2: true, "/whoami?request=B")) }
            #expect(streamedA?.head.statusCode == 200)
            streamedA = nil
            guard case .failure(let error) = b, let rejection = error.rejection else {
                Issue.record("B was not refused: \(b)")
                continue
            }
            #expect(rejection.evaluator == "transport", "\(rejection)")
            #expect(rejection.reason.contains("another request's challenge handler"), "\(rejection)")
            #expect(rejection.servedChain.first?.subject == (try Lab.certificate(server.pki.leaf)).subject)
        }
        // Nothing of B reached nginx, which answers /whoami at once and would have logged it
        // (the cancelled As are logged only when their 30 s sleeps end).
        let logged = await server.requests(http2: true, count: 0)
        #expect(!logged.contains { $0.contains("request=B") }, "\(logged)")
    }

    @Test("the admission rule, for every scope and every connection record", arguments: AdmissionRow.all)
    func admissionRule(_ row: AdmissionRow) throws {
        let served = ServedChain(certificates: [], host: Self.host, port: 443)
        let record = row.decider.map { ConnectionTrust.Record(.accepted(served, by: "test", "accepted"), by: $0) }
        let admission = ConnectionTrust.admission(of: record, for: row.scope, generation: 2)
        #expect(row.expected.matches(admission), "\(admission)")
    }

    struct AdmissionRow: Sendable, CustomTestStringConvertible {
        var scope: ConnectionScope
        var decider: ConnectionTrust.Decider?
        var expected: Expected
        enum Expected: Sendable {
            case admit, decideAgain, refuse

            func matches(_ admission: ConnectionTrust.Admission) -> Bool {
                switch (admission, self) {
                case (.admit, .admit), (.decideAgain, .decideAgain), (.refuse, .refuse): return true
                default: return false
                }
            }
        }
        var testDescription: String { "\(scope) on \(decider.map { "\($0)" } ?? "an undecided connection"): \(expected)" }

        static let all: [AdmissionRow] = [
            // The session's requests: its current decision serves; an older one, or a resumed
            // connection, is decided again; a request's handler's decision never serves.
            AdmissionRow(scope: .session, decider: .session(generation: 2), expected: .admit),
            AdmissionRow(scope: .session, decider: .session(generation: 1), expected: .decideAgain),
            AdmissionRow(scope: .session, decider: nil, expected: .decideAgain),
            AdmissionRow(scope: .session, decider: .request(7), expected: .refuse),
            AdmissionRow(scope: .fresh, decider: .session(generation: 2), expected: .admit),
            AdmissionRow(scope: .fresh, decider: .session(generation: 1), expected: .decideAgain),
            AdmissionRow(scope: .fresh, decider: nil, expected: .decideAgain),
            AdmissionRow(scope: .fresh, decider: .request(7), expected: .refuse),
            // A request with its own handler: only the connection its own handshake decided.
            AdmissionRow(scope: .isolated(request: 7), decider: .request(7), expected: .admit),
            AdmissionRow(scope: .isolated(request: 7), decider: .request(8), expected: .refuse),
            AdmissionRow(scope: .isolated(request: 7), decider: .session(generation: 2), expected: .refuse),
            AdmissionRow(scope: .isolated(request: 7), decider: nil, expected: .refuse),
        ]
    }
}

/// nginx with two `server` blocks for ``ConnectionIsolationTests/host``: one speaking HTTP/2
/// (ALPN `h2`), one HTTP/1.1 only; both ask for a client certificate without requiring one
/// (`ssl_verify_client optional`), keep TLS sessions, and answer `/whoami` with what they saw
/// of the client and its connection, `/slow` with a body that takes 6 s and `/hold` with one
/// that takes 30 s.
final class IsolationServer: Sendable {
    static let host = "www.isolation.test"
    let pki: LabPKI
    /// The identity request A presents, from a CA nginx accepts for client certificates.
    let clientIdentity: Identity
    /// Its subject as nginx prints it (`$ssl_client_s_dn`).
    let clientSubject = "CN=isolation client"
    let directory: String
    let nginx: NginxInstance

    static func started() async throws -> IsolationServer { try await offPool { try IsolationServer() } }

    init() throws {
        guard IntegrationTools.nginxEchoModule != nil else {
            throw IntegrationError("the nginx echo module is missing (apt-get install libnginx-mod-http-echo)")
        }
        let directory = try Lab.temporaryDirectory()
        self.directory = directory
        do {
            pki = try Lab.pki(host: Self.host, keySlot: 80)
            let clientPKI = try Lab.pki(host: "client.isolation.test", keySlot: 81)
            let clientLeaf = try Lab.clientLeaf(clientPKI, name: "isolation client")
            clientIdentity = try Identity(
                certificate: try Lab.certificate(clientLeaf), privateKey: try PrivateKey(pemEncoded: try clientPKI.leafKey.privateKeyPEM()),
                chain: [try Lab.certificate(clientPKI.intermediate)])
            let chain = try LabFiles.writeBundle(pki.serverChain, to: directory + "/server.pem")
            let key = try LabFiles.write(try pki.leafKey.privateKeyPEM(), to: directory + "/server.key")
            let clientCA = try LabFiles.write(clientPKI.root.pem, to: directory + "/client-ca.pem")
            nginx = try NginxInstance.start(prefix: directory, portCount: 2) { ports in
                var blocks = """
                        log_format isolation '$connection $ssl_session_reused $server_protocol "$request" $status "$ssl_client_s_dn" $ssl_client_verify';

                    """
                for (index, name) in ["h2", "h1"].enumerated() {
                    blocks += """
                            server {
                                listen 127.0.0.1:\(ports[index]) ssl\(index == 0 ? " http2" : "");
                                server_name \(Self.host);
                                ssl_certificate \(chain);
                                ssl_certificate_key \(key);
                                ssl_protocols TLSv1.2 TLSv1.3;
                                ssl_session_cache shared:isolation_\(name):1m;
                                ssl_client_certificate \(clientCA);
                                ssl_verify_client optional;
                                ssl_verify_depth 2;
                                access_log \(directory)/logs/\(name).log isolation;
                                default_type text/plain;
                                location = /whoami {
                                    return 200 "dn=[$ssl_client_s_dn] verify=$ssl_client_verify connection=$connection protocol=$server_protocol resumed=$ssl_session_reused\\n";
                                }
                                location = /slow { echo "start"; echo_flush; echo_sleep 6; echo "end"; }
                                location = /hold { echo "start"; echo_flush; echo_sleep 30; echo "end"; }
                            }

                        """
                }
                return blocks
            }
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    func port(http2: Bool) -> UInt16 { nginx.ports[http2 ? 0 : 1] }
    func url(http2: Bool, _ path: String) -> String { "https://\(Self.host):\(port(http2: http2))\(path)" }
    var resolve: [String] { nginx.ports.map { "\(Self.host):\($0):127.0.0.1" } }

    /// The access log of one server block, once it has `count` lines (or after 5 s).
    func requests(http2: Bool, count: Int) async -> [String] {
        let name = http2 ? "h2" : "h1"
        _ = await eventually { nginx.accessLog(name).count >= count }
        // A moment more, so a line that should not be there has had its chance to appear.
        try? await Task.sleep(for: .milliseconds(200))
        return nginx.accessLog(name)
    }

    func stop() {
        nginx.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
