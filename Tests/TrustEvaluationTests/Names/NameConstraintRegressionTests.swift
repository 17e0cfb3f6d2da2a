import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// Regressions found by fuzzing (Fuzz/regressions/chain-accept): a subject attribute whose value
/// is kept opaque may hold bytes that are not DER; that must never make the subject look empty
/// to directoryName name constraints (it once did, letting an excluded subtree through).
@Suite("Name constraints: opaque attribute values cannot hide a subject")
struct NameConstraintRegressionTests {
    static func opaqueValue(_ content: [UInt8]) -> [UInt8] {
        // [APPLICATION 30] constructed, holding `content` verbatim.
        LabDER.tlv(identifier: LabDER.identifier(.application, constructed: true, number: 30), content)
    }

    /// 40 nested SEQUENCEs: deeper than `DER.maximumDepth`.
    static var deeplyNested: [UInt8] {
        var value = LabDER.null()
        for _ in 0..<40 { value = LabDER.sequence([value]) }
        return value
    }

    static let cases: [(String, [UInt8])] = [
        ("truncated INTEGER inside", [0x02, 0x05, 0x01]),
        ("nesting deeper than the DER reader's limit", deeplyNested),
    ]

    @Test("an excluded directoryName still matches when another attribute holds non-DER or deep bytes", arguments: cases)
    func excludedSubtreeHolds(name: String, content: [UInt8]) throws {
        let now = LabClock.reference
        let rootKey = try LabKey.shared(.p256, slot: 150)
        let caKey = try LabKey.shared(.p256, slot: 151)
        let leafKey = try LabKey.shared(.p256, slot: 152)
        let root = try LabCertificate.issue(
            LabCertificateSpec(
                subject: LabName([("CN", "NC Regression Root")]),
                extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign]), .subjectKeyIdentifier()]),
            subjectKey: rootKey)
        let excluded = LabName([("C", "US"), ("O", "Evil")])
        let ca = try LabCertificate.issue(
            LabCertificateSpec(
                subject: LabName([("CN", "NC Regression CA")]),
                extensions: [
                    .basicConstraints(ca: true), .keyUsage([.keyCertSign]), .subjectKeyIdentifier(), .authorityKeyIdentifier(),
                    .nameConstraints(permitted: [], excluded: [.directoryName(excluded)]),
                ]),
            subjectKey: caKey, issuer: LabIssuer(certificate: root, key: rootKey))
        let subjectDER = LabDER.sequence([
            LabDER.set([LabDER.sequence([try LabDER.oid("2.5.4.6"), LabDER.printableString("US")])]),
            LabDER.set([LabDER.sequence([try LabDER.oid("2.5.4.10"), LabDER.utf8String("Evil")])]),
            LabDER.set([LabDER.sequence([try LabDER.oid("2.5.4.3"), LabDER.utf8String("victim.example.test")])]),
            LabDER.set([LabDER.sequence([try LabDER.oid("2.5.4.45"), Self.opaqueValue(content)])]),
        ])
        let leaf = try LabCertificate.issue(
            LabPKI.leafSpec(host: "victim.example.test", keyAlgorithm: .p256, notBefore: now - LabClock.day, notAfter: now + LabClock.day)
                .withSubject(LabName(der: subjectDER)),
            subjectKey: leafKey, issuer: LabIssuer(certificate: ca, key: caKey))
        let parsedLeaf = try Certificate(derEncoded: leaf.der)
        #expect(!parsedLeaf.subject.rdns.isEmpty, "the subject decodes although one value is opaque")
        let verifier = Verifier(anchors: TrustStore([try Certificate(derEncoded: root.der)]), policy: .sslServer(host: "victim.example.test"))
        let outcome = verifier.validate(leaf: parsedLeaf, intermediates: [try Certificate(derEncoded: ca.der)], at: now)
        #expect(outcome.failure?.kind == .nameConstraintViolation, "\(name): \(String(describing: outcome.failure))")
    }
}

extension LabCertificateSpec {
    fileprivate func withSubject(_ subject: LabName) -> LabCertificateSpec {
        var copy = self
        copy.subject = subject
        return copy
    }
}
