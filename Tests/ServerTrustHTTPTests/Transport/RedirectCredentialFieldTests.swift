import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing

/// Fields that carry a credential stay with the origin they were written for: a redirect to
/// another origin (another host, or the same host on another port, RFC 6454) sends none of
/// them (Fetch §4.4 step 13 for `Authorization`; curl drops `Authorization` and `Cookie` for
/// another host or port, `--location-trusted` off), while a same-origin redirect keeps them.
@Suite("redirects: credential fields never follow to another origin")
struct RedirectCredentialFieldTests {
    static let host = "www.example.test"
    static let otherHost = "api.example.test"

    /// A field holding a credential, as a caller sets it on a request.
    enum Field: String, CaseIterable, CustomTestStringConvertible {
        case authorization = "Authorization"
        case cookie = "Cookie"
        /// Without a proxy it reaches the origin as written: a credential like the others.
        case proxyAuthorization = "Proxy-Authorization"

        var testDescription: String { rawValue }
        var value: String { self == .cookie ? "session=secret" : "Basic c2VjcmV0OnNlY3JldA==" }
    }

    /// Where the redirect goes.
    enum Destination: String, CaseIterable, CustomTestStringConvertible {
        /// Another host name (another server).
        case otherHost
        /// The same host name, another port (another server): another origin.
        case otherPort
        /// A path on the same server: the same origin.
        case sameOrigin

        var testDescription: String { rawValue }
    }

    @Test("a caller's credential field reaches the first origin and, after a redirect, only the same origin", arguments: Field.allCases, Destination.allCases)
    func credentialFieldOnRedirect(_ field: Field, _ destination: Destination) async throws {
        let pki = try Lab.pki(host: Self.host)
        let seen = Recorder<(String, String?)>()
        let target = try Lab.server(try Lab.identity(pki, host: destination == .otherHost ? Self.otherHost : Self.host), name: "target") {
            $0.handler = { request in
                seen.append((request.path, request.header(field.rawValue)))
                return .text("arrived")
            }
        }
        defer { target.stop() }
        let location =
            switch destination {
            case .otherHost: target.url(host: Self.otherHost, path: "/moved")
            case .otherPort: target.url(host: Self.host, path: "/moved")
            case .sameOrigin: "/landing"
            }
        let origin = try Lab.server(.init(pki: pki), name: "origin") {
            $0.handler = { request in
                seen.append((request.path, request.header(field.rawValue)))
                if request.path == "/landing" { return .text("arrived") }
                return LabHTTPResponse(status: 302, headers: [("Location", location)])
            }
        }
        defer { origin.stop() }
        let session = try Lab.session(trusting: pki, resolving: [(Self.host, origin), (Self.otherHost, target)]) {
            $0.resolve.append("\(Self.host):\(target.port):127.0.0.1")
        }
        let response = try await session.get(origin.url(host: Self.host, path: "/start"), headers: [field.rawValue: field.value])
        #expect(response.text == "arrived" && response.redirects.map(\.statusCode) == [302])
        let requests = seen.all
        #expect(requests.count == 2)
        #expect(requests.first?.0 == "/start" && requests.first?.1 == field.value)
        if destination == .sameOrigin {
            #expect(requests.last?.0 == "/landing" && requests.last?.1 == field.value)
        } else {
            #expect(requests.last?.0 == "/moved" && requests.last?.1 == nil, "\(field.rawValue) followed the redirect to \(location)")
        }
    }
}
