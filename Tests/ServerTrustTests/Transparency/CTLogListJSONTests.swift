import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

// Log lists in Chrome's v3 JSON schema and Apple's shape, written by the Lab (LabCTLogList)
// or by hand, read by CTLogList(json:), signed and not.

private enum ListSlot {
    static let alpha = 650
    static let beta = 651
    static let tiled = 652
    static let gamma = 653
    static let listP256 = 654
    static let listRSA = 655
    static let listEd25519 = 656
    static let listEd448 = 657
    static let pki = 658
}

@Suite("CT log lists: JSON")
struct CTLogListJSONTests {
    static func labLogs() throws -> [LabCTLog] {
        var alpha = try LabCTLog(name: "Lab 'Alpha'", operatorName: "Operator A", key: LabKey.shared(.p256, slot: ListSlot.alpha))
        alpha.temporalInterval = (LabClock.reference - LabClock.year)..<(LabClock.reference + LabClock.year)
        let tiled = try LabCTLog(
            name: "Lab 'Tiles'", operatorName: "Operator A", key: LabKey.shared(.p256, slot: ListSlot.tiled), state: .readOnly,
            stateSince: LabClock.reference - 10 * LabClock.day, isTiled: true)
        let beta = try LabCTLog(name: "Lab 'Beta'", operatorName: "Operator B", key: LabKey.shared(.rsa(bits: 2048), slot: ListSlot.beta))
            .with(state: .retired, since: LabClock.reference - 5 * LabClock.day)
        var gamma = try LabCTLog(name: "Lab 'Gamma'", operatorName: "Operator C", key: LabKey.shared(.p256, slot: ListSlot.gamma), state: .qualified)
        gamma.previousOperators = [.init(name: "Operator B", endTime: LabClock.reference - 100 * LabClock.day)]
        return [alpha, tiled, beta, gamma]
    }

    @Test("Chrome's v3 form: operators, RFC 6962 and tiled logs, states, shards, previous operators and the list timestamp")
    func chromeV3() throws {
        let logs = try Self.labLogs()
        let list = try CTLogList(json: LabCTLogList(logs: logs, version: "42.7").json())
        #expect(list.timestamp.secondsSince1970 == LabClock.reference - LabClock.day)
        #expect(list.timestampSource == .listed)
        #expect(list.version == "42.7")
        #expect(list.logs.map(\.name) == ["Lab 'Alpha'", "Lab 'Tiles'", "Lab 'Beta'", "Lab 'Gamma'"])
        let alpha = try #require(list.log(id: logs[0].logID))
        #expect(alpha.operatorName == "Operator A")
        #expect(alpha.api == .rfc6962)
        #expect(alpha.state == CTLogState(.usable, since: ASN1Time(secondsSince1970: LabClock.reference - LabClock.year)))
        #expect(alpha.temporalInterval?.startInclusive.secondsSince1970 == LabClock.reference - LabClock.year)
        #expect(alpha.temporalInterval?.endExclusive.secondsSince1970 == LabClock.reference + LabClock.year)
        #expect(alpha.maximumMergeDelay == 86_400)
        #expect(alpha.url?.hasPrefix("https://") == true)
        let tiled = try #require(list.log(id: logs[1].logID))
        #expect(tiled.api == .staticCTAPI)
        #expect(tiled.state?.kind == .readOnly)
        #expect(list.log(id: logs[2].logID)?.state?.kind == .retired)
        let gamma = try #require(list.log(id: logs[3].logID))
        #expect(
            gamma.previousOperators == [
                CTLog.PreviousOperator(name: "Operator B", endTime: ASN1Time(secondsSince1970: LabClock.reference - 100 * LabClock.day))
            ])
        #expect(gamma.operatorName(atMilliseconds: UInt64(LabClock.reference - 101 * LabClock.day) * 1000) == "Operator B")
        #expect(gamma.operatorName(atMilliseconds: UInt64(LabClock.reference - 100 * LabClock.day) * 1000) == "Operator C")
    }

    @Test("Apple's form has no timestamp: the app supplies one, or the newest state change stands in")
    func appleShape() throws {
        let json = try LabCTLogList(logs: try Self.labLogs()).json(format: .apple)
        let supplied = try CTLogList(json: json, publishedAt: ASN1Time(secondsSince1970: LabClock.reference - 2 * LabClock.day))
        #expect(supplied.timestampSource == .supplied)
        #expect(supplied.timestamp.secondsSince1970 == LabClock.reference - 2 * LabClock.day)
        let undated = try CTLogList(json: json)
        #expect(undated.timestampSource == .newestStateChange)
        #expect(undated.timestamp.secondsSince1970 == LabClock.reference - 5 * LabClock.day)
        #expect(undated.logs.count == 4)
    }

    @Test("a list read from JSON drives the evaluation: compliant with its logs, not with another list's")
    func endToEnd() throws {
        let logs = try Self.labLogs()
        let pki = try LabPKI.webChain(host: "ct.example.test", keySlot: ListSlot.pki)
        let spec = LabPKI.leafSpec(
            host: "ct.example.test", keyAlgorithm: .p256, notBefore: LabClock.reference - 10 * LabClock.day, notAfter: LabClock.reference + 80 * LabClock.day)
        let issued = try LabCertificate.issueWithEmbeddedSCTs(spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, logs: [logs[0], logs[3]])
        let leaf = try Certificate(derEncoded: issued.certificate.der)
        let issuer = try Certificate(derEncoded: pki.intermediate.der)
        for format in [LabCTLogList.Format.chromeV3, .apple] {
            let list = try CTLogList(json: LabCTLogList(logs: logs).json(format: format), publishedAt: ASN1Time(secondsSince1970: LabClock.reference))
            for policy in CTPolicy.allCases {
                let evaluation = CertificateTransparency.evaluate(leaf: leaf, issuer: issuer, logList: list, policy: policy, at: LabClock.reference)
                #expect(evaluation.verdict == .compliant, "\(format) \(policy)\n\(evaluation)")
            }
        }
        let others = try CTLogList(json: LabCTLogList(logs: [logs[1], logs[2]]).json())
        #expect(CertificateTransparency.evaluate(leaf: leaf, issuer: issuer, logList: others, policy: .chrome, at: LabClock.reference).verdict == .nonCompliant)
    }

    @Test("a detached signature is checked before the list is read", arguments: [LabKeyAlgorithm.p256, .rsa(bits: 2048), .ed25519])
    func signedList(_ algorithm: LabKeyAlgorithm) throws {
        let slot = algorithm == .p256 ? ListSlot.listP256 : algorithm == .ed25519 ? ListSlot.listEd25519 : ListSlot.listRSA
        let key = try LabKey.shared(algorithm, slot: slot)
        let publicKey = try SubjectPublicKeyInfo(derEncoded: key.publicKeyInfoDER)
        let lab = LabCTLogList(logs: try Self.labLogs())
        let json = try lab.json()
        let signature = try lab.signature(over: json, with: key)
        #expect(try CTLogList(json: json, signature: signature, signedBy: publicKey).logs.count == 4)
        var altered = json
        altered[altered.count / 2] ^= 0x01
        #expect(throws: CTLogListError(.badSignature, at: "", "")) { try CTLogList(json: altered, signature: signature, signedBy: publicKey) }
        let other = try SubjectPublicKeyInfo(derEncoded: LabKey.shared(.p256, slot: ListSlot.alpha).publicKeyInfoDER)
        #expect(throws: CTLogListError.self) { try CTLogList(json: json, signature: signature, signedBy: other) }
        #expect(throws: CTLogListError(.badSignature, at: "", "")) { try CTLogList(json: json, signature: [], signedBy: publicKey) }
    }

    @Test("a key that cannot sign lists is refused")
    func unsupportedKey() throws {
        let key = try SubjectPublicKeyInfo(derEncoded: LabKey.shared(.ed448, slot: ListSlot.listEd448).publicKeyInfoDER)
        #expect(throws: CTLogListError(.unsupportedKey, at: "", "")) { try CTLogList(json: Array("{}".utf8), signature: [1], signedBy: key) }
    }

    struct BadList: Sendable, CustomTestStringConvertible {
        let name: String
        let json: String
        let code: CTLogListError.Code
        let path: String
        var testDescription: String { "\(name) → \(code) at \(path)" }
    }

    /// A valid P-256 key and its log ID, for hand-written lists.
    static let key = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEHblsqctplMVc5ramA7vSuNxUQxcomQwGAVAdnWTAWUYr3MgDHQW0LagJ95lB7QT75Ve6JgT2EVLOFGU7L3YrwA=="
    static let logID = "7s3QZNXbGs7FXLedtM0TojKHRny87N7DUUhZRnEftZs="

    static func list(log: String, operators extra: String = "") -> String {
        """
        {"version": "1", "log_list_timestamp": "2025-12-31T00:00:00Z", "operators": [{"name": "Op", "email": [], "logs": [\(log)]}\(extra)]}
        """
    }

    static func log(
        _ members: String = "", key: String = key, logID: String = logID, state: String = #""state": {"usable": {"timestamp": "2024-01-01T00:00:00Z"}}"#
    )
        -> String
    {
        #"{"description": "L", "key": "\#(key)", "log_id": "\#(logID)", "mmd": 86400, \#(state)\#(members.isEmpty ? "" : ", " + members)}"#
    }

    static let badLists: [BadList] = [
        BadList(name: "not JSON", json: "{", code: .malformedJSON, path: "$"),
        BadList(name: "an array at the top", json: "[]", code: .wrongType, path: "$"),
        BadList(name: "no operators", json: #"{"version": "1"}"#, code: .missingField, path: "$.operators"),
        BadList(name: "operators not an array", json: #"{"operators": {}}"#, code: .wrongType, path: "$.operators"),
        BadList(name: "operator without a name", json: #"{"operators": [{"logs": []}]}"#, code: .missingField, path: "$.operators[0].name"),
        BadList(name: "key not base64", json: list(log: log(key: "!!")), code: .invalidValue, path: "$.operators[0].logs[0].key"),
        BadList(name: "key not a SubjectPublicKeyInfo", json: list(log: log(key: "AAAA")), code: .invalidValue, path: "$.operators[0].logs[0].key"),
        BadList(
            name: "log_id of 31 bytes", json: list(log: log(logID: String(repeating: "A", count: 40) + "AA==")), code: .invalidValue,
            path: "$.operators[0].logs[0].log_id"),
        BadList(
            name: "log_id of another key", json: list(log: log(logID: "TnWjJ1yaEMM4W2zU3z9S6x3w4I4bjWnAsfpksWKaOd8=")), code: .logIDMismatch,
            path: "$.operators[0].logs[0].log_id"),
        BadList(name: "missing key", json: list(log: #"{"log_id": "\#(logID)"}"#), code: .missingField, path: "$.operators[0].logs[0].key"),
        BadList(
            name: "two states",
            json: list(log: log(state: #""state": {"usable": {"timestamp": "2024-01-01T00:00:00Z"}, "retired": {"timestamp": "2025-01-01T00:00:00Z"}}"#)),
            code: .invalidValue, path: "$.operators[0].logs[0].state"),
        BadList(
            name: "a state repeated as a member name",
            json: list(
                log: log(state: #""state": {"usable": {"timestamp": "2024-01-01T00:00:00Z"}}, "state": {"retired": {"timestamp": "2024-01-01T00:00:00Z"}}"#)),
            code: .malformedJSON, path: "$.operators[0].logs[0].state"),
        BadList(
            name: "a state without a timestamp", json: list(log: log(state: #""state": {"usable": {}}"#)), code: .missingField,
            path: "$.operators[0].logs[0].state.usable.timestamp"),
        BadList(
            name: "a date that is not RFC 3339", json: list(log: log(state: #""state": {"usable": {"timestamp": "2024-01-01"}}"#)), code: .invalidValue,
            path: "$.operators[0].logs[0].state.usable.timestamp"),
        BadList(
            name: "mmd as a string", json: list(log: log().replacingOccurrences(of: "86400", with: "\"86400\"")), code: .wrongType,
            path: "$.operators[0].logs[0].mmd"),
        BadList(
            name: "mmd as a boolean", json: list(log: log().replacingOccurrences(of: "86400", with: "true")), code: .wrongType,
            path: "$.operators[0].logs[0].mmd"),
        BadList(
            name: "an empty temporal interval",
            json: list(log: log(#""temporal_interval": {"start_inclusive": "2025-01-01T00:00:00Z", "end_exclusive": "2025-01-01T00:00:00Z"}"#)),
            code: .invalidValue, path: "$.operators[0].logs[0].temporal_interval"),
        BadList(
            name: "a temporal interval without an end", json: list(log: log(#""temporal_interval": {"start_inclusive": "2025-01-01T00:00:00Z"}"#)),
            code: .missingField, path: "$.operators[0].logs[0].temporal_interval"),
        BadList(
            name: "a previous operator without an end time", json: list(log: log(#""previous_operators": [{"name": "X"}]"#)), code: .missingField,
            path: "$.operators[0].logs[0].previous_operators[0].end_time"),
        BadList(
            name: "one log under two operators", json: list(log: log(), operators: #", {"name": "Op2", "logs": [\#(log())]}"#), code: .duplicateLog,
            path: "$.operators"),
        BadList(
            name: "a list timestamp that is not a date", json: #"{"log_list_timestamp": "yesterday", "operators": []}"#, code: .invalidValue,
            path: "$.log_list_timestamp"),
    ]

    @Test("a malformed list is a typed error at its JSON path", arguments: badLists)
    func badList(_ bad: BadList) {
        do {
            _ = try CTLogList(json: Array(bad.json.utf8))
            Issue.record("accepted")
        } catch {
            #expect(error.code == bad.code, "\(error)")
            #expect(error.path == bad.path, "\(error)")
        }
    }

    @Test("unknown members and state names are tolerated; fractional seconds are read")
    func forwardCompatible() throws {
        let json = Self.list(
            log: Self.log(
                #""future_field": {"x": 1}, "temporal_interval": {"start_inclusive": "2025-01-01T00:00:00.5Z", "end_exclusive": "2026-06-01T00:00:00Z"}"#,
                state: #""state": {"expired": {"timestamp": "2016-11-30T13:24:18.33Z"}}"#))
        let list = try CTLogList(json: Array(json.utf8))
        let log = try #require(list.logs.first)
        #expect(log.state?.kind == .unrecognized("expired"))
        #expect(log.state?.since.secondsSince1970 == 1_480_512_258)
        #expect(log.temporalInterval?.startInclusive.secondsSince1970 == 1_735_689_600)
        #expect(list.logs.count == 1)
    }
}
