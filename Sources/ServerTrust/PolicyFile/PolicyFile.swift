import CertificateParsing
import Foundation
import TrustEvaluation

/// Declarative trust policies: the JSON format of docs/policy-schema.md and TrustKit
/// configuration dictionaries, each read into a ``TrustPolicy`` (one ``HostTrustPolicy`` per
/// host entry).
///
/// Loading validates the whole document and reports every problem at its JSON path
/// (``PolicyFileError``), e.g. `$.hosts[2].pins[0]: not a valid sha256 pin: …`.
public enum PolicyFile {
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
        /// SPKI pins (``SPKIPinsTrustEvaluator``'s rules): chain validation as
        /// `performDefaultValidation` and `validateHost` say, then the entry's pins
        /// (``HostTrustPolicy/pins``).
        case spkiPins
        /// ``DisabledTrustEvaluator`` — never for production.
        case disabled
    }

    /// Loads a policy file: the JSON schema of docs/policy-schema.md, or a TrustKit
    /// configuration written as JSON (a top-level `kTSKPinnedDomains`). Certificate and
    /// anchor paths are relative to the file's directory.
    /// - Parameter path: The file.
    /// - Returns: The policy.
    /// - Throws: ``PolicyFileError`` listing every problem.
    public static func load(contentsOf path: String) throws(PolicyFileError) -> TrustPolicy {
        let data: [UInt8]
        do { data = try TrustStore.readFile(path) } catch {
            throw PolicyFileError([PolicyConfigurationError(.unreadable, path: path, "cannot read the policy file: \(error.reason)")])
        }
        let directory = (path as NSString).deletingLastPathComponent
        return try parse(data, baseDirectory: directory.isEmpty ? "." : directory, source: "policy file \(path)")
    }

    /// Loads a policy file as ``load(contentsOf:)`` does, then checks its pins
    /// (``TrustPolicy/lint(chain:anchors:at:)`` without a chain, against the file's own anchors)
    /// and hands each finding to `warnings`: a pin set that only pins leaves, an expiry already
    /// past or more than a year out, pins whose certificates all expire first, a pinned root
    /// without its cross-signed successor. Problems in the file stay errors (thrown); findings
    /// about the pins are warnings, since the file is valid and its decisions are what it says.
    /// - Parameters:
    ///   - path: The file.
    ///   - time: "Now", for the expiry rules.
    ///   - warnings: Receives each finding, in order.
    /// - Returns: The policy.
    /// - Throws: ``PolicyFileError`` listing every problem.
    public static func load(contentsOf path: String, at time: Int64, warnings: (PinLintFinding) -> Void) throws(PolicyFileError) -> TrustPolicy {
        let policy = try load(contentsOf: path)
        for finding in policy.lint(at: time) { warnings(finding) }
        return policy
    }

    /// Parses a policy document.
    /// - Parameters:
    ///   - json: UTF-8 JSON text.
    ///   - baseDirectory: What relative certificate paths are relative to.
    ///   - source: What decision records call the document (`policy file NAME`).
    /// - Returns: The policy.
    /// - Throws: ``PolicyFileError`` listing every problem.
    public static func parse(_ json: [UInt8], baseDirectory: String = ".", source: String = "policy document") throws(PolicyFileError) -> TrustPolicy {
        let (root, duplicates) = try readJSON(json)
        if let object = root as? [String: Any], object["kTSKPinnedDomains"] != nil {
            let policy: TrustPolicy
            do { policy = try fromTrustKit(object, source: source) } catch { throw PolicyFileError(duplicates + error.problems) }
            guard duplicates.isEmpty else { throw PolicyFileError(duplicates) }
            return policy
        }
        var parser = PolicyFileParser(baseDirectory: baseDirectory, source: source)
        let policy = parser.parsePolicy(root)
        let problems = duplicates + parser.reader.problems
        guard problems.isEmpty, let policy else { throw PolicyFileError(problems) }
        return policy
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
}

extension PinningConfiguration {
    /// Entries already validated (by a policy file).
    init(unchecked hosts: [PinnedHost]) {
        self.hosts = hosts
    }
}
