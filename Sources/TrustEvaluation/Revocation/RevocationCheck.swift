public import CertificateParsing

/// What a revocation status that cannot be established does to a decision (the revocation
/// setting's mode, per host).
public enum RevocationMode: String, Hashable, Sendable, CaseIterable, Comparable {
    /// No revocation checking.
    case off
    /// A revoked certificate is refused; a status that cannot be established (no source covers
    /// the certificate, the CRL server is down, the CRL is stale or forged) is accepted with a
    /// noted finding in the decision record.
    case softFail = "soft-fail"
    /// A revoked certificate is refused, and so is one whose status cannot be established
    /// (``ValidationFailure/Kind/revocationStatusUnknown``).
    case hardFail = "hard-fail"

    /// Off < soft-fail < hard-fail: the order in which the modes protect more.
    public static func < (lhs: RevocationMode, rhs: RevocationMode) -> Bool { lhs.strength < rhs.strength }

    private var strength: Int {
        switch self {
        case .off: return 0
        case .softFail: return 1
        case .hardFail: return 2
        }
    }
}

/// Which certificates of a validated path the revocation setting covers.
public enum RevocationDepth: String, Hashable, Sendable, CaseIterable, Comparable {
    /// The leaf only.
    case leaf
    /// Every certificate of the path but the trust anchor.
    case chain

    /// Leaf < chain: the order in which the depths cover more.
    public static func < (lhs: RevocationDepth, rhs: RevocationDepth) -> Bool { lhs == .leaf && rhs == .chain }
}

/// Revocation for today's Web PKI, as one whole-path check (``PathCheck``): each certificate
/// the ``depth`` covers is settled, in this order, by the first source that can speak for it:
///
/// 1. **The stapled OCSP response** (the leaf only; RFC 6066 §8, RFC 8446 §4.4.2.1), checked by
///    ``OCSPResponseVerifier`` against the path's next certificate as issuer: `good` settles
///    the leaf with no CRL fetched (the caller's CRLs, and the current CRLs an HTTP session's
///    fetching provider verified before and holds, are still read: one that revokes the leaf
///    wins over the staple), `revoked` refuses, and a response that is unauthorized
///    (not the issuer, nor a responder it delegated), forged, stale or about another
///    certificate is ignored, with the reason in the record.
/// 2. **The caller's CRLs** (``revocationLists``: a policy file's `crls`, `--crl`).
/// 3. **CRLs from the certificate's distribution points**, through ``provider`` (from its cache
///    while fresh, else fetched), within the one time budget of the decision (``deadline``).
///
/// CRLs of sources 2 and 3 go through RFC 5280 §6.3 in one place, the same code ``CRLCheck``
/// runs: issuer and scope (issuingDistributionPoint, partitioned CRLs, §6.3.3 (b)), the signer
/// validated to the path's own trust anchor (§6.3.3 (f)), currency by ``freshness`` (thisUpdate
/// and nextUpdate with a clock skew), delta CRLs, and the entry. A fetched CRL whose signature or
/// signer is wrong is handed back to the provider to forget (``CRLProvider/discard(_:)``).
///
/// **Short-lived certificates.** A leaf valid for 7 days or less (notAfter − notBefore ≤
/// 604,800 s) without a revocation pointer (no cRLDistributionPoints, no OCSP URL) is exempt,
/// as the CA/Browser Forum Baseline Requirements allow such "Short-lived Subscriber
/// Certificates" to carry none (ballot SC-063): it passes with a noted finding
/// (``PathCheckFinding/Code/shortLivedExemption``), in either mode, after any staple or caller's
/// CRL has had its say. A longer-lived certificate without a pointer is "status unknown".
///
/// **Unknown status.** When no source settles a certificate, ``mode`` decides: soft-fail
/// passes with a noted finding (``PathCheckFinding/Code/revocationStatusUnknown``) saying why
/// each source could not; hard-fail fails the path with
/// ``ValidationFailure/Kind/revocationStatusUnknown``. A revoked certificate fails the path in
/// both (``ValidationFailure/Kind/revoked``), naming what revoked it.
///
/// Every passed finding names what settled the certificate: the staple (its signer and
/// window), or the CRL (URL, cRLNumber, thisUpdate, age, from the cache or the network; or the
/// caller's CRL by issuer).
public struct RevocationCheck: PathCheck {
    /// Soft-fail or hard-fail (``RevocationMode/off`` passes every path without looking).
    public let mode: RevocationMode
    /// The leaf only, or the whole path but the anchor.
    public let depth: RevocationDepth
    /// CRLs the caller supplied (complete and delta).
    public let revocationLists: [CertificateRevocationList]
    /// Where CRLs named by the certificates' distribution points come from; `nil` fetches none.
    public let provider: (any CRLProvider)?
    /// Why no CRL is fetched, for the record when ``provider`` is `nil` (`CRLs are not fetched
    /// (--offline)`); `nil` for the default wording.
    public let withoutProvider: String?
    /// The DER OCSP response the server stapled to this handshake, if any.
    public let stapledOCSPResponse: [UInt8]?
    /// The end of the decision's time budget for revocation: nothing blocks past it.
    public let deadline: ContinuousClock.Instant
    /// The time rules of CRLs and OCSP responses.
    public let freshness: RevocationFreshness

    /// Creates the check for one decision.
    /// - Parameters:
    ///   - mode: Soft-fail or hard-fail.
    ///   - depth: Leaf or chain.
    ///   - revocationLists: The caller's CRLs.
    ///   - provider: The source of CRLs from distribution points, or `nil`.
    ///   - withoutProvider: Why there is no provider, for the record.
    ///   - stapledOCSPResponse: The handshake's staple, if any.
    ///   - deadline: The end of the decision's time budget.
    ///   - freshness: The time rules.
    public init(
        mode: RevocationMode, depth: RevocationDepth, revocationLists: [CertificateRevocationList] = [], provider: (any CRLProvider)? = nil,
        withoutProvider: String? = nil, stapledOCSPResponse: [UInt8]? = nil, deadline: ContinuousClock.Instant, freshness: RevocationFreshness = .default
    ) {
        self.mode = mode
        self.depth = depth
        self.revocationLists = revocationLists
        self.provider = provider
        self.withoutProvider = withoutProvider
        self.stapledOCSPResponse = stapledOCSPResponse
        self.deadline = deadline
        self.freshness = freshness
    }

    /// `revocation`.
    public var name: String { Self.name }
    /// The check's name in decision records.
    public static let name = "revocation"

    /// The longest validity (notAfter − notBefore, in seconds) of a leaf that may carry no
    /// revocation pointer: 7 days.
    public static let shortLivedValidity: Int64 = 7 * 86_400

    /// Settles every certificate ``depth`` covers (see the type's documentation).
    public func check<Verification: SignatureVerifier>(_ path: CandidatePath, context: inout PathCheckContext<Verification>) -> PathCheckResult {
        guard mode != .off else { return .passed([]) }
        let covered = depth == .leaf ? min(1, path.certificates.count - 1) : path.certificates.count - 1
        var findings: [PathCheckFinding] = []
        var givenSigners = Search<Verification>.SignerCache()
        for index in 0..<covered {
            let certificate = path.certificates[index]
            switch settle(index, in: path, context: &context, givenSigners: &givenSigners) {
            case .settled(let detail):
                findings.append(PathCheckFinding(check: name, .passed, certificateIndex: index, certificate: certificate, "not revoked: \(detail)"))
            case .revoked(let failure):
                return .failed(failure, findings + [PathCheckFinding(check: name, .failed, certificateIndex: index, certificate: certificate, failure.detail)])
            case .exempt(let detail):
                findings.append(
                    PathCheckFinding(check: name, .noted, certificateIndex: index, certificate: certificate, detail, code: .shortLivedExemption))
            case .unknown(let reasons):
                let why = reasons.isEmpty ? "no source covers it" : reasons.joined(separator: "; ")
                guard mode == .softFail else {
                    let failure = ValidationFailure(.revocationStatusUnknown, "revocation status unknown (hard-fail): \(why)").at(index, certificate)
                    let finding = PathCheckFinding(
                        check: name, .failed, certificateIndex: index, certificate: certificate, failure.detail, code: .revocationStatusUnknown)
                    return .failed(failure, findings + [finding])
                }
                findings.append(
                    PathCheckFinding(
                        check: name, .noted, certificateIndex: index, certificate: certificate, "revocation status unknown, accepted (soft-fail): \(why)",
                        code: .revocationStatusUnknown))
            case .budgetExhausted:
                return .budgetExhausted
            }
        }
        return .passed(findings)
    }

    /// What settled one certificate.
    enum Settlement {
        case settled(String)
        case revoked(ValidationFailure)
        case exempt(String)
        case unknown([String])
        case budgetExhausted
    }

    /// The sources in order for the certificate at `index` (see the type's documentation).
    func settle<Verification: SignatureVerifier>(
        _ index: Int, in path: CandidatePath, context: inout PathCheckContext<Verification>, givenSigners: inout Search<Verification>.SignerCache
    ) -> Settlement {
        let certificate = path.certificates[index]
        var reasons: [String] = []
        // A `good` staple settles the leaf, but only after the caller's CRLs have had their say.
        var stapledGood: String?
        // 1. The staple: about the leaf, from its issuer (the next certificate of this path).
        if index == 0, let stapledOCSPResponse {
            guard context.spendSignatureCheck() else { return .budgetExhausted }
            let verifier = OCSPResponseVerifier(
                signatureVerifier: context.signatureVerifier, freshness: freshness, allowsSHA1Signatures: context.policy.allowsSHA1Signatures)
            let result = verifier.check(stapledOCSPResponse, for: certificate, issuedBy: path.certificates[1], at: context.time)
            let evidence = result.evidence.map { " (\($0))" } ?? ""
            switch result.status {
            case .good:
                stapledGood = "the stapled OCSP response says good\(evidence)"
            case .revoked(let reason, let time):
                let why = reason.map { " (\($0))" } ?? ""
                return .revoked(
                    ValidationFailure(.revoked, "serial \(certificate.serialNumber) is revoked\(why) since \(time) by the stapled OCSP response\(evidence)")
                        .at(index, certificate))
            case .unknown(let why):
                reasons.append("the stapled OCSP response is ignored: \(why)")
            }
        }
        // 2. The caller's CRLs, asked even after a `good` staple, since they cost no fetch: a
        // staple is its responder's word as of its thisUpdate (RFC 6960 §2.4) and is honoured
        // for days, so a holder of a revoked leaf's key can staple a `good` from before the
        // revocation; a caller's CRL that lists the leaf (RFC 5280 §6.3.3 (i)-(k)) is later
        // news, and a revocation is not undone (§5.3.1: only certificateHold is released).
        if !revocationLists.isEmpty {
            let naming = CRLNaming.issuers(revocationLists, suffix: ", given by the caller")
            switch context.search.revocationStatus(
                of: index, in: path, crls: revocationLists, signers: &givenSigners, freshness: freshness, naming: naming)
            {
            case .success(let settlements): return .settled(stapledGood ?? settlements.map { naming.settled($0) }.joined(separator: "; "))
            case .failure(let failure):
                switch failure.kind {
                case .budgetExhausted: return .budgetExhausted
                case .revoked: return .revoked(failure)
                default: reasons.append("the caller's CRLs: \(failure.detail)")
                }
            }
        }
        if let stapledGood {
            // The same for the CRLs the provider already verified and holds (no fetch): a
            // current one that lists the leaf outweighs a `good` staple replayed from before.
            if let known = (provider as? any CRLConfirming)?.verifiedCRLs(for: certificate, at: context.time), !known.isEmpty {
                let crls = known.map(\.crl)
                let time = context.time
                let naming = CRLNaming(label: { "CRL \(known[$0].url)" }, detail: { Self.describe(known[$0], at: time) })
                var signers = Search<Verification>.SignerCache()
                if case .failure(let failure) = context.search.revocationStatus(
                    of: index, in: path, crls: crls, signers: &signers, freshness: freshness, naming: naming)
                {
                    if failure.kind == .budgetExhausted { return .budgetExhausted }
                    if failure.kind == .revoked { return .revoked(failure) }
                }
            }
            return .settled(stapledGood)
        }
        // 3. Exempt: a short-lived leaf that names nowhere to look.
        let locations = CRLLocations(certificate)
        let ocspURLs = (certificate.extensions.authorityInformationAccess ?? []).filter { $0.accessMethod == OID.ocsp }
        // ASN1Time spans years 0 to 9999, so the difference cannot overflow.
        let validity = certificate.notAfter.secondsSince1970 - certificate.notBefore.secondsSince1970
        if index == 0, certificate.extensions.crlDistributionPoints == nil, ocspURLs.isEmpty, validity <= Self.shortLivedValidity {
            return .exempt(
                "exempt: a short-lived certificate (valid \(Self.duration(validity)), 7 days at most) with no CRL distribution point"
                    + " or OCSP URL (CA/B Forum Baseline Requirements, ballot SC-063)")
        }
        // 4. CRLs from the distribution points, through the provider, within the budget.
        guard certificate.extensions.crlDistributionPoints != nil else {
            reasons.append(
                "the certificate names no CRL distribution point"
                    + (ocspURLs.isEmpty ? "" : " (only an OCSP URL, which is not queried: only a stapled response is read)"))
            return .unknown(reasons)
        }
        guard let provider else {
            reasons.append(withoutProvider ?? "CRLs are not fetched from its distribution points")
            return .unknown(reasons)
        }
        let lookup = provider.crls(for: certificate, at: context.time, until: deadline)
        reasons += lookup.failures.map { "CRL \($0)" } + lookup.ignored.map(\.description)
        if locations.points.isEmpty && lookup.ignored.isEmpty { reasons.append("its distribution points name no http or https URL") }
        guard !lookup.crls.isEmpty else { return .unknown(reasons) }
        let given = revocationLists.count
        let crls = revocationLists + lookup.crls.map(\.crl)
        let time = context.time
        let givenNaming = CRLNaming.issuers(revocationLists, suffix: ", given by the caller")
        let naming = CRLNaming(
            label: { $0 < given ? givenNaming.label($0) : "CRL \(lookup.crls[$0 - given].url)" },
            detail: { $0 < given ? givenNaming.detail($0) : Self.describe(lookup.crls[$0 - given], at: time) })
        var signers = Search<Verification>.SignerCache()
        let status = context.search.revocationStatus(of: index, in: path, crls: crls, signers: &signers, freshness: freshness, naming: naming)
        // A fetched CRL whose signature or signer is wrong (forged, or another CA's) is
        // forgotten, so the next decision fetches again instead of trusting the cache; one that
        // verified is confirmed to a provider that keeps the newest verified CRL per URL.
        for (crlIndex, result) in signers.results where crlIndex >= given {
            switch result {
            case .success: (provider as? any CRLConfirming)?.confirm(lookup.crls[crlIndex - given])
            case .failure(let failure): if !failure.exhausted { provider.discard(lookup.crls[crlIndex - given]) }
            }
        }
        switch status {
        case .success(let settlements): return .settled(settlements.map { naming.settled($0) }.joined(separator: "; "))
        case .failure(let failure):
            switch failure.kind {
            case .budgetExhausted: return .budgetExhausted
            case .revoked: return .revoked(failure)
            default:
                reasons.append(failure.detail)
                return .unknown(reasons)
            }
        }
    }

    /// `CRL URL (cRLNumber N, thisUpdate T, age 2 h 5 min, from the cache)`: what an operator
    /// needs to find the CRL that settled a certificate.
    static func describe(_ fetched: FetchedCRL, at time: Int64) -> String {
        let origin: String
        switch fetched.origin {
        case .network: origin = "fetched now"
        case .cache: origin = "from the cache"
        case .revalidated: origin = "from the cache, revalidated (304)"
        }
        let number = fetched.number.map { "cRLNumber \($0), " } ?? ""
        return "CRL \(fetched.url) (\(number)thisUpdate \(fetched.thisUpdate.rfc3339), age \(duration(fetched.age(at: time))), \(origin))"
    }

    /// `3 d 4 h`, `2 h 5 min`, `40 s`: a duration for people.
    static func duration(_ seconds: Int64) -> String {
        if seconds < 0 { return "-" + duration(seconds == .min ? .max : -seconds) }
        let days = seconds / 86_400
        let hours = seconds % 86_400 / 3600
        let minutes = seconds % 3600 / 60
        if days > 0 { return hours > 0 ? "\(days) d \(hours) h" : "\(days) d" }
        if hours > 0 { return minutes > 0 ? "\(hours) h \(minutes) min" : "\(hours) h" }
        if minutes > 0 { return "\(minutes) min" }
        return "\(seconds) s"
    }
}

extension PathCheckFinding.Code {
    /// ``RevocationCheck``: no source established the certificate's status (noted under
    /// soft-fail, failed under hard-fail).
    public static let revocationStatusUnknown = PathCheckFinding.Code(rawValue: "revocation.statusUnknown")
    /// ``RevocationCheck``: a short-lived leaf without a revocation pointer, exempt.
    public static let shortLivedExemption = PathCheckFinding.Code(rawValue: "revocation.shortLivedExemption")
}
