import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

/// Pins count only on proven certificates (``ProvenChain``), from the attacker's side: a man in
/// the middle appends the genuine, public, pinned leaf, intermediate or root to its own chain
/// (OkHttp's CVE-2016-2402), with no trusted CA at all (a self-signed leaf) or with an
/// interception CA the user trusts (Charles). Every pinning configuration refuses every such
/// chain, in every mode, pin kind and scope, compat and strict, each evaluator with validation
/// on and off, through a manager and from a policy file, while the genuine server is accepted by
/// each of them.
@Suite("pins count only on proven certificates: appended genuine certificates never match")
struct ProvenChainTests {
    static let f = PolicyFixtures.shared
    static let host = PolicyFixtures.host

    /// Where the pinned genuine certificate sits in the genuine chain.
    enum Pinned: String, CaseIterable, Sendable {
        case leaf, intermediate, root

        var certificate: Certificate {
            switch self {
            case .leaf: return ProvenChainTests.f.validChain[0]
            case .intermediate: return ProvenChainTests.f.intermediate
            case .root: return ProvenChainTests.f.root
            }
        }
    }

    /// An attacker's leaf that names the genuine intermediate as its issuer (subject and
    /// authority key identifier) but is signed by the attacker's own key.
    static let forgedIssuerLeaf: Certificate = {
        do {
            let key = try LabKey.shared(.p256, slot: PolicySlot.attacker)
            let forged = try LabCertificate.issue(
                LabPKI.leafSpec(host: host, keyAlgorithm: .p256), subjectKey: key,
                issuer: LabIssuer(certificate: f.pki.intermediate, key: key))
            return try Certificate(derEncoded: forged.der)
        } catch {
            preconditionFailure("fixture: \(error)")
        }
    }()

    /// The attacker's chains that carry `pinned`, each as the attacker would serve it.
    static func attacks(appending pinned: Certificate) -> [(String, [Certificate])] {
        let genuine = [f.validChain[0], f.intermediate, f.root]
        return [
            ("self-signed leaf + pinned", [f.attacker, pinned]),
            ("self-signed leaf + the whole genuine chain", [f.attacker] + genuine),
            ("leaf naming the genuine intermediate + pinned", [forgedIssuerLeaf, pinned]),
            ("leaf naming the genuine intermediate + the genuine chain reordered", [forgedIssuerLeaf, f.root, f.intermediate, f.validChain[0]]),
            ("trusted interception CA + pinned", f.interceptedChain + [pinned]),
            ("trusted interception CA + its root + the genuine chain", f.interceptedChain + [f.interceptionRoot] + genuine.reversed()),
        ]
    }

    /// One pinning configuration, and which pin positions the genuine server must pass with.
    struct Configuration: Sendable, CustomTestStringConvertible {
        let name: String
        let make: @Sendable (Certificate) throws -> any ServerTrustEvaluating
        /// Pin positions the genuine chain is accepted with: every position in the pins' scope,
        /// validated or not (without validation the signature chain proves the issuers too).
        let genuineAccepted: Set<Pinned>
        var testDescription: String { name }
    }

    static let backup = f.backupPin

    static func spki(_ certificate: Certificate, scope: PinScope, validate: Bool) throws -> SPKIPinsTrustEvaluator {
        let configuration = try PinningConfiguration([
            PinnedHost(pattern: try HostPattern("**.example.test"), pins: [SPKIPin(certificate: certificate, scope: scope), backup])
        ])
        return SPKIPinsTrustEvaluator(configuration: configuration, performDefaultValidation: validate, validateHost: validate)
    }

    static let all = Set(Pinned.allCases)

    static let configurations: [Configuration] = {
        var list: [Configuration] = []
        for semantics in PolicySemantics.allCases {
            for mode in [PinningMode.publicKey, .certificate] {
                for allowInvalid in [false, true] {
                    for validatesDomain in [true, false] {
                        list.append(
                            Configuration(
                                name: "SecurityPolicy \(semantics) \(mode) allowInvalid=\(allowInvalid) validatesDomainName=\(validatesDomain)",
                                make: {
                                    SecurityPolicy(
                                        pinningMode: mode, pinnedCertificates: [$0], allowInvalidCertificates: allowInvalid,
                                        validatesDomainName: validatesDomain, semantics: semantics)
                                },
                                genuineAccepted: all))
                    }
                }
            }
        }
        for (validate, accepted) in [(true, all), (false, all)] {
            for selfSigned in [false, true] {
                list.append(
                    Configuration(
                        name: "PinnedCertificatesTrustEvaluator acceptSelfSigned=\(selfSigned) validation=\(validate)",
                        make: {
                            PinnedCertificatesTrustEvaluator(
                                certificates: [$0], acceptSelfSignedCertificates: selfSigned, performDefaultValidation: validate, validateHost: validate)
                        }, genuineAccepted: accepted))
            }
            list.append(
                Configuration(
                    name: "PublicKeysTrustEvaluator validation=\(validate)",
                    make: { PublicKeysTrustEvaluator(certificates: [$0], performDefaultValidation: validate, validateHost: validate) },
                    genuineAccepted: accepted))
            for scope in PinScope.allCases {
                let inScope: Set<Pinned> = scope == .leaf ? [.leaf] : scope == .ca ? [.intermediate, .root] : all
                list.append(
                    Configuration(
                        name: "SPKIPinsTrustEvaluator scope=\(scope) validation=\(validate)",
                        make: { try spki($0, scope: scope, validate: validate) }, genuineAccepted: accepted.intersection(inScope)))
            }
        }
        // Validation by one evaluator, pins by the next (Alamofire's composite idiom): the pins
        // see the path the first one validated.
        list.append(
            Configuration(
                name: "composite [default, public keys without validation]",
                make: {
                    CompositeTrustEvaluator(evaluators: [
                        DefaultTrustEvaluator(), PublicKeysTrustEvaluator(certificates: [$0], performDefaultValidation: false, validateHost: false),
                    ])
                }, genuineAccepted: all))
        list.append(
            Configuration(
                name: "composite [default, SPKI pins without validation]",
                make: { CompositeTrustEvaluator(evaluators: [DefaultTrustEvaluator(), try spki($0, scope: .any, validate: false)]) },
                genuineAccepted: all))
        list.append(
            Configuration(
                name: "ServerTrustManager rule with SPKI pins",
                make: {
                    try ServerTrustManager(evaluators: ["**.example.test": try spki($0, scope: .any, validate: true)])
                }, genuineAccepted: all))
        return list
    }()

    @Test("every pinning configuration refuses every attacker chain that appends the pinned certificate", arguments: configurations)
    func attackerAppendsPinned(_ configuration: Configuration) throws {
        for pinned in Pinned.allCases {
            let evaluator = try configuration.make(pinned.certificate)
            for (attack, chain) in Self.attacks(appending: pinned.certificate) {
                let decision = evaluator.decide(Self.f.trust(chain), forHost: Self.host)
                #expect(!decision.isTrusted, "\(attack), pinned \(pinned): \(decision)\n\(decision.explanation)")
            }
        }
    }

    @Test("every pinning configuration accepts the genuine server", arguments: configurations)
    func genuineAccepted(_ configuration: Configuration) throws {
        for pinned in configuration.genuineAccepted {
            let evaluator = try configuration.make(pinned.certificate)
            let decision = evaluator.decide(Self.f.trust(Self.f.validChain), forHost: Self.host)
            #expect(decision.isTrusted, "pinned \(pinned): \(decision)\n\(decision.explanation)")
        }
    }

    @Test("policy files and TrustKit configurations refuse the appended pin and accept the genuine server")
    func policyFiles() throws {
        let directory = try PolicyFixtures.temporaryDirectory()
        for pinned in Pinned.allCases {
            let path = directory + "/\(pinned).pem"
            try pinned.certificate.pemString.write(toFile: path, atomically: true, encoding: .utf8)
            let pin = "sha256/" + pinned.certificate.spkiSHA256Base64
            let documents = [
                #"{"version": 1, "hosts": [{"host": "**.example.test", "pins": ["\#(pin)", "\#(Self.backup)"]}]}"#,
                #"{"version": 1, "hosts": [{"host": "**.example.test", "pins": ["\#(pin)", "\#(Self.backup)"], "performDefaultValidation": false, "validateHost": false}]}"#,
                #"{"version": 1, "hosts": [{"host": "**.example.test", "evaluator": "publicKeys", "certificates": ["\#(pinned).pem"]}]}"#,
                #"{"version": 1, "hosts": [{"host": "**.example.test", "evaluator": "pinnedCertificates", "certificates": ["\#(pinned).pem"], "performDefaultValidation": false, "validateHost": false}]}"#,
                #"{"version": 1, "semantics": "compat", "hosts": [{"host": "**.example.test", "pinningMode": "publicKey", "allowInvalidCertificates": true, "certificates": ["\#(pinned).pem"]}]}"#,
                #"{"version": 1, "hosts": [{"host": "**.example.test", "evaluator": ["default", "publicKeys"], "certificates": ["\#(pinned).pem"], "performDefaultValidation": false}]}"#,
                #"{"kTSKPinnedDomains": {"example.test": {"kTSKIncludeSubdomains": true, "kTSKPublicKeyHashes": ["\#(pinned.certificate.spkiSHA256Base64)", "\#(Base64.encode(Self.backup.digest))"]}}}"#,
            ]
            for document in documents {
                let manager = try PolicyFile.parse(Array(document.utf8), baseDirectory: directory)
                for (attack, chain) in Self.attacks(appending: pinned.certificate) {
                    let decision = manager.decide(Self.f.trust(chain), forHost: Self.host)
                    #expect(!decision.isTrusted, "\(document)\n\(attack), pinned \(pinned): \(decision)")
                }
                // Validated or not, the genuine server's pinned certificate is on what was proven.
                let genuine = manager.decide(Self.f.trust(Self.f.validChain), forHost: Self.host)
                #expect(genuine.isTrusted, "\(document)\npinned \(pinned): \(genuine)")
            }
        }
    }

    @Test("without a validated path the signature chain is proven: the leaf and each certificate that signed the one before")
    func derivations() throws {
        let f = Self.f
        // Validated: the whole path, anchor included, never the strays the server added.
        let validated = f.trust(f.validChain + [f.selfSigned, f.interceptionRoot])
        let path = validated.provenChain(after: validated.evaluate())
        #expect(path.basis == .validatedPath && path.certificates == f.validChain + [f.root])
        // No validation: the leaf and the issuers whose keys verify the signature below, from
        // what was served and from the anchors; the appended strays and a same-named forgery
        // are not on it.
        let unvalidated = validated.provenChain(after: nil)
        #expect(unvalidated.basis == .signatureChain && unvalidated.certificates == f.validChain + [f.root])
        let forged = f.trust([Self.forgedIssuerLeaf, f.intermediate, f.root]).provenChain(after: nil)
        #expect(forged.certificates == [Self.forgedIssuerLeaf])
        let selfSigned = f.trust([f.attacker, f.intermediate, f.root]).provenChain(after: nil)
        #expect(selfSigned.certificates == [f.attacker])
        // The chain of an interception proxy ends at its root: the genuine CA it appended is not on it.
        let intercepted = f.trust(f.interceptedChain + [f.intermediate]).provenChain(after: nil)
        #expect(intercepted.certificates == f.interceptedChain + [f.interceptionRoot])
        // The expired genuine leaf: dates are not checked, signatures are.
        #expect(f.trust(f.expiredChain).provenChain(after: nil).certificates == f.expiredChain + [f.root])
        // SecTrustCopyCertificateChain of an untrusted trust is that same chain.
        #expect(f.trust([f.attacker, f.intermediate]).certificateChain() == [f.attacker])
    }
}
