import Foundation
import ServerTrust
import ServerTrustHTTP

/// What `get -v`, `-i` and `-I` print, in curl's shapes: `-v` writes `> ` request lines,
/// `< ` response lines and `* ` notes on stderr (curl's `--verbose`), here with the trust
/// decision among the notes; `-i` and `-I` write the response's status line and fields on
/// stdout before the body (`--include`, `--head`).
///
/// The request lines are the request as `get` built it (method, target, the session's default
/// fields and the request's own), not a capture of the wire: libcurl adds framing fields
/// (`Content-Length`, `Accept`) of its own. Credentials are never echoed: an
/// `Authorization`, `Proxy-Authorization` or `Cookie` value is shown as `[redacted]`, as the
/// point of `-v` is to be pasted into a bug report.
enum CurlOutput {
    /// Fields whose values are secrets.
    static let redacted: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// `> GET /path HTTP/1.1`, `> Host: …` and the fields, for `-v`.
    static func requestLines(_ request: HTTPRequest, defaults: HTTPHeaders, hasCredential: Bool) -> [String] {
        let components = URLComponents(string: request.url)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        var host = components?.host ?? ""
        if host.contains(":") { host = "[\(host)]" }
        if let port = components?.port { host += ":\(port)" }
        var lines = ["> \(request.method.rawValue) \(target) HTTP/1.1", "> Host: \(host)"]
        // The session's default fields first (User-Agent), unless the request sets them.
        let fields = defaults.filter { request.headers[$0.name] == nil } + Array(request.headers)
        for (name, value) in fields {
            lines.append("> \(name): \(redacted.contains(name.lowercased()) ? "[redacted]" : value)")
        }
        if hasCredential && request.headers["Authorization"] == nil { lines.append("> Authorization: [redacted] (-u)") }
        return lines + [">"]
    }

    /// The status line and fields, as `-i` and `-I` print them (CR LF, as curl writes what it
    /// received) and, prefixed `< `, as `-v` does.
    static func responseHead(_ response: HTTPResponse) -> String {
        var text = "\(response.httpVersion) \(response.statusCode)\r\n"
        for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
        return text + "\r\n"
    }

    /// `-v`'s notes on the response: the redirects followed, TLS, and the trust decision it
    /// rests on (what `--json`'s `decision` holds, in one line each), then `< ` lines.
    static func responseLines(_ response: HTTPResponse) -> [String] {
        var lines = response.redirects.map { "* followed a \($0.statusCode) redirect to \($0.location)" }
        if let tls = response.tlsVersion {
            lines.append(
                "* \(tls)\(response.tlsSessionResumed ? ", session resumed" : "")\(response.usedNewConnection ? ", new connection" : ", reused connection")")
        }
        if let decision = response.trustDecision { lines += decisionLines(decision, peer: "server") }
        if let decision = response.proxyTrustDecision { lines += decisionLines(decision, peer: "proxy") }
        lines += responseHead(response).split(separator: "\r\n", omittingEmptySubsequences: false).dropLast().map { "< " + $0 }
        return lines
    }

    /// The decision summary: who decided, on what, the verified path and the record's notes.
    static func decisionLines(_ decision: TrustDecision, peer: String) -> [String] {
        let host = "\(decision.host ?? "?"):\(decision.port)"
        var lines = ["* \(peer) trust for \(host): \(decision.verdict.rawValue) by \(decision.evaluator) (checked: \(CurlOutput.checked(decision)))"]
        if let path = decision.verifiedChain {
            lines.append("*   verified path: " + path.map { $0.subject.rfc4514.isEmpty ? "(empty subject)" : $0.subject.rfc4514 }.joined(separator: "  <-  "))
        }
        if let pin = decision.record.matchedPin { lines.append("*   pin matched: \(pin)") }
        for note in decision.record.notes { lines.append("*   note: \(note)") }
        return lines
    }

    /// What an accepting decision rested on: `"chain"` (a path to a trusted root was
    /// validated), `"chain and pinned key"`, `"pinned key only"` (no path was validated, a
    /// pinned key of the leaf matched: `-k` with pins, curl's `-k --pinnedpubkey`), or
    /// `"nothing"` (`-k` alone: curl's "skip the verification step", so the decision says
    /// that nothing was checked).
    static func checked(_ decision: TrustDecision) -> String {
        switch (decision.verifiedChain != nil, decision.record.pinMatch != nil) {
        case (true, false): return "chain"
        case (true, true): return "chain and pinned key"
        case (false, true): return "pinned key only"
        case (false, false): return "nothing"
        }
    }
}
