import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustURLSession
import Testing
import TrustEvaluation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 19's "done when" for the URLSession drop-in: plain `URLSession` code, whose
/// configuration lists only `ServerTrustURLProtocol` (registered with an `HTTPSession`), reaches
/// a private-CA nginx, is refused by a pinned policy through mitmproxy, and presents a client
/// certificate. These are the only tests that use the class's global registration, so they run
/// one at a time; every other URLSession test routes through `PortRoutedURLProtocol`.
@Suite(
    "URLSession drop-in: private CA, pins through mitmproxy, client certificate", .serialized,
    .enabled(
        if: IntegrationTools.mitmproxySuiteEnabled,
        "mitmdump or nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct URLProtocolDoneWhenTests {
    /// `URLSessionConfiguration.default` with only the protocol class, as an app would write it.
    func plainURLSession() -> URLSession {
        let configuration = URLSessionConfiguration.default
        configuration.protocolClasses = [ServerTrustURLProtocol.self]
        return URLSession(configuration: configuration)
    }

    func session(
        _ decider: ServerTrustDecider, _ lab: NginxLab,
        configure: (inout HTTPSessionConfiguration) -> Void = { _ in }
    ) throws -> HTTPSession {
        var configuration = HTTPSessionConfiguration(serverTrust: decider)
        configuration.resolve = lab.resolve
        configuration.timeout = 30
        configure(&configuration)
        return try HTTPSession(configuration: configuration)
    }

    func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    @Test("a private-CA nginx: reached by data(from:), a completion handler and a delegate")
    func privateCA() async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        ServerTrustURLProtocol.register(try session(try Lab.decider(anchors: try lab.anchors()), lab))
        defer { ServerTrustURLProtocol.unregister() }
        let urlSession = plainURLSession()

        let (data, response) = try await urlSession.data(from: try url(lab.url(.valid, "/?async")))
        #expect(String(decoding: data, as: UTF8.self) == NginxLab.index)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200 && http.value(forHTTPHeaderField: "content-type") == "text/plain")
        #expect(http.url == (try url(lab.url(.valid, "/?async"))))

        let handlerURL = try url(lab.url(.valid, "/?handler"))
        let handled = await urlSession.completion { $0.dataTask(with: handlerURL, completionHandler: $1) }
        #expect(handled.error == nil && handled.http?.statusCode == 200 && handled.text == NginxLab.index, "\(String(describing: handled.error))")

        let recorder = DelegateRecorder()
        let delegated = URLSession(configuration: .serverTrust(), delegate: recorder, delegateQueue: nil)
        delegated.dataTask(with: try url(lab.url(.valid, "/?delegate"))).resume()
        #expect(await recorder.waitForCompletion())
        #expect(recorder.events == [.response(200), .data(NginxLab.index.utf8.count), .complete(nil)], "\(recorder.events)")

        // All three reached nginx, over TLS, decided by the session's policy.
        #expect(await eventually { lab.requests(.valid).filter { $0.contains("GET /?") }.count == 3 }, "\(lab.requests(.valid))")
        #expect(lab.requests(.valid).allSatisfy { $0.contains("TLSv1.3") })

        // The same code with the system roots only: refused, with the decision, nothing sent.
        ServerTrustURLProtocol.register(try session(try ServerTrustDecider.system(), lab))
        let refused = try #require(await urlError { try await urlSession.data(from: try url(lab.url(.valid, "/?system"))) })
        #expect(refused.code == .serverCertificateUntrusted)
        let decision = try #require(refused.serverTrustDecision)
        #expect(decision.failure?.kind == .chainValidationFailed && decision.host == NginxLab.host, "\(decision)")
        #expect(refused.failingURL == (try url(lab.url(.valid, "/?system"))))
        #expect(!lab.requests(.valid).contains { $0.contains("system") })
    }

    @Test("through mitmproxy: intercepted without pins, refused with them before any request")
    func pinnedThroughMitmproxy() async throws {
        let fixture = try await MitmproxyIntegrationTests.Fixture.start()
        defer { fixture.stop() }
        let lab = fixture.lab
        let leaf = try lab.certificate(lab.pki.leaf)
        let intermediate = try lab.certificate(lab.pki.intermediate)
        let urlSession = plainURLSession()
        let target = try url(lab.url(.valid, "/?through-proxy"))

        // The device trusts the proxy's CA: without pins the proxy reads the request.
        ServerTrustURLProtocol.register(try fixture.session(try Lab.decider(anchors: try fixture.deviceAnchors())))
        defer { ServerTrustURLProtocol.unregister() }
        let (data, _) = try await urlSession.data(from: target)
        #expect(String(decoding: data, as: UTF8.self) == NginxLab.index)
        #expect(fixture.mitm.events("request").compactMap { $0.fields["url"] } == [target.absoluteString], "\(fixture.mitm.events())")

        // Pinned (the genuine leaf and intermediate keys): the same code is refused.
        let pins = [SPKIPin(certificate: leaf), SPKIPin(certificate: intermediate)]
        ServerTrustURLProtocol.register(try fixture.session(try Lab.decider(anchors: try fixture.deviceAnchors(), pins: pins)))
        let pinnedURL = try url(lab.url(.valid, "/?pinned"))
        let refused = try #require(await urlError { try await urlSession.data(from: pinnedURL) })
        #expect(refused.code == .serverCertificateUntrusted, "\(refused)")
        let decision = try #require(refused.serverTrustDecision, "\(refused.userInfo)")
        #expect(decision.failure?.kind == .spkiPinningFailed, "\(decision)")
        #expect(decision.servedChain.first?.issuer == fixture.mitmCA.subject, "the refused chain is the proxy's")
        #expect(decision.verifiedChain?.last == fixture.mitmCA, "it validated to the installed proxy CA; only the pins refused it")
        #expect(decision.explanation.contains("sha256/"), "\(decision.explanation)")
        if case .serverTrustRejected? = refused.serverTrustHTTPError {
        } else {
            Issue.record("the HTTPError behind it: \(String(describing: refused.serverTrustHTTPError))")
        }
        // A completion handler gets the same error.
        let handled = await urlSession.completion { $0.dataTask(with: pinnedURL, completionHandler: $1) }
        #expect(handled.urlError?.code == .serverCertificateUntrusted && handled.data == nil && handled.response == nil)

        // mitmdump saw the CONNECTs and its handshakes refused, and no pinned request.
        #expect(fixture.mitm.events("connect").count >= 3)
        #expect(!fixture.mitm.events("client-tls-failed").isEmpty, "\(fixture.mitm.events())")
        #expect(fixture.mitm.events("request").count == 1, "\(fixture.mitm.events())")
        #expect(!lab.requests(.valid).contains { $0.contains("pinned") })

        // The same pins, direct to the genuine nginx: accepted (the pins are the right ones).
        ServerTrustURLProtocol.register(try session(try Lab.decider(anchors: try fixture.deviceAnchors(), pins: pins), lab))
        let (direct, _) = try await urlSession.data(from: try url(lab.url(.valid, "/?pinned-direct")))
        #expect(String(decoding: direct, as: UTF8.self) == NginxLab.index)
    }

    @Test("a client certificate from clientIdentities is presented; without it nginx answers 400")
    func clientCertificate() async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        let whoami = try url(lab.url(.clientCertificate, "/whoami"))
        let identity = try lab.clientIdentity()
        ServerTrustURLProtocol.register(
            try session(try Lab.decider(anchors: try lab.anchors()), lab) {
                $0.clientIdentities = [NginxLab.host: identity]
            })
        defer { ServerTrustURLProtocol.unregister() }
        let urlSession = plainURLSession()
        let (data, response) = try await urlSession.data(from: whoami)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "client CN=nginx client,O=ServerTrust Lab verify=SUCCESS\n")

        ServerTrustURLProtocol.register(try session(try Lab.decider(anchors: try lab.anchors()), lab))
        let (refusal, refusedResponse) = try await urlSession.data(from: whoami)
        #expect((refusedResponse as? HTTPURLResponse)?.statusCode == 400)
        #expect(String(decoding: refusal, as: UTF8.self).contains("No required SSL certificate was sent"))
        #expect(await eventually { lab.requests(.clientCertificate).count == 2 })
        #expect(lab.requests(.clientCertificate).first?.contains("\"SUCCESS\"") == true, "\(lab.requests(.clientCertificate))")
    }

    @Test("with no session registered nothing is sent: the request fails, it never falls back to Foundation's HTTP")
    func unregisteredFailsClosed() async throws {
        let lab = try await NginxLab.started()
        defer { lab.stop() }
        ServerTrustURLProtocol.unregister()
        let urlSession = plainURLSession()
        let target = try url(lab.url(.valid, "/?unregistered"))
        let refused = try #require(await urlError { try await urlSession.data(from: target) })
        #expect(refused.code == .unsupportedURL && refused.localizedDescription.contains("register"), "\(refused)")
        // A plain-HTTP URL is claimed too.
        let plain = try #require(await urlError { try await urlSession.data(from: try url("http://127.0.0.1:\(lab.port(.valid))/?plain")) })
        #expect(plain.code == .unsupportedURL)
        try await Task.sleep(for: .milliseconds(200))
        #expect(lab.requests(.valid).isEmpty, "\(lab.requests(.valid))")
    }
}
