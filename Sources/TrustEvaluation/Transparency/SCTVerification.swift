import CertificateParsing

/// Checks SCTs for one certificate (RFC 6962 §3.2, §5.2): the log is listed and its key fit
/// for CT, the SCT is signed with SHA-256 and that key's algorithm over the entry it should
/// cover, and its times make sense. Every signature goes through the ``SignatureVerifier``
/// seam, so whatever the seam adds (a memo of verified signatures) applies to SCTs too.
///
/// The entries are built once per evaluation and log keys once per log.
struct SCTVerification<Verifier: SignatureVerifier> {
    let verifier: Verifier
    let logList: CTLogList
    let leaf: Certificate
    let issuer: Certificate?
    /// The time of check, seconds since 1970.
    let time: Int64

    /// At most this many SCT signatures are checked per certificate. A certificate carries two
    /// to five SCTs; a server that sends hundreds (a 64 KiB list per delivery holds over a
    /// thousand) only makes the client work, so the rest are reported unchecked, and never count.
    static var maximumSignatureChecks: Int { 32 }

    private var keys: [[UInt8]: KeyOutcome] = [:]
    private var signatureChecks = 0
    /// Statuses already decided, by entry type and SCT bytes: an SCT sent twice is checked once.
    private var decided: [CTLogEntry.EntryType: [[UInt8]: CTSCTStatus]] = [:]
    private var x509Entry: Result<CTLogEntry, CTEncodingError>?
    private var precertificateEntry: Result<CTLogEntry, CTEncodingError>??

    private enum KeyOutcome {
        case key(Verifier.Key)
        case unusable(String)
    }

    init(verifier: Verifier, logList: CTLogList, leaf: Certificate, issuer: Certificate?, time: Int64) {
        self.verifier = verifier
        self.logList = logList
        self.leaf = leaf
        self.issuer = issuer
        self.time = time
    }

    /// The latest SCT timestamp (milliseconds) that is not in the future. The clock reads whole
    /// seconds, so the whole current second is allowed: an SCT a server minted a moment ago may
    /// carry milliseconds past the clock's reading.
    var latestAcceptableTimestamp: UInt64 {
        guard time >= 0 else { return 0 }
        let (milliseconds, overflow) = UInt64(time).multipliedReportingOverflow(by: 1000)
        return overflow ? .max : milliseconds.addingReportingOverflow(999).partialValue
    }

    /// The SCT's log (when listed) and status.
    mutating func check(_ sct: SignedCertificateTimestamp, from source: CTSCTResult.Source) -> CTSCTResult {
        guard let log = logList.log(id: sct.logID) else {
            return CTSCTResult(source: source, sct: sct, log: nil, status: .unknownLog)
        }
        let type: CTLogEntry.EntryType = source == .embedded ? .precertificate : .x509
        if let known = decided[type]?[sct.serialized] {
            return CTSCTResult(source: source, sct: sct, log: log, status: known)
        }
        let status = status(of: sct, from: source, log: log)
        decided[type, default: [:]][sct.serialized] = status
        return CTSCTResult(source: source, sct: sct, log: log, status: status)
    }

    private mutating func status(of sct: SignedCertificateTimestamp, from source: CTSCTResult.Source, log: CTLog) -> CTSCTStatus {
        let entry: CTLogEntry
        switch self.entry(for: source) {
        case nil: return .issuerUnavailable
        case .failure(let error)?: return .unencodableEntry(error)
        case .success(let built)?: entry = built
        }
        let key: Verifier.Key
        switch logKey(log) {
        case .unusable(let why): return .unusableLogKey(why)
        case .key(let built): key = built
        }
        guard let algorithm = Self.algorithm(of: sct, keyedBy: log.publicKeyInfo) else {
            return .unsupportedAlgorithm(hash: sct.hashAlgorithm, signature: sct.signatureAlgorithm)
        }
        guard signatureChecks < Self.maximumSignatureChecks else { return .checkLimitReached(Self.maximumSignatureChecks) }
        signatureChecks += 1
        let signed = sct.signedData(for: entry)
        if case .invalid(let error) = verifier.check(signature: sct.signature[...], over: signed[...], algorithm: algorithm, key: key) {
            return .badSignature(error)
        }
        // Not in the future (Chromium's verifier: SCT_STATUS_INVALID_TIMESTAMP; OpenSSL's
        // SCT_validate: SCT_R_SCT_FUTURE_TIMESTAMP).
        guard sct.timestamp <= latestAcceptableTimestamp else { return .futureTimestamp }
        // Not before the log was accepted: the list records that instant only for a log still
        // Qualified (a Usable or later log's state time is when it moved on, not when it came in).
        if let state = log.state, state.kind == .qualified, sct.timestamp.isBefore(state.since) {
            return .beforeLogAcceptance(state.since)
        }
        // Within the log's shard: the log accepts only certificates expiring in its temporal
        // interval (v3 schema `temporal_interval`; Apple: "temporal intervals are enforced
        // locally by clients").
        if let interval = log.temporalInterval, !interval.contains(leaf.notAfter) {
            return .outsideTemporalInterval(interval)
        }
        return .valid
    }

    /// The entry an SCT from `source` covers: the precertificate for embedded SCTs (`nil`
    /// without an issuer), the certificate otherwise.
    private mutating func entry(for source: CTSCTResult.Source) -> Result<CTLogEntry, CTEncodingError>? {
        switch source {
        case .embedded:
            if let built = precertificateEntry { return built }
            let built = issuer.map { issuer in Result { () throws(CTEncodingError) in try CTLogEntry.precertificate(leaf, issuer: issuer) } }
            precertificateEntry = .some(built)
            return built
        case .tlsExtension, .ocspResponse:
            if let built = x509Entry { return built }
            let built = Result { () throws(CTEncodingError) in try CTLogEntry.x509(leaf) }
            x509Entry = built
            return built
        }
    }

    private mutating func logKey(_ log: CTLog) -> KeyOutcome {
        if let known = keys[log.logID] { return known }
        let outcome: KeyOutcome
        if let problem = Self.keyProblem(log.publicKeyInfo) {
            outcome = .unusable(problem)
        } else {
            // Made once per list and shared by every evaluation with it.
            switch logList.verificationKey(for: log, verifier: verifier) {
            case .success(let key): outcome = .key(key)
            case .failure(let error): outcome = .unusable(error.description)
            }
        }
        keys[log.logID] = outcome
        return outcome
    }

    /// RFC 6962 §2.1.4: logs sign with "elliptic curve signatures using the NIST P-256 curve"
    /// or "RSA signatures (RSASSA-PKCS1-V1_5 with SHA-256) using a key of at least 2048 bits".
    static func keyProblem(_ info: SubjectPublicKeyInfo) -> String? {
        switch info.key {
        case .ec(let curve, _): return curve == .p256 ? nil : "an EC \(curve.rawValue) key; RFC 6962 logs use P-256"
        case .rsa: return info.key.bitSize >= 2048 ? nil : "an RSA-\(info.key.bitSize) key; RFC 6962 requires at least 2048 bits"
        default: return "a \(info.key.algorithmName) key; RFC 6962 logs use ECDSA P-256 or RSA"
        }
    }

    /// The signature algorithm an SCT claims, when it is one RFC 6962 §2.1.4 allows with the
    /// log's key: SHA-256 with ECDSA for an EC key, with RSASSA-PKCS1-v1_5 for an RSA key.
    static func algorithm(of sct: SignedCertificateTimestamp, keyedBy info: SubjectPublicKeyInfo) -> SignatureAlgorithm? {
        guard sct.hashAlgorithm == .sha256 else { return nil }
        switch (sct.signatureAlgorithm, info.key) {
        case (.ecdsa, .ec): return .ecdsa(.sha256)
        case (.rsa, .rsa): return .rsaPKCS1(.sha256)
        default: return nil
        }
    }
}
