import CertificateParsing
import TrustEvaluation

/// The `revocation` object of policy files and signed pin sets (docs/policy-schema.md,
/// docs/pinset-format.md): `{"mode": "off" | "soft-fail" | "hard-fail", "depth": "leaf" | "chain",
/// "cacheDirectory": PATH}`, at the top level and per host.
extension PolicyFileParser {
    /// One `revocation` object as written (`mode` is required, the rest inherits).
    struct RevocationObject {
        let mode: RevocationMode?
        let depth: RevocationDepth?
        /// Resolved against the policy file's folder.
        let cacheDirectory: String?
        /// Its JSON path, for problems found when it is combined.
        let path: String
    }

    /// The `revocation` member of `object`, if any; every key goes through ``checkKeys(_:_:_:)``
    /// (a signed pin set may not name a folder).
    mutating func parseRevocation(_ object: [String: Any], _ path: String) -> RevocationObject? {
        guard let value = object["revocation"] else { return nil }
        let objectPath = ConfigReader.path(path, "revocation")
        guard let revocation = reader.object(value, objectPath) else { return nil }
        checkKeys(revocation, .revocation, objectPath)
        var mode: RevocationMode?
        if let text = reader.string(revocation, "mode", objectPath) {
            mode = RevocationMode(rawValue: text)
            if mode == nil { reader.fail(.invalidValue, "\(objectPath).mode", "\"\(text)\" is not off, soft-fail or hard-fail") }
        } else if revocation["mode"] == nil {
            reader.fail(.missingKey, "\(objectPath).mode", "missing: off, soft-fail or hard-fail")
        }
        var depth: RevocationDepth?
        if let text = reader.string(revocation, "depth", objectPath) {
            depth = RevocationDepth(rawValue: text)
            if depth == nil { reader.fail(.invalidValue, "\(objectPath).depth", "\"\(text)\" is not leaf or chain") }
        }
        var cacheDirectory: String?
        if profile == .file, let text = reader.string(revocation, "cacheDirectory", objectPath) {
            if text.isEmpty || text.utf8.contains(0) {
                reader.fail(.invalidValue, "\(objectPath).cacheDirectory", "not a folder path")
            } else {
                cacheDirectory = text.hasPrefix("/") ? text : baseDirectory + "/" + text
            }
        }
        return RevocationObject(mode: mode, depth: depth, cacheDirectory: cacheDirectory, path: objectPath)
    }

    /// A host's ``RevocationPolicy`` from the file's layers: the host's `revocation` object
    /// where it gives a value, the top level's otherwise; the top-level and host `crls` as one
    /// more source. Without any `revocation` object, `crls` keep their 0.1 meaning (hard-fail
    /// over the whole path, those CRLs only) and no CRLs means off.
    mutating func revocationPolicy(
        crls: [CertificateRevocationList], host: RevocationObject?, _ fileLevel: RevocationObject?, _ path: String
    ) -> RevocationPolicy {
        guard host != nil || fileLevel != nil else { return RevocationPolicy(revocationLists: crls) }
        let mode = host?.mode ?? fileLevel?.mode ?? .off
        let modePath = (host?.mode != nil ? host : fileLevel).map { "\($0.path).mode" } ?? path
        // Once per object that says off, however many hosts inherit it.
        if mode == .off, !crls.isEmpty, !reader.problems.contains(where: { $0.path == modePath && $0.kind == .conflictingOptions }) {
            reader.fail(.conflictingOptions, modePath, "revocation is off, but crls are given (they would be ignored)")
        }
        return RevocationPolicy(
            mode: mode, depth: host?.depth ?? fileLevel?.depth ?? .chain, revocationLists: crls,
            fetching: .distributionPoints(cacheDirectory: host?.cacheDirectory ?? fileLevel?.cacheDirectory))
    }

    /// A signed pin set's `revocation` member of `object`, if any: mode and optional depth.
    mutating func parsePinSetRevocation(_ object: [String: Any], _ path: String) -> PinSetRevocation.Setting? {
        guard let parsed = parseRevocation(object, path), let mode = parsed.mode else { return nil }
        return PinSetRevocation.Setting(mode: mode, depth: parsed.depth)
    }
}
