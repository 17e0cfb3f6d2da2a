import CertificateParsing
import Foundation
public import TrustEvaluation

/// A signed pin set (docs/pinset-format.md): pins per host pattern, in the policy-file form, with
/// a serial and a validity window, and a detached signature over the exact payload bytes.
///
/// A document changes pins only (pins, negative pins, expiry, report-only mode, report URIs):
/// laid over the app's baseline (``TrustPolicy/overlaying(_:expiry:rules:)``), every other input
/// of the baseline (evaluators, anchors, revocation) stays in force. Beside its pins it may raise
/// Certificate Transparency (``certificateTransparency``), never lower it.
///
/// As served, a document is a small JSON envelope,
/// `{"keyId": "<hex>", "payload": "<base64>", "signature": "<base64>"}`, whose payload is the
/// signed JSON text itself, so no re-encoding, key order or whitespace can change what was
/// signed. Values of this type exist only for documents whose signature verified
/// (``PinSetChain/accept(_:)``, ``PinSetChain/verify(_:)``).
public struct PinSetDocument: Sendable {
    /// The largest envelope accepted, in bytes (256 KiB): checked before anything is parsed.
    public static let maximumSize = 256 << 10
    /// The most signing keys one document may introduce.
    public static let maximumSigningKeys = 16
    /// The largest serial (2^53 − 1, exact in every JSON implementation, so no reader rounds it
    /// and no increment overflows).
    public static let maximumSerial: Int64 = (1 << 53) - 1

    /// The envelope exactly as received.
    public let envelope: [UInt8]
    /// The signed payload bytes.
    public let payload: [UInt8]
    /// The key that signed it.
    public let signedBy: PinSetSigningKey
    /// The serial: each new document has a greater one.
    public let serial: Int64
    /// When it was signed (seconds since 1970).
    public let issuedAt: Int64
    /// When it stops being in force (seconds since 1970).
    public let expiresAt: Int64
    /// The pins, by host pattern.
    public let pins: PinningConfiguration
    /// The revocation settings it asks for (they may strengthen the baseline's, never weaken
    /// them: ``PinSetRevocation``).
    public let revocation: PinSetRevocation
    /// What the document asks of Certificate Transparency (its top level's and its host
    /// entries' `certificateTransparency`): a mode and a policy, which can only raise the
    /// baseline's (``PinSetCTRequirement``).
    public let certificateTransparency: [PinSetCTRequirement]
    /// The keys trusted to sign the documents after this one, when it rotates them; `nil`
    /// keeps the keys in force.
    public let nextSigningKeys: [PinSetSigningKey]?

    /// The envelope's parts, not yet verified.
    struct Envelope {
        let keyID: String
        let payload: [UInt8]
        let signature: [UInt8]
    }

    /// The payload's fields, parsed after its signature verified.
    struct Payload {
        let serial: Int64
        let issuedAt: Int64
        let expiresAt: Int64
        let pins: PinningConfiguration
        let revocation: PinSetRevocation
        let nextSigningKeys: [PinSetSigningKey]?
        let certificateTransparency: [PinSetCTRequirement]
    }

    /// Checks a document against `trustedKeys` in the order that exposes the least to an
    /// attacker: size, envelope, key id, signature, and only then the payload's JSON. Serial and
    /// time are the chain's rules (``PinSetChain``).
    static func verify(_ bytes: [UInt8], trustedKeys: [PinSetSigningKey]) throws(PinSetError) -> PinSetDocument {
        let envelope = try parseEnvelope(bytes)
        guard let key = trustedKeys.first(where: { $0.keyID == envelope.keyID }) else {
            throw PinSetError(.unknownKey, "signed by key \(envelope.keyID.prefix(16))…, which is not among the \(trustedKeys.count) trusted signing keys")
        }
        if case .invalid(let why) = key.check(envelope.signature, over: envelope.payload) {
            // The kind is the error's own; the reason alone says how (not "signature badSignature: …" again).
            throw PinSetError(.badSignature, "the signature does not verify under \(key): \(why.reason)")
        }
        let payload = try parsePayload(envelope.payload)
        try refuseSigningKeysAsPins(payload, trustedKeys: trustedKeys)
        return PinSetDocument(
            envelope: bytes, payload: envelope.payload, signedBy: key, serial: payload.serial, issuedAt: payload.issuedAt,
            expiresAt: payload.expiresAt, pins: payload.pins, revocation: payload.revocation,
            certificateTransparency: payload.certificateTransparency, nextSigningKeys: payload.nextSigningKeys)
    }

    /// The signing keys are never TLS keys: a document that pins one of the keys trusted to
    /// sign it, or one it introduces, is refused (a key that signs updates offline must not also
    /// sit on a server, where a server compromise would yield it).
    static func refuseSigningKeysAsPins(_ payload: Payload, trustedKeys: [PinSetSigningKey]) throws(PinSetError) {
        var problems: [PolicyConfigurationError] = []
        let keys = trustedKeys + (payload.nextSigningKeys ?? [])
        for (index, pinned) in payload.pins.hosts.enumerated() {
            for pin in pinned.pins + pinned.negativePins {
                if let key = keys.first(where: { pin.algorithm.digest($0.publicKeyInfoDER[...]) == pin.digest }) {
                    problems.append(
                        PolicyConfigurationError(
                            .notAllowedInPinSet, path: "$.hosts[\(index)]", "\(pin) is the pin of the signing key \(key): signing keys are never TLS keys"))
                }
            }
        }
        guard problems.isEmpty else { throw PinSetError(.malformed, "the payload pins a signing key", problems: problems) }
    }

    // MARK: - Envelope

    static let envelopeKeys: Set<String> = ["keyId", "payload", "signature"]

    /// The envelope: one JSON object with exactly three string members, each in its one
    /// spelling (canonical base64, lowercase hex).
    static func parseEnvelope(_ bytes: [UInt8]) throws(PinSetError) -> Envelope {
        guard bytes.count <= maximumSize else {
            throw PinSetError(.tooLarge, "\(bytes.count) bytes; a pin set has at most \(maximumSize)")
        }
        let root: Any
        let duplicates: [PolicyConfigurationError]
        do { (root, duplicates) = try PolicyFile.readJSON(bytes) } catch {
            throw PinSetError(.malformed, "the envelope is not JSON", problems: error.problems)
        }
        var reader = ConfigReader()
        reader.problems = duplicates
        guard let object = reader.object(root, "$") else { throw PinSetError(.malformed, "the envelope is not an object", problems: reader.problems) }
        reader.allowOnly(object, envelopeKeys, "$")
        var fields: [String: String] = [:]
        for key in envelopeKeys.sorted() {
            guard object[key] != nil else {
                reader.fail(.missingKey, "$.\(key)", "missing")
                continue
            }
            fields[key] = reader.string(object, key, "$")
        }
        var keyID = ""
        var payload: [UInt8] = []
        var signature: [UInt8] = []
        if let text = fields["keyId"] {
            if PinSetEncoding.isKeyID(text) {
                keyID = text
            } else {
                reader.fail(.invalidValue, "$.keyId", "not 64 lowercase hex digits (SHA-256 of the key's SubjectPublicKeyInfo)")
            }
        }
        if let text = fields["payload"] {
            if let decoded = PinSetEncoding.canonicalBase64(text) {
                payload = decoded
            } else {
                reader.fail(.invalidValue, "$.payload", "not canonical base64 (padded, no whitespace)")
            }
        }
        if let text = fields["signature"] {
            // Ed25519 signatures have 64 bytes, DER ECDSA P-256 ones at most 72.
            if let decoded = PinSetEncoding.canonicalBase64(text), decoded.count <= 72 {
                signature = decoded
            } else {
                reader.fail(.invalidValue, "$.signature", "not canonical base64 of at most 72 bytes")
            }
        }
        guard reader.problems.isEmpty else { throw PinSetError(.malformed, "the envelope is malformed", problems: reader.problems) }
        return Envelope(keyID: keyID, payload: payload, signature: signature)
    }

    // MARK: - Payload

    static let pinSetKeys: Set<String> = ["version", "serial", "issuedAt", "expiresAt", "signingKeys"]

    /// The payload: a policy file in the signed-pin-set profile (pins only: the keys of
    /// ``PolicyFileParser/pinSetHostKeys``; every rule of docs/policy-schema.md for them) with a
    /// `pinSet` member.
    static func parsePayload(_ bytes: [UInt8]) throws(PinSetError) -> Payload {
        let root: Any
        let duplicates: [PolicyConfigurationError]
        do { (root, duplicates) = try PolicyFile.readJSON(bytes) } catch {
            throw PinSetError(.malformed, "the payload is not JSON", problems: error.problems)
        }
        var parser = PolicyFileParser(baseDirectory: ".", profile: .signedPinSet, source: "signed pin set")
        parser.reader.problems = duplicates
        let pins = parser.parsePinSet(root)
        let certificateTransparency = parser.parsePinSetCertificateTransparency(root)
        var meta: (serial: Int64, issuedAt: Int64, expiresAt: Int64, keys: [PinSetSigningKey]?)?
        if let object = root as? [String: Any] {
            if let value = object["pinSet"] {
                meta = parsePinSetMember(value, reader: &parser.reader)
            } else {
                parser.reader.fail(.missingKey, "$.pinSet", "missing: a policy file without a pinSet member is not a signed pin set")
            }
        }
        guard parser.reader.problems.isEmpty, let pins, let meta else {
            throw PinSetError(.malformed, "the payload breaks the pin-set schema", problems: parser.reader.problems)
        }
        return Payload(
            serial: meta.serial, issuedAt: meta.issuedAt, expiresAt: meta.expiresAt, pins: pins, revocation: parser.pinSetRevocation,
            nextSigningKeys: meta.keys, certificateTransparency: certificateTransparency)
    }

    static func parsePinSetMember(
        _ value: Any, reader: inout ConfigReader
    ) -> (serial: Int64, issuedAt: Int64, expiresAt: Int64, keys: [PinSetSigningKey]?)? {
        let path = "$.pinSet"
        guard let object = reader.object(value, path) else { return nil }
        reader.allowOnly(object, pinSetKeys, path)
        let before = reader.problems.count
        for key in ["version", "serial", "issuedAt", "expiresAt"] where object[key] == nil {
            reader.fail(.missingKey, "\(path).\(key)", "missing")
        }
        if let version = reader.integer(object, "version", path), version != 1 {
            reader.fail(.unsupportedVersion, "\(path).version", "pin-set version \(version) is not supported (this library reads version 1)")
        }
        let serial = parseSerial(object["serial"], reader: &reader)
        let issuedAt = reader.date(object, "issuedAt", path)
        let expiresAt = reader.date(object, "expiresAt", path)
        if let issuedAt, let expiresAt, expiresAt <= issuedAt {
            reader.fail(.invalidDate, "\(path).expiresAt", "expiresAt is not after issuedAt")
        }
        var keys: [PinSetSigningKey]?
        if let list = reader.strings(object, "signingKeys", path) {
            var parsed: [PinSetSigningKey] = []
            for (text, keyPath) in list {
                do { parsed.append(try PinSetSigningKey(base64: text)) } catch { reader.fail(.invalidValue, keyPath, error.message) }
            }
            if parsed.count == list.count {
                if let problem = PinSetRules.signingKeyProblem(parsed) { reader.fail(.invalidValue, "\(path).signingKeys", problem) }
            }
            keys = parsed
        }
        guard reader.problems.count == before, let serial, let issuedAt, let expiresAt else { return nil }
        return (serial, issuedAt, expiresAt, keys)
    }

    /// A serial is an integer from 1 to ``maximumSerial``; `1.0`-style spellings of an integer
    /// are read as the policy file reads integers, anything else is refused, never rounded.
    static func parseSerial(_ value: Any?, reader: inout ConfigReader) -> Int64? {
        guard let value else { return nil }
        let path = "$.pinSet.serial"
        guard !ConfigReader.isBool(value), let number = value as? NSNumber else {
            reader.fail(.wrongType, path, "expected an integer, found \(ConfigReader.typeName(value))")
            return nil
        }
        let double = number.doubleValue
        let integer = number.int64Value
        guard double.isFinite, double >= 1, double <= Double(maximumSerial), Double(integer) == double, integer <= maximumSerial else {
            reader.fail(.invalidValue, path, "the serial must be an integer from 1 to \(maximumSerial)")
            return nil
        }
        return integer
    }

    // MARK: - Signing

    /// Signs a policy as a pin set: the operator's side (`servertrust pinset sign`).
    ///
    /// The payload is the policy's JSON text with a `pinSet` member inserted after its opening
    /// brace, so the rest of the text is signed as written; it is parsed back with the client's
    /// rules before it is signed, so a document that no client would accept is never produced.
    /// - Parameters:
    ///   - policyJSON: A policy file's text in the signed-pin-set profile (schema version 1,
    ///     pins only).
    ///   - serial: Greater than every serial signed before (1 … ``maximumSerial``).
    ///   - issuedAt: Seconds since 1970.
    ///   - expiresAt: Seconds since 1970, after `issuedAt`.
    ///   - nextSigningKeys: The keys that will sign the documents after this one, when rotating
    ///     them (at least two distinct keys); `nil` keeps the current ones.
    ///   - key: The Ed25519 or P-256 signing key.
    /// - Returns: The envelope, ready to publish.
    /// - Throws: ``PinSetError`` (`malformed` with every schema problem, or for an unusable key).
    public static func sign(
        policyJSON: [UInt8], serial: Int64, issuedAt: Int64, expiresAt: Int64, nextSigningKeys: [PinSetSigningKey]? = nil,
        key: PrivateKey
    ) throws(PinSetError) -> [UInt8] {
        let signer = try PinSetSigningKey(publicKeyOf: key)
        guard let brace = policyJSON.firstIndex(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }), policyJSON[brace] == UInt8(ascii: "{") else {
            throw PinSetError(.malformed, "the policy is not a JSON object")
        }
        var member =
            #""pinSet": {"version": 1, "serial": \#(serial), "issuedAt": "\#(ASN1TimeText.rfc3339(issuedAt))", "#
            + #""expiresAt": "\#(ASN1TimeText.rfc3339(expiresAt))""#
        if let nextSigningKeys {
            member += #", "signingKeys": ["# + nextSigningKeys.map { "\"\($0.base64)\"" }.joined(separator: ", ") + "]"
        }
        member += "},"
        var payload = Array(policyJSON[...brace])
        payload += Array(("\n  " + member).utf8)
        payload += policyJSON[(brace + 1)...]
        let parsed = try parsePayload(payload)
        try refuseSigningKeysAsPins(parsed, trustedKeys: [signer])
        guard parsed.serial == serial, parsed.issuedAt == issuedAt, parsed.expiresAt == expiresAt else {
            throw PinSetError(.malformed, "serial or times out of range")
        }
        let signature: [UInt8]
        do { signature = try key.signature(over: payload) } catch { throw PinSetError(.malformed, "cannot sign: \(error.reason)") }
        let envelope = #"{"keyId": "\#(signer.keyID)", "payload": "\#(Base64.encode(payload))", "signature": "\#(Base64.encode(signature))"}"# + "\n"
        let bytes = Array(envelope.utf8)
        guard bytes.count <= maximumSize else {
            throw PinSetError(.tooLarge, "the signed document would have \(bytes.count) bytes; a pin set has at most \(maximumSize)")
        }
        return bytes
    }
}
