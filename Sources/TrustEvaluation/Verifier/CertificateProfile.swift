import CertificateParsing

/// The per-certificate rules of the Web PKI profile (RFC 5280 §4 as the CA/Browser Forum
/// Baseline Requirements narrow it), written as a table of extension rules for CAs and for
/// end entities, after pyca/cryptography's `ExtensionPolicy`.
///
/// Each rule says whether the extension must, may or must not be present, what criticality it
/// may have, and which further check applies. One pass over the extensions runs them; an
/// unknown critical extension fails (RFC 5280 §4.2: "A certificate-using system MUST reject the
/// certificate if it encounters a critical extension it does not recognize").
struct CertificateProfile: Sendable {
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

    struct Rule: Sendable {
        let presence: Presence
        let criticality: Criticality
        /// Runs whether or not the extension is present (for rules about absence too).
        let check: (@Sendable (Certificate, Extension?) -> ValidationFailure?)?
    }

    /// The rules' OIDs in a fixed order, so "seen" can be a bit mask; kept apart from the rules
    /// so the lookup compares OIDs without copying (and retaining) each rule's closure.
    let oids: [ASN1ObjectIdentifier]
    /// The rules, index for index with ``oids``.
    let rules: [Rule]

    init(rules: [ASN1ObjectIdentifier: Rule]) {
        let sorted = rules.sorted { $0.key.dotted < $1.key.dotted }
        precondition(sorted.count <= 64, "seen is a 64-bit mask")
        self.oids = sorted.map(\.key)
        self.rules = sorted.map(\.value)
    }

    func permits(_ certificate: Certificate) -> ValidationFailure? {
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
            if rule.presence == .forbidden {
                return ValidationFailure(.extensionProfileViolation, "extension \(CertificateProfile.name(ext.oid)) is not allowed here")
            }
            if !rule.criticality.permits(ext.critical) {
                // RFC 5280 §4.2.1.9: a CA's basicConstraints MUST be critical; a non-critical
                // one does not make the certificate a CA.
                if ext.oid == OID.basicConstraints && !ext.critical {
                    return ValidationFailure(.notCertificateAuthority, "basicConstraints is not critical, so the issuer is not a CA (RFC 5280 4.2.1.9)")
                }
                return ValidationFailure(
                    .extensionProfileViolation,
                    "extension \(CertificateProfile.name(ext.oid)) must \(ext.critical ? "not " : "")be critical")
            }
            if let failure = rule.check?(certificate, ext) { return failure }
        }
        for (index, rule) in rules.enumerated() where seen & (1 << UInt64(index)) == 0 {
            if rule.presence == .required {
                return ValidationFailure(.extensionProfileViolation, "required extension \(CertificateProfile.name(oids[index])) is missing")
            }
            if let failure = rule.check?(certificate, nil) { return failure }
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
        default: return oid.dotted
        }
    }

    // MARK: - The CA profile

    static func certificateAuthority(_ policy: ValidationPolicy) -> CertificateProfile {
        let requiredEKUs = policy.effectiveExtendedKeyUsages
        return CertificateProfile(rules: [
            // RFC 5280 §4.2.2.1: AIA MUST be non-critical.
            OID.authorityInfoAccess: Rule(presence: .optional, criticality: .nonCritical, check: nil),
            // RFC 5280 §4.2.1.1: AKI MUST be non-critical. CA/B BR §7.1.2.11.1: when present,
            // keyIdentifier MUST be present and authorityCertIssuer/SerialNumber MUST NOT.
            // NOTE: CA/B requires AKI on every non-root CA, but self-signed roots are the only
            // place it may be absent and roots are often SHA-1 self-signed, so presence is not
            // required (pyca makes the same choice).
            OID.authorityKeyIdentifier: Rule(presence: .optional, criticality: .nonCritical) { certificate, ext in
                guard ext != nil, let aki = certificate.extensions.authorityKeyIdentifier else { return nil }
                if aki.keyIdentifier == nil {
                    return ValidationFailure(.extensionProfileViolation, "authorityKeyIdentifier has no keyIdentifier (CA/B BR 7.1.2.11.1)")
                }
                if aki.authorityCertIssuer != nil || aki.authorityCertSerialNumber != nil {
                    return ValidationFailure(
                        .extensionProfileViolation, "authorityKeyIdentifier must not name the issuer and serial (CA/B BR 7.1.2.11.1)")
                }
                return nil
            },
            // RFC 5280 §4.2.1.2: SKI MUST be non-critical. CA/B requires it on CAs; many older
            // roots lack it, so absence is tolerated.
            OID.subjectKeyIdentifier: Rule(presence: .optional, criticality: .nonCritical, check: nil),
            // RFC 5280 §6.1.4 (n): if a CA's keyUsage is present it must assert keyCertSign.
            // RFC 5280 §4.2.1.3 and CA/B BR require the extension, but path validation only
            // checks it when present (limbo crl::issuer-no-keyusage-extension expects a CA
            // without keyUsage to be accepted).
            OID.keyUsage: Rule(presence: .optional, criticality: .either) { certificate, ext in
                guard ext != nil else { return nil }
                guard let ku = certificate.extensions.keyUsage, ku.keyCertSign else {
                    return ValidationFailure(.keyUsageNotAllowed, "CA keyUsage does not assert keyCertSign (RFC 5280 4.2.1.3)")
                }
                return nil
            },
            OID.subjectAltName: Rule(presence: .optional, criticality: .either, check: nil),
            // RFC 5280 §4.2.1.9: basicConstraints MUST be present and critical in CA
            // certificates that sign certificates, with cA asserted.
            OID.basicConstraints: Rule(presence: .optional, criticality: .critical) { certificate, ext in
                guard ext != nil, let bc = certificate.extensions.basicConstraints, bc.isCertificateAuthority else {
                    return ValidationFailure(.notCertificateAuthority, "issuer is not a CA: basicConstraints cA is not asserted (RFC 5280 4.2.1.9)")
                }
                return nil
            },
            // RFC 5280 §4.2.1.10 says MUST be critical; CA/B BR 7.1.2.10.8 relaxes it to MAY, and
            // deployed constrained CAs use both, so either is accepted.
            OID.nameConstraints: Rule(presence: .optional, criticality: .either, check: nil),
            // RFC 5280 §4.2.1.12: an EKU in a CA constrains the purposes below it (the
            // CA/B and browser reading; RFC 5280 itself is silent). anyExtendedKeyUsage passes.
            OID.extendedKeyUsage: Rule(presence: .optional, criticality: .nonCritical) { certificate, _ in
                guard let eku = certificate.extensions.extendedKeyUsage, !requiredEKUs.isEmpty else { return nil }
                if eku.contains(OID.anyExtendedKeyUsage) { return nil }
                for required in requiredEKUs where !eku.contains(required) {
                    return ValidationFailure(
                        .extendedKeyUsageNotAllowed, "CA extendedKeyUsage does not allow \(ExtendedKeyUsage.name(of: required))")
                }
                return nil
            },
            // RFC 5280 §4.2.1.11 / §4.2.1.14: processed as far as the profile needs (present
            // and well formed); the policy tree itself is not evaluated.
            OID.policyConstraints: Rule(presence: .optional, criticality: .critical, check: nil),
            OID.inhibitAnyPolicy: Rule(presence: .optional, criticality: .critical, check: nil),
            OID.certificatePolicies: Rule(presence: .optional, criticality: .either, check: nil),
            OID.policyMappings: Rule(presence: .optional, criticality: .either, check: nil),
        ])
    }

    // MARK: - The end-entity profile

    ///
    /// - Parameter directlyTrusted: the leaf is itself a trust anchor (a pinned self-signed
    ///   certificate, as SecTrust and AFNetworking users deploy them). Such a certificate is
    ///   trusted for itself, so whether it is also marked as a CA (what `openssl req -x509`
    ///   produces by default) does not matter and is not held against it.
    static func endEntity(_ policy: ValidationPolicy, directlyTrusted: Bool = false) -> CertificateProfile {
        let requiredEKUs = policy.effectiveExtendedKeyUsages
        let requiredKeyUsages = policy.requiredKeyUsages
        let needsSAN = policy.kind != .basicX509
        return CertificateProfile(rules: [
            OID.authorityInfoAccess: Rule(presence: .optional, criticality: .nonCritical, check: nil),
            // RFC 5280 §4.2.1.1 and CA/B BR 7.1.2.7.x: a subscriber certificate's AKI is
            // required and non-critical (it is absent only from self-signed certificates).
            OID.authorityKeyIdentifier: Rule(presence: .optional, criticality: .nonCritical) { certificate, ext in
                if ext == nil && !certificate.isSelfIssued && needsSAN {
                    return ValidationFailure(.extensionProfileViolation, "end-entity certificate has no authorityKeyIdentifier (RFC 5280 4.2.1.1)")
                }
                return nil
            },
            OID.subjectKeyIdentifier: Rule(presence: .optional, criticality: .nonCritical, check: nil),
            // RFC 5280 §4.2.1.3: keyCertSign only with cA; plus the policy's required bits.
            OID.keyUsage: Rule(presence: .optional, criticality: .either) { certificate, _ in
                let ku = certificate.extensions.keyUsage
                if let ku, ku.keyCertSign, !directlyTrusted {
                    return ValidationFailure(.keyUsageNotAllowed, "end-entity keyUsage asserts keyCertSign (RFC 5280 4.2.1.3)")
                }
                for bit in requiredKeyUsages where !(ku?.contains(named: bit) ?? true) {
                    return ValidationFailure(.keyUsageNotAllowed, "keyUsage does not assert \(bit)")
                }
                return nil
            },
            // CA/B BR 7.1.2.7.12 and RFC 5280 §4.2.1.6: the SAN is required; it is critical
            // exactly when the subject is empty.
            OID.subjectAltName: Rule(presence: needsSAN ? .required : .optional, criticality: .either) { certificate, ext in
                guard let ext else { return nil }
                if certificate.subject.isEmpty != ext.critical {
                    return ValidationFailure(
                        .extensionProfileViolation,
                        certificate.subject.isEmpty
                            ? "subjectAltName must be critical when the subject is empty (RFC 5280 4.2.1.6)"
                            : "subjectAltName must not be critical when the subject is not empty (CA/B BR 7.1.2.7.12)")
                }
                return nil
            },
            // RFC 5280 §4.2.1.9: an end entity must not assert cA.
            OID.basicConstraints: Rule(presence: .optional, criticality: .either) { certificate, _ in
                if certificate.extensions.basicConstraints?.isCertificateAuthority == true && !directlyTrusted {
                    return ValidationFailure(.leafIsCertificateAuthority, "end-entity certificate asserts basicConstraints cA")
                }
                return nil
            },
            // RFC 5280 §4.2.1.10: name constraints only in CA certificates.
            OID.nameConstraints: Rule(presence: .forbidden, criticality: .either, check: nil),
            // CA/B BR 7.1.2.7.10: when present, the EKU must contain the purpose and must not be
            // anyExtendedKeyUsage alone; absent means any purpose (what every verifier does).
            OID.extendedKeyUsage: Rule(presence: .optional, criticality: .nonCritical) { certificate, _ in
                guard let eku = certificate.extensions.extendedKeyUsage else { return nil }
                for required in requiredEKUs where !eku.contains(required) && required != OID.anyExtendedKeyUsage {
                    return ValidationFailure(
                        .extendedKeyUsageNotAllowed, "extendedKeyUsage does not allow \(ExtendedKeyUsage.name(of: required))")
                }
                return nil
            },
            OID.certificatePolicies: Rule(presence: .optional, criticality: .either, check: nil),
            OID.policyConstraints: Rule(presence: .forbidden, criticality: .either, check: nil),
        ])
    }
}
