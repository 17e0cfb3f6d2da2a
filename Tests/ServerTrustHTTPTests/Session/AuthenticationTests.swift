import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

@Suite("authentication challenges: Basic, Digest, client certificates")
struct AuthenticationTests {
    let host = "www.example.test"

    static func basicServer(_ pki: LabPKI, seen: Recorder<String?>) throws -> LabTLSServer {
        let expected = "Basic " + Data("alice:secret".utf8).base64EncodedString()
        return try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                seen.append(request.header("Authorization"))
                if request.header("Authorization") == expected { return .text("welcome alice") }
                return LabHTTPResponse(
                    status: 401, headers: [("WWW-Authenticate", "Basic realm=\"lab realm\", charset=\"UTF-8\"")],
                    body: .bytes(Array("who are you?".utf8)))
            }
        }
    }

    @Test("Basic: 401 without credentials, the realm in the challenge, then success")
    func basicReactive() async throws {
        let pki = try Lab.pki(host: host)
        let seen = Recorder<String?>()
        let server = try Self.basicServer(pki, seen: seen)
        defer { server.stop() }
        let challenges = Recorder<AuthenticationChallenge>()
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        let url = server.url(host: host, path: "/private")

        let unauthenticated = try await session.get(url)
        #expect(unauthenticated.statusCode == 401 && unauthenticated.text == "who are you?")

        var request = HTTPRequest(.get, url)
        request.challengeHandler = { challenge, _ in
            challenges.append(challenge)
            return .credential(.user("alice", password: "secret", persistence: .forSession))
        }
        let response = try await session.send(request)
        #expect(response.statusCode == 200 && response.text == "welcome alice")
        // The request's own handler is asked about the server's certificate on each of its
        // connections (their own, never shared: ConnectionScope.isolated), then about the 401.
        #expect(challenges.all.first?.protectionSpace.authenticationMethod == .serverTrust)
        let challenge = try #require(challenges.all.first { $0.protectionSpace.authenticationMethod == .httpBasic })
        #expect(
            challenge.protectionSpace
                == ProtectionSpace(
                    host: host, port: Int(server.port), protocol: "https", realm: "lab realm",
                    authenticationMethod: .httpBasic))
        #expect(challenge.previousFailureCount == 0)
        #expect(challenge.failureResponse?.statusCode == 401)
        #expect("\(challenge.protectionSpace)" == "httpBasic https://\(host):\(server.port) realm=\"lab realm\"")

        // Remembered for the session: default handling answers the next 401 by itself.
        #expect(try await session.get(url).text == "welcome alice")
        // 1 unauthenticated, 2 for the handler's credential, 2 for the remembered one.
        #expect(seen.all.count == 5)
    }

    @Test("Basic: preemptive credentials go out with the first request")
    func basicPreemptive() async throws {
        let pki = try Lab.pki(host: host)
        let seen = Recorder<String?>()
        let server = try Self.basicServer(pki, seen: seen)
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        var request = HTTPRequest(.get, server.url(host: host))
        request.credential = .user("alice", password: "secret", persistence: .none)
        request.sendsCredentialPreemptively = true
        #expect(try await session.send(request).statusCode == 200)
        #expect(seen.all.count == 1)
        // Not preemptive: the credential answers the 401.
        request.sendsCredentialPreemptively = false
        #expect(try await session.send(request).statusCode == 200)
        #expect(seen.all.count == 3)
    }

    struct Refusal: Error {}

    @Test("the handler's four outcomes and previousFailureCount")
    func handlerOutcomes() async throws {
        let pki = try Lab.pki(host: host)
        let seen = Recorder<String?>()
        let server = try Self.basicServer(pki, seen: seen)
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)])
        let url = server.url(host: host)

        // A wrong credential, then cancel when it failed once.
        let counts = Recorder<Int>()
        var wrong = HTTPRequest(.get, url)
        wrong.challengeHandler = { challenge, _ in
            // Without a session-level handler, the task handler sees server trust too.
            guard challenge.protectionSpace.authenticationMethod == .httpBasic else { return .disposition(.performDefaultHandling) }
            counts.append(challenge.previousFailureCount)
            if challenge.previousFailureCount > 0 { return .disposition(.cancelAuthenticationChallenge) }
            return .credential(.user("alice", password: "wrong", persistence: .none))
        }
        let cancelled = await failure { try await session.send(wrong) }
        guard case .challengeCancelled(let space)? = cancelled else {
            Issue.record("expected challengeCancelled, got \(String(describing: cancelled))")
            return
        }
        #expect(space.realm == "lab realm")
        #expect(counts.all == [0, 1])

        // An error: the request fails with it.
        var erroring = HTTPRequest(.get, url)
        erroring.challengeHandler = { _, _ in .error(Refusal()) }
        guard case .challengeFailed(_, let underlying)? = await failure({ try await session.send(erroring) }) else {
            Issue.record("expected challengeFailed")
            return
        }
        #expect(underlying is Refusal)

        // Later, through the completion.
        var later = HTTPRequest(.get, url)
        later.challengeHandler = { _, completion in
            Task {
                try? await Task.sleep(nanoseconds: 100_000_000)
                completion(.useCredential(.user("alice", password: "secret", persistence: .none)))
            }
            return .later
        }
        #expect(try await session.send(later).text == "welcome alice")

        // Reject the protection space: the 401 comes back.
        var rejecting = HTTPRequest(.get, url)
        rejecting.challengeHandler = { _, _ in .disposition(.rejectProtectionSpace) }
        #expect(try await session.send(rejecting).statusCode == 401)
    }

    /// `challengeTimeout` bounds the wait for a ``ChallengeOutcome/later`` answer; a timeout too
    /// long for a timer (`.infinity`: wait for the answer) waits for the answer, for a
    /// connection-level challenge as for a 401, and never traps.
    @Test(
        "a challenge answered later waits for its answer under any challengeTimeout, infinite included",
        arguments: [Double.infinity, 1e12, 30], [ProtectionSpace.AuthenticationMethod.serverTrust, .httpBasic])
    func laterAnswerUnderLongTimeouts(_ timeout: Double, _ method: ProtectionSpace.AuthenticationMethod) async throws {
        let pki = try Lab.pki(host: host)
        let server = try Self.basicServer(pki, seen: Recorder<String?>())
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)]) { $0.challengeTimeout = timeout }
        let asked = Recorder<ProtectionSpace.AuthenticationMethod>()
        var request = HTTPRequest(.get, server.url(host: host, path: "/private"))
        request.challengeHandler = { challenge, completion in
            let kind = challenge.protectionSpace.authenticationMethod
            asked.append(kind)
            guard kind == method else {
                if kind == .serverTrust { return .disposition(.performDefaultHandling) }
                return .credential(.user("alice", password: "secret", persistence: .none))
            }
            // From a dispatch thread, not a task: the serverTrust rows block the lane thread in
            // the handshake until the answer comes, and on a 2-core machine running the whole
            // suite the cooperative pool can be busy past the Lab server's 10 s handshake limit.
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) {
                if kind == .serverTrust {
                    completion(.performDefaultHandling)
                } else {
                    completion(.useCredential(.user("alice", password: "secret", persistence: .none)))
                }
            }
            return .later
        }
        let response = try await session.send(request)
        #expect(response.text == "welcome alice" && response.trustDecision?.isTrusted == true)
        #expect(asked.all.contains(method))
    }

    @Test("permanent credentials are written to a 0600 file and reloaded")
    func permanentCredentials() async throws {
        let pki = try Lab.pki(host: host)
        let seen = Recorder<String?>()
        let server = try Self.basicServer(pki, seen: seen)
        defer { server.stop() }
        let directory = try Lab.temporaryDirectory()
        let path = directory + "/credentials.json"
        let first = try Lab.session(trusting: pki, resolving: [(host, server)]) { configuration in
            configuration.credentialStorePath = path
            configuration.taskChallengeHandler = { _, _ in .credential(.user("alice", password: "secret", persistence: .permanent)) }
        }
        #expect(try await first.get(server.url(host: host)).statusCode == 200)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self).contains("\"user\":\"alice\""))

        let second = try Lab.session(trusting: pki, resolving: [(host, server)]) { $0.credentialStorePath = path }
        #expect(try await second.get(server.url(host: host)).statusCode == 200)
    }

    @Test("Digest (SHA-256): curl answers the nonce once the realm's credential is known")
    func digest() async throws {
        let pki = try Lab.pki(host: host)
        let realm = "digest realm"
        let nonce = "dcd98b7102dd2f0e8b11d0f600bfb0c093"
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                if let header = request.header("Authorization"), header.hasPrefix("Digest "),
                    DigestCheck.verify(header, method: request.method, user: "bob", password: "hunter2", realm: realm, nonce: nonce)
                {
                    return .text("digest ok")
                }
                return LabHTTPResponse(
                    status: 401,
                    headers: [
                        (
                            "WWW-Authenticate", "Digest realm=\"\(realm)\", qop=\"auth\", algorithm=SHA-256, nonce=\"\(nonce)\", opaque=\"5ccc069c\""
                        )
                    ])
            }
        }
        defer { server.stop() }
        let methods = Recorder<ProtectionSpace.AuthenticationMethod>()
        let session = try Lab.session(trusting: pki, resolving: [(host, server)]) { configuration in
            configuration.taskChallengeHandler = { challenge, _ in
                methods.append(challenge.protectionSpace.authenticationMethod)
                return .credential(.user("bob", password: "hunter2", persistence: .none))
            }
        }
        let response = try await session.get(server.url(host: host, path: "/dir/index.html"))
        #expect(response.text == "digest ok")
        #expect(methods.all == [.serverTrust, .httpDigest])
    }

    @Test("a proxy's 407 becomes a proxy challenge; the answered credential opens the tunnel")
    func proxyAuthentication() async throws {
        let pki = try Lab.pki(host: host)
        let server = try Lab.server(.init(pki: pki), name: "origin")
        defer { server.stop() }
        let interception = try Lab.pki(host: "mitm.invalid", keySlot: 45)
        var relayConfiguration = LabMITMRelay.Configuration(mode: .httpProxy, interceptionCA: interception.rootIssuer, name: "lab proxy")
        relayConfiguration.hostOverrides = [host: "127.0.0.1"]
        relayConfiguration.proxyCredentials = .init(user: "proxy", password: "pw")
        let relay = try LabMITMRelay.started(relayConfiguration)
        defer { relay.stop() }
        let spaces = Recorder<ProtectionSpace>()
        var configuration = HTTPSessionConfiguration(serverTrust: try Lab.decider(anchors: try Lab.anchors(interception)))
        configuration.proxy = ProxyConfiguration(url: relay.proxyURL)
        let refused = try HTTPSession(configuration: configuration)
        guard case .proxyRefused(407, let transport)? = await failure({ try await refused.get(server.url(host: host)) }) else {
            Issue.record("expected the tunnel to be refused (407) without credentials")
            return
        }
        #expect(transport.kind == .proxyFailed, "\(transport)")
        configuration.taskChallengeHandler = { challenge, _ in
            spaces.append(challenge.protectionSpace)
            guard challenge.protectionSpace.isProxy else { return .disposition(.performDefaultHandling) }
            return .credential(.user("proxy", password: "pw", persistence: .none))
        }
        let session = try HTTPSession(configuration: configuration)
        let response = try await session.get(server.url(host: host))
        #expect(response.text == "hello from origin")
        let proxySpace = try #require(spaces.all.first { $0.isProxy })
        #expect(proxySpace.realm == "lab proxy" && proxySpace.authenticationMethod == .httpBasic && proxySpace.port == Int(relay.port))
        #expect(relay.statistics.proxyAuthenticationFailures == 2)
    }

    static func clientPKI() throws -> (LabPKI, LabCertificate, Identity) {
        let clientPKI = try Lab.pki(host: "client.example.test", keySlot: 44)
        let leaf = try Lab.clientLeaf(clientPKI)
        let identity = try Identity(
            certificate: try Lab.certificate(leaf),
            privateKey: try PrivateKey(pemEncoded: try clientPKI.leafKey.privateKeyPEM()),
            chain: [try Lab.certificate(clientPKI.intermediate)])
        return (clientPKI, leaf, identity)
    }

    @Test("a server that requires a client certificate gets the preset identity")
    func clientCertificatePreset() async throws {
        let pki = try Lab.pki(host: host)
        let (clientPKI, clientLeaf, identity) = try Self.clientPKI()
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.clientAuthentication = .init(trustedCertificates: [clientPKI.root], mode: .required)
        }
        defer { server.stop() }
        let anonymous = try Lab.session(trusting: pki, resolving: [(host, server)])
        let error = await failure { try await anonymous.get(server.url(host: host)) }
        guard case .transport(let transport)? = error else {
            Issue.record("expected a handshake failure, got \(String(describing: error))")
            return
        }
        // The server's `certificate_required` alert, or, when its close overtakes the
        // alert (TLS 1.3: the client has finished its handshake and is sending), a lost
        // connection.
        #expect([.clientCertificateRequired, .connectionLost].contains(transport.kind), "\(transport)")
        #expect(server.statistics.requestsServed == 0)

        let authenticated = try Lab.session(trusting: pki, resolving: [(host, server)]) { $0.clientIdentities = [host: identity] }
        #expect(try await authenticated.get(server.url(host: host)).statusCode == 200)
        #expect(server.statistics.connections.filter(\.handshakeCompleted).map(\.clientCertificates) == [[clientLeaf, clientPKI.intermediate]])
    }

    @Test(
        "clientIdentities host keys match case-insensitively; keys differing only in case are refused",
        arguments: [
            "WWW.EXAMPLE.TEST", "Www.Example.Test",
        ])
    func clientIdentityKeyCase(_ key: String) async throws {
        let pki = try Lab.pki(host: host)
        let (clientPKI, clientLeaf, identity) = try Self.clientPKI()
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.clientAuthentication = .init(trustedCertificates: [clientPKI.root], mode: .required)
        }
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(host, server)]) { $0.clientIdentities = [key: identity] }
        #expect(try await session.get(server.url(host: host)).statusCode == 200)
        #expect(server.statistics.connections.filter(\.handshakeCompleted).map(\.clientCertificates) == [[clientLeaf, clientPKI.intermediate]])
        // The session's configuration is kept as given.
        #expect(session.configuration.clientIdentities.keys.sorted() == [key])

        let conflicting = #expect(throws: HTTPError.self) {
            try Lab.session(trusting: pki, resolving: [(host, server)]) { $0.clientIdentities = [key: identity, host: identity] }
        }
        guard case .invalidRequest(let reason)? = conflicting else {
            Issue.record("expected invalidRequest, got \(String(describing: conflicting))")
            return
        }
        #expect(reason.contains("clientIdentities") && reason.contains("differ only in case"), "\(reason)")
    }

    @Test("a client-certificate challenge carries the acceptable CA names; a PKCS#12 identity answers it")
    func clientCertificateChallenge() async throws {
        let pki = try Lab.pki(host: host)
        let (clientPKI, clientLeaf, _) = try Self.clientPKI()
        let pfx = try LabPKCS12.create(certificate: clientLeaf, key: clientPKI.leafKey, chain: [clientPKI.intermediate], password: "pfx pass")
        let identity = try Identity(pkcs12: pfx, password: "pfx pass")
        let server = try Lab.server(.init(pki: pki)) { configuration in
            configuration.clientAuthentication = .init(trustedCertificates: [clientPKI.root], mode: .required)
        }
        defer { server.stop() }
        let spaces = Recorder<ProtectionSpace>()
        let session = try Lab.session(trusting: pki, resolving: [(host, server)]) { configuration in
            configuration.sessionChallengeHandler = { challenge in
                spaces.append(challenge.protectionSpace)
                guard challenge.protectionSpace.authenticationMethod == .clientCertificate else { return .performDefaultHandling }
                return .useCredential(.identity(identity, persistence: .forSession))
            }
        }
        #expect(try await session.get(server.url(host: host)).statusCode == 200)
        let methods = spaces.all.map(\.authenticationMethod)
        #expect(methods == [.serverTrust, .clientCertificate])
        let names = spaces.all.last?.distinguishedNames ?? []
        #expect(names == [try Lab.certificate(clientPKI.root).subject.rfc4514])
        // Remembered for the session: a new connection presents it without asking.
        var fresh = HTTPRequest(.get, server.url(host: host))
        fresh.usesFreshConnection = true
        #expect(try await session.send(fresh).statusCode == 200)
        #expect(server.statistics.requestsServed == 2)
    }
}

/// RFC 7616 Digest with SHA-256 and qop=auth, checked the way a server does.
enum DigestCheck {
    static func verify(_ header: String, method: String, user: String, password: String, realm: String, nonce: String) -> Bool {
        var fields: [String: String] = [:]
        let body = header.dropFirst("Digest ".count)
        var rest = Substring(body)
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = String(rest[..<equals]).lowercased()
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                let end = rest.firstIndex(of: "\"") ?? rest.endIndex
                value = String(rest[..<end])
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = String(rest[..<end])
                rest = rest[end...]
            }
            fields[name] = value
        }
        func hex(_ text: String) -> String { SHA256.hash(Array(text.utf8)).map { String(format: "%02x", $0) }.joined() }
        guard fields["username"] == user, fields["realm"] == realm, fields["nonce"] == nonce, let uri = fields["uri"],
            let nc = fields["nc"], let cnonce = fields["cnonce"], fields["qop"] == "auth", let response = fields["response"]
        else {
            return false
        }
        let ha1 = hex("\(user):\(realm):\(password)")
        let ha2 = hex("\(method):\(uri)")
        return response == hex("\(ha1):\(nonce):\(nc):\(cnonce):auth:\(ha2)")
    }
}
