import Testing

@testable import ServerTrustHTTP

/// The `WWW-Authenticate` parser (RFC 9110 §11.6.1): realms come from the `realm` parameter
/// itself, never from a substring elsewhere in the field.
@Suite("WWW-Authenticate parsing (RFC 9110 §11)")
struct AuthenticateHeaderTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let field: String
        let expected: [String]  // "method realm" per Basic/Digest challenge, realm "-" when absent
        var testDescription: String { field }
    }

    static let rows: [Row] = [
        Row(field: #"Basic realm="lab realm", charset="UTF-8""#, expected: ["httpBasic lab realm"]),
        Row(field: #"basic REALM=simple"#, expected: ["httpBasic simple"]),
        // RFC 9110 §11.6.1's own example: two challenges in one field.
        Row(
            field: #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#,
            expected: ["httpBasic simple"]),
        // The realm of a later challenge is not the earlier one's.
        Row(field: #"Digest nonce="n", qop="auth", Basic realm="b""#, expected: ["httpDigest -", "httpBasic b"]),
        // Substrings that used to be taken for the realm.
        Row(field: #"Basic xrealm="evil", realm="good""#, expected: ["httpBasic good"]),
        Row(field: #"Basic title="realm=evil", realm="good""#, expected: ["httpBasic good"]),
        Row(field: #"Basic title="x realm=\"evil\"""#, expected: ["httpBasic -"]),
        // Quoted-pair and commas inside quotes.
        Row(field: #"Digest realm="a, \"b\"", nonce="x, y", algorithm=SHA-256"#, expected: ["httpDigest a, \"b\""]),
        // Whitespace around "=" (BWS) and tabs.
        Row(field: "Basic realm = \"spaced\"", expected: ["httpBasic spaced"]),
        Row(field: "Basic\trealm=\"tab\"", expected: ["httpBasic tab"]),
        // token68 (Negotiate-style) and schemes without parameters.
        Row(field: "Negotiate dGVzdA==, Basic realm=\"r\"", expected: ["httpBasic r"]),
        Row(field: "Basic", expected: ["httpBasic -"]),
        Row(field: "Basic, Digest realm=\"d\"", expected: ["httpBasic -", "httpDigest d"]),
        // Malformed parameters are dropped, not guessed.
        Row(field: #"Basic realm="unterminated"#, expected: ["httpBasic -"]),
        Row(field: #"Basic realm="a" junk, charset=UTF-8"#, expected: ["httpBasic -"]),
        Row(field: "Basic realm=", expected: ["httpBasic -"]),
        // Not a challenge at all.
        Row(field: "", expected: []),
        Row(field: ", ,", expected: []),
        Row(field: "=realm", expected: []),
        Row(field: "Bearer realm=\"api\"", expected: []),
    ]

    @Test("Basic and Digest challenges and their realms", arguments: rows)
    func realms(_ row: Row) {
        let found = AuthenticateHeader.challenges([row.field]).map { "\($0.method.rawValue) \($0.realm ?? "-")" }
        #expect(found == row.expected)
    }

    @Test("parameters keep their order and lower-cased names; values are unquoted")
    func parameters() throws {
        let parsed = AuthenticateHeader.parse(#"Digest Realm="r", NONCE="a\\b", qop=auth"#)
        let challenge = try #require(parsed.first)
        #expect(parsed.count == 1)
        #expect(challenge.scheme == "digest")
        #expect(challenge.parameters.map(\.name) == ["realm", "nonce", "qop"])
        #expect(challenge.parameters.map(\.value) == ["r", "a\\b", "auth"])
        #expect(AuthenticateHeader.parameter("nonce", in: #"Digest realm="r", nonce="n""#) == "n")
        #expect(AuthenticateHeader.parameter("once", in: #"Digest realm="r", nonce="n""#) == nil)
    }

    @Test("a token68 is kept whole, including its padding")
    func token68() throws {
        let parsed = AuthenticateHeader.parse("Negotiate YII+/w==, Basic realm=\"x\"")
        #expect(parsed.map(\.scheme) == ["negotiate", "basic"])
        #expect(parsed.first?.token68 == "YII+/w==")
        #expect(parsed.first?.parameters.isEmpty == true)
    }

    @Test("several field values: challenges from each, in order")
    func severalFields() {
        let found = AuthenticateHeader.challenges([#"Digest realm="d""#, #"Basic realm="b""#])
        #expect(found.map(\.realm) == ["d", "b"])
    }
}
