import CertificateParsing
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

/// RFC 6960 §3.2 and §4.2.2.2 for a stapled response: who may sign (the issuer, or a responder it
/// delegated with id-kp-OCSPSigning), which certificate a response speaks for (CertID with SHA-1,
/// SHA-256, SHA-384 and SHA-512 hashes), when it is current, and that anything else is
/// `unknown` (ignored), never `good`. Responses are generated and signed by ServerTrustLab.
@Suite("Stapled OCSP verification (RFC 6960 3.2, 4.2.2.2)")
struct OCSPResponseVerifierTests {
    static let now = LabClock.reference
    static let day = LabClock.day

    /// root → intermediate → leaf, plus keys for responders.
    struct Setup {
        let pki: LabPKI
        let leaf: Certificate
        let issuer: Certificate
        let verifier = OCSPResponseVerifier()

        init() throws {
            pki = try LabPKI.webChain(host: "staple.example", keySlot: 134)
            leaf = try Certificate(derEncoded: pki.leaf.der)
            issuer = try Certificate(derEncoded: pki.intermediate.der)
        }

        static func key(_ n: Int) throws -> LabKey { try LabKey.shared(.p256, slot: 3 * 134 + 3 + n) }

        func responder(
            extendedKeyUsage: [String] = ["OCSPSigning"], noCheck: Bool = true, issuer: LabIssuer? = nil, key: Int = 0,
            notAfter: Int64 = LabClock.reference + 60 * LabClock.day
        ) throws -> LabIssuer {
            let certificate = try LabOCSP.responderCertificate(
                issuer: issuer ?? pki.intermediateIssuer, key: try Setup.key(key), extendedKeyUsage: extendedKeyUsage, noCheck: noCheck,
                notAfter: notAfter)
            return try certificate.asIssuer()
        }

        func check(_ der: [UInt8], at time: Int64 = OCSPResponseVerifierTests.now) -> OCSPCheck {
            verifier.check(der, for: leaf, issuedBy: issuer, at: time)
        }

        func response(status: LabOCSPStatus = .good, digest: LabDigest = .sha1, signer: LabIssuer? = nil, validity: Int64? = 4 * LabClock.day) throws
            -> [UInt8]
        {
            try LabOCSP.response(for: pki.leaf, issuer: pki.intermediateIssuer, status: status, validity: validity, digest: digest, signer: signer)
        }

        /// A response whose single response is `single` and whose spec `change` adjusts.
        func response(_ single: LabOCSPSingleResponse, signer: LabIssuer? = nil, _ change: (inout LabOCSPResponseSpec) -> Void = { _ in }) throws
            -> [UInt8]
        {
            var spec = LabOCSPResponseSpec(responses: [single])
            change(&spec)
            return try LabOCSP.issue(spec, signer: signer ?? pki.intermediateIssuer)
        }

        func single(status: LabOCSPStatus = .good, thisUpdate: Int64, nextUpdate: Int64?) throws -> LabOCSPSingleResponse {
            LabOCSPSingleResponse(certID: try .of(pki.leaf, issuer: pki.intermediate), status: status, thisUpdate: thisUpdate, nextUpdate: nextUpdate)
        }
    }

    @Test("signed by the issuer: good with each CertID hash", arguments: [LabDigest.sha1, .sha256, .sha384, .sha512])
    func issuerSigned(digest: LabDigest) throws {
        let setup = try Setup()
        let result = setup.check(try setup.response(digest: digest))
        #expect(result.status == .good, "\(result)")
        #expect(result.evidence?.responder == .issuer)
        let expected: [LabDigest: DigestAlgorithm] = [.sha1: .sha1, .sha256: .sha256, .sha384: .sha384, .sha512: .sha512]
        #expect(result.evidence?.certIDDigest == expected[digest])
        #expect(result.evidence?.thisUpdate.secondsSince1970 == Self.now - 3600)
    }

    @Test("the issuer named by name works as by key")
    func issuerByName() throws {
        let setup = try Setup()
        let der = try setup.response(try setup.single(thisUpdate: Self.now - 3600, nextUpdate: Self.now + Self.day)) { $0.responderID = .byName }
        let result = setup.check(der)
        #expect(result.status == .good && result.evidence?.responder == .issuer, "\(result)")
    }

    @Test("revoked from the issuer: the reason and time are reported; without a reason too")
    func revoked() throws {
        let setup = try Setup()
        let at = Self.now - 2 * Self.day
        let withReason = setup.check(try setup.response(status: .revoked(time: at, reason: 1)))
        #expect(withReason.status == .revoked(reason: .keyCompromise, time: ASN1Time(secondsSince1970: at)), "\(withReason)")
        let without = setup.check(try setup.response(status: .revoked(time: at, reason: nil)))
        #expect(without.status == .revoked(reason: nil, time: ASN1Time(secondsSince1970: at)), "\(without)")
        #expect("\(withReason)".contains("revoked at 2025-12-30T00:00:00Z (keyCompromise)"))
    }

    @Test("the responder's unknown is unknown, with its evidence")
    func responderUnknown() throws {
        let setup = try Setup()
        let result = setup.check(try setup.response(status: .unknown))
        #expect(result.status == .unknown(.responderDoesNotKnow))
        #expect(result.evidence?.responder == .issuer)
    }

    @Test("a delegated responder (id-kp-OCSPSigning, issued by the issuer): good and revoked; nocheck is recorded")
    func delegated() throws {
        let setup = try Setup()
        let responder = try setup.responder()
        let good = setup.check(try setup.response(digest: .sha256, signer: responder))
        #expect(good.status == .good, "\(good)")
        guard case .delegated(let certificate, let noCheck)? = good.evidence?.responder else {
            Issue.record("responder is \(String(describing: good.evidence))")
            return
        }
        #expect(certificate.derBytes == responder.certificate.der && noCheck)
        let revoked = setup.check(try setup.response(status: .revoked(time: Self.now - Self.day, reason: 4), signer: responder))
        #expect(revoked.status == .revoked(reason: .superseded, time: ASN1Time(secondsSince1970: Self.now - Self.day)))
        let plain = setup.check(try setup.response(signer: try setup.responder(noCheck: false, key: 1)))
        #expect(plain.status == .good)
        if case .delegated(_, let noCheck)? = plain.evidence?.responder { #expect(!noCheck) } else { Issue.record("\(plain)") }
    }

    /// Signers the issuer did not authorize, each with a `good` (and a `revoked`) response:
    /// every one is ignored.
    enum Undelegated: String, CaseIterable, CustomTestStringConvertible {
        case serverAuthOnly = "a responder certificate with EKU serverAuth"
        case anyExtendedKeyUsage = "a responder certificate with anyExtendedKeyUsage only"
        case noExtendedKeyUsage = "a responder certificate without EKU"
        case issuedByTheRoot = "an OCSPSigning certificate from the root, not from the leaf's issuer"
        case sameNameOtherKey = "an OCSPSigning certificate with the issuer's name, signed by another key"
        case keyNotInCerts = "a key named by responderID, no certificate for it"
        case leafKey = "the leaf's own key, the leaf named as responder"
        case expiredResponder = "an OCSPSigning certificate that expired"
        case issuerNamedOtherKey = "responderID names the issuer, another key signs"
        var testDescription: String { rawValue }
    }

    @Test("a staple signed by an undelegated key is unknown, never good or revoked", arguments: Undelegated.allCases)
    func undelegated(_ shape: Undelegated) throws {
        let setup = try Setup()
        let other = try Setup.key(5)
        let otherIssuer = LabIssuer(certificate: setup.pki.intermediate, key: other)
        func signed(_ status: LabOCSPStatus) throws -> [UInt8] {
            let single = try setup.single(status: status, thisUpdate: Self.now - 3600, nextUpdate: Self.now + Self.day)
            switch shape {
            case .serverAuthOnly:
                let r = try setup.responder(extendedKeyUsage: ["serverAuth"], key: 2)
                return try setup.response(single, signer: r) { $0.certificates = [r.certificate] }
            case .anyExtendedKeyUsage:
                let r = try setup.responder(extendedKeyUsage: ["anyExtendedKeyUsage"], key: 2)
                return try setup.response(single, signer: r) { $0.certificates = [r.certificate] }
            case .noExtendedKeyUsage:
                let r = try setup.responder(extendedKeyUsage: [], key: 2)
                return try setup.response(single, signer: r) { $0.certificates = [r.certificate] }
            case .issuedByTheRoot:
                let r = try setup.responder(issuer: setup.pki.rootIssuer, key: 2)
                return try setup.response(single, signer: r) { $0.certificates = [r.certificate] }
            case .sameNameOtherKey:
                let r = try setup.responder(issuer: otherIssuer, key: 2)
                return try setup.response(single, signer: r) { $0.certificates = [r.certificate] }
            case .keyNotInCerts:
                return try setup.response(single, signer: LabIssuer(certificate: try setup.responder(key: 2).certificate, key: try Setup.key(2)))
            case .leafKey:
                return try setup.response(single, signer: LabIssuer(certificate: setup.pki.leaf, key: setup.pki.leafKey)) {
                    $0.certificates = [setup.pki.leaf]
                }
            case .expiredResponder:
                let r = try setup.responder(key: 2, notAfter: Self.now - Self.day)
                return try setup.response(single, signer: r) { $0.certificates = [r.certificate] }
            case .issuerNamedOtherKey:
                return try setup.response(single, signer: otherIssuer) { $0.responderID = .byName }
            }
        }
        for status in [LabOCSPStatus.good, .revoked(time: Self.now - Self.day, reason: 1)] {
            let result = setup.check(try signed(status))
            guard case .unknown(let reason) = result.status else {
                Issue.record("\(shape.rawValue) gave \(result)")
                continue
            }
            switch reason {
            case .unauthorizedResponder, .badSignature: break
            default: Issue.record("\(shape.rawValue): unexpected reason \(reason)")
            }
            #expect(result.evidence == nil)
        }
    }

    @Test("a CertID that names another certificate is no answer for this one")
    func wrongCertID() throws {
        let setup = try Setup()
        let good = try LabOCSPCertID.of(setup.pki.leaf, issuer: setup.pki.intermediate)
        let otherLeaf = try setup.pki.issueLeaf(host: "other.staple.example")
        let otherCA = try LabPKI.webChain(host: "other-ca.example", keySlot: 136)
        var ids: [(String, LabOCSPCertID)] = []
        ids.append(("another serial", try .of(otherLeaf, issuer: setup.pki.intermediate)))
        var name = good
        name.issuerNameHash[0] ^= 1
        ids.append(("another issuer name", name))
        var key = good
        key.issuerKeyHash = try LabDigest.sha1.hash(Array(try Certificate(derEncoded: otherCA.intermediate.der).subjectPublicKeyInfo.subjectPublicKey.bytes))
        ids.append(("another issuer key", key))
        var md5 = good
        md5.digest = .md5
        md5.issuerNameHash = try LabDigest.md5.hash(setup.pki.leaf.issuerNameDER)
        md5.issuerKeyHash = try LabDigest.md5.hash(Array(setup.issuer.subjectPublicKeyInfo.subjectPublicKey.bytes))
        ids.append(("an MD5 CertID", md5))
        for (what, id) in ids {
            let der = try setup.response(LabOCSPSingleResponse(certID: id, thisUpdate: Self.now - 3600, nextUpdate: Self.now + Self.day))
            #expect(setup.check(der).status == .unknown(.noResponseForCertificate), "\(what)")
        }
        // The right CertID after a wrong one is found.
        var spec = LabOCSPResponseSpec(responses: [
            LabOCSPSingleResponse(certID: ids[0].1, status: .revoked(time: Self.now, reason: 1)), LabOCSPSingleResponse(certID: good),
        ])
        spec.producedAt = Self.now - 3600
        #expect(setup.check(try LabOCSP.issue(spec, signer: setup.pki.intermediateIssuer)).status == .good)
    }

    /// Windows around `now`, in seconds relative to it, with what the check must say.
    struct Window: CustomTestStringConvertible, Sendable {
        let name: String
        let thisUpdate: Int64
        let nextUpdate: Int64?
        let current: Bool
        var testDescription: String { name }
    }

    static let windows: [Window] = [
        Window(name: "current", thisUpdate: -3600, nextUpdate: 3 * day, current: true),
        Window(name: "stale: nextUpdate an hour ago", thisUpdate: -4 * day, nextUpdate: -3600, current: false),
        Window(name: "nextUpdate within the skew", thisUpdate: -4 * day, nextUpdate: -200, current: true),
        Window(name: "future: thisUpdate in an hour", thisUpdate: 3600, nextUpdate: 4 * day, current: false),
        Window(name: "thisUpdate within the skew", thisUpdate: 200, nextUpdate: 4 * day, current: true),
        Window(name: "no nextUpdate, thisUpdate an hour ago", thisUpdate: -3600, nextUpdate: nil, current: true),
        Window(name: "no nextUpdate, thisUpdate two days ago", thisUpdate: -2 * day, nextUpdate: nil, current: false),
        Window(name: "a 40-day window, 11 days in: cut at 10 days", thisUpdate: -11 * day, nextUpdate: 29 * day, current: false),
        Window(name: "nextUpdate before thisUpdate", thisUpdate: -3600, nextUpdate: -7200, current: false),
    ]

    @Test("currency: thisUpdate and nextUpdate against now, skew and the maximum ages", arguments: windows)
    func currency(_ window: Window) throws {
        let setup = try Setup()
        let single = try setup.single(thisUpdate: Self.now + window.thisUpdate, nextUpdate: window.nextUpdate.map { Self.now + $0 })
        let result = setup.check(try setup.response(single))
        if window.current {
            #expect(result.status == .good, "\(result)")
        } else {
            guard case .unknown(.notCurrent) = result.status else {
                Issue.record("\(window.name): \(result)")
                return
            }
            #expect(result.evidence?.responder == .issuer, "the response was attributed before its window was judged")
        }
    }

    @Test("an error status, garbage and an unknown critical extension are unknown")
    func unusable() throws {
        let setup = try Setup()
        #expect(setup.check(LabOCSP.unsuccessful(3)).status == .unknown(.unsuccessful(.tryLater)))
        guard case .unknown(.malformed) = setup.check([0x30, 0x03, 0x0A, 0x01]).status else {
            Issue.record("garbage was not malformed")
            return
        }
        let critical = try setup.response(try setup.single(thisUpdate: Self.now - 3600, nextUpdate: Self.now + Self.day)) {
            $0.extensions = [.raw(oid: "1.3.6.1.4.1.99999.30", critical: true, valueDER: LabDER.null())]
        }
        #expect(setup.check(critical).status == .unknown(.unhandledCriticalExtension("1.3.6.1.4.1.99999.30")))
        let nonce = try setup.response(try setup.single(thisUpdate: Self.now - 3600, nextUpdate: Self.now + Self.day)) {
            $0.extensions = [.raw(oid: "1.3.6.1.5.5.7.48.1.2", critical: true, valueDER: LabDER.octetString([1]))]
        }
        #expect(setup.check(nonce).status == .good, "a critical nonce is understood")
    }

    @Test("a SHA-1 signature on the response is refused unless SHA-1 is allowed")
    func sha1Signature() throws {
        let setup = try Setup()
        let der = try setup.response(try setup.single(thisUpdate: Self.now - 3600, nextUpdate: Self.now + Self.day)) {
            $0.signatureScheme = .ecdsa(.sha1)
        }
        #expect(setup.check(der).status == .unknown(.algorithmNotAllowed(.ecdsa(.sha1))))
        let lenient = OCSPResponseVerifier(allowsSHA1Signatures: true)
        #expect(lenient.check(der, for: setup.leaf, issuedBy: setup.issuer, at: Self.now).status == .good)
    }

    @Test("every signature check goes through the SignatureVerifier seam; a seam that refuses makes nothing good")
    func seam() throws {
        let setup = try Setup()
        let counting = CountingVerifier(refuses: false)
        let verifier = OCSPResponseVerifier(signatureVerifier: counting)
        let delegated = try setup.response(signer: try setup.responder())
        #expect(verifier.check(delegated, for: setup.leaf, issuedBy: setup.issuer, at: Self.now).status == .good)
        #expect(counting.checks == 2, "the responder certificate and the response: \(counting.checks)")
        let refusing = OCSPResponseVerifier(signatureVerifier: CountingVerifier(refuses: true))
        for der in [delegated, try setup.response()] {
            guard case .unknown = refusing.check(der, for: setup.leaf, issuedBy: setup.issuer, at: Self.now).status else {
                Issue.record("a response was trusted although the seam refused its signature")
                continue
            }
        }
    }

    @Test("a staple packed with look-alike responder certificates costs a bounded number of signature checks")
    func boundedCandidates() throws {
        let setup = try Setup()
        let fake = try setup.responder(issuer: LabIssuer(certificate: setup.pki.intermediate, key: try Setup.key(5)), key: 2)
        let der = try setup.response(try setup.single(thisUpdate: Self.now - 3600, nextUpdate: Self.now + Self.day), signer: fake) {
            $0.certificates = Array(repeating: fake.certificate, count: 50)
        }
        let counting = CountingVerifier(refuses: false)
        let result = OCSPResponseVerifier(signatureVerifier: counting).check(der, for: setup.leaf, issuedBy: setup.issuer, at: Self.now)
        guard case .unknown(.unauthorizedResponder) = result.status else {
            Issue.record("\(result)")
            return
        }
        #expect(counting.checks <= OCSPResponseVerifier<CountingVerifier>.maximumResponderCandidates, "\(counting.checks) checks")
    }
}
