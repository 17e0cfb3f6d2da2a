import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `URLProtocol` that answers from a script, straight to Foundation's client: it shows what
/// swift-corelibs-foundation itself does with a protocol that is not its own.
final class ScriptedURLProtocol: URLProtocol {
    enum Script: Sendable {
        /// 200, each string one `didLoad`.
        case chunks([String])
        /// 401 with `WWW-Authenticate: Basic`.
        case challenge
    }

    private static let scripts = Mutex<[String: Script]>([:])
    private static let starts = Mutex<[String: Int]>([:])

    static func script(_ url: URL, _ script: Script) { scripts.withLock { $0[url.absoluteString] = script } }
    static func starts(_ url: URL) -> Int { starts.withLock { $0[url.absoluteString] ?? 0 } }

    override class func canInit(with request: URLRequest) -> Bool {
        guard let url = request.url else { return false }
        return scripts.withLock { $0[url.absoluteString] != nil }
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url, let script = Self.scripts.withLock({ $0[url.absoluteString] }) else {
            client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL))
            return
        }
        Self.starts.withLock { $0[url.absoluteString, default: 0] += 1 }
        switch script {
        case .chunks(let chunks):
            if let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:]) {
                client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            }
            for chunk in chunks { client?.urlProtocol(self, didLoad: Data(chunk.utf8)) }
        case .challenge:
            let fields = ["WWW-Authenticate": #"Basic realm="evidence""#]
            if let response = HTTPURLResponse(url: url, statusCode: 401, httpVersion: "HTTP/1.1", headerFields: fields) {
                client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            }
            client?.urlProtocol(self, didLoad: Data("denied".utf8))
        }
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

/// Answers every authentication challenge with a password.
final class CredentialDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        completionHandler(.useCredential, URLCredential(user: "alice", password: "pw", persistence: .none))
    }
}

/// What swift-corelibs-foundation 6.3.1 does with a `URLProtocol` that is not its own: the
/// behaviours behind the choices of `ServerTrustURLProtocol` (its DocC, "What
/// swift-corelibs-foundation does not let a URLProtocol do"). If a Foundation release changes
/// one, its test fails and the choice should be looked at again. (Two more cannot be shown
/// without crashing the test process: finishing a download task, `as! URL` in
/// `_ProtocolClient.urlProtocolDidFinishLoading(_:)`, and reporting a redirect,
/// `fatalError` in `urlProtocol(_:wasRedirectedTo:redirectResponse:)`.)
@Suite(
    "swift-corelibs-foundation and a foreign URLProtocol",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct FoundationURLProtocolBehaviourTests {
    func urlSession(delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        let configuration = URLSessionConfiguration.default
        configuration.protocolClasses = [ScriptedURLProtocol.self]
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    func scripted(_ name: String, _ script: ScriptedURLProtocol.Script) throws -> URL {
        let url = try #require(URL(string: "http://scripted.example.test/\(name)-\(UUID().uuidString)"))
        ScriptedURLProtocol.script(url, script)
        return url
    }

    @Test("didLoad chunks: a completion handler and data(for:) get only the last one, a data delegate all")
    func onlyTheLastChunk() async throws {
        let url = try scripted("chunks", .chunks(["first ", "second"]))
        let (data, _) = try await urlSession().data(from: url)
        #expect(String(decoding: data, as: UTF8.self) == "second")
        let handled = await urlSession().completion { $0.dataTask(with: url, completionHandler: $1) }
        #expect(handled.text == "second")
        let recorder = DelegateRecorder()
        urlSession(delegate: recorder).dataTask(with: url).resume()
        #expect(await recorder.waitForCompletion())
        #expect(String(decoding: recorder.body, as: UTF8.self) == "first second")
    }

    @Test("a 401 answered by the delegate is sent again through Foundation's own HTTP, not the protocol")
    func challengeLeavesTheProtocol() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let url = try #require(URL(string: "http://127.0.0.1:\(lab.plainPort)/evidence"))
        ScriptedURLProtocol.script(url, .challenge)
        let result = await urlSession(delegate: CredentialDelegate()).completion { $0.dataTask(with: url, completionHandler: $1) }
        // The protocol answered once, with the 401; the 200 is from nginx, reached by Foundation
        // itself (`_HTTPURLProtocol`, swapped in by `_ProtocolClient.urlProtocol(_:didReceive:)`),
        // with the credential: outside anything the protocol decides.
        #expect(ScriptedURLProtocol.starts(url) == 1)
        #expect(result.http?.statusCode == 200 && result.text == "plain http\n", "\(String(describing: result.error))")
        #expect(
            await eventually { lab.lab.nginx.accessLog("plain").contains { $0.contains("GET /evidence") && $0.contains("\"alice\"") } },
            "\(lab.lab.nginx.accessLog("plain"))")
    }

    @Test("URLProtocol.registerClass(_:) does not reach URLSession.shared's https requests")
    func registeredClassesComeAfterTheConfiguration() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        PortRoutedURLProtocol.route(lab.ports, to: try lab.httpSession())
        #expect(URLProtocol.registerClass(PortRoutedURLProtocol.self))
        defer { URLProtocol.unregisterClass(PortRoutedURLProtocol.self) }
        // Through the protocol this request would succeed (its session resolves the lab's host);
        // Foundation's own `_HTTPURLProtocol`, first in the default `protocolClasses`, takes it.
        let error = await urlError { try await URLSession.shared.data(from: lab.url(.valid, "/?shared")) }
        #expect(error != nil)
        let (data, _) = try await lab.urlSession(try lab.httpSession()).data(from: lab.url(.valid, "/?configured"))
        #expect(String(decoding: data, as: UTF8.self) == NginxLab.index)
        #expect(!lab.lab.requests(.valid).contains { $0.contains("shared") })
    }

    @Test("a 401 with a challenge, no delegate and no stored credential: the task never completes")
    func challengeWithoutDelegateHangs() async throws {
        let url = try scripted("unanswered", .challenge)
        let done = DispatchSemaphore(value: 0)
        let task = urlSession().dataTask(with: url) { _, _, _ in done.signal() }
        task.resume()
        let completed = try await offPool { done.wait(timeout: .now() + 2) == .success }
        #expect(!completed, "Foundation completed the task: the 401 rename in ServerTrustURLProtocol may no longer be needed")
        #expect(ScriptedURLProtocol.starts(url) == 1)
        task.cancel()
    }
}
