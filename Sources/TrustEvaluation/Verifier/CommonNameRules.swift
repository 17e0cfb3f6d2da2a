import CertificateParsing

/// The encoding rules of CA/B BR 7.1.4.3 for a subscriber certificate's commonName, enforced
/// under the TLS server policy.
///
/// BR 7.1.4.3 has two parts: the CN must repeat a SAN value, and that value must be written
/// in one canonical text form. Only the second part is enforced. The first conflicts with the
/// BetterTLS name-constraint cases of x509-limbo, which expect leaves whose CN is absent from
/// the SAN to validate (limbo `webpki::cn::not-in-san` and `punycode-not-in-san` are the two
/// cases this knowingly accepts). The CN is never used for matching here, so an unlisted CN
/// cannot mislead this verifier; a mis-encoded one is refused because it shows the issuing CA
/// did not apply the BR profile, which is what webpki and Chrome refuse it for.
enum CommonNameRules {
    /// The first commonName of `subject` that breaks a BR 7.1.4.3 encoding rule, if any.
    static func violation(in subject: DistinguishedName) -> ValidationFailure? {
        // Both rules need a ':' or a non-ASCII character in the value. Names without either
        // byte anywhere in their DER (most leaves) are not decoded, which keeps the lazy
        // subject of the evaluation hot path undecoded.
        guard subject.derBytes.contains(where: { $0 == UInt8(ascii: ":") || $0 >= 0x80 }) else { return nil }
        for value in subject.values(of: AttributeTypeAndValue.commonName) {
            // "If the value is an IPv6 address, then the value MUST be encoded in the text
            // representation specified in RFC 5952, Section 4."
            if value.contains(":"), let bytes = IPAddressText.parse(value), bytes.count == 16,
                !canonicalIPv6Texts(bytes).contains(value)
            {
                return ValidationFailure(
                    .invalidCertificate,
                    "commonName '\(DisplayText.escaped(value))' is an IPv6 address not written as RFC 5952 §4 text (\(IPAddressText.format(bytes[...]))) (CA/B BR 7.1.4.3)"
                )
            }
            // "If the value is a Fully-Qualified Domain Name or Wildcard Domain Name, then the
            // value MUST be encoded as a character-for-character copy of the dNSName entry":
            // dNSName is IA5String, so a domain-shaped CN with non-ASCII characters (a U-label
            // instead of its xn-- A-label) cannot be such a copy.
            if isDomainShaped(value), value.unicodeScalars.contains(where: { !$0.isASCII }) {
                return ValidationFailure(
                    .invalidCertificate,
                    "commonName '\(DisplayText.escaped(value))' is a domain name with non-ASCII characters; it must be the A-label (xn--) form of a SAN dNSName (CA/B BR 7.1.4.3)"
                )
            }
        }
        return nil
    }

    /// RFC 5952 §4's text, and for an IPv4-mapped address also the mixed notation RFC 5952 §5
    /// recommends (`::ffff:192.0.2.1`).
    private static func canonicalIPv6Texts(_ bytes: [UInt8]) -> [String] {
        var texts = [IPAddressText.format(bytes[...])]
        if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            texts.append("::ffff:" + IPAddressText.format(bytes[12...]))
        }
        return texts
    }

    /// Dotted, without spaces: what a host name looks like (a CN like "Jörg's test server" is
    /// not a domain name and is left to the SAN-membership rule, which is not enforced).
    private static func isDomainShaped(_ value: String) -> Bool {
        value.contains(".") && !value.contains(" ") && !value.hasPrefix(".") && !value.hasSuffix("..")
    }
}
