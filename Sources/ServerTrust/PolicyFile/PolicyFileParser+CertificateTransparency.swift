import CertificateParsing
import TrustEvaluation

/// The `certificateTransparency` member of policy files (top level and host entries) and of
/// signed pin sets (docs/policy-schema.md, docs/pinset-format.md).
extension PolicyFileParser {
    /// The members of a `certificateTransparency` object in a policy file.
    static let certificateTransparencyKeys: Set<String> = ["mode", "policy", "logList", "maxLogListAge"]
    /// The members a signed pin set may give: the mode and the policy, never a file or the
    /// list's maximum age (an enforcement timeout a document from the network could stretch).
    static let pinSetCertificateTransparencyKeys: Set<String> = ["mode", "policy"]
    /// The most days `maxLogListAge` may say (ten years).
    static let maximumLogListAgeDays = 3650

    /// A `certificateTransparency` object as written, before the top level and a host entry
    /// are combined: each member the entry gives replaces the top level's.
    struct CTMember {
        var mode: CTMode?
        var policy: CTPolicy?
        var logList: CTLogList?
        var maximumAgeDays: Int?

        /// `self`'s members where given, `base`'s otherwise.
        func over(_ base: CTMember?) -> CTMember {
            CTMember(
                mode: mode ?? base?.mode, policy: policy ?? base?.policy, logList: logList ?? base?.logList,
                maximumAgeDays: maximumAgeDays ?? base?.maximumAgeDays)
        }
    }

    /// Reads `object`'s `certificateTransparency` member, if any (`path` is `object`'s path).
    mutating func certificateTransparencyMember(_ object: [String: Any], _ path: String) -> CTMember? {
        guard let value = object["certificateTransparency"] else { return nil }
        let memberPath = ConfigReader.path(path, "certificateTransparency")
        guard let member = reader.object(value, memberPath) else { return nil }
        checkKeys(member, .certificateTransparency, memberPath)
        var result = CTMember()
        if let text = reader.string(member, "mode", memberPath) {
            result.mode = CTMode(rawValue: text)
            if result.mode == nil { reader.fail(.invalidValue, "\(memberPath).mode", "\"\(text)\" is not off, report or require") }
        }
        if let text = reader.string(member, "policy", memberPath) {
            result.policy = CTPolicy(rawValue: text)
            if result.policy == nil { reader.fail(.invalidValue, "\(memberPath).policy", "\"\(text)\" is not apple or chrome") }
        }
        if profile == .file {
            result.logList = logList(member, memberPath)
            if let days = reader.integer(member, "maxLogListAge", memberPath) {
                if (1...Self.maximumLogListAgeDays).contains(days) {
                    result.maximumAgeDays = days
                } else {
                    reader.fail(.invalidValue, "\(memberPath).maxLogListAge", "\(days) is not a number of days from 1 to \(Self.maximumLogListAgeDays)")
                }
            }
        } else if member.isEmpty {
            reader.fail(.invalidValue, memberPath, "gives neither a mode nor a policy")
        }
        return result
    }

    /// The settings a (combined) member describes; a mode other than `off` needs a log list.
    /// - Parameters:
    ///   - member: The combined member, or `nil` for none (off).
    ///   - path: The path of the member that decides, for a missing log list.
    mutating func certificateTransparencyPolicy(_ member: CTMember?, _ path: String) -> CertificateTransparencyPolicy {
        guard let member, let mode = member.mode else { return .off }
        let maximumAge = Int64(member.maximumAgeDays.map { $0 * 86_400 } ?? Int(CTLogList.defaultMaximumAge))
        guard let logList = member.logList else {
            if mode != .off {
                reader.fail(.missingKey, "\(path).logList", "CT mode \(mode) needs a log list (the app's CT log list JSON, here or at the top level)")
            }
            return .off
        }
        return CertificateTransparencyPolicy(mode: mode, policy: member.policy ?? .apple, logList: logList, maximumLogListAge: maximumAge)
    }

    /// The top level's member: its mode is required (hosts inherit it; a top level that only
    /// names a list would leave every host unchecked without saying so).
    mutating func topLevelCertificateTransparency(_ object: [String: Any]) -> CTMember? {
        let member = certificateTransparencyMember(object, "$")
        if let member, member.mode == nil, object["certificateTransparency"] is [String: Any] {
            reader.fail(.missingKey, "$.certificateTransparency.mode", "missing: off, report or require")
        }
        return member
    }

    /// `logList`: a CT log list file (Chrome's v3 JSON or Apple's list), relative to the
    /// policy file.
    mutating func logList(_ member: [String: Any], _ path: String) -> CTLogList? {
        guard let file = reader.string(member, "logList", path) else { return nil }
        let listPath = "\(path).logList"
        let resolved = file.hasPrefix("/") ? file : baseDirectory + "/" + file
        let bytes: [UInt8]
        do { bytes = try TrustStore.readFile(resolved) } catch {
            reader.fail(.unreadable, listPath, "\(resolved): cannot read the CT log list: \(error.reason)")
            return nil
        }
        do { return try CTLogList(json: bytes) } catch {
            reader.fail(.invalidValue, listPath, "\(resolved): not a CT log list: \(error)")
            return nil
        }
    }

    // MARK: - Signed pin sets

    /// The `certificateTransparency` members of a signed pin set: the top level's (for every
    /// host) and each host entry's, by the entry's pattern. The rest of each entry is read by
    /// ``parsePinSet(_:)``.
    mutating func parsePinSetCertificateTransparency(_ root: Any) -> [PinSetCTRequirement] {
        guard let object = root as? [String: Any] else { return [] }
        var requirements: [PinSetCTRequirement] = []
        if let top = certificateTransparencyMember(object, "$") {
            requirements.append(PinSetCTRequirement(mode: top.mode, policy: top.policy, pattern: nil))
        }
        for (index, element) in ((object["hosts"] as? [Any]) ?? []).enumerated() {
            guard let entry = element as? [String: Any], entry["certificateTransparency"] != nil else { continue }
            let path = "$.hosts[\(index)]"
            let member = certificateTransparencyMember(entry, path)
            // The pattern's own problems are reported by parsePinSet.
            guard let member, let host = entry["host"] as? String,
                let pattern = try? HostPattern(host, includeSubdomains: (entry["includeSubdomains"] as? Bool) ?? false)
            else { continue }
            requirements.append(PinSetCTRequirement(mode: member.mode, policy: member.policy, pattern: pattern))
        }
        return requirements
    }
}
