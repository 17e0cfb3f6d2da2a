// Fuzz target "wwwauth": the WWW-Authenticate / Proxy-Authenticate parser of the HTTP client
// (ServerTrustHTTP AuthenticateHeader, internal: the module is built with -enable-testing).
// Each input line is one header field value; the challenges and realms found must come out
// without a crash, and every realm must be a substring-derived value (no invented text), and the parsed
// challenges must survive a round trip through their canonical form.
@testable import ServerTrustHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAuthenticateHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    let values = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let challenges = AuthenticateHeader.challenges(values)
    verbose("\(challenges)")
    for challenge in challenges {
        sink(challenge.method.rawValue)
        if let realm = challenge.realm {
            sink(realm)
            // Invalid UTF-8 became U+FFFD in `text`, so compare with the decoded text.
            invariant(realm.utf8.count <= text.utf8.count, "realm longer than the input")
        }
    }
    for value in values {
        _ = AuthenticateHeader.parameter("realm", in: value)
        // Round trip: writing the parsed challenges back in canonical form (quoted values)
        // and parsing that again gives the same challenges.
        let parsed = AuthenticateHeader.parse(value)
        let canonical = parsed.map { challenge -> String in
            if let token68 = challenge.token68 { return challenge.scheme + " " + token68 }
            let parameters = challenge.parameters.map { parameter -> String in
                // Per scalar, not per Character: a quote followed by a combining mark is one
                // Character but still a quote byte on the wire.
                var quoted = String.UnicodeScalarView()
                quoted.append("\"")
                for scalar in parameter.value.unicodeScalars {
                    if scalar == "\\" || scalar == "\"" { quoted.append("\\") }
                    quoted.append(scalar)
                }
                return parameter.name + "=" + String(quoted) + "\""
            }
            return parameters.isEmpty ? challenge.scheme : challenge.scheme + " " + parameters.joined(separator: ", ")
        }.joined(separator: ", ")
        let reparsed = AuthenticateHeader.parse(canonical)
        invariant(reparsed == parsed, "canonical form parses differently: \(canonical)")
    }
    return 0
}
