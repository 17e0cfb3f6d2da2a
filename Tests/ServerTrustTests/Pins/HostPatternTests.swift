import ServerTrust
import Testing

@Suite("Host patterns")
struct HostPatternTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let pattern: String
        let includeSubdomains: Bool
        let host: String
        let matches: Bool
        var testDescription: String { "\(pattern)\(includeSubdomains ? " +sub" : "") vs \(host)" }
        init(_ pattern: String, _ host: String, _ matches: Bool, includeSubdomains: Bool = false) {
            self.pattern = pattern
            self.host = host
            self.matches = matches
            self.includeSubdomains = includeSubdomains
        }
    }

    static let vectors: [Vector] = [
        Vector("api.example.com", "api.example.com", true),
        Vector("api.example.com", "API.Example.COM", true),
        Vector("api.example.com", "api.example.com.", true),
        Vector("api.example.com", "www.api.example.com", false),
        Vector("api.example.com", "example.com", false),
        Vector("*.example.com", "a.example.com", true),
        Vector("*.example.com", "example.com", false),
        Vector("*.example.com", "a.b.example.com", false),
        Vector("*.example.com", "aexample.com", false),
        Vector("**.example.com", "example.com", true),
        Vector("**.example.com", "a.example.com", true),
        Vector("**.example.com", "a.b.c.example.com", true),
        Vector("**.example.com", "badexample.com", false),
        Vector("example.com", "deep.sub.example.com", true, includeSubdomains: true),
        Vector("example.com", "example.com", true, includeSubdomains: true),
        Vector("example.com", "example.org", false, includeSubdomains: true),
        // Suffix and prefix look-alikes never match; the absolute form (one trailing dot,
        // RFC 1034 §3.1) in any case always does.
        Vector("example.com", "example.com.evil.net", false),
        Vector("**.example.com", "example.com.evil.net", false),
        Vector("*.example.com", "a.example.com.evil.net", false),
        Vector("example.com", "evilexample.com", false),
        Vector("**.example.com", "evilexample.com", false),
        Vector("example.com", "evilexample.com", false, includeSubdomains: true),
        Vector("*.example.com", ".example.com", false),
        Vector("example.com", "example.com..", false),
        Vector("example.com", "EXAMPLE.com.", true),
        Vector("*.example.com", "A.EXAMPLE.com.", true),
        Vector("**.example.com", "EXAMPLE.com.", true),
        Vector("192.0.2.10", "192.0.2.10", true),
        Vector("2001:db8::1", "2001:0db8:0:0::1", true),
        Vector("**.2.10", "192.0.2.10", false),
        Vector("*.example.com", "192.0.2.10", false),
        // Unicode patterns mean their A-labels, as OkHttp reads them (IDN.toASCII).
        Vector("σkhttp.com", "xn--khttp-fde.com", true),
        Vector("ΣKHTTP.com", "xn--khttp-fde.com", true),
        Vector("ςkhttp.com", "xn--khttp-fde.com", true),
        Vector("**.bücher.example", "shop.xn--bcher-kva.example", true),
        Vector("*.bücher.example", "xn--bcher-kva.example", false),
        Vector("bücher.example", "bücher.example", true),
        Vector("bu\u{308}cher.example", "xn--bcher-kva.example", true),  // NFD input: NFC before encoding
        Vector("σkhttp.com", "okhttp.com", false),
        // U+3002, U+FF0E and U+FF61 separate labels as "." does (RFC 3490 §3.1, UTS #46), in a
        // pattern and in a host, as OkHttp's IDN.toASCII and libidn2 read them: a pattern kept
        // as one Unicode label would match nothing and leave the host unpinned.
        Vector("api\u{3002}example\u{3002}test", "api.example.test", true),
        Vector("api\u{FF0E}example\u{FF61}test", "api.example.test", true),
        Vector("API\u{3002}Example\u{3002}test\u{3002}", "api.example.test", true),
        Vector("*\u{3002}example.test", "a.example.test", true),
        Vector("**.example\u{3002}test", "a.b.example.test", true),
        Vector("example\u{FF0E}test", "deep.sub.example.test", true, includeSubdomains: true),
        Vector("*.bücher\u{3002}example", "shop.xn--bcher-kva.example", true),
        Vector("*.example\u{3002}test", "a.b.example.test", false),
        Vector("api.example.test", "api\u{3002}example\u{3002}test", true),
        Vector("api.example.test", "api\u{FF0E}example\u{FF61}test\u{3002}", true),
        Vector("*.example.test", "a\u{3002}example\u{3002}test", true),
        Vector("**.example.test", "evil\u{3002}example-test", false),
        Vector("api.example.test", "api.example.test.evil\u{3002}test", false),
        // Compatibility forms (fullwidth letters, ligatures) are the characters they stand for
        // (UTS #46 mapping, IDNA2003 Nameprep's NFKC), as libidn2 and OkHttp's IDN.toASCII map
        // them before encoding.
        Vector("\u{FF41}\u{FF50}\u{FF49}.example.test", "api.example.test", true),
        Vector("\u{FF21}\u{FF30}\u{FF29}.\u{FF25}XAMPLE.test", "api.example.test", true),
        Vector("**.\u{FF45}xample.test", "a.b.example.test", true),
        Vector("\u{FB01}le.example.test", "file.example.test", true),
        Vector("api.example.test", "\u{FF41}\u{FF50}\u{FF49}.example.test", true),
        Vector("*.example.test", "\u{FF57}ww\u{FF0E}example.test", true),
        Vector("api.example.test", "\u{FF41}\u{FF50}\u{FF49}.example.test.evil.test", false),
        // An IPv4-mapped IPv6 address is the IPv4 node's (RFC 4291 §2.5.5.2).
        Vector("192.168.1.1", "::ffff:192.168.1.1", true),
        Vector("192.168.1.1", "[::ffff:c0a8:101]", true),
        Vector("::ffff:192.168.1.1", "192.168.1.1", true),
        Vector("192.168.1.1", "::192.168.1.1", false),
        Vector("192.168.1.1", "64:ff9b::c0a8:101", false),
        Vector("192.168.1.1", "::ffff:192.168.1.2", false),
        // An IPv4 address spelled as libcurl also reads it (urlapi.c ipv4_normalize) is that
        // address, as a pattern and as a host; with a trailing dot curl resolves it as a name.
        Vector("127.1", "127.0.0.1", true),
        Vector("0x7f.0.0.1", "127.0.0.1", true),
        Vector("2130706433", "127.0.0.1", true),
        Vector("0177.0.0.1", "127.0.0.1", true),
        Vector("127.0.0.1", "127.1", true),
        Vector("127.0.0.1", "0x7F000001", true),
        Vector("127.0.0.1", "127.1.", false),
        Vector("127.0.0.1", "127.0.0.1.1", false),
        Vector("127.0.0.1", "08.0.0.1", false),
    ]

    @Test("a Unicode pattern is written and reported as its A-labels")
    func unicodeDescription() throws {
        #expect(try HostPattern("σkhttp.com").description == "xn--khttp-fde.com")
        #expect(try HostPattern("**.Bücher.example").description == "**.xn--bcher-kva.example")
        #expect(try HostPattern("::ffff:192.168.1.1").description == "192.168.1.1")
        // A Unicode label over a public suffix is still refused once encoded.
        #expect(throws: PolicyConfigurationError.self) { try HostPattern("*.中国") }
    }

    @Test("matching", arguments: vectors)
    func matching(_ vector: Vector) throws {
        let pattern = try HostPattern(vector.pattern, includeSubdomains: vector.includeSubdomains)
        #expect(pattern.matches(vector.host) == vector.matches)
    }

    @Test(
        "invalid patterns are configuration errors",
        arguments: [
            ("*.com", PolicyConfigurationError.Kind.invalidHostPattern),
            ("**.co.uk", .invalidHostPattern),
            ("*.xn--55qx5d.cn", .invalidHostPattern),
            ("**.xn--55qx5d.hk", .invalidHostPattern),
            ("a.*.example.com", .invalidHostPattern),
            ("f*o.example.com", .invalidHostPattern),
            ("exa mple.com", .invalidHostPattern),
            ("", .invalidHostPattern),
            ("*.192.0.2.10", .invalidHostPattern),
            ("*\u{3002}com", .invalidHostPattern),
            ("**\u{FF0E}co\u{FF61}uk", .invalidHostPattern),
            ("**.co\u{3002}uk", .invalidHostPattern),
            ("\u{FF0A}.com", .invalidHostPattern),
            ("**.\u{FF43}om", .invalidHostPattern),
        ])
    func invalid(_ text: String, _ kind: PolicyConfigurationError.Kind) {
        let error = #expect(throws: PolicyConfigurationError.self) { try HostPattern(text) }
        #expect(error?.kind == kind)
    }

    @Test("includeSubdomains: not on a wildcard, not on a public suffix or an IP")
    func includeSubdomainsRules() {
        #expect((#expect(throws: PolicyConfigurationError.self) { try HostPattern("*.example.com", includeSubdomains: true) })?.kind == .conflictingOptions)
        #expect((#expect(throws: PolicyConfigurationError.self) { try HostPattern("com", includeSubdomains: true) })?.kind == .invalidHostPattern)
        #expect((#expect(throws: PolicyConfigurationError.self) { try HostPattern("xn--55qx5d.cn", includeSubdomains: true) })?.kind == .invalidHostPattern)
        #expect((#expect(throws: PolicyConfigurationError.self) { try HostPattern("192.0.2.1", includeSubdomains: true) })?.kind == .invalidHostPattern)
    }

    @Test("most specific wins: longer base, then exact over *. over **.")
    func specificity() throws {
        let exact = try HostPattern("a.example.com")
        let one = try HostPattern("*.example.com")
        let any = try HostPattern("**.example.com")
        let deeper = try HostPattern("**.a.example.com")
        #expect(exact.moreSpecific(than: one) && one.moreSpecific(than: any))
        #expect(!any.moreSpecific(than: one) && !one.moreSpecific(than: exact))
        #expect(deeper.moreSpecific(than: one))
        #expect(try HostPattern("example.com", includeSubdomains: true) == any)
        #expect(any.description == "**.example.com" && one.description == "*.example.com")
    }
}
