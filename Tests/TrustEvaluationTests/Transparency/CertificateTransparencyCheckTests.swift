import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

// Certificate Transparency on the whole-path hook: the verifier runs CertificateTransparencyCheck
// on the validated path, with the Lab PKI's root as the system root (unless a test makes it a
// private anchor), at LabClock.reference.

/// A leaf and what the server delivers beside it, validated under a CT check.
struct CTCase {
    let subject: CTSubject
    var tls: [UInt8]?
    var staple: [UInt8]?

    static var root: Certificate { get throws { try Certificate(derEncoded: CTTestbed.pki().root.der) } }

    /// Validates the subject's chain (leaf, issuer) against the Lab root, with the CT check.
    func validate(
        mode: CTMode, policy: CTPolicy, logs: [LabCTLog], listTimestamp: Int64 = CTTestbed.now - LabClock.day, systemRoots: [Certificate]? = nil,
        anchors: [Certificate]? = nil
    ) throws -> ValidationOutcome {
        let root = try Self.root
        let check = CertificateTransparencyCheck(
            mode: mode, policy: policy, logList: try CTTestbed.list(logs, timestamp: listTimestamp), systemAnchors: TrustStore(systemRoots ?? [root]),
            tlsSCTList: tls, ocspResponse: staple)
        let verifier = Verifier(anchors: TrustStore(anchors ?? [root]), policy: .sslServer(host: "ct.example.test"))
        return verifier.validate(leaf: subject.leaf, intermediates: [subject.issuer], at: CTTestbed.now, checks: [check])
    }
}

/// One non-compliant shape of the issue's list, embedded in the certificate.
struct NonCompliantShape: Sendable, CustomStringConvertible {
    let name: String
    /// The logs the list names (the SCTs' logs may be missing from it, or retired in it).
    let listed: @Sendable () throws -> [LabCTLog]
    let make: @Sendable () throws -> CTSubject
    var description: String { name }

    static let all: [NonCompliantShape] = [
        NonCompliantShape(name: "too few SCTs (one)", listed: { try [CTLogs.alpha, CTLogs.beta] }) { try CTTestbed.embedded([CTLogs.alpha]) },
        NonCompliantShape(name: "one log operator", listed: { try [CTLogs.alpha, CTLogs.delta] }) {
            try CTTestbed.embedded([CTLogs.alpha, CTLogs.delta])
        },
        NonCompliantShape(name: "a bad signature", listed: { try [CTLogs.alpha, CTLogs.beta] }) {
            let spec = CTTestbed.spec()
            let pki = try CTTestbed.pki()
            let issued = try LabCertificate.issueWithEmbeddedSCTs(
                spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, logs: [CTLogs.alpha, CTLogs.beta])
            let broken = try LabCertificate.issue(
                spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer, embedding: [issued.scts[0], issued.scts[1].withCorruptedSignature])
            return CTSubject(
                leaf: try Certificate(derEncoded: broken.der), issuer: try Certificate(derEncoded: pki.intermediate.der), lab: nil, labLeaf: broken,
                labIssuer: pki.intermediate)
        },
        NonCompliantShape(name: "an SCT from a log the list does not know", listed: { try [CTLogs.alpha, CTLogs.gamma] }) {
            try CTTestbed.embedded([CTLogs.alpha, CTLogs.beta])
        },
        NonCompliantShape(
            name: "an SCT from a log retired before it",
            listed: { try [CTLogs.alpha, CTLogs.beta.with(state: .retired, since: CTTestbed.now - 20 * LabClock.day)] }
        ) {
            try CTTestbed.embedded([CTLogs.alpha, CTLogs.beta])
        },
        NonCompliantShape(name: "SCTs dated in the future", listed: { try [CTLogs.alpha, CTLogs.beta] }) {
            try CTTestbed.embedded([CTLogs.alpha, CTLogs.beta], timestamp: CTTestbed.nowMilliseconds + 3_600_000)
        },
    ]
}

@Suite("CT on the whole-path hook")
struct CertificateTransparencyCheckTests {
    static let check = "Certificate Transparency"

    @Test("a compliant chain passes require under both policies; every SCT and rule is a finding", arguments: CTPolicy.allCases)
    func compliant(policy: CTPolicy) throws {
        let subject = try CTTestbed.embedded([CTLogs.alpha, CTLogs.beta])
        let outcome = try CTCase(subject: subject).validate(mode: .require, policy: policy, logs: [CTLogs.alpha, CTLogs.beta])
        let chain = try #require(outcome.chain, "\(String(describing: outcome.failure))")
        let findings = chain.findings.filter { $0.check == Self.check }
        #expect(findings.first?.outcome == .passed)
        #expect(findings.first?.detail.hasPrefix("compliant with the \(policy) policy") == true, "\(findings)")
        let scts = findings.filter { $0.detail.hasPrefix("embedded SCT from") }
        #expect(scts.count == 2 && scts.allSatisfy { $0.outcome == .passed && $0.detail.hasSuffix(": valid") }, "\(scts)")
        #expect(scts.contains { $0.detail.contains("Lab 'Alpha'") } && scts.contains { $0.detail.contains("Lab 'Beta'") })
        let rules = findings.filter { $0.detail.hasPrefix("rule ") }
        #expect(rules.count == policy.rules.count, "\(rules)")
        for rule in policy.rules { #expect(rules.contains { $0.detail.hasPrefix("rule \(rule.rawValue)") }, "\(rule)") }
        // The other alternative's rules are not met, and only noted: the chain is compliant.
        #expect(rules.allSatisfy { $0.outcome != .failed })
        #expect(findings.allSatisfy { $0.reportedFailure == nil })
        #expect(outcome.signatureChecks >= 4, "two certificate signatures and two SCT signatures: \(outcome.signatureChecks)")
    }

    @Test("each non-compliant shape is refused under require and accepted with a reported finding under report", arguments: NonCompliantShape.all)
    func nonCompliant(shape: NonCompliantShape) throws {
        let subject = try shape.make()
        for policy in CTPolicy.allCases {
            let refused = try CTCase(subject: subject).validate(mode: .require, policy: policy, logs: shape.listed())
            let failure = try #require(refused.failure, "\(shape) accepted under require (\(policy))")
            #expect(failure.kind == .certificateTransparencyNotCompliant, "\(failure)")
            #expect(failure.certificateIndex == 0)
            #expect(failure.detail.hasPrefix("not compliant with the \(policy) policy"), "\(failure)")
            // The refusal carries the SCTs and rules, for the record.
            #expect(failure.findings.first?.outcome == .failed, "\(failure.findings)")
            #expect(failure.findings.contains { $0.detail.contains(" SCT ") || $0.detail.contains("SCT from") }, "\(failure.findings)")
            #expect(failure.findings.contains { $0.outcome == .failed && $0.detail.hasPrefix("rule ") }, "\(failure.findings)")

            let reported = try CTCase(subject: subject).validate(mode: .report, policy: policy, logs: shape.listed())
            let chain = try #require(reported.chain, "\(shape) refused under report (\(policy)): \(String(describing: reported.failure))")
            let verdict = try #require(chain.findings.first { $0.reportedFailure != nil }, "\(chain.findings)")
            #expect(verdict.outcome == .noted)
            #expect(verdict.reportedFailure?.kind == .certificateTransparencyNotCompliant)
            #expect(verdict.detail.contains("report mode: accepted"), "\(verdict)")
            #expect(chain.findings.allSatisfy { $0.outcome != .failed }, "nothing fails an accepted path: \(chain.findings)")
        }
    }

    @Test("the invalid SCT of each shape says why it does not count")
    func reasons() throws {
        let expectations: [(String, String)] = [
            ("a bad signature", "bad signature"), ("an SCT from a log the list does not know", "from a log not in the log list"),
            ("SCTs dated in the future", "timestamp in the future"),
        ]
        for (name, reason) in expectations {
            let shape = try #require(NonCompliantShape.all.first { $0.name == name })
            let failure = try #require(try CTCase(subject: shape.make()).validate(mode: .require, policy: .apple, logs: shape.listed()).failure)
            #expect(
                failure.findings.contains { $0.outcome == .noted && $0.detail.contains(reason) && $0.detail.hasSuffix("it does not count") },
                "\(name): \(failure.findings)")
        }
    }

    @Test("a chain that ends at a private anchor is exempt, and says so, even without SCTs under require")
    func privateAnchorExempt() throws {
        let subject = try CTTestbed.plain()
        let root = try CTCase.root
        let other = try Certificate(derEncoded: LabPKI.webChain(host: "other.example.test", keySlot: CTSlot.otherCA).root.der)
        // The system roots are another PKI's; the Lab root is an anchor of the host's own.
        let outcome = try CTCase(subject: subject).validate(
            mode: .require, policy: .chrome, logs: [CTLogs.alpha, CTLogs.beta], systemRoots: [other], anchors: [root])
        let chain = try #require(outcome.chain, "\(String(describing: outcome.failure))")
        #expect(chain.findings.count == 1)
        #expect(chain.findings.first?.outcome == .noted)
        #expect(chain.findings.first?.certificateIndex == 2)
        #expect(chain.findings.first?.detail.hasPrefix("exempt: the path ends at an anchor that is not a root of the system trust store") == true)
        // With the same root among the system roots, the same chain is refused.
        let asPublicRoot = try CTCase(subject: subject).validate(
            mode: .require, policy: .chrome, logs: [CTLogs.alpha, CTLogs.beta], systemRoots: [other, root])
        #expect(asPublicRoot.failure?.kind == .certificateTransparencyNotCompliant)
    }

    @Test("an anchor with a system root's subject and key is a system root: a re-encoded copy does not escape CT")
    func reencodedRoot() throws {
        let pki = try CTTestbed.pki()
        let root = try Certificate(derEncoded: pki.root.der)
        let copySpec = LabCertificateSpec(
            subject: LabName([("C", "US"), ("O", "ServerTrust Lab"), ("CN", "ServerTrust Lab Root CA P-256")]),
            notBefore: LabPKI.rootValidity.notBefore + LabClock.day, notAfter: LabPKI.rootValidity.notAfter,
            extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()])
        let copy = try Certificate(derEncoded: LabCertificate.issue(copySpec, subjectKey: pki.rootKey).der)
        #expect(copy != root && copy.subject.matches(root.subject))
        let outcome = try CTCase(subject: CTTestbed.plain()).validate(
            mode: .require, policy: .apple, logs: [CTLogs.alpha], systemRoots: [root], anchors: [copy])
        #expect(outcome.failure?.kind == .certificateTransparencyNotCompliant, "\(String(describing: outcome.failure))")
    }

    @Test("a stale log list stops enforcement with a note, in require and report alike", arguments: [CTMode.require, .report])
    func staleList(mode: CTMode) throws {
        let subject = try CTTestbed.embedded([CTLogs.alpha])
        let outcome = try CTCase(subject: subject).validate(
            mode: mode, policy: .apple, logs: [CTLogs.alpha, CTLogs.beta], listTimestamp: CTTestbed.now - 71 * LabClock.day)
        let chain = try #require(outcome.chain, "\(String(describing: outcome.failure))")
        let verdict = try #require(chain.findings.first)
        #expect(verdict.outcome == .noted)
        #expect(verdict.reportedFailure == nil, "a stale list is not a violation")
        #expect(verdict.detail.hasPrefix("not enforced: the log list from"), "\(verdict)")
        #expect(verdict.detail.contains("older than the maximum age of 70 days"), "\(verdict)")
        #expect(verdict.detail.contains("the SCTs are not compliant with the apple policy"), "\(verdict)")
    }

    @Test("SCTs in the TLS extension: two operators comply with both policies; one SCT is refused", arguments: CTPolicy.allCases)
    func tlsExtension(policy: CTPolicy) throws {
        let subject = try CTTestbed.plain()
        let two = CTCase(subject: subject, tls: try CTTestbed.delivered([CTLogs.alpha, CTLogs.beta], for: subject))
        let accepted = try two.validate(mode: .require, policy: policy, logs: [CTLogs.alpha, CTLogs.beta])
        let chain = try #require(accepted.chain, "\(String(describing: accepted.failure))")
        #expect(chain.findings.filter { $0.detail.hasPrefix("TLS extension SCT from") && $0.outcome == .passed }.count == 2, "\(chain.findings)")
        let one = CTCase(subject: subject, tls: try CTTestbed.delivered([CTLogs.alpha], for: subject))
        #expect(try one.validate(mode: .require, policy: policy, logs: [CTLogs.alpha, CTLogs.beta]).failure?.kind == .certificateTransparencyNotCompliant)
        // A list that does not parse adds nothing, and says so.
        let garbage = CTCase(subject: subject, tls: [0, 5, 1, 2])
        let refused = try #require(try garbage.validate(mode: .require, policy: policy, logs: [CTLogs.alpha]).failure)
        #expect(refused.findings.contains { $0.detail.contains("TLS extension SCT list is malformed") }, "\(refused.findings)")
    }

    @Test("SCTs in a stapled OCSP response count only when the response verifies for the leaf")
    func stapledSCTs() throws {
        let subject = try CTTestbed.plain()
        let pki = try CTTestbed.pki()
        let list = try CTTestbed.delivered([CTLogs.alpha, CTLogs.beta], for: subject)
        func staple(signer: LabIssuer, for certificate: LabCertificate) throws -> [UInt8] {
            let single = LabOCSPSingleResponse(
                certID: try .of(certificate, issuer: pki.intermediate), status: .good,
                extensions: [.raw(oid: "1.3.6.1.4.1.11129.2.4.5", critical: false, valueDER: LabDER.octetString(list))])
            return try LabOCSP.issue(LabOCSPResponseSpec(responses: [single]), signer: signer)
        }
        let good = CTCase(subject: subject, staple: try staple(signer: pki.intermediateIssuer, for: subject.labLeaf))
        for policy in CTPolicy.allCases {
            let outcome = try good.validate(mode: .require, policy: policy, logs: [CTLogs.alpha, CTLogs.beta])
            let chain = try #require(outcome.chain, "\(policy): \(String(describing: outcome.failure))")
            #expect(
                chain.findings.contains { $0.outcome == .passed && $0.detail.hasPrefix("stapled OCSP response for the leaf verified (signed by the issuer") })
            #expect(chain.findings.filter { $0.detail.hasPrefix("OCSP response SCT from") && $0.outcome == .passed }.count == 2, "\(chain.findings)")
        }
        // Signed by a key that is not the issuer's: its SCTs do not count (the same SCTs would
        // if they came in the TLS extension: the staple's own authenticity is what is refused).
        let forged = CTCase(subject: subject, staple: try staple(signer: LabIssuer(certificate: pki.intermediate, key: pki.rootKey), for: subject.labLeaf))
        let refused = try #require(try forged.validate(mode: .require, policy: .apple, logs: [CTLogs.alpha, CTLogs.beta]).failure)
        #expect(refused.kind == .certificateTransparencyNotCompliant)
        #expect(
            refused.findings.contains {
                $0.outcome == .noted && $0.detail.hasPrefix("the stapled OCSP response's SCTs do not count: its signature does not verify")
            }, "\(refused.findings)")
        #expect(!refused.findings.contains { $0.detail.hasPrefix("OCSP response SCT") })
        // A response about another certificate of the same CA does not vouch for this one.
        let other = try CTTestbed.plain()
        let elsewhere = CTCase(subject: subject, staple: try staple(signer: pki.intermediateIssuer, for: other.labLeaf))
        let notForLeaf = try #require(try elsewhere.validate(mode: .require, policy: .apple, logs: [CTLogs.alpha, CTLogs.beta]).failure)
        #expect(notForLeaf.findings.contains { $0.detail.contains("no response in it is for this certificate") }, "\(notForLeaf.findings)")
    }

    @Test("SCT signatures are paid from the validation's budget")
    func budget() throws {
        let subject = try CTTestbed.embedded([CTLogs.alpha, CTLogs.beta, CTLogs.gamma])
        let root = try CTCase.root
        let verifier = Verifier(anchors: TrustStore([root]), policy: .sslServer(host: "ct.example.test"))
        let plain = verifier.validate(leaf: subject.leaf, intermediates: [subject.issuer], at: CTTestbed.now)
        let check = CertificateTransparencyCheck(
            mode: .require, policy: .apple, logList: try CTTestbed.list([CTLogs.alpha, CTLogs.beta, CTLogs.gamma]), systemAnchors: TrustStore([root]))
        let checked = verifier.validate(leaf: subject.leaf, intermediates: [subject.issuer], at: CTTestbed.now, checks: [check])
        #expect(checked.isTrusted)
        #expect(checked.signatureChecks == plain.signatureChecks + 3)
    }

    @Test("off checks nothing; the modes are ordered off < report < require")
    func modes() throws {
        let subject = try CTTestbed.plain()
        let outcome = try CTCase(subject: subject).validate(mode: .off, policy: .apple, logs: [CTLogs.alpha])
        #expect(outcome.isTrusted && outcome.chain?.findings.isEmpty == true)
        #expect(CTMode.off < .report && CTMode.report < .require && CTMode.allCases.sorted() == [.off, .report, .require])
    }
}
