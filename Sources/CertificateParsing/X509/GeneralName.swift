/// GeneralName (RFC 5280 §4.2.1.6).
public enum GeneralName: Hashable, Sendable, CustomStringConvertible {
    /// `[0] otherName`: type OID and the explicitly tagged value's encoding.
    case otherName(typeID: ASN1ObjectIdentifier, value: ASN1Node)
    /// `[1] rfc822Name` (IA5String).
    case rfc822Name(String)
    /// `[2] dNSName` (IA5String).
    case dnsName(String)
    /// `[3] x400Address`, kept raw.
    case x400Address(ASN1Node)
    /// `[4] directoryName`.
    case directoryName(DistinguishedName)
    /// `[5] ediPartyName`, kept raw.
    case ediPartyName(ASN1Node)
    /// `[6] uniformResourceIdentifier` (IA5String).
    case uri(String)
    /// `[7] iPAddress`: 4 or 16 bytes in a SAN; 8 or 32 (address and mask) in name constraints.
    case ipAddress(ArraySlice<UInt8>)
    /// `[8] registeredID`.
    case registeredID(ASN1ObjectIdentifier)

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        let id = node.identifier
        guard id.tagClass == .contextSpecific else {
            throw DERError(.unexpectedTag, at: node.start, "GeneralName: expected a context-specific tag, found \(id)")
        }
        func primitive() throws(DERError) {
            guard !node.isConstructed else { throw DERError(.invalidConstruction, at: node.start, "GeneralName \(id) must be primitive") }
        }
        func constructed() throws(DERError) {
            guard node.isConstructed else { throw DERError(.invalidConstruction, at: node.start, "GeneralName \(id) must be constructed") }
        }
        switch id.tagNumber {
        case 0:
            try constructed()
            self = try input.sequence(node, .context(0), "otherName") { nodes throws(DERError) in
                let type = try input.objectIdentifier(nodes.next(.objectIdentifier, "otherName type"), "otherName type")
                let value = try nodes.next(.context(0), "otherName value")
                guard value.isConstructed else {
                    throw DERError(.invalidConstruction, at: value.start, "otherName value must be explicitly tagged")
                }
                return .otherName(typeID: type, value: input.node(value))
            }
        case 1:
            try primitive()
            self = .rfc822Name(try input.ia5(node, "rfc822Name"))
        case 2:
            try primitive()
            self = .dnsName(try input.ia5(node, "dNSName"))
        case 3:
            try constructed()
            self = .x400Address(input.node(node))
        case 4:
            try constructed()
            self = try input.sequence(node, .context(4), "directoryName") { nodes throws(DERError) in
                .directoryName(try DistinguishedName(nodes.next(.sequence, "directoryName"), input, "directoryName"))
            }
        case 5:
            try constructed()
            self = .ediPartyName(input.node(node))
        case 6:
            try primitive()
            self = .uri(try input.ia5(node, "uniformResourceIdentifier"))
        case 7:
            try primitive()
            self = .ipAddress(input.slice(node.contentRange))
        case 8:
            try primitive()
            try input.validateOID(node.contentRange, at: node.start, "registeredID")
            self = .registeredID(ASN1ObjectIdentifier(unchecked: input.slice(node.contentRange)))
        default:
            throw DERError(.unexpectedTag, at: node.start, "GeneralName: unknown choice \(id)")
        }
    }

    /// Reads a `GeneralNames ::= SEQUENCE SIZE (1..MAX) OF GeneralName`.
    static func sequence(
        _ node: RawNode, _ input: DERInput, _ name: StaticString, identifier: ASN1Identifier = .sequence
    ) throws(DERError) -> [GeneralName] {
        let names = try input.sequence(node, identifier, name) { nodes throws(DERError) in
            var names: [GeneralName] = []
            while let child = try nodes.next() { names.append(try GeneralName(child, input)) }
            return names
        }
        guard !names.isEmpty else { throw DERError(.invalidValue, at: node.start, "\(name) must contain at least one name") }
        return names
    }

    /// The form OpenSSL and curl print: `DNS:…`, `IP:…`, `email:…`, `URI:…`, `DirName:…`,
    /// `othername:…`, `Registered ID:…`; control characters and backslashes in the names are
    /// escaped (``DisplayText``), so a printed SAN is one line of plain text.
    public var description: String {
        switch self {
        case .dnsName(let s): return "DNS:\(DisplayText.escaped(s))"
        case .ipAddress(let bytes): return "IP:\(IPAddressText.format(bytes))"
        case .rfc822Name(let s): return "email:\(DisplayText.escaped(s))"
        case .uri(let s): return "URI:\(DisplayText.escaped(s))"
        case .directoryName(let n): return "DirName:\(n.rfc4514)"
        case .otherName(let type, _): return "othername:\(type.dotted)"
        case .registeredID(let oid): return "Registered ID:\(oid.dotted)"
        case .x400Address: return "X400Name:<unsupported>"
        case .ediPartyName: return "EdiPartyName:<unsupported>"
        }
    }
}

/// Text forms of IP addresses.
public enum IPAddressText {
    /// Dotted quad for 4 bytes, RFC 5952 canonical text for 16 bytes, `addr/mask` for the 8- and
    /// 32-byte name-constraint forms, and hex otherwise.
    public static func format(_ bytes: ArraySlice<UInt8>) -> String {
        switch bytes.count {
        case 4: return bytes.map(String.init).joined(separator: ".")
        case 16: return ipv6(Array(bytes))
        case 8: return format(bytes.prefix(4)) + "/" + format(bytes.suffix(4))
        case 32: return format(bytes.prefix(16)) + "/" + format(bytes.suffix(16))
        default: return "#" + Hex.encode(bytes)
        }
    }

    /// RFC 5952 §4: lowercase hex, leading zeros dropped, the longest run (≥ 2) of zero groups as `::`.
    static func ipv6(_ b: [UInt8]) -> String {
        let groups = (0..<8).map { UInt16(b[2 * $0]) << 8 | UInt16(b[2 * $0 + 1]) }
        var bestStart = -1
        var bestLength = 0
        var i = 0
        while i < 8 {
            if groups[i] == 0 {
                var j = i
                while j < 8 && groups[j] == 0 { j += 1 }
                if j - i > bestLength && j - i >= 2 {
                    bestStart = i
                    bestLength = j - i
                }
                i = j
            } else {
                i += 1
            }
        }
        func hex(_ range: Range<Int>) -> String { range.map { String(groups[$0], radix: 16) }.joined(separator: ":") }
        guard bestStart >= 0 else { return hex(0..<8) }
        return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
    }

    /// Parses an IPv4 dotted quad or IPv6 text (RFC 4291 §2.2 forms, including `::` and an
    /// embedded IPv4 tail; optional `[ ]`). Returns 4 or 16 bytes, or `nil`.
    public static func parse(_ text: String) -> [UInt8]? {
        // Host names end here: without a ':' only digits, dots and the brackets can make an
        // address (``parseIPv4(_:)`` accepts nothing else), and every decision asks this of
        // its host name, more than once.
        if !text.utf8.contains(UInt8(ascii: ":")),
            text.utf8.contains(where: { byte in
                !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) && byte != UInt8(ascii: ".")
                    && byte != UInt8(ascii: "[") && byte != UInt8(ascii: "]")
            })
        {
            return nil
        }
        var s = Substring(text)
        if s.hasPrefix("[") && s.hasSuffix("]") { s = s.dropFirst().dropLast() }
        if !s.contains(":") { return parseIPv4(s) }
        return parseIPv6(s)
    }

    static func parseIPv4(_ s: Substring) -> [UInt8]? {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            // No leading zeros: "010" is octal to some parsers and decimal to others.
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0 >= "0" && $0 <= "9" }),
                part.count == 1 || part.first != "0", let v = UInt8(part)
            else { return nil }
            out.append(v)
        }
        return out
    }

    static func parseIPv6(_ s: Substring) -> [UInt8]? {
        var head: [UInt16] = []
        var tail: [UInt16] = []
        var sawDouble = false
        let halves = s.components(separatedByString: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: Substring, allowIPv4: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (i, piece) in pieces.enumerated() {
                if allowIPv4 && i == pieces.count - 1 && piece.contains(".") {
                    guard let v4 = parseIPv4(piece) else { return nil }
                    result.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
                    result.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
                } else {
                    guard !piece.isEmpty, piece.count <= 4, piece.allSatisfy(\.isHexDigit), let v = UInt16(piece, radix: 16) else {
                        return nil
                    }
                    result.append(v)
                }
            }
            return result
        }
        if halves.count == 2 {
            sawDouble = true
            guard let h = groups(halves[0], allowIPv4: false), let t = groups(halves[1], allowIPv4: true) else { return nil }
            head = h
            tail = t
            guard head.count + tail.count <= 7 else { return nil }
        } else {
            guard let h = groups(halves[0], allowIPv4: true), h.count == 8 else { return nil }
            head = h
        }
        let all = sawDouble ? head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail : head
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}

extension Substring {
    /// Splits on a multi-character separator (Foundation-free).
    func components(separatedByString separator: String) -> [Substring] {
        var result: [Substring] = []
        var rest = self
        let sep = Substring(separator)
        while let range = rest.firstRange(of: sep) {
            result.append(rest[rest.startIndex..<range.lowerBound])
            rest = rest[range.upperBound...]
        }
        result.append(rest)
        return result
    }
}
