import CertificateParsing
import TrustEvaluation

/// A trust policy: one ``HostTrustPolicy`` per host pattern, a policy for the hosts no pattern
/// covers (or none: they are refused), optionally a signed pin set laid over it, and where its
/// pin-failure reports, records and diagnostics go.
///
/// It decides as an evaluator (``decide(_:forHost:)``): the host's policy puts its anchors and
/// whole-path checks on the trust, its evaluator decides, and its SPKI pins are then checked on
/// the certificates the evaluation proved. ``ServerTrustDecider`` decides through it.
///
/// Every source of trust input becomes one of these: code (``init(_:)``,
/// ``init(rules:unmatched:)``), a policy file or a TrustKit dictionary (``PolicyFile``), the
/// command line, and signed pin sets (``overlaying(_:expiry:rules:)``). A decision reads what
/// applies to its host from ``resolve(_:at:)``, the one place where precedence is written:
///
/// 1. the most specific host pattern that matches (``HostPattern``), else the policy for
///    unmatched hosts, else a refusal;
/// 2. a signed pin set in force replaces that policy's pins for the hosts it names, and only
///    its pins (pins, negative pins, expiry, report-only mode, report URIs): the evaluator,
///    the anchors and whether they are the only ones, and the revocation sources stay the
///    baseline's; while in force, it may strengthen the baseline's revocation mode and depth
///    (``PinSetRevocation``) and raise its Certificate Transparency mode (and name the policy)
///    (``PinSetCTRequirement``), never weaken or lower them;
/// 3. an expired signed pin set gives way as its ``PinSetExpiry`` says, with a note.
public struct TrustPolicy: ServerTrustEvaluating {
    /// One host pattern and its policy.
    public struct Rule: Sendable {
        /// The hosts covered.
        public let pattern: HostPattern
        /// Their policy.
        public let policy: HostTrustPolicy

        /// Creates a rule.
        /// - Parameters:
        ///   - pattern: The hosts covered.
        ///   - policy: Their policy.
        public init(_ pattern: HostPattern, _ policy: HostTrustPolicy) {
            self.pattern = pattern
            self.policy = policy
        }
    }

    /// What applies to one host at one instant, as ``resolve(_:at:)`` found it.
    public struct Resolution: Sendable {
        /// The host's policy, or `nil` when no rule covers it and unmatched hosts are refused.
        public let policy: HostTrustPolicy?
        /// The pattern of the rule that applied (`nil`: the policy for unmatched hosts).
        public let pattern: HostPattern?
        /// What the resolution did that a record should say (a signed pin set's pins, its
        /// expiry).
        public let notes: [String]
    }

    /// The rules, in the order given; the most specific matching pattern wins.
    public let rules: [Rule]
    /// The policy of hosts no rule covers; `nil` refuses them (Alamofire's
    /// `allHostsMustBeEvaluated`).
    public let unmatched: HostTrustPolicy?
    /// The signed pin set laid over the rules, if any.
    public let signedPins: SignedPinSet?
    /// Receives pin-failure reports of the hosts' pin sets.
    public private(set) var reporter: (any PinFailureReporter)?
    /// Sees every decision's record; cannot change it.
    public private(set) var observer: DecisionObserver?
    /// Receives diagnostics (expired pin sets, report-only mismatches).
    public private(set) var logger: PolicyLogger?

    /// Creates a policy from rules.
    /// - Parameters:
    ///   - rules: The rules.
    ///   - unmatched: The policy of hosts no rule covers; `nil` refuses them.
    public init(rules: [Rule], unmatched: HostTrustPolicy?) {
        self.init(rules: rules, unmatched: unmatched, signedPins: nil)
    }

    /// One policy for every host.
    /// - Parameter policy: The policy.
    public init(_ policy: HostTrustPolicy) {
        self.init(rules: [], unmatched: policy)
    }

    init(rules: [Rule], unmatched: HostTrustPolicy?, signedPins: SignedPinSet?) {
        self.rules = rules
        self.unmatched = unmatched
        self.signedPins = signedPins
        self.reporter = nil
        self.observer = nil
        self.logger = nil
    }

    /// Whether hosts no rule covers are refused.
    public var allHostsMustBeEvaluated: Bool { unmatched == nil }

    /// The rules' SPKI pin sets (exclusions included), for tools that look at the pins alone
    /// (a lint, a report collector); decisions read them through ``resolve(_:at:)``.
    public var pinning: PinningConfiguration {
        PinningConfiguration(unchecked: rules.compactMap(\.policy.pins))
    }

    /// What applies to `host` at `time`: the one function where the sources of a policy meet.
    /// - Parameters:
    ///   - host: The host name or IP literal connected to.
    ///   - time: The decision's instant (signed pin sets expire by it).
    /// - Returns: The host's policy, the rule that applied, and notes for the record.
    public func resolve(_ host: String, at time: Int64) -> Resolution {
        let rule = HostPattern.mostSpecific(in: rules, matching: host, by: \.pattern)
        guard var policy = rule?.policy ?? unmatched else { return Resolution(policy: nil, pattern: nil, notes: []) }
        var notes: [String] = []
        // A baseline exclusion more specific than the document's entry stays an exclusion: a
        // document may not pin what the app's own policy deliberately left unpinned.
        let excludedHere = policy.pins.map { $0.isExcluded } ?? false
        if let signedPins, let entry = signedPins.document.pins.pinnedHost(for: host),
            !excludedHere || policy.pins.map({ entry.pattern.moreSpecific(than: $0.pattern) }) == true
        {
            let document = signedPins.document
            if !signedPins.rules.isExpired(document, at: time) {
                policy.pins = entry
                notes.append("pins from signed pin set \(document.serial) (\(entry.pattern))")
            } else if case .reportOnly(let patterns) = signedPins.expiry, patterns.contains(entry.pattern) {
                var reportOnly = entry
                reportOnly.enforcePinning = false
                policy.pins = reportOnly
                notes.append(
                    "signed pin set \(document.serial) expired at \(ASN1TimeText.rfc3339(document.expiresAt)): its entry for \(host) is report-only")
            } else {
                notes.append("signed pin set \(document.serial) expired at \(ASN1TimeText.rfc3339(document.expiresAt)): the baseline policy decides")
            }
        }
        overlaySignedRevocation(on: &policy, host: host, at: time, notes: &notes)
        // A document in force may raise the host's Certificate Transparency, never lower it.
        if let signedPins, !signedPins.rules.isExpired(signedPins.document, at: time) {
            let (certificateTransparency, raised) = signedPins.certificateTransparency(for: host, over: policy.certificateTransparency)
            policy.certificateTransparency = certificateTransparency
            notes += raised
        }
        return Resolution(policy: policy, pattern: rule?.pattern, notes: notes)
    }

    /// This policy with a signed pin set laid over it (replacing any laid over before): for the
    /// hosts the document names, its pins replace the baseline's while it is in force, and
    /// every other input stays the baseline's. `nil` removes the overlay.
    /// - Parameters:
    ///   - document: The verified document in force, or `nil`.
    ///   - expiry: What its pins become when it expires.
    ///   - rules: The rules whose skew tolerance decides when it expired.
    /// - Returns: The policy.
    public func overlaying(_ document: PinSetDocument?, expiry: PinSetExpiry = .baseline, rules: PinSetRules) -> TrustPolicy {
        var policy = TrustPolicy(
            rules: self.rules, unmatched: unmatched, signedPins: document.map { SignedPinSet(document: $0, expiry: expiry, rules: rules) })
        policy.reporter = reporter
        policy.observer = observer
        policy.logger = logger
        return policy
    }

    /// This policy with its pin-failure reports, decision records and diagnostics delivered to
    /// the given receivers (`nil` delivers none).
    /// - Parameters:
    ///   - reporter: Receives pin-failure reports (wrap it in ``RateLimitedReporter`` to limit them).
    ///   - observer: Sees every decision.
    ///   - logger: Receives diagnostics.
    /// - Returns: The policy.
    public func reporting(to reporter: (any PinFailureReporter)?, observer: DecisionObserver? = nil, logger: PolicyLogger? = nil) -> TrustPolicy {
        var policy = self
        policy.reporter = reporter
        policy.observer = observer
        policy.logger = logger
        return policy
    }

    /// This policy with `transform` applied to every host's policy (the rules' and the one for
    /// unmatched hosts): how a layer that applies to every host, such as command-line anchors
    /// beside a policy file, is added.
    /// - Parameter transform: The change.
    /// - Returns: The policy.
    public func mapHosts(_ transform: (HostTrustPolicy) -> HostTrustPolicy) -> TrustPolicy {
        var policy = TrustPolicy(
            rules: rules.map { Rule($0.pattern, transform($0.policy)) }, unmatched: unmatched.map(transform), signedPins: signedPins)
        policy.reporter = reporter
        policy.observer = observer
        policy.logger = logger
        return policy
    }

    /// Throws unless the host's policy trusts the server.
    /// - Parameters:
    ///   - trust: The server's trust.
    ///   - host: The host connected to.
    /// - Throws: ``TrustEvaluationError``.
    public func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    /// Decides `trust` for `host` under the host's policy at the trust's instant (read once):
    /// its anchors and whole-path checks go on the trust, its evaluator decides, its pins are
    /// checked on what the evaluation proved; the record says which rule applied and why.
    /// - Parameters:
    ///   - trust: The server's trust (its system anchors are the roots the host's anchors are
    ///     added to).
    ///   - host: The host connected to.
    /// - Returns: The decision.
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        let decision = makeDecision(trust, forHost: host)
        observer?(decision.record)
        return decision
    }

    private func makeDecision(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        var trust = trust
        let time = trust.evaluationTime()
        trust.clock = .fixed(time)
        let resolution = resolve(host, at: time)
        guard let hostPolicy = resolution.policy else {
            var recorder = DecisionRecorder(evaluator: "TrustPolicy", policy: "allHostsMustBeEvaluated=true", trust: trust, host: host)
            recorder.step(.noMatchingRule(host: host))
            return recorder.reject(
                TrustEvaluationError(.noRequiredEvaluator, host: host, "no policy is configured for \(host) and all hosts must be evaluated"))
        }
        if hostPolicy.anchors.isConfigured {
            let configured = hostPolicy.anchors.store
            trust.setAnchors(trust.anchors.isEmpty ? configured : TrustStore(trust.anchors) + configured, only: hostPolicy.anchors.only || trust.anchorsOnly)
        }
        trust.pathChecks =
            trust.pathChecks + hostPolicy.revocation.pathChecks(for: trust.served) + hostPolicy.certificateTransparency.pathChecks(for: trust)
        // The host's pins are checked on the path the evaluator validates: every evaluation
        // prefers a valid path they are on (PeerTrust.evaluate).
        if let pins = hostPolicy.pins, let requirement = PinRequirement.pinSet(pins, host: host, at: time) { trust.prefer([requirement]) }
        var decision = hostPolicy.evaluator.decide(trust, forHost: host)
        if let pins = hostPolicy.pins {
            decision = PinEnforcement(pins: pins, reporter: reporter, logger: logger).apply(to: decision, trust: trust, host: host, time: time)
        }
        // What the policy put in force comes first in the record, as it came first here.
        var record = decision.record
        var steps: [DecisionStep] = [.hostPolicy(pattern: resolution.pattern?.description, source: hostPolicy.source)]
        if hostPolicy.anchors.isConfigured {
            steps.append(.anchors(.configured(count: hostPolicy.anchors.store.count, only: hostPolicy.anchors.only)))
        }
        if !trust.pathChecks.isEmpty { steps.append(.pathChecks(trust.pathChecks.map(\.name))) }
        record.steps.insert(contentsOf: steps, at: 0)
        record.notes.insert(contentsOf: resolution.notes, at: 0)
        if decision.isTrusted, !trust.pathChecks.isEmpty, record.validatedPath == nil {
            // An evaluator that accepts without validating a path (validation switched off)
            // leaves nothing for a whole-path check to run on: said, never implied.
            record.steps.append(.pathChecksNotRun(trust.pathChecks.map(\.name)))
        }
        return TrustDecision(failure: decision.failure, record: record, served: decision.served)
    }
}

/// A verified signed pin set laid over a ``TrustPolicy`` (``TrustPolicy/overlaying(_:expiry:rules:)``).
public struct SignedPinSet: Sendable {
    /// The document in force.
    public let document: PinSetDocument
    /// What its pins become once it expires.
    public let expiry: PinSetExpiry
    /// The skew tolerance that decides when it expired.
    public let rules: PinSetRules
}

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
