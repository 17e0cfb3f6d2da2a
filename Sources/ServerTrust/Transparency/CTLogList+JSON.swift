public import CertificateParsing
import Foundation
public import TrustEvaluation

/// Reading CT log lists from the JSON that Chrome and Apple publish.
///
/// The format is Chrome's v3 schema (www.gstatic.com/ct/log_list/v3/log_list_schema.json),
/// which Apple's list (valid.apple.com/ct/log_list/current_log_list.json) follows with other
/// top-level fields: `operators[]` with `name` and the operator's RFC 6962 `logs[]` and
/// static-ct-api `tiled_logs[]`; each log with `key` (base64 DER SubjectPublicKeyInfo),
/// `log_id` (base64 SHA-256 of the key), `description`, `mmd`, `url` or `submission_url`,
/// `state` (one of `pending`, `qualified`, `usable`, `readonly`, `retired`, `rejected`, each
/// with a `timestamp`), `temporal_interval` and `previous_operators`. Chrome's list has a
/// `log_list_timestamp`; Apple's has `assetVersion` instead and no timestamp.
///
/// The reader lives here rather than in `TrustEvaluation` because it needs a JSON parser
/// (Foundation's), which the OpenSSL-level module does not link; what it builds is
/// `TrustEvaluation`'s ``CTLogList``, the form ``/TrustEvaluation/CertificateTransparency`` takes.
///
/// Strict where a wrong reading would change a decision, lenient where the schema grows: a
/// repeated member name, a `log_id` that is not the key's hash, two logs with one key, two
/// states on one log, a malformed key or date are errors; unknown members are ignored, and an
/// unknown state name is kept as ``/TrustEvaluation/CTLogState/Kind/unrecognized(_:)`` (its SCTs never count).
extension CTLogList {
    /// Reads a log list.
    ///
    /// - Parameters:
    ///   - json: The list's bytes.
    ///   - publishedAt: When the list was published, used only when it has no
    ///     `log_list_timestamp` (Apple's list): its download time or `Last-Modified` date. Without
    ///     either, the newest state change in the list stands in (``/TrustEvaluation/CTLogList/TimestampSource``).
    /// - Throws: ``/TrustEvaluation/CTLogListError`` naming the JSON path of the first problem.
    public init(json: [UInt8], publishedAt: ASN1Time? = nil) throws(CTLogListError) {
        self = try CTLogListReader.read(json, publishedAt: publishedAt)
    }

    /// Reads a log list after checking a detached signature over its exact bytes with a key the
    /// app ships, as Chrome's `log_list.sig` signs `log_list.json`: RSASSA-PKCS1-v1_5 with
    /// SHA-256 for an RSA key, ECDSA with SHA-256 for an EC key, Ed25519 for an Ed25519 key.
    ///
    /// - Parameters:
    ///   - json: The list's bytes.
    ///   - signature: The detached signature.
    ///   - key: The list signer's public key.
    ///   - publishedAt: As in ``init(json:publishedAt:)``.
    ///   - signatureVerifier: The signature seam.
    /// - Throws: ``/TrustEvaluation/CTLogListError``: ``/TrustEvaluation/CTLogListError/Code/badSignature`` before anything is
    ///   parsed when the signature does not verify, ``/TrustEvaluation/CTLogListError/Code/unsupportedKey`` for a
    ///   key of another type.
    public init<Verifier: SignatureVerifier>(
        json: [UInt8], signature: [UInt8], signedBy key: SubjectPublicKeyInfo, publishedAt: ASN1Time? = nil, signatureVerifier: Verifier
    ) throws(CTLogListError) {
        let algorithm: SignatureAlgorithm
        switch key.key {
        case .rsa: algorithm = .rsaPKCS1(.sha256)
        case .ec: algorithm = .ecdsa(.sha256)
        case .ed25519: algorithm = .ed25519
        default: throw CTLogListError(.unsupportedKey, at: "", "a \(key.key.algorithmName) key cannot sign log lists (RSA, EC or Ed25519)")
        }
        let verificationKey: Verifier.Key
        do { verificationKey = try signatureVerifier.makeKey(key) } catch {
            throw CTLogListError(.unsupportedKey, at: "", "the log list key cannot be used: \(error)")
        }
        if case .invalid(let error) = signatureVerifier.check(signature: signature[...], over: json[...], algorithm: algorithm, key: verificationKey) {
            throw CTLogListError(.badSignature, at: "", "the log list's signature does not verify: \(error.reason)")
        }
        try self.init(json: json, publishedAt: publishedAt)
    }

    /// ``init(json:signature:signedBy:publishedAt:signatureVerifier:)`` with libcrypto.
    ///
    /// - Parameters:
    ///   - json: The list's bytes.
    ///   - signature: The detached signature.
    ///   - key: The list signer's public key.
    ///   - publishedAt: As in ``init(json:publishedAt:)``.
    /// - Throws: ``/TrustEvaluation/CTLogListError``.
    public init(json: [UInt8], signature: [UInt8], signedBy key: SubjectPublicKeyInfo, publishedAt: ASN1Time? = nil) throws(CTLogListError) {
        try self.init(json: json, signature: signature, signedBy: key, publishedAt: publishedAt, signatureVerifier: OpenSSLSignatureVerifier())
    }
}

/// The v3 schema, member by member, each problem at its JSON path.
enum CTLogListReader {
    static func read(_ json: [UInt8], publishedAt: ASN1Time?) throws(CTLogListError) -> CTLogList {
        let root: Any
        do { root = try JSONSerialization.jsonObject(with: Data(json)) } catch {
            throw CTLogListError(.malformedJSON, at: "$", "not JSON (\(error.localizedDescription))")
        }
        // A repeated name ("state" twice) would be read one way here and another way elsewhere.
        if let repeated = JSONDuplicateKeys.problems(in: json).first {
            throw CTLogListError(.malformedJSON, at: repeated.path, repeated.message)
        }
        let top = try object(root, "$")
        let timestamp = try optionalTime(top, "log_list_timestamp", "$")
        var logs: [CTLog] = []
        for (index, element) in try array(top, "operators", "$", required: true).enumerated() {
            let path = "$.operators[\(index)]"
            let operatorObject = try object(element, path)
            let name = try string(operatorObject, "name", path)
            for (member, api) in [("logs", CTLog.API.rfc6962), ("tiled_logs", .staticCTAPI)] {
                for (logIndex, log) in try array(operatorObject, member, path, required: false).enumerated() {
                    logs.append(try self.log(log, operatorName: name, api: api, path: "\(path).\(member)[\(logIndex)]"))
                }
            }
        }
        let version = try optionalString(top, "version", "$")
        do {
            if let timestamp {
                return try CTLogList(logs: logs, timestamp: timestamp, timestampSource: .listed, version: version)
            }
            return try CTLogList(logs: logs, timestamp: publishedAt, timestampSource: .supplied, version: version)
        } catch {
            throw error.at("$.operators")
        }
    }

    private static func log(_ value: Any, operatorName: String, api: CTLog.API, path: String) throws(CTLogListError) -> CTLog {
        let entry = try object(value, path)
        let keyText = try string(entry, "key", path)
        guard let keyDER = Base64.decode(Array(keyText.utf8)) else {
            throw CTLogListError(.invalidValue, at: "\(path).key", "not base64")
        }
        let key: SubjectPublicKeyInfo
        do { key = try SubjectPublicKeyInfo(derEncoded: keyDER) } catch {
            throw CTLogListError(.invalidValue, at: "\(path).key", "not a DER SubjectPublicKeyInfo: \(error)")
        }
        let idText = try string(entry, "log_id", path)
        guard let logID = Base64.decode(Array(idText.utf8)), logID.count == 32 else {
            throw CTLogListError(.invalidValue, at: "\(path).log_id", "not the base64 of 32 bytes")
        }
        let description = try optionalString(entry, "description", path) ?? idText
        let url = try optionalString(entry, api == .rfc6962 ? "url" : "submission_url", path)
        let mmd = try optionalInteger(entry, "mmd", path)
        let state = try self.state(entry, path)
        var interval: CTTemporalInterval?
        if let intervalValue = entry["temporal_interval"] {
            let intervalPath = "\(path).temporal_interval"
            let intervalObject = try object(intervalValue, intervalPath)
            guard let start = try optionalTime(intervalObject, "start_inclusive", intervalPath),
                let end = try optionalTime(intervalObject, "end_exclusive", intervalPath)
            else { throw CTLogListError(.missingField, at: intervalPath, "start_inclusive and end_exclusive are required") }
            guard start < end else { throw CTLogListError(.invalidValue, at: intervalPath, "start_inclusive is not before end_exclusive") }
            interval = CTTemporalInterval(startInclusive: start, endExclusive: end)
        }
        var previous: [CTLog.PreviousOperator] = []
        for (index, element) in try array(entry, "previous_operators", path, required: false).enumerated() {
            let elementPath = "\(path).previous_operators[\(index)]"
            let object = try object(element, elementPath)
            let name = try string(object, "name", elementPath)
            guard let end = try optionalTime(object, "end_time", elementPath) else {
                throw CTLogListError(.missingField, at: "\(elementPath).end_time", "required")
            }
            previous.append(CTLog.PreviousOperator(name: name, endTime: end))
        }
        do {
            return try CTLog(
                publicKeyInfo: key, name: description, operatorName: operatorName, state: state, api: api, temporalInterval: interval,
                previousOperators: previous, maximumMergeDelay: mmd, url: url, expectedLogID: logID)
        } catch {
            throw error.at("\(path).log_id")
        }
    }

    /// `state`: an object with exactly one member, the state's name, whose value has a
    /// `timestamp`. A log without `state` has none (and never counts).
    private static func state(_ entry: [String: Any], _ path: String) throws(CTLogListError) -> CTLogState? {
        guard let value = entry["state"] else { return nil }
        let statePath = "\(path).state"
        let states = try object(value, statePath)
        guard states.count == 1, let (name, detail) = states.first else {
            throw CTLogListError(.invalidValue, at: statePath, "a log has exactly one state, found \(states.keys.sorted())")
        }
        let detailPath = "\(statePath).\(name)"
        guard let since = try optionalTime(try object(detail, detailPath), "timestamp", detailPath) else {
            throw CTLogListError(.missingField, at: "\(detailPath).timestamp", "required")
        }
        return CTLogState(CTLogState.Kind(schemaName: name), since: since)
    }

    // MARK: Typed members

    private static func object(_ value: Any, _ path: String) throws(CTLogListError) -> [String: Any] {
        guard let object = value as? [String: Any] else { throw CTLogListError(.wrongType, at: path, "expected an object") }
        return object
    }

    private static func array(_ object: [String: Any], _ key: String, _ path: String, required: Bool) throws(CTLogListError) -> [Any] {
        guard let value = object[key] else {
            if required { throw CTLogListError(.missingField, at: "\(path).\(key)", "required") }
            return []
        }
        guard let array = value as? [Any] else { throw CTLogListError(.wrongType, at: "\(path).\(key)", "expected an array") }
        return array
    }

    private static func string(_ object: [String: Any], _ key: String, _ path: String) throws(CTLogListError) -> String {
        guard let value = try optionalString(object, key, path) else { throw CTLogListError(.missingField, at: "\(path).\(key)", "required") }
        return value
    }

    private static func optionalString(_ object: [String: Any], _ key: String, _ path: String) throws(CTLogListError) -> String? {
        guard let value = object[key] else { return nil }
        guard let string = value as? String else { throw CTLogListError(.wrongType, at: "\(path).\(key)", "expected a string") }
        return string
    }

    private static func optionalInteger(_ object: [String: Any], _ key: String, _ path: String) throws(CTLogListError) -> Int? {
        guard let value = object[key] else { return nil }
        // JSON booleans arrive as NSNumber too; only a non-boolean whole number is an integer.
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c", Double(number.intValue) == number.doubleValue else {
            throw CTLogListError(.wrongType, at: "\(path).\(key)", "expected an integer")
        }
        return number.intValue
    }

    private static func optionalTime(_ object: [String: Any], _ key: String, _ path: String) throws(CTLogListError) -> ASN1Time? {
        guard let text = try optionalString(object, key, path) else { return nil }
        guard let time = ASN1Time(rfc3339: text) else {
            throw CTLogListError(.invalidValue, at: "\(path).\(key)", "\"\(text)\" is not an RFC 3339 date")
        }
        return time
    }
}
