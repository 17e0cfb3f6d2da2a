import CertificateParsing

/// What a host's policy does with Certificate Transparency: the `mode` of a policy file's
/// `certificateTransparency`, `--ct` on the command line. Ordered by strength: `off` <
/// `report` < `require`.
public enum CTMode: String, Hashable, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    /// No CT check runs.
    case off
    /// The check runs; a non-compliant chain is accepted, and the decision notes and reports
    /// the violation (``PathCheckFinding/reportedFailure``): Chrome's report-only rollout, for
    /// learning what enforcement would refuse before turning it on.
    case report
    /// A non-compliant chain is refused (``ValidationFailure/Kind/certificateTransparencyNotCompliant``),
    /// as `SecTrust` refuses one on Apple platforms.
    case require

    /// `off`, `report` or `require`.
    public var description: String { rawValue }

    /// Whether `lhs` asks for less than `rhs`.
    public static func < (lhs: CTMode, rhs: CTMode) -> Bool { lhs.strength < rhs.strength }

    private var strength: Int {
        switch self {
        case .off: return 0
        case .report: return 1
        case .require: return 2
        }
    }
}

/// Certificate Transparency as a whole-path check (``PathCheck``): the leaf's SCTs, embedded,
/// sent in the TLS extension or stapled in a verified OCSP response, judged by Apple's or
/// Chrome's policy (``CertificateTransparency``) with the app's log list, on every candidate
/// path that ends at a root of the system trust store.
///
/// Built for one decision, from the host's policy (mode, policy, log list, maximum list age),
/// the connection (the TLS extension's bytes and the stapled response) and the trust's system
/// anchors. On each candidate path:
///
/// 1. **Publicly trusted chains only.** When the path's anchor is not a root of
///    ``systemAnchors`` (a private anchor the host's policy added, a user-added anchor, a
///    pinned self-signed certificate), the path is exempt, and the finding says so: browsers
///    exempt private and user-added roots (an interception proxy's CA never appears in CT
///    logs), and pins, not CT, protect those hosts. An anchor counts as a system root when it
///    is one, or has a system root's subject and key (a re-encoded copy of a public root does
///    not escape CT).
/// 2. **The staple.** A stapled OCSP response's SCTs (singleExtension 1.3.6.1.4.1.11129.2.4.5,
///    RFC 6962 §3.3) count only when ``OCSPResponseVerifier`` establishes that the response is
///    for this leaf and was signed by its issuer or a responder the issuer authorized; a
///    response that fails, or has a critical extension this library does not understand, adds
///    no SCT, and the finding says why.
/// 3. **The SCTs and the policy** (``CertificateTransparency/evaluate(leaf:issuer:tlsSCTList:ocspSCTList:logList:policy:maximumLogListAge:at:signatureVerifier:)``)
///    with the path's second certificate as the leaf's issuer, through the validation's
///    signature verifier and budget. Every SCT (where it came from, which log, valid or why
///    not) and every rule of the policy (held or not) is a finding.
/// 4. **The verdict.** Compliant: passed. Not compliant: in ``CTMode/require`` the path fails
///    (and the search tries the next one); in ``CTMode/report`` it passes with a noted finding
///    that carries the failure (``PathCheckFinding/reportedFailure``). A log list older than
///    the maximum age stops enforcement with a noted finding (Chrome's "CT Enforcement
///    Timeout"), whichever the mode.
public struct CertificateTransparencyCheck: PathCheck {
    /// ``CTMode/report`` or ``CTMode/require`` (``CTMode/off`` checks nothing).
    public let mode: CTMode
    /// Apple's or Chrome's policy.
    public let policy: CTPolicy
    /// The logs the app trusts.
    public let logList: CTLogList
    /// Seconds after the list's timestamp at which enforcement stops.
    public let maximumLogListAge: Int64
    /// The system's roots: only paths that end at one of them are held to CT.
    public let systemAnchors: TrustStore
    /// The `extension_data` of the TLS `signed_certificate_timestamp` extension, if the server
    /// sent one.
    public let tlsSCTList: [UInt8]?
    /// The DER OCSP response the server stapled, if any.
    public let ocspResponse: [UInt8]?

    /// Creates the check for one decision.
    /// - Parameters:
    ///   - mode: Report or require.
    ///   - policy: Apple's or Chrome's.
    ///   - logList: The logs the app trusts.
    ///   - maximumLogListAge: Seconds after which the list stops enforcement (default 70 days).
    ///   - systemAnchors: The system's roots (the trust's, not the host's own anchors).
    ///   - tlsSCTList: The TLS extension's SCT list, if sent.
    ///   - ocspResponse: The stapled OCSP response, if sent.
    public init(
        mode: CTMode, policy: CTPolicy, logList: CTLogList, maximumLogListAge: Int64 = CTLogList.defaultMaximumAge, systemAnchors: TrustStore,
        tlsSCTList: [UInt8]? = nil, ocspResponse: [UInt8]? = nil
    ) {
        self.mode = mode
        self.policy = policy
        self.logList = logList
        self.maximumLogListAge = maximumLogListAge
        self.systemAnchors = systemAnchors
        self.tlsSCTList = tlsSCTList
        self.ocspResponse = ocspResponse
    }

    /// `Certificate Transparency`.
    public var name: String { Self.name }
    static let name = "Certificate Transparency"

    /// Steps 1 to 4 of the type's documentation on `path`.
    public func check<Verification: SignatureVerifier>(_ path: CandidatePath, context: inout PathCheckContext<Verification>) -> PathCheckResult {
        guard mode != .off else { return .passed([]) }
        let leaf = path.leaf
        let anchorIndex = path.certificates.count - 1
        guard isSystemRoot(path.anchor) else {
            return .passed([
                PathCheckFinding(
                    check: name, .noted, certificateIndex: anchorIndex, certificate: path.anchor,
                    "exempt: the path ends at an anchor that is not a root of the system trust store (a private or user-added anchor, "
                        + "or a pinned certificate); CT applies only to chains that end at a publicly trusted root, as browsers apply it")
            ])
        }
        let issuer = path.certificates.count > 1 ? path.certificates[1] : nil
        var findings: [PathCheckFinding] = []
        var ocspSCTList: [UInt8]?
        if let ocspResponse {
            switch stapledSCTs(ocspResponse, leaf: leaf, issuer: issuer, context: &context) {
            case .budgetExhausted: return .budgetExhausted
            case .none: break
            case .counted(let list, let finding):
                ocspSCTList = list
                findings.append(finding)
            case .ignored(let finding): findings.append(finding)
            }
        }
        let evaluation = CertificateTransparency.evaluate(
            leaf: leaf, issuer: issuer, tlsSCTList: tlsSCTList, ocspSCTList: ocspSCTList, logList: logList, policy: policy,
            maximumLogListAge: maximumLogListAge, at: context.time, signatureVerifier: context.signatureVerifier)
        // The SCT signatures were checked through the validation's verifier: they are paid for
        // from its budget (at most 32 per evaluation; an SCT sent twice is checked once).
        for _ in 0..<Self.signatureChecks(in: evaluation) where !context.spendSignatureCheck() { return .budgetExhausted }
        return judge(evaluation, leaf: leaf, findings: findings)
    }

    /// The verdict and the findings: SCTs, rules, notes.
    func judge(_ evaluation: CTEvaluation, leaf: Certificate, findings before: [PathCheckFinding]) -> PathCheckResult {
        let enforcing = evaluation.verdict == .nonCompliant && mode == .require
        var findings = before
        for sct in evaluation.scts {
            findings.append(
                PathCheckFinding(
                    check: name, sct.status.isValid ? .passed : .noted, certificateIndex: 0, certificate: leaf,
                    sct.status.isValid ? "\(sct)" : "\(sct); it does not count"))
        }
        for rule in evaluation.rules {
            let outcome: PathCheckFinding.Outcome = rule.passed ? .passed : enforcing ? .failed : .noted
            let alternative = rule.rule.alternative.map { " [\($0.rawValue)]" } ?? ""
            findings.append(
                PathCheckFinding(
                    check: name, outcome, "rule \(rule.rule.rawValue)\(alternative), \(rule.rule.summary): \(rule.detail)\(rule.passed ? "" : " (not met)")"))
        }
        for note in evaluation.notes where !isStaleListNote(evaluation, note) {
            findings.append(PathCheckFinding(check: name, .noted, note))
        }
        let valid = evaluation.scts.filter(\.status.isValid).count
        let counted = evaluation.scts.isEmpty ? "no SCT presented" : "\(valid) of \(evaluation.scts.count) SCT\(evaluation.scts.count == 1 ? "" : "s") valid"
        let policyName = "the \(policy) policy (\(policy.rules.first?.source ?? "\(policy)"))"
        switch evaluation.verdict {
        case .compliant:
            let verdict = PathCheckFinding(check: name, .passed, certificateIndex: 0, certificate: leaf, "compliant with \(policyName); \(counted)")
            return .passed([verdict] + findings)
        case .notEnforced(let reason):
            let compliance = Self.isCompliant(evaluation) ? "compliant" : "not compliant"
            let verdict = PathCheckFinding(
                check: name, .noted, certificateIndex: 0, certificate: leaf,
                "not enforced: \(reason) (the logs' states may have changed since); for the record only, the SCTs are \(compliance) with \(policyName); \(counted)"
            )
            return .passed([verdict] + findings)
        case .nonCompliant:
            let unmet = evaluation.rules.filter { !$0.passed }.map { "\($0.rule.rawValue) (\($0.detail))" }
            let failure = ValidationFailure(
                .certificateTransparencyNotCompliant, certificateIndex: 0, subject: leaf.subject.rfc4514,
                "not compliant with the \(policy) policy: \(unmet.joined(separator: "; ")); \(counted)")
            guard enforcing else {
                let verdict = PathCheckFinding(
                    check: name, reporting: failure, certificateIndex: 0, certificate: leaf,
                    "not compliant with \(policyName) (report mode: accepted, and reported); \(counted)")
                return .passed([verdict] + findings)
            }
            let verdict = PathCheckFinding(check: name, .failed, certificateIndex: 0, certificate: leaf, "not compliant with \(policyName); \(counted)")
            return .failed(failure, [verdict] + findings)
        }
    }

    /// Whether the rules held as the policy combines them, for a list too old to enforce (the
    /// evaluation computed them all the same).
    static func isCompliant(_ evaluation: CTEvaluation) -> Bool {
        let held = Set(evaluation.rules.filter(\.passed).map(\.rule))
        switch evaluation.policy {
        case .apple:
            return held.contains(.appleTwoSCTsFromApprovedLogs) && held.contains(.appleRFC6962Log)
                && (held.contains(.appleDeliveredSCTs) || (held.contains(.appleEmbeddedFromCurrentLog) && held.contains(.appleEmbeddedCount)))
        case .chrome:
            return (held.contains(.chromeEmbeddedFromAdmissibleLog) && held.contains(.chromeEmbeddedCount) && held.contains(.chromeEmbeddedOperatorDiversity))
                || (held.contains(.chromeDeliveredSCTs) && held.contains(.chromeDeliveredOperatorDiversity))
        }
    }

    /// The stale-list note is said by the verdict finding instead.
    private func isStaleListNote(_ evaluation: CTEvaluation, _ note: String) -> Bool {
        guard case .notEnforced = evaluation.verdict else { return false }
        return note.hasPrefix("CT not enforced")
    }

    /// Whether `anchor` is a root of the system store: the same certificate, or one with a
    /// system root's subject and key.
    func isSystemRoot(_ anchor: Certificate) -> Bool {
        if systemAnchors.contains(anchor) { return true }
        let key = anchor.subjectPublicKeyInfo.derBytes
        return systemAnchors.candidates(issuedTo: anchor.subject).contains { systemAnchors.certificates[$0].subjectPublicKeyInfo.derBytes == key }
    }

    /// The number of distinct SCT signatures the evaluation checked.
    static func signatureChecks(in evaluation: CTEvaluation) -> Int {
        var checked = Set<[UInt8]>()
        for result in evaluation.scts {
            guard let sct = result.sct else { continue }
            switch result.status {
            case .valid, .badSignature, .futureTimestamp, .beforeLogAcceptance, .outsideTemporalInterval:
                checked.insert([result.source == .embedded ? 1 : 0] + sct.serialized)
            case .malformed, .unknownLog, .unusableLogKey, .unsupportedAlgorithm, .issuerUnavailable, .unencodableEntry, .checkLimitReached:
                continue
            }
        }
        return checked.count
    }

    /// What the staple contributes.
    enum Staple {
        /// It carries no SCT list (its revocation status is another check's concern).
        case none
        /// Verified for the leaf: its SCT list (TLS encoding) counts.
        case counted([UInt8], PathCheckFinding)
        /// It carries SCTs that do not count, and why.
        case ignored(PathCheckFinding)
        /// The validation's budget ran out.
        case budgetExhausted
    }

    /// RFC 6962 §3.3's OCSP delivery: the SCT list of the single response for the leaf, once
    /// ``OCSPResponseVerifier`` has attributed the response to the leaf's issuer.
    func stapledSCTs<Verification: SignatureVerifier>(
        _ staple: [UInt8], leaf: Certificate, issuer: Certificate?, context: inout PathCheckContext<Verification>
    ) -> Staple {
        let parsed: OCSPResponse
        do { parsed = try OCSPResponse(derEncoded: staple) } catch {
            return .ignored(PathCheckFinding(check: name, .noted, "the stapled OCSP response is malformed (\(error)); it adds no SCTs"))
        }
        // Only a response that carries SCTs is worth verifying here.
        guard let basic = parsed.basic, basic.responses.contains(where: { $0.signedCertificateTimestamps != nil }) else { return .none }
        guard let issuer else {
            return .ignored(
                PathCheckFinding(
                    check: name, .noted, "the stapled OCSP response's SCTs do not count: the leaf is itself the anchor, so no issuer can vouch for it"))
        }
        // The response's signature (and a delegated responder's certificate) are checked through
        // the validation's verifier and paid from its budget.
        guard context.spendSignatureCheck() else { return .budgetExhausted }
        let verifier = OCSPResponseVerifier(signatureVerifier: context.signatureVerifier, allowsSHA1Signatures: context.policy.allowsSHA1Signatures)
        let checked = verifier.check(parsed, for: leaf, issuedBy: issuer, at: context.time)
        if case .delegated = checked.evidence?.responder, !context.spendSignatureCheck() { return .budgetExhausted }
        let unusable: String?
        switch checked.status {
        case .unknown(.unhandledCriticalExtension(let oid)): unusable = "it has the unhandled critical extension \(oid)"
        case .unknown(let reason) where checked.evidence == nil: unusable = "\(reason)"
        default: unusable = nil
        }
        if let unusable {
            return .ignored(PathCheckFinding(check: name, .noted, "the stapled OCSP response's SCTs do not count: \(unusable)"))
        }
        guard let single = verifier.matchingResponse(in: basic, for: leaf, issuer: issuer)?.0, let value = single.signedCertificateTimestamps?.value else {
            return .none
        }
        let list: ArraySlice<UInt8>
        do { list = try DER.parse(value).primitive(.octetString, "SignedCertificateTimestampList") } catch {
            return .ignored(PathCheckFinding(check: name, .noted, "the stapled OCSP response's SCT list is not an OCTET STRING (\(error)); it adds no SCTs"))
        }
        let evidence = checked.evidence.map { "\($0)" } ?? "verified"
        return .counted(Array(list), PathCheckFinding(check: name, .passed, "stapled OCSP response for the leaf verified (\(evidence)): its SCTs count"))
    }
}
