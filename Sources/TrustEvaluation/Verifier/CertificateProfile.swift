import CertificateParsing

/// The per-certificate rules of path validation: RFC 5280 §4 and §6.1, and, under the Web PKI
/// profile, the CA/Browser Forum Baseline Requirements, written as one table with one entry per
/// section (after pyca/cryptography's `ExtensionPolicy`).
///
/// Every rule receives the certificate's ``Context``: its role in the path (end entity,
/// intermediate, trust anchor), how many non-self-issued intermediates lie below it, and whether
/// it is itself in the trust store. So a rule that depends on the position (key identifiers,
/// basicConstraints and pathLen, keyUsage) is written once, for every position, in its
/// section's entry, and the path builder only supplies the context.
///
/// Two kinds of rule:
/// - field rules, for the TBSCertificate fields and the key (§4.1.2, CA/B §6.1.5, §7.1);
/// - extension rules: whether the extension must, may or must not be present and with which
///   criticality, per role, and a check that runs whether or not it is present. One pass over
///   the extensions runs them; an unknown critical extension fails (RFC 5280 §4.2: "A
///   certificate-using system MUST reject the certificate if it encounters a critical extension
///   it does not recognize"; §6.1.4 (o), §6.1.5 (f)).
struct CertificateProfile: Sendable {
    typealias Profile = ValidationPolicy.Profile

    /// Where a certificate stands in the path being validated.
    struct Context {
        enum Role {
            /// Certificate n: the leaf.
            case endEntity
            /// A CA certificate between the leaf and the trust anchor.
            case intermediate
            /// The certificate that ends the path (from the trust store).
            case trustAnchor
        }

        let role: Role
        /// For a CA: the number of non-self-issued intermediates below it (what its
        /// pathLenConstraint limits, RFC 5280 §4.2.1.9, §6.1.4 (l)–(m)); 0 for the leaf.
        let depth: Int
        /// The certificate is in the trust store: a trust anchor, or a leaf trusted directly
        /// (a pinned self-signed certificate). It is trusted for itself, not for how it was
        /// issued.
        let isAnchor: Bool
        /// The validation instant (seconds since 1970).
        let time: Int64

        var isCertificateAuthority: Bool { role != .endEntity }
    }

    enum Presence {
        case required
        case optional
        case forbidden
    }

    enum Criticality {
        case critical
        case nonCritical
        case either

        func permits(_ critical: Bool) -> Bool {
            switch self {
            case .critical: return critical
            case .nonCritical: return !critical
            case .either: return true
            }
        }
    }

    /// A value that differs between end entities and CAs (intermediates and trust anchors).
    struct ByRole<Value: Sendable>: Sendable {
        let endEntity: Value
        let certificateAuthority: Value

        init(endEntity: Value, ca: Value) {
            self.endEntity = endEntity
            self.certificateAuthority = ca
        }

        init(_ both: Value) {
            self.init(endEntity: both, ca: both)
        }

        subscript(_ context: Context) -> Value { context.isCertificateAuthority ? certificateAuthority : endEntity }
    }

    typealias Check = @Sendable (Certificate, Extension?, Context) -> ValidationFailure?

    struct Rule: Sendable {
        let presence: ByRole<Presence>
        let criticality: ByRole<Criticality>
        /// Runs whether or not the extension is present (for rules about absence too).
        let check: Check?
    }

    /// A rule on the certificate's fields (no extension involved).
    typealias FieldRule = @Sendable (Certificate, Context) -> ValidationFailure?

    let fieldRules: [FieldRule]
    /// The rules' OIDs in a fixed order, so "seen" can be a bit mask; kept apart from the rules
    /// so the lookup compares OIDs without copying (and retaining) each rule's closure.
    let oids: [ASN1ObjectIdentifier]
    /// The rules, index for index with ``oids``.
    let rules: [Rule]

    init(fields: [FieldRule], extensions: [ASN1ObjectIdentifier: Rule]) {
        let sorted = extensions.sorted { $0.key.dotted < $1.key.dotted }
        precondition(sorted.count <= 64, "seen is a 64-bit mask")
        self.fieldRules = fields
        self.oids = sorted.map(\.key)
        self.rules = sorted.map(\.value)
    }

    /// The first rule `certificate` breaks in `context`, if any.
    func permits(_ certificate: Certificate, _ context: Context) -> ValidationFailure? {
        for rule in fieldRules {
            if let failure = rule(certificate, context) { return failure }
        }
        var seen: UInt64 = 0
        for ext in certificate.extensions.all {
            guard let index = oids.firstIndex(of: ext.oid) else {
                if ext.critical {
                    return ValidationFailure(.unhandledCriticalExtension, "unhandled critical extension \(ext.oid)")
                }
                continue
            }
            let rule = rules[index]
            seen |= 1 << UInt64(index)
            if rule.presence[context] == .forbidden {
                return ValidationFailure(.extensionProfileViolation, "extension \(CertificateProfile.name(ext.oid)) is not allowed here")
            }
            if !rule.criticality[context].permits(ext.critical) {
                // RFC 5280 §4.2.1.9: a CA's basicConstraints MUST be critical; a non-critical
                // one does not make the certificate a CA.
                if ext.oid == OID.basicConstraints && !ext.critical {
                    return ValidationFailure(.notCertificateAuthority, "basicConstraints is not critical, so the issuer is not a CA (RFC 5280 4.2.1.9)")
                }
                return ValidationFailure(
                    .extensionProfileViolation,
                    "extension \(CertificateProfile.name(ext.oid)) must \(ext.critical ? "not " : "")be critical")
            }
            if let failure = rule.check?(certificate, ext, context) { return failure }
        }
        for (index, rule) in rules.enumerated() where seen & (1 << UInt64(index)) == 0 {
            if rule.presence[context] == .required {
                return ValidationFailure(.extensionProfileViolation, "required extension \(CertificateProfile.name(oids[index])) is missing")
            }
            if let failure = rule.check?(certificate, nil, context) { return failure }
        }
        return nil
    }

    static func name(_ oid: ASN1ObjectIdentifier) -> String {
        switch oid {
        case OID.basicConstraints: return "basicConstraints"
        case OID.keyUsage: return "keyUsage"
        case OID.extendedKeyUsage: return "extendedKeyUsage"
        case OID.subjectAltName: return "subjectAltName"
        case OID.nameConstraints: return "nameConstraints"
        case OID.authorityKeyIdentifier: return "authorityKeyIdentifier"
        case OID.subjectKeyIdentifier: return "subjectKeyIdentifier"
        case OID.authorityInfoAccess: return "authorityInfoAccess"
        case OID.policyConstraints: return "policyConstraints"
        case OID.certificatePolicies: return "certificatePolicies"
        case OID.policyMappings: return "policyMappings"
        case OID.inhibitAnyPolicy: return "inhibitAnyPolicy"
        case OID.crlDistributionPoints: return "cRLDistributionPoints"
        case OID.freshestCRL: return "freshestCRL"
        default: return oid.dotted
        }
    }

    // MARK: - The rules

    /// The rules of `policy`'s profile, section by section.
    init(_ policy: ValidationPolicy) {
        let webPKI = policy.profile == .webPKI
        // The subscriber-certificate rules of the CA/B BR (a SAN and an AKI in every leaf)
        // belong to TLS; a basic X.509 policy has no name to check.
        let subscriberRules = webPKI && policy.kind != .basicX509
        let requiredEKUs = policy.effectiveExtendedKeyUsages
        let requiredKeyUsages = policy.requiredKeyUsages
        let minimumRSABits = policy.minimumRSAKeyBits
        let checksCommonName = policy.kind == .sslServer
        let algorithms = AlgorithmRule(allowsSHA1: policy.allowsSHA1Signatures)

        let fields: [FieldRule] = [
            // CA/B BR §7.1.1: certificates MUST be X.509 v3. RFC 5280 §6.1.4 (k): a v1 or v2
            // certificate cannot show it is a CA, so it may only end the path or be the leaf.
            { certificate, context in
                guard certificate.version != .v3 else { return nil }
                if webPKI || context.role == .intermediate {
                    return ValidationFailure(.invalidCertificate, "certificate is \(certificate.version), not v3 (CA/B BR 7.1.1, RFC 5280 6.1.4 (k))")
                }
                return nil
            },
            // RFC 5280 §4.1.2.2: positive, at most 20 octets. NOTE: 21 octets are tolerated
            // because CAs that draw 20 random bytes sometimes need a sign byte (as pyca
            // tolerates them). A negative serial is a CA error that "certificate users SHOULD
            // be prepared to gracefully handle" (§4.1.2.2): refused under the Web PKI only.
            { certificate, _ in
                let serial = certificate.serialNumber
                if webPKI && serial.isNegative { return ValidationFailure(.invalidCertificate, "serial number is negative (RFC 5280 4.1.2.2)") }
                if serial.bytes.count > 21 {
                    return ValidationFailure(.invalidCertificate, "serial number is \(serial.bytes.count) octets (RFC 5280 4.1.2.2 allows 20)")
                }
                return nil
            },
            // RFC 5280 §4.1.2.4: the issuer MUST be a non-empty name.
            { certificate, _ in
                certificate.issuer.isEmpty ? ValidationFailure(.invalidCertificate, "issuer name is empty (RFC 5280 4.1.2.4)") : nil
            },
            // RFC 5280 §4.1.2.5: dates through 2049 as UTCTime, from 2050 as GeneralizedTime.
            // A rule for issuing CAs; §6.1.3 (a)(2) compares the instants whatever the encoding.
            { certificate, _ in
                guard webPKI else { return nil }
                for (name, t) in [("notBefore", certificate.notBefore), ("notAfter", certificate.notAfter)]
                where (1950...2049).contains(t.year) && t.encoding == .generalizedTime {
                    return ValidationFailure(.invalidCertificate, "\(name) in \(t.year) must be UTCTime (RFC 5280 4.1.2.5)")
                }
                return nil
            },
            // RFC 5280 §6.1.3 (a)(2): the validation time lies within the validity period (both
            // ends inclusive), for every certificate including the trust anchor.
            { certificate, context in
                if context.time < certificate.notBefore.secondsSince1970 {
                    return ValidationFailure(.notYetValid, "not valid before \(certificate.notBefore.rfc3339)")
                }
                if context.time > certificate.notAfter.secondsSince1970 {
                    return ValidationFailure(.expired, "expired at \(certificate.notAfter.rfc3339)")
                }
                return nil
            },
            // CA/B BR §6.1.5, §7.1.3.1: RSA of at least the policy's size with NULL parameters
            // (also RFC 3279 §2.3.1); EC on P-256/384/521 (the parser accepts no other curve);
            // Ed25519/Ed448 (RFC 8410). Any other key type cannot be verified here.
            { certificate, _ in
                let spki = certificate.subjectPublicKeyInfo
                switch spki.key {
                case .rsa:
                    let bits = spki.key.bitSize
                    if bits < minimumRSABits { return ValidationFailure(.weakKey, "RSA key of \(bits) bits is below \(minimumRSABits)") }
                    if !spki.algorithm.hasNullParameters {
                        return ValidationFailure(.weakKey, "RSA key algorithm parameters must be NULL (CA/B BR 7.1.3.1.1)")
                    }
                    return nil
                case .ec, .ed25519, .ed448: return nil
                case .unsupported(let algorithm, _):
                    return ValidationFailure(.weakKey, "public key algorithm \(algorithm.algorithm) is not supported")
                }
            },
            // CA/B BR §7.1.3.2: the signature on every certificate that is not an anchor must use
            // an allowed algorithm, whoever issued it (so the failure names this certificate).
            { certificate, context in
                guard !context.isAnchor, !algorithms.permits(certificate.signatureAlgorithm) else { return nil }
                return ValidationFailure(.algorithmNotAllowed, "signature algorithm \(certificate.signatureAlgorithm) is not allowed")
            },
            // CA/B BR §7.1.4.3: a TLS server leaf's commonName encoding (see CommonNameRules for
            // the x509-limbo conflict that limits this to the encoding).
            { certificate, context in
                guard checksCommonName, context.role == .endEntity, !context.isAnchor else { return nil }
                return CommonNameRules.violation(in: certificate.subject)
            },
        ]

        var rules: [ASN1ObjectIdentifier: Rule] = [:]

        // RFC 5280 §4.2.1.1 authorityKeyIdentifier: MUST be non-critical.
        rules[OID.authorityKeyIdentifier] = Rule(presence: ByRole(.optional), criticality: ByRole(.nonCritical)) { certificate, ext, context in
            let aki = certificate.extensions.authorityKeyIdentifier
            switch context.role {
            case .endEntity:
                // CA/B BR §7.1.2.7.x: a subscriber certificate's AKI is required (it is absent
                // only from self-signed certificates). RFC 5280 §6 does not check it.
                if subscriberRules && ext == nil && !certificate.isSelfIssued {
                    return ValidationFailure(.extensionProfileViolation, "end-entity certificate has no authorityKeyIdentifier (RFC 5280 4.2.1.1)")
                }
            case .intermediate:
                // §4.2.1.1: keyIdentifier is required in every CA certificate except a
                // self-signed one (limbo rfc5280::aki::intermediate-missing-aki).
                if webPKI && !certificate.isSelfIssued && aki?.keyIdentifier == nil {
                    return ValidationFailure(.extensionProfileViolation, "CA certificate has no authorityKeyIdentifier keyIdentifier (RFC 5280 4.2.1.1)")
                }
            case .trustAnchor:
                // A trust anchor is trusted for itself, not for how it was issued, so its AKI
                // may be absent (limbo cve::cve-2024-0567 trusts a cross-signed CA that has
                // none). CA/B BR §7.1.2.1.3: a root's AKI, if present, names its own key (limbo
                // webpki::aki::root-with-aki-ski-mismatch); self-issued intermediates may
                // legitimately differ (key rollover), so this is for self-issued anchors only.
                if webPKI && certificate.isSelfIssued, let keyID = aki?.keyIdentifier, let ski = certificate.extensions.subjectKeyIdentifier,
                    !keyID.bytesEqual(ski)
                {
                    return ValidationFailure(
                        .extensionProfileViolation, "root authorityKeyIdentifier does not match its subjectKeyIdentifier (CA/B BR 7.1.2.1.3)")
                }
            }
            // CA/B BR §7.1.2.11.1, a field common to every certificate profile (root, CA and
            // subscriber): when present, keyIdentifier MUST be present and
            // authorityCertIssuer/SerialNumber MUST NOT (RFC 5280 allows both forms).
            if webPKI, let aki {
                if aki.keyIdentifier == nil {
                    return ValidationFailure(.extensionProfileViolation, "authorityKeyIdentifier has no keyIdentifier (CA/B BR 7.1.2.11.1)")
                }
                if aki.authorityCertIssuer != nil || aki.authorityCertSerialNumber != nil {
                    return ValidationFailure(
                        .extensionProfileViolation, "authorityKeyIdentifier must not name the issuer and serial (CA/B BR 7.1.2.11.1)")
                }
            }
            return nil
        }

        // RFC 5280 §4.2.1.2 subjectKeyIdentifier: MUST be non-critical, and "MUST appear in
        // all conforming CA certificates". Required of intermediates under the Web PKI;
        // tolerated on trust anchors, where many old roots lack it and the trust decision
        // does not depend on it (limbo rfc5280::ski::intermediate-missing-ski).
        rules[OID.subjectKeyIdentifier] = Rule(presence: ByRole(.optional), criticality: ByRole(.nonCritical)) { _, ext, context in
            if webPKI && context.role == .intermediate && ext == nil {
                return ValidationFailure(.extensionProfileViolation, "CA certificate has no subjectKeyIdentifier (RFC 5280 4.2.1.2)")
            }
            return nil
        }

        // RFC 5280 §4.2.1.3 keyUsage, §6.1.4 (n).
        rules[OID.keyUsage] = Rule(presence: ByRole(.optional), criticality: ByRole(.either)) { certificate, ext, context in
            let ku = certificate.extensions.keyUsage
            if context.isCertificateAuthority {
                // §6.1.4 (n): a CA's keyUsage, if present, must assert keyCertSign. §4.2.1.3 and
                // CA/B require the extension, but path validation checks it only when present
                // (limbo crl::issuer-no-keyusage-extension accepts a CA without it).
                guard ext == nil || ku?.keyCertSign == true else {
                    return ValidationFailure(.keyUsageNotAllowed, "CA keyUsage does not assert keyCertSign (RFC 5280 4.2.1.3)")
                }
                return nil
            }
            // §4.2.1.3: "If the keyCertSign bit is asserted, then the cA bit in the basic
            // constraints extension MUST also be asserted"; under the Web PKI a subscriber
            // certificate asserts neither (a directly trusted leaf is exempt, see
            // basicConstraints).
            if let ku, ku.keyCertSign, !context.isAnchor, webPKI || certificate.extensions.basicConstraints?.isCertificateAuthority != true {
                return ValidationFailure(.keyUsageNotAllowed, "end-entity keyUsage asserts keyCertSign (RFC 5280 4.2.1.3)")
            }
            for bit in requiredKeyUsages where !(ku?.contains(named: bit) ?? true) {
                return ValidationFailure(.keyUsageNotAllowed, "keyUsage does not assert \(bit)")
            }
            return nil
        }

        // RFC 5280 §4.2.1.6 subjectAltName: critical exactly when the subject is empty.
        // CA/B BR §7.1.2.7.12: required in a subscriber certificate, and not critical when the
        // subject is not empty.
        rules[OID.subjectAltName] = Rule(
            presence: ByRole(endEntity: subscriberRules ? .required : .optional, ca: .optional), criticality: ByRole(.either)
        ) { certificate, ext, context in
            guard let ext, context.role == .endEntity else { return nil }
            if certificate.subject.isEmpty && !ext.critical {
                return ValidationFailure(.extensionProfileViolation, "subjectAltName must be critical when the subject is empty (RFC 5280 4.2.1.6)")
            }
            if webPKI && !certificate.subject.isEmpty && ext.critical {
                return ValidationFailure(
                    .extensionProfileViolation, "subjectAltName must not be critical when the subject is not empty (CA/B BR 7.1.2.7.12)")
            }
            return nil
        }

        // RFC 5280 §4.2.1.9 basicConstraints, §6.1.4 (k), (l), (m).
        rules[OID.basicConstraints] = Rule(
            presence: ByRole(.optional), criticality: ByRole(endEntity: .either, ca: webPKI ? .critical : .either)
        ) { certificate, ext, context in
            let bc = certificate.extensions.basicConstraints
            guard context.isCertificateAuthority else {
                // An end entity must not assert cA under the Web PKI (CA/B BR §7.1.2.7.8; limbo
                // webpki::ca-as-leaf). A directly trusted leaf is trusted for itself, so whether
                // it is also marked as a CA (what `openssl req -x509` does) is not held against
                // it. RFC 5280 §6 lets any certificate end a path (PKITS 4.6.8, 4.6.14).
                if webPKI && !context.isAnchor && bc?.isCertificateAuthority == true {
                    return ValidationFailure(.leafIsCertificateAuthority, "end-entity certificate asserts basicConstraints cA")
                }
                return nil
            }
            // §6.1.4 (k): an issuer must be a CA: basicConstraints present with cA. Under the
            // Web PKI it must also be critical (§4.2.1.9 "MUST mark the extension as critical";
            // checked with the criticality above); §6 checks presence and cA only (PKITS 4.6.4).
            guard ext != nil, let bc, bc.isCertificateAuthority else {
                return ValidationFailure(.notCertificateAuthority, "issuer is not a CA: basicConstraints cA is not asserted (RFC 5280 4.2.1.9)")
            }
            // §4.2.1.9, §6.1.4 (l)–(m): pathLenConstraint counts the non-self-issued
            // intermediates below this CA; self-issued ones (key rollover) are free. NOTE: pyca
            // and Go count every intermediate and fail limbo `pathlen::self-issued-certs-pathlen`;
            // here loop detection and the signature budget keep self-issued certificates from
            // extending a path without bound instead.
            if let limit = bc.pathLengthConstraint, context.depth > limit {
                return ValidationFailure(.pathLengthExceeded, "path length constraint \(limit) exceeded by \(context.depth) intermediates below")
            }
            return nil
        }

        // RFC 5280 §4.2.1.10 nameConstraints: only in CA certificates. §4.2.1.10 says MUST be
        // critical; CA/B BR 7.1.2.10.8 relaxes it to MAY, and deployed constrained CAs use both,
        // so either is accepted. The constraints themselves bind the names below the CA
        // (NameConstraintChecker, §6.1.3 (b)–(c), §6.1.4 (g)).
        rules[OID.nameConstraints] = Rule(presence: ByRole(endEntity: .forbidden, ca: .optional), criticality: ByRole(.either), check: nil)

        // RFC 5280 §4.2.1.12 extendedKeyUsage.
        rules[OID.extendedKeyUsage] = Rule(presence: ByRole(.optional), criticality: ByRole(webPKI ? .nonCritical : .either)) { certificate, _, context in
            guard let eku = certificate.extensions.extendedKeyUsage, !requiredEKUs.isEmpty else { return nil }
            if context.isCertificateAuthority {
                // An EKU in a CA constrains the purposes below it (the CA/B and browser reading;
                // RFC 5280 itself is silent). anyExtendedKeyUsage passes.
                if eku.contains(OID.anyExtendedKeyUsage) { return nil }
                for required in requiredEKUs where !eku.contains(required) {
                    return ValidationFailure(.extendedKeyUsageNotAllowed, "CA extendedKeyUsage does not allow \(ExtendedKeyUsage.name(of: required))")
                }
                return nil
            }
            // CA/B BR §7.1.2.7.10: when present, the EKU must contain the purpose; absent means
            // any purpose (what every verifier does).
            for required in requiredEKUs where !eku.contains(required) && required != OID.anyExtendedKeyUsage {
                return ValidationFailure(.extendedKeyUsageNotAllowed, "extendedKeyUsage does not allow \(ExtendedKeyUsage.name(of: required))")
            }
            return nil
        }

        // RFC 5280 §4.2.1.4 certificatePolicies: processed by the §6.1 policy graph
        // (PolicyGraph); the parser already refused duplicate policy OIDs.
        rules[OID.certificatePolicies] = Rule(presence: ByRole(.optional), criticality: ByRole(.either), check: nil)

        // RFC 5280 §4.2.1.5 policyMappings (SHOULD be critical), §6.1.4 (a)–(b): processed by
        // the policy graph for certificates 1…n-1; a leaf's mappings map nothing.
        rules[OID.policyMappings] = Rule(presence: ByRole(.optional), criticality: ByRole(.either)) { certificate, _, context in
            guard context.role == .intermediate, let mappings = certificate.extensions.policyMappings else { return nil }
            // §6.1.4 (a): "verify that the special value anyPolicy does not appear as an
            // issuerDomainPolicy or a subjectDomainPolicy".
            if mappings.contains(where: { $0.issuerDomainPolicy == OID.anyPolicy || $0.subjectDomainPolicy == OID.anyPolicy }) {
                return ValidationFailure(.policyViolation, "policyMappings maps to or from anyPolicy (RFC 5280 6.1.4 (a))")
            }
            return nil
        }

        // RFC 5280 §4.2.1.11 policyConstraints: "Conforming CAs MUST mark this extension as
        // critical" (enforced under the Web PKI: limbo rfc5280::pc::ica-noncritical-pc); §6.1
        // processes it whatever its criticality (PKITS 4.8–4.12), also in the leaf (§6.1.5 (b)).
        // A subscriber certificate has no business constraining policies (Web PKI).
        rules[OID.policyConstraints] = Rule(
            presence: ByRole(endEntity: webPKI ? .forbidden : .optional, ca: .optional),
            criticality: ByRole(webPKI ? .critical : .either), check: nil)

        // RFC 5280 §4.2.1.14 inhibitAnyPolicy: MUST be critical (Web PKI); §6.1.4 (j) processes
        // it for certificates 1…n-1.
        rules[OID.inhibitAnyPolicy] = Rule(presence: ByRole(.optional), criticality: ByRole(webPKI ? .critical : .either), check: nil)

        // RFC 5280 §4.2.2.1 authorityInfoAccess: MUST be non-critical.
        rules[OID.authorityInfoAccess] = Rule(presence: ByRole(.optional), criticality: ByRole(.nonCritical), check: nil)

        // RFC 5280 §4.2.1.13 cRLDistributionPoints (SHOULD be non-critical): the scope of the
        // certificate's CRLs, used by revocation checking (§6.3.3).
        rules[OID.crlDistributionPoints] = Rule(presence: ByRole(.optional), criticality: ByRole(.either), check: nil)

        // RFC 5280 §4.2.1.15 freshestCRL: MUST be non-critical.
        rules[OID.freshestCRL] = Rule(presence: ByRole(.optional), criticality: ByRole(.nonCritical), check: nil)

        self.init(fields: fields, extensions: rules)
    }
}

/// CA/B BR §7.1.3.2's signature algorithms.
struct AlgorithmRule: Sendable {
    let allowsSHA1: Bool

    /// Whether `algorithm` may sign a certificate (or CRL) in a path.
    ///
    /// CA/B BR §7.1.3.2 lists RSASSA-PKCS1-v1_5 and RSASSA-PSS with SHA-256/384/512 and ECDSA
    /// with SHA-256/384/512; Ed25519 and Ed448 are added since RFC 8410 defines them for X.509
    /// and they are stronger than the listed ones. PSS must use MGF1 with the same digest and a
    /// salt as long as the digest (the only PSS forms §7.1.3.2 allows).
    func permits(_ algorithm: SignatureAlgorithm) -> Bool {
        switch algorithm {
        case .rsaPKCS1(let digest), .ecdsa(let digest):
            switch digest {
            case .sha256, .sha384, .sha512: return true
            case .sha1: return allowsSHA1
            case .md5, .sha224: return false
            }
        case .rsaPSS(let p):
            guard p.digest == p.mgf1Digest, p.saltLength == p.digest.outputSize else { return false }
            return [.sha256, .sha384, .sha512].contains(p.digest) || (p.digest == .sha1 && allowsSHA1)
        case .ed25519, .ed448: return true
        case .other: return false
        }
    }
}
