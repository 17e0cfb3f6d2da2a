public import CertificateParsing
import TrustEvaluation

/// AFNetworking's `AFSecurityPolicy`: a pinning mode, two flags and a set of pinned
/// certificates, evaluated in AFNetworking's exact order of checks.
///
/// ```swift
/// var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: pins, semantics: .compat)
/// policy.allowInvalidCertificates = true        // a self-signed server whose certificate is pinned
/// let decision = policy.evaluate(trust, forDomain: "api.example.com")
/// ```
///
/// The order (AFSecurityPolicy.m:220-292 @ d9f589cc, AFNetworking 4.0.1):
/// 1. early rejection of `allowInvalidCertificates` + `validatesDomainName` without pins;
/// 2. the SSL policy for the domain, or the basic X.509 policy;
/// 3. mode `none`: `allowInvalidCertificates || valid`;
/// 4. pinning modes: unless `allowInvalidCertificates`, the chain must validate;
/// 5. certificate mode: the pinned certificates become the only anchors, the chain is evaluated
///    again, and a certificate of the evaluated chain must be a pinned one;
/// 6. public-key mode: some key along the chain must be a pinned certificate's key.
///
/// "The chain" is always the chain `SecTrust` built, never the certificates the server sent
/// (``ProvenChain``): the validated path, or, where compat public-key mode reads an
/// unvalidated trust, the leaf and the issuers whose signatures link it. A pinned certificate
/// that a man in the middle appends to its own chain therefore never matches.
///
/// ``semantics`` chooses between AFNetworking's behaviour and the fixed one; see
/// ``PolicySemantics`` for the list of quirks and fixes.
public struct SecurityPolicy: Sendable {
    /// What the chain is compared against (readonly, as `SSLPinningMode` is; set at creation).
    public let pinningMode: PinningMode
    /// Whether an invalid chain (self-signed, unknown CA, and in compat public-key mode also
    /// expired or for another host) may be accepted. Default `false`.
    public var allowInvalidCertificates: Bool
    /// Whether the certificate must be valid for the domain (the SSL server policy with the
    /// host; otherwise the basic X.509 policy). Default `true`, as since AFNetworking 2.5.3.
    public var validatesDomainName: Bool
    /// The pinned certificates (DER), without duplicates, in the order given (AFNetworking
    /// keeps an ordered set).
    public var pinnedCertificates: [Certificate] {
        didSet {
            pinnedCertificates = Self.unique(pinnedCertificates)
            pinned = Pinned(pinnedCertificates)
        }
    }
    /// AFNetworking's behaviour or the strict one. Default ``PolicySemantics/strict``, so a new
    /// policy fails closed; choose ``PolicySemantics/compat`` to reproduce AFNetworking exactly.
    public var semantics: PolicySemantics
    /// Strict semantics only: in a pinning mode with ``allowInvalidCertificates``, accept a
    /// chain whose only fault is that a certificate has expired, by evaluating it at the
    /// instant its earliest-expiring certificate expired. Default `false`: a pin never excuses
    /// expiry unless asked to (the fix for quirk 3 of ``PolicySemantics``).
    public var allowsExpiredPinnedCertificates: Bool
    /// What the pinned certificates are compared as, made when they are set rather than on
    /// every evaluation.
    private var pinned: Pinned

    private struct Pinned: Sendable {
        /// The pinned certificates as the only anchors of certificate mode.
        let anchors: TrustStore
        /// Their SubjectPublicKeyInfo encodings, for public-key mode.
        let keys: Set<[UInt8]>

        init(_ certificates: [Certificate]) {
            anchors = TrustStore(certificates, sources: ["pinned certificates"])
            keys = Set(certificates.map { Array($0.subjectPublicKeyInfo.derBytes) })
        }
    }

    /// Creates a policy (`+policyWithPinningMode:withPinnedCertificates:`).
    /// - Parameters:
    ///   - pinningMode: What to compare the chain against.
    ///   - pinnedCertificates: The pinned certificates.
    ///   - allowInvalidCertificates: Whether invalid chains may be accepted.
    ///   - validatesDomainName: Whether the host name is checked.
    ///   - semantics: AFNetworking's behaviour or the strict one.
    public init(
        pinningMode: PinningMode = .none,
        pinnedCertificates: [Certificate] = [],
        allowInvalidCertificates: Bool = false,
        validatesDomainName: Bool = true,
        semantics: PolicySemantics = .strict
    ) {
        self.pinningMode = pinningMode
        self.pinnedCertificates = Self.unique(pinnedCertificates)
        self.pinned = Pinned(Self.unique(pinnedCertificates))
        self.allowInvalidCertificates = allowInvalidCertificates
        self.validatesDomainName = validatesDomainName
        self.semantics = semantics
        self.allowsExpiredPinnedCertificates = false
    }

    /// `+defaultPolicy`: mode `none`, no pins, invalid certificates refused, domain validated.
    public static var `default`: SecurityPolicy { SecurityPolicy() }

    /// One line: semantics, mode and flags.
    public var summary: String {
        "\(semantics.rawValue): pinningMode=\(pinningMode.rawValue), allowInvalidCertificates=\(allowInvalidCertificates), "
            + "validatesDomainName=\(validatesDomainName), pinnedCertificates=\(pinnedCertificates.count)"
            + (allowsExpiredPinnedCertificates ? ", allowsExpiredPinnedCertificates=true" : "")
    }

    private static func unique(_ certificates: [Certificate]) -> [Certificate] {
        var seen = Set<[UInt8]>()
        return certificates.filter { seen.insert($0.derBytes).inserted }
    }

    /// `-evaluateServerTrust:forDomain:`.
    ///
    /// - Parameters:
    ///   - trust: The server's trust. It is not modified: the policy works on a copy.
    ///   - domain: The host to validate; `nil` means "don't check the host" in compat
    ///     semantics (as in AFNetworking) and "use the trust's host" in strict semantics.
    /// - Returns: The decision and its record.
    public func evaluate(_ trust: PeerTrust, forDomain domain: String?) -> TrustDecision {
        // AFNetworking mutates the caller's SecTrust (SecTrustSetPolicies, then
        // SecTrustSetAnchorCertificates); a copy gives the same checks without the side effect.
        var trust = trust
        let strict = semantics == .strict
        var recorder = DecisionRecorder(evaluator: "SecurityPolicy", policy: summary, mode: pinningMode.rawValue, trust: trust, host: domain)
        var domain = domain
        if strict && domain == nil {
            // Strict fix 4: a nil domain must not silently switch the host check off.
            domain = trust.host
            if validatesDomainName && domain == nil {
                recorder.step(.noHostToValidate)
                return recorder.reject(
                    TrustEvaluationError(
                        .noHostToValidate, host: nil, "validatesDomainName is set but neither the caller nor the trust names a host"))
            }
            recorder.step(.domainFromTrust(domain ?? "(none)"))
        }

        // Step 1 (AFSecurityPolicy.m:220-292, first statement): allowInvalid + validatesDomainName
        // need pins, checked before any evaluation, so even a valid server is refused.
        if domain != nil && allowInvalidCertificates && validatesDomainName && (pinningMode == .none || pinnedCertificates.isEmpty) {
            recorder.step(.earlyRejection)
            return recorder.reject(
                TrustEvaluationError(
                    .allowInvalidCertificatesRequiresPinning, host: domain,
                    "In order to validate a domain name for self signed certificates, you MUST use pinning."))
        }

        // Step 2: SecPolicyCreateSSL(true, domain) or SecPolicyCreateBasicX509(). Like
        // SecTrustSetPolicies it replaces the purpose and the name; the evaluation instant
        // (SecTrustSetVerifyDate's) and the caller's revocation lists are kept.
        if validatesDomainName {
            trust.setPolicy(.sslServer, host: domain)
            recorder.step(.validationPolicy(domain.map { .sslServer(host: $0) } ?? .sslServerNilDomain))
        } else if strict {
            // Strict fix 5: keep the TLS server profile (serverAuth EKU) without a name.
            trust.setPolicy(.sslServer, host: nil)
            recorder.step(.validationPolicy(.sslServerWithoutName))
        } else {
            trust.setPolicy(.basicX509, host: nil)
            recorder.step(.validationPolicy(.basicX509))
        }

        // Step 3: mode none returns allowInvalidCertificates || AFServerTrustIsValid(trust).
        if pinningMode == .none {
            if allowInvalidCertificates {
                recorder.step(.acceptedWithoutEvaluation)
                recorder.note("nothing was checked: this configuration trusts any certificate")
                return recorder.accept()
            }
            let result = trust.evaluate()
            recorder.evaluation(result, of: trust, .trustAnchors)
            if let failure = result.failure { return recorder.reject(.validation(failure, host: domain)) }
            return recorder.accept()
        }

        // Step 4: pinning modes need a valid chain unless allowInvalidCertificates. In
        // public-key mode the pins are compared with the chain this evaluation builds, so it
        // prefers a valid path they are on (a cross-signed root, an alternate intermediate).
        trust.prefer(pinRequirements(forHost: domain ?? "", at: trust.evaluationTime()))
        var validated: TrustResult?
        if !allowInvalidCertificates {
            let result = trust.evaluate()
            recorder.evaluation(result, of: trust, .trustAnchors)
            if let failure = result.failure { return recorder.reject(.validation(failure, host: domain)) }
            validated = result
        } else {
            recorder.step(.evaluationSkipped)
        }

        switch pinningMode {
        case .certificate:
            return evaluateCertificatePins(trust, domain: domain, recorder: &recorder)
        case .publicKey:
            return evaluatePublicKeyPins(trust, domain: domain, validated: validated, recorder: &recorder)
        case .none:
            return recorder.reject(TrustEvaluationError(.customEvaluationFailed, host: domain, "unreachable pinning mode"))
        }
    }

    /// Step 5: the pinned certificates as the only anchors, a second evaluation with the
    /// policy of step 2, then a byte match along the evaluated chain from the root down
    /// (AFNetworking 4: "obtain the chain after being validated, which *should* contain the
    /// pinned certificate in the last position (if it's the Root CA)"; PR #3159 lets the pins
    /// complete an incomplete chain).
    ///
    /// Compat: this evaluation holds certificates to RFC 5280 alone (``/TrustEvaluation/ValidationPolicy/Profile/rfc5280``),
    /// as `SecTrustEvaluateWithError` checks a chain that ends in anchors the app set with
    /// `SecTrustSetAnchorCertificates`: a critical extension must be one it understands, but
    /// the CA/Browser Forum's issuance rules are not applied. That is why AFNetworking accepts a
    /// pinned self-signed certificate with a critical extendedKeyUsage, or a critical
    /// subjectAltName beside a non-empty subject, which the Web PKI profile refuses (CA/B BR
    /// 7.1.2.7.10 and 7.1.2.7.12). The host name, the serverAuth purpose, validity and the
    /// signatures are checked as ever; strict semantics keep the Web PKI profile.
    private func evaluateCertificatePins(_ trust: PeerTrust, domain: String?, recorder: inout DecisionRecorder) -> TrustDecision {
        var trust = trust
        trust.setAnchors(pinned.anchors, only: true)
        if semantics == .compat { trust.policy.profile = .rfc5280 }
        recorder.step(.anchors(.pinnedCertificates(count: pinnedCertificates.count)))
        var result = trust.evaluate()
        recorder.evaluation(result, of: trust, .pinnedCertificates)
        if let failure = result.failure, let retried = expiredRetry(trust, failure: failure, recorder: &recorder) { result = retried }
        if let failure = result.failure {
            recorder.pinEvidence(chain: trust.provenChain(after: nil).certificates, configured: pinnedCertificates.map(\.spkiPinText))
            return recorder.reject(
                .validation(
                    failure, host: domain, otherwise: failure.kind == .untrustedRoot ? .certificatePinningFailed : .chainValidationFailed,
                    context: "against the pinned certificates: "))
        }
        // The pinned certificates were the only anchors, so the path ends at one of them; the
        // match below is on that validated path (normally its anchor).
        let proven = trust.provenChain(after: result)
        recorder.pinCandidates(proven)
        let chain = proven.certificates
        for (index, certificate) in chain.enumerated().reversed() where pinned.anchors.contains(certificate) {
            recorder.matched(.certificate(certificate, position: index))
            return recorder.accept()
        }
        recorder.pinEvidence(chain: chain, configured: pinnedCertificates.map(\.spkiPinText))
        return recorder.reject(TrustEvaluationError(.certificatePinningFailed, host: domain, "no certificate of the evaluated chain is pinned"))
    }

    /// Step 6: count the chain keys that equal a pinned certificate's key.
    private func evaluatePublicKeyPins(
        _ trust: PeerTrust, domain: String?, validated: TrustResult?, recorder: inout DecisionRecorder
    ) -> TrustDecision {
        let pinnedKeys = pinned.keys
        let proven: ProvenChain
        if let validated {
            proven = trust.provenChain(after: validated)
        } else if semantics == .compat {
            // AFPublicKeyTrustChainForServerTrust enumerates the trust without evaluating it
            // (its own evaluation was skipped): hostname, expiry and validity go unchecked, but
            // the chain it enumerates is the one SecTrust links by signatures, not the list the
            // server sent (ProvenChain.signatureChain).
            proven = trust.provenChain(after: nil)
            recorder.note("compat quirk: public-key mode with allowInvalidCertificates checks neither host name nor expiry")
        } else {
            // Strict fixes 1-3: anchor on the pinned keys and validate everything else. A served
            // certificate carrying a pinned key may anchor the path (a certificate re-issued on
            // the same key) only when that key vouches for what it says (Self.isVouched).
            var anchored = trust
            let servedWithPinnedKey = trust.certificates.enumerated().filter { index, certificate in
                pinnedKeys.contains(Array(certificate.subjectPublicKeyInfo.derBytes)) && Self.isVouched(certificate, isLeaf: index == 0)
            }.map(\.element)
            anchored.setAnchors(servedWithPinnedKey.isEmpty ? pinned.anchors : TrustStore(pinnedCertificates + servedWithPinnedKey), only: true)
            recorder.step(.anchors(.pinnedKeys))
            var result = anchored.evaluate()
            recorder.evaluation(result, of: anchored, .pinnedKeys)
            if let failure = result.failure, let retried = expiredRetry(anchored, failure: failure, recorder: &recorder) { result = retried }
            if let failure = result.failure {
                recorder.pinEvidence(chain: trust.provenChain(after: nil).certificates, configured: pinnedCertificates.map(\.spkiPinText))
                return recorder.reject(
                    .validation(
                        failure, host: domain, otherwise: failure.kind == .untrustedRoot ? .publicKeyPinningFailed : .chainValidationFailed,
                        context: "against the pinned keys: "))
            }
            proven = anchored.provenChain(after: result)
        }
        recorder.pinCandidates(proven)
        let chain = proven.certificates
        var count = 0
        var first: (Int, Certificate)?
        for (index, certificate) in chain.enumerated() where pinnedKeys.contains(Array(certificate.subjectPublicKeyInfo.derBytes)) {
            count += 1
            if first == nil { first = (index, certificate) }
        }
        if let (index, certificate) = first {
            recorder.matched(.publicKey(certificate, position: index, matches: count))
            return recorder.accept()
        }
        recorder.pinEvidence(chain: chain, configured: pinnedCertificates.map(\.spkiPinText))
        return recorder.reject(TrustEvaluationError(.publicKeyPinningFailed, host: domain, "no key along the chain is a pinned key"))
    }

    /// Whether a served certificate carrying a pinned key may stand in for the pinned
    /// certificate as an anchor of strict public-key mode: its dates, names and constraints
    /// become the anchor's (RFC 5280 §6.1.1 (d)), so the pinned key must vouch for them. It
    /// does for the leaf, whose key the handshake proves, and for a certificate self-signed by
    /// the key (a CA or self-signed server re-issued on it). Any other copy of a pinned CA's
    /// key, which anyone can write under other dates and without the pinned certificate's
    /// name or path-length constraints, does not; the pinned certificate anchors instead.
    private static func isVouched(_ certificate: Certificate, isLeaf: Bool) -> Bool {
        if isLeaf { return true }
        guard certificate.isSelfIssued else { return false }
        let verifier = OpenSSLSignatureVerifier()
        guard let key = try? verifier.makeKey(certificate.subjectPublicKeyInfo) else { return false }
        return verifier.check(certificate, signedBy: key).isValid
    }

    /// Strict only, when asked: re-evaluates an expired pinned chain at the instant its first
    /// certificate expired.
    private func expiredRetry(_ trust: PeerTrust, failure: ValidationFailure, recorder: inout DecisionRecorder) -> TrustResult? {
        guard semantics == .strict, allowsExpiredPinnedCertificates, allowInvalidCertificates, failure.kind == .expired else { return nil }
        let now = trust.evaluationTime()
        guard let instant = trust.certificates.map(\.notAfter.secondsSince1970).filter({ $0 < now }).min() else { return nil }
        var retry = trust
        retry.clock = .fixed(instant)
        let result = retry.evaluate()
        recorder.evaluation(result, of: retry, .expiredRetry(at: instant))
        if result.isTrusted { recorder.note("accepted although expired, because allowsExpiredPinnedCertificates is set") }
        return result
    }
}

extension SecurityPolicy: PinRequiring {
    /// Public-key mode compares the pinned certificates' keys with the chain; certificate mode
    /// makes the pinned certificates the only anchors, so every path it validates ends at one.
    func pinRequirements(forHost host: String, at time: Int64) -> [PinRequirement] {
        pinningMode == .publicKey && !pinned.keys.isEmpty ? [PinRequirement(kind: .keys(pinned.keys))] : []
    }
}
