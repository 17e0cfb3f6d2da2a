public import CertificateParsing
import Foundation
import TrustEvaluation

/// A declarative trust policy: per-host evaluators, pins and anchors, loaded from the JSON
/// format of docs/policy-schema.md or from a TrustKit configuration dictionary, and turned into
/// a ``ServerTrustManager``.
///
/// Loading validates the whole document and reports every problem at its JSON path
/// (``PolicyFileError``), e.g. `$.hosts[2].pins[0]: not a valid sha256 pin: …`.
public struct PolicyFile: Sendable {
    /// The evaluators a host entry can use.
    public enum EvaluatorKind: String, Hashable, Sendable, CaseIterable {
        /// ``DefaultTrustEvaluator``.
        case `default`
        /// ``SecurityPolicy`` (AFNetworking).
        case securityPolicy
        /// ``PinnedCertificatesTrustEvaluator``.
        case pinnedCertificates
        /// ``PublicKeysTrustEvaluator``.
        case publicKeys
        /// ``SPKIPinsTrustEvaluator``.
        case spkiPins
        /// ``DisabledTrustEvaluator`` — never for production.
        case disabled
    }

    /// One host entry.
    public struct Host: Sendable {
        /// The hosts covered.
        public let pattern: HostPattern
        /// An exclusion: the hosts get default validation only, whatever wider pattern covers them.
        public let isExcluded: Bool
        /// The evaluators, all of which must pass.
        public let evaluators: [EvaluatorKind]
        /// Host-name validation for the Alamofire-style evaluators and SPKI pins.
        public let validateHost: Bool
        /// Chain validation for the Alamofire-style evaluators and SPKI pins.
        public let performDefaultValidation: Bool
        /// ``PinnedCertificatesTrustEvaluator/acceptSelfSignedCertificates``.
        public let acceptSelfSignedCertificates: Bool
        /// Certificates for `securityPolicy`, `pinnedCertificates` and `publicKeys`.
        public let certificates: [Certificate]
        /// The AFNetworking policy, for `securityPolicy`.
        public let securityPolicy: SecurityPolicy?
        /// The pin set, for `spkiPins`.
        public let pinnedHost: PinnedHost?
        /// Extra trust anchors for this host (file-level and host-level).
        public let anchors: [Certificate]
        /// Whether only ``anchors`` are trusted.
        public let anchorsOnly: Bool
        /// CRLs the host's chains are checked against (file-level and host-level; RFC 5280
        /// §6.3, hard-fail): empty for no revocation checking.
        public internal(set) var revocationLists: [CertificateRevocationList] = []
    }

    /// The schema version (1).
    public let version: Int
    /// The default semantics of `securityPolicy` entries.
    public let semantics: PolicySemantics
    /// Whether hosts without an entry are refused.
    public let allHostsMustBeEvaluated: Bool
    /// The host entries, in document order.
    public let hosts: [Host]

    /// The SPKI pin sets of the file (exclusions included).
    public var pinning: PinningConfiguration {
        PinningConfiguration(unchecked: hosts.compactMap { host in host.isExcluded ? PinnedHost.excluded(host.pattern) : host.pinnedHost })
    }

    /// Loads a policy file: the JSON schema of docs/policy-schema.md, or a TrustKit
    /// configuration written as JSON (a top-level `kTSKPinnedDomains`). Certificate and
    /// anchor paths are relative to the file's directory.
    /// - Parameter path: The file.
    /// - Returns: The policy.
    /// - Throws: ``PolicyFileError`` listing every problem.
    public static func load(contentsOf path: String) throws(PolicyFileError) -> PolicyFile {
        let data: [UInt8]
        do { data = try TrustStore.readFile(path) } catch {
            throw PolicyFileError([PolicyConfigurationError(.unreadable, path: path, "cannot read the policy file: \(error.reason)")])
        }
        let directory = (path as NSString).deletingLastPathComponent
        return try parse(data, baseDirectory: directory.isEmpty ? "." : directory)
    }

    /// Parses a policy document.
    /// - Parameters:
    ///   - json: UTF-8 JSON text.
    ///   - baseDirectory: What relative certificate paths are relative to.
    /// - Returns: The policy.
    /// - Throws: ``PolicyFileError`` listing every problem.
    public static func parse(_ json: [UInt8], baseDirectory: String = ".") throws(PolicyFileError) -> PolicyFile {
        let (root, duplicates) = try readJSON(json)
        if let object = root as? [String: Any], object["kTSKPinnedDomains"] != nil {
            let file: PolicyFile
            do { file = try fromTrustKit(object) } catch { throw PolicyFileError(duplicates + error.problems) }
            guard duplicates.isEmpty else { throw PolicyFileError(duplicates) }
            return file
        }
        var parser = PolicyFileParser(baseDirectory: baseDirectory)
        let file = parser.parse(root)
        let problems = duplicates + parser.reader.problems
        guard problems.isEmpty, let file else { throw PolicyFileError(problems) }
        return file
    }

    /// The one place JSON text becomes a tree, for policy files and signed pin sets alike.
    /// - Returns: The tree, and the repeated keys (problems, reported first, with whatever else
    ///   is wrong).
    /// - Throws: ``PolicyFileError`` (`unreadable` at `$`) when the text is not JSON.
    static func readJSON(_ json: [UInt8]) throws(PolicyFileError) -> (root: Any, duplicates: [PolicyConfigurationError]) {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(json))
        } catch {
            throw PolicyFileError([PolicyConfigurationError(.unreadable, path: "$", "not JSON: \(error.localizedDescription)")])
        }
        // JSONSerialization keeps the last of two equal keys; the text is checked for them.
        return (root, JSONDuplicateKeys.problems(in: json))
    }

    /// The manager this policy describes.
    /// - Parameters:
    ///   - reporter: Receives pin-failure reports from `spkiPins` entries.
    ///   - observer: Sees every decision.
    ///   - logger: Receives diagnostics (expired pin sets, report-only mismatches).
    /// - Returns: The manager. Its evaluators read the time of the trust they are given
    ///   (``PeerTrust/evaluationTime()``).
    public func makeManager(
        reporter: (any PinFailureReporter)? = nil, observer: DecisionObserver? = nil, logger: PolicyLogger? = nil
    ) -> ServerTrustManager {
        let rules = hosts.map { host -> ServerTrustManager.Rule in
            var built: [any ServerTrustEvaluating] = []
            if host.isExcluded {
                built = [DefaultTrustEvaluator(validateHost: true)]
            }
            for kind in host.isExcluded ? [] : host.evaluators {
                switch kind {
                case .default:
                    built.append(DefaultTrustEvaluator(validateHost: host.validateHost))
                case .securityPolicy:
                    built.append(host.securityPolicy ?? SecurityPolicy(semantics: semantics))
                case .pinnedCertificates:
                    built.append(
                        PinnedCertificatesTrustEvaluator(
                            certificates: host.certificates, acceptSelfSignedCertificates: host.acceptSelfSignedCertificates,
                            performDefaultValidation: host.performDefaultValidation, validateHost: host.validateHost))
                case .publicKeys:
                    built.append(
                        PublicKeysTrustEvaluator(
                            certificates: host.certificates, performDefaultValidation: host.performDefaultValidation, validateHost: host.validateHost))
                case .spkiPins:
                    built.append(
                        SPKIPinsTrustEvaluator(
                            configuration: PinningConfiguration(unchecked: host.pinnedHost.map { [$0] } ?? []),
                            performDefaultValidation: host.performDefaultValidation, validateHost: host.validateHost,
                            reporter: reporter, logger: logger))
                case .disabled:
                    built.append(DisabledTrustEvaluator())
                }
            }
            var evaluator: any ServerTrustEvaluating = built.count == 1 ? built[0] : CompositeTrustEvaluator(evaluators: built)
            if !host.revocationLists.isEmpty {
                evaluator = RevocationCheckingEvaluator(revocationLists: host.revocationLists, evaluator: evaluator)
            }
            if !host.anchors.isEmpty || host.anchorsOnly {
                evaluator = AnchoredTrustEvaluator(anchors: host.anchors, anchorsOnly: host.anchorsOnly, evaluator: evaluator)
            }
            return ServerTrustManager.Rule(host.pattern, evaluator)
        }
        return ServerTrustManager(allHostsMustBeEvaluated: allHostsMustBeEvaluated, rules: rules, observer: observer)
    }
}

extension PinningConfiguration {
    /// Entries already validated (by a policy file).
    init(unchecked hosts: [PinnedHost]) {
        self.hosts = hosts
    }
}
