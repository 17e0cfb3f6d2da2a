public import CertificateParsing

/// Revocation from CRLs (RFC 5280 §6.3, curl's `--crlfile`), as a whole-path check: every
/// certificate of the path below the trust anchor must be shown unrevoked, for every revocation
/// reason, by valid, current CRLs of this list in its scope.
///
/// The check is **hard-fail**: a certificate whose status these CRLs do not determine is
/// refused with ``ValidationFailure/Kind/revocationStatusUnknown``, never accepted silently,
/// and a revoked one with ``ValidationFailure/Kind/revoked``. An attacker who can keep a CRL
/// from the client can equally keep a revoked certificate's CRL away, so a check that accepts
/// an unknown status protects against nothing an attacker controls; a caller that cannot give
/// CRLs for every certificate of the path should not ask for this check.
///
/// Each certificate that passes is a finding naming the CRL that settled it (issuer, cRLNumber,
/// thisUpdate), for the decision record.
public struct CRLCheck: PathCheck {
    /// The CRLs (complete and delta) the path is checked against.
    public let revocationLists: [CertificateRevocationList]

    /// Creates the check.
    /// - Parameter revocationLists: The CRLs.
    public init(_ revocationLists: [CertificateRevocationList]) {
        self.revocationLists = revocationLists
    }

    /// `CRL`.
    public var name: String { Self.name }
    static let name = "CRL"

    /// RFC 5280 §6.3 for every certificate of `path` but the anchor.
    public func check<Verification: SignatureVerifier>(_ path: CandidatePath, context: inout PathCheckContext<Verification>) -> PathCheckResult {
        context.search.checkRevocation(path, crls: revocationLists)
    }
}

/// RFC 5280 §6.3 CRL processing, run on a complete path by ``CRLCheck``.
///
/// For each of the certificate's distribution points (§6.3.3), each complete CRL is checked
/// for issuer and scope (``CRLScope``), usability (critical extensions it cannot process, a
/// cRLNumber, an allowed algorithm), time, and signer: the CRL signer's own certificate must
/// have a valid path to the same trust anchor and may sign CRLs (§6.3.3 (f)). The signer is
/// the certificate's issuer in the common case; it may also be another certificate of the same
/// CA with a separate CRL-signing key, the CA's other key across a self-issued rollover, or a
/// delegated CRL issuer (an indirect CRL). Such a signer's path is validated by a nested search
/// that shares this validation's budget. A delta CRL (§5.2.4) from the same signer updates the
/// complete CRL it is based on; a delta is never used as if complete.
extension Search {
    /// Fails at the first certificate of `path` (leaf first) that is revoked or whose status
    /// `crls` do not determine; passes with one finding per certificate otherwise.
    mutating func checkRevocation(_ path: CandidatePath, crls: [CertificateRevocationList]) -> PathCheckResult {
        var signers = SignerCache()
        var findings: [PathCheckFinding] = []
        let naming = CRLNaming.issuers(crls)
        for index in 0..<(path.certificates.count - 1) {
            switch revocationStatus(of: index, in: path, crls: crls, signers: &signers, freshness: .exact, naming: naming) {
            case .success(let settlements):
                let settledBy = settlements.map { naming.settled($0) }.joined(separator: "; ")
                findings.append(
                    PathCheckFinding(check: CRLCheck.name, .passed, certificateIndex: index, certificate: path.certificates[index], "not revoked: \(settledBy)")
                )
            case .failure(let failure):
                if failure.kind == .budgetExhausted { return .budgetExhausted }
                let outcome = PathCheckFinding(check: CRLCheck.name, .failed, certificateIndex: index, certificate: path.certificates[index], failure.detail)
                return .failed(failure, findings + [outcome])
            }
        }
        return .passed(findings)
    }

    /// What is known about each CRL within one path's checks, so that a CRL consulted for
    /// several certificates is examined once.
    struct SignerCache {
        /// CRL index → the signer's certificate and whether it may be used, or why not.
        var results: [Int: Result<Certificate, SignerFailure>] = [:]
        /// CRL index → why the CRL cannot be used at all (`.some(nil)`: it can).
        var unusable: [Int: String?] = [:]
    }

    struct SignerFailure: Error {
        let reason: String
        /// The budget ran out: the whole validation stops.
        let exhausted: Bool
    }

    /// §6.3.3 for the certificate at `index` of `path`: the CRLs of `crls` (by index) that
    /// settled it, or why it is revoked (``ValidationFailure/Kind/revoked``) or undetermined
    /// (``ValidationFailure/Kind/revocationStatusUnknown``), or that the budget ran out.
    ///
    /// `freshness` is the time rule of (a) and (c) (a CRL is current, by its thisUpdate and
    /// nextUpdate, with the skew it allows); `naming` says how a CRL is named in the failure
    /// and in what settled the certificate (its issuer, or the URL it was fetched from).
    mutating func revocationStatus(
        of index: Int, in path: CandidatePath, crls: [CertificateRevocationList], signers: inout SignerCache, freshness: RevocationFreshness,
        naming: CRLNaming
    ) -> Result<[CRLSettlement], ValidationFailure> {
        let certificate = path.certificates[index]
        var covered: RevocationReasons = []
        var notUsed: [String] = []
        var settledBy: [CRLSettlement] = []
        for point in CRLScope.distributionPoints(of: certificate) where covered != .all {
            for (crlIndex, crl) in crls.enumerated() where !crl.isDelta && covered != .all {
                if let why = CRLScope.outOfScope(crl, for: certificate, point: point, profile: verifier.policy.profile) {
                    // Only CRLs that at least name the right issuer say something worth
                    // reporting when nothing else covers the certificate.
                    if crl.issuer.matches(certificate.issuer) || point?.crlIssuer != nil { notUsed.append("\(naming.label(crlIndex)): \(why)") }
                    continue
                }
                // (d)–(e): the CRL must add reasons not yet covered.
                let reasons = CRLScope.reasons(crl, point: point)
                guard !reasons.subtracting(covered).isEmpty else { continue }
                let unusable = signers.unusable[crlIndex] ?? CRLScope.unusable(crl, policy: verifier.policy)
                signers.unusable[crlIndex] = unusable
                if let why = unusable {
                    notUsed.append("\(naming.label(crlIndex)): \(why)")
                    continue
                }
                // (f)–(g): the signer, validated to the same trust anchor, and the signature.
                let signer: Certificate
                switch verifiedSigner(crlIndex, crl, for: index, in: path, crls: crls, signers: &signers) {
                case .success(let s): signer = s
                case .failure(let failure):
                    if failure.exhausted { return .failure(Budget.exhaustedFailure) }
                    notUsed.append("\(naming.label(crlIndex)): \(failure.reason)")
                    continue
                }
                // A certificate's own key never clears it: revocation is its issuer's word. A
                // self-issued CA (a key rollover, subject = issuer) would otherwise settle its
                // own status with a CRL it signs, as whoever holds its revoked key can. The CRL
                // issuer is taken above the certificate, as OpenSSL's crl_akid_check starts at
                // its issuer. Only a CRL signer being established by a nested search (the
                // circular case of validateSigner) is left as it is.
                if signer.subjectPublicKeyInfo.derBytes.bytesEqual(certificate.subjectPublicKeyInfo.derBytes), !signerStack.contains(certificate) {
                    notUsed.append("\(naming.label(crlIndex)): it is signed with the key of the certificate whose status it would settle (RFC 5280 6.3.3 (f))")
                    continue
                }
                // (c), (h): the newest current delta CRL for this base, signed by the same key.
                let delta = currentDelta(for: crl, signer: signer, crls: crls, freshness: freshness)
                if case .failure(let failure) = delta, failure.exhausted { return .failure(Budget.exhaustedFailure) }
                let usableDelta = (try? delta.get()) ?? nil
                // (a): the complete CRL must be current, unless a current delta CRL updates it
                // and the certificate or the CRL points to delta CRLs (freshestCRL).
                switch freshness.problem(thisUpdate: crl.thisUpdate, nextUpdate: crl.nextUpdate, at: time) {
                case nil: break
                case .notYetValid?:
                    notUsed.append("\(naming.label(crlIndex)) is not valid before \(crl.thisUpdate.rfc3339)")
                    continue
                case .expired?, .nextUpdateBeforeThisUpdate?:
                    let pointsToDeltas = crl.freshestCRL != nil || certificate.extensions[OID.freshestCRL] != nil
                    guard usableDelta != nil && pointsToDeltas else {
                        let next = crl.nextUpdate.map { " (next update \($0.rfc3339))" } ?? ""
                        notUsed.append("\(naming.label(crlIndex)) is out of date\(next)")
                        continue
                    }
                }
                // (i)–(k): a delta entry decides first; removeFromCRL undoes a hold.
                var status: RevocationReason?
                if let usableDelta, let entry = CRLScope.entry(for: certificate, in: crls[usableDelta]) { status = entry.reason ?? .unspecified }
                if status == nil, let entry = CRLScope.entry(for: certificate, in: crl) { status = entry.reason ?? .unspecified }
                if let status, status != .removeFromCRL {
                    // Name the CRL as an operator finds it (a delta entry names the delta).
                    let deltaListed = usableDelta.flatMap { CRLScope.entry(for: certificate, in: crls[$0]) != nil ? $0 : nil }
                    return .failure(
                        ValidationFailure(
                            .revoked,
                            "serial \(certificate.serialNumber) is revoked (\(status)) by the \(deltaListed == nil ? "" : "delta ")"
                                + naming.detail(deltaListed ?? crlIndex)
                        )
                        .at(index, certificate))
                }
                // (l).
                covered.formUnion(reasons)
                settledBy.append(CRLSettlement(crl: crlIndex, delta: usableDelta))
            }
        }
        guard covered == .all else {
            let missing = RevocationReasons.all.subtracting(covered)
            var detail = "no valid, current CRL covers \(covered.isEmpty ? "this certificate" : "the reasons \(missing)")"
            if !notUsed.isEmpty { detail += ": " + notUsed.prefix(3).joined(separator: "; ") }
            return .failure(ValidationFailure(.revocationStatusUnknown, detail + " (RFC 5280 6.3.3)").at(index, certificate))
        }
        return .success(settledBy)
    }

    /// §6.3.3 (f)–(g): the certificate whose key verifies `crl`, when it may sign CRLs for a
    /// certificate of this path. Tried in order: the certificates above `index` in the path
    /// (already validated to this path's anchor), then the other intermediates, whose own path
    /// to the same anchor is validated here.
    mutating func verifiedSigner(
        _ crlIndex: Int, _ crl: CertificateRevocationList, for index: Int, in path: CandidatePath, crls: [CertificateRevocationList],
        signers: inout SignerCache
    ) -> Result<Certificate, SignerFailure> {
        if let known = signers.results[crlIndex] { return known }
        let result = findSigner(crl, above: index, in: path, crls: crls)
        // A budget failure is not remembered: it ends the validation anyway.
        if case .failure(let failure) = result, failure.exhausted { return result }
        signers.results[crlIndex] = result
        return result
    }

    mutating func findSigner(
        _ crl: CertificateRevocationList, above index: Int, in path: CandidatePath, crls: [CertificateRevocationList]
    ) -> Result<Certificate, SignerFailure> {
        let keyID = crl.authorityKeyIdentifier?.keyIdentifier
        func plausible(_ certificate: Certificate) -> Bool {
            guard certificate.subject.matches(crl.issuer) else { return false }
            // §5.2.1: the AKI names the signing key; a certificate with another SKI cannot
            // have signed, so no signature check is spent on it.
            if let keyID, let ski = certificate.extensions.subjectKeyIdentifier, !ski.bytesEqual(keyID) { return false }
            return true
        }
        var reasons: [String] = []
        // Path certificates above this one: validated as part of the path.
        for position in (index + 1)..<path.certificates.count where plausible(path.certificates[position]) {
            guard let source = path.sources[position] else { continue }
            switch signs(crl, candidate: source, path.certificates[position]) {
            case .success: return .success(path.certificates[position])
            case .failure(let failure):
                if failure.exhausted { return .failure(failure) }
                reasons.append(failure.reason)
            }
        }
        // Other intermediates: a separate CRL-signing certificate or a delegated CRL issuer.
        let inPath = path.sources[(index + 1)...].compactMap { $0 }
        for (i, candidate) in intermediates.enumerated() where !inPath.contains(.intermediate(i)) && plausible(candidate) {
            switch signs(crl, candidate: .intermediate(i), candidate) {
            case .success: break
            case .failure(let failure):
                if failure.exhausted { return .failure(failure) }
                reasons.append(failure.reason)
                continue
            }
            switch validateSigner(candidate, anchor: path.anchor, crls: crls) {
            case .success: return .success(candidate)
            case .failure(let failure):
                if failure.exhausted { return .failure(failure) }
                reasons.append(failure.reason)
            }
        }
        return .failure(SignerFailure(reason: reasons.first ?? "no certificate of its issuer verifies its signature", exhausted: false))
    }

    /// Whether `certificate` (from `candidate`) may sign CRLs and its key verifies `crl`.
    mutating func signs(_ crl: CertificateRevocationList, candidate: Candidate, _ certificate: Certificate) -> Result<Void, SignerFailure> {
        // §6.3.3 (f): "If a key usage extension is present in the CRL issuer's certificate,
        // verify that the cRLSign bit is set."
        if let ku = certificate.extensions.keyUsage, !ku.cRLSign {
            return .failure(SignerFailure(reason: "its issuer \"\(certificate.subject.rfc4514)\" may not sign CRLs (keyUsage lacks cRLSign)", exhausted: false))
        }
        guard budget.spendSignatureCheck() else { return .failure(SignerFailure(reason: "budget", exhausted: true)) }
        guard case .success(let key) = keyFor(candidate, certificate),
            verifier.signatureVerifier.verify(signature: crl.signature, over: crl.tbsBytes, algorithm: crl.signatureAlgorithm, key: key)
        else {
            return .failure(SignerFailure(reason: "its signature does not verify with the key of \"\(certificate.subject.rfc4514)\"", exhausted: false))
        }
        return .success(())
    }

    /// §6.3.3 (f): "Obtain and validate the certification path for the issuer of the complete
    /// CRL. The trust anchor for the CRL certification path MUST be the same as the trust
    /// anchor used to validate the target certificate." A nested search under RFC 5280 rules
    /// (the signer is no TLS peer), with the same CRLs, time, algorithms and budget.
    mutating func validateSigner(_ signer: Certificate, anchor: Certificate, crls: [CertificateRevocationList]) -> Result<Void, SignerFailure> {
        // The circular case (a CRL issuer whose own status the CRL it signs gives): the signer
        // is already being established further up, so it is taken as valid here.
        if signerStack.contains(signer) { return .success(()) }
        guard signerStack.count < 4 else {
            return .failure(SignerFailure(reason: "CRL signer paths nest more than 4 deep", exhausted: false))
        }
        var policy = ValidationPolicy.basicX509
        policy.profile = .rfc5280
        policy.maximumIntermediates = verifier.policy.maximumIntermediates
        policy.minimumRSAKeyBits = verifier.policy.minimumRSAKeyBits
        policy.allowsSHA1Signatures = verifier.policy.allowsSHA1Signatures
        let nestedVerifier = Verifier(anchors: TrustStore([anchor]), policy: policy, signatureVerifier: verifier.signatureVerifier)
        var nested = Search(verifier: nestedVerifier, intermediates: intermediates, time: time, checks: [CRLCheck(crls)], tracing: false)
        nested.signerStack = signerStack + [signer]
        nested.budget = budget
        let result = nested.run(leaf: signer)
        budget = nested.budget
        switch result {
        case .success: return .success(())
        case .failure(let failure):
            return .failure(
                SignerFailure(
                    reason: "its signer \"\(signer.subject.rfc4514)\" has no valid path to the same trust anchor (\(failure))",
                    exhausted: failure.kind == .budgetExhausted))
        }
    }

    /// The newest delta CRL among `crls` (its index) that updates `base` (§5.2.4), is current
    /// by `freshness`, and verifies with `signer`'s key (§6.3.3 (h)); `.success(nil)` when there
    /// is none.
    mutating func currentDelta(
        for base: CertificateRevocationList, signer: Certificate, crls: [CertificateRevocationList], freshness: RevocationFreshness
    ) -> Result<Int?, SignerFailure> {
        var best: Int?
        for (index, delta) in crls.enumerated() where delta.isDelta && CRLScope.isDelta(delta, for: base) {
            guard CRLScope.unusable(delta, policy: verifier.policy) == nil else { continue }
            guard freshness.problem(thisUpdate: delta.thisUpdate, nextUpdate: delta.nextUpdate, at: time) == nil else { continue }
            if let best, let a = crls[best].number, let b = delta.number, b <= a { continue }
            guard budget.spendSignatureCheck() else { return .failure(SignerFailure(reason: "budget", exhausted: true)) }
            guard let key = try? verifier.signatureVerifier.makeKey(signer.subjectPublicKeyInfo),
                verifier.signatureVerifier.verify(signature: delta.signature, over: delta.tbsBytes, algorithm: delta.signatureAlgorithm, key: key)
            else { continue }
            best = index
        }
        return .success(best)
    }
}

/// A CRL (by index into the list checked) that covered a certificate in RFC 5280 §6.3.3 (l),
/// with the delta CRL that updated it, if one did.
struct CRLSettlement: Hashable {
    let crl: Int
    let delta: Int?
}

/// How the CRLs of one §6.3 check are named in decision records: a short label for why one was
/// not used, and the full name (issuer or URL, number, thisUpdate, provenance) for the CRL that
/// settled or revoked a certificate.
struct CRLNaming {
    let label: (Int) -> String
    let detail: (Int) -> String

    /// The full name of what settled a certificate, a delta included.
    func settled(_ settlement: CRLSettlement) -> String {
        detail(settlement.crl) + (settlement.delta == nil ? "" : ", with a delta CRL")
    }

    /// CRLs named by their issuer, thisUpdate and number (the caller's files, which have no URL).
    static func issuers(_ crls: [CertificateRevocationList], suffix: String = "") -> CRLNaming {
        CRLNaming(
            label: { "CRL from \"\(crls[$0].issuer.rfc4514)\"" },
            detail: { index in
                let crl = crls[index]
                let number = crl.number.map { ", cRLNumber \($0)" } ?? ""
                return "CRL from \"\(crl.issuer.rfc4514)\" (thisUpdate \(crl.thisUpdate.rfc3339)\(number))\(suffix)"
            })
    }
}

extension RevocationFreshness {
    /// RFC 5280 §6.3.3 (a) to the second, as ``CRLCheck`` applies it to the CRLs it is given:
    /// no skew, and a CRL without nextUpdate stays current (the caller chose it).
    static let exact = RevocationFreshness(clockSkew: 0, maximumAgeWithoutNextUpdate: .max, maximumOCSPValidity: .max)
}
