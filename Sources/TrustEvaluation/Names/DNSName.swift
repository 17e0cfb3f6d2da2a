import CertificateParsing

/// A DNS name in the preferred name syntax (RFC 5280 §4.2.1.6, RFC 1034 §3.5, RFC 1123 §2.1),
/// held lowercased so that comparison is the ASCII case-insensitive comparison RFC 6125 §6.4.1
/// requires. Internationalised names must already be A-labels (`xn--…`); they are compared as
/// given, never converted, to avoid Unicode's sharp corners (as Go and pyca do).
public struct DNSName: Hashable, Sendable, CustomStringConvertible {
    /// The lowercased name without a trailing dot.
    public let value: String
    /// The number of labels.
    let labelCount: Int

    /// Validates `text`; `nil` when it is not a DNS name. One trailing dot (a fully qualified
    /// reference name) is removed when `allowTrailingDot` is set (RFC 6125 §6.4.1 treats the
    /// absolute and relative forms as the same name).
    public init?(_ text: String, allowTrailingDot: Bool = false) {
        var bytes = Array(text.utf8)
        if allowTrailingDot, bytes.count > 1, bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        guard !bytes.isEmpty, bytes.count <= 253 else { return nil }
        // One pass: lowercase, check the alphabet, and check each label: 1–63 characters,
        // neither starting nor ending with a hyphen. Consecutive hyphens are allowed: IDNA
        // A-labels start with "xn--".
        var labelStart = 0
        var labels = 1
        for i in 0..<bytes.count {
            let byte = bytes[i]
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): bytes[i] = byte + 32
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): break
            case UInt8(ascii: "-"):
                guard i != labelStart, i + 1 < bytes.count, bytes[i + 1] != UInt8(ascii: ".") else { return nil }
            case UInt8(ascii: "."):
                guard i > labelStart, i - labelStart <= 63, i + 1 < bytes.count else { return nil }
                labelStart = i + 1
                labels += 1
            default: return nil
            }
        }
        guard bytes.count - labelStart <= 63 else { return nil }
        self.value = String(decoding: bytes, as: UTF8.self)
        self.labelCount = labels
    }

    /// The parent domain (`b.c` for `a.b.c`), if any.
    public var parent: DNSName? {
        guard let dot = value.firstIndex(of: ".") else { return nil }
        return DNSName(String(value[value.index(after: dot)...]))
    }

    /// Whether this name equals `other` or lies below it (RFC 5280 §4.2.1.10: "any DNS name
    /// that can be constructed by simply adding zero or more labels to the left-hand side").
    public func isWithin(_ other: DNSName) -> Bool {
        // Both are lowercase: a byte suffix test on a label boundary, without allocating.
        let mine = value.utf8
        let theirs = other.value.utf8
        guard mine.count >= theirs.count, mine.suffix(theirs.count).elementsEqual(theirs) else { return false }
        if mine.count == theirs.count { return true }
        return mine[mine.index(mine.endIndex, offsetBy: -theirs.count - 1)] == UInt8(ascii: ".")
    }

    /// The lowercased name, as ``value``.
    public var description: String { value }

    /// The same name, ignoring ASCII case (both are held lowercased; RFC 6125 §6.4.1).
    public static func == (lhs: DNSName, rhs: DNSName) -> Bool { lhs.value == rhs.value }
    /// Hashes the lowercased name that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

/// A dNSName SAN as a pattern: an exact name, or `*.` followed by a name (RFC 6125 §6.4.3, as
/// the CA/Browser Forum restricts it: the wildcard is the whole left-most label and matches
/// exactly one label). Partial-label wildcards (`f*o.example.com`) and wildcards elsewhere are
/// not patterns at all and never match.
public enum DNSPattern: Hashable, Sendable, CustomStringConvertible {
    /// A name that matches only itself, ignoring case.
    case exact(DNSName)
    /// `*.base`: matches a name of exactly one more label than `base` (`a.example.com` for
    /// `*.example.com`, not `example.com` nor `a.b.example.com`).
    case wildcard(base: DNSName)

    /// Parses a SAN dNSName; `nil` if it is neither form.
    public init?(_ text: String) {
        if text.hasPrefix("*.") {
            guard let base = DNSName(String(text.dropFirst(2))) else { return nil }
            // CA/B BR §3.2.2.6 forbids wildcards over a public suffix ("*.com", "*.co.uk",
            // "*.s3.amazonaws.com"): such a pattern covers names of unrelated owners.
            guard !PublicSuffixList.shared.isPublicSuffix(base) else { return nil }
            self = .wildcard(base: base)
        } else {
            guard let name = DNSName(text) else { return nil }
            self = .exact(name)
        }
    }

    /// Whether `name` is matched (RFC 6125 §6.4.3).
    public func matches(_ name: DNSName) -> Bool {
        switch self {
        case .exact(let pattern): return pattern == name
        case .wildcard(let base):
            guard let parent = name.parent else { return false }
            return parent == base
        }
    }

    /// The pattern as written in a certificate: the name, or `*.` and the base.
    public var description: String {
        switch self {
        case .exact(let name): return name.value
        case .wildcard(let base): return "*." + base.value
        }
    }
}

/// An IP address (4 or 16 bytes).
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// Network byte order.
    public let bytes: [UInt8]

    /// From 4 or 16 bytes.
    public init?<C: Collection>(bytes: C) where C.Element == UInt8 {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = Array(bytes)
    }

    /// From text: dotted quad or RFC 4291 IPv6 (brackets allowed).
    public init?(_ text: String) {
        guard let bytes = IPAddressText.parse(text) else { return nil }
        self.bytes = bytes
    }

    /// The address as text: a dotted quad, or RFC 5952's canonical IPv6 form.
    public var description: String { IPAddressText.format(bytes[...]) }

    /// For an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2, "used to
    /// represent the addresses of IPv4 nodes as IPv6 addresses"), the IPv4 address it
    /// represents; `nil` for any other address. IPv4-compatible (`::a.b.c.d`, deprecated by
    /// §2.5.5.1) and translated (NAT64, RFC 6052) addresses are other hosts, reached another
    /// way, and are not mapped.
    public var mappedIPv4: IPAddress? {
        guard bytes.count == 16, bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return nil }
        return IPAddress(bytes: bytes.suffix(4))
    }
}

extension IPAddress {
    /// An IPv4 address written in any of the forms libcurl's URL parser rewrites to the dotted
    /// quad it connects to (urlapi.c `ipv4_normalize`, as the WHATWG URL Standard's IPv4 parser
    /// and `inet_aton(3)` read them): one to four parts, each decimal, octal with a leading `0`,
    /// or hex with `0x`, the last filling the bytes the others leave (`127.1`, `0x7f.0.0.1`,
    /// `0177.0.0.1`, `2130706433`). `nil` for anything else, a trailing dot included (curl
    /// resolves `127.1.` as a name).
    package init?(numericIPv4 text: Substring) {
        guard let first = text.first, first.isASCII, first.isNumber else { return nil }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...4).contains(parts.count) else { return nil }
        var values: [UInt64] = []
        for part in parts {
            // Each part as strtoul(3) with base 0 reads it, whole: no sign, no space.
            var digits = Substring(part)
            var radix = 10
            if digits.count > 2, digits.hasPrefix("0x") || digits.hasPrefix("0X") {
                digits = digits.dropFirst(2)
                radix = 16
            } else if digits.count > 1, digits.hasPrefix("0") {
                digits = digits.dropFirst()
                radix = 8
            }
            guard !digits.isEmpty, digits.count <= 32, digits.allSatisfy({ $0.isASCII && $0.isHexDigit }),
                let value = UInt64(digits, radix: radix), value <= UInt64(UInt32.max)
            else { return nil }
            values.append(value)
        }
        let lastBits = UInt64(8 * (5 - values.count))
        guard values.dropLast().allSatisfy({ $0 <= 0xFF }), let last = values.last, last < (1 << lastBits) else { return nil }
        var address = last
        for (index, value) in values.dropLast().enumerated() { address |= value << UInt64(24 - 8 * index) }
        self.init(bytes: [UInt8(address >> 24 & 0xFF), UInt8(address >> 16 & 0xFF), UInt8(address >> 8 & 0xFF), UInt8(address & 0xFF)])
    }
}

/// An iPAddress name constraint: address and a contiguous prefix mask (RFC 5280 §4.2.1.10).
struct IPConstraint: Hashable, Sendable {
    let address: [UInt8]
    let mask: [UInt8]

    /// From the 8- or 32-byte encoding; `nil` if malformed or the mask is not a prefix.
    init?(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count == 8 || bytes.count == 32 else { return nil }
        let half = bytes.count / 2
        let mask = Array(bytes.suffix(half))
        // The mask must be ones followed by zeros.
        var seenZero = false
        for byte in mask {
            for bit in (0..<8).reversed() {
                let set = byte >> UInt8(bit) & 1 == 1
                if set && seenZero { return nil }
                if !set { seenZero = true }
            }
        }
        self.mask = mask
        self.address = zip(bytes.prefix(half), mask).map { $0 & $1 }
    }

    /// Whether `ip` is inside the range; an address of the other family never is.
    func contains(_ ip: IPAddress) -> Bool {
        guard ip.bytes.count == address.count else { return false }
        for i in 0..<address.count where ip.bytes[i] & mask[i] != address[i] { return false }
        return true
    }
}

/// An rfc822Name (RFC 5280 §4.2.1.6): `local@domain`, the local part as dot-atoms (RFC 2822
/// §3.2.4; the quoted form is not supported and never matches).
struct RFC822Name: Hashable, Sendable {
    let localPart: String
    let domain: DNSName

    init?(_ text: String) {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, let domain = DNSName(String(parts[1])) else { return nil }
        let atext = Set("!#$%&'*+-/=?^_`{|}~".utf8)
        for atom in parts[0].split(separator: ".", omittingEmptySubsequences: false) {
            guard !atom.isEmpty,
                atom.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || atext.contains($0) })
            else { return nil }
        }
        localPart = String(parts[0])
        self.domain = domain
    }
}

/// An rfc822Name name constraint (RFC 5280 §4.2.1.10): a mailbox, all mailboxes on a host, or
/// (with a leading dot) all mailboxes in subdomains of a domain.
enum RFC822Constraint: Hashable, Sendable {
    case mailbox(RFC822Name)
    case host(DNSName)
    case subdomainsOf(DNSName)

    init?(_ text: String) {
        if text.hasPrefix(".") {
            guard let domain = DNSName(String(text.dropFirst())) else { return nil }
            self = .subdomainsOf(domain)
        } else if text.contains("@") {
            guard let mailbox = RFC822Name(text) else { return nil }
            self = .mailbox(mailbox)
        } else {
            guard let host = DNSName(text) else { return nil }
            self = .host(host)
        }
    }

    func matches(_ name: RFC822Name) -> Bool {
        switch self {
        // The local part is case-sensitive (RFC 5321 §2.4); the domain is not.
        case .mailbox(let m): return m.localPart == name.localPart && m.domain == name.domain
        case .host(let host): return name.domain == host
        case .subdomainsOf(let domain): return name.domain.labelCount > domain.labelCount && name.domain.isWithin(domain)
        }
    }
}
