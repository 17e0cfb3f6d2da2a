import CertificateParsing
import Foundation
import TrustEvaluation

/// Parses the JSON policy schema (docs/policy-schema.md), collecting every problem.
struct PolicyFileParser {
    /// What the document is: a policy file on this machine, or the policy of a signed pin set
    /// (docs/pinset-format.md), which may not name files and may not disable evaluation.
    enum Profile {
        case file
        case signedPinSet
    }

    let baseDirectory: String
    let profile: Profile
    var reader = ConfigReader()

    static let topLevelKeys: Set<String> = ["version", "semantics", "allHostsMustBeEvaluated", "anchors", "anchorsOnly", "crls", "reportUris", "hosts"]

    /// Which evaluators use each host key (a key for an evaluator not in use is an error: it
    /// would otherwise be silently ignored, the failure mode of Alamofire #3363).
    static let hostKeyUsers: [String: Set<PolicyFile.EvaluatorKind>] = [
        "validateHost": [.default, .pinnedCertificates, .publicKeys, .spkiPins],
        "performDefaultValidation": [.pinnedCertificates, .publicKeys, .spkiPins],
        "acceptSelfSignedCertificates": [.pinnedCertificates],
        "certificates": [.securityPolicy, .pinnedCertificates, .publicKeys],
        "pinningMode": [.securityPolicy],
        "allowInvalidCertificates": [.securityPolicy],
        "validatesDomainName": [.securityPolicy],
        "allowsExpiredPinnedCertificates": [.securityPolicy],
        "semantics": [.securityPolicy],
        "pins": [.spkiPins],
        "negativePins": [.spkiPins],
        "enforcePinning": [.spkiPins],
        "expirationDate": [.spkiPins],
        "reportUris": [.spkiPins],
    ]

    static let hostKeys: Set<String> = Set(hostKeyUsers.keys).union([
        "host", "includeSubdomains", "excludeFromParentPolicy", "evaluator", "anchors", "anchorsOnly", "crls",
    ])

    init(baseDirectory: String, profile: Profile = .file) {
        self.baseDirectory = baseDirectory
        self.profile = profile
    }

    mutating func parse(_ root: Any) -> PolicyFile? {
        guard let object = reader.object(root, "$") else { return nil }
        reader.allowOnly(object, profile == .signedPinSet ? Self.topLevelKeys.union(["pinSet"]) : Self.topLevelKeys, "$")
        let version = reader.integer(object, "version", "$")
        if object["version"] == nil {
            reader.fail(.missingKey, "$.version", "missing (this library reads version 1)")
        } else if let version, version != 1 {
            reader.fail(.unsupportedVersion, "$.version", "version \(version) is not supported (this library reads version 1)")
        }
        let semantics = parseSemantics(object, "$") ?? .strict
        let allHosts = reader.bool(object, "allHostsMustBeEvaluated", "$") ?? true
        let anchors = certificates(object, "anchors", "$") ?? []
        let anchorsOnly = reader.bool(object, "anchorsOnly", "$") ?? false
        let crls = revocationLists(object, "crls", "$") ?? []
        let reportURIs = reader.uris(object, "reportUris", "$") ?? []
        var hosts: [PolicyFile.Host] = []
        if let list = reader.array(object, "hosts", "$") {
            if list.isEmpty { reader.fail(.invalidValue, "$.hosts", "no hosts configured") }
            for (index, element) in list.enumerated() {
                let context = HostContext(semantics: semantics, anchors: anchors, anchorsOnly: anchorsOnly, crls: crls, reportURIs: reportURIs)
                if let host = parseHost(element, "$.hosts[\(index)]", context) { hosts.append(host) }
            }
        } else if object["hosts"] == nil {
            reader.fail(.missingKey, "$.hosts", "missing: the list of host entries")
        }
        // Paths of the parsed entries, so problems point at document indices even when an
        // earlier entry failed to parse.
        let paths = hostPaths
        checkPatterns(hosts.map { ($0.pattern, $0.isExcluded) }, path: { paths.indices.contains($0) ? paths[$0] : "$.hosts" })
        return PolicyFile(version: version ?? 1, semantics: semantics, allHostsMustBeEvaluated: allHosts, hosts: hosts)
    }

    private var hostPaths: [String] = []

    struct HostContext {
        let semantics: PolicySemantics
        let anchors: [Certificate]
        let anchorsOnly: Bool
        let crls: [CertificateRevocationList]
        let reportURIs: [String]
    }

    mutating func parseSemantics(_ object: [String: Any], _ path: String) -> PolicySemantics? {
        guard let text = reader.string(object, "semantics", path) else { return nil }
        guard let semantics = PolicySemantics(rawValue: text) else {
            reader.fail(.invalidValue, ConfigReader.path(path, "semantics"), "\"\(text)\" is not compat or strict")
            return nil
        }
        return semantics
    }

    mutating func parseHost(_ value: Any, _ path: String, _ context: HostContext) -> PolicyFile.Host? {
        guard let object = reader.object(value, path) else { return nil }
        reader.allowOnly(object, Self.hostKeys, path)
        guard let hostText = reader.string(object, "host", path) else {
            if object["host"] == nil { reader.fail(.missingKey, "\(path).host", "missing: the host pattern") }
            return nil
        }
        let includeSubdomains = reader.bool(object, "includeSubdomains", path) ?? false
        let pattern: HostPattern
        do {
            pattern = try HostPattern(hostText, includeSubdomains: includeSubdomains)
        } catch {
            reader.fail(error, at: "\(path).host")
            return nil
        }
        if reader.bool(object, "excludeFromParentPolicy", path) == true {
            // TrustKit: kTSKExcludeSubdomainFromParentPolicy must be the only key of its entry.
            for key in object.keys.sorted() where !["host", "excludeFromParentPolicy"].contains(key) {
                reader.fail(.conflictingOptions, ConfigReader.path(path, key), "an excludeFromParentPolicy entry takes no other keys")
            }
            hostPaths.append(path)
            return PolicyFile.Host(
                pattern: pattern, isExcluded: true, evaluators: [], validateHost: true, performDefaultValidation: true,
                acceptSelfSignedCertificates: false, certificates: [], securityPolicy: nil, pinnedHost: nil, anchors: context.anchors,
                anchorsOnly: context.anchorsOnly, revocationLists: context.crls)
        }
        let evaluators = parseEvaluators(object, path)
        for key in object.keys.sorted() {
            guard let users = Self.hostKeyUsers[key], users.isDisjoint(with: evaluators) else { continue }
            reader.fail(
                .conflictingOptions, ConfigReader.path(path, key),
                "only used by the \(users.map(\.rawValue).sorted().joined(separator: "/")) evaluator, which this entry does not use")
        }
        let problemsBefore = reader.problems.count
        let certificates = self.certificates(object, "certificates", path) ?? []
        let needsCertificates = evaluators.contains(.pinnedCertificates) || evaluators.contains(.publicKeys)
        if needsCertificates && object["certificates"] == nil {
            reader.fail(.missingKey, "\(path).certificates", "the pinnedCertificates and publicKeys evaluators need certificates")
        } else if needsCertificates && certificates.isEmpty && reader.problems.count == problemsBefore {
            reader.fail(.invalidValue, "\(path).certificates", "no certificates were loaded")
        }
        let validateHost = reader.bool(object, "validateHost", path) ?? true
        let performDefaultValidation = reader.bool(object, "performDefaultValidation", path) ?? true
        let acceptSelfSigned = reader.bool(object, "acceptSelfSignedCertificates", path) ?? false
        let securityPolicy = evaluators.contains(.securityPolicy) ? parseSecurityPolicy(object, path, certificates, context) : nil
        let pinnedHost = evaluators.contains(.spkiPins) ? parsePinnedHost(object, path, pattern, context) : nil
        let hostAnchors = self.certificates(object, "anchors", path) ?? []
        let anchorsOnly = reader.bool(object, "anchorsOnly", path) ?? context.anchorsOnly
        let hostCRLs = revocationLists(object, "crls", path) ?? []
        hostPaths.append(path)
        return PolicyFile.Host(
            pattern: pattern, isExcluded: false, evaluators: evaluators, validateHost: validateHost,
            performDefaultValidation: performDefaultValidation, acceptSelfSignedCertificates: acceptSelfSigned, certificates: certificates,
            securityPolicy: securityPolicy, pinnedHost: pinnedHost, anchors: context.anchors + hostAnchors, anchorsOnly: anchorsOnly,
            revocationLists: context.crls + hostCRLs)
    }

    /// CRL files (PEM or DER, several per file allowed), relative to the policy file.
    mutating func revocationLists(_ object: [String: Any], _ key: String, _ path: String) -> [CertificateRevocationList]? {
        guard let entries = reader.strings(object, key, path) else { return nil }
        var result: [CertificateRevocationList] = []
        for (file, filePath) in entries {
            let resolved = file.hasPrefix("/") ? file : baseDirectory + "/" + file
            let bytes: [UInt8]
            do { bytes = try TrustStore.readFile(resolved) } catch {
                reader.fail(.unreadable, filePath, "\(resolved): cannot read the CRL file: \(error.reason)")
                continue
            }
            do {
                result += try CertificateRevocationList.load(bytes)
            } catch {
                reader.fail(.invalidValue, filePath, "\(resolved): not a CRL (PEM or DER): \(error)")
            }
        }
        return result
    }

    /// `evaluator` is a name or a list of names; absent, it is inferred: `spkiPins` when pins
    /// are given, `securityPolicy` when a pinning mode is, else `default`.
    mutating func parseEvaluators(_ object: [String: Any], _ path: String) -> [PolicyFile.EvaluatorKind] {
        let evaluatorPath = "\(path).evaluator"
        guard let value = object["evaluator"] else {
            if object["pins"] != nil || object["negativePins"] != nil { return [.spkiPins] }
            if object["pinningMode"] != nil { return [.securityPolicy] }
            return [.default]
        }
        var names: [(String, String)] = []
        if let name = value as? String {
            names = [(name, evaluatorPath)]
        } else if let list = value as? [Any], !list.isEmpty {
            for (index, element) in list.enumerated() {
                guard let name = element as? String else {
                    reader.fail(.wrongType, "\(evaluatorPath)[\(index)]", "expected a string, found \(ConfigReader.typeName(element))")
                    continue
                }
                names.append((name, "\(evaluatorPath)[\(index)]"))
            }
        } else {
            reader.fail(.wrongType, evaluatorPath, "expected an evaluator name or a non-empty list of names")
            return []
        }
        var kinds: [PolicyFile.EvaluatorKind] = []
        for (name, namePath) in names {
            guard let kind = PolicyFile.EvaluatorKind(rawValue: name) else {
                reader.fail(
                    .invalidValue, namePath,
                    "unknown evaluator \"\(name)\" (\(PolicyFile.EvaluatorKind.allCases.map(\.rawValue).joined(separator: ", ")))")
                continue
            }
            if kind == .disabled && profile == .signedPinSet {
                // An update may change pins, never switch evaluation off.
                reader.fail(.notAllowedInPinSet, namePath, "a signed pin set cannot disable trust evaluation")
                continue
            }
            kinds.append(kind)
        }
        return kinds
    }

    mutating func parseSecurityPolicy(
        _ object: [String: Any], _ path: String, _ certificates: [Certificate], _ context: HostContext
    ) -> SecurityPolicy? {
        var mode = PinningMode.none
        if let text = reader.string(object, "pinningMode", path) {
            if let parsed = PinningMode(rawValue: text) {
                mode = parsed
            } else {
                reader.fail(.invalidValue, "\(path).pinningMode", "\"\(text)\" is not none, publicKey or certificate")
            }
        }
        if mode != .none && certificates.isEmpty && object["certificates"] == nil {
            reader.fail(.missingKey, "\(path).certificates", "pinningMode \(mode.rawValue) needs pinned certificates")
        }
        var policy = SecurityPolicy(
            pinningMode: mode, pinnedCertificates: certificates,
            allowInvalidCertificates: reader.bool(object, "allowInvalidCertificates", path) ?? false,
            validatesDomainName: reader.bool(object, "validatesDomainName", path) ?? true,
            semantics: parseSemantics(object, path) ?? context.semantics)
        policy.allowsExpiredPinnedCertificates = reader.bool(object, "allowsExpiredPinnedCertificates", path) ?? false
        if policy.allowsExpiredPinnedCertificates && policy.semantics == .compat {
            reader.fail(.conflictingOptions, "\(path).allowsExpiredPinnedCertificates", "only applies with strict semantics")
        }
        return policy
    }

    mutating func parsePinnedHost(_ object: [String: Any], _ path: String, _ pattern: HostPattern, _ context: HostContext) -> PinnedHost? {
        let pins = parsePins(object, "pins", path, allowScope: true)
        let negative = parsePins(object, "negativePins", path, allowScope: false)
        var host = PinnedHost(
            pattern: pattern, pins: pins, negativePins: negative, enforcePinning: reader.bool(object, "enforcePinning", path) ?? true,
            expirationDate: reader.date(object, "expirationDate", path),
            reportURIs: context.reportURIs + (reader.uris(object, "reportUris", path) ?? []))
        host.requiresBackupPin = true
        // Count rules only when every pin parsed; otherwise the count would mislead.
        let allParsed = pins.count == ((object["pins"] as? [Any])?.count ?? 0) && negative.count == ((object["negativePins"] as? [Any])?.count ?? 0)
        if allParsed {
            for problem in PinningConfiguration.problems(in: [host], path: { _ in path }) { reader.problems.append(problem) }
        }
        return host
    }

    mutating func parsePins(_ object: [String: Any], _ key: String, _ path: String, allowScope: Bool) -> [SPKIPin] {
        guard let list = reader.array(object, key, path) else { return [] }
        var pins: [SPKIPin] = []
        for (index, element) in list.enumerated() {
            let pinPath = "\(ConfigReader.path(path, key))[\(index)]"
            if let text = element as? String {
                do { pins.append(try SPKIPin(text)) } catch { reader.fail(error, at: pinPath) }
                continue
            }
            guard let entry = reader.object(element, pinPath) else { continue }
            reader.allowOnly(entry, allowScope ? ["pin", "scope", "notBefore", "notAfter"] : ["pin", "notBefore", "notAfter"], pinPath)
            var scope = PinScope.any
            if let text = reader.string(entry, "scope", pinPath) {
                if let parsed = PinScope(rawValue: text) {
                    scope = parsed
                } else {
                    reader.fail(.invalidValue, "\(pinPath).scope", "\"\(text)\" is not any, leaf or ca")
                }
            }
            let notBefore = reader.date(entry, "notBefore", pinPath)
            let notAfter = reader.date(entry, "notAfter", pinPath)
            if let notBefore, let notAfter, notAfter < notBefore {
                reader.fail(.invalidDate, "\(pinPath).notAfter", "notAfter is before notBefore")
            }
            guard let text = reader.string(entry, "pin", pinPath) else {
                if entry["pin"] == nil { reader.fail(.missingKey, "\(pinPath).pin", "missing: the pin text") }
                continue
            }
            do {
                pins.append(try SPKIPin(text, scope: scope, notBefore: notBefore, notAfter: notAfter))
            } catch {
                reader.fail(error, at: "\(pinPath).pin")
            }
        }
        return pins
    }

    /// Certificate files or directories, relative to the policy file.
    mutating func certificates(_ object: [String: Any], _ key: String, _ path: String) -> [Certificate]? {
        if profile == .signedPinSet, object[key] != nil {
            // Paths name files on the signer's machine; a document from the network must not
            // make the client read local files.
            reader.fail(.notAllowedInPinSet, ConfigReader.path(path, key), "a signed pin set cannot name files (pins only)")
            return nil
        }
        guard let entries = reader.strings(object, key, path) else { return nil }
        var result: [Certificate] = []
        for (file, filePath) in entries {
            let resolved = file.hasPrefix("/") ? file : baseDirectory + "/" + file
            var isDirectory: ObjCBool = false
            do {
                if FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory), isDirectory.boolValue {
                    result += try SecurityPolicy.certificates(inDirectory: resolved)
                } else {
                    result += try SecurityPolicy.loadCertificates(atPath: resolved)
                }
            } catch {
                reader.fail(error.kind, filePath, "\(error.path): \(error.message)")
            }
        }
        return result
    }

    /// Duplicate patterns and exclusions without a parent.
    mutating func checkPatterns(_ entries: [(HostPattern, Bool)], path: (Int) -> String) {
        var seen: [HostPattern: Int] = [:]
        for (index, (pattern, excluded)) in entries.enumerated() {
            if let first = seen[pattern] {
                reader.fail(.duplicateHostPattern, path(index), "\(pattern) is already configured at \(path(first))")
            } else {
                seen[pattern] = index
            }
            if excluded {
                let covered = entries.contains { !$0.1 && $0.0 != pattern && $0.0.matches(pattern.base) }
                if !covered { reader.fail(.excludeWithoutParent, path(index), "\(pattern) is excluded, but no other entry covers it") }
            }
        }
    }
}
