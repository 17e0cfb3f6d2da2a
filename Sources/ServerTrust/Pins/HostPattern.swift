import Foundation
import TrustEvaluation

/// Which hosts a configuration entry applies to.
///
/// Semantics are explicit because the systems this library follows disagree on what a
/// wildcard covers:
/// - `api.example.com`: exactly that host (an IP literal is allowed here only);
/// - `*.example.com`: exactly one more label (`a.example.com`, not `example.com` nor
///   `a.b.example.com`) — OkHttp's `*`, ATS's `NSIncludesSubdomains`;
/// - `**.example.com`: the domain itself and any depth below it — OkHttp's `**`, TrustKit's
///   and NSC's `includeSubdomains` (`includeSubdomains: true` on an exact pattern means the
///   same).
///
/// A wildcard over a public suffix (`*.com`, `**.co.uk`) is refused, as TrustKit refuses
/// `includeSubdomains` on one (the Public Suffix List check of TrustEvaluation's `DNSPattern`).
/// When several patterns match a host the most specific one wins (``moreSpecific(than:)``).
///
/// A pattern written in Unicode (`σkhttp.com`, `**.bücher.example`) means its A-labels
/// (`xn--khttp-fde.com`), as OkHttp's `CertificatePinner` reads it (`IDN.toASCII`): hosts
/// reach a TLS client in that form (URLs, SNI, certificates' dNSNames are ASCII), so a Unicode
/// pattern compared as written would never match and would leave the host unpinned. Letters
/// are folded to lower case (final `ς` to `σ`, as IDNA2003's Nameprep does), compatibility forms
/// are the characters they stand for (fullwidth `ａｐｉ` is `api`: NFKC, as Nameprep and UTS #46
/// map them, and so does libidn2 for the host libcurl connects to) and the result is put in NFC
/// before encoding (RFC 5891 §5.3). The ideographic and fullwidth full stops separate labels as
/// "." does (RFC 3490 §3.1). ``description`` shows the A-label form.
///
/// An IPv4-mapped IPv6 address (`::ffff:192.168.1.1`) is the IPv4 address it maps, in a
/// pattern and in the host matched (RFC 4291 §2.5.5.2), as the host check treats it; an IPv4
/// address spelled as libcurl also reads it (`127.1`, `0x7f.0.0.1`, `2130706433`) is that
/// address.
public struct HostPattern: Hashable, Sendable, CustomStringConvertible {
    /// The forms of pattern.
    public enum Kind: String, Hashable, Sendable {
        /// One host.
        case exact
        /// One label below the base.
        case singleLabelWildcard
        /// The base and any depth below it.
        case anyDepthWildcard
    }

    /// The form.
    public let kind: Kind
    /// The base name, lowercase, without a trailing dot (for `*.a.b`, `a.b`).
    public let base: String
    private let baseLabels: Int
    private let baseBytes: [UInt8]
    private let ip: IPAddress?

    /// Parses a pattern.
    /// - Parameters:
    ///   - text: `host`, `*.domain`, `**.domain`, or an IP literal.
    ///   - includeSubdomains: Extends an exact pattern to any depth below it (TrustKit's
    ///     `kTSKIncludeSubdomains`).
    /// - Throws: ``PolicyConfigurationError`` (`invalidHostPattern`, or `conflictingOptions`
    ///   for a wildcard with `includeSubdomains`).
    public init(_ text: String, includeSubdomains: Bool = false) throws(PolicyConfigurationError) {
        var name = Self.asciiLabelSeparators(Substring(text))
        var kind = Kind.exact
        if name.hasPrefix("**.") {
            kind = .anyDepthWildcard
            name = name.dropFirst(3)
        } else if name.hasPrefix("*.") {
            kind = .singleLabelWildcard
            name = name.dropFirst(2)
        }
        if kind != .exact && includeSubdomains {
            throw PolicyConfigurationError(.conflictingOptions, path: "", "includeSubdomains cannot be combined with the wildcard pattern \"\(text)\"")
        }
        if name.hasSuffix(".") { name = name.dropLast() }
        if name.unicodeScalars.contains(where: { !$0.isASCII }) {
            guard let ascii = Self.aLabels(name) else {
                throw PolicyConfigurationError(.invalidHostPattern, path: "", "\"\(text)\" has a label that cannot be written as an A-label (IDNA)")
            }
            name = Substring(ascii)
        }
        // An exact pattern spelling an IPv4 address as libcurl's URL parser also reads it
        // (`127.1`, `0x7f.0.0.1`, `2130706433`) means that address: the client connects to,
        // and decides for, the dotted quad (urlapi.c `ipv4_normalize`), so a pattern kept as a
        // DNS name would never match and would leave the address to another rule.
        if kind == .exact, !includeSubdomains, let numeric = IPAddress(numericIPv4: name) { name = Substring(numeric.description) }
        if let ip = IPAddress(String(name)) {
            guard kind == .exact && !includeSubdomains else {
                throw PolicyConfigurationError(.invalidHostPattern, path: "", "\"\(text)\": an IP address cannot have wildcards or subdomains")
            }
            // An IPv4-mapped address is the IPv4 node's (RFC 4291 §2.5.5.2): one pattern for both.
            let ip = ip.mappedIPv4 ?? ip
            self.kind = .exact
            self.base = ip.description
            self.baseLabels = 0
            self.baseBytes = Array(ip.description.utf8)
            self.ip = ip
            return
        }
        guard !name.contains("*"), let dns = DNSName(String(name)) else {
            throw PolicyConfigurationError(
                .invalidHostPattern, path: "", "\"\(text)\" is not a host pattern (a DNS name, *.name, **.name or an IP address)")
        }
        if kind != .exact || includeSubdomains {
            // A wildcard over a public suffix would cover every registrant under it.
            guard DNSPattern("*." + dns.value) != nil else {
                throw PolicyConfigurationError(
                    .invalidHostPattern, path: "", "\"\(text)\": \(dns.value) is a public suffix; a pattern below it would cover unrelated owners")
            }
        }
        self.kind = includeSubdomains ? .anyDepthWildcard : kind
        self.base = dns.value
        self.baseLabels = dns.value.split(separator: ".").count
        self.baseBytes = Array(dns.value.utf8)
        self.ip = nil
    }

    /// RFC 3490 §3.1: "the following characters MUST be recognized as dots: U+002E (full
    /// stop), U+3002 (ideographic full stop), U+FF0E (fullwidth full stop), U+FF61 (halfwidth
    /// ideographic full stop)" (UTS #46 maps them to "." too; so do OkHttp's `IDN.toASCII` and
    /// libidn2). `name` with each of them written as ".".
    static func asciiLabelSeparators(_ name: Substring) -> Substring {
        let dots: Set<Unicode.Scalar> = ["\u{3002}", "\u{FF0E}", "\u{FF61}"]
        guard name.unicodeScalars.contains(where: { dots.contains($0) }) else { return name }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: name.unicodeScalars.map { dots.contains($0) ? "." : $0 })
        return Substring(String(scalars))
    }

    /// `name` mapped as UTS #46 §4 processes a domain name (map, normalize, then break into
    /// labels): compatibility forms to what they stand for (NFKC, as IDNA2003's Nameprep, RFC
    /// 3491 §6, and UTS #46's mapping do: `ａｐｉ` is `api`, `ﬁ` is `fi`), letters folded to
    /// lower case (final sigma as sigma), NFC; then split at any of the dots of
    /// ``asciiLabelSeparators(_:)`` and each label encoded as its A-label.
    static func aLabels(_ name: Substring) -> String? {
        var scalars = String.UnicodeScalarView()
        scalars.append(
            contentsOf: String(name).precomposedStringWithCompatibilityMapping.lowercased().unicodeScalars.map { $0 == "\u{3C2}" ? "\u{3C3}" : $0 })
        let mapped = String(scalars).precomposedStringWithCanonicalMapping
        var labels: [String] = []
        for label in asciiLabelSeparators(Substring(mapped)).split(separator: ".", omittingEmptySubsequences: false) {
            guard let aLabel = InternationalHost.aLabel(label) else { return nil }
            labels.append(aLabel)
        }
        return labels.joined(separator: ".")
    }

    /// `api.example.com`, `*.example.com` or `**.example.com`.
    public var description: String {
        switch kind {
        case .exact: return base
        case .singleLabelWildcard: return "*." + base
        case .anyDepthWildcard: return "**." + base
        }
    }

    /// Whether the pattern covers `host` (ASCII case-insensitive, one trailing dot ignored).
    ///
    /// Compares bytes in place, without building a name, because it runs on every
    /// connection.
    public func matches(_ host: String) -> Bool {
        if let ip { return (IPAddress(host) ?? IPAddress(numericIPv4: Substring(host))).map { ($0.mappedIPv4 ?? $0) == ip } ?? false }
        // A host named in Unicode is compared in its A-label form, as the pattern is.
        var host = host.utf8.contains(where: { $0 >= 0x80 }) ? (Self.aLabels(Substring(host)) ?? host) : host
        return host.withUTF8 { matches(name: $0) }
    }

    private func matches(name buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        var name = buffer[...]
        if name.last == UInt8(ascii: "."), name.count > 1 { name = name.dropLast() }
        // An IP literal never matches a DNS pattern (RFC 6125 Appendix B.2 keeps the two apart).
        if let last = name.last, name.contains(UInt8(ascii: ":")) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(last),
            IPAddress(String(decoding: name, as: UTF8.self)) != nil
        {
            return false
        }
        return baseBytes.withUnsafeBufferPointer { base in
            switch kind {
            case .exact:
                return Self.equalIgnoringCase(name, base[...])
            case .singleLabelWildcard:
                guard let label = Self.label(of: name, below: base) else { return false }
                return !label.contains(UInt8(ascii: "."))
            case .anyDepthWildcard:
                return Self.equalIgnoringCase(name, base[...]) || Self.label(of: name, below: base) != nil
            }
        }
    }

    /// The part of `name` before `.base`, when `name` ends with `.base` and that part is not
    /// empty.
    private static func label(
        of name: Slice<UnsafeBufferPointer<UInt8>>, below base: UnsafeBufferPointer<UInt8>
    ) -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard name.count > base.count + 1 else { return nil }
        let dot = name.endIndex - base.count - 1
        guard name[dot] == UInt8(ascii: "."), equalIgnoringCase(name[(dot + 1)...], base[...]) else { return nil }
        return name[..<dot]
    }

    private static func equalIgnoringCase(_ a: Slice<UnsafeBufferPointer<UInt8>>, _ b: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        guard a.count == b.count else { return false }
        var i = a.startIndex
        var j = b.startIndex
        while i < a.endIndex {
            let x = a[i]
            let lower = x >= UInt8(ascii: "A") && x <= UInt8(ascii: "Z") ? x + 32 : x
            if lower != b[j] { return false }
            i += 1
            j += 1
        }
        return true
    }

    /// Whether this pattern is more specific than `other` (both matching the same host): a
    /// longer base wins; with equal bases, exact beats `*.` beats `**.`. TrustKit picks the
    /// longest matching parent; NSC the most specific domain.
    public func moreSpecific(than other: HostPattern) -> Bool {
        isMoreSpecific(than: other)
    }

    /// The element of `elements` whose pattern matches `host` most specifically (the one rule
    /// of precedence between host patterns, used by pin sets, ``ServerTrustManager`` and
    /// ``TrustPolicy`` alike): the longest base, then exact before `*.` before `**.`; the
    /// first of equals.
    static func mostSpecific<Element>(in elements: some Sequence<Element>, matching host: String, by pattern: (Element) -> HostPattern) -> Element? {
        var best: (element: Element, pattern: HostPattern)?
        for element in elements {
            let candidate = pattern(element)
            guard candidate.matches(host) else { continue }
            if let current = best, !candidate.isMoreSpecific(than: current.pattern) { continue }
            best = (element, candidate)
        }
        return best?.element
    }

    private func isMoreSpecific(than other: HostPattern) -> Bool {
        if baseLabels != other.baseLabels { return baseLabels > other.baseLabels }
        return rank > other.rank
    }

    private var rank: Int {
        switch kind {
        case .exact: return 2
        case .singleLabelWildcard: return 1
        case .anyDepthWildcard: return 0
        }
    }
}
