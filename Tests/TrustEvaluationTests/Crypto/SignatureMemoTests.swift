import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// ``SignatureMemo``: a check found in the memo answers only for exactly the inputs that
/// verified (key, algorithm with its parameters, signed bytes, signature), failures are never
/// remembered, the bound holds with CLOCK eviction, and concurrent use gives every check its
/// own correct answer. Every memo here is private to its test, so the counters are exact.
@Suite("Signature memo")
struct SignatureMemoTests {
    /// One signature by a Lab key over a message, with the parsed algorithm and the key.
    struct Signed: Sendable {
        let key: VerificationKey
        let algorithm: SignatureAlgorithm
        let message: [UInt8]
        let signature: [UInt8]

        init(_ keyAlgorithm: LabKeyAlgorithm, _ scheme: LabSignatureScheme, slot: Int = 0, message: [UInt8]) throws {
            let labKey = try LabKey.shared(keyAlgorithm, slot: slot)
            key = try VerificationKey(SubjectPublicKeyInfo(derEncoded: labKey.publicKeyInfoDER))
            algorithm = try CryptoTestKit.selfSigned(labKey, scheme: scheme).signatureAlgorithm
            self.message = message
            signature = try scheme.sign(message, with: labKey)
        }

        func check(_ verifier: OpenSSLSignatureVerifier, signature: [UInt8]? = nil, message: [UInt8]? = nil, algorithm: SignatureAlgorithm? = nil)
            -> SignatureCheckResult
        {
            verifier.check(
                signature: (signature ?? self.signature)[...], over: (message ?? self.message)[...], algorithm: algorithm ?? self.algorithm, key: key)
        }
    }

    static let message = Array("the TBSCertificate of a certificate met on every connection".utf8)

    static let schemes: [SignatureVerificationTests.Case] = [
        .init(.rsa(bits: 2048), .rsaPKCS1(.sha256)), .init(.rsa(bits: 2048), .rsaPKCS1(.sha1)),
        .init(.rsa(bits: 2048), .rsaPSS(.sha256, saltLength: 32)), .init(.p256, .ecdsa(.sha256)), .init(.p384, .ecdsa(.sha384)),
        .init(.ed25519, .ed25519), .init(.ed448, .ed448),
    ]

    @Test("a second check of the same signature is a hit; the answer is the same", arguments: schemes)
    func hit(_ c: SignatureVerificationTests.Case) throws {
        let signed = try Signed(c.key, c.scheme, message: Self.message)
        let memo = SignatureMemo(capacity: 16)
        let verifier = OpenSSLSignatureVerifier(memo: memo)
        #expect(signed.check(verifier) == .valid)
        #expect("\(memo.statistics)" == "hits 0, misses 1, insertions 1, evictions 0, entries 1")
        #expect(signed.check(verifier) == .valid)
        #expect(memo.statistics.hits == 1)
        #expect(memo.holds(signature: signed.signature[...], over: signed.message[...], algorithm: signed.algorithm, key: signed.key))
    }

    @Test(
        "with the good signature memoized, every changed byte of the signature or the signed bytes is still refused, and never remembered",
        arguments: schemes)
    func tamperingAfterAHit(_ c: SignatureVerificationTests.Case) throws {
        let signed = try Signed(c.key, c.scheme, message: Self.message)
        let memo = SignatureMemo(capacity: 16)
        let verifier = OpenSSLSignatureVerifier(memo: memo)
        #expect(signed.check(verifier) == .valid)
        for position in signed.signature.indices {
            var bad = signed.signature
            bad[position] ^= UInt8(1 << (position % 8))
            #expect(!signed.check(verifier, signature: bad).isValid, "signature byte \(position)")
        }
        for position in signed.message.indices {
            var bad = signed.message
            bad[position] ^= 0x01
            #expect(!signed.check(verifier, message: bad).isValid, "message byte \(position)")
        }
        // Twice: a failure is verified (and refused) again, not remembered.
        var bad = signed.signature
        bad[bad.count / 2] ^= 0x80
        #expect(!signed.check(verifier, signature: bad).isValid)
        #expect(!signed.check(verifier, signature: bad).isValid)
        let statistics = memo.statistics
        #expect(statistics.hits == 0 && statistics.insertions == 1 && statistics.count == 1, "\(statistics)")
    }

    @Test("another key of the same type, with the same bytes and signature, never hits the entry", arguments: schemes)
    func otherKey(_ c: SignatureVerificationTests.Case) throws {
        let signed = try Signed(c.key, c.scheme, message: Self.message)
        let other = try VerificationKey(SubjectPublicKeyInfo(derEncoded: try LabKey.shared(c.key, slot: 1).publicKeyInfoDER))
        let memo = SignatureMemo(capacity: 16)
        let verifier = OpenSSLSignatureVerifier(memo: memo)
        #expect(signed.check(verifier) == .valid)
        let result = verifier.check(signature: signed.signature[...], over: signed.message[...], algorithm: signed.algorithm, key: other)
        #expect(result == .invalid(SignatureError(.badSignature, "")), "\(result)")
        #expect(memo.statistics.hits == 0)
    }

    /// RSASSA-PSS parameters (hash, MGF1 hash, salt length) a memoized SHA-256 / MGF1-SHA-256 /
    /// salt 32 signature must not answer for: each changed on its own.
    struct PSSVariant: Sendable, CustomTestStringConvertible {
        let hash: LabDigest
        let mgf1: LabDigest
        let salt: Int
        var testDescription: String { "PSS \(hash) MGF1-\(mgf1) salt \(salt)" }

        /// The parsed algorithm, as a certificate claiming these parameters carries it.
        func algorithm() throws -> SignatureAlgorithm {
            func hashID(_ digest: LabDigest) throws -> [UInt8] { LabDER.sequence([try LabDER.oid(digest.oid), LabDER.null()]) }
            let parameters = LabDER.sequence([
                LabDER.explicit(0, try hashID(hash)),
                LabDER.explicit(1, LabDER.sequence([try LabDER.oid("1.2.840.113549.1.1.8"), try hashID(mgf1)])),
                LabDER.explicit(2, LabDER.integer(salt)),
            ])
            let identifier = LabDER.sequence([try LabDER.oid("1.2.840.113549.1.1.10"), parameters])
            return try CryptoTestKit.certificate(
                algorithmIdentifierDER: identifier, signedWith: try LabKey.shared(.rsa(bits: 2048)), scheme: .rsaPSS(.sha256, saltLength: 32)
            ).signatureAlgorithm
        }
    }

    static let pssVariants: [PSSVariant] = [
        .init(hash: .sha256, mgf1: .sha256, salt: 20), .init(hash: .sha256, mgf1: .sha256, salt: 0),
        .init(hash: .sha256, mgf1: .sha256, salt: 33), .init(hash: .sha256, mgf1: .sha1, salt: 32),
        .init(hash: .sha256, mgf1: .sha384, salt: 32), .init(hash: .sha384, mgf1: .sha256, salt: 32),
    ]

    @Test("RSASSA-PSS: another salt length, MGF1 digest or hash never hits the entry", arguments: pssVariants)
    func otherPSSParameters(_ variant: PSSVariant) throws {
        let signed = try Signed(.rsa(bits: 2048), .rsaPSS(.sha256, saltLength: 32), message: Self.message)
        let memo = SignatureMemo(capacity: 16)
        let verifier = OpenSSLSignatureVerifier(memo: memo)
        #expect(signed.check(verifier) == .valid)
        let algorithm = try variant.algorithm()
        guard case .rsaPSS = algorithm else {
            Issue.record("expected RSASSA-PSS, got \(algorithm)")
            return
        }
        #expect(algorithm != signed.algorithm)
        for algorithm in [algorithm, .rsaPKCS1(.sha256)] {
            #expect(!signed.check(verifier, algorithm: algorithm).isValid)
            #expect(!memo.holds(signature: signed.signature[...], over: signed.message[...], algorithm: algorithm, key: signed.key))
        }
        #expect(memo.statistics.hits == 0)
    }

    @Test("ECDSA and PKCS #1 v1.5: another digest never hits the entry")
    func otherDigest() throws {
        for (keyAlgorithm, scheme, other) in [
            (LabKeyAlgorithm.p256, LabSignatureScheme.ecdsa(.sha256), SignatureAlgorithm.ecdsa(.sha384)),
            (.rsa(bits: 2048), .rsaPKCS1(.sha256), .rsaPKCS1(.sha512)),
        ] {
            let signed = try Signed(keyAlgorithm, scheme, message: Self.message)
            let memo = SignatureMemo(capacity: 16)
            let verifier = OpenSSLSignatureVerifier(memo: memo)
            #expect(signed.check(verifier) == .valid)
            #expect(!signed.check(verifier, algorithm: other).isValid)
            #expect(memo.statistics.hits == 0)
        }
    }

    @Test("the bound holds: CLOCK evicts entries not used since the hand last passed, and keeps the one found again")
    func eviction() throws {
        let labKey = try LabKey.shared(.ed25519)
        let key = try VerificationKey(SubjectPublicKeyInfo(derEncoded: labKey.publicKeyInfoDER))
        let memo = SignatureMemo(capacity: 8)
        #expect(memo.capacity == 8)
        let verifier = OpenSSLSignatureVerifier(memo: memo)
        let messages = (0..<40).map { Array("message \($0)".utf8) }
        let signatures = try messages.map { try LabSignatureScheme.ed25519.sign($0, with: labKey) }
        func check(_ index: Int) -> Bool {
            verifier.verify(signature: signatures[index][...], over: messages[index][...], algorithm: .ed25519, key: key)
        }
        for index in messages.indices {
            #expect(check(index))
            #expect(memo.statistics.count <= 8)
            // Message 0 is met again between every two new ones: it is never the one evicted.
            if index > 0 { #expect(check(0)) }
        }
        let statistics = memo.statistics
        #expect(statistics.count == 8 && statistics.insertions == 40 && statistics.evictions == 32, "\(statistics)")
        #expect(statistics.hits == 39, "message 0 was found every time: \(statistics)")
        #expect(memo.holds(signature: signatures[0][...], over: messages[0][...], algorithm: .ed25519, key: key))
        #expect(!memo.holds(signature: signatures[1][...], over: messages[1][...], algorithm: .ed25519, key: key))
        // The memory bound is fixed by the capacity, and the default stays well under a MiB.
        #expect(memo.maximumBytes < SignatureMemo(capacity: 16).maximumBytes)
        #expect(SignatureMemo.shared.capacity == SignatureMemo.defaultCapacity)
        #expect(SignatureMemo.shared.maximumBytes < 1 << 20, "\(SignatureMemo.shared.maximumBytes)")
    }

    @Test("disabled: nothing is looked up or kept, and disabling empties the memo")
    func disabled() throws {
        let signed = try Signed(.p256, .ecdsa(.sha256), message: Self.message)
        let memo = SignatureMemo(capacity: 16)
        let verifier = OpenSSLSignatureVerifier(memo: memo)
        #expect(signed.check(verifier) == .valid)
        memo.isEnabled = false
        #expect(memo.statistics.count == 0)
        #expect(signed.check(verifier) == .valid)
        #expect(signed.check(verifier) == .valid)
        #expect("\(memo.statistics)" == "hits 0, misses 1, insertions 1, evictions 0, entries 0")
        memo.isEnabled = true
        #expect(signed.check(verifier) == .valid)
        #expect(memo.statistics.insertions == 2)
        // No memo at all: the verifier holds none.
        #expect(OpenSSLSignatureVerifier(memo: nil).memo == nil)
        #expect(OpenSSLSignatureVerifier().memo === SignatureMemo.shared)
    }

    @Test("concurrent checks through one memo, small enough to evict all the time: every answer is right", arguments: [4, 4096])
    func concurrentUse(capacity: Int) async throws {
        var jobs: [(signed: Signed, bad: [UInt8])] = []
        for (index, c) in Self.schemes.enumerated() where c.key != .ed448 {
            let signed = try Signed(c.key, c.scheme, message: Self.message + [UInt8(index)])
            var bad = signed.signature
            bad[bad.count - 1] ^= 0x01
            jobs.append((signed, bad))
        }
        let memo = SignatureMemo(capacity: capacity)
        let verifier = OpenSSLSignatureVerifier(memo: memo)
        let perWorker = 60
        let work = jobs
        let wrong = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for round in 0..<perWorker {
                        let job = work[(worker + round) % work.count]
                        if !job.signed.check(verifier).isValid { wrong += 1 }
                        if job.signed.check(verifier, signature: job.bad).isValid { wrong += 1 }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
        let statistics = memo.statistics
        #expect(statistics.hits + statistics.misses == 8 * perWorker * 2, "\(statistics)")
        #expect(statistics.count <= memo.capacity && statistics.insertions - statistics.evictions == statistics.count, "\(statistics)")
        if capacity >= jobs.count { #expect(statistics.insertions >= jobs.count && statistics.hits > 0, "\(statistics)") }
    }

    @Test("a warm memo changes no decision: expiry, the name, an untrusted root and a tampered chain are refused as without it")
    func decisionsUnchanged() throws {
        let chain = try TrustChain.make()
        let memo = SignatureMemo(capacity: 64)
        let store = TrustStore([try TrustPKI.parse(chain.root.certificate)])
        let leaf = try TrustPKI.parse(chain.leaf)
        let intermediate = try TrustPKI.parse(chain.intermediate.certificate)
        func outcome(
            _ policy: ValidationPolicy, at time: Int64 = TrustPKI.now, memo: SignatureMemo?, anchors: TrustStore = store, leaf: Certificate = leaf
        ) -> String {
            let verifier = Verifier(anchors: anchors, policy: policy, signatureVerifier: OpenSSLSignatureVerifier(memo: memo))
            let result = verifier.validate(leaf: leaf, intermediates: [intermediate], at: time)
            return result.failure.map { "\($0.kind)" } ?? "trusted"
        }
        // Warm the memo with the valid evaluation.
        #expect(outcome(TrustPKI.serverPolicy(), memo: memo) == "trusted")
        #expect(memo.statistics.insertions == 2)
        let otherRoot = TrustStore([try TrustPKI.parse(try TrustPKI.root("Other Root", slot: TrustSlot.otherRoot).certificate)])
        let tampered = try TrustPKI.parse(
            try TrustPKI.resign(chain.leaf, with: try TrustPKI.key(TrustSlot.wrong)) { $0 })
        let cases: [(ValidationPolicy, Int64, TrustStore, Certificate)] = [
            (TrustPKI.serverPolicy(), TrustPKI.now, store, leaf),
            (TrustPKI.serverPolicy(), TrustPKI.leafValidity.notAfter + 1, store, leaf),
            (TrustPKI.serverPolicy(), TrustPKI.leafValidity.notBefore - 1, store, leaf),
            (TrustPKI.serverPolicy(host: "other.example.com"), TrustPKI.now, store, leaf),
            (TrustPKI.serverPolicy(), TrustPKI.now, otherRoot, leaf),
            (TrustPKI.serverPolicy(), TrustPKI.now, store, tampered),
        ]
        let expected = ["trusted", "expired", "notYetValid", "hostnameMismatch", "untrustedRoot", "badSignature"]
        for ((policy, time, anchors, candidate), expectation) in zip(cases, expected) {
            let cold = outcome(policy, at: time, memo: nil, anchors: anchors, leaf: candidate)
            let warm = outcome(policy, at: time, memo: memo, anchors: anchors, leaf: candidate)
            #expect(cold == warm, "memo on: \(warm), off: \(cold)")
            #expect(cold == expectation)
        }
        #expect(memo.statistics.hits >= 2, "the chain was decided again with its signatures memoized: \(memo.statistics)")
    }
}
