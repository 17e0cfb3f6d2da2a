public import CertificateParsing
public import TrustEvaluation

/// How a host's chains are checked for revocation: the revocation setting of one
/// ``HostTrustPolicy``.
///
/// - **Mode** (``mode``): ``/TrustEvaluation/RevocationMode/off``,
///   ``/TrustEvaluation/RevocationMode/softFail`` (a revoked certificate is refused; a status
///   that cannot be established, such as an unreachable or stale CRL, is accepted with a note in
///   the decision record and an event for the session's event monitor) or
///   ``/TrustEvaluation/RevocationMode/hardFail`` (both refused: `revoked`,
///   `revocationStatusUnknown`).
/// - **Depth** (``depth``): the leaf only, or every certificate of the validated path but the
///   anchor.
/// - **Sources**, tried in this order for each covered certificate: the OCSP response the server
///   stapled to the handshake (``usesStapledOCSP``, the leaf only), the CRLs the caller gives
///   (``revocationLists``), and the CRLs the certificates' distribution points name, from a cache
///   or fetched (``fetching``), all within one time budget per decision (``timeBudget``).
///
/// The check runs through the verifier's one hook for whole-path checks
/// (``/TrustEvaluation/RevocationCheck`` on ``/TrustEvaluation/PathCheck``), whatever evaluator
/// decides, and the record names per certificate what settled its status (the staple; the CRL's
/// URL, number, thisUpdate and age, from the cache or the network) or why nothing could.
///
/// **The default is off.** ``HostTrustPolicy`` starts with ``off``, and so do policy files
/// without a `revocation` object, the command line without `--revocation`, and apps upgraded
/// from 0.1: nothing changes for them, no request leaves the process for a CA's server, and no
/// connection waits for one. Turning it on is one line (`revocation: .softFail`). Why not
/// soft-fail by default: soft-fail refuses only what an attacker lets through (one who holds a
/// revoked key and controls the network can block the CRL fetch and be accepted), so it adds
/// little against the man in the middle this library is for, while it would make every upgraded
/// app fetch from CAs' servers inside its handshakes, and an app in a network that drops
/// outbound traffic would wait out the time budget on every new connection. Hard-fail, the only
/// mode an on-path attacker cannot talk his way past, would make a CRL server's outage the app's
/// outage, which an upgrade must not do silently. Choose per host: hard-fail where the CRL
/// servers are yours or reliably reachable, soft-fail elsewhere.
///
/// CRL files given the 0.1 way (``init(revocationLists:)``, a policy file's `crls` without a
/// `revocation` object, `--crl` without `--revocation`) keep their meaning: hard-fail over the
/// whole path, those CRLs only.
public struct RevocationPolicy: Sendable {
    /// Off, soft-fail or hard-fail.
    public typealias Mode = RevocationMode
    /// Leaf or chain.
    public typealias Depth = RevocationDepth

    /// Where the CRLs named by certificates' distribution points come from.
    public enum Fetching: Sendable {
        /// None are fetched: only the staple and the caller's CRLs count.
        case never
        /// Fetched over `http` or `https` and cached, by the CRL provider of the HTTPS client
        /// (one per process and cache folder: the HTTPS client's session binds this to it); the
        /// cache also lives in `cacheDirectory` when one is given, so that a restarted process
        /// does not fetch again. A decision made without an HTTPS client (a decider used on its
        /// own, `servertrust evaluate --offline`) has no provider: the record says so.
        case distributionPoints(cacheDirectory: String?)
        /// Through this provider (a `FetchingCRLProvider` of module ServerTrustHTTP shared by
        /// several sessions, or any other source).
        case provider(any CRLProvider)
    }

    /// Off, soft-fail or hard-fail.
    public var mode: RevocationMode
    /// The leaf only, or the whole path but the anchor.
    public var depth: RevocationDepth
    /// CRLs the caller supplied (files); empty for none.
    public var revocationLists: [CertificateRevocationList]
    /// Where distribution-point CRLs come from.
    public var fetching: Fetching
    /// Whether the server's stapled OCSP response is asked for and read (for the leaf).
    public var usesStapledOCSP: Bool
    /// How long one decision may spend fetching CRLs, in all: nothing blocks past it.
    public var timeBudget: Duration
    /// The time rules of CRLs and OCSP responses (clock skew, windows without nextUpdate).
    public var freshness: RevocationFreshness

    /// Creates a revocation setting.
    /// - Parameters:
    ///   - mode: Off, soft-fail or hard-fail.
    ///   - depth: Leaf or chain (default chain).
    ///   - revocationLists: The caller's CRLs, one more source (default none).
    ///   - fetching: Where distribution-point CRLs come from (default: fetched by the HTTPS
    ///     client, cached in memory).
    ///   - usesStapledOCSP: Whether the staple is read (default yes).
    ///   - timeBudget: The time one decision may spend fetching; `nil` takes
    ///     ``defaultTimeBudget(for:)`` (2 s soft-fail, 10 s hard-fail).
    ///   - freshness: The time rules (default five minutes of skew).
    public init(
        mode: RevocationMode, depth: RevocationDepth = .chain, revocationLists: [CertificateRevocationList] = [],
        fetching: Fetching = .distributionPoints(cacheDirectory: nil), usesStapledOCSP: Bool = true, timeBudget: Duration? = nil,
        freshness: RevocationFreshness = .default
    ) {
        self.mode = mode
        self.depth = depth
        self.revocationLists = revocationLists
        self.fetching = fetching
        self.usesStapledOCSP = usesStapledOCSP
        self.timeBudget = timeBudget ?? Self.defaultTimeBudget(for: mode)
        self.freshness = freshness
    }

    /// CRL files the 0.1 way (curl's `--crlfile`): every certificate of the validated path but
    /// the anchor must be covered by `revocationLists` and not revoked (hard-fail, chain); nothing
    /// is fetched and no staple is read. An empty list is ``off``.
    /// - Parameter revocationLists: The CRLs (complete and delta).
    public init(revocationLists: [CertificateRevocationList]) {
        self.init(mode: revocationLists.isEmpty ? .off : .hardFail, depth: .chain, revocationLists: revocationLists, fetching: .never, usesStapledOCSP: false)
    }

    /// No revocation checking (the default; see the type's documentation for why).
    public static let off = RevocationPolicy(mode: .off)
    /// Soft-fail over the whole path from the staple and fetched CRLs.
    public static let softFail = RevocationPolicy(mode: .softFail)
    /// Hard-fail over the whole path from the staple and fetched CRLs.
    public static let hardFail = RevocationPolicy(mode: .hardFail)

    /// How long a decision may fetch by default: 2 s in soft-fail (a status that does not come
    /// quickly is accepted anyway; Firefox gave soft-fail OCSP 2 s), 10 s in hard-fail (a slow
    /// CRL server refuses the connection; swift-certificates' OCSP budget is 10 s).
    /// - Parameter mode: The mode.
    /// - Returns: The budget.
    public static func defaultTimeBudget(for mode: RevocationMode) -> Duration {
        mode == .hardFail ? .seconds(10) : .seconds(2)
    }

    /// Whether any revocation check runs.
    public var isOn: Bool { mode != .off }

    /// What this setting needs from the handshake: the stapled OCSP response when it is on and
    /// reads staples. The HTTPS client asks for the staple and decides where it has arrived
    /// exactly when this says so.
    public var handshakeEvidence: HandshakeEvidence {
        isOn && usesStapledOCSP ? .stapledOCSPResponse : []
    }

    /// The same setting with `more` CRLs added (a file-level list and a host's own list, or the
    /// command line's beside a policy file's). Added to a setting that is off, they switch it on
    /// as ``init(revocationLists:)`` does (hard-fail, chain, those CRLs only), as `--crl` and
    /// `crls` always did.
    /// - Parameter more: The CRLs to add.
    /// - Returns: The setting.
    public func adding(_ more: [CertificateRevocationList]) -> RevocationPolicy {
        guard !more.isEmpty else { return self }
        guard isOn else { return RevocationPolicy(revocationLists: revocationLists + more) }
        var policy = self
        policy.revocationLists += more
        return policy
    }

    /// This setting, no weaker than `mode` and `depth` (a signed pin set's setting): each is
    /// the stronger of the two, the sources stay this setting's. A mode switched on here takes
    /// its default time budget if this one was off.
    /// - Parameters:
    ///   - mode: The mode asked for.
    ///   - depth: The depth asked for.
    /// - Returns: The setting.
    public func strengthened(to mode: RevocationMode, depth: RevocationDepth) -> RevocationPolicy {
        var policy = self
        if mode > self.mode {
            if timeBudget == Self.defaultTimeBudget(for: self.mode) { policy.timeBudget = Self.defaultTimeBudget(for: mode) }
            policy.mode = mode
        }
        policy.depth = max(self.depth, depth)
        return policy
    }

    /// The whole-path checks this setting asks for on a chain served with `served`'s evidence,
    /// in the order they run: one ``/TrustEvaluation/RevocationCheck`` with its own deadline,
    /// made per decision.
    func pathChecks(for served: ServedChain) -> [any PathCheck] {
        guard isOn else { return [] }
        let provider: (any CRLProvider)?
        let withoutProvider: String?
        switch fetching {
        case .never:
            (provider, withoutProvider) = (nil, "CRLs are not fetched from its distribution points (this policy reads no fetched CRLs)")
        case .distributionPoints:
            (provider, withoutProvider) = (
                nil,
                "CRLs are not fetched from its distribution points (no fetcher is bound to this decision: offline, "
                    + "or a decider used outside an HTTPS session)"
            )
        case .provider(let given):
            (provider, withoutProvider) = (given, nil)
        }
        return [
            RevocationCheck(
                mode: mode, depth: depth, revocationLists: revocationLists, provider: provider, withoutProvider: withoutProvider,
                stapledOCSPResponse: usesStapledOCSP ? served.stapledOCSPResponse : nil, deadline: .now + timeBudget, freshness: freshness)
        ]
    }

    /// `soft-fail, chain, sources: stapled OCSP, 2 CRL files, fetched CRLs (cache /var/cache)`.
    public var summary: String {
        guard isOn else { return "off" }
        var sources: [String] = []
        if usesStapledOCSP { sources.append("stapled OCSP") }
        if !revocationLists.isEmpty { sources.append("\(revocationLists.count) CRL\(revocationLists.count == 1 ? "" : "s") given") }
        switch fetching {
        case .never: break
        case .distributionPoints(let directory): sources.append("fetched CRLs" + (directory.map { " (cache \($0))" } ?? ""))
        case .provider: sources.append("fetched CRLs")
        }
        return "\(mode.rawValue), \(depth.rawValue), sources: \(sources.isEmpty ? "none" : sources.joined(separator: ", "))"
    }
}
