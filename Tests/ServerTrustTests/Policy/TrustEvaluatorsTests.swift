import CertificateParsing
import ServerTrust
import Testing
import TrustEvaluation

@Suite("Composable evaluators and ServerTrustManager")
struct TrustEvaluatorsTests {
    let f = PolicyFixtures.shared
    let host = PolicyFixtures.host

    @Test("DefaultTrustEvaluator: chain and host; validateHost false keeps serverAuth")
    func defaultEvaluator() {
        #expect(DefaultTrustEvaluator().decide(f.trust(f.validChain), forHost: host).isTrusted)
        #expect(DefaultTrustEvaluator().decide(f.trust(f.otherHostChain), forHost: host).failure?.kind == .hostValidationFailed)
        #expect(DefaultTrustEvaluator(validateHost: false).decide(f.trust(f.otherHostChain), forHost: host).isTrusted)
        #expect(!DefaultTrustEvaluator(validateHost: false).decide(f.trust(f.clientOnlyChain), forHost: host).isTrusted)
        #expect(!DefaultTrustEvaluator().decide(f.trust(f.expiredChain), forHost: host).isTrusted)
    }

    @Test("PinnedCertificatesTrustEvaluator follows Alamofire's order")
    func pinnedCertificates() {
        #expect(PinnedCertificatesTrustEvaluator(certificates: []).decide(f.trust(f.validChain), forHost: host).failure?.kind == .noCertificatesFound)
        #expect(PinnedCertificatesTrustEvaluator(certificates: [f.root]).decide(f.trust(f.validChain), forHost: host).isTrusted)
        #expect(
            PinnedCertificatesTrustEvaluator(certificates: [f.root]).decide(f.trust(f.interceptedChain), forHost: host).failure?.kind
                == .certificatePinningFailed)
        // A self-signed server: refused unless its certificate becomes the anchor.
        #expect(
            PinnedCertificatesTrustEvaluator(certificates: [f.selfSigned]).decide(f.trust([f.selfSigned]), forHost: host).failure?.kind
                == .chainValidationFailed)
        let selfSigned = PinnedCertificatesTrustEvaluator(certificates: [f.selfSigned], acceptSelfSignedCertificates: true)
        #expect(selfSigned.decide(f.trust([f.selfSigned]), forHost: host).isTrusted)
        #expect(selfSigned.decide(f.trust([f.selfSigned]), forHost: "other.example.test").failure?.kind == .hostValidationFailed)
        // Host validation runs even without default validation.
        let noDefault = PinnedCertificatesTrustEvaluator(certificates: [f.root], performDefaultValidation: false)
        #expect(noDefault.decide(f.trust(f.otherHostChain), forHost: host).failure?.kind == .hostValidationFailed)
        // Without any validation the signature chain is proven (ProvenChain): the pinned root
        // signed the intermediate that signed the leaf, as Alamofire's
        // SecTrustCopyCertificateChain reports it without an evaluation; a pinned root appended
        // to a leaf it did not sign proves nothing.
        let nothing = PinnedCertificatesTrustEvaluator(certificates: [f.root], performDefaultValidation: false, validateHost: false)
        #expect(nothing.decide(f.trust(f.otherHostChain), forHost: host).isTrusted)
        #expect(nothing.decide(f.trust([f.attacker, f.intermediate, f.root]), forHost: host).failure?.kind == .certificatePinningFailed)
        let leafOnly = PinnedCertificatesTrustEvaluator(certificates: [f.otherHostChain[0]], performDefaultValidation: false, validateHost: false)
        #expect(leafOnly.decide(f.trust(f.otherHostChain), forHost: host).isTrusted)
    }

    @Test("PublicKeysTrustEvaluator compares keys along the chain")
    func publicKeys() {
        #expect(PublicKeysTrustEvaluator(keys: []).decide(f.trust(f.validChain), forHost: host).failure?.kind == .noPublicKeysFound)
        #expect(PublicKeysTrustEvaluator(certificates: [f.intermediate]).decide(f.trust(f.validChain), forHost: host).isTrusted)
        let failure = PublicKeysTrustEvaluator(certificates: [f.selfSigned]).decide(f.trust(f.validChain), forHost: host)
        #expect(failure.failure?.kind == .publicKeyPinningFailed)
        #expect(failure.record.configuredPins == ["sha256/" + f.selfSigned.spkiSHA256Base64])
    }

    @Test("CompositeTrustEvaluator: all must pass, in order; empty trusts nothing")
    func composite() throws {
        let both = CompositeTrustEvaluator(evaluators: [DefaultTrustEvaluator(), PublicKeysTrustEvaluator(certificates: [f.root])])
        #expect(both.decide(f.trust(f.validChain), forHost: host).isTrusted)
        let decision = both.decide(f.trust(f.otherHostChain), forHost: host)
        #expect(decision.failure?.kind == .hostValidationFailed, "the first failure decides")
        let pinFails = CompositeTrustEvaluator(evaluators: [DefaultTrustEvaluator(), PublicKeysTrustEvaluator(certificates: [f.selfSigned])])
        let second = pinFails.decide(f.trust(f.validChain), forHost: host)
        #expect(second.failure?.kind == .publicKeyPinningFailed)
        #expect(second.record.steps.first?.description.hasPrefix("[DefaultTrustEvaluator]") == true)
        #expect(!CompositeTrustEvaluator(evaluators: []).decide(f.trust(f.validChain), forHost: host).isTrusted)
        #expect(throws: TrustEvaluationError.self) { try pinFails.evaluate(f.trust(f.validChain), forHost: host) }
    }

    @Test("DisabledTrustEvaluator trusts anything and says it must not be used in production")
    func disabled() {
        let decision = DisabledTrustEvaluator().decide(f.trust([f.attacker]), forHost: host)
        #expect(decision.isTrusted)
        #expect(decision.record.notes.contains { $0.contains("never use it in production") })
    }

    @Test("ServerTrustManager: most specific pattern, unknown hosts fail closed by default")
    func manager() throws {
        let seen = Collector<String>()
        let manager = try ServerTrustManager(
            evaluators: [
                "**.example.test": DisabledTrustEvaluator(),
                "*.example.test": DefaultTrustEvaluator(),
                host: PinnedCertificatesTrustEvaluator(certificates: [f.selfSigned]),
            ],
            observer: { seen.append($0.evaluator) })
        #expect(try manager.serverTrustEvaluator(forHost: host) is PinnedCertificatesTrustEvaluator)
        #expect(try manager.serverTrustEvaluator(forHost: "www.example.test") is DefaultTrustEvaluator)
        #expect(try manager.serverTrustEvaluator(forHost: "example.test") is DisabledTrustEvaluator)
        #expect(try manager.serverTrustEvaluator(forHost: "a.b.example.test") is DisabledTrustEvaluator)
        let unknown = #expect(throws: TrustEvaluationError.self) { try manager.serverTrustEvaluator(forHost: "example.org") }
        #expect(unknown?.kind == .noRequiredEvaluator)
        #expect(manager.decide(f.trust(f.validChain), forHost: "example.org").failure?.kind == .noRequiredEvaluator)
        #expect(!manager.decide(f.trust(f.validChain), forHost: host).isTrusted)
        #expect(seen.all == ["ServerTrustManager", "PinnedCertificatesTrustEvaluator"])

        let lenient = try ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: [:])
        #expect(try lenient.serverTrustEvaluator(forHost: "example.org") == nil)
        let fallback = lenient.decide(f.trust(f.validChain), forHost: host)
        #expect(fallback.isTrusted)
        #expect(fallback.record.notes.contains { $0.contains("default handling") })
        #expect(!lenient.decide(f.trust([f.attacker]), forHost: host).isTrusted)
    }

    @Test("a manager key that is not a host pattern is an error naming it")
    func badKey() {
        let error = #expect(throws: PolicyConfigurationError.self) { try ServerTrustManager(evaluators: ["*.com": DefaultTrustEvaluator()]) }
        #expect(error?.kind == .invalidHostPattern)
        #expect(error?.path == "evaluators[\"*.com\"]")
    }

    @Test("static sugar builds the evaluators")
    func sugar() throws {
        let manager = try ServerTrustManager(evaluators: [
            "a.example.test": .pinnedCertificates([f.root]),
            "b.example.test": .publicKeys(of: [f.root]),
            "c.example.test": .composite([.defaultEvaluation, .disabled]),
            "d.example.test": .spkiPins(
                PinningConfiguration([PinnedHost(pattern: HostPattern("d.example.test"), pins: [SPKIPin(certificate: f.root), f.backupPin])])),
        ])
        #expect(manager.rules.count == 4)
    }
}
