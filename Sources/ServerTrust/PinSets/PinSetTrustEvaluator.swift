import TrustEvaluation

/// What a host's pins become when the signed pin set in force expires. Either way the client
/// never drops to "no pinning" silently: the fallback is written down here, noted in every
/// decision record it makes, and reported by the updater.
public enum PinSetExpiry: Sendable, Hashable {
    /// The baseline policy shipped in the app decides again, for every host. Its pins are
    /// older, so a server that has since moved to a new key is refused (fail closed) until a
    /// fresh document arrives. The default.
    case baseline
    /// For the listed host patterns (as the document writes them), the expired document's
    /// entry stays, in report-only mode: its pins are still checked, and a mismatch is reported
    /// and allowed (TrustKit's `kTSKEnforcePinning = NO`); negative pins still refuse. Every
    /// other host gets the baseline.
    case reportOnly([HostPattern])
}

/// Decides under a signed pin set: the current document's policy while it is in force, then
/// the ``PinSetExpiry`` fallback, switching at the instant the trust is evaluated at
/// (``PeerTrust/evaluationTime()``, the decider's clock), so expiry holds to the second even
/// between two checks of the updater.
public final class PinSetTrustEvaluator: ServerTrustEvaluating {
    /// The document in force, or `nil` (baseline only).
    public let document: PinSetDocument?
    /// The policy shipped in the app.
    public let baseline: PolicyFile
    /// What happens when the document expires.
    public let expiry: PinSetExpiry
    /// The rules whose skew tolerance decides when the document expired.
    public let rules: PinSetRules
    private let documentManager: ServerTrustManager?
    private let fallbackManager: ServerTrustManager

    /// Creates the evaluator.
    /// - Parameters:
    ///   - document: The document in force, or `nil`.
    ///   - baseline: The policy shipped in the app.
    ///   - expiry: What happens when the document expires.
    ///   - rules: The skew tolerance.
    ///   - reporter: Receives pin-failure reports (both policies).
    ///   - observer: Sees every decision.
    ///   - logger: Receives diagnostics.
    public init(
        document: PinSetDocument?, baseline: PolicyFile, expiry: PinSetExpiry = .baseline, rules: PinSetRules,
        reporter: (any PinFailureReporter)? = nil, observer: DecisionObserver? = nil, logger: PolicyLogger? = nil
    ) {
        self.document = document
        self.baseline = baseline
        self.expiry = expiry
        self.rules = rules
        documentManager = document?.policy.makeManager(reporter: reporter, observer: observer, logger: logger)
        fallbackManager = Self.fallback(document: document, baseline: baseline, expiry: expiry)
            .makeManager(reporter: reporter, observer: observer, logger: logger)
    }

    /// The policy that decides once the document expired.
    static func fallback(document: PinSetDocument?, baseline: PolicyFile, expiry: PinSetExpiry) -> PolicyFile {
        guard let document, case .reportOnly(let patterns) = expiry else { return baseline }
        let kept = document.policy.hosts.filter { patterns.contains($0.pattern) }.map(\.reportOnly)
        let keptPatterns = Set(kept.map(\.pattern))
        return PolicyFile(
            version: baseline.version, semantics: baseline.semantics, allHostsMustBeEvaluated: baseline.allHostsMustBeEvaluated,
            hosts: baseline.hosts.filter { !keptPatterns.contains($0.pattern) } + kept)
    }

    /// Throws unless the policy in force trusts the server.
    public func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    /// The decision of the document's policy while it is in force, else the fallback's, with a
    /// note saying which expired document it replaces.
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        guard let document, let documentManager else { return fallbackManager.decide(trust, forHost: host) }
        let time = trust.evaluationTime()
        guard rules.isExpired(document, at: time) else { return documentManager.decide(trust, forHost: host) }
        let decision = fallbackManager.decide(trust, forHost: host)
        var record = decision.record
        let instead: String
        switch expiry {
        case .baseline: instead = "the baseline policy decides"
        case .reportOnly(let patterns):
            instead = patterns.contains(where: { $0.matches(host) }) ? "its entry for \(host) is report-only" : "the baseline policy decides"
        }
        record.notes.append("signed pin set \(document.serial) expired at \(ASN1TimeText.rfc3339(document.expiresAt)): \(instead)")
        return TrustDecision(failure: decision.failure, record: record, served: decision.served)
    }
}

extension PolicyFile.Host {
    /// The same entry with its pins report-only (negative pins still refuse).
    var reportOnly: PolicyFile.Host {
        var pinned = pinnedHost
        pinned?.enforcePinning = false
        return PolicyFile.Host(
            pattern: pattern, isExcluded: isExcluded, evaluators: evaluators, validateHost: validateHost,
            performDefaultValidation: performDefaultValidation, acceptSelfSignedCertificates: acceptSelfSignedCertificates,
            certificates: certificates, securityPolicy: securityPolicy, pinnedHost: pinned, anchors: anchors, anchorsOnly: anchorsOnly)
    }
}
