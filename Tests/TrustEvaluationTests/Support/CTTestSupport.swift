import CertificateParsing
import ServerTrustLab
import TrustEvaluation

// Shared fixtures for the Certificate Transparency suites (SCTVerificationTests,
// CTPolicyTests, CTEvaluationTests): Lab logs of three operators, a Lab web PKI, and the
// conversion of a Lab log into the library's model (what the JSON reader does in ServerTrust).
//
// Everything is evaluated at `LabClock.reference`. Keys come from slots 630–649.

enum CTSlot {
    static let pki = 210
    static let alpha = 630
    static let beta = 631
    static let gamma = 632
    static let delta = 633
    static let epsilon = 634
    static let tiled = 635
    static let rsa = 636
    static let p384 = 637
    static let ed25519 = 638
    static let signer = 639
    static let otherCA = 211
    static let smallRSA = 640
}

/// The Lab logs the CT suites use: operator A runs alpha and delta, B runs beta and epsilon,
/// C runs gamma (RSA) and a static-ct-api log.
enum CTLogs {
    static var alpha: LabCTLog { get throws { try make("Lab 'Alpha'", "Operator A", CTSlot.alpha) } }
    static var beta: LabCTLog { get throws { try make("Lab 'Beta'", "Operator B", CTSlot.beta) } }
    static var gamma: LabCTLog { get throws { try make("Lab 'Gamma'", "Operator C", CTSlot.gamma, .rsa(bits: 2048)) } }
    static var delta: LabCTLog { get throws { try make("Lab 'Delta'", "Operator A", CTSlot.delta) } }
    static var epsilon: LabCTLog { get throws { try make("Lab 'Epsilon'", "Operator B", CTSlot.epsilon) } }
    static var tiled: LabCTLog { get throws { try make("Lab 'Tiles'", "Operator C", CTSlot.tiled, tiled: true) } }
    static var tiledB: LabCTLog { get throws { try make("Lab 'Tiles B'", "Operator B", CTSlot.rsa, .rsa(bits: 2048), tiled: true) } }

    static func make(_ name: String, _ operatorName: String, _ slot: Int, _ algorithm: LabKeyAlgorithm = .p256, tiled: Bool = false) throws -> LabCTLog {
        try LabCTLog(name: name, operatorName: operatorName, key: LabKey.shared(algorithm, slot: slot), isTiled: tiled)
    }
}

/// A certificate with its issuer, parsed, plus the Lab objects it came from.
struct CTSubject {
    let leaf: Certificate
    let issuer: Certificate
    let lab: LabCTCertificate?
    let labLeaf: LabCertificate
    let labIssuer: LabCertificate
}

enum CTTestbed {
    static let now = LabClock.reference
    static let nowMilliseconds = UInt64(LabClock.reference) * 1000

    static func pki() throws -> LabPKI { try LabPKI.webChain(host: "ct.example.test", keySlot: CTSlot.pki) }

    /// A leaf valid from `notBefore` for `lifetime` seconds (notAfter = notBefore + lifetime).
    static func spec(notBefore: Int64 = LabClock.reference - 10 * LabClock.day, lifetime: Int64 = 90 * LabClock.day) -> LabCertificateSpec {
        LabPKI.leafSpec(host: "ct.example.test", keyAlgorithm: .p256, notBefore: notBefore, notAfter: notBefore + lifetime)
    }

    /// A leaf with SCTs from `logs` embedded.
    static func embedded(
        _ logs: [LabCTLog], spec: LabCertificateSpec = spec(), timestamp: UInt64? = nil, precertificateSigner: Bool = false
    ) throws -> CTSubject {
        let pki = try pki()
        let signer = precertificateSigner ? try pki.intermediateIssuer.precertificateSigningIssuer(key: LabKey.shared(.p256, slot: CTSlot.signer)) : nil
        let issued = try LabCertificate.issueWithEmbeddedSCTs(
            spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, logs: logs, timestamp: timestamp, precertificateSigner: signer)
        return CTSubject(
            leaf: try Certificate(derEncoded: issued.certificate.der), issuer: try Certificate(derEncoded: pki.intermediate.der), lab: issued,
            labLeaf: issued.certificate, labIssuer: pki.intermediate)
    }

    /// A leaf without embedded SCTs (for TLS- and OCSP-delivered SCTs).
    static func plain(spec: LabCertificateSpec = spec()) throws -> CTSubject {
        let pki = try pki()
        let leaf = try LabCertificate.issue(spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer)
        return CTSubject(
            leaf: try Certificate(derEncoded: leaf.der), issuer: try Certificate(derEncoded: pki.intermediate.der), lab: nil, labLeaf: leaf,
            labIssuer: pki.intermediate)
    }

    /// A TLS-encoded SCT list from `logs` over `subject`'s certificate (an x509 entry).
    static func delivered(_ logs: [LabCTLog], for subject: CTSubject, timestamp: UInt64 = nowMilliseconds - 60_000) throws -> [UInt8] {
        LabSCT.list(try logs.map { try $0.sign(.certificate(subject.labLeaf), timestamp: timestamp) })
    }

    /// The library's model of a Lab log.
    static func model(_ log: LabCTLog) throws -> CTLog {
        let kind: CTLogState.Kind
        switch log.state {
        case .pending: kind = .pending
        case .qualified: kind = .qualified
        case .usable: kind = .usable
        case .readOnly: kind = .readOnly
        case .retired: kind = .retired
        case .rejected: kind = .rejected
        }
        return try CTLog(
            publicKeyInfo: SubjectPublicKeyInfo(derEncoded: log.key.publicKeyInfoDER), name: log.name, operatorName: log.operatorName,
            state: CTLogState(kind, since: ASN1Time(secondsSince1970: log.stateSince)), api: log.isTiled ? .staticCTAPI : .rfc6962,
            temporalInterval: log.temporalInterval.map {
                CTTemporalInterval(startInclusive: ASN1Time(secondsSince1970: $0.lowerBound), endExclusive: ASN1Time(secondsSince1970: $0.upperBound))
            },
            previousOperators: log.previousOperators.map { CTLog.PreviousOperator(name: $0.name, endTime: ASN1Time(secondsSince1970: $0.endTime)) },
            expectedLogID: log.logID)
    }

    /// A list of `logs`, current at `timestamp`.
    static func list(_ logs: [LabCTLog], timestamp: Int64 = LabClock.reference - LabClock.day) throws -> CTLogList {
        try CTLogList(logs: logs.map(model), timestamp: ASN1Time(secondsSince1970: timestamp))
    }

    static func evaluate(
        _ subject: CTSubject, logs: [LabCTLog], policy: CTPolicy, tls: [UInt8]? = nil, ocsp: [UInt8]? = nil, at time: Int64 = now,
        listTimestamp: Int64 = LabClock.reference - LabClock.day
    ) throws -> CTEvaluation {
        CertificateTransparency.evaluate(
            leaf: subject.leaf, issuer: subject.issuer, tlsSCTList: tls, ocspSCTList: ocsp, logList: try list(logs, timestamp: listTimestamp),
            policy: policy, at: time)
    }
}
