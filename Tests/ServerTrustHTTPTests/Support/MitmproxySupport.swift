import CertificateParsing
import Foundation

/// `mitmdump` (mitmproxy from PyPI) as an HTTP proxy on 127.0.0.1: it generates its CA in its
/// own confdir, re-terminates TLS with leaves minted by that CA, and accepts the nginx upstream
/// (`ssl_insecure`). A small addon maps the test host names to 127.0.0.1 and writes one JSON
/// line per event to a flow log: `connect` (a CONNECT reached it), `client-tls-failed` (the
/// client refused its certificate), `request` and `response` (an HTTP request went through).
final class MitmdumpInstance: Sendable {
    /// Its directory: `conf/` (the CA), `flows.jsonl`, `addon.py`, `mitmdump.out`.
    let directory: String
    /// The proxy port.
    let port: UInt16
    let process: ManagedProcess

    /// `http://127.0.0.1:PORT`.
    var proxyURL: String { "http://127.0.0.1:\(port)" }
    /// The CA certificate a user would install (`mitmproxy-ca-cert.pem`).
    var caPath: String { directory + "/conf/mitmproxy-ca-cert.pem" }
    var flowLogPath: String { directory + "/flows.jsonl" }

    static let addon = """
        import json, os

        LOG = os.environ["SERVERTRUST_FLOW_LOG"]
        HOSTS = dict(item.split("=", 1) for item in os.environ.get("SERVERTRUST_HOSTS", "").split(",") if "=" in item)


        def _write(event, **fields):
            with open(LOG, "a") as log:
                log.write(json.dumps({"event": event, **fields}) + "\\n")


        class FlowLog:
            def http_connect(self, flow):
                _write("connect", host=flow.request.host, port=flow.request.port)

            def server_connect(self, data):
                host, port = data.server.address
                if host in HOSTS:
                    data.server.address = (HOSTS[host], port)

            def tls_failed_client(self, data):
                _write("client-tls-failed", sni=data.context.client.sni or "", error=str(data.conn.error))

            def request(self, flow):
                _write("request", method=flow.request.method, url=flow.request.pretty_url)

            def response(self, flow):
                _write("response", status=flow.response.status_code, url=flow.request.pretty_url)


        addons = [FlowLog()]

        """

    /// Starts mitmdump, retrying on another port if the one picked was taken meanwhile.
    ///
    /// - Parameter hosts: Host names mitmdump connects to 127.0.0.1 instead of resolving them.
    static func start(hosts: [String]) throws -> MitmdumpInstance {
        let mitmdump = try IntegrationTools.require(
            IntegrationTools.mitmdump, "mitmdump",
            install: "python3 -m venv ~/.cache/servertrust-venv && ~/.cache/servertrust-venv/bin/pip install mitmproxy, or set SERVERTRUST_MITMDUMP")
        let directory = NSTemporaryDirectory() + "servertrust-mitmdump-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/conf", withIntermediateDirectories: true)
        do {
            try Data(addon.utf8).write(to: URL(fileURLWithPath: directory + "/addon.py"))
            var lastOutput = ""
            for attempt in 1...5 {
                guard let port = try LoopbackPorts.reserve(1).first else { throw IntegrationError("no free port") }
                try? FileManager.default.removeItem(atPath: directory + "/flows.jsonl")
                let process = try ManagedProcess(
                    name: "mitmdump", executable: mitmdump,
                    arguments: [
                        "--listen-host", "127.0.0.1", "--listen-port", String(port), "--set", "confdir=\(directory)/conf",
                        "--set", "ssl_insecure=true", "--set", "flow_detail=1", "--set", "termlog_verbosity=info",
                        "-s", directory + "/addon.py",
                    ],
                    environment: [
                        "SERVERTRUST_FLOW_LOG": directory + "/flows.jsonl",
                        "SERVERTRUST_HOSTS": hosts.map { "\($0)=127.0.0.1" }.joined(separator: ","),
                        "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1",
                    ],
                    outputPath: directory + "/mitmdump.out")
                let ready = process.wait(timeout: 90) {
                    process.output.contains("proxy listening at 127.0.0.1:\(port)")
                        && FileManager.default.fileExists(atPath: directory + "/conf/mitmproxy-ca-cert.pem")
                        && LoopbackPorts.isListening(port)
                }
                if ready { return MitmdumpInstance(directory: directory, port: port, process: process) }
                process.stop()
                lastOutput = process.output
                guard lastOutput.lowercased().contains("address already in use"), attempt < 5 else { break }
            }
            throw IntegrationError("mitmdump did not start:\n\(lastOutput)")
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    private init(directory: String, port: UInt16, process: ManagedProcess) {
        self.directory = directory
        self.port = port
        self.process = process
    }

    /// Stops mitmdump and removes its directory.
    func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The CA certificate mitmdump generated.
    func caCertificate() throws -> Certificate {
        guard let bytes = FileManager.default.contents(atPath: caPath) else { throw IntegrationError("no \(caPath)") }
        guard let certificate = try Certificate.load(Array(bytes)).first else { throw IntegrationError("no certificate in \(caPath)") }
        return certificate
    }

    /// One flow-log line.
    struct Event: CustomStringConvertible {
        let kind: String
        let fields: [String: String]
        var description: String { "\(kind) \(fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))" }
    }

    /// Every event logged so far.
    func events() -> [Event] {
        let text = (try? String(contentsOfFile: flowLogPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let kind = object["event"] as? String
            else { return nil }
            var fields: [String: String] = [:]
            for (key, value) in object where key != "event" { fields[key] = "\(value)" }
            return Event(kind: kind, fields: fields)
        }
    }

    /// The events of one kind.
    func events(_ kind: String) -> [Event] { events().filter { $0.kind == kind } }
}
