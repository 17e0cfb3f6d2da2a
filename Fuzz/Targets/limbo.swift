// Fuzz target "limbo": the limbo-jsonl/1 request decoder of `servertrust limbo-serve`
// (Sources/servertrust/Commands/LimboServeCommand.swift, compiled here unchanged): one request line in,
// LimboServeCommand.answer(_:_:) builds the certificates, CRLs and policy from the JSON and runs
// the Verifier (OpenSSL signatures). The answer must always be one JSON object with an id,
// a result in SUCCESS / FAILURE / SKIP and a reason, whatever the line holds.
import CertificateParsing
import Foundation
import TrustEvaluation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLimboRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    // The server reads lines: a request never contains a raw newline.
    let line = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    let response = LimboServeCommand.answer(line, OpenSSLSignatureVerifier()).rendered
    verbose(response)
    sink(response)
    invariant(!response.contains("\n"), "a response spans several lines: \(response)")
    guard let object = try? JSONSerialization.jsonObject(with: Data(response.utf8)) as? [String: Any] else {
        invariant(false, "the response is not a JSON object: \(response)")
        return 0
    }
    let result = object["result"] as? String
    invariant(result == "SUCCESS" || result == "FAILURE" || result == "SKIP", "bad result in \(response)")
    invariant(object["reason"] is String, "no reason in \(response)")
    invariant(object["id"] is String || object["id"] is NSNull, "bad id in \(response)")
    return 0
}
