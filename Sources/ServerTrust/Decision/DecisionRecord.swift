public import CertificateParsing
import Foundation
public import TrustEvaluation

/// The record of one trust decision: which policy and mode applied, the anchors used, the
/// chain built, the host-name result, and which pin matched — or, on a pin failure, the served
/// chain's pins beside the configured ones, ready to paste into a configuration (as OkHttp's
/// "Certificate pinning failure!" message prints them).
///
/// None of the libraries this one reproduces (AFNetworking, Alamofire, TrustKit, OkHttp) says
/// why it accepted a server; this record does, and is what `servertrust evaluate --explain`
/// and `--json` print.
///
/// The record keeps typed facts (certificates, the stores, the pin matches) and renders text
/// only when asked: a decision on the connection path formats nothing.
public struct DecisionRecord: Sendable, CustomStringConvertible {
    /// The host-name check and its outcome.
    public enum HostnameResult: Hashable, Sendable, CustomStringConvertible {
        /// No name was checked, and why.
        case notChecked(reason: String)
        /// The leaf is valid for the name.
        case matched(String)
        /// The leaf is not valid for the name; the names it is valid for.
        case mismatched(String, validFor: [String])

        /// One line.
        public var description: String {
            switch self {
            case .notChecked(let reason): return "not checked (\(reason))"
            case .matched(let name): return "\(name): matches the leaf"
            case .mismatched(let name, let names):
                return "\(name): the leaf is valid for \(names.isEmpty ? "no names" : names.joined(separator: ", ")) only"
            }
        }
    }

    /// What matched a pin, and where.
    public enum PinMatchRecord: Sendable {
        /// SPKI pins of a pin set.
        case spki([PinMatch])
        /// A pinned certificate, byte for byte, at a position of the chain.
        case certificate(Certificate, position: Int)
        /// A pinned public key at a position of the chain, with the number of matching keys
        /// when counted (AFNetworking counts them).
        case publicKey(Certificate, position: Int, matches: Int?)

        /// One line.
        public var description: String {
            switch self {
            case .spki(let matches): return matches.map(\.description).joined(separator: "; ")
            case .certificate(let certificate, let position):
                return "certificate \"\(certificate.subject.rfc4514)\" (chain position \(position)) is pinned"
            case .publicKey(let certificate, let position, let matches):
                return "\(certificate.spkiPinText): key of \"\(certificate.subject.rfc4514)\" (chain position \(position))"
                    + (matches.map { "; \($0) pinned key match(es)" } ?? "")
            }
        }
    }

    /// One certificate's SPKI pin, for the served-pins list.
    public struct CertificatePin: Hashable, Sendable {
        /// `sha256/<base64>`.
        public let pin: String
        /// RFC 4514 subject.
        public let subject: String
        /// Position in the chain (0 = leaf).
        public let position: Int
    }

    /// The evaluator that decided (`SecurityPolicy`, `PinnedCertificatesTrustEvaluator`, …).
    public internal(set) var evaluator: String
    /// The policy applied, in one line (semantics, mode and flags).
    public internal(set) var policy: String
    /// The pinning mode applied, if the evaluator has one.
    public internal(set) var mode: String?
    /// The host evaluated for.
    public internal(set) var host: String?
    /// The port connected to.
    public internal(set) var port: Int
    /// The evaluation instant, seconds since 1970: the decision's one reading of its clock;
    /// `nil` for a decision made outside any evaluation (a challenge handler's answer, an
    /// unreadable chain).
    public internal(set) var evaluationTime: Int64?
    /// The checks performed, in order.
    public internal(set) var steps: [DecisionStep] = []
    /// The anchors of the last chain evaluation.
    public var anchors: String { lastEvaluation?.anchorsDescription ?? "none (no chain evaluation)" }
    /// The whole-path checks (revocation, …) of the last chain evaluation, in one line: what
    /// ran and what it found on the validated path (``/TrustEvaluation/PathCheckFinding``; the
    /// full list is in ``steps``).
    public var pathChecks: String {
        guard let evaluation = lastEvaluation else { return "not run (no chain evaluation)" }
        guard !evaluation.checks.isEmpty else { return "none configured" }
        let names = evaluation.checks.joined(separator: ", ")
        guard let findings = evaluation.chain?.findings else { return "\(names): the chain did not validate" }
        let passed = findings.filter { $0.outcome == .passed }.count
        let noted = findings.filter { $0.outcome == .noted }.count
        return "\(names): \(passed) passed" + (noted > 0 ? ", \(noted) noted" : "") + " on the validated path"
    }
    /// Subjects of the chain built by the last successful evaluation (leaf first), or of the
    /// served chain when none was built.
    public var chain: [String] { (validatedPath?.certificates ?? served).map(\.subject.rfc4514) }
    /// The path (leaf to anchor) of the last successful chain evaluation, if any.
    public internal(set) var validatedPath: VerifiedChain?
    /// Subjects (leaf first) of the other valid paths the last successful evaluation saw while
    /// it looked for the one the pins are on (``/TrustEvaluation/VerifiedChain/otherValidPaths``);
    /// empty without pins.
    public var otherValidPaths: [[String]] { validatedPath?.otherValidPaths.map { $0.map(\.subject.rfc4514) } ?? [] }
    /// The violations the whole-path checks found on the validated path and only report, by
    /// policy (Certificate Transparency in `report` mode): each a noted finding carrying the
    /// failure an enforcing policy would have refused the path with
    /// (``/TrustEvaluation/PathCheckFinding/reportedFailure``). An HTTPS session tells its event
    /// monitors about them.
    public var reportedViolations: [PathCheckFinding] { validatedPath?.findings.filter { $0.reportedFailure != nil } ?? [] }
    /// The host-name check of the last chain evaluation.
    public var hostname: HostnameResult {
        guard let policy = lastEvaluation?.policy else { return .notChecked(reason: "no evaluation with a host name") }
        switch policy.kind {
        case .basicX509: return .notChecked(reason: "basic X.509 policy")
        case .sslServer:
            guard let name = policy.peerName, let leaf = served.first else { return .notChecked(reason: "SSL server policy without a host name") }
            return ServerIdentity.matches(leaf, name: name)
                ? .matched(name.description) : .mismatched(name.description, validFor: ServerIdentity.names(of: leaf))
        case .sslClient: return .notChecked(reason: "SSL client policy")
        }
    }
    /// What matched a pin, and where.
    public internal(set) var pinMatch: PinMatchRecord?
    /// The pin that matched, and where, in one line.
    public var matchedPin: String? { pinMatch?.description }
    /// The served certificates, leaf first.
    let served: [Certificate]
    /// The last chain evaluation, for the anchors and host-name lines.
    var lastEvaluation: TrustResult?
    /// On a pin failure: the pins of the chain's certificates.
    public internal(set) var servedPins: [CertificatePin] = []
    /// On a pin failure: the configured pins.
    public internal(set) var configuredPins: [String] = []
    /// Remarks: report-only outcomes, expired pin sets, quirks applied.
    public internal(set) var notes: [String] = []
    /// The failure, if refused.
    public internal(set) var failure: TrustEvaluationError?

    init(evaluator: String, policy: String, mode: String?, host: String?, port: Int, evaluationTime: Int64?, served: [Certificate]) {
        self.served = served
        self.evaluator = evaluator
        self.policy = policy
        self.mode = mode
        self.host = host
        self.port = port
        self.evaluationTime = evaluationTime
    }

    /// Whether the decision was to trust.
    public var isTrusted: Bool { failure == nil }

    /// OkHttp's pin-failure text, when the decision involved a pin mismatch: each chain
    /// certificate's pin and subject, then the configured pins.
    public var pinFailureMessage: String? {
        guard !servedPins.isEmpty || !configuredPins.isEmpty else { return nil }
        var lines = ["Certificate pinning failure!", "  Peer certificate chain:"]
        lines += servedPins.map { "    \($0.pin): \($0.subject)" }
        lines.append("  Pinned certificates for \(host ?? "(no host)"):")
        lines += configuredPins.map { "    \($0)" }
        return lines.joined(separator: "\n")
    }

    /// A multi-line explanation for people.
    public var explanation: String {
        var lines: [String] = []
        lines.append("decision:  \(isTrusted ? "trusted" : "rejected")\(failure.map { " — \($0)" } ?? "")")
        lines.append("evaluator: \(evaluator)")
        lines.append("policy:    \(policy)")
        lines.append("host:      \(host ?? "(none)"):\(port)")
        lines.append("time:      \(evaluationTime.map(ASN1TimeText.rfc3339) ?? "(decided outside an evaluation)")")
        lines.append("anchors:   \(anchors)")
        if !(lastEvaluation?.checks.isEmpty ?? true) { lines.append("checks:    \(pathChecks)") }
        lines.append("chain:     \(chain.isEmpty ? "(none built)" : chain.joined(separator: " ← "))")
        for other in otherValidPaths { lines.append("also:      \(other.joined(separator: " ← ")) (another valid path)") }
        lines.append("hostname:  \(hostname)")
        lines.append("pin:       \(matchedPin ?? "(none matched)")")
        lines.append("steps:")
        lines += steps.enumerated().map { "  \($0.offset + 1). \($0.element.description)" }
        if !notes.isEmpty {
            lines.append("notes:")
            lines += notes.map { "  - \($0)" }
        }
        if let pinFailureMessage { lines.append(pinFailureMessage) }
        return lines.joined(separator: "\n")
    }

    /// The explanation.
    public var description: String { explanation }

    /// The record as a JSON object (keys documented in docs/policy-schema.md, "Decision
    /// records"). `Any` values are JSON-compatible Foundation values.
    public var jsonObject: [String: Any] {
        var object: [String: Any] = [
            "trusted": isTrusted,
            "evaluator": evaluator,
            "policy": policy,
            "port": port,
            "pathChecks": pathChecks,
            "steps": steps.map(\.description),
            "anchors": anchors,
            "chain": chain,
            "otherValidPaths": otherValidPaths,
            "hostname": hostname.description,
            "servedPins": servedPins.map { ["pin": $0.pin, "subject": $0.subject, "position": $0.position] as [String: Any] },
            "configuredPins": configuredPins,
            "notes": notes,
        ]
        object["time"] = evaluationTime.map(ASN1TimeText.rfc3339) ?? NSNull()
        object["mode"] = mode ?? NSNull()
        object["host"] = host ?? NSNull()
        object["matchedPin"] = matchedPin ?? NSNull()
        if let failure {
            var error: [String: Any] = ["kind": failure.kind.rawValue, "detail": failure.detail]
            if let underlying = failure.validationFailure { error["validation"] = underlying.kind.rawValue }
            object["failure"] = error
        } else {
            object["failure"] = NSNull()
        }
        return object
    }

    /// ``jsonObject`` as compact JSON text with sorted keys.
    public var jsonText: String {
        guard let data = try? JSONSerialization.data(withJSONObject: jsonObject, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }
}
