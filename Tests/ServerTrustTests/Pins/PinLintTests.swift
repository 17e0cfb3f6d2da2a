import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

/// `TrustPolicy.lint`: each shape that breaks pins at a renewal or a change of CA is flagged,
/// with the pin, the rule and a fix, on generated chains (a cross-signed one; one whose
/// intermediate is named like Let's Encrypt's); a sound pin set gets no finding; a policy file
/// reports the chain-free findings as warnings when it loads.
@Suite("pin lint: pin sets that break at the next renewal")
struct PinLintTests {
    static let f = PolicyFixtures.shared
    static let x = CrossSignFixture.shared
    static let host = PolicyFixtures.host
    static let now = PolicyFixtures.now
    static let day: Int64 = 86_400

    /// A chain named like Let's Encrypt's (a CA known to rotate intermediates), with an
    /// intermediate that expires in 100 days.
    struct RotatingCA: Sendable {
        let root: Certificate
        let intermediate: Certificate
        let leaf: Certificate

        static let shared: RotatingCA = {
            do {
                let now = PolicyFixtures.now
                let rootKey = try LabKey.shared(.p256, slot: 222)
                let intermediateKey = try LabKey.shared(.p256, slot: 223)
                let root = try LabCertificate.issue(
                    LabCertificateSpec(
                        subject: LabName([("O", "Internet Security Research Group"), ("CN", "ISRG Root X1 (lab)")]),
                        notBefore: now - 5 * LabClock.year, notAfter: now + 10 * LabClock.year,
                        extensions: [.basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier()]),
                    subjectKey: rootKey)
                let intermediate = try LabCertificate.issue(
                    LabCertificateSpec(
                        subject: LabName([("O", "Let's Encrypt"), ("CN", "R10 (lab)")]), notBefore: now - LabClock.year,
                        notAfter: now + 100 * LabClock.day,
                        extensions: [
                            .basicConstraints(ca: true, pathLength: 0), .keyUsage([.digitalSignature, .keyCertSign, .cRLSign]),
                            .subjectKeyIdentifier(), .authorityKeyIdentifier(),
                        ]),
                    subjectKey: intermediateKey, issuer: LabIssuer(certificate: root, key: rootKey))
                let leaf = try LabCertificate.issue(
                    LabPKI.leafSpec(host: PolicyFixtures.host, keyAlgorithm: .p256), subjectKey: LabKey.shared(.p256, slot: 224),
                    issuer: LabIssuer(certificate: intermediate, key: intermediateKey))
                return RotatingCA(
                    root: try Certificate(derEncoded: root.der), intermediate: try Certificate(derEncoded: intermediate.der),
                    leaf: try Certificate(derEncoded: leaf.der))
            } catch {
                preconditionFailure("fixture: \(error)")
            }
        }()
    }

    static func pins(_ pins: [SPKIPin], expiry: Int64? = nil, enforce: Bool = true) throws -> TrustPolicy {
        TrustPolicy(
            rules: [
                TrustPolicy.Rule(
                    try HostPattern(host),
                    HostTrustPolicy(pins: PinnedHost(pattern: try HostPattern(host), pins: pins, enforcePinning: enforce, expirationDate: expiry)))
            ], unmatched: nil)
    }

    static func pin(_ certificate: Certificate, scope: PinScope = .any) -> SPKIPin { SPKIPin(certificate: certificate, scope: scope) }

    /// One shape, the policy, chain and roots that show it, and the level it must be flagged at.
    struct Case: Sendable, CustomTestStringConvertible {
        let rule: PinLintFinding.Rule
        let level: PinLintFinding.Level
        let make: @Sendable () throws -> (policy: TrustPolicy, chain: [Certificate]?, roots: TrustStore)
        var testDescription: String { rule.rawValue }
    }

    static let cases: [Case] = [
        Case(rule: .leafOnly, level: .error) {
            // Leaf-scoped pins (ATS's NSPinnedLeafIdentities), no chain needed.
            (try pins([pin(x.leaf, scope: .leaf), SPKIPin(f.backupPin.description, scope: .leaf)]), nil, x.store)
        },
        Case(rule: .leafOnly, level: .error) {
            // The chain shows the only pins in it are the leaf's: every pin is the leaf's key.
            (try pins([pin(x.leaf), pin(x.leaf, scope: .leaf)]), [x.leaf, x.intermediateByNew], x.store)
        },
        Case(rule: .noSpareKey, level: .warning) { (try pins([pin(x.oldRoot), pin(x.newRoot)]), x.servedOrders[0], x.store) },
        Case(rule: .singleIntermediate, level: .error) {
            let ca = RotatingCA.shared
            return (try pins([pin(ca.intermediate), f.backupPin]), [ca.leaf, ca.intermediate], TrustStore([ca.root]))
        },
        Case(rule: .singleIntermediate, level: .warning) {
            (try pins([pin(x.intermediateByNew), f.backupPin]), [x.leaf, x.intermediateByNew], x.store)
        },
        Case(rule: .certificatesExpireFirst, level: .warning) {
            let ca = RotatingCA.shared
            return (try pins([pin(ca.intermediate), f.backupPin], expiry: now + 200 * day), [ca.leaf, ca.intermediate], TrustStore([ca.root]))
        },
        Case(rule: .crossSignedSuccessorNotPinned, level: .warning) {
            // The server sends B cross-signed by A; both roots are trusted; only A is pinned.
            (try pins([pin(x.oldRoot), f.backupPin]), [x.leafUnderNewRoot, x.newRootByOld], x.store)
        },
        Case(rule: .crossSignedSuccessorNotPinned, level: .warning) {
            // The intermediate cross-signed: the chain validates to both roots; only A is pinned.
            (try pins([pin(x.oldRoot), f.backupPin]), x.servedOrders[1], x.store)
        },
        Case(rule: .expiryPassed, level: .error) { (try pins([pin(x.oldRoot), pin(x.newRoot), f.backupPin], expiry: now - day), nil, x.store) },
        Case(rule: .expiryTooFar, level: .warning) {
            (try pins([pin(x.oldRoot), pin(x.newRoot), f.backupPin], expiry: now + 400 * day), nil, x.store)
        },
        Case(rule: .noMatchToday, level: .error) { (try pins([pin(f.root), f.backupPin]), x.servedOrders[0], x.store) },
        Case(rule: .noMatchToday, level: .warning) { (try pins([pin(f.root), f.backupPin], enforce: false), x.servedOrders[0], x.store) },
        Case(rule: .chainNotValid, level: .warning) { (try pins([pin(x.oldRoot), f.backupPin]), x.servedOrders[0], .empty) },
        Case(rule: .chainNotCovered, level: .warning) { (try pins([pin(x.oldRoot), f.backupPin]), f.otherHostChain, x.store) },
        Case(rule: .leafOnly, level: .error) {
            // Certificate pinning on the leaf certificate (Alamofire's evaluator): every renewal breaks it.
            (
                TrustPolicy(
                    rules: [TrustPolicy.Rule(try HostPattern(host), HostTrustPolicy(evaluator: PinnedCertificatesTrustEvaluator(certificates: [x.leaf])))],
                    unmatched: nil), nil, x.store
            )
        },
    ]

    @Test("each shape is flagged at its level, naming the rule, the hosts and a fix", arguments: cases)
    func flagged(_ shape: Case) throws {
        let (policy, chain, roots) = try shape.make()
        let findings = policy.lint(chain: chain, anchors: roots, at: Self.now)
        let finding = try #require(findings.first { $0.rule == shape.rule }, "\(findings.map(\.description))")
        #expect(finding.level == shape.level, "\(finding)")
        #expect(!finding.fix.isEmpty && !finding.message.isEmpty)
        #expect(finding.hosts == (shape.rule == .chainNotCovered ? "*" : Self.host))
        #expect(finding.description.hasPrefix("\(shape.level.rawValue): \(shape.rule.rawValue): "))
    }

    @Test("a sound pin set gets no finding: both roots of the cross-sign and a spare, expiring within a year")
    func sound() throws {
        let x = Self.x
        let policy = try Self.pins([Self.pin(x.oldRoot), Self.pin(x.newRoot), Self.f.backupPin], expiry: Self.now + 180 * Self.day)
        for served in x.servedOrders + [[x.leafUnderNewRoot, x.newRootByOld]] {
            #expect(policy.lint(chain: served, anchors: x.store, at: Self.now).isEmpty, "\(policy.lint(chain: served, anchors: x.store, at: Self.now))")
        }
        #expect(policy.lint(at: Self.now).isEmpty)
        // The pins name a fix that is itself sound: the leaf-only finding proposes both roots.
        let leafOnly = try Self.pins([Self.pin(x.leaf), Self.pin(x.leaf, scope: .leaf)]).lint(chain: x.servedOrders[0], anchors: x.store, at: Self.now)
        let fix = try #require(leafOnly.first { $0.rule == .leafOnly }?.fix)
        #expect(fix.contains(SPKIPin(certificate: x.oldRoot).description) && fix.contains(SPKIPin(certificate: x.newRoot).description))
    }

    @Test("a policy file reports its pins' chain-free findings as warnings when it loads; its errors stay errors")
    func policyFileWarnings() throws {
        let directory = try PolicyFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let leaf = "sha256/" + Self.x.leaf.spkiSHA256Base64
        let document = #"""
            {"version": 1, "hosts": [{"host": "\#(Self.host)", "expirationDate": "2025-06-01",
              "pins": [{"pin": "\#(leaf)", "scope": "leaf"}, {"pin": "\#(Self.f.backupPin)", "scope": "leaf"}]}]}
            """#
        let path = directory + "/policy.json"
        try document.write(toFile: path, atomically: true, encoding: .utf8)
        var warnings: [PinLintFinding] = []
        let policy = try PolicyFile.load(contentsOf: path, at: Self.now) { warnings.append($0) }
        #expect(policy.rules.count == 1)
        #expect(Set(warnings.map(\.rule)) == [.leafOnly, .expiryPassed], "\(warnings)")
        try #"{"version": 1, "hosts": [{"host": "\#(Self.host)", "pins": ["not a pin"]}]}"#.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: PolicyFileError.self) { try PolicyFile.load(contentsOf: path, at: Self.now) { _ in } }
    }
}
