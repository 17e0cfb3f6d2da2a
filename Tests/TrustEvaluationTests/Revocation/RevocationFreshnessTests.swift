import CertificateParsing
import Testing
import TrustEvaluation

/// The one set of time rules for revocation sources: the window's start and end against now,
/// the skew on both sides, the assumed end without nextUpdate, the cap on long windows, and
/// times near the ends of Int64 (they come from attacker-supplied encodings).
@Suite("Revocation freshness")
struct RevocationFreshnessTests {
    static let now: Int64 = 1_767_225_600
    static let rules = RevocationFreshness.default

    static func time(_ offset: Int64) -> ASN1Time { ASN1Time(secondsSince1970: now + offset) }

    @Test("the end is nextUpdate, capped, or thisUpdate plus the maximum age")
    func end() {
        let rules = Self.rules
        #expect(rules.end(thisUpdate: Self.time(0), nextUpdate: Self.time(3600)) == Self.now + 3600)
        #expect(rules.end(thisUpdate: Self.time(0), nextUpdate: nil) == Self.now + 86_400)
        #expect(rules.end(thisUpdate: Self.time(0), nextUpdate: Self.time(30 * 86_400), maximumValidity: 10 * 86_400) == Self.now + 10 * 86_400)
        #expect(rules.end(thisUpdate: Self.time(0), nextUpdate: Self.time(30 * 86_400)) == Self.now + 30 * 86_400, "CRLs have no cap")
    }

    @Test("skew on both sides, and the problems named")
    func problems() {
        let rules = Self.rules
        #expect(rules.problem(thisUpdate: Self.time(299), nextUpdate: Self.time(86_400), at: Self.now) == nil)
        #expect(rules.problem(thisUpdate: Self.time(301), nextUpdate: Self.time(86_400), at: Self.now) == .notYetValid(thisUpdate: Self.time(301)))
        #expect(rules.problem(thisUpdate: Self.time(-86_400), nextUpdate: Self.time(-300), at: Self.now) == nil)
        #expect(rules.problem(thisUpdate: Self.time(-86_400), nextUpdate: Self.time(-301), at: Self.now) == .expired(end: Self.time(-301)))
        #expect(rules.problem(thisUpdate: Self.time(0), nextUpdate: Self.time(-1), at: Self.now) == .nextUpdateBeforeThisUpdate)
        #expect("\(RevocationFreshness.Problem.expired(end: Self.time(-301)))".contains("stale"))
    }

    @Test("extreme times saturate instead of trapping")
    func extremes() {
        let rules = RevocationFreshness(clockSkew: .max, maximumAgeWithoutNextUpdate: .max, maximumOCSPValidity: .max)
        let far = ASN1Time(secondsSince1970: 253_402_300_799)
        #expect(rules.problem(thisUpdate: far, nextUpdate: nil, at: .max) == nil)
        #expect(rules.end(thisUpdate: far, nextUpdate: nil) == .max)
        #expect(Self.rules.problem(thisUpdate: Self.time(0), nextUpdate: nil, at: .min) == .notYetValid(thisUpdate: Self.time(0)))
    }
}
