// Fuzz target "policy": the policy file loader, PolicyFile.parse(_:baseDirectory:) (JSON
// schema of docs/policy-schema.md, or a TrustKit dictionary), with relative certificate
// paths resolved against $FUZZ_POLICY_BASE (run.sh points it at the seeds' policy-base/,
// which holds a few PEM/DER certificates and a directory). An accepted file has every host
// entry read and its pin sets checked against a fixed chain (the path validated once, at
// start, as the pin check only ever sees a validated path or the leaf: ProvenChain).
import CertificateParsing
import ServerTrust
import TrustEvaluation

#if canImport(Glibc)
    import Glibc
#endif

let policyBase: String = getenv("FUZZ_POLICY_BASE").map { String(cString: $0) } ?? "/tmp/fuzz-seeds/policy-base"
let pinChain: [Certificate] = ["leaf.pem", "int.pem", "root.pem"].compactMap { name in
    guard let file = fopen(policyBase + "/" + name, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    return try? Certificate.load(bytes).first
}
let policyTime: Int64 = 1_893_456_000  // 2030-01-01T00:00:00Z
let provenPinChain: ProvenChain = {
    if let leaf = pinChain.first, let root = pinChain.last {
        let outcome = Verifier(anchors: TrustStore([root]), policy: .basicX509)
            .validate(leaf: leaf, intermediates: Array(pinChain.dropFirst()), at: leaf.notBefore.secondsSince1970 + 60)
        if let chain = outcome.chain { return ProvenChain(validated: chain) }
    }
    return ProvenChain(leafOf: ServedChain(certificates: pinChain, host: nil))
}()
let probeHosts = ["example.com", "www.example.com", "a.b.example.com", "192.0.2.1", "[2001:db8::1]", "EXAMPLE.COM.", "localhost", ""]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPolicyFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    do {
        let file = try PolicyFile.parse(bytes, baseDirectory: policyBase)
        verbose("accepted: \(file.rules.count) rules, unmatched hosts \(file.allHostsMustBeEvaluated ? "refused" : "decided")")
        sink(file.allHostsMustBeEvaluated)
        for rule in file.rules {
            sink(rule.pattern.description)
            sink(rule.pattern.base)
            sink(String(describing: type(of: rule.policy.evaluator)))
            sink(rule.policy.anchors.only)
            sink(rule.policy.source)
            for certificate in rule.policy.anchors.store.certificates { sink(certificate.description) }
            for probe in probeHosts { sink(rule.pattern.matches(probe)) }
            if let pinned = rule.policy.pins {
                sink(pinned.isExcluded)
                for pin in pinned.pins + pinned.negativePins { sink(pin.description) }
                sink(pinned.reportURIs.count)
            }
            sink(rule.policy.revocation.revocationLists.count)
        }
        for probe in probeHosts { sink(file.resolve(probe, at: policyTime).notes.count) }
        let pinning = file.pinning
        for probe in probeHosts {
            _ = pinning.pinnedHost(for: probe)
            let result = pinning.check(provenPinChain, forHost: probe, at: policyTime)
            sink(result.detail)
            sink(result.allowsConnection)
        }
    } catch {
        verbose("rejected: \(error)")
        sink(error.description)
        invariant(!error.problems.isEmpty, "PolicyFileError without problems")
        for problem in error.problems { sink(problem.kind.rawValue) }
    }
    return 0
}
