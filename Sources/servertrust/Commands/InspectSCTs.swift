import CertificateParsing
import TrustEvaluation

/// The embedded SCTs of `servertrust inspect` (RFC 6962 §3.3): for each, the log ID as log
/// lists write it and the SCT's time; with `--ct-log-list`, also the log's name and whether the
/// SCT verifies (its signature over the precertificate entry, which needs the issuer's key:
/// the issuer is looked for among the other certificates shown, the served chain or the files
/// given), and what Apple's and Chrome's policies make of the embedded SCTs.
struct InspectSCTs {
    /// The logs to check against.
    let logList: CTLogList
    /// The certificates an SCT's certificate may have been issued by.
    let certificates: [Certificate]
    /// The time of check.
    let now: Int64

    /// Reads `--ct-log-list`, if given.
    static func make(_ options: Options, certificates: [Certificate], now: Int64) throws -> InspectSCTs? {
        guard let path = options.value("--ct-log-list") else { return nil }
        return InspectSCTs(logList: try TrustOptions.logList(path, option: "--ct-log-list"), certificates: certificates, now: now)
    }

    /// One entry of the list as `inspect` shows it.
    struct Line {
        let logID: [UInt8]?
        let time: ASN1Time?
        let log: CTLog?
        let status: CTSCTStatus?
        let malformed: String?

        /// `log ID[ (name, operator)] at TIME[: verifies | : does not verify: why]`.
        var text: String {
            if let malformed { return "malformed (\(malformed))" }
            guard let logID, let time else { return "malformed" }
            var text = "log \(Base64.encode(logID))"
            if let log { text += " (\(log.name), \(log.operatorName))" }
            text += " at \(time.rfc3339)"
            guard let status else { return text }
            switch status {
            case .valid: return text + ": verifies"
            case .unknownLog: return text + ": not verified: the log is not in the log list"
            case .issuerUnavailable: return text + ": not verified: the issuer's certificate is not among the certificates shown"
            default: return text + ": does not verify: \(status)"
            }
        }
    }

    /// Each embedded SCT of `c`, without a log list when `context` is `nil`; `nil` for a
    /// certificate without the extension, or a malformed list's one line.
    static func lines(_ c: Certificate, context: InspectSCTs?) -> Result<[Line], CTEncodingError>? {
        guard let bytes = c.extensions.signedCertificateTimestamps else { return nil }
        let list: SignedCertificateTimestampList
        do { list = try SignedCertificateTimestampList(tlsEncoded: bytes) } catch { return .failure(error) }
        let results = context?.evaluate(c, policy: .apple).scts.filter { $0.source == .embedded }
        return .success(
            list.entries.enumerated().map { index, entry in
                switch entry {
                case .parsed(let sct):
                    let result = results.flatMap { index < $0.count ? $0[index] : nil }
                    return Line(logID: sct.logID, time: sct.time, log: result?.log, status: result?.status, malformed: nil)
                case .malformed(_, let error):
                    return Line(logID: nil, time: nil, log: nil, status: nil, malformed: "\(error)")
                }
            })
    }

    /// `compliant with apple; not compliant with chrome (…)`, for the embedded SCTs, when the
    /// issuer is known. The list's age does not change what is shown; a list a client would no
    /// longer enforce (older than 70 days) is said so.
    func verdicts(_ c: Certificate) -> String? {
        guard c.extensions.signedCertificateTimestamps != nil, issuer(of: c) != nil else { return nil }
        let parts = CTPolicy.allCases.map { policy -> String in
            let evaluation = evaluate(c, policy: policy)
            // Offline only the embedded SCTs are known: the TLS/OCSP alternative's rules are not said.
            let unmet = evaluation.rules.filter { !$0.passed && $0.rule.alternative != .delivered }.map(\.rule.rawValue)
            return evaluation.verdict == .compliant ? "compliant with \(policy)" : "not compliant with \(policy) (\(unmet.joined(separator: ", ")))"
        }
        let stale = logList.age(at: now) >= CTLogList.defaultMaximumAge ? "; the log list is older than 70 days, so clients would not enforce it" : ""
        return parts.joined(separator: "; ") + " (embedded SCTs only)" + stale
    }

    func evaluate(_ c: Certificate, policy: CTPolicy) -> CTEvaluation {
        CertificateTransparency.evaluate(leaf: c, issuer: issuer(of: c), logList: logList, policy: policy, maximumLogListAge: .max, at: now)
    }

    /// The certificate among ``certificates`` that signed `c`: its subject is `c`'s issuer and
    /// its key verifies `c`'s signature.
    func issuer(of c: Certificate) -> Certificate? {
        let verifier = OpenSSLSignatureVerifier()
        return certificates.first { candidate in
            guard candidate != c, candidate.subject.matches(c.issuer), let key = try? verifier.makeKey(candidate.subjectPublicKeyInfo) else { return false }
            return verifier.check(c, signedBy: key).isValid
        }
    }
}

extension InspectCommand {
    /// The SCT lines of the human form.
    static func sctLines(_ c: Certificate, context: InspectSCTs?) -> [(String, String)] {
        var lines: [(String, String)]
        switch InspectSCTs.lines(c, context: context) {
        case nil: return []
        case .failure(let error)?: lines = [("SCT", "malformed SCT list (\(error))")]
        case .success(let entries)?: lines = entries.map { ("SCT", $0.text) }
        }
        if let verdicts = context?.verdicts(c) { lines.append(("CT", verdicts)) }
        return lines
    }

    /// The `scts` member of the JSON form, when the certificate has the extension.
    static func sctJSON(_ c: Certificate, context: InspectSCTs?) -> JSON? {
        switch InspectSCTs.lines(c, context: context) {
        case nil: return nil
        case .failure(let error)?: return .object([("malformed", .string("\(error)"))])
        case .success(let entries)?:
            return .array(
                entries.map { line in
                    var pairs: [(String, JSON)] = []
                    if let malformed = line.malformed { return .object([("malformed", .string(malformed))]) }
                    pairs.append(("logID", line.logID.map { .string(Base64.encode($0)) } ?? .null))
                    pairs.append(("time", line.time.map { .string($0.rfc3339) } ?? .null))
                    if context != nil {
                        pairs.append(("log", line.log.map { .string($0.name) } ?? .null))
                        pairs.append(("verifies", .bool(line.status == .valid)))
                        pairs.append(("status", line.status.map { .string("\($0)") } ?? .null))
                    }
                    return .object(pairs)
                })
        }
    }
}
