import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

/// With validation off (`allowInvalidCertificates`, `performDefaultValidation: false` without
/// `validateHost`, an `spkiPins` entry with validation off), pins are compared with the
/// signature chain: the leaf and each certificate that verifiably signed the one before it,
/// never one merely present. So a pin on the genuine intermediate accepts the genuine chain,
/// expired leaf included, and refuses a self-signed leaf with the genuine intermediate appended;
/// and the Alamofire-style evaluators behave as Alamofire's, whose pins compare with
/// `SecTrustCopyCertificateChain` of a trust they did not evaluate.
@Suite("validation off: pins compare with the signature chain")
struct SignatureChainPinsTests {
    static let f = PolicyFixtures.shared
    static let x = CrossSignFixture.shared
    static let host = PolicyFixtures.host

    static let configurations: [PinConfiguration] = [
        PinConfiguration(name: "PublicKeysTrustEvaluator, performDefaultValidation and validateHost false") {
            PublicKeysTrustEvaluator(certificates: [$0], performDefaultValidation: false, validateHost: false)
        },
        PinConfiguration(name: "PinnedCertificatesTrustEvaluator, performDefaultValidation and validateHost false") {
            PinnedCertificatesTrustEvaluator(certificates: [$0], performDefaultValidation: false, validateHost: false)
        },
        PinConfiguration(name: "SPKIPinsTrustEvaluator, performDefaultValidation and validateHost false") {
            SPKIPinsTrustEvaluator(
                configuration: try PinningConfiguration([try PinConfiguration.pinSet($0)]), performDefaultValidation: false, validateHost: false)
        },
        PinConfiguration(name: "policy file spkiPins with validation off") { certificate in
            let document = #"""
                {"version": 1, "hosts": [{"host": "\#(host)", "pins": ["sha256/\#(certificate.spkiSHA256Base64)", "\#(f.backupPin)"],
                 "performDefaultValidation": false, "validateHost": false}]}
                """#
            return try PolicyFile.parse(Array(document.utf8))
        },
        PinConfiguration(name: "TrustPolicy: SecurityPolicy allowInvalidCertificates, then the host's SPKI pins") {
            TrustPolicy(
                HostTrustPolicy(evaluator: SecurityPolicy(allowInvalidCertificates: true, validatesDomainName: false), pins: try PinConfiguration.pinSet($0)))
        },
        PinConfiguration(name: "SecurityPolicy compat public-key with allowInvalidCertificates") {
            SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [$0], allowInvalidCertificates: true, semantics: .compat)
        },
    ]

    /// An attacker's leaf that names the genuine intermediate as its issuer but is signed by
    /// the attacker's key.
    static let forgedIssuerLeaf: Certificate = {
        do {
            let key = try LabKey.shared(.p256, slot: PolicySlot.attacker)
            let forged = try LabCertificate.issue(
                LabPKI.leafSpec(host: host, keyAlgorithm: .p256), subjectKey: key, issuer: LabIssuer(certificate: f.pki.intermediate, key: key))
            return try Certificate(derEncoded: forged.der)
        } catch {
            preconditionFailure("fixture: \(error)")
        }
    }()

    @Test("a pin on the genuine intermediate accepts the genuine chain, expired leaf included", arguments: configurations)
    func genuineAccepted(_ configuration: PinConfiguration) throws {
        let evaluator = try configuration.make(Self.f.intermediate)
        for chain in [Self.f.validChain, Self.f.expiredChain, [Self.f.validChain[0], Self.f.root, Self.f.intermediate]] {
            let decision = evaluator.decide(Self.f.trust(chain), forHost: Self.host)
            #expect(decision.isTrusted, "\(decision.explanation)")
        }
        // The root the trust's anchors hold signed the intermediate: it is on the chain too.
        let byRoot = try configuration.make(Self.f.root).decide(Self.f.trust(Self.f.expiredChain), forHost: Self.host)
        #expect(byRoot.isTrusted, "\(byRoot.explanation)")
    }

    @Test("a self-signed or forged leaf with the genuine intermediate appended is refused", arguments: configurations)
    func appendedIntermediateRefused(_ configuration: PinConfiguration) throws {
        let f = Self.f
        for pinned in [f.intermediate, f.root] {
            let evaluator = try configuration.make(pinned)
            for chain in [
                [f.attacker, f.intermediate], [f.attacker, f.intermediate, f.root], [Self.forgedIssuerLeaf, f.intermediate],
                [Self.forgedIssuerLeaf, f.root, f.intermediate], [f.selfSigned, f.intermediate],
            ] {
                let decision = evaluator.decide(f.trust(chain), forHost: Self.host)
                #expect(!decision.isTrusted, "pinned \(pinned.subject.rfc4514): \(decision.explanation)")
            }
        }
    }

    @Test("the signature chain of a cross-signed server reaches whichever root is pinned", arguments: configurations)
    func crossSignedWithoutValidation(_ configuration: PinConfiguration) throws {
        let x = Self.x
        for pinned in [x.oldRoot, x.newRoot] {
            let evaluator = try configuration.make(pinned)
            for served in x.servedOrders {
                let decision = evaluator.decide(x.trust(served), forHost: Self.host)
                #expect(decision.isTrusted, "pinned \(pinned.subject.rfc4514)\n\(decision.explanation)")
            }
        }
    }

    /// Alamofire (`ServerTrustEvaluation.swift`): with `performDefaultValidation: false` and
    /// `validateHost: false` nothing is evaluated and the pins compare with
    /// `trust.af.certificates`, `SecTrustCopyCertificateChain`: the chain `SecTrust` links by
    /// signatures, to an anchor it knows. With `validateHost: true` there is an evaluation with
    /// the host, and the chain is the validated path; with `performDefaultValidation: true`
    /// alone, one without the host.
    @Test("Alamofire-style evaluators with performDefaultValidation false behave as Alamofire's")
    func alamofireParity() throws {
        let f = Self.f
        let root = [f.root]
        // Nothing evaluated: the pinned CA is on SecTrust's chain, for another host and expired.
        for chain in [f.validChain, f.otherHostChain, f.expiredChain] {
            #expect(
                PublicKeysTrustEvaluator(certificates: root, performDefaultValidation: false, validateHost: false).decide(f.trust(chain), forHost: Self.host)
                    .isTrusted)
            #expect(
                PinnedCertificatesTrustEvaluator(certificates: root, performDefaultValidation: false, validateHost: false).decide(
                    f.trust(chain), forHost: Self.host
                )
                .isTrusted)
        }
        // The record says what the pins were compared with.
        let decision = PublicKeysTrustEvaluator(certificates: root, performDefaultValidation: false, validateHost: false).decide(
            f.trust(f.validChain), forHost: Self.host)
        #expect(decision.record.steps.contains(.pinCandidates(.signatureChain, count: 3)))
        // validateHost alone is still an evaluation with the host: another host's or an expired
        // chain is refused before any pin is compared.
        for chain in [f.otherHostChain, f.expiredChain] {
            let withHost = PublicKeysTrustEvaluator(certificates: root, performDefaultValidation: false).decide(f.trust(chain), forHost: Self.host)
            #expect(!withHost.isTrusted)
            #expect(withHost.failure?.kind != .publicKeyPinningFailed)
        }
        // The pinned CA's certificate appended to an attacker's leaf is not on SecTrust's chain.
        #expect(
            !PinnedCertificatesTrustEvaluator(certificates: [f.intermediate], performDefaultValidation: false, validateHost: false).decide(
                f.trust([f.attacker, f.intermediate]), forHost: Self.host
            ).isTrusted)
    }
}
