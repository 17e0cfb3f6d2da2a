import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// RFC 5280 §6.3 CRL processing, one rule per row: scope from issuingDistributionPoint and the
/// certificate's distribution points, reason coverage across CRLs, indirect CRLs and
/// certificateIssuer, delta CRLs with their base, hold and removeFromCRL, critical extensions
/// that make a CRL unusable, and the CRL signer's own path (another key of the same CA, a
/// delegated CRL issuer). Revocation checking is required in every row (hard fail), so a
/// status the CRLs do not determine is `revocationStatusUnknown`. Every row runs under both
/// profiles; the Web PKI one also holds CRLs and distribution points to the CA/B BR shapes.
@Suite("Revocation (RFC 5280 6.3)")
struct RevocationTests {
    typealias Kind = ValidationFailure.Kind

    /// root → issuing CA → leaf, the leaf carrying `leafExtras`; the issuing CA's name is fixed
    /// so delegated signers and certificateIssuer entries can name it.
    struct Setup {
        let root: TrustCA
        let intermediate: TrustCA
        let leaf: LabCertificate
        static let caName = LabName([("C", "US"), ("O", "Revocation Tests"), ("CN", "Issuing CA")])
        static let delegatedName = LabName([("C", "US"), ("O", "Revocation Tests"), ("CN", "Delegated CRL Issuer")])

        let profile: ValidationPolicy.Profile

        init(
            leafExtras: [LabExtension] = [], intermediateKeyUsage: [LabKeyUsage] = [.keyCertSign, .cRLSign],
            profile: ValidationPolicy.Profile = .webPKI
        ) throws {
            self.profile = profile
            root = try TrustPKI.root()
            var extensions = TrustPKI.caExtensions(pathLength: 0)
            extensions[1] = .keyUsage(intermediateKeyUsage)
            let spec = LabCertificateSpec(
                subject: Setup.caName, notBefore: TrustPKI.caValidity.notBefore, notAfter: TrustPKI.caValidity.notAfter,
                extensions: extensions)
            intermediate = try root.issueCA(spec, key: TrustPKI.key(TrustSlot.intermediate))
            leaf = try intermediate.issue(
                TrustPKI.leafSpec(extensions: TrustPKI.leafExtensions(sans: [.dns(TrustPKI.host)]) + leafExtras), key: TrustPKI.key(TrustSlot.leaf))
        }

        /// The root's CRL for the issuing CA (complete, nothing revoked unless `revoking`).
        func rootCRL(revoking serials: [[UInt8]] = []) throws -> CertificateRevocationList {
            try TrustPKI.crl(LabCRLSpec(entries: serials.map { LabRevokedEntry(serial: $0, reason: 1) }), signedBy: root)
        }

        func crl(_ spec: LabCRLSpec) throws -> CertificateRevocationList { try TrustPKI.crl(spec, signedBy: intermediate) }

        /// Another certificate of the issuing CA, same name, its own key, for signing CRLs.
        func crlSigner(keyUsage: [LabKeyUsage] = [.cRLSign], issuer: TrustCA? = nil) throws -> TrustCA {
            let spec = LabCertificateSpec(
                subject: Setup.caName, notBefore: TrustPKI.caValidity.notBefore, notAfter: TrustPKI.caValidity.notAfter,
                extensions: [.basicConstraints(ca: false), .keyUsage(keyUsage), .subjectKeyIdentifier(), .authorityKeyIdentifier()])
            return try (issuer ?? root).issueCA(spec, key: TrustPKI.key(TrustSlot.crlSigner))
        }

        /// A delegated CRL issuer certified by the root.
        func delegatedIssuer() throws -> TrustCA {
            let spec = LabCertificateSpec(
                subject: Setup.delegatedName, notBefore: TrustPKI.caValidity.notBefore, notAfter: TrustPKI.caValidity.notAfter,
                extensions: [.basicConstraints(ca: false), .keyUsage([.cRLSign]), .subjectKeyIdentifier(), .authorityKeyIdentifier()])
            return try root.issueCA(spec, key: TrustPKI.key(TrustSlot.delegatedCRLIssuer))
        }

        func validate(_ crls: [CertificateRevocationList], extra: [LabCertificate] = []) throws -> ValidationOutcome {
            try TrustPKI.validate(
                leaf, [intermediate.certificate] + extra, anchors: [root.certificate], policy: TrustPKI.revocationPolicy(profile: profile),
                checks: [CRLCheck(crls)])
        }
    }

    static let pointA = "http://crl.example/a.crl"
    static let pointB = "http://crl.example/b.crl"

    enum Case: String, CaseIterable, Sendable, CustomTestStringConvertible {
        // §6.3.3 (b)(2)(ii)–(iv): certificate kinds.
        case onlyUserCertsCoversLeaf, onlyUserCertsDoesNotCoverCA, onlyCACertsCoversCA, onlyCACertsDoesNotCoverLeaf, onlyAttributeCerts
        // §6.3.3 (b)(2)(i): distribution point names.
        case matchingPointName, otherPointName, pointNameWithoutCertificatePoints, relativeNameMatches, relativeNameDiffers, noIDPCoversAnyPoint
        // §6.3.3 (d)–(e), (l): reasons.
        case pointReasonsAloneDoNotCover, onlySomeReasonsSplitAcrossTwoCRLs, onlySomeReasonsLeavesAGap, revokedInTheSecondReasonCRL
        // §6.3.3 (b)(1), §5.3.3: indirect CRLs.
        case indirectCRLRevokes, indirectCRLClean, notIndirect, certificateIssuerCarriesOver, entriesBeforeCertificateIssuerAreTheCRLIssuers
        // §5.2.4, §6.3.3 (c), (h)–(k): delta CRLs.
        case deltaRevokes, deltaWithoutItsBaseIsNotComplete, deltaForAnotherBaseIsIgnored, holdIsRevoked, deltaRemovesHold
        case staleBaseWithCurrentDelta, staleBaseWithCurrentDeltaButNoFreshestCRL
        // §5.2, §5.3: critical extensions the verifier cannot process.
        case unknownCriticalCRLExtension, unknownCriticalEntryExtension
        // §6.3.3 (f): the CRL signer.
        case separateCRLSigningKey, separateCRLSigningKeyRevoked, separateCRLSigningKeyWithoutCRLSign, separateCRLSigningKeyNotSent
        case separateCRLSigningKeyFromAnotherRoot, issuerWithoutCRLSign
        // CA/B BR 7.1.2.11.2, 7.2.2.1: the Web PKI's narrower CRL shapes.
        case distributionPointWithNonURIName, partitionNamedByNonURI, directCRLMarkedIndirect, serialListedTwice
        var testDescription: String { rawValue }

        /// Where the Web PKI profile answers otherwise than RFC 5280 (`nil`: the same).
        var webPKI: (kind: Kind?, index: Int?)? {
            switch self {
            // Relative names, reasons and cRLIssuer make a distribution point no CA/B point.
            case .relativeNameMatches, .indirectCRLRevokes, .indirectCRLClean, .certificateIssuerCarriesOver,
                .entriesBeforeCertificateIssuerAreTheCRLIssuers:
                return (.revocationStatusUnknown, 0)
            case .distributionPointWithNonURIName, .partitionNamedByNonURI, .directCRLMarkedIndirect, .serialListedTwice:
                return (.revocationStatusUnknown, 0)
            default: return nil
            }
        }
    }

    /// The outcome of `c` and what RFC 5280 says it must be (`nil` kind: trusted).
    static func run(_ c: Case, profile: ValidationPolicy.Profile) throws -> (ValidationOutcome, Kind?, Int?) {
        func setup(leafExtras: [LabExtension] = [], intermediateKeyUsage: [LabKeyUsage] = [.keyCertSign, .cRLSign]) throws -> RevocationTests.Setup {
            try RevocationTests.Setup(leafExtras: leafExtras, intermediateKeyUsage: intermediateKeyUsage, profile: profile)
        }
        let leafSerial: (Setup) -> [UInt8] = { $0.leaf.serialNumber }
        func idp(_ configure: (inout LabIssuingDistributionPoint) -> Void) -> LabCRLSpec {
            var point = LabIssuingDistributionPoint()
            configure(&point)
            var spec = LabCRLSpec()
            spec.issuingDistributionPoint = point
            return spec
        }
        switch c {
        case .onlyUserCertsCoversLeaf:
            let s = try setup()
            return (try s.validate([try s.rootCRL(), try s.crl(idp { $0.onlyContainsUserCerts = true })]), nil, nil)
        case .onlyUserCertsDoesNotCoverCA:
            let s = try setup()
            var rootSpec = LabCRLSpec()
            rootSpec.issuingDistributionPoint = {
                var p = LabIssuingDistributionPoint()
                p.onlyContainsUserCerts = true
                return p
            }()
            return (try s.validate([try TrustPKI.crl(rootSpec, signedBy: s.root), try s.crl(LabCRLSpec())]), .revocationStatusUnknown, 1)
        case .onlyCACertsCoversCA:
            let s = try setup()
            var rootSpec = LabCRLSpec()
            rootSpec.issuingDistributionPoint = {
                var p = LabIssuingDistributionPoint()
                p.onlyContainsCACerts = true
                return p
            }()
            return (try s.validate([try TrustPKI.crl(rootSpec, signedBy: s.root), try s.crl(LabCRLSpec())]), nil, nil)
        case .onlyCACertsDoesNotCoverLeaf:
            let s = try setup()
            return (try s.validate([try s.rootCRL(), try s.crl(idp { $0.onlyContainsCACerts = true })]), .revocationStatusUnknown, 0)
        case .onlyAttributeCerts:
            let s = try setup()
            return (try s.validate([try s.rootCRL(), try s.crl(idp { $0.onlyContainsAttributeCerts = true })]), .revocationStatusUnknown, 0)
        case .matchingPointName:
            let s = try setup(leafExtras: [.crlDistributionPoints([pointA])])
            return (try s.validate([try s.rootCRL(), try s.crl(idp { $0.name = .fullName([.uri(pointA)]) })]), nil, nil)
        case .otherPointName:
            let s = try setup(leafExtras: [.crlDistributionPoints([pointA])])
            return (try s.validate([try s.rootCRL(), try s.crl(idp { $0.name = .fullName([.uri(pointB)]) })]), .revocationStatusUnknown, 0)
        case .pointNameWithoutCertificatePoints:
            // The certificate has no distribution point, so only a CRL for its whole issuer
            // (no distribution point name) covers it.
            let s = try setup()
            return (try s.validate([try s.rootCRL(), try s.crl(idp { $0.name = .fullName([.uri(pointA)]) })]), .revocationStatusUnknown, 0)
        case .relativeNameMatches:
            let part = [LabAttribute("CN", "Partition 1")]
            let s = try setup(leafExtras: [.distributionPoints([LabDistributionPoint(name: .relativeToCRLIssuer(part))])])
            // The same full name, written by the CRL as a full directoryName (§5.2.5).
            let full = LabName(rdns: RevocationTests.Setup.caName.rdns + [[LabAttribute("CN", "partition  1")]])
            return (try s.validate([try s.rootCRL(), try s.crl(idp { $0.name = .fullName([.directoryName(full)]) })]), nil, nil)
        case .relativeNameDiffers:
            let s = try setup(leafExtras: [.distributionPoints([LabDistributionPoint(name: .relativeToCRLIssuer([LabAttribute("CN", "Partition 1")]))])])
            return (
                try s.validate([try s.rootCRL(), try s.crl(idp { $0.name = .relativeToCRLIssuer([LabAttribute("CN", "Partition 2")]) })]),
                .revocationStatusUnknown, 0
            )
        case .noIDPCoversAnyPoint:
            let s = try setup(leafExtras: [.crlDistributionPoints([pointA])])
            return (try s.validate([try s.rootCRL(), try s.crl(LabCRLSpec())]), nil, nil)
        case .pointReasonsAloneDoNotCover:
            // The certificate's point covers key compromise only; nothing covers the other reasons.
            let s = try setup(leafExtras: [.distributionPoints([LabDistributionPoint(name: .fullName([.uri(pointA)]), reasons: [1])])])
            return (try s.validate([try s.rootCRL(), try s.crl(LabCRLSpec())]), .revocationStatusUnknown, 0)
        case .onlySomeReasonsSplitAcrossTwoCRLs:
            let s = try setup()
            return (
                try s.validate([
                    try s.rootCRL(), try s.crl(idp { $0.onlySomeReasons = [1, 2] }), try s.crl(idp { $0.onlySomeReasons = [3, 4, 5, 6, 7, 8] }),
                ]), nil, nil
            )
        case .onlySomeReasonsLeavesAGap:
            let s = try setup()
            return (
                try s.validate([try s.rootCRL(), try s.crl(idp { $0.onlySomeReasons = [1, 2] }), try s.crl(idp { $0.onlySomeReasons = [3, 4, 5, 6, 7] })]),
                .revocationStatusUnknown, 0
            )
        case .revokedInTheSecondReasonCRL:
            let s = try setup()
            var second = idp { $0.onlySomeReasons = [3, 4, 5, 6, 7, 8] }
            second.entries = [LabRevokedEntry(serial: leafSerial(s), reason: 3)]
            return (try s.validate([try s.rootCRL(), try s.crl(idp { $0.onlySomeReasons = [1, 2] }), try s.crl(second)]), .revoked, 0)
        case .indirectCRLRevokes, .indirectCRLClean, .notIndirect, .certificateIssuerCarriesOver, .entriesBeforeCertificateIssuerAreTheCRLIssuers:
            let point = LabDistributionPoint(crlIssuer: [.directoryName(RevocationTests.Setup.delegatedName)])
            let s = try setup(leafExtras: [.distributionPoints([point])])
            let delegated = try s.delegatedIssuer()
            var spec = c == .notIndirect ? LabCRLSpec() : idp { $0.indirectCRL = true }
            let issuerName = [LabGeneralName.directoryName(RevocationTests.Setup.caName)]
            switch c {
            case .indirectCRLRevokes, .notIndirect:
                spec.entries = [LabRevokedEntry(serial: leafSerial(s), reason: 1, certificateIssuer: issuerName)]
            case .certificateIssuerCarriesOver:
                spec.entries = [LabRevokedEntry(serial: [0x7E], reason: 1, certificateIssuer: issuerName), LabRevokedEntry(serial: leafSerial(s), reason: 1)]
            case .entriesBeforeCertificateIssuerAreTheCRLIssuers:
                // The leaf's serial, but attributed to the delegated issuer itself.
                spec.entries = [LabRevokedEntry(serial: leafSerial(s), reason: 1), LabRevokedEntry(serial: [0x7E], reason: 1, certificateIssuer: issuerName)]
            default: break
            }
            let crls = [try s.rootCRL(), try TrustPKI.crl(spec, signedBy: delegated)]
            let outcome = try s.validate(crls, extra: [delegated.certificate])
            switch c {
            case .indirectCRLRevokes, .certificateIssuerCarriesOver: return (outcome, .revoked, 0)
            case .notIndirect: return (outcome, .revocationStatusUnknown, 0)
            default: return (outcome, nil, nil)
            }
        case .deltaRevokes, .deltaWithoutItsBaseIsNotComplete, .deltaForAnotherBaseIsIgnored, .holdIsRevoked, .deltaRemovesHold:
            let s = try setup()
            var base = LabCRLSpec(number: 5)
            var delta = LabCRLSpec(number: 6)
            delta.deltaBase = 5
            switch c {
            case .deltaRevokes: delta.entries = [LabRevokedEntry(serial: leafSerial(s), reason: 1)]
            case .deltaForAnotherBaseIsIgnored:
                delta.deltaBase = 6
                delta.number = 7
                delta.entries = [LabRevokedEntry(serial: leafSerial(s), reason: 1)]
            case .holdIsRevoked: base.entries = [LabRevokedEntry(serial: leafSerial(s), reason: 6)]
            case .deltaRemovesHold:
                base.entries = [LabRevokedEntry(serial: leafSerial(s), reason: 6)]
                delta.entries = [LabRevokedEntry(serial: leafSerial(s), reason: 8)]
            default: break
            }
            let crls = c == .deltaWithoutItsBaseIsNotComplete ? [try s.rootCRL(), try s.crl(delta)] : [try s.rootCRL(), try s.crl(base), try s.crl(delta)]
            let outcome = try s.validate(crls)
            switch c {
            case .deltaRevokes, .holdIsRevoked: return (outcome, .revoked, 0)
            case .deltaWithoutItsBaseIsNotComplete: return (outcome, .revocationStatusUnknown, 0)
            default: return (outcome, nil, nil)
            }
        case .staleBaseWithCurrentDelta, .staleBaseWithCurrentDeltaButNoFreshestCRL:
            let freshest: [LabExtension] = c == .staleBaseWithCurrentDelta ? [.freshestCRL([.uri(pointB)])] : []
            let s = try setup(leafExtras: freshest)
            let base = LabCRLSpec(thisUpdate: TrustPKI.now - 10 * LabClock.day, nextUpdate: TrustPKI.now - LabClock.day, number: 5)
            var delta = LabCRLSpec(number: 6)
            delta.deltaBase = 5
            let outcome = try s.validate([try s.rootCRL(), try s.crl(base), try s.crl(delta)])
            return c == .staleBaseWithCurrentDelta ? (outcome, nil, nil) : (outcome, .revocationStatusUnknown, 0)
        case .unknownCriticalCRLExtension:
            let s = try setup()
            var spec = LabCRLSpec()
            spec.extensions = [.raw(oid: "1.3.6.1.4.1.99999.5", critical: true, valueDER: LabDER.null())]
            return (try s.validate([try s.rootCRL(), try s.crl(spec)]), .revocationStatusUnknown, 0)
        case .unknownCriticalEntryExtension:
            let s = try setup()
            let spec = LabCRLSpec(entries: [
                LabRevokedEntry(serial: [0x7D], extensions: [.raw(oid: "1.3.6.1.4.1.99999.6", critical: true, valueDER: LabDER.null())])
            ])
            return (try s.validate([try s.rootCRL(), try s.crl(spec)]), .revocationStatusUnknown, 0)
        case .separateCRLSigningKey, .separateCRLSigningKeyRevoked, .separateCRLSigningKeyWithoutCRLSign, .separateCRLSigningKeyNotSent:
            let s = try setup()
            let signer = try s.crlSigner(keyUsage: c == .separateCRLSigningKeyWithoutCRLSign ? [.digitalSignature] : [.cRLSign])
            let rootCRL = try s.rootCRL(revoking: c == .separateCRLSigningKeyRevoked ? [signer.certificate.serialNumber] : [])
            let crls = [rootCRL, try TrustPKI.crl(LabCRLSpec(), signedBy: signer)]
            let outcome = try s.validate(crls, extra: c == .separateCRLSigningKeyNotSent ? [] : [signer.certificate])
            return c == .separateCRLSigningKey ? (outcome, nil, nil) : (outcome, .revocationStatusUnknown, 0)
        case .separateCRLSigningKeyFromAnotherRoot:
            // The signer chains to a root that is not this path's trust anchor (§6.3.3 (f)).
            let s = try setup()
            let other = try TrustPKI.root("Other Root", slot: TrustSlot.otherRoot)
            let signer = try s.crlSigner(issuer: other)
            let crls = [try s.rootCRL(), try TrustPKI.crl(LabCRLSpec(), signedBy: signer)]
            let outcome = try TrustPKI.validate(
                s.leaf, [s.intermediate.certificate, signer.certificate], anchors: [s.root.certificate, other.certificate],
                policy: TrustPKI.revocationPolicy(profile: profile), checks: [CRLCheck(crls + [try TrustPKI.crl(LabCRLSpec(), signedBy: other)])])
            return (outcome, .revocationStatusUnknown, 0)
        case .issuerWithoutCRLSign:
            let s = try setup(intermediateKeyUsage: [.keyCertSign])
            return (try s.validate([try s.rootCRL(), try s.crl(LabCRLSpec())]), .revocationStatusUnknown, 0)
        case .distributionPointWithNonURIName:
            // RFC 5280 matches the shared URI; the BRs allow URIs only in the point.
            let s = try setup(leafExtras: [.distributionPoints([LabDistributionPoint(name: .fullName([.uri(pointA), .dns("crl.example")]))])])
            return (try s.validate([try s.rootCRL(), try s.crl(idp { $0.name = .fullName([.uri(pointA)]) })]), nil, nil)
        case .partitionNamedByNonURI:
            let s = try setup(leafExtras: [.crlDistributionPoints([pointA])])
            return (try s.validate([try s.rootCRL(), try s.crl(idp { $0.name = .fullName([.uri(pointA), .dns("crl.example")]) })]), nil, nil)
        case .directCRLMarkedIndirect:
            // The CRL's own issuer's certificates are covered by an indirect CRL (PKITS 4.14.22).
            let s = try setup(leafExtras: [.crlDistributionPoints([pointA])])
            return (
                try s.validate([
                    try s.rootCRL(),
                    try s.crl(
                        idp {
                            $0.name = .fullName([.uri(pointA)])
                            $0.indirectCRL = true
                        }),
                ]), nil, nil
            )
        case .serialListedTwice:
            let s = try setup()
            let twice = [LabRevokedEntry(serial: [0x7C], reason: 1), LabRevokedEntry(serial: [0x7C], reason: 4)]
            return (try s.validate([try s.rootCRL(), try s.crl(LabCRLSpec(entries: twice))]), nil, nil)
        }
    }

    @Test("each scope, reason, delta and signer rule, under both profiles", arguments: Case.allCases, [ValidationPolicy.Profile.webPKI, .rfc5280])
    func rule(_ c: Case, profile: ValidationPolicy.Profile) throws {
        var (outcome, kind, index) = try Self.run(c, profile: profile)
        if profile == .webPKI, let webPKI = c.webPKI { (kind, index) = webPKI }
        if let kind {
            expectRejected(outcome, kind, at: index)
        } else {
            #expect(outcome.isTrusted, "rejected: \(outcome.failure.map(\.description) ?? "")")
        }
    }

    /// §6.3.3 (f): a key rollover, root → Rollover CA (old key) → Rollover CA (new key,
    /// self-issued) → leaf. A CRL of "Rollover CA" signed with the new key speaks for the leaf,
    /// but not for the self-issued certificate of that very key: whoever holds a revoked key
    /// would otherwise sign a CRL that clears it. The old key's CRL decides it.
    @Test("a self-issued CA's own key does not sign the CRL that settles that CA", arguments: [ValidationPolicy.Profile.webPKI, .rfc5280])
    func selfIssuedKeyDoesNotClearItself(profile: ValidationPolicy.Profile) throws {
        let root = try TrustPKI.root()
        let old = try root.issueCA("Rollover CA", slot: TrustSlot.intermediate, pathLength: 0)
        let link = try old.issueCA(TrustPKI.caSpec("Rollover CA"), key: TrustPKI.key(TrustSlot.rollover))
        let leaf = try link.issueLeaf()
        let rootCRL = try TrustPKI.crl(LabCRLSpec(), signedBy: root)
        let byNewKey = try TrustPKI.crl(LabCRLSpec(), signedBy: link)
        func validate(_ crls: [CertificateRevocationList]) throws -> ValidationOutcome {
            try TrustPKI.validate(
                leaf, [link.certificate, old.certificate], anchors: [root.certificate], policy: TrustPKI.revocationPolicy(profile: profile),
                checks: [CRLCheck(crls)])
        }
        // The new key's CRL alone settles the leaf, not the link.
        let alone = try validate([byNewKey, rootCRL])
        expectRejected(alone, .revocationStatusUnknown, at: 1)
        #expect(alone.failure?.detail.contains("signed with the key of the certificate") == true, "\(String(describing: alone.failure))")
        // The old key's CRL revoking the link wins, whichever comes first.
        let revokesLink = try TrustPKI.crl(LabCRLSpec(entries: [LabRevokedEntry(serial: link.certificate.serialNumber, reason: 1)]), signedBy: old)
        expectRejected(try validate([byNewKey, revokesLink, rootCRL]), .revoked, at: 1)
        // The old key's clean CRL settles the link; the new key's, the leaf.
        let clean = try validate([byNewKey, try TrustPKI.crl(LabCRLSpec(), signedBy: old), rootCRL])
        #expect(clean.isTrusted, "\(String(describing: clean.failure))")
    }

    @Test("the failure for an undetermined status says which CRLs were not usable and why")
    func undeterminedReason() throws {
        let s = try Setup()
        var spec = LabCRLSpec()
        spec.extensions = [.raw(oid: "1.3.6.1.4.1.99999.5", critical: true, valueDER: LabDER.null())]
        let failure = try #require(try s.validate([try s.rootCRL(), try s.crl(spec)]).failure)
        #expect(failure.kind == .revocationStatusUnknown)
        #expect(failure.detail.contains("unhandled critical extension 1.3.6.1.4.1.99999.5"), "\(failure)")
        #expect(failure.subject == "CN=www.example.com")
    }
}
