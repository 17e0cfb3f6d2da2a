import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

/// RFC 6125 name matching as the verifier applies it to a server leaf: SAN only (never the CN),
/// ASCII case-insensitive, one trailing dot on the reference, whole-left-label wildcards only and
/// never over a public suffix, IP literals only against iPAddress entries.
@Suite("Hostname verification")
struct HostnameVerificationTests {
    /// A leaf's SAN entries, the reference name the client asks for, and whether it matches.
    struct Case: Sendable, CustomTestStringConvertible {
        let sans: [LabGeneralName]
        let reference: String
        let matches: Bool

        init(_ sans: [LabGeneralName], _ reference: String, _ matches: Bool) {
            self.sans = sans
            self.reference = reference
            self.matches = matches
        }

        var testDescription: String {
            let names = sans.map { name -> String in
                switch name {
                case .dns(let s): return "DNS:\(s)"
                case .ipAddress(let s): return "IP:\(s)"
                case .email(let s): return "email:\(s)"
                case .uri(let s): return "URI:\(s)"
                default: return "\(name)"
                }
            }
            return "[\(names.joined(separator: ", "))] \(matches ? "matches" : "does not match") \(reference)"
        }
    }

    static let table: [Case] = [
        // Exact names, case, trailing dot.
        Case([.dns("www.example.com")], "www.example.com", true),
        Case([.dns("www.example.com")], "WWW.Example.COM", true),
        Case([.dns("WwW.ExAmPlE.CoM")], "www.example.com", true),
        Case([.dns("www.example.com")], "www.example.com.", true),
        Case([.dns("www.example.com")], "www.example.com..", false),
        Case([.dns("www.example.com")], "example.com", false),
        Case([.dns("www.example.com")], "www.example.com.evil.test", false),
        Case([.dns("www.example.com")], "xwww.example.com", false),
        Case([.dns("a.example.com"), .dns("b.example.com")], "b.example.com", true),
        // Wildcards: the whole left-most label, exactly one label.
        Case([.dns("*.example.com")], "a.example.com", true),
        Case([.dns("*.example.com")], "A.EXAMPLE.COM.", true),
        Case([.dns("*.example.com")], "example.com", false),
        Case([.dns("*.example.com")], "a.b.example.com", false),
        Case([.dns("*.example.com")], ".example.com", false),
        Case([.dns("*.example.com")], "*.example.com", false),
        Case([.dns("f*.example.com")], "foo.example.com", false),
        Case([.dns("*oo.example.com")], "foo.example.com", false),
        Case([.dns("f*o.example.com")], "foo.example.com", false),
        Case([.dns("a.*.example.com")], "a.b.example.com", false),
        Case([.dns("*.*.example.com")], "a.b.example.com", false),
        Case([.dns("*")], "example", false),
        // Never over a public suffix.
        Case([.dns("*.com")], "example.com", false),
        Case([.dns("*.co.uk")], "example.co.uk", false),
        Case([.dns("*.example.co.uk")], "www.example.co.uk", true),
        // Nor over an internationalised one: the list's U-label rules (公司.cn, 公司.hk) are
        // compared as A-labels.
        Case([.dns("*.xn--55qx5d.cn")], "example.xn--55qx5d.cn", false),
        Case([.dns("*.xn--55qx5d.hk")], "example.xn--55qx5d.hk", false),
        Case([.dns("*.example.xn--55qx5d.cn")], "www.example.xn--55qx5d.cn", true),
        // IDNA A-labels are compared as given, never converted.
        Case([.dns("xn--bcher-kva.example")], "xn--bcher-kva.example", true),
        Case([.dns("XN--BCHER-KVA.example")], "xn--bcher-kva.example", true),
        Case([.dns("xn--bcher-kva.example")], "bücher.example", false),
        Case([.dns("*.xn--bcher-kva.example")], "www.xn--bcher-kva.example", true),
        // IP literals match iPAddress entries only, compared as bytes.
        Case([.ipAddress("127.0.0.1")], "127.0.0.1", true),
        Case([.ipAddress("127.0.0.1")], "127.0.0.2", false),
        Case([.ipAddress("::1")], "::1", true),
        Case([.ipAddress("::1")], "0:0:0:0:0:0:0:1", true),
        Case([.ipAddress("::1")], "[::1]", true),
        Case([.ipAddress("0:0:0:0:0:0:0:1")], "[::1]", true),
        Case([.ipAddress("2001:db8::1")], "2001:DB8:0:0:0:0:0:1", true),
        Case([.ipAddress("2001:db8::1")], "2001:db8::2", false),
        // A mapped reference names the IPv4 node; a certificate's mapped entry never answers
        // for an IPv4 reference (ipv4Mapped below).
        Case([.ipAddress("::ffff:127.0.0.1")], "127.0.0.1", false),
        Case([.ipAddress("127.0.0.1")], "::ffff:127.0.0.1", true),
        Case([.dns("127.0.0.1")], "127.0.0.1", false),
        Case([.dns("localhost"), .ipAddress("127.0.0.1")], "127.0.0.1", true),
        // A DNS name never matches an iPAddress entry (nor other name types).
        Case([.ipAddress("127.0.0.1")], "localhost", false),
        Case([.dns("localhost"), .ipAddress("127.0.0.1")], "localhost", true),
        Case([.email("admin@example.com")], "example.com", false),
        Case([.uri("https://www.example.com/")], "www.example.com", false),
    ]

    @Test("SAN matching through the verifier (the leaf's CN is the reference name where BR 7.1.4.3 allows)", arguments: table)
    func matching(_ c: Case) throws {
        let chain = try TrustChain.make()
        // CN = the reference name itself, so a mismatch also proves there is no CN fallback;
        // except where that CN would break CA/B BR 7.1.4.3's encoding rules (IPv6 text, a
        // U-label), which the server policy enforces before names are matched.
        let encodable = !c.reference.contains(":") && c.reference.unicodeScalars.allSatisfy(\.isASCII)
        let spec = LabCertificateSpec(
            subject: .cn(encodable ? c.reference : "hostname test leaf"), notBefore: TrustPKI.leafValidity.notBefore, notAfter: TrustPKI.leafValidity.notAfter,
            extensions: TrustPKI.leafExtensions(sans: c.sans))
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        let outcome = try TrustPKI.validate(
            leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate], policy: TrustPKI.serverPolicy(host: c.reference))
        if c.matches {
            try expectTrusted(outcome, chain: [leaf, chain.intermediate.certificate, chain.root.certificate])
        } else {
            expectRejected(outcome, .hostnameMismatch, at: 0)
        }
        // ServerIdentity agrees on the parsed SAN.
        #expect(ServerIdentity.matches(try TrustPKI.parse(leaf), name: PeerName.host(c.reference)) == c.matches)
    }

    @Test("no CN fallback: CN=host without SAN is rejected, and a SAN for another name is a mismatch")
    func noCommonNameFallback() throws {
        let noSAN = try TrustChain.make(sans: [])
        let leaf = try TrustPKI.parse(noSAN.leaf)
        #expect(leaf.subject.commonName == TrustPKI.host)
        #expect(!ServerIdentity.matches(leaf, name: .dns(TrustPKI.host)))
        expectRejected(try noSAN.validate(), .extensionProfileViolation, at: 0)

        let otherSAN = try TrustChain.make(sans: [.dns("other.example.com")])
        expectRejected(try otherSAN.validate(), .hostnameMismatch, at: 0)
        #expect(try otherSAN.validate().failure?.detail.contains("other.example.com") == true)
    }

    @Test("an IP literal given as a DNS name is still matched as an IP")
    func ipLiteralAsDNSName() {
        let dnsSAN: [GeneralName] = [.dnsName("127.0.0.1")]
        let ipSAN: [GeneralName] = [.ipAddress([127, 0, 0, 1])]
        #expect(!ServerIdentity.matches(dnsSAN, name: .dns("127.0.0.1")))
        #expect(ServerIdentity.matches(ipSAN, name: .dns("127.0.0.1")))
        #expect(!ServerIdentity.matches(dnsSAN, name: .ip("127.0.0.1")))
        #expect(ServerIdentity.matches(ipSAN, name: .ip("127.0.0.1")))
    }

    /// A reference name that looks like an IPv4 address is never compared with dNSName
    /// entries. Spelled as libcurl's URL parser reads an address (`127.1`, `0x7f.0.0.1`,
    /// `2130706433`), it is that address, as ``IPAddress/init(numericIPv4:)`` and the host
    /// patterns read it, and only iPAddress entries answer for it; a name whose last label is
    /// all digits (`127.0.0.1.`, which libcurl resolves as a name) is no host name at all
    /// (RFC 1123 §2.1, RFC 3696 §2) and matches nothing. Otherwise a certificate's dNSName
    /// spelled as an address (`127.0.0.1`, `*.0.0.1`, which private CAs issue) would
    /// authenticate a host the client reached by DNS, or miss the address it connected to.
    @Test(
        "an IP-looking reference name matches iPAddress entries only, or nothing",
        arguments: [
            ("127.0.0.1.", [LabGeneralName.dns("127.0.0.1")], false),
            ("127.0.0.1.", [.dns("*.0.0.1")], false),
            ("127.0.0.1.", [.ipAddress("127.0.0.1")], false),
            ("10.1.2.3.", [.dns("10.1.2.3")], false),
            ("1.2.3.4.5", [.dns("1.2.3.4.5")], false),
            ("1.2.3.4.5", [.dns("*.2.3.4.5")], false),
            ("www.example.123", [.dns("www.example.123")], false),
            ("127.1", [.dns("127.1")], false),
            ("127.1", [.ipAddress("127.0.0.1")], true),
            ("0x7f.0.0.1", [.dns("0x7f.0.0.1")], false),
            ("0x7f.0.0.1", [.ipAddress("127.0.0.1")], true),
            ("2130706433", [.dns("2130706433")], false),
            ("2130706433", [.ipAddress("127.0.0.1")], true),
            ("127.0.0.01", [.ipAddress("127.0.0.1")], true),
            // Names with numeric labels below an alphabetic top label are host names.
            ("1.example.com", [.dns("1.example.com")], true),
            ("127.0.0.1.example.com", [.dns("*.0.0.1.example.com")], true),
            ("127.0.0.1.example.com", [.ipAddress("127.0.0.1")], false),
        ])
    func ipLookingReference(_ reference: String, _ sans: [LabGeneralName], _ expected: Bool) throws {
        let chain = try TrustChain.make()
        let spec = LabCertificateSpec(
            subject: .cn("hostname test leaf"), notBefore: TrustPKI.leafValidity.notBefore, notAfter: TrustPKI.leafValidity.notAfter,
            extensions: TrustPKI.leafExtensions(sans: sans))
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        let outcome = try TrustPKI.validate(
            leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate], policy: TrustPKI.serverPolicy(host: reference))
        if expected {
            try expectTrusted(outcome, chain: [leaf, chain.intermediate.certificate, chain.root.certificate])
        } else {
            expectRejected(outcome, .hostnameMismatch, at: 0)
        }
        #expect(ServerIdentity.matches(try TrustPKI.parse(leaf), name: PeerName.host(reference)) == expected)
        #expect(ServerIdentity.matches(try TrustPKI.parse(leaf), name: .dns(reference)) == expected)
    }

    /// An IPv4-mapped IPv6 reference names the IPv4 node (RFC 4291 §2.5.5.2): a certificate
    /// for that IPv4 address identifies it, as OkHttp and Go accept. The mapping applies to the
    /// reference only: a certificate's 16-octet mapped entry does not answer for an IPv4
    /// reference (it would escape an IPv4 name constraint on its issuer), and other IPv6 forms
    /// that embed an IPv4 address (IPv4-compatible, NAT64) are other hosts.
    @Test(
        "an IPv4-mapped IPv6 host matches the IPv4 certificate it maps to; nothing else crosses families",
        arguments: [
            ("::ffff:192.168.1.1", [GeneralName.ipAddress([192, 168, 1, 1])], true),
            ("[::ffff:c0a8:101]", [.ipAddress([192, 168, 1, 1])], true),
            ("::ffff:192.168.1.1", [.ipAddress([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 168, 1, 1])], true),
            ("::ffff:192.168.1.1", [.ipAddress([192, 168, 1, 2])], false),
            ("192.168.1.1", [.ipAddress([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 168, 1, 1])], false),
            ("::192.168.1.1", [.ipAddress([192, 168, 1, 1])], false),
            ("64:ff9b::c0a8:101", [.ipAddress([192, 168, 1, 1])], false),
            ("::ffff:192.168.1.1", [.dnsName("192.168.1.1")], false),
        ])
    func ipv4Mapped(_ host: String, _ sans: [GeneralName], _ expected: Bool) {
        #expect(ServerIdentity.matches(sans, name: .host(host)) == expected, "\(host) vs \(sans)")
    }

    @Test("an IPv4-mapped host through the verifier: the IPv4 certificate validates for it")
    func ipv4MappedThroughVerifier() throws {
        let chain = try TrustChain.make(host: "192.168.1.1", sans: [.ip([192, 168, 1, 1])])
        let mapped = try chain.validate(policy: TrustPKI.serverPolicy(host: "::ffff:192.168.1.1"))
        #expect(mapped.failure == nil, "\(String(describing: mapped.failure))")
        expectRejected(try chain.validate(policy: TrustPKI.serverPolicy(host: "::ffff:192.168.1.2")), .hostnameMismatch, at: 0)
    }

    /// URL hosts as `PeerName.host` classifies them.
    @Test(
        "PeerName.host classifies IP literals and DNS names",
        arguments: [
            ("example.com", PeerName.dns("example.com")),
            ("127.0.0.1", PeerName.ip("127.0.0.1")),
            ("[::1]", PeerName.ip("[::1]")),
            ("::1", PeerName.ip("::1")),
            ("127.0.0.01", PeerName.dns("127.0.0.01")),
        ])
    func peerNameClassification(host: String, expected: PeerName) {
        #expect(PeerName.host(host) == expected)
    }

    @Test("client policy: every expected name must be in the SAN")
    func clientExpectedNames() throws {
        let chain = try TrustChain.make()
        let spec = TrustPKI.leafSpec(extensions: [
            .basicConstraints(ca: false), .keyUsage([.digitalSignature]), .extendedKeyUsage(["clientAuth"]),
            .subjectAltName([.email("alice@example.com"), .dns("alice.example.com")]), .subjectKeyIdentifier(),
            .authorityKeyIdentifier(),
        ])
        let leaf = try chain.intermediate.issue(spec, key: TrustPKI.key(TrustSlot.leaf))
        var policy = ValidationPolicy.sslClient
        policy.expectedClientNames = [.email("alice@example.com"), .dns("alice.example.com")]
        try expectTrusted(
            try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate], policy: policy),
            chain: [leaf, chain.intermediate.certificate, chain.root.certificate])
        policy.expectedClientNames = [.email("alice@example.com"), .email("bob@example.com")]
        expectRejected(
            try TrustPKI.validate(leaf, [chain.intermediate.certificate], anchors: [chain.root.certificate], policy: policy),
            .hostnameMismatch, at: 0)
    }
}
