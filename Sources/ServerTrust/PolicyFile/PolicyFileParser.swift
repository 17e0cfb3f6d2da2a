import CertificateParsing
import Foundation
import TrustEvaluation

/// Parses the JSON policy schema (docs/policy-schema.md), collecting every problem: policy
/// files into a ``TrustPolicy``, and the policy part of a signed pin set (docs/pinset-format.md)
/// into the pins it lays over a baseline.
struct PolicyFileParser {
    /// What the document is: a policy file on this machine, or the policy part of a signed pin
    /// set, which comes from the network.
    enum Profile {
        case file
        case signedPinSet
    }

    let baseDirectory: String
    let profile: Profile
    /// What decision records call the document.
    let source: String
    var reader = ConfigReader()
    /// The revocation settings of a signed pin set, read by ``parsePinSet(_:)``.
    var pinSetRevocation = PinSetRevocation.none

    static let topLevelKeys: Set<String> = [
        "version", "semantics", "allHostsMustBeEvaluated", "anchors", "anchorsOnly", "crls", "revocation", "reportUris", "hosts",
        "certificateTransparency",
    ]

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
        "host", "includeSubdomains", "excludeFromParentPolicy", "evaluator", "anchors", "anchorsOnly", "crls", "revocation",
        "certificateTransparency",
    ])

    /// The signed-pin-set profile, the one place it is written: a document from the network
    /// changes pins, negative pins, expiry, report-only mode and report URIs, and nothing else.
    /// Every key of the policy-file schema outside this list (`certificates`, `anchors`,
    /// `crls` and any other file path; the evaluator, its validation switches and anchors; an
    /// exclusion) is refused with `notAllowedInPinSet` by ``checkKeys(_:_:_:)``, which every
    /// object of a document goes through, so no field reader needs a rule of its own. Beside
    /// the pins, a document may strengthen revocation (`revocation` with
    /// ``pinSetRevocationKeys``: a mode and a depth, never a folder) and raise Certificate
    /// Transparency (`certificateTransparency` with ``pinSetCertificateTransparencyKeys``: a mode
    /// and a policy, never a log list).
    static let pinSetTopLevelKeys: Set<String> = ["version", "reportUris", "hosts", "pinSet", "revocation", "certificateTransparency"]
    static let pinSetHostKeys: Set<String> = [
        "host", "includeSubdomains", "pins", "negativePins", "enforcePinning", "expirationDate", "reportUris", "revocation",
        "certificateTransparency",
    ]
    /// A `revocation` object: in a signed pin set, mode and depth (it may strengthen the
    /// baseline's revocation, never weaken it, and names no folder).
    static let revocationKeys: Set<String> = ["mode", "depth", "cacheDirectory"]
    static let pinSetRevocationKeys: Set<String> = ["mode", "depth"]

    init(baseDirectory: String, profile: Profile = .file, source: String = "policy document") {
        self.baseDirectory = baseDirectory
        self.profile = profile
        self.source = source
    }

    /// Refuses the keys of `object` outside the profile's `allowed` set: in a signed pin set, a
    /// key the policy-file schema knows is `notAllowedInPinSet`; any other key is `unknownKey`.
    mutating func checkKeys(_ object: [String: Any], _ level: KeyLevel, _ path: String) {
        let fileKeys: Set<String>
        let allowed: Set<String>
        switch level {
        case .topLevel: (fileKeys, allowed) = (Self.topLevelKeys, Self.pinSetTopLevelKeys)
        case .host: (fileKeys, allowed) = (Self.hostKeys, Self.pinSetHostKeys)
        case .revocation: (fileKeys, allowed) = (Self.revocationKeys, Self.pinSetRevocationKeys)
        case .certificateTransparency: (fileKeys, allowed) = (Self.certificateTransparencyKeys, Self.pinSetCertificateTransparencyKeys)
        }
        switch profile {
        case .file:
            reader.allowOnly(object, fileKeys, path)
        case .signedPinSet:
            for key in object.keys.sorted() where !allowed.contains(key) {
                if fileKeys.contains(key) {
                    reader.fail(
                        .notAllowedInPinSet, ConfigReader.path(path, key),
                        "a signed pin set changes pins only, and may strengthen revocation and raise Certificate Transparency (allowed: \(allowed.sorted().joined(separator: ", ")))"
                    )
                } else {
                    reader.fail(.unknownKey, ConfigReader.path(path, key), "unknown key (allowed: \(allowed.sorted().joined(separator: ", ")))")
                }
            }
        }
    }

    enum KeyLevel {
        case topLevel
        case host
        /// A `revocation` object, at either level.
        case revocation
        /// A `certificateTransparency` object, at either level.
        case certificateTransparency
    }

    /// The version member: required, 1.
    mutating func checkVersion(_ object: [String: Any]) {
        let version = reader.integer(object, "version", "$")
        if object["version"] == nil {
            reader.fail(.missingKey, "$.version", "missing (this library reads version 1)")
        } else if let version, version != 1 {
            reader.fail(.unsupportedVersion, "$.version", "version \(version) is not supported (this library reads version 1)")
        }
    }

    /// The entries of `hosts`, each read by `entry`, with the paths of those that parsed.
    mutating func hostEntries<Entry>(_ object: [String: Any], _ entry: (inout PolicyFileParser, Any, String) -> Entry?) -> [(Entry, String)] {
        var entries: [(Entry, String)] = []
        if let list = reader.array(object, "hosts", "$") {
            if list.isEmpty { reader.fail(.invalidValue, "$.hosts", "no hosts configured") }
            for (index, element) in list.enumerated() {
                let path = "$.hosts[\(index)]"
                if let parsed = entry(&self, element, path) { entries.append((parsed, path)) }
            }
        } else if object["hosts"] == nil {
            reader.fail(.missingKey, "$.hosts", "missing: the list of host entries")
        }
        return entries
    }

    // MARK: - Policy files

    /// What the top level gives every host entry.
    struct FileDefaults {
        let semantics: PolicySemantics
        let anchors: [Certificate]
        let anchorsOnly: Bool
        let crls: [CertificateRevocationList]
        let revocation: RevocationObject?
        let reportURIs: [String]
        /// The top level's `certificateTransparency`, as written (host entries' members replace
        /// its members), and the settings it makes.
        var certificateTransparency: (member: CTMember?, policy: CertificateTransparencyPolicy) = (nil, .off)
    }

    /// A policy file as a ``TrustPolicy``.
    mutating func parsePolicy(_ root: Any) -> TrustPolicy? {
        guard let object = reader.object(root, "$") else { return nil }
        checkKeys(object, .topLevel, "$")
        checkVersion(object)
        let semantics = parseSemantics(object, "$") ?? .strict
        let allHosts = reader.bool(object, "allHostsMustBeEvaluated", "$") ?? true
        let ct = topLevelCertificateTransparency(object)
        let defaults = FileDefaults(
            semantics: semantics, anchors: certificates(object, "anchors", "$") ?? [], anchorsOnly: reader.bool(object, "anchorsOnly", "$") ?? false,
            crls: revocationLists(object, "crls", "$") ?? [], revocation: parseRevocation(object, "$"),
            reportURIs: reader.uris(object, "reportUris", "$") ?? [],
            certificateTransparency: (ct, certificateTransparencyPolicy(ct, "$.certificateTransparency")))
        let entries = hostEntries(object) { parser, element, path in parser.parseHost(element, path, defaults) }
        checkPatterns(entries.map { ($0.0.pattern, $0.0.policy.pins?.isExcluded == true, $0.1) })
        // Hosts no entry covers get default validation with the file's anchors and CRLs.
        let unmatched =
            allHosts
            ? nil
            : hostPolicy(evaluators: [DefaultTrustEvaluator()], pins: nil, hostAnchors: [], anchorsOnly: nil, hostCRLs: [], hostRevocation: nil, defaults, "$")
        return TrustPolicy(rules: entries.map(\.0), unmatched: unmatched)
    }

    /// The one place a host's policy is assembled from the file's layers: the host entry's own
    /// values where it gives them, the top level's otherwise (anchors and CRLs add up,
    /// `anchorsOnly` is the entry's if it says, else the file's).
    mutating func hostPolicy(
        evaluators: [any ServerTrustEvaluating], pins: PinnedHost?, hostAnchors: [Certificate], anchorsOnly: Bool?,
        hostCRLs: [CertificateRevocationList], hostRevocation: RevocationObject?, _ defaults: FileDefaults, _ path: String
    ) -> HostTrustPolicy {
        let anchors = defaults.anchors + hostAnchors
        let only = anchorsOnly ?? defaults.anchorsOnly
        return HostTrustPolicy(
            evaluator: evaluators.count == 1 ? evaluators[0] : CompositeTrustEvaluator(evaluators: evaluators),
            anchors: anchors.isEmpty && !only ? .none : TrustAnchors(anchors, only: only),
            pins: pins, revocation: revocationPolicy(crls: defaults.crls + hostCRLs, host: hostRevocation, defaults.revocation, path),
            certificateTransparency: defaults.certificateTransparency.policy, source: "\(source) \(path)")
    }

    mutating func parseSemantics(_ object: [String: Any], _ path: String) -> PolicySemantics? {
        guard let text = reader.string(object, "semantics", path) else { return nil }
        guard let semantics = PolicySemantics(rawValue: text) else {
            reader.fail(.invalidValue, ConfigReader.path(path, "semantics"), "\"\(text)\" is not compat or strict")
            return nil
        }
        return semantics
    }

    /// The host pattern of an entry.
    mutating func parsePattern(_ object: [String: Any], _ path: String) -> HostPattern? {
        guard let hostText = reader.string(object, "host", path) else {
            if object["host"] == nil { reader.fail(.missingKey, "\(path).host", "missing: the host pattern") }
            return nil
        }
        let includeSubdomains = reader.bool(object, "includeSubdomains", path) ?? false
        do {
            return try HostPattern(hostText, includeSubdomains: includeSubdomains)
        } catch {
            reader.fail(error, at: "\(path).host")
            return nil
        }
    }

    mutating func parseHost(_ value: Any, _ path: String, _ defaults: FileDefaults) -> TrustPolicy.Rule? {
        guard let object = reader.object(value, path) else { return nil }
        checkKeys(object, .host, path)
        guard let pattern = parsePattern(object, path) else { return nil }
        if reader.bool(object, "excludeFromParentPolicy", path) == true {
            // TrustKit: kTSKExcludeSubdomainFromParentPolicy must be the only key of its entry.
            for key in object.keys.sorted() where !["host", "excludeFromParentPolicy"].contains(key) {
                reader.fail(.conflictingOptions, ConfigReader.path(path, key), "an excludeFromParentPolicy entry takes no other keys")
            }
            // Unpinned, with default validation and the file's anchors and CRLs.
            let policy = hostPolicy(
                evaluators: [DefaultTrustEvaluator(validateHost: true)], pins: .excluded(pattern), hostAnchors: [], anchorsOnly: nil, hostCRLs: [],
                hostRevocation: nil, defaults, path)
            return TrustPolicy.Rule(pattern, policy)
        }
        let kinds = parseEvaluators(object, path)
        for key in object.keys.sorted() {
            guard let users = Self.hostKeyUsers[key], users.isDisjoint(with: kinds) else { continue }
            reader.fail(
                .conflictingOptions, ConfigReader.path(path, key),
                "only used by the \(users.map(\.rawValue).sorted().joined(separator: "/")) evaluator, which this entry does not use")
        }
        let problemsBefore = reader.problems.count
        let certificates = self.certificates(object, "certificates", path) ?? []
        let needsCertificates = kinds.contains(.pinnedCertificates) || kinds.contains(.publicKeys)
        if needsCertificates && object["certificates"] == nil {
            reader.fail(.missingKey, "\(path).certificates", "the pinnedCertificates and publicKeys evaluators need certificates")
        } else if needsCertificates && certificates.isEmpty && reader.problems.count == problemsBefore {
            reader.fail(.invalidValue, "\(path).certificates", "no certificates were loaded")
        }
        let validateHost = reader.bool(object, "validateHost", path) ?? true
        let performDefaultValidation = reader.bool(object, "performDefaultValidation", path) ?? true
        let acceptSelfSigned = reader.bool(object, "acceptSelfSignedCertificates", path) ?? false
        var evaluators: [any ServerTrustEvaluating] = []
        var pins: PinnedHost?
        for kind in kinds {
            switch kind {
            case .default:
                evaluators.append(DefaultTrustEvaluator(validateHost: validateHost))
            case .securityPolicy:
                evaluators.append(parseSecurityPolicy(object, path, certificates, defaults.semantics))
            case .pinnedCertificates:
                evaluators.append(
                    PinnedCertificatesTrustEvaluator(
                        certificates: certificates, acceptSelfSignedCertificates: acceptSelfSigned, performDefaultValidation: performDefaultValidation,
                        validateHost: validateHost))
            case .publicKeys:
                evaluators.append(
                    PublicKeysTrustEvaluator(certificates: certificates, performDefaultValidation: performDefaultValidation, validateHost: validateHost))
            case .spkiPins:
                // The validation of SPKIPinsTrustEvaluator; the pins themselves are the host
                // policy's, checked after every evaluator of the entry.
                evaluators.append(AlamofireValidation(performDefaultValidation: performDefaultValidation, validateHost: validateHost))
                pins = parsePinnedHost(object, path, pattern, inheritedReportURIs: defaults.reportURIs)
            case .disabled:
                evaluators.append(DisabledTrustEvaluator())
            }
        }
        if evaluators.isEmpty { return nil }
        var policy = hostPolicy(
            evaluators: evaluators, pins: pins, hostAnchors: self.certificates(object, "anchors", path) ?? [],
            anchorsOnly: reader.bool(object, "anchorsOnly", path), hostCRLs: revocationLists(object, "crls", path) ?? [],
            hostRevocation: parseRevocation(object, path), defaults, path)
        if let member = certificateTransparencyMember(object, path) {
            policy.certificateTransparency = certificateTransparencyPolicy(
                member.over(defaults.certificateTransparency.member), ConfigReader.path(path, "certificateTransparency"))
        }
        return TrustPolicy.Rule(pattern, policy)
    }

    // MARK: - Signed pin sets

    /// The policy part of a signed pin set: the pins it lays over the baseline, per host
    /// pattern, in the signed profile (``pinSetHostKeys``).
    mutating func parsePinSet(_ root: Any) -> PinningConfiguration? {
        guard let object = reader.object(root, "$") else { return nil }
        checkKeys(object, .topLevel, "$")
        checkVersion(object)
        let reportURIs = reader.uris(object, "reportUris", "$") ?? []
        pinSetRevocation = PinSetRevocation(everyHost: parsePinSetRevocation(object, "$"), entries: [:])
        let entries = hostEntries(object) { parser, element, path -> PinnedHost? in
            guard let entry = parser.reader.object(element, path) else { return nil }
            parser.checkKeys(entry, .host, path)
            guard let pattern = parser.parsePattern(entry, path) else { return nil }
            if let setting = parser.parsePinSetRevocation(entry, path) { parser.pinSetRevocation.entries[pattern] = setting }
            if entry["pins"] == nil && entry["negativePins"] == nil {
                parser.reader.fail(.noPins, path, "\(pattern) has no pins: a signed pin set entry gives pins")
                return nil
            }
            return parser.parsePinnedHost(entry, path, pattern, inheritedReportURIs: reportURIs)
        }
        checkPatterns(entries.map { ($0.0.pattern, false, $0.1) })
        return PinningConfiguration(unchecked: entries.map(\.0))
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
            kinds.append(kind)
        }
        return kinds
    }

    mutating func parseSecurityPolicy(_ object: [String: Any], _ path: String, _ certificates: [Certificate], _ semantics: PolicySemantics) -> SecurityPolicy {
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
            semantics: parseSemantics(object, path) ?? semantics)
        policy.allowsExpiredPinnedCertificates = reader.bool(object, "allowsExpiredPinnedCertificates", path) ?? false
        if policy.allowsExpiredPinnedCertificates && policy.semantics == .compat {
            reader.fail(.conflictingOptions, "\(path).allowsExpiredPinnedCertificates", "only applies with strict semantics")
        }
        return policy
    }

    mutating func parsePinnedHost(_ object: [String: Any], _ path: String, _ pattern: HostPattern, inheritedReportURIs: [String]) -> PinnedHost {
        let pins = parsePins(object, "pins", path, allowScope: true)
        let negative = parsePins(object, "negativePins", path, allowScope: false)
        var host = PinnedHost(
            pattern: pattern, pins: pins, negativePins: negative, enforcePinning: reader.bool(object, "enforcePinning", path) ?? true,
            expirationDate: reader.date(object, "expirationDate", path),
            reportURIs: inheritedReportURIs + (reader.uris(object, "reportUris", path) ?? []))
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

    /// Duplicate patterns and exclusions without a parent, each at its entry's path.
    mutating func checkPatterns(_ entries: [(pattern: HostPattern, excluded: Bool, path: String)]) {
        var seen: [HostPattern: String] = [:]
        for entry in entries {
            if let first = seen[entry.pattern] {
                reader.fail(.duplicateHostPattern, entry.path, "\(entry.pattern) is already configured at \(first)")
            } else {
                seen[entry.pattern] = entry.path
            }
            if entry.excluded {
                let covered = entries.contains { !$0.excluded && $0.pattern != entry.pattern && $0.pattern.matches(entry.pattern.base) }
                if !covered { reader.fail(.excludeWithoutParent, entry.path, "\(entry.pattern) is excluded, but no other entry covers it") }
            }
        }
    }
}
