public import CertificateParsing

/// When a revocation status is current: the one place for the time rules that every revocation
/// source (a stapled OCSP response, a fetched or cached CRL) applies to its thisUpdate /
/// nextUpdate window.
///
/// A status is current at `time` when `thisUpdate ≤ time + clockSkew` and
/// `time − clockSkew ≤ end`, where `end` is nextUpdate, capped at `thisUpdate + maximumValidity`
/// when the source has such a cap, or `thisUpdate + maximumAgeWithoutNextUpdate` when the source
/// gave no nextUpdate (RFC 6960 §4.2.2.1: "If nextUpdate is not set, the responder is indicating
/// that newer revocation information is available all the time"; RFC 5280 §5.1.2.5 makes
/// nextUpdate mandatory for conforming CRLs). The defaults are mozilla::pkix's for OCSP (a day
/// without nextUpdate, ten days at most), which match the CA/Browser Forum Baseline Requirements'
/// ten-day limit on OCSP responses, with a five-minute skew.
public struct RevocationFreshness: Hashable, Sendable {
    /// Seconds the local clock and the issuer's may disagree, on either side of the window.
    public var clockSkew: Int64
    /// How long after thisUpdate a status without nextUpdate is used.
    public var maximumAgeWithoutNextUpdate: Int64
    /// The longest window (nextUpdate − thisUpdate) an OCSP response is honoured for; a longer
    /// one is treated as ending this long after thisUpdate.
    public var maximumOCSPValidity: Int64

    /// Five minutes of skew, a day without nextUpdate, ten days at most for OCSP.
    public static let `default` = RevocationFreshness(clockSkew: 300, maximumAgeWithoutNextUpdate: 86_400, maximumOCSPValidity: 10 * 86_400)

    /// Creates the rules.
    ///
    /// - Parameters:
    ///   - clockSkew: Allowed clock disagreement, in seconds.
    ///   - maximumAgeWithoutNextUpdate: Use of a status without nextUpdate, in seconds after
    ///     thisUpdate.
    ///   - maximumOCSPValidity: The longest OCSP window honoured, in seconds.
    public init(clockSkew: Int64, maximumAgeWithoutNextUpdate: Int64, maximumOCSPValidity: Int64) {
        self.clockSkew = clockSkew
        self.maximumAgeWithoutNextUpdate = maximumAgeWithoutNextUpdate
        self.maximumOCSPValidity = maximumOCSPValidity
    }

    /// Why a window is not current.
    public enum Problem: Hashable, Sendable, CustomStringConvertible {
        /// thisUpdate is later than now plus the skew: issued in the future.
        case notYetValid(thisUpdate: ASN1Time)
        /// The window ended (nextUpdate, or the end the rules assume) before now minus the skew.
        case expired(end: ASN1Time)
        /// nextUpdate precedes thisUpdate: no instant is in the window.
        case nextUpdateBeforeThisUpdate

        /// One line for the decision record.
        public var description: String {
            switch self {
            case .notYetValid(let thisUpdate): return "thisUpdate \(thisUpdate) is in the future"
            case .expired(let end): return "it is stale: its window ended at \(end)"
            case .nextUpdateBeforeThisUpdate: return "its nextUpdate precedes its thisUpdate"
            }
        }
    }

    /// The last instant (inclusive, before skew) at which a status with this window may be used.
    ///
    /// - Parameters:
    ///   - thisUpdate: The window's start.
    ///   - nextUpdate: The window's end as the issuer stated it, if it did.
    ///   - maximumValidity: A cap on the window's length (``maximumOCSPValidity`` for OCSP),
    ///     or `nil` for none.
    /// - Returns: Seconds since 1970.
    public func end(thisUpdate: ASN1Time, nextUpdate: ASN1Time?, maximumValidity: Int64? = nil) -> Int64 {
        let start = thisUpdate.secondsSince1970
        guard let nextUpdate else { return start.addingClamped(maximumAgeWithoutNextUpdate) }
        guard let maximumValidity else { return nextUpdate.secondsSince1970 }
        return min(nextUpdate.secondsSince1970, start.addingClamped(maximumValidity))
    }

    /// Whether a status with this window may be used at `time`, or why not.
    ///
    /// - Parameters:
    ///   - thisUpdate: The window's start.
    ///   - nextUpdate: The window's end as stated, if any.
    ///   - time: Now, in seconds since 1970 (from the decision's ``TrustClock``).
    ///   - maximumValidity: A cap on the window's length, or `nil`.
    /// - Returns: `nil` when current, else the problem.
    public func problem(thisUpdate: ASN1Time, nextUpdate: ASN1Time?, at time: Int64, maximumValidity: Int64? = nil) -> Problem? {
        if let nextUpdate, nextUpdate < thisUpdate { return .nextUpdateBeforeThisUpdate }
        if thisUpdate.secondsSince1970 > time.addingClamped(clockSkew) { return .notYetValid(thisUpdate: thisUpdate) }
        let end = end(thisUpdate: thisUpdate, nextUpdate: nextUpdate, maximumValidity: maximumValidity)
        if end < time.addingClamped(-clockSkew) { return .expired(end: ASN1Time(secondsSince1970: end)) }
        return nil
    }
}

extension Int64 {
    /// Addition that saturates instead of trapping: windows come from attacker-supplied times.
    package func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }
}
