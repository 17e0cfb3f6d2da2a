import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustURLSession
import Synchronization
import TrustEvaluation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Support for the tests of `ServerTrustURLProtocol`: plain `URLSession` code against the nginx
// lab, plus a second nginx ("extras", same host name and chain as the lab's `valid` site) with
// the endpoints those tests need: an echo of the request body, WebDAV PUT, slow, trickling and
// stalling responses, a 401 with a challenge, a redirect loop, a redirect to plain HTTP.

/// The protocol class the tests register: it routes each request to the session registered for
/// its port, so tests running in parallel (each with its own nginx ports) never share the
/// global registration of ``ServerTrustURLProtocol``. Only ``URLProtocolDoneWhenTests`` uses
/// the global one.
final class PortRoutedURLProtocol: ServerTrustURLProtocol {
    private static let sessions = Mutex<[Int: HTTPSession]>([:])

    override class func session(for request: URLRequest) -> HTTPSession? {
        guard let port = request.url?.port else { return nil }
        return sessions.withLock { $0[port] }
    }

    static func route(_ ports: [UInt16], to session: HTTPSession) {
        sessions.withLock { table in for port in ports { table[Int(port)] = session } }
    }

    static func unroute(_ ports: [UInt16]) {
        sessions.withLock { table in for port in ports { table[Int(port)] = nil } }
    }
}

/// The nginx lab with its extras, and URL sessions served through ``PortRoutedURLProtocol``.
final class URLProtocolLab: Sendable {
    let lab: NginxLab
    let extras: NginxInstance
    /// Where WebDAV PUT writes (`/put/NAME` → `directory/NAME`).
    var putDirectory: String { lab.directory + "/put" }

    /// The extras' TLS port and plain-HTTP port.
    var extrasPort: UInt16 { extras.ports[0] }
    var plainPort: UInt16 { extras.ports[1] }

    static func started() async throws -> URLProtocolLab { try await offPool { try URLProtocolLab() } }

    /// Locations for the session-settings tests, on the TLS and the plain server alike (so
    /// Foundation's own loader can be run against the plain one): the fields a request
    /// arrived with, a response 10 s late, and a Basic-protected page.
    static func sessionSettingsLocations(_ directory: String) -> String {
        """
                        location = /fields {
                            default_type text/plain;
                            return 200 "x-api-key=[$http_x_api_key] authorization=[$http_authorization] content-type=[$content_type] method=[$request_method]\\n";
                        }
                        location = /sleep { default_type text/plain; echo_sleep 10; echo "late"; }
                        location = /jar {
                            add_header Set-Cookie "a=1; Path=/" always;
                            add_header Set-Cookie "b=2; Path=/" always;
                            default_type text/plain;
                            return 200 "cookie=[$http_cookie]\\n";
                        }
                        location /private/ {
                            root \(directory)/html;
                            index index.txt;
                            default_type text/plain;
                            auth_basic "lab";
                            auth_basic_user_file \(directory)/htpasswd;
                        }
        """
    }

    /// An nginx location sending "tick 1" … "tick 6", flushed one by one, `seconds` apart.
    static func trickle(_ path: String, every seconds: String) -> String {
        let ticks = (1...5).map { "echo \"tick \($0)\"; echo_flush; echo_sleep \(seconds);" }.joined(separator: " ")
        return """
                                location = \(path) {
                                    default_type text/plain;
                                    \(ticks) echo "tick 6";
                                }
            """
    }

    init() throws {
        let lab = try NginxLab()
        do {
            let directory = lab.directory
            try FileManager.default.createDirectory(atPath: directory + "/put", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: directory + "/extras", withIntermediateDirectories: true)
            var big = ""
            for line in 0..<60_000 { big += "big line \(line)\n" }
            try Data(big.utf8).write(to: URL(fileURLWithPath: directory + "/extras/big.txt"))
            guard IntegrationTools.nginxEchoModule != nil else {
                throw IntegrationError("the nginx echo module is missing (apt-get install libnginx-mod-http-echo)")
            }
            extras = try NginxInstance.start(prefix: directory + "/extras-prefix", portCount: 2) { ports in
                """
                        server {
                            listen 127.0.0.1:\(ports[0]) ssl;
                            server_name \(NginxLab.host);
                            ssl_certificate \(directory)/valid.pem;
                            ssl_certificate_key \(directory)/leaf.key;
                            ssl_protocols TLSv1.2 TLSv1.3;
                            root \(directory)/extras;
                            access_log \(directory)/logs/extras.log servertrust;
                            client_max_body_size 0;
                            client_body_buffer_size 16m;
                            client_body_in_single_buffer on;
                            location = /echo {
                                default_type application/octet-stream;
                                add_header X-Method $request_method always;
                                add_header X-Request-Content-Type "$content_type" always;
                                add_header X-App-Header "$http_x_app_header" always;
                                echo_read_request_body;
                                echo_request_body;
                            }
                            location /put/ {
                                alias \(directory)/put/;
                                dav_methods PUT;
                                create_full_put_path on;
                                dav_access user:rw;
                            }
                            location = /slow {
                                default_type text/plain;
                                echo_sleep 10; echo "late"; echo_flush; echo_sleep 0.5; echo "later";
                            }
                \(Self.trickle("/trickle", every: "0.5"))
                \(Self.trickle("/trickle-slow", every: "2"))
                            location = /stall-body {
                                default_type text/plain;
                                echo "first"; echo_flush; echo_sleep 10; echo "second"; echo_flush; echo_sleep 0.5; echo "third";
                            }
                            location = /unauthorized {
                                add_header WWW-Authenticate 'Bearer realm="api", error="invalid_token"' always;
                                default_type text/plain;
                                return 401 "token expired\\n";
                            }
                            location = /redirect-loop { return 302 /redirect-loop; }
                            location = /to-http { return 302 http://\(NginxLab.host):\(ports[1])/; }
                            location = /to-valid { return 301 https://\(NginxLab.host):\(lab.port(.valid))/; }
                \(Self.sessionSettingsLocations(directory))
                            location = /cookies {
                                add_header Set-Cookie "a=1; Path=/" always;
                                add_header Set-Cookie "b=2; Path=/" always;
                                default_type text/plain;
                                return 200 "cookie=[$http_cookie]\\n";
                            }
                        }
                        server {
                            listen 127.0.0.1:\(ports[1]);
                            server_name \(NginxLab.host);
                            access_log \(directory)/logs/plain.log servertrust;
                \(Self.sessionSettingsLocations(directory))
                            location / { default_type text/plain; return 200 "plain http\\n"; }
                        }

                """
            }
        } catch {
            lab.stop()
            throw error
        }
        self.lab = lab
    }

    func stop() {
        PortRoutedURLProtocol.unroute(ports)
        extras.stop()
        lab.stop()
    }

    /// Every port of both nginx instances.
    var ports: [UInt16] { NginxLab.Site.allCases.map { lab.port($0) } + extras.ports }

    /// `https://www.nginx.test:EXTRAS/path`.
    func extrasURL(_ path: String) -> URL { url("https://\(NginxLab.host):\(extrasPort)\(path)") }

    /// A lab site's URL.
    func url(_ site: NginxLab.Site, _ path: String = "/") -> URL { url(lab.url(site, path)) }

    private func url(_ text: String) -> URL {
        // The lab's URLs are well formed; an unparsable one is a test bug, reported as a bad URL.
        URL(string: text) ?? URL(fileURLWithPath: "/invalid-test-url")
    }

    /// The lines nginx logged for the extras.
    var extrasRequests: [String] { lab.nginx.accessLog("extras") }

    /// How many TCP connections to the extras are open on the client's side (ESTABLISHED in
    /// `/proc/net/tcp`, remote address 127.0.0.1:port); -1 when the table cannot be read. A
    /// connection the client tore down leaves that state at once; one whose transfer ran to its
    /// end stays in it, pooled for keep-alive.
    var openConnectionsToExtras: Int {
        // procfs reports a size of 0: read to the end (`String(contentsOfFile:)` stops at 4 KB).
        guard let handle = FileHandle(forReadingAtPath: "/proc/net/tcp") else { return -1 }
        defer { try? handle.close() }
        let table = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        let hex = String(extrasPort, radix: 16, uppercase: true)
        let remote = "0100007F:" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2] == remote && fields[3] == "01"
        }.count
    }

    /// A session trusting the lab's roots (plus `pins`), every host resolved to nginx.
    func httpSession(pins: [SPKIPin] = [], configure: (inout HTTPSessionConfiguration) -> Void = { _ in }) throws -> HTTPSession {
        var configuration = HTTPSessionConfiguration(serverTrust: try Lab.decider(anchors: try lab.anchors(), pins: pins))
        configuration.resolve = lab.resolve + extras.ports.map { "\(NginxLab.host):\($0):127.0.0.1" }
        configuration.timeout = 30
        configure(&configuration)
        return try HTTPSession(configuration: configuration)
    }

    /// A plain `URLSession` whose configuration lists only ``PortRoutedURLProtocol``, its
    /// requests routed to `session`.
    func urlSession(_ session: HTTPSession, delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        PortRoutedURLProtocol.route(ports, to: session)
        let configuration = URLSessionConfiguration.default
        configuration.protocolClasses = [PortRoutedURLProtocol.self]
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }
}

/// What a `URLSessionDataDelegate` heard, in order.
final class DelegateRecorder: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: the state is behind the Mutex; NSObject is not marked Sendable.
    enum Event: Equatable, CustomStringConvertible {
        case response(Int)
        case data(Int)
        case complete(URLError.Code?)
        var description: String {
            switch self {
            case .response(let status): return "response \(status)"
            case .data(let count): return "data \(count)"
            case .complete(let code): return "complete \(code.map { "\($0.rawValue)" } ?? "ok")"
            }
        }
    }

    private let state = Mutex<(events: [Event], body: Data, error: (any Error)?)>(([], Data(), nil))
    private let done = DispatchSemaphore(value: 0)

    var events: [Event] { state.withLock { $0.events } }
    var body: Data { state.withLock { $0.body } }
    var error: (any Error)? { state.withLock { $0.error } }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? -1
        state.withLock { $0.events.append(.response(status)) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLock {
            $0.events.append(.data(data.count))
            $0.body.append(data)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLock {
            $0.events.append(.complete((error as? URLError)?.code))
            $0.error = error
        }
        done.signal()
    }

    /// Waits (off the cooperative pool) for the completion; `false` after `seconds`.
    func waitForCompletion(seconds: Double = 30) async -> Bool {
        let done = self.done
        return (try? await offPool { done.wait(timeout: .now() + seconds) == .success }) ?? false
    }
}

/// A completion-handler task's three values, awaited.
struct CompletionResult: @unchecked Sendable {
    // @unchecked Sendable: the values are read only after the handler has run.
    let data: Data?
    let response: URLResponse?
    let error: (any Error)?

    var http: HTTPURLResponse? { response as? HTTPURLResponse }
    var urlError: URLError? { error as? URLError }
    var text: String { String(decoding: data ?? Data(), as: UTF8.self) }
}

extension URLSession {
    /// `dataTask(with:completionHandler:)` / `uploadTask(with:…completionHandler:)` awaited:
    /// `make` creates the task with the handler; the task is resumed here.
    func completion(_ make: (URLSession, @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> URLSessionTask)
        async -> CompletionResult
    {
        await withCheckedContinuation { (continuation: CheckedContinuation<CompletionResult, Never>) in
            let task = make(self) { data, response, error in
                continuation.resume(returning: CompletionResult(data: data, response: response, error: error))
            }
            task.resume()
        }
    }
}

/// Runs `body` and returns the `URLError` it throws (`nil` if it succeeds or throws something else).
func urlError<T>(_ body: () async throws -> T) async -> URLError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? URLError
    }
}
