import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import TrustEvaluation

/// The demo's rotation scene: `api.demo.test` moves to a key its installed pins do not cover;
/// the client is refused; forged, tampered, man-in-the-middle-served and replayed updates are
/// refused; the operator's signed set is fetched, verified and swapped in, and the client
/// connects; a restart verifies the stored chain again. Real loopback servers, a real MITM
/// relay with a user-trusted interception CA, keys and documents made on the spot.
enum DemoRotation {
    static let apiHost = "api.demo.test"
    static let pinsHost = "pins.demo.test"
    static let path = "/pinset.json"

    struct Step: Sendable {
        let title: String
        let expected: String
        let actual: String
        let detail: String
        var matches: Bool { expected == actual }
    }

    /// Runs the scene in `directory` (the demo's temporary folder).
    static func run(in directory: String) async throws -> [Step] {
        let now = Int64(Date().timeIntervalSince1970)
        let day: Int64 = 86_400
        // A web PKI for both hosts, and the key the API server moves to.
        let pki = try LabPKI.webChain(host: apiHost, algorithm: .p256, leafNotBefore: now - day, leafNotAfter: now + 30 * day, keySlot: 71)
        let newKey = try LabKey(.p256)
        let spareKey = try LabKey(.p256)
        let movedLeaf = try LabCertificate.issue(
            LabPKI.leafSpec(host: apiHost, keyAlgorithm: .p256, notBefore: now - day, notAfter: now + 30 * day),
            subjectKey: newKey, issuer: pki.intermediateIssuer)
        let pinsLeaf = try pki.issueLeaf(host: pinsHost, notBefore: now - day, notAfter: now + 30 * day)
        // The interception CA the user installed (Charles, mitmproxy): trusted as a "system" root.
        let interceptionKey = try LabKey(.p256)
        let interceptionRoot = try LabCertificate.issue(
            LabCertificateSpec(
                subject: LabName([("CN", "Charles Proxy CA (rotation demo)")]), notBefore: now - day, notAfter: now + 365 * day,
                extensions: [.basicConstraints(ca: true, pathLength: nil), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]),
            subjectKey: interceptionKey)
        let anchors = TrustStore(try [pki.root, interceptionRoot].map { try Certificate(derEncoded: $0.der) }, sources: ["demo system roots"])

        func pin(_ der: [UInt8]) -> String { "sha256/" + Base64.encode(SHA256.hash(der)) }
        let oldPin = pin(pki.leafKey.publicKeyInfoDER)
        let newPin = pin(newKey.publicKeyInfoDER)
        let sparePin = pin(spareKey.publicKeyInfoDER)
        let caPins = [pin(pki.intermediate.subjectPublicKeyInfoDER), pin(pki.root.subjectPublicKeyInfoDER)]
        // The pins of both hosts: the app's baseline policy file says this, and so does each
        // signed pin set (which may say nothing but pins).
        func pinSet(api pins: [String], allHostsMustBeEvaluated: Bool? = nil) -> [UInt8] {
            let quoted = { (list: [String]) in list.map { "\"\($0)\"" }.joined(separator: ", ") }
            let hosts = allHostsMustBeEvaluated.map { "\"allHostsMustBeEvaluated\": \($0), " } ?? ""
            return Array(
                """
                {"version": 1, \(hosts)"hosts": [
                  {"host": "\(apiHost)", "pins": [\(quoted(pins))]},
                  {"host": "\(pinsHost)", "pins": [\(quoted(caPins))]}
                ]}
                """.utf8)
        }
        // The app ships the baseline (the old key and a spare) and two update-signing keys.
        let baseline = try PolicyFile.parse(pinSet(api: [oldPin, sparePin], allHostsMustBeEvaluated: false), source: "the app's baseline")
        let signingKey = try PrivateKey.generate(.ed25519)
        let backupSigningKey = try PrivateKey.generate(.p256)
        let attackerKey = try PrivateKey.generate(.ed25519)
        let rules = try PinSetRules(signingKeys: [try PinSetSigningKey(publicKeyOf: signingKey), try PinSetSigningKey(publicKeyOf: backupSigningKey)])

        // The operator's documents: set 1 (published earlier: old key and spare) and set 2 (new key and spare).
        let set1 = try PinSetDocument.sign(
            policyJSON: pinSet(api: [oldPin, sparePin]), serial: 1, issuedAt: now - 10 * day, expiresAt: now + 80 * day, key: signingKey)
        let set2 = try PinSetDocument.sign(
            policyJSON: pinSet(api: [newPin, sparePin]), serial: 2, issuedAt: now - 60, expiresAt: now + 90 * day, key: signingKey)
        let forged = try PinSetDocument.sign(
            policyJSON: pinSet(api: [newPin, sparePin]), serial: 3, issuedAt: now - 60, expiresAt: now + 90 * day, key: attackerKey)
        let tampered = try tamper(set2)

        // The servers: the API on its new key, the pin-set endpoint, and a MITM relay in front of it.
        let api = try LabTLSServer.started(
            LabTLSServer.Configuration(identity: .init(chain: [movedLeaf, pki.intermediate], key: newKey), name: "rotation-api"))
        let published = Mutex<[UInt8]>(forged)
        let endpoint = try PinSetEndpoint(identity: .init(chain: [pinsLeaf, pki.intermediate], key: pki.leafKey), path: path, name: "rotation-pins") {
            published.withLock { $0 }
        }
        var relayConfiguration = LabMITMRelay.Configuration(
            mode: .transparent(upstreamHost: "127.0.0.1", upstreamPort: endpoint.port),
            interceptionCA: LabIssuer(certificate: interceptionRoot, key: interceptionKey), name: "rotation-mitm")
        relayConfiguration.fallbackServerName = pinsHost
        let relay = try LabMITMRelay.started(relayConfiguration)
        defer {
            api.stop()
            endpoint.stop()
            relay.stop()
        }

        func session(pinsPort: UInt16) throws -> HTTPSession {
            var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(policy: baseline, anchors: anchors))
            configuration.resolve = ["\(apiHost):\(api.port):127.0.0.1", "\(pinsHost):\(pinsPort):127.0.0.1"]
            configuration.timeout = 10
            configuration.connectTimeout = 5
            return try HTTPSession(configuration: configuration)
        }
        func updater(_ session: HTTPSession, pinsPort: UInt16, store: String?) throws -> PinSetUpdater {
            try PinSetUpdater(
                PinSetUpdater.Configuration(
                    url: "https://\(pinsHost):\(pinsPort)\(path)", baseline: baseline, rules: rules, anchors: anchors, storePath: store),
                session: session)
        }
        let apiURL = "https://\(apiHost):\(api.port)/"
        func callAPI(_ session: HTTPSession) async -> (String, String) {
            do {
                let response = try await session.get(apiURL)
                return response.statusCode == 200 ? ("accepted", "HTTP 200") : ("refused", "HTTP \(response.statusCode)")
            } catch {
                return ("refused", DemoCommand.shortReason(error))
            }
        }
        func outcome(_ event: PinSetUpdater.Event) -> (String, String) {
            switch event {
            case .updated(let serial): return ("accepted", "serial \(serial) in force")
            case .refused(let error): return ("refused", error.kind.rawValue)
            case .fetchFailed(let error): return ("refused", "fetch: \(DemoCommand.shortReason(error))")
            default: return ("other", event.description)
            }
        }

        let store = directory + "/pinset-store.json"
        let client = try session(pinsPort: endpoint.port)
        defer { client.invalidate() }
        let updates = try updater(client, pinsPort: endpoint.port, store: store)
        var steps: [Step] = []
        func record(_ title: String, _ expected: String, _ result: (String, String)) {
            steps.append(Step(title: title, expected: expected, actual: result.0, detail: result.1))
        }

        record("\(apiHost) moved to a new key; the installed pins (old key, spare) refuse it", "refused", await callAPI(client))
        record("a forged set (signed by a key the app does not ship) is served", "refused", outcome(await updates.checkNow()))
        published.withLock { $0 = tampered }
        record("a copy of the operator's new set with its payload edited (a pin swapped)", "refused", outcome(await updates.checkNow()))
        published.withLock { $0 = set2 }
        let cafe = try session(pinsPort: relay.port)
        defer { cafe.invalidate() }
        record(
            "the operator signs set 2 (new key, spare) and publishes it; a client behind a man in the middle with a user-trusted CA fetches it", "refused",
            outcome(await (try updater(cafe, pinsPort: relay.port, store: nil)).checkNow()))
        record("set 2 fetched from the operator's endpoint, verified and swapped in", "accepted", outcome(await updates.checkNow()))
        record("\(apiHost) on its new key, under set 2", "accepted", await callAPI(client))
        published.withLock { $0 = set1 }
        record("set 1 replayed (an older, genuinely signed set)", "refused", outcome(await updates.checkNow()))
        record("\(apiHost) still under set 2 after the replay", "accepted", await callAPI(client))
        let restarted = try session(pinsPort: endpoint.port)
        defer { restarted.invalidate() }
        let restartEvents = Mutex<[PinSetUpdater.Event]>([])
        _ = try PinSetUpdater(
            PinSetUpdater.Configuration(
                url: "https://\(pinsHost):\(endpoint.port)\(path)", baseline: baseline, rules: rules, anchors: anchors, storePath: store),
            session: restarted
        ) { event in restartEvents.withLock { $0.append(event) } }
        let restoredSerial = restartEvents.withLock { events in events.compactMap { if case .restored(let serial) = $0 { serial } else { nil } }.first }
        record(
            "restart: the stored chain is verified again; set 2 in force", "accepted",
            restoredSerial == 2 ? ("accepted", "serial 2 in force") : ("refused", "\(restartEvents.withLock { $0 })"))
        record("\(apiHost) after the restart", "accepted", await callAPI(restarted))
        return steps
    }

    /// The envelope with one pin of its payload replaced, re-encoded, signature kept.
    static func tamper(_ envelope: [UInt8]) throws -> [UInt8] {
        guard let object = try JSONSerialization.jsonObject(with: Data(envelope)) as? [String: String],
            let payloadText = object["payload"], let payload = Base64.decode(Array(payloadText.utf8)),
            let keyID = object["keyId"], let signature = object["signature"]
        else { throw CLIError("cannot tamper with the demo document") }
        var text = String(decoding: payload, as: UTF8.self)
        if let range = text.range(of: "sha256/") { text.replaceSubrange(range, with: "sha256/A") }
        let edited = Base64.encode(Array(text.utf8))
        return Array(#"{"keyId": "\#(keyID)", "payload": "\#(edited)", "signature": "\#(signature)"}"#.utf8)
    }

    static func json(_ step: Step) -> JSON {
        .object([("step", .string(step.title)), ("expected", .string(step.expected)), ("actual", .string(step.actual)), ("detail", .string(step.detail))])
    }

    static func print(_ steps: [Step], elapsed: Double) {
        Swift.print("")
        Swift.print("Rotating pins without an app update: signed pin sets, live")
        for (index, step) in steps.enumerated() {
            let mark = step.matches ? "" : "  MISMATCH (expected \(step.expected))"
            Swift.print("  \(index + 1). \(step.title): \(step.actual) (\(step.detail))\(mark)")
        }
        let good = steps.filter(\.matches).count
        Swift.print(String(format: "\(good) of \(steps.count) rotation steps as expected (%.1f s)", elapsed))
    }
}
