// Fuzz targets "chain" and "chain-accept": RFC 5280 path building and validation (Verifier)
// over crafted chains, at a fixed time (2030-01-01T00:00:00Z).
//
// "chain" checks signatures with OpenSSL (OpenSSLSignatureVerifier), so fuzzed certificates
// mostly fail at the first signature, which still exercises candidate ordering, loop
// detection and the profile checks; every accepted path is re-checked independently
// (signatures with a fresh verifier, names, validity). "chain-accept" is the same file
// built with -D FUZZ_ACCEPT_ALL_SIGNATURES: a test double accepts every signature, so the
// search goes deep (name constraints, path length, budgets, CRLs).
//
// Input format (Fuzz/make-seeds.sh writes seeds in it):
//   byte 0  flags: bits 0-1 = anchors - 1 (taken from the end of the list)
//                  bits 2-3 = policy: server "example.com" | server IP 192.0.2.1 |
//                             client (expects admin@example.com) | basicX509
//                  bit 4 = trace, bit 5 = use the CRLs in the list, bit 6 = allow SHA-1,
//                  bit 7 = the leaf is also an anchor
//   byte 1  maximumIntermediates, as a signed byte (negative values included on purpose)
//   then    repeated [UInt16 big-endian length][DER]: each blob is a certificate, or else a CRL
//           (else ignored). The first certificate is the leaf.
import CertificateParsing
import TrustEvaluation

let validationTime: Int64 = 1_893_456_000  // 2030-01-01T00:00:00Z

#if FUZZ_ACCEPT_ALL_SIGNATURES
    /// Accepts every signature and every key: path building is limited only by names,
    /// profiles, constraints and budgets.
    struct AcceptAllSignatures: SignatureVerifier {
        typealias Key = Int
        func makeKey(_ publicKeyInfo: SubjectPublicKeyInfo) throws(SignatureError) -> Int { publicKeyInfo.derBytes.count }
        func check(signature: ArraySlice<UInt8>, over data: ArraySlice<UInt8>, algorithm: SignatureAlgorithm, key: Int) -> SignatureCheckResult {
            .valid
        }
    }
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChain(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    guard bytes.count >= 2 else { return 0 }
    let flags = bytes[0]
    let maximumIntermediates = Int(Int8(bitPattern: bytes[1]))
    var certificates: [Certificate] = []
    var crls: [CertificateRevocationList] = []
    var index = 2
    while index + 2 <= bytes.count {
        let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
        index += 2
        let end = min(index + length, bytes.count)
        let blob = Array(bytes[index..<end])
        index = end
        if let certificate = try? Certificate(derEncoded: blob) {
            certificates.append(certificate)
        } else if let crl = try? CertificateRevocationList(derEncoded: blob) {
            crls.append(crl)
        }
    }
    guard let leaf = certificates.first else { return 0 }
    let rest = Array(certificates.dropFirst())
    let anchorCount = min(rest.count, Int(flags & 3) + 1)
    var anchors = Array(rest.suffix(anchorCount))
    let intermediates = Array(rest.dropLast(anchorCount))
    if flags & 0x80 != 0 { anchors.append(leaf) }

    var policy: ValidationPolicy
    switch (flags >> 2) & 3 {
    case 0: policy = .sslServer(host: "example.com")
    case 1: policy = .sslServer(host: "192.0.2.1")
    case 2:
        policy = .sslClient
        policy.expectedClientNames = [.email("admin@example.com")]
    default: policy = .basicX509
    }
    policy.maximumIntermediates = maximumIntermediates
    policy.allowsSHA1Signatures = flags & 0x40 != 0
    let checks: [any PathCheck] = flags & 0x20 != 0 ? [CRLCheck(crls)] : []
    let trace = flags & 0x10 != 0
    let store = TrustStore(anchors, sources: ["fuzz"])

    #if FUZZ_ACCEPT_ALL_SIGNATURES
        let verifier = Verifier(anchors: store, policy: policy, signatureVerifier: AcceptAllSignatures())
    #else
        let verifier = Verifier(anchors: store, policy: policy)
    #endif
    let outcome = verifier.validate(leaf: leaf, intermediates: intermediates, at: validationTime, checks: checks, trace: trace)
    verbose(
        "\(certificates.count) certificates (\(intermediates.count) intermediates, \(anchors.count) anchors), \(crls.count) CRLs: "
            + (outcome.isTrusted ? "trusted, path of \(outcome.chain!.certificates.count)" : "\(outcome.failure!)"))
    sink(outcome.signatureChecks)
    invariant(outcome.signatureChecks >= 0 && outcome.signatureChecks <= 128, "signature checks \(outcome.signatureChecks) outside the budget")
    for attempt in outcome.trace {
        sink(attempt.description)
        for subject in attempt.subjects { sink(subject) }
    }
    // A path preference (what pins ask for) never changes the verdict, only which valid path
    // comes back: one that no path meets makes the search try every candidate, within the
    // same budget.
    let preferred = verifier.validate(leaf: leaf, intermediates: intermediates, at: validationTime, checks: checks, preferring: NoPathPreferred())
    invariant(preferred.isTrusted == outcome.isTrusted, "a path preference changed the verdict")
    invariant(preferred.signatureChecks >= 0 && preferred.signatureChecks <= 128, "signature checks \(preferred.signatureChecks) outside the budget")
    if let chain = preferred.chain {
        invariant(chain.selection == .noPreferredPath, "a path no preference accepts was called preferred")
        checkAcceptedPath(chain, leaf: leaf, store: store, policy: policy)
        for other in chain.otherValidPaths { sink(other.count) }
    }
    switch outcome.result {
    case .failure(let failure):
        sink(failure.description)
        sink(failure.kind.rawValue)
        invariant(!outcome.isTrusted && outcome.chain == nil, "failure reported as trusted")
    case .success(let chain):
        invariant(outcome.isTrusted && outcome.failure == nil, "success reported as untrusted")
        checkAcceptedPath(chain, leaf: leaf, store: store, policy: policy)
    }
    return 0
}

/// What must hold for any path the verifier accepts, checked without the verifier's code.
func checkAcceptedPath(_ chain: VerifiedChain, leaf: Certificate, store: TrustStore, policy: ValidationPolicy) {
    let path = chain.certificates
    invariant(!path.isEmpty && path.count <= 64, "accepted path has \(path.count) certificates")
    invariant(chain.leaf == leaf, "accepted path does not start at the leaf")
    invariant(store.contains(chain.anchor), "accepted path does not end at a trust anchor")
    for certificate in path {
        invariant(
            certificate.notBefore.secondsSince1970 <= validationTime && validationTime <= certificate.notAfter.secondsSince1970,
            "accepted path holds a certificate outside its validity: \(certificate.subject.rfc4514)")
    }
    // Names chain as RFC 5280 §7.1 compares them (CertificateParsing's comparison, not the
    // verifier's): byte-identical, or equal after RFC 4518 preparation.
    for i in 0..<(path.count - 1) {
        invariant(path[i].issuer.matches(path[i + 1].subject), "accepted path breaks name chaining at \(i)")
    }
    // Only the policy's name counts.
    switch policy.kind {
    case .sslServer:
        if let name = policy.peerName {
            invariant(ServerIdentity.matches(leaf, name: name), "accepted leaf does not match \(name)")
        }
    case .sslClient:
        for name in policy.expectedClientNames {
            invariant(ServerIdentity.matches(leaf, name: name), "accepted client leaf does not match \(name)")
        }
    case .basicX509:
        break
    }
    // Issuers are CAs allowed to sign certificates, within their path length.
    for k in 1..<max(path.count, 1) {
        let ca = path[k]
        invariant(ca.isCertificateAuthority, "accepted path: issuer \(k) is not a CA (\(ca.subject.rfc4514))", id: "path-ca")
        if let usage = ca.extensions.keyUsage {
            invariant(usage.keyCertSign, "accepted path: issuer \(k) lacks keyCertSign", id: "path-ca")
        }
        if let limit = ca.extensions.basicConstraints?.pathLengthConstraint {
            let below = (1..<k).filter { !path[$0].isSelfIssued }.count
            invariant(below <= limit, "accepted path: issuer \(k) has pathLen \(limit) but \(below) intermediates below", id: "path-len")
        }
    }
    if policy.kind == .sslServer, path.count > 1, let eku = leaf.extensions.extendedKeyUsage {
        invariant(eku.contains(OID.serverAuth) || eku.contains(OID.anyExtendedKeyUsage), "accepted server leaf without serverAuth", id: "path-eku")
    }
    checkDirectoryNameConstraints(path)
    checkExcludedHostConstraints(path)
    #if !FUZZ_ACCEPT_ALL_SIGNATURES
        // Every signature below the anchor verifies, checked again with a fresh verifier.
        let crypto = OpenSSLSignatureVerifier()
        for i in 0..<(path.count - 1) {
            guard let key = try? crypto.makeKey(path[i + 1].subjectPublicKeyInfo) else {
                invariant(false, "accepted path has an issuer key OpenSSL cannot load at \(i + 1)")
                return
            }
            invariant(crypto.check(path[i], signedBy: key).isValid, "accepted path has a bad signature at \(i)")
        }
    #endif
}

/// RFC 5280 §4.2.1.10 for directoryName, re-checked on an accepted path with a TLV reader of
/// this file's own (not the library's): below every CA with name constraints, no subject (and
/// no SAN directoryName) of a certificate that is not self-issued lies in an excluded subtree,
/// and, when directoryName subtrees are permitted, every non-empty subject lies in one.
func checkDirectoryNameConstraints(_ path: [Certificate]) {
    for k in 1..<max(path.count, 1) {
        guard let constraints = path[k].extensions.nameConstraints else { continue }
        let excluded = constraints.excludedSubtrees.compactMap { name -> [ArraySlice<UInt8>]? in
            if case .directoryName(let n) = name { return rdnElements(n.derBytes) }
            return nil
        }
        let permitted = constraints.permittedSubtrees.compactMap { name -> [ArraySlice<UInt8>]? in
            if case .directoryName(let n) = name { return rdnElements(n.derBytes) }
            return nil
        }
        for i in 0..<k where i == 0 || !path[i].isSelfIssued {
            var names: [DistinguishedName] = path[i].subject.isEmpty ? [] : [path[i].subject]
            for case .directoryName(let n) in path[i].subjectAlternativeNames { names.append(n) }
            for name in names {
                guard let rdns = rdnElements(name.derBytes) else { continue }
                for subtree in excluded where isPrefix(subtree, of: rdns) {
                    invariant(
                        false,
                        "accepted path: certificate \(i) has a directoryName (\(name.derBytes.count) bytes, RFC 4514 \"\(name.rfc4514)\") inside a subtree excluded by certificate \(k)",
                        id: "nc-dirname")
                }
                if !permitted.isEmpty {
                    invariant(
                        permitted.contains { isPrefix($0, of: rdns) },
                        "accepted path: certificate \(i) has a directoryName (RFC 4514 \"\(name.rfc4514)\") outside every subtree permitted by certificate \(k)",
                        id: "nc-dirname")
                }
            }
        }
    }
}

func isPrefix(_ prefix: [ArraySlice<UInt8>], of name: [ArraySlice<UInt8>]) -> Bool {
    prefix.count <= name.count && zip(prefix, name).allSatisfy { $0.elementsEqual($1) }
}

/// The RDN elements (SETs, as encoded) of a Name, split by a minimal TLV reader.
func rdnElements(_ name: ArraySlice<UInt8>) -> [ArraySlice<UInt8>]? {
    func element(at start: Int) -> (contentStart: Int, end: Int)? {
        var i = start + 1  // Names use one-octet tags only
        guard i < name.endIndex else { return nil }
        let first = name[i]
        i += 1
        var length = Int(first)
        if first >= 0x80 {
            let count = Int(first & 0x7F)
            guard (1...4).contains(count), i + count <= name.endIndex else { return nil }
            length = 0
            for _ in 0..<count {
                length = length << 8 | Int(name[i])
                i += 1
            }
        }
        guard i + length <= name.endIndex else { return nil }
        return (i, i + length)
    }
    guard let outer = element(at: name.startIndex) else { return nil }
    var rdns: [ArraySlice<UInt8>] = []
    var position = outer.contentStart
    while position < outer.end {
        guard let rdn = element(at: position), rdn.end <= outer.end else { return nil }
        rdns.append(name[position..<rdn.end])
        position = rdn.end
    }
    return rdns
}

/// Excluded dNSName and iPAddress subtrees (RFC 5280 §4.2.1.10), re-checked on an accepted path
/// in the plainest reading: a SAN dNSName equal to an excluded name or below it, or a SAN
/// iPAddress inside an excluded range, must never be accepted below that CA.
func checkExcludedHostConstraints(_ path: [Certificate]) {
    for k in 1..<max(path.count, 1) {
        guard let constraints = path[k].extensions.nameConstraints else { continue }
        for i in 0..<k where i == 0 || !path[i].isSelfIssued {
            for san in path[i].subjectAlternativeNames {
                for excluded in constraints.excludedSubtrees {
                    switch (excluded, san) {
                    case (.dnsName(let constraint), .dnsName(let name)):
                        let c = constraint.lowercased()
                        let base = c.hasPrefix(".") ? String(c.dropFirst()) : c
                        let n = name.lowercased()
                        guard !base.isEmpty else { continue }
                        let inside = n.hasSuffix("." + base) || (!c.hasPrefix(".") && n == base)
                        invariant(
                            !inside, "accepted path: SAN DNS:\(name) of certificate \(i) is in subtree DNS:\(constraint) excluded by certificate \(k)",
                            id: "nc-host")
                    case (.ipAddress(let range), .ipAddress(let address)) where range.count == 2 * address.count:
                        let half = address.count
                        let network = Array(range.prefix(half))
                        let mask = Array(range.suffix(half))
                        let inside = zip(Array(address), zip(network, mask)).allSatisfy { a, nm in a & nm.1 == nm.0 & nm.1 }
                        invariant(
                            !inside, "accepted path: SAN IP \(IPAddressText.format(address)) of certificate \(i) is in a range excluded by certificate \(k)",
                            id: "nc-host")
                    default:
                        break
                    }
                }
            }
        }
    }
}

/// A preference no path meets.
struct NoPathPreferred: PathPreference {
    func prefers(_ path: CandidatePath, at time: Int64) -> Bool { false }
}
