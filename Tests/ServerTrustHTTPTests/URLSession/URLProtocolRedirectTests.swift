import Foundation
import ServerTrustURLSession
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Redirects of `URLSession` requests through `ServerTrustURLProtocol`: swift-corelibs-foundation
/// cannot take a redirect from a URLProtocol (`_ProtocolClient.urlProtocol(_:wasRedirectedTo:redirectResponse:)`
/// is `fatalError`), so the `HTTPSession` follows them under its rules, as URLSession follows
/// them by default; `maximumRedirects = 0` delivers the redirect itself.
@Suite(
    "URLSession drop-in: redirects",
    .enabled(if: IntegrationTools.nginxSuiteEnabled, "nginx is not installed (SERVERTRUST_REQUIRE_INTEGRATION=1 makes that a failure)"))
struct URLProtocolRedirectTests {
    @Test("followed to the final URL, across hosts (each decided), without Authorization on the other origin")
    func followed() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession())

        let (data, response) = try await urlSession.data(from: lab.extrasURL("/to-valid"))
        #expect(String(decoding: data, as: UTF8.self) == NginxLab.index)
        #expect((response as? HTTPURLResponse)?.url == lab.url(.valid, "/"))

        var request = URLRequest(url: lab.url(.valid, "/redirect"))
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        let (landed, landing) = try await urlSession.data(for: request)
        #expect(String(decoding: landed, as: UTF8.self) == "landed on \(NginxLab.otherHost) from=www authorization=[]\n")
        #expect((landing as? HTTPURLResponse)?.url?.host == NginxLab.otherHost)
        #expect(await eventually { lab.lab.requests(.other).count == 1 })
    }

    @Test("with maximumRedirects 0 the 302 itself is the response")
    func notFollowed() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession { $0.maximumRedirects = 0 })
        let (_, response) = try await urlSession.data(from: lab.url(.valid, "/redirect"))
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 302)
        #expect(http.value(forHTTPHeaderField: "Location") == "https://\(NginxLab.otherHost):\(lab.lab.port(.other))/landing?from=www")
        try await Task.sleep(for: .milliseconds(200))
        #expect(lab.lab.requests(.other).isEmpty)
    }

    @Test("a loop fails with httpTooManyRedirects; https to http with redirectToNonExistentLocation, unsent")
    func refused() async throws {
        let lab = try await URLProtocolLab.started()
        defer { lab.stop() }
        let urlSession = lab.urlSession(try lab.httpSession { $0.maximumRedirects = 3 })

        let loop = await urlError { try await urlSession.data(from: lab.extrasURL("/redirect-loop")) }
        #expect(loop?.code == .httpTooManyRedirects, "\(String(describing: loop))")
        #expect(await eventually { lab.extrasRequests.filter { $0.contains("/redirect-loop") }.count == 4 }, "\(lab.extrasRequests)")

        let downgrade = await urlError { try await urlSession.data(from: lab.extrasURL("/to-http")) }
        #expect(downgrade?.code == .redirectToNonExistentLocation, "\(String(describing: downgrade))")
        #expect(downgrade?.localizedDescription.contains("leaves HTTPS") == true)
        try await Task.sleep(for: .milliseconds(200))
        #expect(lab.lab.nginx.accessLog("plain").isEmpty)
    }
}
