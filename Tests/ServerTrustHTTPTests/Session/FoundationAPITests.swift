import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing

/// Foundation's types in the session API: `URL`, `Data`, `Encodable`/`Decodable`,
/// `URLQueryItem`, `Duration`, and the JSON media types of RFC 6839.
@Suite("Foundation-shaped API: URL, Data, Codable, query items, +json")
struct FoundationAPITests {
    static let host = "www.example.test"

    struct Item: Codable, Sendable, Equatable {
        let id: Int
        let name: String
    }

    static func server(_ pki: LabPKI) throws -> LabTLSServer {
        try Lab.server(.init(pki: pki)) { configuration in
            configuration.handler = { request in
                switch request.path {
                case "/item":
                    return LabHTTPResponse(
                        headers: [("Content-Type", "application/vnd.api+json; charset=utf-8")],
                        body: .bytes(Array(#"{"id": 7, "name": "seven"}"#.utf8)))
                case "/problem":
                    return LabHTTPResponse(status: 404, headers: [("Content-Type", "application/problem+json")], body: .bytes(Array("{}".utf8)))
                case "/html":
                    return LabHTTPResponse(headers: [("Content-Type", "text/html")], body: .bytes(Array(#"{"id": 1, "name": "x"}"#.utf8)))
                case "/echo":
                    return LabHTTPResponse(headers: [("Content-Type", request.header("Content-Type") ?? "none")], body: .bytes(request.body))
                default:
                    return .text(request.target)
                }
            }
        }
    }

    @Test("URL and query items, Decodable responses, Encodable bodies, Data, Duration")
    func foundationTypes() async throws {
        let pki = try Lab.pki(host: Self.host)
        let server = try Self.server(pki)
        defer { server.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, server)])
        defer { session.invalidate() }
        let base = try #require(URL(string: server.url(host: Self.host)))

        let queried = try await session.get(base.appendingPathComponent("q"), query: [URLQueryItem(name: "a b", value: "1&2")])
        #expect(queried.text == "/q?a%20b=1%262")
        let item = try await session.get(server.url(host: Self.host, path: "/item"), as: Item.self)
        #expect(item == Item(id: 7, name: "seven"), "application/*+json is JSON (RFC 6839)")
        #expect(try await session.get(base.appendingPathComponent("item"), as: Item.self) == item)

        let posted = try await session.post(base.appendingPathComponent("echo"), json: item)
        #expect(posted.headers["Content-Type"] == "application/json")
        #expect(try posted.decode(Item.self) == item)
        // The same with the URL as text, as the README's recipes write it; a JSONValue literal
        // still picks the JSONValue overload.
        let postedByText = try await session.post(server.url(host: Self.host, path: "/echo"), json: item)
        #expect(postedByText.headers["Content-Type"] == "application/json")
        #expect(try postedByText.decode(Item.self) == item)
        let literal = try await session.post(server.url(host: Self.host, path: "/echo"), json: ["id": 8, "name": "eight"])
        #expect(try literal.decode(Item.self) == Item(id: 8, name: "eight"))
        var request = HTTPRequest(.put, base.appendingPathComponent("echo"), body: Data("raw".utf8))
        request.timeoutDuration = .seconds(5)
        #expect(request.timeout == 5)
        #expect(try await session.send(request).data == Data("raw".utf8))

        // Typed failures: a non-JSON type, a 4xx, a body that is not the type.
        guard case .unacceptableContentType? = await failure({ try await session.get(server.url(host: Self.host, path: "/html"), as: Item.self) }) else {
            Issue.record("text/html must not decode as JSON")
            return
        }
        guard case .unacceptableStatusCode? = await failure({ try await session.get(server.url(host: Self.host, path: "/problem"), as: Item.self) }) else {
            Issue.record("a 404 must not decode")
            return
        }
        let wrongShape = await failure { try await session.get(server.url(host: Self.host, path: "/item"), as: [Item].self) }
        guard case .responseSerializationFailed? = wrongShape else {
            Issue.record("expected a decoding failure, got \(String(describing: wrongShape))")
            return
        }
    }
}
