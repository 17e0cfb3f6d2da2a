public import CertificateParsing

/// Where the CRLs for a certificate come from when the caller did not hand them over: the
/// certificate's distribution points, fetched and cached (``CRLLocations``; module
/// ServerTrustHTTP implements it with libcurl and a cache), or any other source.
///
/// The revocation check calls it from inside a TLS handshake, on the thread deciding the
/// connection, once per certificate its depth covers, so an implementation must block for at
/// most `deadline` and must be safe to call from many threads at once. It returns every CRL it
/// got, verified or not: the CRLs' signatures, issuers, scopes and freshness are the check's
/// business (RFC 5280 §6.3.3), in one place. When the check finds a returned CRL unusable because
/// of its signature or signer, it calls ``discard(_:)`` so that the source forgets it.
public protocol CRLProvider: Sendable {
    /// The CRLs `certificate`'s distribution points give.
    ///
    /// - Parameters:
    ///   - certificate: A certificate of the validated path.
    ///   - time: Now, in seconds since 1970 (the decision's ``TrustClock``): what a cached CRL's
    ///     nextUpdate is compared with.
    ///   - deadline: When the decision's time budget for revocation ends; nothing blocks past it.
    /// - Returns: The CRLs with their provenance, and why each location gave none.
    func crls(for certificate: Certificate, at time: Int64, until deadline: ContinuousClock.Instant) -> CRLLookup

    /// Forgets a CRL this provider returned, because the check found its signature or signer
    /// wrong (never because it does not cover some certificate: it may cover others). The next
    /// lookup of its URL fetches again.
    ///
    /// - Parameter crl: The CRL as ``crls(for:at:until:)`` returned it.
    func discard(_ crl: FetchedCRL)
}

/// A ``CRLProvider`` told which CRLs it returned the revocation check verified: signature and
/// signer validated to the path's trust anchor (RFC 5280 §6.3.3 (f)–(g)), the counterpart of
/// ``CRLProvider/discard(_:)``. Only such a CRL may say which CRL of its scope is the newest
/// (cRLNumber, §5.2.3): anyone on the path of a plain-HTTP fetch can send a well-formed one.
package protocol CRLConfirming: CRLProvider {
    /// Records that `crl`, as ``CRLProvider/crls(for:at:until:)`` returned it, verified.
    func confirm(_ crl: FetchedCRL)

    /// The confirmed CRLs of `certificate`'s distribution points that are current at `time`,
    /// without fetching or waiting: what the check reads after a `good` staple.
    func verifiedCRLs(for certificate: Certificate, at time: Int64) -> [FetchedCRL]
}

/// What a ``CRLProvider`` found for one certificate.
public struct CRLLookup: Sendable {
    /// The CRLs, with where each came from.
    public let crls: [FetchedCRL]
    /// The URLs that gave no CRL, and why.
    public let failures: [CRLFetchFailure]
    /// The distribution point names that were not tried, and why (``CRLLocations/ignored``).
    public let ignored: [CRLLocationProblem]

    /// Creates a lookup result.
    ///
    /// - Parameters:
    ///   - crls: The CRLs.
    ///   - failures: The URLs that gave none.
    ///   - ignored: The names not tried.
    public init(crls: [FetchedCRL], failures: [CRLFetchFailure], ignored: [CRLLocationProblem]) {
        self.crls = crls
        self.failures = failures
        self.ignored = ignored
    }
}

/// A CRL a ``CRLProvider`` returned, with its provenance for the decision record.
public struct FetchedCRL: Hashable, Sendable, CustomStringConvertible {
    /// How this lookup got the CRL.
    public enum Origin: String, Hashable, Sendable {
        /// Downloaded now (HTTP 200).
        case network
        /// From the cache, without a network request.
        case cache
        /// From the cache after the server answered a conditional request with 304 Not Modified.
        case revalidated
    }

    /// The CRL.
    public let crl: CertificateRevocationList
    /// The URL it was fetched from (the distribution point's, before redirects).
    public let url: String
    /// How this lookup got it.
    public let origin: Origin
    /// When its bytes were downloaded (seconds since 1970).
    public let fetchedAt: Int64
    /// When the server last confirmed it (a 200 or a 304), seconds since 1970.
    public let validatedAt: Int64

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - crl: The CRL.
    ///   - url: Where it came from.
    ///   - origin: How this lookup got it.
    ///   - fetchedAt: When it was downloaded.
    ///   - validatedAt: When the server last confirmed it.
    public init(crl: CertificateRevocationList, url: String, origin: Origin, fetchedAt: Int64, validatedAt: Int64) {
        self.crl = crl
        self.url = url
        self.origin = origin
        self.fetchedAt = fetchedAt
        self.validatedAt = validatedAt
    }

    /// The CRL's cRLNumber, if it has one.
    public var number: CRLNumber? { crl.number }
    /// The CRL's thisUpdate.
    public var thisUpdate: ASN1Time { crl.thisUpdate }

    /// How old the CRL is at `time`: seconds since its thisUpdate.
    ///
    /// - Parameter time: Now, in seconds since 1970.
    /// - Returns: The age in seconds (negative for a CRL from the future).
    public func age(at time: Int64) -> Int64 { time - crl.thisUpdate.secondsSince1970 }

    /// `CRL URL (cRLNumber N, thisUpdate T, from the cache)`.
    public var description: String {
        let source: String
        switch origin {
        case .network: source = "fetched"
        case .cache: source = "from the cache"
        case .revalidated: source = "from the cache, revalidated (304)"
        }
        return "CRL \(url) (cRLNumber \(number?.description ?? "none"), thisUpdate \(thisUpdate), \(source))"
    }
}

/// A URL that gave no CRL.
public struct CRLFetchFailure: Hashable, Sendable, CustomStringConvertible {
    /// The URL.
    public let url: String
    /// Why.
    public let reason: CRLUnavailable

    /// Creates a failure record.
    ///
    /// - Parameters:
    ///   - url: The URL.
    ///   - reason: Why it gave no CRL.
    public init(url: String, reason: CRLUnavailable) {
        self.url = url
        self.reason = reason
    }

    /// `URL: REASON`.
    public var description: String { "\(url): \(reason)" }
}

/// Why a CRL location gave no CRL.
public enum CRLUnavailable: Error, Hashable, Sendable, CustomStringConvertible {
    /// The server could not be reached or the transfer failed (DNS, connection refused, TLS,
    /// a broken response), with the transport's words.
    case unreachable(String)
    /// The decision's time budget ran out during the fetch.
    case timedOut
    /// The decision's time budget was spent before this URL was tried.
    case noTimeLeft
    /// The response is larger than the size cap, in bytes.
    case tooLarge(limit: Int)
    /// The server answered with this HTTP status instead of 200 (or 304 to a revalidation).
    case httpStatus(Int)
    /// The server redirected more times than allowed.
    case tooManyRedirects(limit: Int)
    /// The body is not a DER or PEM CRL; the parser's words.
    case notACRL(String)
    /// The body is a CRL, but not one that can speak for the certificate whose distribution
    /// point named it (another issuer, a delta CRL); it is not cached.
    case notForThisCertificate(String)
    /// More distinct URLs are being fetched at once than the fetcher allows.
    case tooManyFetches

    /// One line for the decision record.
    public var description: String {
        switch self {
        case .unreachable(let why): return "unreachable (\(why))"
        case .timedOut: return "the time budget ran out during the fetch"
        case .noTimeLeft: return "not tried: the time budget was already spent"
        case .tooLarge(let limit): return "the response exceeds the \(limit)-byte limit"
        case .httpStatus(let status): return "the server answered HTTP \(status)"
        case .tooManyRedirects(let limit): return "more than \(limit) redirects"
        case .notACRL(let why): return "not a CRL (\(why))"
        case .notForThisCertificate(let why): return "not a CRL for this certificate (\(why))"
        case .tooManyFetches: return "too many CRL fetches at once"
        }
    }
}
