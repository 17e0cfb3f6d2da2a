import Foundation
import ServerTrustLab

#if canImport(Glibc)
    import Glibc
#endif

/// A CRL distribution point on 127.0.0.1: nginx serving files over plain HTTP and HTTPS, with
/// the misbehaving answers a CRL fetcher must survive (redirect chains, an error status, a body
/// larger than the cap with and without Content-Length, a body that never ends, a slow one), and
/// an access log tests read to count the requests that reached it.
///
/// Files are published into `files/` while nginx runs (nginx reads them per request, and sends
/// `ETag` / `Last-Modified` for them and answers conditional requests with 304).
final class CRLServer: Sendable {
    let directory: String
    let nginx: NginxInstance

    var plainPort: UInt16 { nginx.ports[0] }
    var tlsPort: UInt16 { nginx.ports[1] }

    /// `http://127.0.0.1:PORT/path`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(plainPort)\(path)" }
    /// `https://127.0.0.1:PORT/path` (a self-signed certificate the fetcher does not verify).
    func httpsURL(_ path: String) -> String { "https://127.0.0.1:\(tlsPort)\(path)" }

    /// Starts nginx (the echo module is required for the unbounded answers).
    static func start() throws -> CRLServer { try CRLServer() }

    private init() throws {
        guard IntegrationTools.nginxEchoModule != nil else {
            throw IntegrationError("the nginx echo module is missing (apt-get install libnginx-mod-http-echo)")
        }
        let directory = NSTemporaryDirectory() + "servertrust-crl-server-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/files", withIntermediateDirectories: true)
        self.directory = directory
        do {
            let key = try LabKey.shared(.p256, slot: 3 * 138)
            let certificate = try LabCertificate.issue(
                LabCertificateSpec(subject: .cn("crl.lab.test"), extensions: [.subjectAltName([.forHost("127.0.0.1")])]), subjectKey: key)
            let chain = try LabFiles.write(certificate.pem, to: directory + "/server.pem")
            let keyPath = try LabFiles.write(try key.privateKeyPEM(), to: directory + "/server.key")
            // 1 MiB of digits: more than the caps the tests set, without Content-Length.
            let unbounded = "echo_duplicate 104857 \"0123456789\";"
            let ticks = (1...60).map { _ in "echo \"tick\"; echo_flush; echo_sleep 1;" }.joined(separator: " ")
            nginx = try NginxInstance.start(prefix: directory + "/nginx", portCount: 2) { ports in
                let locations = """
                            root \(directory)/files;
                            access_log \(directory)/nginx/logs/crl.log servertrust;
                            location /crl/ { default_type application/pkix-crl; }
                            location = /hop1 { return 302 /crl/issuing.crl; }
                            location = /hop2 { return 302 /hop1; }
                            location = /hop3 { return 302 /hop2; }
                            location = /hop4 { return 302 /hop3; }
                            location = /to-ftp { return 302 ftp://127.0.0.1/issuing.crl; }
                            location = /error { return 500 "broken\\n"; }
                            location = /set-cookie { add_header Set-Cookie "session=1; Path=/" always; return 302 /echo-headers; }
                            location = /echo-headers {
                                default_type text/plain;
                                echo "cookie=[$http_cookie] authorization=[$http_authorization] encoding=[$http_accept_encoding]";
                            }
                            location = /unbounded { default_type application/pkix-crl; \(unbounded) }
                            location = /never-ending { default_type application/pkix-crl; \(ticks) }
                            location /slow/ { alias \(directory)/files/crl/; limit_rate 256; }

                    """
                return """
                            server {
                                listen 127.0.0.1:\(ports[0]);
                                server_name crl.lab.test;
                    \(locations)
                            }
                            server {
                                listen 127.0.0.1:\(ports[1]) ssl;
                                server_name crl.lab.test;
                                ssl_certificate \(chain);
                                ssl_certificate_key \(keyPath);
                    \(locations)
                            }

                    """
            }
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// Writes `bytes` as `files/crl/NAME`, atomically (nginx never serves half a file), with a
    /// modification time `age` seconds ago so that its `Last-Modified` changes with each version.
    func publish(_ bytes: [UInt8], as name: String, age: Int = 0) throws {
        try FileManager.default.createDirectory(atPath: directory + "/files/crl", withIntermediateDirectories: true)
        let path = directory + "/files/crl/" + name
        let temporary = path + ".tmp"
        try Data(bytes).write(to: URL(fileURLWithPath: temporary))
        var times = [timespec(tv_sec: time(nil) - age, tv_nsec: 0), timespec(tv_sec: time(nil) - age, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, temporary, &times, 0)
        guard rename(temporary, path) == 0 else { throw IntegrationError("cannot publish \(path)") }
    }

    /// Every request nginx logged, in order.
    var requests: [String] { nginx.accessLog("crl") }

    /// The logged requests for `path` (GET or HEAD), with their status: `"GET /path HTTP/1.1" 200`.
    func requests(for path: String) -> [String] {
        requests.filter { $0.contains("\"GET \(path) ") || $0.contains("\"HEAD \(path) ") }
    }

    func stop() {
        nginx.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
