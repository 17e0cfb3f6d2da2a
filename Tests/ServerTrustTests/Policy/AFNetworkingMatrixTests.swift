import CertificateParsing
import ServerTrust
import Testing
import TrustEvaluation

/// The 12 combinations of pinning mode × allowInvalidCertificates × validatesDomainName
/// (AFNetworking's AFSecurityPolicy.m, `evaluateServerTrust:forDomain:`), each against every scenario fixture with the pins at the leaf,
/// the intermediate and the root, in compat and strict semantics.
///
/// Expected results are written out below by hand from §(d) (and from AFSecurityPolicy.m for
/// the cells §(d) leaves open); they are not computed by the code under test.
@Suite("AFNetworking 12-combination matrix")
struct AFNetworkingMatrixTests {
    /// Where the pins sit.
    enum PinPosition: Int, CaseIterable, CustomStringConvertible {
        case leaf = 0
        case intermediate = 1
        case root = 2
        var description: String { ["leaf", "intermediate", "root"][rawValue] }
    }

    /// The scenario columns of §(d), plus F, the Charles case.
    enum Scenario: String, CaseIterable {
        /// A: valid CA-issued chain for the host.
        case a = "A valid"
        /// B: valid chain from the same CA for another host.
        case b = "B other host"
        /// C: pinned self-signed certificate for the host.
        case c = "C pinned self-signed"
        /// D: attacker's self-signed certificate.
        case d = "D attacker"
        /// E: expired chain whose certificate and key are pinned.
        case e = "E expired"
        /// F: the host's chain from an interception CA the user trusts (Charles).
        case f = "F interception"
    }

    /// One row: the combination and, per scenario, "+"/"-" for pins at leaf, intermediate, root.
    struct Row: Sendable, CustomTestStringConvertible {
        let number: Int
        let mode: PinningMode
        let allowInvalid: Bool
        let validatesDomain: Bool
        let expected: [String]

        init(_ number: Int, _ mode: PinningMode, _ allowInvalid: Bool, _ validatesDomain: Bool, _ expected: String...) {
            self.number = number
            self.mode = mode
            self.allowInvalid = allowInvalid
            self.validatesDomain = validatesDomain
            self.expected = expected
        }

        var testDescription: String { "#\(number) \(mode) allowInvalid=\(allowInvalid) validatesDomainName=\(validatesDomain)" }

        func expectation(_ scenario: Scenario, _ position: PinPosition) -> Bool {
            let column = expected[Scenario.allCases.firstIndex(of: scenario) ?? 0]
            return Array(column)[position.rawValue] == "+"
        }
    }

    // Pinned sets (P): leaf position {A's leaf, C, E's leaf}; intermediate {I, C}; root {R, C}.
    // B's leaf key and the interception root X are never pinned; D never.
    //
    //               #  mode          allowInv validDom   A      B      C      D      E      F
    static let compat: [Row] = [
        Row(1, .none, false, true, "+++", "---", "---", "---", "---", "+++"),
        Row(2, .none, false, false, "+++", "+++", "---", "---", "---", "+++"),
        Row(3, .none, true, true, "---", "---", "---", "---", "---", "---"),
        Row(4, .none, true, false, "+++", "+++", "+++", "+++", "+++", "+++"),
        Row(5, .publicKey, false, true, "+++", "---", "---", "---", "---", "---"),
        Row(6, .publicKey, false, false, "+++", "-++", "---", "---", "---", "---"),
        Row(7, .publicKey, true, true, "+++", "-++", "+++", "---", "+++", "---"),
        Row(8, .publicKey, true, false, "+++", "-++", "+++", "---", "+++", "---"),
        Row(9, .certificate, false, true, "+++", "---", "---", "---", "---", "---"),
        Row(10, .certificate, false, false, "+++", "-++", "---", "---", "---", "---"),
        Row(11, .certificate, true, true, "+++", "---", "+++", "---", "---", "---"),
        Row(12, .certificate, true, false, "+++", "-++", "+++", "---", "---", "---"),
    ]

    // Strict differs from compat in rows 7 and 8 only (PolicySemantics fixes 1-3): the host
    // name is checked in row 7 (B refused) and expiry in rows 7 and 8 (E refused).
    //
    //               #  mode          allowInv validDom   A      B      C      D      E      F
    static let strict: [Row] = [
        Row(1, .none, false, true, "+++", "---", "---", "---", "---", "+++"),
        Row(2, .none, false, false, "+++", "+++", "---", "---", "---", "+++"),
        Row(3, .none, true, true, "---", "---", "---", "---", "---", "---"),
        Row(4, .none, true, false, "+++", "+++", "+++", "+++", "+++", "+++"),
        Row(5, .publicKey, false, true, "+++", "---", "---", "---", "---", "---"),
        Row(6, .publicKey, false, false, "+++", "-++", "---", "---", "---", "---"),
        Row(7, .publicKey, true, true, "+++", "---", "+++", "---", "---", "---"),
        Row(8, .publicKey, true, false, "+++", "-++", "+++", "---", "---", "---"),
        Row(9, .certificate, false, true, "+++", "---", "---", "---", "---", "---"),
        Row(10, .certificate, false, false, "+++", "-++", "---", "---", "---", "---"),
        Row(11, .certificate, true, true, "+++", "---", "+++", "---", "---", "---"),
        Row(12, .certificate, true, false, "+++", "-++", "+++", "---", "---", "---"),
    ]

    static let fixtures = PolicyFixtures.shared

    static func pinned(_ position: PinPosition) -> [Certificate] {
        let f = fixtures
        switch position {
        case .leaf: return [f.validChain[0], f.selfSigned, f.expiredChain[0]]
        case .intermediate: return [f.intermediate, f.selfSigned]
        case .root: return [f.root, f.selfSigned]
        }
    }

    /// The trusts of a scenario. F comes twice: the interception root in the generated
    /// SSL_CERT_FILE ("system" store), and as a custom anchor beside a store without it.
    static func trusts(_ scenario: Scenario) -> [PeerTrust] {
        let f = fixtures
        switch scenario {
        case .a: return [f.trust(f.validChain)]
        case .b: return [f.trust(f.otherHostChain)]
        case .c: return [f.trust([f.selfSigned])]
        case .d: return [f.trust([f.attacker])]
        case .e: return [f.trust(f.expiredChain)]
        case .f:
            var custom = f.trust(f.interceptedChain, store: f.publicStore)
            custom.anchors = [f.interceptionRoot]
            return [f.trust(f.interceptedChain), custom]
        }
    }

    func run(_ row: Row, _ semantics: PolicySemantics) {
        for position in PinPosition.allCases {
            var policy = SecurityPolicy(pinningMode: row.mode, pinnedCertificates: Self.pinned(position), semantics: semantics)
            policy.allowInvalidCertificates = row.allowInvalid
            policy.validatesDomainName = row.validatesDomain
            for scenario in Scenario.allCases {
                for trust in Self.trusts(scenario) {
                    let decision = policy.evaluate(trust, forDomain: PolicyFixtures.host)
                    let expected = row.expectation(scenario, position)
                    #expect(
                        decision.isTrusted == expected,
                        "\(semantics) #\(row.number) \(scenario.rawValue), pins at \(position) (\(trust.anchorMode)): \(decision)")
                }
            }
        }
    }

    @Test("compat reproduces AFNetworking", arguments: compat)
    func compatCell(_ row: Row) {
        run(row, .compat)
    }

    @Test("strict fixes the documented quirks", arguments: strict)
    func strictCell(_ row: Row) {
        run(row, .strict)
    }

    @Test("the early rejection explains itself")
    func earlyRejectionMessage() {
        let f = Self.fixtures
        let policy = SecurityPolicy(pinningMode: .none, allowInvalidCertificates: true, validatesDomainName: true, semantics: .compat)
        let decision = policy.evaluate(f.trust(f.validChain), forDomain: PolicyFixtures.host)
        #expect(decision.failure?.kind == .allowInvalidCertificatesRequiresPinning)
        #expect(decision.failure?.detail == "In order to validate a domain name for self signed certificates, you MUST use pinning.")
        #expect(decision.record.steps.count == 1, "nothing is evaluated before the early rejection")
    }

    @Test("pinning modes with an empty pin set refuse everything", arguments: [PinningMode.publicKey, .certificate])
    func emptyPinSet(_ mode: PinningMode) {
        let f = Self.fixtures
        for (allowInvalid, validates) in [(false, true), (false, false), (true, true), (true, false)] {
            var policy = SecurityPolicy(pinningMode: mode, semantics: .compat)
            policy.allowInvalidCertificates = allowInvalid
            policy.validatesDomainName = validates
            #expect(!policy.evaluate(f.trust(f.validChain), forDomain: PolicyFixtures.host).isTrusted, "\(mode) \(allowInvalid) \(validates)")
        }
    }

    @Test("the caller's trust is not modified")
    func trustNotMutated() {
        let f = Self.fixtures
        let trust = f.trust(f.validChain)
        var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [f.root], semantics: .compat)
        policy.validatesDomainName = false
        #expect(policy.evaluate(trust, forDomain: PolicyFixtures.host).isTrusted)
        #expect(trust.anchorMode == .systemOnly)
        #expect(trust.policy.kind == .sslServer)
    }
}
