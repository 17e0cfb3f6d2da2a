public import CertificateParsing
internal import Dispatch
public import ServerTrust
internal import Synchronization
public import TrustEvaluation

/// The ``/TrustEvaluation/CRLProvider`` for today's Web PKI: the CRLs a certificate's
/// distribution points name (``/TrustEvaluation/CRLLocations``), from a ``/ServerTrust/CRLCache``
/// while they are fresh, otherwise fetched over `http` or `https` with libcurl.
///
/// **Fetching.** A fetch is a blocking GET on the calling thread (the thread deciding a TLS
/// connection, inside its certificate-verify callback) with its own libcurl easy handle, never the
/// transfer lane's multi handle; see ``Configuration`` for the size cap and redirect limit and
/// the fetcher's documentation for what a request never carries and why an `https` CRL server's
/// certificate is not verified. Nothing blocks past the deadline the caller passes: the
/// decision's time budget for revocation.
///
/// **One fetch per URL at a time.** The first caller that needs a URL the cache cannot answer
/// fetches it; every other caller that needs the same URL meanwhile waits for that fetch, each
/// until its own deadline, and gets the same result (100 concurrent decisions on a cold cache
/// make one request). A waiter whose deadline comes first gives up alone (``/TrustEvaluation/CRLUnavailable/timedOut``);
/// the fetch goes on for the others and fills the cache. When the fetch itself ran out of its
/// caller's budget, a waiter with at least half a second left starts a new fetch rather than
/// report a timeout it did not cause. At most ``Configuration/maximumConcurrentFetches``
/// distinct URLs are fetched at once; beyond that a lookup reports
/// ``/TrustEvaluation/CRLUnavailable/tooManyFetches`` instead of piling up threads.
///
/// **What is returned and cached.** A body must parse as exactly one complete CRL (DER or PEM)
/// whose issuer is the certificate's issuer or the distribution point's cRLIssuer; anything else
/// is reported and never cached. Signatures, scope and currency are the revocation check's
/// business; the check calls ``discard(_:)`` for a CRL whose signature or signer is wrong. When a
/// revalidation fails (server down) but the cached CRL's own window is still current, the cached
/// CRL is returned.
///
/// **No rollback.** Per URL the provider keeps, in memory, the newest CRL the revocation check
/// verified (the check tells it which). While that CRL is current, a fetched CRL of the same
/// issuer and scope with a lower cRLNumber (RFC 5280 §5.2.3), an on-path attacker's replay of
/// the CA's CRL from before a revocation, is neither returned nor cached: the verified one is
/// returned instead. Only verified CRLs count, so a forged CRL can neither raise the mark nor,
/// by replacing the cached entry and being discarded, erase it. When a URL gives no CRL at all
/// (unreachable, not a CRL, no time left), that verified CRL is returned while it is current.
public final class FetchingCRLProvider: CRLProvider, CRLConfirming {
    /// Limits of the fetches.
    public struct Configuration: Hashable, Sendable {
        /// The largest CRL accepted, in bytes (16 MiB: large CAs' unpartitioned CRLs run to a few
        /// megabytes; a partitioned Web PKI CRL is far smaller).
        public var maximumSize: Int
        /// Redirects followed per fetch.
        public var maximumRedirects: Int
        /// Distinct URLs fetched at once.
        public var maximumConcurrentFetches: Int

        /// 16 MiB, 3 redirects, 32 fetches at once.
        public init(maximumSize: Int = 16 << 20, maximumRedirects: Int = 3, maximumConcurrentFetches: Int = 32) {
            self.maximumSize = maximumSize
            self.maximumRedirects = maximumRedirects
            self.maximumConcurrentFetches = maximumConcurrentFetches
        }
    }

    /// The cache consulted first and filled by every fetch.
    public let cache: CRLCache
    /// The limits.
    public let configuration: Configuration
    let fetcher: CRLFetcher
    /// Per URL, the newest CRL the check verified (``confirm(_:)``); emptied when it reaches
    /// ``maximumConfirmed`` URLs.
    private let confirmed = Mutex<[String: FetchedCRL]>([:])
    static var maximumConfirmed: Int { 512 }
    private let flights = Mutex<[String: Flight]>([:])

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - cache: The cache (in memory only, or with a folder).
    ///   - configuration: The limits.
    public init(cache: CRLCache, configuration: Configuration = Configuration()) {
        self.cache = cache
        self.configuration = configuration
        self.fetcher = CRLFetcher(maximumSize: configuration.maximumSize, maximumRedirects: configuration.maximumRedirects)
    }

    /// The CRLs `certificate`'s distribution points give: for each point, its first URL that
    /// gives a CRL.
    ///
    /// - Parameters:
    ///   - certificate: A certificate of the validated path.
    ///   - time: Now, in seconds since 1970 (the decision's clock).
    ///   - deadline: The end of the decision's time budget for revocation.
    /// - Returns: The CRLs with their provenance, the URLs that failed and why, and the names
    ///   that were not tried (LDAP and the like).
    public func crls(for certificate: Certificate, at time: Int64, until deadline: ContinuousClock.Instant) -> CRLLookup {
        let locations = CRLLocations(certificate)
        var crls: [FetchedCRL] = []
        var failures: [CRLFetchFailure] = []
        var results: [String: Result<FetchedCRL, CRLUnavailable>] = [:]
        for point in locations.points {
            for url in point.urls {
                let result = results[url] ?? crl(at: url, for: certificate, point: point.distributionPoint, at: time, until: deadline)
                results[url] = result
                switch result {
                case .success(let fetched):
                    if !crls.contains(fetched) { crls.append(fetched) }
                case .failure(let reason):
                    if !failures.contains(where: { $0.url == url }) { failures.append(CRLFetchFailure(url: url, reason: reason)) }
                    continue
                }
                break
            }
        }
        return CRLLookup(crls: crls, failures: failures, ignored: locations.ignored)
    }

    /// Forgets `crl` in the cache (memory and folder) if the cache still holds it for its URL.
    ///
    /// - Parameter crl: A CRL this provider returned, whose signature or signer the check found
    ///   wrong.
    public func discard(_ crl: FetchedCRL) {
        cache.remove(crl.url, ifHolding: crl.crl)
    }

    /// Keeps `crl` as its URL's newest verified CRL, unless a newer one of its scope is kept.
    ///
    /// - Parameter crl: A CRL this provider returned, whose signature and signer the check
    ///   verified.
    package func confirm(_ crl: FetchedCRL) {
        confirmed.withLock { table in
            if let kept = table[crl.url], Self.isOlder(crl.crl, than: kept.crl) { return }
            if table[crl.url] == nil, table.count >= Self.maximumConfirmed { table.removeAll() }
            table[crl.url] = crl
        }
    }

    /// The newest verified CRL of each of `certificate`'s distribution point URLs that is
    /// current at `time`, from memory: no fetch, no wait.
    ///
    /// - Parameters:
    ///   - certificate: A certificate of the validated path.
    ///   - time: Now, in seconds since 1970.
    /// - Returns: The CRLs, each once.
    package func verifiedCRLs(for certificate: Certificate, at time: Int64) -> [FetchedCRL] {
        var found: [FetchedCRL] = []
        for url in CRLLocations(certificate).points.flatMap(\.urls) {
            if let newest = newestVerified(url, at: time), !found.contains(where: { $0.url == url }) { found.append(newest) }
        }
        return found
    }

    /// The newest CRL the check verified for `url`, while it is current at `time`.
    func newestVerified(_ url: String, at time: Int64) -> FetchedCRL? {
        guard let newest = confirmed.withLock({ $0[url] }),
            cache.freshness.problem(thisUpdate: newest.crl.thisUpdate, nextUpdate: newest.crl.nextUpdate, at: time) == nil
        else { return nil }
        return FetchedCRL(crl: newest.crl, url: url, origin: .cache, fetchedAt: newest.fetchedAt, validatedAt: newest.validatedAt)
    }

    /// One URL: the cache when fresh, else the shared fetch (see the type's documentation); when
    /// that gives no CRL (unreachable, not a CRL, no time left), the newest verified CRL while it
    /// is current, as the cached CRL serves when the server is down: what an on-path attacker
    /// answers must not make the provider forget a current CRL it verified.
    package func crl(at url: String, for certificate: Certificate, point: DistributionPoint?, at time: Int64, until deadline: ContinuousClock.Instant)
        -> Result<FetchedCRL, CRLUnavailable>
    {
        let result = lookUp(url, for: certificate, point: point, at: time, until: deadline)
        guard case .failure = result, let newest = newestVerified(url, at: time) else { return result }
        return .success(newest)
    }

    private func lookUp(_ url: String, for certificate: Certificate, point: DistributionPoint?, at time: Int64, until deadline: ContinuousClock.Instant)
        -> Result<FetchedCRL, CRLUnavailable>
    {
        if let entry = cache.entry(for: url), cache.isFresh(entry, at: time) { return .success(Self.fetched(entry, .cache)) }
        // A fresh cache entry costs no time, so it is given even when the budget is spent;
        // anything that would wait is not tried.
        guard ContinuousClock.now < deadline else { return .failure(.noTimeLeft) }
        while true {
            let joined: (flight: Flight, leads: Bool)? = flights.withLock { table in
                if let flight = table[url] { return (flight, false) }
                guard table.count < configuration.maximumConcurrentFetches else { return nil }
                let flight = Flight()
                table[url] = flight
                return (flight, true)
            }
            guard let (flight, leads) = joined else { return .failure(.tooManyFetches) }
            if leads {
                let outcome = lead(url, for: certificate, point: point, at: time, until: deadline)
                // Off the table first: a caller arriving now finds the cache filled.
                flights.withLock { _ = $0.removeValue(forKey: url) }
                flight.finish(outcome)
                return outcome
            }
            guard let outcome = flight.wait(until: deadline) else { return .failure(.timedOut) }
            if case .failure(.timedOut) = outcome, ContinuousClock.now.duration(to: deadline) > .milliseconds(500) { continue }
            return outcome
        }
    }

    /// The fetch itself, by the caller that leads it.
    private func lead(_ url: String, for certificate: Certificate, point: DistributionPoint?, at time: Int64, until deadline: ContinuousClock.Instant)
        -> Result<FetchedCRL, CRLUnavailable>
    {
        // Another leader may have filled the cache since this caller looked.
        let cached = cache.entry(for: url)
        if let cached, cache.isFresh(cached, at: time) { return .success(Self.fetched(cached, .cache)) }
        switch fetcher.fetch(url, etag: cached?.etag, lastModified: cached?.lastModified, until: deadline) {
        case .success(.notModified):
            guard let entry = cache.revalidated(url, at: time) else { return .failure(.httpStatus(304)) }
            return .success(Self.fetched(entry, .revalidated))
        case .success(.body(let bytes, let etag, let lastModified)):
            let crl: CertificateRevocationList
            switch Self.parse(bytes, for: certificate, point: point) {
            case .success(let parsed): crl = parsed
            case .failure(let reason): return .failure(reason)
            }
            // A CRL from the future or with nextUpdate before thisUpdate is returned (the check
            // says why it is unusable) but not kept.
            switch cache.freshness.problem(thisUpdate: crl.thisUpdate, nextUpdate: crl.nextUpdate, at: time) {
            case .notYetValid?, .nextUpdateBeforeThisUpdate?:
                return .success(FetchedCRL(crl: crl, url: url, origin: .network, fetchedAt: time, validatedAt: time))
            case .expired?, nil:
                // RFC 5280 §5.2.3: cRLNumber is "a monotonically increasing sequence number for a
                // given CRL scope and CRL issuer". A lower number than the current verified CRL's
                // is a replay (an on-path attacker answering this plain-HTTP fetch with the CA's
                // CRL from before a revocation, still in its window): the verified CRL serves.
                if let newest = newestVerified(url, at: time), Self.isOlder(crl, than: newest.crl) { return .success(newest) }
                return .success(Self.fetched(cache.store(crl, url: url, etag: etag, lastModified: lastModified, at: time), .network))
            }
        case .failure(let reason):
            if let cached, cache.freshness.problem(thisUpdate: cached.crl.thisUpdate, nextUpdate: cached.crl.nextUpdate, at: time) == nil {
                return .success(Self.fetched(cached, .cache))
            }
            return .failure(reason)
        }
    }

    /// Exactly one complete CRL, DER or PEM, that can speak for `certificate`.
    static func parse(_ bytes: [UInt8], for certificate: Certificate, point: DistributionPoint?) -> Result<CertificateRevocationList, CRLUnavailable> {
        let crls: [CertificateRevocationList]
        do { crls = try CertificateRevocationList.load(bytes) } catch { return .failure(.notACRL(error.description)) }
        guard crls.count == 1 else { return .failure(.notACRL("\(crls.count) CRLs in one response")) }
        let crl = crls[0]
        guard !crl.isDelta else { return .failure(.notForThisCertificate("a delta CRL where a complete one is named")) }
        let issuers =
            [certificate.issuer]
            + (point?.crlIssuer ?? []).compactMap { name -> DistinguishedName? in
                if case .directoryName(let directory) = name { return directory }
                return nil
            }
        guard issuers.contains(where: { $0.matches(crl.issuer) }) else {
            return .failure(.notForThisCertificate("issued by \"\(crl.issuer.rfc4514)\", not by \"\(certificate.issuer.rfc4514)\""))
        }
        return .success(crl)
    }

    /// Whether `crl` precedes `current` in one CRL sequence (RFC 5280 §5.2.3): the same issuer
    /// and scope (issuingDistributionPoint, or none in both, as §6.3.3 (c)(2) compares them) and
    /// a lower cRLNumber.
    static func isOlder(_ crl: CertificateRevocationList, than current: CertificateRevocationList) -> Bool {
        guard let number = crl.number, let currentNumber = current.number, number < currentNumber else { return false }
        guard crl.issuer.matches(current.issuer) else { return false }
        return (crl.issuingDistributionPoint?.derBytes ?? []).bytesEqual(current.issuingDistributionPoint?.derBytes ?? [])
    }

    static func fetched(_ entry: CRLCache.Entry, _ origin: FetchedCRL.Origin) -> FetchedCRL {
        FetchedCRL(crl: entry.crl, url: entry.url, origin: origin, fetchedAt: entry.fetchedAt, validatedAt: entry.validatedAt)
    }
}

/// One fetch in progress, and the callers waiting for it.
private final class Flight: Sendable {
    private struct State {
        var outcome: Result<FetchedCRL, CRLUnavailable>?
        var waiters: [DispatchSemaphore] = []
    }
    private let state = Mutex(State())

    /// Publishes the outcome and wakes every waiter.
    func finish(_ outcome: Result<FetchedCRL, CRLUnavailable>) {
        let waiters = state.withLock { state -> [DispatchSemaphore] in
            state.outcome = outcome
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.signal() }
    }

    /// The outcome, or `nil` when `deadline` came first.
    func wait(until deadline: ContinuousClock.Instant) -> Result<FetchedCRL, CRLUnavailable>? {
        let semaphore = DispatchSemaphore(value: 0)
        if let outcome = state.withLock({ state -> Result<FetchedCRL, CRLUnavailable>? in
            if let outcome = state.outcome { return outcome }
            state.waiters.append(semaphore)
            return nil
        }) {
            return outcome
        }
        let remaining = ContinuousClock.now.duration(to: deadline)
        let nanoseconds = max(0, remaining.components.seconds * 1_000_000_000 + remaining.components.attoseconds / 1_000_000_000)
        _ = semaphore.wait(timeout: .now() + .nanoseconds(Int(nanoseconds)))
        return state.withLock { state in
            state.waiters.removeAll { $0 === semaphore }
            return state.outcome
        }
    }
}
