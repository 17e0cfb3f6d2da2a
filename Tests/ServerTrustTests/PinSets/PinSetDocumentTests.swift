import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

/// Signing keys and documents for the pin-set suites: keys from ServerTrustLab (OpenSSL), never
/// from the code under test, read back as `PrivateKey`s to sign; a fixed clock.
enum PinSetFixture {
    static let now = LabClock.reference
    static let day: Int64 = 86_400

    static func labKey(_ algorithm: LabKeyAlgorithm, slot: Int) -> PrivateKey {
        // The slots are this suite's (PolicySlot: 230-236); a failure here is a broken Lab.
        guard let lab = try? LabKey.shared(algorithm, slot: slot), let pem = try? lab.privateKeyPEM(), let key = try? PrivateKey(pemEncoded: pem) else {
            fatalError("ServerTrustLab could not make a \(algorithm) key")
        }
        return key
    }

    static let signer = labKey(.ed25519, slot: 230)
    static let backupSigner = labKey(.p256, slot: 231)
    static let attacker = labKey(.ed25519, slot: 232)
    static let nextSigner = labKey(.p256, slot: 233)
    static let nextBackup = labKey(.ed25519, slot: 234)

    static func publicKey(_ key: PrivateKey) -> PinSetSigningKey {
        guard let signingKey = try? PinSetSigningKey(publicKeyOf: key) else { fatalError("not a signing key") }
        return signingKey
    }

    static var shippedKeys: [PinSetSigningKey] { [publicKey(signer), publicKey(backupSigner)] }

    static func rules(at time: Int64 = now, skew: Int64 = 300, baseline: Int64 = 0) throws -> PinSetRules {
        try PinSetRules(signingKeys: shippedKeys, baselineSerial: baseline, clockSkew: skew, clock: .fixed(time))
    }

    static let rootPin = "sha256/" + PolicyFixtures.shared.root.spkiSHA256Base64
    static let backupPin = PolicyFixtures.shared.backupPin.description

    /// A policy pinning the fixtures' host to `pins` (default: its root and the spare).
    static func policy(pins: [String] = [rootPin, backupPin], extra: String = "") -> [UInt8] {
        Array(#"{"version": 1, "hosts": [{"host": "\#(PolicyFixtures.host)", "pins": [\#(pins.map { "\"\($0)\"" }.joined(separator: ", "))]\#(extra)}]}"#.utf8)
    }

    static func sign(
        serial: Int64, key: PrivateKey = signer, policy: [UInt8] = policy(), issuedAt: Int64 = now - 60, expiresAt: Int64 = now + 30 * day,
        next: [PinSetSigningKey]? = nil
    ) throws -> [UInt8] {
        try PinSetDocument.sign(policyJSON: policy, serial: serial, issuedAt: issuedAt, expiresAt: expiresAt, nextSigningKeys: next, key: key)
    }

    /// An envelope with its payload replaced (re-encoded) and the signature kept.
    static func envelope(keyID: String, payload: [UInt8], signature: [UInt8]) -> [UInt8] {
        Array(#"{"keyId": "\#(keyID)", "payload": "\#(Base64.encode(payload))", "signature": "\#(Base64.encode(signature))"}"#.utf8)
    }

    static func parts(_ envelope: [UInt8]) throws -> (keyID: String, payload: [UInt8], signature: [UInt8]) {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(envelope)) as? [String: String])
        let payloadText = try #require(object["payload"])
        let signatureText = try #require(object["signature"])
        return (try #require(object["keyId"]), try #require(Base64.decode(Array(payloadText.utf8))), try #require(Base64.decode(Array(signatureText.utf8))))
    }
}

@Suite("signed pin sets: the document and its trust rules")
struct PinSetDocumentTests {
    typealias F = PinSetFixture

    @Test("a signed document is accepted, with its serial, window and policy; Ed25519 and P-256 signers")
    func accepted() throws {
        for key in [F.signer, F.backupSigner] {
            var chain = PinSetChain(rules: try F.rules())
            let envelope = try F.sign(serial: 4, key: key)
            #expect(try chain.accept(envelope) == .accepted(serial: 4))
            let document = try #require(chain.current)
            #expect(document.serial == 4 && document.issuedAt == F.now - 60 && document.expiresAt == F.now + 30 * F.day)
            #expect(document.signedBy == F.publicKey(key))
            #expect(document.pins.hosts.map(\.pattern.description) == [PolicyFixtures.host])
            #expect(document.pins.hosts[0].pins.map(\.description) == [F.rootPin, F.backupPin])
            #expect(chain.serial == 4)
            // The same bytes again: not a replay, nothing changes.
            #expect(try chain.accept(envelope) == .unchanged)
        }
    }

    /// What an attacker on the update channel can send, and the rule that refuses each.
    static var attacks: [(name: String, kind: PinSetError.Kind, envelope: @Sendable () throws -> [UInt8])] {
        [
            (
                "tampered payload", .badSignature,
                {
                    let (keyID, payload, signature) = try F.parts(try F.sign(serial: 5))
                    var edited = payload
                    let index = try #require(edited.firstIndex(of: UInt8(ascii: "5")))
                    edited[index] = UInt8(ascii: "9")
                    return F.envelope(keyID: keyID, payload: edited, signature: signature)
                }
            ),
            (
                "tampered signature", .badSignature,
                {
                    let (keyID, payload, signature) = try F.parts(try F.sign(serial: 5))
                    var edited = signature
                    edited[7] ^= 0x40
                    return F.envelope(keyID: keyID, payload: payload, signature: edited)
                }
            ),
            (
                "P-256 signature with a flipped bit", .badSignature,
                {
                    let (keyID, payload, signature) = try F.parts(try F.sign(serial: 5, key: F.backupSigner))
                    var edited = signature
                    edited[edited.count - 1] ^= 0x01
                    return F.envelope(keyID: keyID, payload: payload, signature: edited)
                }
            ),
            ("unknown key id (signed by a key the app does not ship)", .unknownKey, { try F.sign(serial: 5, key: F.attacker) }),
            (
                "a trusted key id over an attacker's signature", .badSignature,
                {
                    let (_, payload, signature) = try F.parts(try F.sign(serial: 5, key: F.attacker))
                    return F.envelope(keyID: F.publicKey(F.signer).keyID, payload: payload, signature: signature)
                }
            ),
            ("older serial (rollback)", .serialNotIncreasing, { try F.sign(serial: 2) }),
            ("equal serial with other contents (replay)", .serialNotIncreasing, { try F.sign(serial: 3, policy: F.policy(pins: [F.backupPin, F.rootPin])) }),
            ("expired", .expired, { try F.sign(serial: 5, issuedAt: F.now - 20 * F.day, expiresAt: F.now - F.day) }),
            ("expired by more than the skew", .expired, { try F.sign(serial: 5, issuedAt: F.now - 20 * F.day, expiresAt: F.now - 301) }),
            ("not yet valid", .notYetValid, { try F.sign(serial: 5, issuedAt: F.now + 301, expiresAt: F.now + F.day) }),
            ("malformed JSON", .malformed, { Array(#"{"keyId": "#.utf8) }),
            ("larger than the bound", .tooLarge, { [UInt8](repeating: 0x20, count: PinSetDocument.maximumSize + 1) }),
        ]
    }

    @Test("refused, with the chain unchanged: tampering, unknown keys, rollback, replay, time, malformed", arguments: 0..<12)
    func refused(index: Int) throws {
        let attack = Self.attacks[index]
        var chain = PinSetChain(rules: try F.rules())
        try chain.accept(try F.sign(serial: 3))
        let before = try #require(chain.current?.envelope)
        let error = #expect(throws: PinSetError.self, "\(attack.name)") { try chain.accept(try attack.envelope()) }
        #expect(error?.kind == attack.kind, "\(attack.name): \(String(describing: error))")
        #expect(chain.current?.envelope == before && chain.serial == 3, "\(attack.name) changed the pins in force")
        // The kind is said once: "badSignature: the signature does not verify under …: <how>".
        if attack.kind == .badSignature, let summary = error?.summary {
            #expect(summary.components(separatedBy: attack.kind.rawValue).count == 2, "\(attack.name): the kind repeats in \(summary)")
        }
    }

    @Test("the skew tolerance is inclusive at both ends of the window, and its arithmetic saturates", arguments: [Int64.min, -1, Int64.max])
    func skewBoundaries(extreme: Int64) throws {
        var chain = PinSetChain(rules: try F.rules(skew: 300))
        #expect(try chain.accept(try F.sign(serial: 1, issuedAt: F.now + 300, expiresAt: F.now + F.day)) == .accepted(serial: 1))
        #expect(try chain.accept(try F.sign(serial: 2, issuedAt: F.now - F.day, expiresAt: F.now - 299)) == .accepted(serial: 2))
        // A clock at either end of Int64 neither traps nor accepts.
        var extremeChain = PinSetChain(rules: try F.rules(at: extreme, skew: PinSetRules.maximumClockSkew))
        let error = #expect(throws: PinSetError.self) { try extremeChain.accept(try F.sign(serial: 1)) }
        #expect([.expired, .notYetValid].contains(error?.kind), "\(String(describing: error))")
    }

    /// Envelopes that are not of the format's one spelling, each refused at its JSON path.
    static let envelopes: [(name: String, text: @Sendable (String, String, String) -> String, path: String)] = [
        (
            "CR/LF inside the base64", { k, p, s in #"{"keyId": "\#(k)", "payload": "\#(p.prefix(8))\r\n\#(p.dropFirst(8))", "signature": "\#(s)"}"# },
            "$.payload"
        ),
        (
            "a space inside the signature", { k, p, s in #"{"keyId": "\#(k)", "payload": "\#(p)", "signature": "\#(s.prefix(4)) \#(s.dropFirst(4))"}"# },
            "$.signature"
        ),
        ("uppercase key id", { k, p, s in #"{"keyId": "\#(k.uppercased())", "payload": "\#(p)", "signature": "\#(s)"}"# }, "$.keyId"),
        ("missing signature", { k, p, _ in #"{"keyId": "\#(k)", "payload": "\#(p)"}"# }, "$.signature"),
        ("unknown member", { k, p, s in #"{"keyId": "\#(k)", "payload": "\#(p)", "signature": "\#(s)", "alg": "none"}"# }, "$.alg"),
        ("repeated signature member", { k, p, s in #"{"keyId": "\#(k)", "payload": "\#(p)", "signature": "\#(s)", "signature": "\#(s)"}"# }, "$.signature"),
        ("payload as an object", { k, _, s in #"{"keyId": "\#(k)", "payload": {"version": 1}, "signature": "\#(s)"}"# }, "$.payload"),
        (
            "unpadded base64", { k, p, s in #"{"keyId": "\#(k)", "payload": "\#(p.replacingOccurrences(of: "=", with: ""))", "signature": "\#(s)"}"# },
            "$.payload"
        ),
    ]

    @Test("envelope spellings: one accepted form, the rest malformed at their path", arguments: 0..<8)
    func envelopeSpellings(index: Int) throws {
        let (keyID, payload, signature) = try F.parts(
            try F.sign(serial: 7, policy: F.policy(pins: ["sha256/" + String(repeating: "A", count: 42) + "E=", F.backupPin])))
        let base64 = Base64.encode(payload)
        let padded = base64.hasSuffix("=") ? base64 : Base64.encode(payload + [0x20])  // the unpadded case needs padding to remove
        let text = Self.envelopes[index].text(keyID, index == 7 ? padded : base64, Base64.encode(signature))
        let error = #expect(throws: PinSetError.self) { _ = try PinSetChain(rules: try F.rules()).verify(Array(text.utf8)) }
        #expect(error?.kind == .malformed, "\(Self.envelopes[index].name): \(String(describing: error))")
        #expect(error?.problems.contains { $0.path == Self.envelopes[index].path } == true, "\(Self.envelopes[index].name): \(String(describing: error))")
    }

    @Test("whitespace and member order of the envelope do not matter; the payload bytes are what is signed")
    func envelopeOrder() throws {
        let (keyID, payload, signature) = try F.parts(try F.sign(serial: 7))
        let reordered = "\r\n{ \"signature\":\"\(Base64.encode(signature))\",\r\n\"payload\" : \"\(Base64.encode(payload))\", \"keyId\":\"\(keyID)\" }\r\n"
        #expect(try PinSetChain(rules: try F.rules()).verify(Array(reordered.utf8)).serial == 7)
    }

    /// Signed payloads that break the schema: signed by a trusted key, still refused.
    static let payloads: [(name: String, payload: String, kind: PolicyConfigurationError.Kind, path: String)] = [
        ("no pinSet member", #"{"version": 1, "hosts": [{"host": "a.test"}]}"#, .missingKey, "$.pinSet"),
        (
            "serial 0",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 0, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test"}]}"#,
            .invalidValue, "$.pinSet.serial"
        ),
        (
            "serial past 2^53",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 9007199254740993, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test"}]}"#,
            .invalidValue, "$.pinSet.serial"
        ),
        (
            "serial 1e300",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 1e300, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test"}]}"#,
            .invalidValue, "$.pinSet.serial"
        ),
        (
            "serial 2.5",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 2.5, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test"}]}"#,
            .invalidValue, "$.pinSet.serial"
        ),
        (
            "serial as text",
            #"{"version": 1, "pinSet": {"version": 1, "serial": "9", "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test"}]}"#,
            .wrongType, "$.pinSet.serial"
        ),
        (
            "serial true",
            #"{"version": 1, "pinSet": {"version": 1, "serial": true, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test"}]}"#,
            .wrongType, "$.pinSet.serial"
        ),
        (
            "serial given twice",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 9, "serial": 1, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test"}]}"#,
            .duplicateKey, "$.pinSet.serial"
        ),
        (
            "expiresAt before issuedAt",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 9, "issuedAt": "2027-01-01", "expiresAt": "2026-01-01"}, "hosts": [{"host": "a.test"}]}"#,
            .invalidDate, "$.pinSet.expiresAt"
        ),
        (
            "pin-set version 2",
            #"{"version": 1, "pinSet": {"version": 2, "serial": 9, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test"}]}"#,
            .unsupportedVersion, "$.pinSet.version"
        ),
        (
            "unknown pinSet member",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 9, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01", "threshold": 0}, "hosts": [{"host": "a.test"}]}"#,
            .unknownKey, "$.pinSet.threshold"
        ),
        (
            "one signing key",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 9, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01", "signingKeys": ["MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="]}, "hosts": [{"host": "a.test"}]}"#,
            .invalidValue, "$.pinSet.signingKeys"
        ),
        (
            "a TLS-style RSA key as signing key",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 9, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01", "signingKeys": ["MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAL8=", "MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="]}, "hosts": [{"host": "a.test"}]}"#,
            .invalidValue, "$.pinSet.signingKeys[0]"
        ),
        (
            "a certificate file",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 9, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test", "evaluator": "publicKeys", "certificates": ["/etc/ssl/certs/ca-certificates.crt"]}]}"#,
            .notAllowedInPinSet, "$.hosts[0].certificates"
        ),
        (
            "anchors",
            #"{"version": 1, "anchors": ["/tmp/evil.pem"], "pinSet": {"version": 1, "serial": 9, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test"}]}"#,
            .notAllowedInPinSet, "$.anchors"
        ),
        (
            "the disabled evaluator",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 9, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test", "evaluator": "disabled"}]}"#,
            .notAllowedInPinSet, "$.hosts[0].evaluator"
        ),
        (
            "a TrustKit dictionary", #"{"kTSKPinnedDomains": {}, "pinSet": {"version": 1, "serial": 9, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}}"#,
            .unknownKey, "$.kTSKPinnedDomains"
        ),
        (
            "one pin, enforced",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 9, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test", "pins": ["sha256/C5+lpZ7tcVwmwQIMcRtPbsQtWLABXhQzejna0wHFr8M="]}]}"#,
            .missingBackupPin, "$.hosts[0]"
        ),
        (
            "enforcePinning repeated (report-only by the last)",
            #"{"version": 1, "pinSet": {"version": 1, "serial": 9, "issuedAt": "2026-01-01", "expiresAt": "2027-01-01"}, "hosts": [{"host": "a.test", "enforcePinning": true, "pins": ["sha256/C5+lpZ7tcVwmwQIMcRtPbsQtWLABXhQzejna0wHFr8M=", "sha256/diGVwiVYbubAI3RW4hB9xU8e/CH2GnkuvVFZE8zmgzI="], "enforcePinning": false}]}"#,
            .duplicateKey, "$.hosts[0].enforcePinning"
        ),
    ]

    @Test("a validly signed payload is still refused when it breaks the schema, at its JSON path", arguments: 0..<19)
    func payloadSchema(index: Int) throws {
        let entry = Self.payloads[index]
        let payload = Array(entry.payload.utf8)
        let envelope = F.envelope(keyID: F.publicKey(F.signer).keyID, payload: payload, signature: try F.signer.signature(over: payload))
        let error = #expect(throws: PinSetError.self) { _ = try PinSetChain(rules: try F.rules()).verify(envelope) }
        #expect(error?.kind == .malformed, "\(entry.name)")
        #expect(error?.problems.contains { $0.kind == entry.kind && $0.path == entry.path } == true, "\(entry.name): \(String(describing: error))")
    }

    @Test("a signing-key rotation chain: A signs the rotation to C and D; then only C or D are trusted, and the chain re-verifies")
    func rotationChain() throws {
        let next = [F.publicKey(F.nextSigner), F.publicKey(F.nextBackup)]
        var chain = PinSetChain(rules: try F.rules())
        try chain.accept(try F.sign(serial: 1))
        try chain.accept(try F.sign(serial: 2, next: next))
        #expect(chain.trustedKeys == next && chain.rotations.map(\.serial) == [2])
        // The retired key (possibly compromised) can no longer sign.
        let retired = #expect(throws: PinSetError.self) { try chain.accept(try F.sign(serial: 3)) }
        #expect(retired?.kind == .unknownKey)
        try chain.accept(try F.sign(serial: 3, key: F.nextBackup))
        try chain.accept(try F.sign(serial: 4, key: F.nextSigner))
        #expect(chain.documents.map(\.serial) == [2, 4], "the rotation, then the document in force")
        // From the store, starting at the shipped keys again.
        let (restored, problems) = PinSetChain.restoring(chain.documents.map(\.envelope), rules: try F.rules(at: F.now + 60 * F.day))
        #expect(problems.isEmpty && restored.serial == 4 && restored.trustedKeys == next)
        // Without the rotation document, the later one proves nothing.
        let (orphan, orphanProblems) = PinSetChain.restoring([chain.documents[1].envelope], rules: try F.rules())
        #expect(orphan.current == nil && orphanProblems.count == 1)
    }

    @Test("the rules: two distinct shipped keys, a bounded skew, a bounded baseline serial")
    func rules() throws {
        let one = #expect(throws: PinSetError.self) { _ = try PinSetRules(signingKeys: [F.publicKey(F.signer)]) }
        #expect(one?.kind == .invalidRules)
        #expect(throws: PinSetError.self) { _ = try PinSetRules(signingKeys: [F.publicKey(F.signer), F.publicKey(F.signer)]) }
        #expect(throws: PinSetError.self) { _ = try PinSetRules(signingKeys: F.shippedKeys, clockSkew: -1) }
        #expect(throws: PinSetError.self) { _ = try PinSetRules(signingKeys: F.shippedKeys, clockSkew: PinSetRules.maximumClockSkew + 1) }
        #expect(throws: PinSetError.self) { _ = try PinSetRules(signingKeys: F.shippedKeys, baselineSerial: -1) }
        // A baseline serial: older stored documents are older than the app.
        var chain = PinSetChain(rules: try F.rules(baseline: 10))
        let old = #expect(throws: PinSetError.self) { try chain.accept(try F.sign(serial: 10)) }
        #expect(old?.kind == .serialNotIncreasing)
        // A TLS key (an RSA SubjectPublicKeyInfo) is no signing key.
        let rsa = try LabKey.shared(.rsa(bits: 2048), slot: 235)
        #expect(throws: PinSetError.self) { _ = try PinSetSigningKey(publicKeyInfoDER: rsa.publicKeyInfoDER) }
    }

    @Test("signing keys are never TLS keys: a set pinning a signing key (trusted or introduced) is refused, and never signed")
    func signingKeysAreNotPins() throws {
        let signerPin = "sha256/" + Base64.encode(SHA256.hash(F.publicKey(F.backupSigner).publicKeyInfoDER))
        let nextPin = "sha256/" + Base64.encode(SHA256.hash(F.publicKey(F.nextSigner).publicKeyInfoDER))
        for (pins, next) in [([signerPin, F.backupPin], nil), ([F.rootPin, nextPin], [F.publicKey(F.nextSigner), F.publicKey(F.nextBackup)])] {
            let payload = F.policy(pins: pins)
            // Signed by hand (the signer refuses, below), so the client's own check is what refuses it.
            let member =
                #""pinSet": {"version": 1, "serial": 5, "issuedAt": "2026-01-01", "expiresAt": "2099-01-01""#
                + (next.map { #", "signingKeys": ["# + $0.map { "\"\($0.base64)\"" }.joined(separator: ", ") + "]" } ?? "") + "}, "
            let text = Array(("{" + member + String(decoding: payload.dropFirst(), as: UTF8.self)).utf8)
            let envelope = F.envelope(keyID: F.publicKey(F.signer).keyID, payload: text, signature: try F.signer.signature(over: text))
            let error = #expect(throws: PinSetError.self) { _ = try PinSetChain(rules: try F.rules()).verify(envelope) }
            #expect(error?.problems.map(\.kind) == [.notAllowedInPinSet], "\(String(describing: error))")
        }
        let signerOwnPin = "sha256/" + Base64.encode(SHA256.hash(F.publicKey(F.signer).publicKeyInfoDER))
        #expect(throws: PinSetError.self) { _ = try F.sign(serial: 5, policy: F.policy(pins: [signerOwnPin, F.backupPin])) }
    }

    @Test("key ids are computed from the key, and the embedded form round-trips")
    func keyIDs() throws {
        let key = F.publicKey(F.signer)
        #expect(key.keyID == Hex.encode(SHA256.hash(key.publicKeyInfoDER)) && key.keyID.count == 64)
        #expect(try PinSetSigningKey(base64: key.base64) == key)
        #expect(throws: PinSetError.self) { _ = try PinSetSigningKey(base64: key.base64 + "\n") }
    }
}

@Suite("signed pin sets: what decides, before and after expiry")
struct PinSetExpiryTests {
    typealias F = PinSetFixture

    /// A document pinning the fixtures' root and spare, expiring at `expiresAt`, laid over a
    /// baseline that pins two unrelated keys (the set the server has moved away from).
    static func evaluator(expiresAt: Int64, expiry: PinSetExpiry) throws -> TrustPolicy {
        var chain = PinSetChain(rules: try F.rules(at: expiresAt - 3600))
        try chain.accept(try F.sign(serial: 1, issuedAt: expiresAt - 7200, expiresAt: expiresAt))
        let stale = ["sha256/C5+lpZ7tcVwmwQIMcRtPbsQtWLABXhQzejna0wHFr8M=", "sha256/diGVwiVYbubAI3RW4hB9xU8e/CH2GnkuvVFZE8zmgzI="]
        let baseline = try PolicyFile.parse(F.policy(pins: stale))
        return baseline.overlaying(chain.current, expiry: expiry, rules: try F.rules(skew: 0))
    }

    @Test("in force until expiresAt (with the skew), then the baseline decides, noted in the record")
    func baseline() throws {
        let fixtures = PolicyFixtures.shared
        let trust = fixtures.trust(fixtures.validChain)
        let inForce = try Self.evaluator(expiresAt: PolicyFixtures.now + 1, expiry: .baseline).decide(trust, forHost: PolicyFixtures.host)
        #expect(inForce.isTrusted && inForce.record.notes.allSatisfy { !$0.contains("expired") })
        let expired = try Self.evaluator(expiresAt: PolicyFixtures.now, expiry: .baseline).decide(trust, forHost: PolicyFixtures.host)
        #expect(!expired.isTrusted, "the baseline's stale pins refuse: fail closed")
        #expect(expired.record.notes.contains { $0.contains("signed pin set 1 expired") && $0.contains("baseline") }, "\(expired.record.notes)")
    }

    @Test("report-only on expiry, for the listed hosts only: the expired pins still checked, a mismatch allowed and noted")
    func reportOnly() throws {
        let fixtures = PolicyFixtures.shared
        let pattern = try HostPattern(PolicyFixtures.host)
        let evaluator = try Self.evaluator(expiresAt: PolicyFixtures.now, expiry: .reportOnly([pattern]))
        // The genuine chain still matches the expired document's pins.
        #expect(evaluator.decide(fixtures.trust(fixtures.validChain), forHost: PolicyFixtures.host).isTrusted)
        // Another key for the host (a valid chain from another CA): allowed, reported, noted.
        let other = fixtures.trust(fixtures.interceptedChain)
        let decision = evaluator.decide(other, forHost: PolicyFixtures.host)
        #expect(decision.isTrusted, "\(decision)")
        #expect(decision.record.notes.contains { $0.contains("report-only") }, "\(decision.record.notes)")
        // Not listed: the baseline decides.
        let strict = try Self.evaluator(expiresAt: PolicyFixtures.now, expiry: .reportOnly([try HostPattern("other.test")]))
        #expect(!strict.decide(fixtures.trust(fixtures.validChain), forHost: PolicyFixtures.host).isTrusted)
    }
}
