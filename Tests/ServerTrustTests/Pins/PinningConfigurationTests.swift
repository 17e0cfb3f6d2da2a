import CertificateParsing
import Testing
import TrustEvaluation

@testable import ServerTrust

@Suite("SPKI pin sets: scopes, expiry, windows, backup pins, report-only, negative pins")
struct PinningConfigurationTests {
    let f = PolicyFixtures.shared
    let host = PolicyFixtures.host
    let now = PolicyFixtures.now

    var leafPin: SPKIPin { SPKIPin(certificate: f.validChain[0], scope: .leaf) }
    var caPin: SPKIPin { SPKIPin(certificate: f.intermediate, scope: .ca) }
    var rootPin: SPKIPin { SPKIPin(certificate: f.root) }

    func configuration(_ pins: [SPKIPin], negative: [SPKIPin] = [], enforce: Bool = true, expiration: Int64? = nil, pattern: String = "**.example.test")
        throws -> PinningConfiguration
    {
        try PinningConfiguration([
            PinnedHost(pattern: HostPattern(pattern), pins: pins, negativePins: negative, enforcePinning: enforce, expirationDate: expiration)
        ])
    }

    /// The validated chain of A: leaf, intermediate, root.
    var chain: [Certificate] { f.validChain + [f.root] }

    @Test("a pin may match any position of the validated chain, the unsent root included")
    func anyPosition() throws {
        for pin in [SPKIPin(certificate: f.validChain[0]), SPKIPin(certificate: f.intermediate), rootPin] {
            let result = try configuration([pin, f.backupPin]).check(certificates: chain, forHost: host, at: now)
            #expect(result.outcome == .matched)
        }
    }

    @Test("scopes: a leaf pin only at position 0, a CA pin never at the leaf")
    func scopes() throws {
        let leafAsCA = SPKIPin(certificate: f.validChain[0], scope: .ca)
        #expect(try configuration([leafAsCA, f.backupPin]).check(certificates: chain, forHost: host, at: now).outcome == .noMatchingPin)
        let caAsLeaf = SPKIPin(certificate: f.intermediate, scope: .leaf)
        #expect(try configuration([caAsLeaf, f.backupPin]).check(certificates: chain, forHost: host, at: now).outcome == .noMatchingPin)
        #expect(try configuration([caPin, f.backupPin]).check(certificates: chain, forHost: host, at: now).outcome == .matched)
        // An `any` pin counts for the set of the position it matches.
        let anyLeaf = SPKIPin(certificate: f.validChain[0])
        #expect(try configuration([caAsLeaf, anyLeaf, f.backupPin]).check(certificates: chain, forHost: host, at: now).outcome == .matched)
        let unmatchedCA = SPKIPin(certificate: f.selfSigned, scope: .ca)
        let result = try configuration([unmatchedCA, anyLeaf]).check(certificates: chain, forHost: host, at: now)
        #expect(result.outcome == .noMatchingPin)
        #expect(result.unmatchedScopes == [.ca])
    }

    @Test("ATS: with a leaf set and a CA set, both must match")
    func bothSetsMustMatch() throws {
        var backupLeaf = f.backupPin
        backupLeaf.scope = .leaf
        let both = try configuration([leafPin, caPin, backupLeaf])
        #expect(both.check(certificates: chain, forHost: host, at: now).outcome == .matched)
        let otherLeaf = f.otherHostChain + [f.root]
        let result = both.check(certificates: otherLeaf, forHost: host, at: now)
        #expect(result.outcome == .noMatchingPin, "the CA set matches but the leaf set does not")
        #expect(result.unmatchedScopes == [.leaf])
        #expect(result.detail.contains("no leaf pin"))
    }

    @Test("most specific pattern wins; exclusions unpin")
    func patterns() throws {
        let configuration = try PinningConfiguration([
            PinnedHost(pattern: HostPattern("**.example.test"), pins: [SPKIPin(certificate: f.selfSigned), f.backupPin]),
            PinnedHost(pattern: HostPattern(host), pins: [rootPin, f.backupPin]),
            .excluded(HostPattern("legacy.example.test")),
        ])
        #expect(configuration.check(certificates: chain, forHost: host, at: now).outcome == .matched)
        #expect(configuration.check(certificates: chain, forHost: "www.example.test", at: now).outcome == .noMatchingPin)
        #expect(configuration.check(certificates: chain, forHost: "legacy.example.test", at: now).outcome == .excluded)
        #expect(configuration.check(certificates: chain, forHost: "example.org", at: now).outcome == .notPinned)
    }

    @Test("after the pin set expires the host is unpinned, and that is logged")
    func expiry() throws {
        let pins = try configuration([SPKIPin(certificate: f.selfSigned), f.backupPin], expiration: now - 1)
        #expect(pins.check(certificates: chain, forHost: host, at: now).outcome == .expired)
        #expect(pins.check(certificates: chain, forHost: host, at: now - 1).outcome == .noMatchingPin, "still pinned at the expiration instant")
        let log = Collector<String>()
        let evaluator = SPKIPinsTrustEvaluator(configuration: pins, logger: { log.append($0) })
        let decision = evaluator.decide(f.trust(f.validChain), forHost: host)
        #expect(decision.isTrusted)
        #expect(log.all.count == 1 && log.all[0].contains("expired at"))
        #expect(decision.record.notes.contains { $0.contains("treated as unpinned") })
    }

    @Test("per-pin windows: staged rotation from an old key to a new one")
    func windows() throws {
        var old = rootPin
        old.notAfter = now - 1
        var next = f.backupPin
        next.notBefore = now - 10
        let rotating = try configuration([old, next])
        #expect(rotating.check(certificates: chain, forHost: host, at: now - 5).outcome == .matched, "old pin still valid")
        #expect(rotating.check(certificates: chain, forHost: host, at: now).outcome == .noMatchingPin, "old pin retired")
        var future = f.backupPin
        future.notBefore = now + 10
        let result = try configuration([old, future]).check(certificates: chain, forHost: host, at: now)
        #expect(result.outcome == .noMatchingPin)
        #expect(result.detail.contains("no pin for **.example.test is valid at"))
    }

    @Test("a failed check names the pins in words: 'no pin', 'no leaf pin', 'no CA pin', never the scope's raw name")
    func noMatchDetail() throws {
        let stranger = try SPKIPin(algorithm: .sha256, digest: [UInt8](repeating: 7, count: 32))
        let any = try configuration([stranger, f.backupPin]).check(certificates: chain, forHost: host, at: now)
        #expect(any.outcome == .noMatchingPin)
        #expect(any.detail == "no pin for **.example.test matches the chain", "\(any.detail)")
        var leafPin = stranger
        leafPin.scope = .leaf
        var caPin = f.backupPin
        caPin.scope = .ca
        let scoped = try configuration([leafPin, caPin]).check(certificates: chain, forHost: host, at: now)
        #expect(scoped.detail == "no leaf or CA pin for **.example.test matches the chain", "\(scoped.detail)")
    }

    @Test("backup-pin rule: at least two distinct pins when enforcing, decided when the configuration is made")
    func backupPins() throws {
        let single = #expect(throws: PolicyFileError.self) { try configuration([rootPin]) }
        #expect(single?.problems.map(\.kind) == [.missingBackupPin])
        #expect(single?.problems.first?.path == "$.hosts[0]")
        #expect(single?.problems.first?.message.contains("RFC 7469") == true)
        // The same pin twice (or in two windows) is one pin.
        var windowed = rootPin
        windowed.notAfter = now + 10
        let twice = #expect(throws: PolicyFileError.self) { try configuration([rootPin, windowed]) }
        #expect(twice?.problems.map(\.kind) == [.missingBackupPin])
        #expect(throws: Never.self) { try configuration([rootPin], enforce: false) }
        let none = #expect(throws: PolicyFileError.self) { try configuration([]) }
        #expect(none?.problems.map(\.kind) == [.noPins])

        // Leaf and intermediate are two distinct pins: the configuration is valid, and the
        // decision never depends on what else the server sends.
        let current = try configuration([SPKIPin(certificate: f.validChain[0]), SPKIPin(certificate: f.intermediate)])
        let result = current.check(certificates: chain, forHost: host, at: now)
        #expect(result.outcome == .matched && result.allowsConnection)
        // ... but neither is a spare: a warning, not a refusal.
        #expect(result.spareWarning?.contains("none is a spare") == true)
        let decision = SPKIPinsTrustEvaluator(configuration: current).decide(f.trust(f.validChain), forHost: host)
        #expect(decision.isTrusted)
        #expect(decision.record.notes.contains { $0.contains("none is a spare") })
        // With a key held in reserve there is no warning.
        let spared = try configuration([SPKIPin(certificate: f.intermediate), f.backupPin]).check(certificates: chain, forHost: host, at: now)
        #expect(spared.outcome == .matched && spared.spareWarning == nil)
    }

    @Test("the same pins decide the same whether the server sends its root, reorders, or adds a stray certificate")
    func servedVariationsDoNotChangeTheDecision() throws {
        let pins = try configuration([SPKIPin(certificate: f.validChain[0]), rootPin])
        let leaf = f.validChain[0]
        let variations: [(String, [Certificate])] = [
            ("as usual", [leaf, f.intermediate]),
            ("with its root", [leaf, f.intermediate, f.root]),
            ("reordered", [leaf, f.root, f.intermediate]),
            ("with a stray certificate", [leaf, f.intermediate, f.selfSigned]),
            ("all of it, shuffled", [leaf, f.selfSigned, f.root, f.interceptionRoot, f.intermediate]),
        ]
        for (label, served) in variations {
            let decision = SPKIPinsTrustEvaluator(configuration: pins).decide(f.trust(served, store: f.publicStore), forHost: host)
            #expect(decision.isTrusted, "\(label): \(decision)")
            #expect(decision.verifiedChain == [leaf, f.intermediate, f.root], "\(label)")
        }
    }

    @Test("report-only: a mismatch is allowed, reported and noted")
    func reportOnly() throws {
        let reporter = CollectingReporter()
        let pins = try configuration([SPKIPin(certificate: f.selfSigned)], enforce: false)
        let evaluator = SPKIPinsTrustEvaluator(configuration: pins, reporter: reporter)
        let decision = evaluator.decide(f.trust(f.validChain), forHost: host)
        #expect(decision.isTrusted)
        #expect(decision.record.notes.contains { $0.hasPrefix("report-only:") })
        #expect(!decision.record.servedPins.isEmpty, "the evidence is recorded even when allowed")
        #expect(reporter.reports.all.count == 1)
        #expect(reporter.reports.all.first?.0.validationResult == .failedNoMatchingPin)
        #expect(reporter.reports.all.first?.0.enforcePinning == false)
        // Report-only never relaxes chain validation.
        #expect(!evaluator.decide(f.trust([f.attacker]), forHost: host).isTrusted)
    }

    @Test("enforced: a mismatch is refused with the pins ready to paste")
    func enforced() throws {
        let pins = try configuration([SPKIPin(certificate: f.selfSigned), f.backupPin])
        let decision = SPKIPinsTrustEvaluator(configuration: pins).decide(f.trust(f.validChain), forHost: host)
        #expect(decision.failure?.kind == .spkiPinningFailed)
        #expect(decision.record.configuredPins == pins.hosts[0].pins.map(\.description))
        #expect(decision.record.servedPins.map(\.position) == [0, 1, 2])
        let message = try #require(decision.record.pinFailureMessage)
        #expect(message.contains("    sha256/\(f.validChain[0].spkiSHA256Base64): CN=\(host)"))
        #expect(message.contains("  Pinned certificates for \(host):\n    sha256/\(f.selfSigned.spkiSHA256Base64)"))
    }

    @Test("negative pins refuse a chain containing the key, even in report-only mode")
    func negativePins() throws {
        for enforce in [true, false] {
            let reporter = CollectingReporter()
            let pins = try configuration([rootPin, f.backupPin], negative: [SPKIPin(certificate: f.intermediate)], enforce: enforce)
            let decision = SPKIPinsTrustEvaluator(configuration: pins, reporter: reporter).decide(f.trust(f.validChain), forHost: host)
            #expect(decision.failure?.kind == .negativePinMatched)
            #expect(decision.failure?.detail.contains("chain position 1") == true)
            #expect(reporter.reports.all.first?.0.validationResult == .failedNegativePinMatched)
        }
        let onlyNegative = try configuration([], negative: [SPKIPin(certificate: f.selfSigned)])
        #expect(onlyNegative.check(certificates: chain, forHost: host, at: now).outcome == .matched)
        var expiredNegative = SPKIPin(certificate: f.intermediate)
        expiredNegative.notAfter = now - 1
        #expect(try configuration([rootPin, f.backupPin], negative: [expiredNegative]).check(certificates: chain, forHost: host, at: now).outcome == .matched)
    }

    @Test("pins never make an untrusted chain acceptable; the chain failure is reported")
    func chainFirst() throws {
        let reporter = CollectingReporter()
        let pins = try configuration([SPKIPin(certificate: f.attacker), f.backupPin])
        let decision = SPKIPinsTrustEvaluator(configuration: pins, reporter: reporter).decide(f.trust([f.attacker]), forHost: host)
        #expect(decision.failure?.kind == .chainValidationFailed)
        #expect(reporter.reports.all.first?.0.validationResult == .failedInvalidCertificateChain)
    }

    @Test("the observer sees every decision")
    func observer() throws {
        let seen = Collector<Bool>()
        let pins = try configuration([rootPin, f.backupPin])
        let evaluator = SPKIPinsTrustEvaluator(configuration: pins, observer: { seen.append($0.isTrusted) })
        _ = evaluator.decide(f.trust(f.validChain), forHost: host)
        _ = evaluator.decide(f.trust(f.interceptedChain), forHost: host)
        // Unpinned, so only default validation applies, and the chain is not valid for that host.
        _ = evaluator.decide(f.trust(f.validChain), forHost: "unpinned.example.org")
        #expect(seen.all == [true, false, false])
    }

    @Test("duplicate patterns and orphan exclusions are reported together")
    func configurationProblems() throws {
        let error = #expect(throws: PolicyFileError.self) {
            try PinningConfiguration([
                PinnedHost(pattern: HostPattern("**.example.test"), pins: [rootPin, f.backupPin]),
                PinnedHost(pattern: HostPattern("example.test", includeSubdomains: true), pins: [rootPin, f.backupPin]),
                .excluded(HostPattern("a.example.org")),
            ])
        }
        #expect(error?.problems.map(\.kind) == [.duplicateHostPattern, .excludeWithoutParent])
        #expect(error?.problems.map(\.path) == ["$.hosts[1]", "$.hosts[2]"])
    }
}
