import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

/// A mutex a handler closure and the test can both hold.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result { try value.withLock { try body(&$0) } }
}

/// The updater live: real loopback TLS servers (the API and the pin-set endpoint), a real man
/// in the middle with a user-trusted CA, documents signed with Lab keys.
@Suite("signed pin sets: the updater, live")
struct PinSetUpdaterTests {
    static let apiHost = "api.example.test"
    static let pinsHost = "pins.example.test"

    static func labSigner(_ algorithm: LabKeyAlgorithm, slot: Int) throws -> PrivateKey {
        try PrivateKey(pemEncoded: try LabKey.shared(algorithm, slot: slot).privateKeyPEM())
    }

    static func pin(_ der: [UInt8]) -> String { "sha256/" + Base64.encode(SHA256.hash(der)) }

    /// The API server on key B, a pin-set endpoint serving `published`, and a session that
    /// pins the API to key A plus a spare (so it refuses B) and the endpoint to its CA.
    final class World: Sendable {
        let pki: LabPKI
        let newKey: LabKey
        let api: LabTLSServer
        let pins: LabTLSServer
        let published = Shared<(status: Int, body: [UInt8])>((404, []))
        let requests = Shared<[String?]>([])
        let anchors: TrustStore
        let baseline: TrustPolicy
        let rules: PinSetRules
        let signer: PrivateKey
        let caPins: [String]
        let spare: String

        init() throws {
            pki = try Lab.pki(host: PinSetUpdaterTests.apiHost, keySlot: 44)
            newKey = try LabKey.shared(.p256, slot: 45)
            let moved = try LabCertificate.issue(
                LabPKI.leafSpec(
                    host: PinSetUpdaterTests.apiHost, keyAlgorithm: .p256, notBefore: Lab.now - LabClock.day, notAfter: Lab.now + 30 * LabClock.day),
                subjectKey: newKey, issuer: pki.intermediateIssuer)
            api = try Lab.server(.init(chain: [moved, pki.intermediate], key: newKey), name: "pinset-api")
            let published = self.published
            let requests = self.requests
            pins = try Lab.server(try Lab.identity(pki, host: PinSetUpdaterTests.pinsHost), name: "pinset-endpoint") {
                $0.handler = { request in
                    requests.withLock { $0.append(request.header("If-None-Match")) }
                    let (status, body) = published.withLock { $0 }
                    let etag = "\"" + Hex.encode(SHA256.hash(body)) + "\""
                    if request.header("If-None-Match") == etag { return LabHTTPResponse(status: 304, headers: [("ETag", etag)]) }
                    return LabHTTPResponse(status: status, headers: [("ETag", etag)], body: .bytes(body))
                }
            }
            anchors = try Lab.anchors(pki)
            caPins = [PinSetUpdaterTests.pin(pki.intermediate.subjectPublicKeyInfoDER), PinSetUpdaterTests.pin(pki.root.subjectPublicKeyInfoDER)]
            spare = PinSetUpdaterTests.pin(try LabKey.shared(.p256, slot: 46).publicKeyInfoDER)
            baseline = try PolicyFile.parse(
                World.policy(api: [PinSetUpdaterTests.pin(pki.leafKey.publicKeyInfoDER), spare], caPins: caPins, allHostsMustBeEvaluated: false))
            signer = try PinSetUpdaterTests.labSigner(.ed25519, slot: 47)
            let backup = try PinSetUpdaterTests.labSigner(.p256, slot: 48)
            rules = try PinSetRules(signingKeys: [try PinSetSigningKey(publicKeyOf: signer), try PinSetSigningKey(publicKeyOf: backup)])
        }

        /// The pins of both hosts: the baseline (with `allHostsMustBeEvaluated`) or a signed
        /// pin set (pins only).
        static func policy(api pins: [String], caPins: [String], allHostsMustBeEvaluated: Bool? = nil) -> [UInt8] {
            let quoted = { (list: [String]) in list.map { "\"\($0)\"" }.joined(separator: ", ") }
            let hosts = allHostsMustBeEvaluated.map { #""allHostsMustBeEvaluated": \#($0), "# } ?? ""
            return Array(
                #"{"version": 1, \#(hosts)"hosts": [{"host": "\#(PinSetUpdaterTests.apiHost)", "pins": [\#(quoted(pins))]}, {"host": "\#(PinSetUpdaterTests.pinsHost)", "pins": [\#(quoted(caPins))]}]}"#
                    .utf8)
        }

        /// Set `serial`, pinning the API to its new key and the spare.
        func document(serial: Int64, expiresIn: Int64 = 30 * LabClock.day, key: PrivateKey? = nil) throws -> [UInt8] {
            try PinSetDocument.sign(
                policyJSON: World.policy(api: [PinSetUpdaterTests.pin(newKey.publicKeyInfoDER), spare], caPins: caPins), serial: serial,
                issuedAt: Lab.now - 60, expiresAt: Lab.now + expiresIn, key: key ?? signer)
        }

        func session(pinsPort: UInt16? = nil) throws -> HTTPSession {
            var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(policy: baseline, anchors: anchors))
            configuration.resolve = [
                "\(PinSetUpdaterTests.apiHost):\(api.port):127.0.0.1", "\(PinSetUpdaterTests.pinsHost):\(pinsPort ?? pins.port):127.0.0.1",
            ]
            configuration.timeout = 10
            return try HTTPSession(configuration: configuration)
        }

        func updater(
            _ session: HTTPSession, pinsPort: UInt16? = nil, store: String? = nil, clock: TrustClock = .system,
            events: Recorder<String>? = nil
        ) throws -> PinSetUpdater {
            let rules = try PinSetRules(signingKeys: self.rules.signingKeys, clock: clock)
            return try PinSetUpdater(
                PinSetUpdater.Configuration(
                    url: "https://\(PinSetUpdaterTests.pinsHost):\(pinsPort ?? pins.port)/pinset.json", baseline: baseline,
                    rules: rules, anchors: anchors, storePath: store),
                session: session
            ) { event in events?.append(event.description) }
        }

        var apiURL: String { api.url(host: PinSetUpdaterTests.apiHost) }

        func stop() {
            api.stop()
            pins.stop()
        }
    }

    @Test("an update is fetched, verified and swapped in: the refused API connects; 304 with If-None-Match; a replay keeps the set")
    func update() async throws {
        let world = try World()
        defer { world.stop() }
        let session = try world.session()
        defer { session.invalidate() }
        let updater = try world.updater(session)
        let before = await failure { try await session.get(world.apiURL) }
        #expect(before?.rejection?.reason.hasPrefix("spkiPinningFailed") == true, "\(String(describing: before))")

        let set1 = try world.document(serial: 1)
        world.published.withLock { $0 = (200, set1) }
        guard case .updated(serial: 1) = await updater.checkNow() else {
            Issue.record("not updated")
            return
        }
        #expect(try await session.get(world.apiURL).statusCode == 200)
        // The server has nothing newer: a conditional request, answered 304.
        guard case .unchanged(serial: 1) = await updater.checkNow() else {
            Issue.record("not unchanged")
            return
        }
        #expect(world.requests.withLock { $0.last ?? nil } == "\"" + Hex.encode(SHA256.hash(set1)) + "\"")
        // A newer set, then the older one replayed: refused, set 2 stays.
        let set2 = try world.document(serial: 2)
        world.published.withLock { $0 = (200, set2) }
        guard case .updated(serial: 2) = await updater.checkNow() else {
            Issue.record("not updated to 2")
            return
        }
        world.published.withLock { $0 = (200, set1) }
        guard case .refused(let error) = await updater.checkNow() else {
            Issue.record("replay not refused")
            return
        }
        #expect(error.kind == .serialNotIncreasing && updater.chain.serial == 2)
        #expect(try await session.get(world.apiURL).statusCode == 200)
    }

    @Test("an update fetched through a man in the middle with a user-trusted CA is refused by the current pins; nothing reaches the endpoint")
    func mitm() async throws {
        let world = try World()
        defer { world.stop() }
        let document = try world.document(serial: 1)
        world.published.withLock { $0 = (200, document) }
        let interceptionKey = try LabKey.shared(.p256, slot: 49)
        let interceptionRoot = try LabCertificate.issue(
            LabCertificateSpec(
                subject: LabName([("CN", "user-installed interception CA")]), notBefore: Lab.now - LabClock.day, notAfter: Lab.now + 30 * LabClock.day,
                extensions: [.basicConstraints(ca: true, pathLength: nil), .keyUsage([.keyCertSign]), .subjectKeyIdentifier()]),
            subjectKey: interceptionKey)
        var relayConfiguration = LabMITMRelay.Configuration(
            mode: .transparent(upstreamHost: "127.0.0.1", upstreamPort: world.pins.port),
            interceptionCA: LabIssuer(certificate: interceptionRoot, key: interceptionKey))
        relayConfiguration.fallbackServerName = Self.pinsHost
        let relay = try LabMITMRelay.started(relayConfiguration)
        defer { relay.stop() }
        // The client trusts the interception root (the Charles case): only the pins stop it.
        let anchors = world.anchors + TrustStore([try Lab.certificate(interceptionRoot)], sources: ["user CA"])
        var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(policy: world.baseline, anchors: anchors))
        configuration.resolve = ["\(Self.pinsHost):\(relay.port):127.0.0.1"]
        let session = try HTTPSession(configuration: configuration)
        defer { session.invalidate() }
        let updater = try PinSetUpdater(
            PinSetUpdater.Configuration(
                url: "https://\(Self.pinsHost):\(relay.port)/pinset.json", baseline: world.baseline, rules: world.rules,
                anchors: anchors, storePath: nil), session: session)
        guard case .fetchFailed(.serverTrustRejected(let decision)) = await updater.checkNow() else {
            Issue.record("the MITM's answer was read")
            return
        }
        #expect(decision.reason.hasPrefix("spkiPinningFailed"), "\(decision)")
        #expect(updater.chain.serial == 0 && world.requests.withLock { $0.isEmpty } && !relay.statistics.forwardedApplicationData)
    }

    @Test("failures keep the set in force and are reported: server down, 500, oversized body, forged set")
    func failuresKeepTheSet() async throws {
        let world = try World()
        let session = try world.session()
        defer { session.invalidate() }
        let events = Recorder<String>()
        let updater = try world.updater(session, events: events)
        let document = try world.document(serial: 1)
        world.published.withLock { $0 = (200, document) }
        _ = await updater.checkNow()
        world.published.withLock { $0 = (500, []) }
        guard case .fetchFailed(.unacceptableStatusCode) = await updater.checkNow() else {
            Issue.record("500 accepted")
            return
        }
        world.published.withLock { $0 = (200, [UInt8](repeating: 0x20, count: PinSetDocument.maximumSize + 1)) }
        guard case .fetchFailed(.responseBodyTooLarge) = await updater.checkNow() else {
            Issue.record("an oversized body was read")
            return
        }
        let forged = try world.document(serial: 9, key: PinSetUpdaterTests.labSigner(.ed25519, slot: 43))
        world.published.withLock { $0 = (200, forged) }
        guard case .refused(let forged) = await updater.checkNow(), forged.kind == .unknownKey else {
            Issue.record("forged set accepted")
            return
        }
        world.pins.stop()
        guard case .fetchFailed = await updater.checkNow() else {
            Issue.record("a stopped server answered")
            return
        }
        #expect(updater.chain.serial == 1)
        #expect(try await session.get(world.apiURL).statusCode == 200, "set 1 still decides")
        world.api.stop()
        #expect(events.all.count == 6 && events.all.first?.hasPrefix("restored") == true, "\(events.all)")
    }

    @Test("a store that cannot be written is reported; the verified set is in force for the process, and the handler may call back")
    func unwritableStore() async throws {
        let world = try World()
        defer { world.stop() }
        let session = try world.session()
        defer { session.invalidate() }
        let serials = Recorder<Int64>()
        let holder = Shared<PinSetUpdater?>(nil)
        let events = Recorder<String>()
        let updater = try PinSetUpdater(
            PinSetUpdater.Configuration(
                url: "https://\(Self.pinsHost):\(world.pins.port)/pinset.json", baseline: world.baseline, rules: world.rules,
                anchors: world.anchors, storePath: "/proc/servertrust-no-such-dir/pinset.json"),
            session: session
        ) { event in
            events.append(event.description)
            // Calling back into the updater from its own handler must not deadlock.
            if let serial = holder.withLock({ $0 })?.chain.serial { serials.append(serial) }
        }
        holder.withLock { $0 = updater }
        let document = try world.document(serial: 5)
        world.published.withLock { $0 = (200, document) }
        guard case .updated(serial: 5) = await updater.checkNow() else {
            Issue.record("not updated")
            return
        }
        #expect(events.all.contains { $0.hasPrefix("store problem: storeWriteFailed") }, "\(events.all)")
        #expect(try await session.get(world.apiURL).statusCode == 200)
        #expect(serials.all.last == 5)
    }

    @Test("the store: a restart restores the set; a tampered store is reported and the baseline decides")
    func restart() async throws {
        let world = try World()
        defer { world.stop() }
        let directory = try Lab.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = directory + "/pinset.json"
        let first = try world.session()
        defer { first.invalidate() }
        let document = try world.document(serial: 3)
        world.published.withLock { $0 = (200, document) }
        _ = await (try world.updater(first, store: store)).checkNow()
        let second = try world.session()
        defer { second.invalidate() }
        let events = Recorder<String>()
        let restored = try world.updater(second, store: store, events: events)
        #expect(events.all == ["restored: serial 3 in force"])
        #expect(try await second.get(world.apiURL).statusCode == 200)
        // The stored serial is the high-water mark after the restart too: an older document,
        // validly signed and unexpired (a rollback), is refused, and set 3 stays in force.
        let older = try world.document(serial: 2)
        world.published.withLock { $0 = (200, older) }
        guard case .refused(let rollback) = await restored.checkNow() else {
            Issue.record("rollback after a restart not refused")
            return
        }
        #expect(rollback.kind == .serialNotIncreasing && restored.chain.serial == 3)
        #expect(try await second.get(world.apiURL).statusCode == 200)
        // Tamper with both generations: detected, reported, the baseline decides (the API is refused again).
        for file in [store, store + ".previous"] where FileManager.default.fileExists(atPath: file) {
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            bytes[bytes.count / 2] ^= 0x01
            try Data(bytes).write(to: URL(fileURLWithPath: file))
        }
        let third = try world.session()
        defer { third.invalidate() }
        let tamperedEvents = Recorder<String>()
        let updater = try world.updater(third, store: store, events: tamperedEvents)
        #expect(updater.chain.serial == 0)
        #expect(
            tamperedEvents.all.contains { $0.hasPrefix("store problem") } && tamperedEvents.all.last == "restored: serial 0 in force", "\(tamperedEvents.all)")
        #expect(await failure { try await third.get(world.apiURL) }?.rejection != nil)
    }

    @Test("expiry: at the clock's instant the baseline decides again, the expiry is reported, kept-alive connections are decided again")
    func expiry() async throws {
        let world = try World()
        defer { world.stop() }
        let now = Mutex(Lab.now)
        let clock = TrustClock { now.withLock { $0 } }
        let session = try world.session()
        defer { session.invalidate() }
        let events = Recorder<String>()
        let updater = try world.updater(session, clock: clock, events: events)
        let document = try world.document(serial: 1, expiresIn: 3600)
        world.published.withLock { $0 = (200, document) }
        _ = await updater.checkNow()
        #expect(try await session.get(world.apiURL).statusCode == 200)
        updater.start()
        defer { updater.stop() }
        now.withLock { $0 += 3600 + 301 }
        // A new connection is decided at the clock's instant: the baseline refuses key B, and says why.
        var fresh = HTTPRequest(.get, world.apiURL)
        fresh.usesFreshConnection = true
        let refused = await failure { try await session.send(fresh) }
        #expect(refused?.rejection?.record.notes.contains { $0.contains("expired") && $0.contains("baseline") } == true, "\(String(describing: refused))")
        // The schedule wakes at the expiry and reports it (the document expired an hour ago on this clock).
        for _ in 0..<200 where !events.all.contains("expired: serial 1; the fallback decides") { try await Task.sleep(for: .milliseconds(20)) }
        #expect(events.all.contains("expired: serial 1; the fallback decides"), "\(events.all)")
        // And the kept-alive connection accepted under set 1 is decided again: refused.
        #expect(await failure { try await session.get(world.apiURL) }?.rejection != nil)
    }

    @Test("a hot swap under concurrent requests: every request is decided wholly by the old set or the new one")
    func hotSwapUnderLoad() async throws {
        let world = try World()
        defer { world.stop() }
        let session = try world.session()
        defer { session.invalidate() }
        let updater = try world.updater(session)
        let document = try world.document(serial: 1)
        world.published.withLock { $0 = (200, document) }
        let outcomes = Recorder<String>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<24 {
                group.addTask {
                    for _ in 0..<4 {
                        do throws(HTTPError) {
                            let response = try await session.get(world.apiURL)
                            // Accepted only under set 1, which pins the new key: the record says so.
                            let pinned = response.trustDecision?.record.pinMatch != nil
                            outcomes.append(response.statusCode == 200 && pinned ? "new" : "inconsistent")
                        } catch {
                            // Refused only under the baseline, which does not know key B.
                            outcomes.append(error.rejection?.reason.hasPrefix("spkiPinningFailed") == true ? "old" : "inconsistent: \(error)")
                        }
                    }
                }
            }
            group.addTask { _ = await updater.checkNow() }
            try await group.waitForAll()
        }
        #expect(!outcomes.all.contains { $0.hasPrefix("inconsistent") }, "\(outcomes.all.filter { $0.hasPrefix("inconsistent") })")
        #expect(outcomes.all.count == 96)
        // After the swap every request is decided by set 1.
        #expect(try await session.get(world.apiURL).statusCode == 200)
    }
}
