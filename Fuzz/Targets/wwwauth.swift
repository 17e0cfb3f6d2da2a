// Fuzz target "wwwauth": the WWW-Authenticate / Proxy-Authenticate parser of the HTTP client
// (ServerTrustHTTP AuthenticateHeader, internal: the module is built with -enable-testing).
// Each input line is one header field value; the challenges and realms found must come out
// without a crash, and every realm must be a substring-derived value (no invented text).
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
    for value in values { _ = AuthenticateHeader.parameter("realm", in: value) }
    return 0
}
