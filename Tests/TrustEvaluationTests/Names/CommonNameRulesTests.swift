import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// CA/B BR 7.1.4.3's encoding rules for the leaf's commonName under the TLS server policy
/// (limbo webpki::cn::*), and the SAN-membership rule that is deliberately not enforced.
@Suite("commonName encoding (CA/B BR 7.1.4.3)")
struct CommonNameRulesTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let commonName: String
        let san: LabGeneralName
        let reference: String
        let accepted: Bool
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "IPv6 CN in RFC 5952 form", commonName: "2001:db8::1", san: .ipAddress("2001:db8::1"), reference: "2001:db8::1", accepted: true),
        Row(
            name: "IPv4-mapped IPv6 CN in mixed notation (RFC 5952 §5)", commonName: "::ffff:192.0.2.1", san: .ipAddress("::ffff:192.0.2.1"),
            reference: "::ffff:192.0.2.1", accepted: true),
        Row(name: "IPv6 CN with upper-case hex", commonName: "2001:DB8::1", san: .ipAddress("2001:db8::1"), reference: "2001:db8::1", accepted: false),
        Row(
            name: "IPv6 CN with leading zeros, uncompressed", commonName: "2001:0db8:0000:0000:0000:0000:0000:0001",
            san: .ipAddress("2001:db8::1"), reference: "2001:db8::1", accepted: false),
        // Two zero runs of equal length: RFC 5952 §4.2.3 compresses the first.
        Row(
            name: "IPv6 CN compressing the second of two equal zero runs", commonName: "2001:db8:0:0:1::1", san: .ipAddress("2001:db8::1:0:0:1"),
            reference: "2001:db8::1:0:0:1", accepted: false),
        Row(
            name: "IPv6 CN without compression", commonName: "2001:db8:0:0:1:0:0:1", san: .ipAddress("2001:db8::1:0:0:1"),
            reference: "2001:db8::1:0:0:1", accepted: false),
        Row(
            name: "IPv6 CN compressing the first of two equal zero runs", commonName: "2001:db8::1:0:0:1", san: .ipAddress("2001:db8::1:0:0:1"),
            reference: "2001:db8::1:0:0:1", accepted: true),
        Row(name: "IPv6 CN in brackets", commonName: "[2001:db8::1]", san: .ipAddress("2001:db8::1"), reference: "2001:db8::1", accepted: false),
        Row(name: "IPv4 CN", commonName: "192.0.2.1", san: .ipAddress("192.0.2.1"), reference: "192.0.2.1", accepted: true),
        Row(
            name: "U-label domain CN beside its A-label SAN", commonName: "test-測試.com", san: .dns("xn--test--wg5h0h.com"),
            reference: "xn--test--wg5h0h.com", accepted: false),
        Row(
            name: "A-label domain CN", commonName: "xn--test--wg5h0h.com", san: .dns("xn--test--wg5h0h.com"),
            reference: "xn--test--wg5h0h.com", accepted: true),
        // Not enforced (x509-limbo BetterTLS cases expect these to validate); the CN is never
        // used for matching, so the SAN decides.
        Row(
            name: "DNS CN absent from the SAN", commonName: "notinsan.example.com", san: .dns("www.example.com"),
            reference: "www.example.com", accepted: true),
        Row(
            name: "non-ASCII CN that is not a domain name", commonName: "Jörg's test server", san: .dns("www.example.com"),
            reference: "www.example.com", accepted: true),
    ]

    @Test("the leaf's CN encoding under the server policy", arguments: rows)
    func serverPolicy(_ row: Row) throws {
        let chain = try TrustChain.make()
        let spec = LabCertificateSpec(
            subject: .cn(row.commonName), notBefore: TrustPKI.leafValidity.notBefore, notAfter: TrustPKI.leafValidity.notAfter,
            extensions: TrustPKI.leafExtensions(sans: [row.san]))
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        let outcome = try TrustPKI.validate(
            leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate], policy: TrustPKI.serverPolicy(host: row.reference))
        if row.accepted {
            try expectTrusted(outcome, chain: [leaf, chain.intermediate.certificate, chain.root.certificate])
        } else {
            expectRejected(outcome, .invalidCertificate, at: 0)
            #expect(outcome.failure?.detail.contains("7.1.4.3") == true)
        }
    }

    @Test("the basic X.509 policy does not apply the CA/B rule")
    func basicPolicyIgnoresTheRule() throws {
        let chain = try TrustChain.make()
        let spec = LabCertificateSpec(
            subject: .cn("2001:DB8::1"), notBefore: TrustPKI.leafValidity.notBefore, notAfter: TrustPKI.leafValidity.notAfter,
            extensions: TrustPKI.leafExtensions(sans: [.ipAddress("2001:db8::1")]))
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        let outcome = try TrustPKI.validate(
            leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate], policy: .basicX509)
        try expectTrusted(outcome, chain: [leaf, chain.intermediate.certificate, chain.root.certificate])
    }
}
