public import CertificateParsing

/// RFC 6125 identity checks against the subjectAltName only.
///
/// The Common Name is never consulted (Apple since iOS 13, Go since 1.15, OkHttp, and CA/B BR
/// 7.1.4.3 which makes it a copy of a SAN entry): a certificate without a matching SAN entry
/// does not match. DNS names are compared ASCII case-insensitively, one trailing dot on the
/// reference name is ignored, wildcards only as the whole left-most label, IP literals only
/// against iPAddress entries (RFC 6125 Appendix B.2) and never against dNSName; an
/// IPv4-mapped IPv6 reference also matches the IPv4 address it maps (``IPAddress/mappedIPv4``),
/// an IPv4 address in libcurl's numeric spellings (`127.1`) is that address, and a reference
/// whose top label is all digits (`127.0.0.1.`) is no host name (RFC 1123 §2.1) and matches
/// nothing.
public enum ServerIdentity {
    /// Whether `certificate` is valid for `name`.
    public static func matches(_ certificate: Certificate, name: PeerName) -> Bool {
        matches(certificate.subjectAlternativeNames, name: name)
    }

    /// Whether any of `sans` matches `name`.
    public static func matches(_ sans: [GeneralName], name: PeerName) -> Bool {
        matches(sans, Reference(name))
    }

    /// Whether `name` is usable as a reference identity at all (RFC 6125 §6.2): a valid DNS
    /// host name (one trailing dot allowed), an IP literal, or an email address. A name that is
    /// not matches no certificate, so callers taking it from a user should refuse it as bad
    /// input rather than report a hostname mismatch.
    public static func isValidReference(_ name: PeerName) -> Bool {
        if case .invalid = Reference(name) { return false }
        return true
    }

    /// A reference identity validated once (RFC 6125 §6.2), so repeated checks against many
    /// certificates do not re-parse it.
    enum Reference: Sendable {
        case dns(DNSName)
        case ip(IPAddress)
        case email(RFC822Name)
        /// A name that is neither a valid host name nor an address: it matches nothing.
        case invalid

        /// RFC 1123 §2.1: "a valid host name can never have the dotted-decimal form #.#.#.#,
        /// since at least the highest-level component label will be alphabetic" (RFC 3696 §2:
        /// top-level names are not all-numeric). Such a reference (`127.0.0.1.`, which libcurl
        /// resolves as a name) is no host name, so no dNSName spelled as an address answers for it.
        static func hasNumericTopLabel(_ name: DNSName) -> Bool {
            name.value.utf8.reversed().prefix { $0 != UInt8(ascii: ".") }.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        }

        init(_ name: PeerName) {
            switch name {
            case .dns(let host):
                // An IP literal given as a host name is treated as an IP (it must not match a
                // dNSName "127.0.0.1"), and so is an IPv4 address spelled as libcurl's URL
                // parser reads it (`127.1`, `0x7f.0.0.1`): the client connects to that address.
                if let ip = IPAddress(host) ?? IPAddress(numericIPv4: Substring(host)) {
                    self = .ip(ip)
                } else if let dns = DNSName(host, allowTrailingDot: true), !Self.hasNumericTopLabel(dns) {
                    self = .dns(dns)
                } else {
                    self = .invalid
                }
            case .ip(let text): self = IPAddress(text).map(Reference.ip) ?? .invalid
            case .email(let text): self = RFC822Name(text).map(Reference.email) ?? .invalid
            }
        }
    }

    static func matches(_ sans: [GeneralName], _ reference: Reference) -> Bool {
        switch reference {
        case .dns(let name):
            for case .dnsName(let san) in sans {
                if let pattern = DNSPattern(san), pattern.matches(name) { return true }
            }
            return false
        case .ip(let address):
            // An IPv4-mapped reference (`::ffff:192.168.1.1`) names the IPv4 node (RFC 4291
            // §2.5.5.2): the connection goes to 192.168.1.1, so a certificate for that address
            // identifies it (OkHttp and Go accept it too). RFC 6125 §6.2.1 compares octets, so
            // the mapping is applied to the reference only, never to a certificate's 16-octet
            // mapped entry, which would otherwise answer for an IPv4 reference while escaping
            // an IPv4 iPAddress name constraint on its issuer.
            let mapped = address.mappedIPv4
            for case .ipAddress(let bytes) in sans where bytes.elementsEqual(address.bytes) || mapped.map({ bytes.elementsEqual($0.bytes) }) == true {
                return true
            }
            return false
        case .email(let reference):
            for case .rfc822Name(let san) in sans {
                if let name = RFC822Name(san), name.localPart == reference.localPart, name.domain == reference.domain { return true }
            }
            return false
        case .invalid:
            return false
        }
    }

    /// The names a certificate is valid for, for messages ("valid for a, b, not c"), escaped
    /// for printing (``/CertificateParsing/DisplayText``).
    public static func names(of certificate: Certificate) -> [String] {
        certificate.subjectAlternativeNames.compactMap { name in
            switch name {
            case .dnsName(let s): return DisplayText.escaped(s)
            case .ipAddress(let bytes): return IPAddressText.format(bytes)
            case .rfc822Name(let s): return DisplayText.escaped(s)
            default: return nil
            }
        }
    }
}

extension ServerIdentity {
    /// The policy's name requirements on the leaf: RFC 6125 §6 for a server (when a name is
    /// given), every expected name for a client (RFC 5280 §4.2.1.6), none for basic X.509.
    static func violation(_ leaf: Certificate, policy: ValidationPolicy, reference: Reference?) -> ValidationFailure? {
        switch policy.kind {
        case .sslServer:
            guard let name = policy.peerName, let reference else { return nil }
            if !matches(leaf.subjectAlternativeNames, reference) {
                let names = names(of: leaf)
                return ValidationFailure(
                    .hostnameMismatch, "certificate is valid for \(names.isEmpty ? "no names" : names.joined(separator: ", ")), not \(name)")
            }
        case .sslClient:
            for name in policy.expectedClientNames where !matches(leaf, name: name) {
                return ValidationFailure(.hostnameMismatch, "certificate is not valid for \(name)")
            }
        case .basicX509:
            break
        }
        return nil
    }
}
