import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

/// Pins are checked against every valid path, not the first one built: a server with a
/// cross-signed chain (the leaf, an intermediate signed by new root B and the same intermediate
/// key cross-signed by old root A, both roots trusted) is accepted with a pin on A alone and with
/// a pin on B alone, whichever order it sends its certificates in and whichever root the
/// verifier tries first; a pin on neither refuses; and an attacker's chain that validates only
/// through a trusted interception CA, with the pinned root appended, is refused. For every pin
/// kind that compares with a validated path.
@Suite("pins are checked against every valid path")
struct EveryValidPathTests {
    static let x = CrossSignFixture.shared
    static let f = PolicyFixtures.shared
    static let host = PolicyFixtures.host

    static let configurations: [PinConfiguration] = [
        PinConfiguration(name: "TrustPolicy: default validation, the host's SPKI pins") {
            TrustPolicy(HostTrustPolicy(pins: try PinConfiguration.pinSet($0)))
        },
        PinConfiguration(name: "SPKIPinsTrustEvaluator") {
            SPKIPinsTrustEvaluator(configuration: try PinningConfiguration([try PinConfiguration.pinSet($0)]))
        },
        PinConfiguration(name: "PublicKeysTrustEvaluator") { PublicKeysTrustEvaluator(certificates: [$0]) },
        PinConfiguration(name: "PinnedCertificatesTrustEvaluator") { PinnedCertificatesTrustEvaluator(certificates: [$0]) },
        PinConfiguration(name: "SecurityPolicy strict public-key") { SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [$0]) },
        PinConfiguration(name: "SecurityPolicy compat public-key") {
            SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [$0], semantics: .compat)
        },
        PinConfiguration(name: "composite [default, public keys without validation]") {
            CompositeTrustEvaluator(evaluators: [
                DefaultTrustEvaluator(), PublicKeysTrustEvaluator(certificates: [$0], performDefaultValidation: false, validateHost: false),
            ])
        },
        PinConfiguration(name: "TrustPolicy: SecurityPolicy mode none, then the host's SPKI pins") {
            TrustPolicy(HostTrustPolicy(evaluator: SecurityPolicy(), pins: try PinConfiguration.pinSet($0)))
        },
        PinConfiguration(name: "policy file spkiPins") { certificate in
            let document = #"{"version": 1, "hosts": [{"host": "\#(host)", "pins": ["sha256/\#(certificate.spkiSHA256Base64)", "\#(f.backupPin)"]}]}"#
            return try PolicyFile.parse(Array(document.utf8))
        },
    ]

    @Test("a pin on either root accepts, whatever the order sent and the order of the store", arguments: configurations)
    func eitherRootAccepts(_ configuration: PinConfiguration) throws {
        let x = Self.x
        for pinned in [x.oldRoot, x.newRoot] {
            let evaluator = try configuration.make(pinned)
            for served in x.servedOrders {
                for store in [x.store, x.storeNewFirst] {
                    let decision = evaluator.decide(x.trust(served, store: store), forHost: Self.host)
                    #expect(decision.isTrusted, "pinned \(pinned.subject.rfc4514), served \(served.map(\.subject.rfc4514))\n\(decision.explanation)")
                    #expect(decision.record.validatedPath?.certificates.contains(pinned) == true)
                }
            }
        }
    }

    @Test("a pin on neither root refuses", arguments: configurations)
    func neitherRootRefuses(_ configuration: PinConfiguration) throws {
        let evaluator = try configuration.make(Self.f.root)
        for served in Self.x.servedOrders {
            let decision = evaluator.decide(Self.x.trust(served), forHost: Self.host)
            #expect(!decision.isTrusted, "\(decision.explanation)")
        }
    }

    @Test("a chain valid only through a trusted interception CA, with the pinned root and intermediate appended, is refused", arguments: configurations)
    func interceptionWithPinnedRootAppended(_ configuration: PinConfiguration) throws {
        let x = Self.x
        for pinned in [x.oldRoot, x.newRoot] {
            let evaluator = try configuration.make(pinned)
            for chain in [
                Self.f.interceptedChain + [pinned], Self.f.interceptedChain + [x.intermediateByOld, x.intermediateByNew, pinned],
                Self.f.interceptedChain + [Self.f.interceptionRoot, pinned, x.intermediateByNew],
            ] {
                let decision = evaluator.decide(x.trust(chain), forHost: Self.host)
                #expect(!decision.isTrusted, "\(decision.explanation)")
            }
        }
    }

    @Test("an intermediate the store also holds as an anchor does not hide the root the pins name (Brave #52059)")
    func intermediateAlsoAnchor() throws {
        let x = Self.x
        let store = TrustStore([x.intermediateByNew, x.newRoot], sources: ["store with the intermediate as an anchor"])
        for evaluator in [
            try Self.configurations[0].make(x.newRoot), try Self.configurations[2].make(x.newRoot), try Self.configurations[4].make(x.newRoot),
        ] {
            let decision = evaluator.decide(x.trust([x.leaf, x.intermediateByNew], store: store), forHost: Self.host)
            #expect(decision.isTrusted, "\(decision.explanation)")
            #expect(decision.record.validatedPath?.certificates == [x.leaf, x.intermediateByNew, x.newRoot])
        }
    }

    @Test("a root also sent as an intermediate cross-signed by the old root: a pin on the old root accepts")
    func rootAlsoIntermediate() throws {
        let x = Self.x
        for store in [x.store, x.storeNewFirst] {
            let decision = try Self.configurations[0].make(x.oldRoot).decide(x.trust([x.leafUnderNewRoot, x.newRootByOld], store: store), forHost: Self.host)
            #expect(decision.isTrusted, "\(decision.explanation)")
            #expect(decision.record.validatedPath?.certificates == [x.leafUnderNewRoot, x.newRootByOld, x.oldRoot])
        }
    }

    @Test("the record says which path matched and which other valid paths were seen")
    func record() throws {
        let x = Self.x
        // Served with B's intermediate first: the path through B is found first and is not the
        // one pinned; the path through A is.
        let decision = try Self.configurations[0].make(x.oldRoot).decide(
            x.trust([x.leaf, x.intermediateByNew, x.intermediateByOld]), forHost: Self.host)
        #expect(decision.isTrusted)
        let record = decision.record
        #expect(record.validatedPath?.certificates == [x.leaf, x.intermediateByOld, x.oldRoot])
        #expect(record.otherValidPaths == [[x.leaf, x.intermediateByNew, x.newRoot].map(\.subject.rfc4514)])
        #expect(record.steps.contains(.pinnedPath(found: true, others: record.otherValidPaths)))
        #expect(record.explanation.contains("also:      " + [x.leaf, x.intermediateByNew, x.newRoot].map(\.subject.rfc4514).joined(separator: " ← ")))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(record.jsonText.utf8)) as? [String: Any])
        #expect(json["otherValidPaths"] as? [[String]] == record.otherValidPaths)
        // A pin on neither: every valid path was seen, none carries the pins, and the record says so.
        let refused = try Self.configurations[0].make(Self.f.root).decide(x.trust([x.leaf, x.intermediateByNew, x.intermediateByOld]), forHost: Self.host)
        #expect(!refused.isTrusted)
        #expect(refused.record.steps.contains { if case .pinnedPath(found: false, let others) = $0 { return others.count == 1 } else { return false } })
        // Without pins nothing more is searched and nothing is said.
        let unpinned = DefaultTrustEvaluator().decide(x.trust([x.leaf, x.intermediateByNew, x.intermediateByOld]), forHost: Self.host)
        #expect(unpinned.isTrusted && unpinned.record.otherValidPaths.isEmpty)
        #expect(!unpinned.record.steps.contains { if case .pinnedPath = $0 { return true } else { return false } })
    }
}
