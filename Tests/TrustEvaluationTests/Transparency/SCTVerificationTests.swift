import CertificateParsing
import ServerTrustLab
import Synchronization
import Testing
import TrustEvaluation

// One SCT at a time, in every shape that must verify or must not, each also judged by
// OpenSSL's own SCT_validate (LabCTOracle) where OpenSSL has a rule for it, so the verifier
// agrees with an independent implementation and not only with fixtures made here.

/// What one SCT looked like to the verifier and to OpenSSL.
struct SCTScenario {
    var leaf: Certificate
    var issuer: Certificate?
    var labLeaf: LabCertificate
    var labIssuer: LabCertificate?
    var sct: LabSCT
    var embedded: Bool
    var listed: [LabCTLog]
}

/// The status kinds a shape expects (CTSCTStatus without its payloads).
enum ExpectedStatus: String, Sendable {
    case valid, malformed, unknownLog, unusableLogKey, unsupportedAlgorithm, badSignature, issuerUnavailable, futureTimestamp,
        beforeLogAcceptance, outsideTemporalInterval

    /// A rule of RFC 6962 §2.1.4 or of the log list that OpenSSL does not apply: OpenSSL's
    /// verdict on the SCT itself is still checked, but it may call valid what the library refuses.
    var isBeyondOpenSSL: Bool { [.beforeLogAcceptance, .outsideTemporalInterval].contains(self) }

    func matches(_ status: CTSCTStatus) -> Bool {
        switch (self, status) {
        case (.valid, .valid), (.malformed, .malformed), (.unknownLog, .unknownLog), (.unusableLogKey, .unusableLogKey),
            (.unsupportedAlgorithm, .unsupportedAlgorithm), (.badSignature, .badSignature), (.issuerUnavailable, .issuerUnavailable),
            (.futureTimestamp, .futureTimestamp), (.beforeLogAcceptance, .beforeLogAcceptance), (.outsideTemporalInterval, .outsideTemporalInterval):
            return true
        default:
            return false
        }
    }
}

struct SCTShape: Sendable, CustomTestStringConvertible {
    let name: String
    let expected: ExpectedStatus
    /// OpenSSL's verdict, or `nil` where OpenSSL has no such rule (RFC 6962 key and algorithm
    /// requirements, log states and shards are not OpenSSL's business).
    let openSSL: LabCTOracle.Status?
    let build: @Sendable () throws -> SCTScenario

    var testDescription: String { "\(name) → \(expected.rawValue)" }
}

extension SCTScenario {
    /// The first SCT embedded in a fresh leaf from `logs`.
    static func embedded(
        _ logs: [LabCTLog], listed: [LabCTLog]? = nil, spec: LabCertificateSpec = CTTestbed.spec(), timestamp: UInt64? = nil,
        precertificateSigner: Bool = false
    ) throws -> SCTScenario {
        let subject = try CTTestbed.embedded(logs, spec: spec, timestamp: timestamp, precertificateSigner: precertificateSigner)
        let sct = try #require(subject.lab?.scts.first)
        return SCTScenario(
            leaf: subject.leaf, issuer: subject.issuer, labLeaf: subject.labLeaf, labIssuer: subject.labIssuer, sct: sct, embedded: true,
            listed: listed ?? logs)
    }

    /// An SCT from `log` over a fresh leaf, delivered in the TLS extension.
    static func delivered(_ log: LabCTLog, listed: [LabCTLog]? = nil, timestamp: UInt64 = CTTestbed.nowMilliseconds - 60_000, extensions: [UInt8] = [])
        throws -> SCTScenario
    {
        let subject = try CTTestbed.plain()
        let sct = try log.sign(.certificate(subject.labLeaf), timestamp: timestamp, extensions: extensions)
        return SCTScenario(
            leaf: subject.leaf, issuer: subject.issuer, labLeaf: subject.labLeaf, labIssuer: subject.labIssuer, sct: sct, embedded: false,
            listed: listed ?? [log])
    }

    /// The SCT's result from the library.
    func result() throws -> CTSCTResult {
        let evaluation = CertificateTransparency.evaluate(
            leaf: leaf, issuer: issuer, tlsSCTList: embedded ? nil : LabSCT.list([sct]), logList: try CTTestbed.list(listed), policy: .chrome,
            at: CTTestbed.now)
        return try #require(evaluation.scts.first { $0.source == (embedded ? .embedded : .tlsExtension) })
    }
}

@Suite("SCT verification")
struct SCTVerificationTests {
    static let shapes: [SCTShape] = [
        SCTShape(name: "embedded, ECDSA P-256 log", expected: .valid, openSSL: .valid) { try .embedded([CTLogs.alpha]) },
        SCTShape(name: "embedded, RSA-2048 log", expected: .valid, openSSL: .valid) { try .embedded([CTLogs.gamma]) },
        SCTShape(name: "embedded, precertificate signed by a Precertificate Signing Certificate", expected: .valid, openSSL: .valid) {
            try .embedded([CTLogs.alpha], precertificateSigner: true)
        },
        SCTShape(name: "TLS extension, ECDSA", expected: .valid, openSSL: .valid) { try .delivered(CTLogs.beta) },
        SCTShape(name: "TLS extension, RSA", expected: .valid, openSSL: .valid) { try .delivered(CTLogs.gamma) },
        SCTShape(name: "static-ct-api SCT with its leaf_index extension", expected: .valid, openSSL: .valid) {
            try .delivered(CTLogs.tiled, extensions: LabCTLog.leafIndexExtension(41))
        },
        SCTShape(name: "static-ct-api SCT whose leaf_index was changed after signing", expected: .badSignature, openSSL: .invalid) {
            var scenario = try SCTScenario.delivered(CTLogs.tiled, extensions: LabCTLog.leafIndexExtension(41))
            scenario.sct.extensions = LabCTLog.leafIndexExtension(42)
            return scenario
        },
        SCTShape(name: "embedded, one signature bit flipped", expected: .badSignature, openSSL: .invalid) {
            let spec = CTTestbed.spec()
            var scenario = try SCTScenario.embedded([CTLogs.alpha], spec: spec)
            let corrupted = scenario.sct.withCorruptedSignature
            let pki = try CTTestbed.pki()
            let leaf = try LabCertificate.issue(spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, embedding: [corrupted])
            scenario.leaf = try Certificate(derEncoded: leaf.der)
            scenario.labLeaf = leaf
            scenario.sct = corrupted
            return scenario
        },
        SCTShape(name: "TLS extension, RSA signature bit flipped", expected: .badSignature, openSSL: .invalid) {
            var scenario = try SCTScenario.delivered(CTLogs.gamma)
            scenario.sct = scenario.sct.withCorruptedSignature
            return scenario
        },
        SCTShape(name: "TLS SCT issued for another certificate", expected: .badSignature, openSSL: .invalid) {
            var scenario = try SCTScenario.delivered(CTLogs.alpha)
            let other = try CTTestbed.plain()
            scenario.sct = try CTLogs.alpha.sign(.certificate(other.labLeaf), timestamp: scenario.sct.timestamp)
            return scenario
        },
        SCTShape(name: "embedded SCTs copied into another certificate of the same CA", expected: .badSignature, openSSL: .invalid) {
            var scenario = try SCTScenario.embedded([CTLogs.alpha])
            let pki = try CTTestbed.pki()
            let copy = try LabCertificate.issue(CTTestbed.spec(), subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, embedding: [scenario.sct])
            scenario.leaf = try Certificate(derEncoded: copy.der)
            scenario.labLeaf = copy
            return scenario
        },
        SCTShape(name: "embedded, checked against another CA's key", expected: .badSignature, openSSL: .invalid) {
            var scenario = try SCTScenario.embedded([CTLogs.alpha])
            let other = try LabPKI.webChain(host: "other.example.test", keySlot: CTSlot.otherCA)
            scenario.issuer = try Certificate(derEncoded: other.intermediate.der)
            scenario.labIssuer = other.intermediate
            return scenario
        },
        SCTShape(name: "embedded, checked against the precertificate signing certificate instead of the CA", expected: .badSignature, openSSL: .invalid) {
            var scenario = try SCTScenario.embedded([CTLogs.alpha], precertificateSigner: true)
            let signer = try CTTestbed.pki().intermediateIssuer.precertificateSigningIssuer(key: LabKey.shared(.p256, slot: CTSlot.signer))
            scenario.issuer = try Certificate(derEncoded: signer.certificate.der)
            scenario.labIssuer = signer.certificate
            return scenario
        },
        SCTShape(name: "embedded, issuer unknown", expected: .issuerUnavailable, openSSL: .unverified) {
            var scenario = try SCTScenario.embedded([CTLogs.alpha])
            scenario.issuer = nil
            scenario.labIssuer = nil
            return scenario
        },
        SCTShape(name: "log not in the list", expected: .unknownLog, openSSL: .unknownLog) { try .embedded([CTLogs.alpha], listed: [CTLogs.beta]) },
        SCTShape(name: "timestamp one hour in the future", expected: .futureTimestamp, openSSL: .invalid) {
            try .delivered(CTLogs.alpha, timestamp: CTTestbed.nowMilliseconds + 3_600_000)
        },
        SCTShape(name: "timestamp at the first millisecond after the current second", expected: .futureTimestamp, openSSL: .invalid) {
            try .delivered(CTLogs.alpha, timestamp: CTTestbed.nowMilliseconds + 1000)
        },
        // The clock reads whole seconds; OpenSSL's clock reads milliseconds, hence no oracle.
        SCTShape(name: "timestamp within the current second", expected: .valid, openSSL: nil) {
            try .delivered(CTLogs.alpha, timestamp: CTTestbed.nowMilliseconds + 999)
        },
        SCTShape(name: "SCT version v2", expected: .malformed, openSSL: .unknownVersion) {
            var scenario = try SCTScenario.delivered(CTLogs.alpha)
            scenario.sct.version = 1
            return scenario
        },
        SCTShape(name: "SCT claiming SHA-384", expected: .unsupportedAlgorithm, openSSL: .notValidated) {
            var scenario = try SCTScenario.delivered(CTLogs.alpha)
            scenario.sct.hashAlgorithm = 5
            return scenario
        },
        // OpenSSL ignores the signature algorithm byte beyond its table lookup.
        SCTShape(name: "ECDSA signature labelled RSA", expected: .unsupportedAlgorithm, openSSL: nil) {
            var scenario = try SCTScenario.delivered(CTLogs.alpha)
            scenario.sct.signatureAlgorithm = 1
            return scenario
        },
        // RFC 6962 §2.1.4 key requirements: OpenSSL verifies with any key.
        SCTShape(name: "log key on P-384", expected: .unusableLogKey, openSSL: nil) {
            try .delivered(CTLogs.make("Lab 'P-384'", "Operator D", CTSlot.p384, .p384))
        },
        SCTShape(name: "log key RSA-1024", expected: .unusableLogKey, openSSL: nil) {
            try .delivered(CTLogs.make("Lab 'Small'", "Operator D", CTSlot.smallRSA, .rsa(bits: 1024)))
        },
        SCTShape(name: "log key Ed25519", expected: .unusableLogKey, openSSL: nil) {
            try .delivered(CTLogs.make("Lab 'Edwards'", "Operator D", CTSlot.ed25519, .ed25519))
        },
        SCTShape(name: "issued before the log was qualified", expected: .beforeLogAcceptance, openSSL: .valid) {
            let log = try CTLogs.alpha.with(state: .qualified, since: LabClock.reference - LabClock.day)
            return try .delivered(log, timestamp: UInt64(LabClock.reference - 2 * LabClock.day) * 1000)
        },
        SCTShape(name: "issued after the log was qualified", expected: .valid, openSSL: .valid) {
            let log = try CTLogs.alpha.with(state: .qualified, since: LabClock.reference - 2 * LabClock.day)
            return try .delivered(log, timestamp: UInt64(LabClock.reference - LabClock.day) * 1000)
        },
        SCTShape(name: "certificate expiring after the log's shard", expected: .outsideTemporalInterval, openSSL: .valid) {
            var log = try CTLogs.alpha
            log.temporalInterval = (LabClock.reference - LabClock.year)..<(LabClock.reference + 80 * LabClock.day)
            return try .embedded([log])
        },
        SCTShape(name: "certificate expiring exactly at the shard's start", expected: .valid, openSSL: .valid) {
            var log = try CTLogs.alpha
            log.temporalInterval = (LabClock.reference + 80 * LabClock.day)..<(LabClock.reference + LabClock.year)
            return try .embedded([log])
        },
    ]

    @Test("each SCT shape gets its status, and OpenSSL's SCT_validate agrees", arguments: shapes)
    func shape(_ shape: SCTShape) throws {
        let scenario = try shape.build()
        let result = try scenario.result()
        #expect(shape.expected.matches(result.status), "\(result)")
        if let openSSL = shape.openSSL {
            let oracle = try LabCTOracle.validate(
                sct: scenario.sct.serialized, embedded: scenario.embedded, certificate: scenario.labLeaf.der, issuer: scenario.labIssuer?.der,
                logKeys: scenario.listed.map(\.key.publicKeyInfoDER), at: CTTestbed.nowMilliseconds)
            #expect(oracle == openSSL, "OpenSSL: \(oracle)")
            if !shape.expected.isBeyondOpenSSL {
                #expect(result.status.isValid == (oracle == .valid), "library \(result.status), OpenSSL \(oracle)")
            }
        }
    }

    @Test("a valid SCT names its log and carries the parsed SCT")
    func reportNamesTheLog() throws {
        let result = try SCTScenario.embedded([CTLogs.gamma]).result()
        #expect(result.log?.name == "Lab 'Gamma'")
        #expect(result.log?.operatorName == "Operator C")
        #expect(result.sct?.signatureAlgorithm == .rsa)
        #expect(result.description.contains("embedded SCT from Lab 'Gamma'"))
    }

    @Test("every signature goes through the SignatureVerifier seam")
    func signaturesGoThroughTheSeam() throws {
        let subject = try CTTestbed.embedded([CTLogs.alpha, CTLogs.beta])
        let tls = try CTTestbed.delivered([CTLogs.gamma], for: subject)
        let counting = CountingVerifier()
        _ = CertificateTransparency.evaluate(
            leaf: subject.leaf, issuer: subject.issuer, tlsSCTList: tls, logList: try CTTestbed.list([CTLogs.alpha, CTLogs.beta, CTLogs.gamma]),
            policy: .apple, at: CTTestbed.now, signatureVerifier: counting)
        #expect(counting.checks == 3)
        #expect(counting.keys == 3)
        // A verifier that refuses everything makes every SCT invalid.
        let refusing = CertificateTransparency.evaluate(
            leaf: subject.leaf, issuer: subject.issuer, tlsSCTList: tls, logList: try CTTestbed.list([CTLogs.alpha, CTLogs.beta, CTLogs.gamma]),
            policy: .apple, at: CTTestbed.now, signatureVerifier: RefusingVerifier())
        #expect(refusing.scts.allSatisfy { !$0.status.isValid })
        #expect(refusing.verdict == .nonCompliant)
    }

    @Test("an SCT sent twice is checked once; past 32 signature checks the rest are reported unchecked")
    func workLimit() throws {
        let subject = try CTTestbed.plain()
        let alpha = try CTLogs.alpha
        let repeated = try alpha.sign(.certificate(subject.labLeaf), timestamp: CTTestbed.nowMilliseconds - 1000)
        let list = try CTTestbed.list([alpha])
        let counting = CountingVerifier()
        let twice = CertificateTransparency.evaluate(
            leaf: subject.leaf, issuer: subject.issuer, tlsSCTList: LabSCT.list([repeated, repeated]), ocspSCTList: LabSCT.list([repeated]),
            logList: list, policy: .chrome, at: CTTestbed.now, signatureVerifier: counting)
        #expect(twice.scts.count == 3 && twice.scts.allSatisfy { $0.status == .valid })
        #expect(counting.checks == 1)

        let many = try (0..<40).map { try alpha.sign(.certificate(subject.labLeaf), timestamp: CTTestbed.nowMilliseconds - 1000 - UInt64($0)) }
        let flooded = CertificateTransparency.evaluate(
            leaf: subject.leaf, issuer: subject.issuer, tlsSCTList: LabSCT.list(many), logList: list, policy: .chrome, at: CTTestbed.now)
        #expect(flooded.scts.filter { $0.status == .valid }.count == 32)
        #expect(flooded.scts.filter { $0.status == .checkLimitReached(32) }.count == 8)
    }

    @Test("a malformed SCT list in any delivery is reported, and the others still count")
    func malformedLists() throws {
        let subject = try CTTestbed.embedded([CTLogs.alpha, CTLogs.beta])
        let evaluation = try CTTestbed.evaluate(subject, logs: [CTLogs.alpha, CTLogs.beta], policy: .chrome, tls: [0, 0], ocsp: [0, 5, 0, 3, 0, 1])
        #expect(evaluation.scts.filter { $0.source == .embedded }.allSatisfy { $0.status.isValid })
        #expect(evaluation.scts.contains { $0.source == .tlsExtension && $0.sct == nil })
        #expect(evaluation.scts.contains { $0.source == .ocspResponse && $0.sct == nil })
        #expect(evaluation.verdict == .compliant)
    }
}

/// A verifier that says no.
struct RefusingVerifier: SignatureVerifier {
    func makeKey(_ publicKeyInfo: SubjectPublicKeyInfo) throws(SignatureError) -> VerificationKey { try VerificationKey(publicKeyInfo) }

    func check(signature: ArraySlice<UInt8>, over data: ArraySlice<UInt8>, algorithm: SignatureAlgorithm, key: VerificationKey) -> SignatureCheckResult {
        .invalid(SignatureError(.badSignature, "refused"))
    }
}
