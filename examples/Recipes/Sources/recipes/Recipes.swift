import Foundation
import FoundationNetworking
import ServerTrustKit

// Each function below is one recipe of the README's "Use it in your app" (and of "URLSession on
// Linux" and "Rotating pins"), character for character: RecipesTests checks that each README
// block, less its import lines, is in this file, and also builds the blocks themselves, imports
// and all. The URLs, files
// and pins are parameters so that the test can point them at its nginx; "the system roots"
// are whatever `SSL_CERT_FILE` names, as with OpenSSL and curl.

// MARK: - A GET to a server with a private CA

func getWithPrivateCA(_ url: String, caFile: String) async throws -> String {
    let anchors = try TrustStore(contentsOf: [caFile])  // PEM or DER; files or folders
    let session = try HTTPSession(serverTrust: ServerTrustDecider(DefaultTrustEvaluator(), anchors: anchors))
    return try await session.get(url).validate().text
}

// MARK: - A private CA and pins

func getWithPrivateCAAndPins(_ url: String, host: String, caFile: String, pins: [String]) async throws -> String {
    let anchors = try TrustStore(contentsOf: [caFile])  // the private CA, and only it
    let pinned = PinnedHost(pattern: try HostPattern(host), pins: try pins.map { try SPKIPin($0) })
    let evaluator = SPKIPinsTrustEvaluator(configuration: try PinningConfiguration([pinned]))
    let session = try HTTPSession(serverTrust: ServerTrustDecider(evaluator, anchors: anchors))
    return try await session.get(url).validate().text
}

// MARK: - AFNetworking-style certificate pinning from .cer files

func getWithPinnedCertificates(_ url: String, certificatesFolder: String) async throws -> String {
    let pinned = try SecurityPolicy.certificates(inDirectory: certificatesFolder)  // .cer .crt .der .pem
    let policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: pinned)
    let session = try HTTPSession(serverTrust: .system(policy))
    return try await session.get(url).validate().text
}

// MARK: - SPKI pins in code

func getWithPins(_ url: String, host: String, pins: [String]) async throws -> String {
    // At least two pins: the key in use and a backup key kept offline.
    let pinned = PinnedHost(pattern: try HostPattern(host), pins: try pins.map { try SPKIPin($0) })
    let evaluator = SPKIPinsTrustEvaluator(configuration: try PinningConfiguration([pinned]))
    let session = try HTTPSession(serverTrust: .system(evaluator))
    return try await session.get(url).validate().text
}

// MARK: - Pins from a policy file

func getWithPolicyFile(_ url: String, policyFile: String) async throws -> String {
    let policy = try PolicyFile.load(contentsOf: policyFile)  // docs/policy-schema.md
    let session = try HTTPSession(serverTrust: .system(policy))
    return try await session.get(url).validate().text
}

// MARK: - Basic authentication

func getWithBasicAuth(_ url: String, user: String, password: String) async throws -> String {
    let session = try HTTPSession(serverTrust: .system())
    var request = HTTPRequest(.get, url)
    request.credential = .user(user, password: password)  // sent when the server asks (401)
    return try await session.send(request).validate().text
}

// MARK: - A client certificate

func getWithClientCertificate(_ url: String, host: String, p12File: String, password: String) async throws -> String {
    var configuration = HTTPSessionConfiguration(serverTrust: try .system())
    configuration.clientIdentities[host] = try Identity(contentsOf: p12File, password: password)
    let session = try HTTPSession(configuration: configuration)
    return try await session.get(url).validate().text
}

// MARK: - A JSON POST and a Decodable GET

struct User: Codable, Sendable {
    var id: Int
    var name: String
}

func postAndGetJSON(_ postURL: String, _ getURL: String) async throws -> (posted: String, user: User) {
    let session = try HTTPSession(serverTrust: .system())
    let posted = try await session.post(postURL, json: User(id: 7, name: "alice")).validate()
    let user = try await session.get(getURL, as: User.self)
    return (posted.text, user)
}

// MARK: - A multipart upload

func uploadFile(_ url: String, path: String) async throws -> String {
    var form = MultipartFormData()
    form.append(name: "title", value: "holiday")
    try form.appendFile(name: "photo", path: path, contentType: "image/jpeg")  // streamed from disk
    let session = try HTTPSession(serverTrust: .system())
    return try await session.post(url, multipart: form).validate().text
}

// MARK: - Existing URLSession code (README "URLSession on Linux")

func getThroughURLSession(_ url: URL, caFile: String) async throws -> String {
    let anchors = try TrustStore(contentsOf: [caFile])
    ServerTrustURLProtocol.register(try HTTPSession(serverTrust: ServerTrustDecider(DefaultTrustEvaluator(), anchors: anchors)))
    let configuration = URLSessionConfiguration.serverTrust()  // protocolClasses = [ServerTrustURLProtocol.self, …]
    configuration.httpAdditionalHeaders = ["X-Api-Key": "recipes"]  // sent, as Foundation's loader sends them
    configuration.timeoutIntervalForRequest = 30
    let (data, _) = try await URLSession(configuration: configuration).data(from: url)  // unchanged URLSession code
    return String(decoding: data, as: UTF8.self)
}

// MARK: - Pins from signed pin sets (README "Rotating pins"; compiled here, run by PinSetUpdaterTests)

func sessionWithPinSetUpdates(supportDirectory: String) async throws -> (HTTPSession, PinSetUpdater) {
    let baseline = try PolicyFile.load(contentsOf: "/usr/share/myapp/pins.json")  // the pins the app ships
    let rules = try PinSetRules(signingKeys: [
        try PinSetSigningKey(base64: "MCowBQYDK2VwAyEA+ra7wGI14ByU5s2KETG2X85T37GRNExUVjc0RaESvTU="),
        try PinSetSigningKey(
            base64: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEQD9CT7Kqm56x9fg0f5YfzGq5szQFFgyUi5pDKVxBgFPFVj0s+ddMYskTamc5OskNoLGzqN9i1ufR+eCTSpykfg=="),
    ])
    let anchors = try TrustStore.system()
    let session = try HTTPSession(serverTrust: ServerTrustDecider(policy: baseline, anchors: anchors))
    var configuration = PinSetUpdater.Configuration(
        url: "https://pins.example.com/pinset.json", baseline: baseline, rules: rules, anchors: anchors,
        storePath: supportDirectory + "/pinset-store.json")
    configuration.expiry = .baseline  // or .reportOnly([try HostPattern("api.example.com")])
    let updater = try PinSetUpdater(configuration, session: session) { event in print("pin set: \(event)") }
    updater.start()  // every 6 hours, and at the document's expiry
    _ = await updater.checkNow()  // or on demand
    return (session, updater)
}
