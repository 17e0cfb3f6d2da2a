// Fuzz target "names": the text parsers behind hostname verification and configuration —
// DNSName, DNSPattern (SAN patterns, wildcards, the public-suffix rule), IPAddress /
// IPAddressText, PeerName.host, ServerIdentity.matches, ASN1Time(rfc3339:) and dotted OIDs.
// Input: lines; the first is the reference name, the others are SAN dNSName / iPAddress /
// rfc822Name values. Beyond "no crash", metamorphic checks RFC 6125 requires: matching is
// ASCII case-insensitive, ignores one trailing dot on the reference, and an IP literal never
// matches a dNSName.
import CertificateParsing
import TrustEvaluation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let reference = lines.first else { return 0 }
    let sanTexts = Array(lines.dropFirst().prefix(16))

    for line in lines.prefix(17) {
        if let name = DNSName(line) {
            invariant(DNSName(name.value) == name, "DNSName(\(line)) is not idempotent")
            invariant(name.value == name.value.lowercased(), "DNSName keeps upper case: \(name.value)")
            invariant(name.isWithin(name), "\(name) is not within itself")
            if let parent = name.parent {
                invariant(name.isWithin(parent) && !parent.isWithin(name), "\(name) vs parent \(parent)")
            }
        }
        _ = DNSName(line, allowTrailingDot: true)
        if let pattern = DNSPattern(line) {
            sink(pattern.description)
            switch pattern {
            case .exact(let name): invariant(pattern.matches(name), "exact pattern \(name) does not match itself")
            case .wildcard(let base):
                invariant(!pattern.matches(base), "wildcard *.\(base) matches its base")
                if let child = DNSName("a." + base.value) {
                    invariant(pattern.matches(child), "wildcard *.\(base) does not match a.\(base)")
                }
                if let grandchild = DNSName("a.b." + base.value) {
                    invariant(!pattern.matches(grandchild), "wildcard *.\(base) matches two labels")
                }
            }
        }
        if let ip = IPAddress(line) {
            invariant(IPAddress(ip.description) == ip, "IP \(line) -> \(ip) does not round-trip")
        }
        sink(PeerName.host(line).description)
        if let time = ASN1Time(rfc3339: line) {
            sink(time.rfc3339)
            invariant(ASN1Time(rfc3339: time.rfc3339) == time, "RFC 3339 \(line) -> \(time.rfc3339) does not round-trip")
        }
        if let oid = ASN1ObjectIdentifier(line) {
            invariant(ASN1ObjectIdentifier(oid.dotted) == oid, "OID \(line) -> \(oid.dotted) does not round-trip")
        }
    }

    // The SANs as a certificate would carry them.
    var sans: [GeneralName] = []
    for san in sanTexts {
        sans.append(.dnsName(san))
        sans.append(.rfc822Name(san))
        if let ip = IPAddressText.parse(san) { sans.append(.ipAddress(ip[...])) }
    }
    for name in [PeerName.host(reference), .dns(reference), .ip(reference), .email(reference)] {
        sink(ServerIdentity.matches(sans, name: name))
    }
    let matched = ServerIdentity.matches(sans, name: .dns(reference))
    if reference.utf8.allSatisfy({ $0 < 0x80 }) {
        invariant(
            ServerIdentity.matches(sans, name: .dns(reference.uppercased())) == matched,
            "DNS matching of \(reference) is case-sensitive")
        invariant(
            ServerIdentity.matches(sans, name: .dns(reference.lowercased())) == matched,
            "DNS matching of \(reference) is case-sensitive")
    }
    if !reference.hasSuffix("."), IPAddress(reference) == nil, !reference.isEmpty {
        invariant(
            ServerIdentity.matches(sans, name: .dns(reference + ".")) == matched,
            "a trailing dot on \(reference) changes the match")
    }
    if IPAddress(reference) != nil {
        let dnsOnly = sanTexts.map { GeneralName.dnsName($0) }
        invariant(!ServerIdentity.matches(dnsOnly, name: .dns(reference)), "IP literal \(reference) matched a dNSName")
        invariant(!ServerIdentity.matches(dnsOnly, name: .ip(reference)), "IP \(reference) matched a dNSName")
    }
    return 0
}
