internal import ServerTrust
internal import Synchronization
internal import TrustEvaluation

/// The parts of a session that the transfer threads read: the configuration, the decider,
/// the shared curl objects and the session's memory (decisions, credentials).
final class SessionCore: Sendable {
    let configuration: HTTPSessionConfiguration
    let share: CurlShare
    let resolveList: CurlSList?
    let credentials: CredentialStore
    let usesHTTP2: Bool
    /// Staples seen in full handshakes, for connections decided without one.
    let handshakeEvidenceMemory = HandshakeEvidenceMemory()
    /// Set once a transfer completed with the `resolve` list loaded into the shared DNS cache.
    let resolveLoaded = Atomic<Bool>(false)

    /// What decides an `https://` proxy's own certificate; `nil` without one.
    let proxyTrust: ProxyTrust?
    /// `proxyTrust != nil`, read per request without copying the decider out.
    let hasHTTPSProxy: Bool
    /// The last accepted decision on the proxy's certificate, reported for requests that
    /// reused a connection through it.
    private let proxyDecision = Mutex<TrustDecision?>(nil)

    struct ProxyTrust: Sendable {
        var host: String
        var port: Int
        var decider: ServerTrustDecider
    }

    init(configuration: HTTPSessionConfiguration) throws(HTTPError) {
        _ = Curl.initialized
        self.configuration = configuration
        self.share = try CurlShare(sharesTLSSessions: configuration.tlsSessionResumption, sharesCookies: configuration.storesCookies)
        for entry in configuration.resolve {
            let parts = entry.split(separator: ":", maxSplits: 2)
            guard parts.count == 3, Int(parts[1]) != nil, !parts[0].isEmpty, !parts[2].isEmpty else {
                throw HTTPError.invalidRequest("resolve entry '\(entry)' is not HOST:PORT:ADDRESS")
            }
        }
        if configuration.resolve.isEmpty {
            resolveList = nil
        } else {
            guard let list = CurlSList(configuration.resolve) else { throw HTTPError.invalidRequest("curl_slist_append failed") }
            resolveList = list
        }
        if let proxy = configuration.proxy {
            let target = try RequestTarget(proxy.url)
            switch target.scheme {
            case "http":
                proxyTrust = nil
            case "https":
                let decider: ServerTrustDecider
                if let explicit = proxy.serverTrust {
                    decider = explicit
                } else {
                    do {
                        decider = try ServerTrustDecider.system()
                    } catch {
                        throw HTTPError.invalidRequest("proxy '\(proxy.url)': no decider given and the system trust store cannot be read: \(error)")
                    }
                }
                proxyTrust = ProxyTrust(host: target.host, port: target.port, decider: try Self.fetchingCRLs(decider))
            default:
                throw HTTPError.invalidRequest("proxy '\(proxy.url)': the scheme must be http:// or https://")
            }
        } else {
            proxyTrust = nil
        }
        hasHTTPSProxy = proxyTrust != nil
        self.currentTrust = Mutex(InstalledTrust(try Self.fetchingCRLs(configuration.serverTrust), generation: 0))
        self.credentials = try CredentialStore(path: configuration.credentialStorePath)
        self.usesHTTP2 = configuration.allowsHTTP2 && Curl.supportsHTTP2
    }

    /// The decider new connections are decided by, and its generation, one value: replaced
    /// whole (``HTTPSession/replaceServerTrust(_:)``), so no connection is ever decided by half
    /// of an old policy and half of a new one.
    private let currentTrust: Mutex<InstalledTrust>
    /// The generation of ``currentTrust``, read per request without the lock: a reused
    /// connection decided under an older generation is decided again before it serves.
    let trustGeneration = Atomic<Int>(0)

    /// The decider for a connection being decided now, with its generation.
    var trust: (decider: ServerTrustDecider, generation: Int) { currentTrust.withLock { ($0.decider, $0.generation) } }

    /// Replaces the decider; connections decided by the old one are decided again before they
    /// serve another request. Its CRL fetching is bound as at the start
    /// (``ServerTrustDecider/withCRLFetching()``); a cache folder that cannot be used here
    /// (the session's start checked the first decider's) leaves that host's CRLs in memory
    /// only, in the process's shared provider.
    func replaceTrust(_ decider: ServerTrustDecider) {
        let bound = (try? decider.withCRLFetching()) ?? Self.fetchingCRLsInMemory(decider)
        currentTrust.withLock { current in
            current = InstalledTrust(bound, generation: current.generation + 1)
            trustGeneration.store(current.generation, ordering: .releasing)
        }
    }

    /// What the decider of a connection to `host` needs from its handshake besides the
    /// certificates (the stapled OCSP response): derived from the policy
    /// (``/ServerTrust/TrustPolicy/handshakeEvidence(forHost:at:)``). A policy none of whose
    /// hosts needs anything is answered without resolving the host.
    func handshakeEvidence(forHost host: String) -> HandshakeEvidence {
        let (decider, anyHost) = currentTrust.withLock { ($0.decider, $0.evidenceForAnyHost) }
        guard !anyHost.isEmpty else { return [] }
        return decider.policy.handshakeEvidence(forHost: host, at: decider.clock.now())
    }

    /// The decider in force, its generation, and what any of its hosts may need from a
    /// handshake (derived once, when it is installed).
    struct InstalledTrust {
        let decider: ServerTrustDecider
        let generation: Int
        let evidenceForAnyHost: HandshakeEvidence

        init(_ decider: ServerTrustDecider, generation: Int) {
            self.decider = decider
            self.generation = generation
            self.evidenceForAnyHost = decider.policy.handshakeEvidenceForAnyHost
        }
    }

    /// `decider` with its CRL fetching bound (``ServerTrustDecider/withCRLFetching()``); a
    /// cache folder that cannot be used is the session's configuration error.
    static func fetchingCRLs(_ decider: ServerTrustDecider) throws(HTTPError) -> ServerTrustDecider {
        do {
            return try decider.withCRLFetching()
        } catch {
            throw HTTPError.fileError(path: error.directory, reason: "the CRL cache folder cannot be used: \(error.reason)")
        }
    }

    /// `decider` with every distribution-point fetch bound to the in-memory provider.
    static func fetchingCRLsInMemory(_ decider: ServerTrustDecider) -> ServerTrustDecider {
        guard let provider = try? FetchingCRLProvider.shared(cacheDirectory: nil) else { return decider }
        let policy = decider.policy.mapHosts { host in
            guard case .distributionPoints = host.revocation.fetching else { return host }
            var host = host
            host.revocation.fetching = .provider(provider)
            return host
        }
        return ServerTrustDecider(policy: policy, anchors: decider.anchors, clock: decider.clock)
    }

    /// The last request URL resolved against the base URL, and its target. Parsing is a pure
    /// function of the string (the base URL is fixed per session), and clients tend to send
    /// the same URL again (polling, an API endpoint, a keep-alive loop): the lookup costs a
    /// lock and a string comparison (by identity first) instead of a parse.
    private let lastTarget = Mutex<(reference: String, target: RequestTarget)?>(nil)

    /// `RequestTarget.resolve(reference, against: configuration.baseURL)`, remembered once.
    func target(for reference: String) throws(HTTPError) -> RequestTarget {
        if let hit = lastTarget.withLock({ last -> RequestTarget? in
            guard let last, last.reference == reference else { return nil }
            return last.target
        }) {
            return hit
        }
        let target = try RequestTarget.resolve(reference, against: configuration.baseURL)
        lastTarget.withLock { $0 = (reference, target) }
        return target
    }

    func rememberProxy(_ decision: TrustDecision) {
        guard decision.isTrusted else { return }
        proxyDecision.withLock { $0 = decision }
    }

    func lastProxyDecision() -> TrustDecision? {
        proxyDecision.withLock { $0 }
    }

    /// The identity to present to `host` without asking: preset, or remembered from an
    /// earlier client-certificate challenge.
    func presetIdentity(host: String, port: Int) -> Identity? {
        if let identity = configuration.clientIdentities[HTTPSessionConfiguration.hostKey(host)] { return identity }
        let space = ProtectionSpace(host: host, port: port, protocol: "https", authenticationMethod: .clientCertificate)
        if case .identity(let identity)? = credentials.credential(for: space)?.kind { return identity }
        return nil
    }
}
