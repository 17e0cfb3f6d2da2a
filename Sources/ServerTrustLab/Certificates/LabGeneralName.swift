/// One `GeneralName` (RFC 5280 §4.2.1.6), used in SAN, IAN, name constraints, AIA and CRL DPs.
public enum LabGeneralName: Sendable, Hashable {
    /// dNSName `[2]` (IA5String bytes verbatim, so invalid names can be made).
    case dns(String)
    /// iPAddress `[7]` with raw bytes: 4 or 16 for an address, 8 or 32 (address + mask) in
    /// name constraints; other lengths are encoded as given for malformed-input tests.
    case ip([UInt8])
    /// iPAddress from text such as `"192.0.2.1"` or `"2001:db8::1"`; parsed at encoding time.
    case ipAddress(String)
    /// iPAddress name-constraint subtree from CIDR text such as `"10.0.0.0/8"` or
    /// `"2001:db8::/32"`, encoded as address followed by mask.
    case ipSubnet(String)
    /// rfc822Name `[1]`.
    case email(String)
    /// uniformResourceIdentifier `[6]`.
    case uri(String)
    /// directoryName `[4]` (EXPLICIT, because Name is a CHOICE).
    case directoryName(LabName)
    /// otherName `[0]`: `SEQUENCE { type-id OID, [0] EXPLICIT value }` with `valueDER` verbatim.
    case otherName(oid: String, valueDER: [UInt8])
    /// registeredID `[8]` from a dotted OID.
    case registeredID(String)

    /// The DER GeneralName.
    ///
    /// - Returns: The encoding.
    /// - Throws: ``LabError`` for unparseable IP text, OIDs or names.
    public func derEncoded() throws -> [UInt8] {
        switch self {
        case .dns(let name):
            return LabDER.contextSpecific(2, constructed: false, Array(name.utf8))
        case .ip(let bytes):
            return LabDER.contextSpecific(7, constructed: false, bytes)
        case .ipAddress(let text):
            return LabDER.contextSpecific(7, constructed: false, try LabIP.parse(text))
        case .ipSubnet(let text):
            return LabDER.contextSpecific(7, constructed: false, try LabIP.parseSubnet(text))
        case .email(let address):
            return LabDER.contextSpecific(1, constructed: false, Array(address.utf8))
        case .uri(let uri):
            return LabDER.contextSpecific(6, constructed: false, Array(uri.utf8))
        case .directoryName(let name):
            return LabDER.explicit(4, try name.derEncoded())
        case .otherName(let oid, let valueDER):
            let resolved = try LabOID.resolve(oid, table: [:], context: "otherName type")
            return LabDER.contextSpecific(0, constructed: true, try LabDER.oid(resolved) + LabDER.explicit(0, valueDER))
        case .registeredID(let oid):
            let resolved = try LabOID.resolve(oid, table: [:], context: "registeredID")
            return LabDER.contextSpecific(8, constructed: false, try LabDER.oidContent(resolved))
        }
    }

    /// A `dns` name for a host name, or an `ipAddress` when `host` is an IP literal: the
    /// subjectAltName a browser would expect for that URL host.
    ///
    /// - Parameter host: A host name or IP literal.
    /// - Returns: The matching general name.
    public static func forHost(_ host: String) -> LabGeneralName {
        (try? LabIP.parse(host)) != nil ? .ipAddress(host) : .dns(host)
    }
}

/// IPv4/IPv6 text parsing without Foundation or libc, so the result is identical everywhere.
public enum LabIP {
    /// Parses an IPv4 dotted quad (4 bytes) or an IPv6 address (16 bytes, `::` and an embedded
    /// trailing IPv4 allowed; zone IDs are not).
    ///
    /// - Parameter text: The address text.
    /// - Returns: The network-order bytes.
    /// - Throws: ``LabError`` if the text is not an address.
    public static func parse(_ text: String) throws -> [UInt8] {
        if let v4 = parseV4(Substring(text)) { return v4 }
        if let v6 = parseV6(text) { return v6 }
        throw LabError.invalid("LabIP.parse", "'\(text)' is not an IPv4 or IPv6 address")
    }

    /// Parses CIDR text into address bytes followed by mask bytes (8 or 32 bytes), the
    /// iPAddress form that name constraints use.
    ///
    /// - Parameter text: Such as `"192.0.2.0/24"`.
    /// - Returns: Address then mask.
    /// - Throws: ``LabError`` if the text is not `address/prefix` with a prefix in range.
    public static func parseSubnet(_ text: String) throws -> [UInt8] {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let prefix = Int(parts[1]) else {
            throw LabError.invalid("LabIP.parseSubnet", "'\(text)' is not address/prefix")
        }
        let address = try parse(String(parts[0]))
        guard (0...(address.count * 8)).contains(prefix) else {
            throw LabError.invalid("LabIP.parseSubnet", "prefix /\(prefix) does not fit \(address.count * 8) bits")
        }
        return address + mask(prefixLength: prefix, byteCount: address.count)
    }

    /// A netmask with `prefixLength` leading one bits.
    ///
    /// - Parameters:
    ///   - prefixLength: Number of one bits.
    ///   - byteCount: 4 for IPv4, 16 for IPv6.
    /// - Returns: The mask bytes.
    public static func mask(prefixLength: Int, byteCount: Int) -> [UInt8] {
        (0..<byteCount).map { index in
            let bits = min(8, max(0, prefixLength - index * 8))
            return bits == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
        }
    }

    private static func parseV4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    private static func parseV6(_ text: String) -> [UInt8]? {
        let halves = text.components(separatedByDoubleColon: ())
        guard halves.count <= 2 else { return nil }
        func groups(_ part: Substring) -> [UInt8]? {
            if part.isEmpty { return [] }
            var bytes: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains(".") {
                    guard let v4 = parseV4(piece) else { return nil }
                    bytes += v4
                    continue
                }
                guard (1...4).contains(piece.count), let value = UInt16(piece, radix: 16) else { return nil }
                bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
            }
            return bytes
        }
        guard let head = groups(halves[0]) else { return nil }
        if halves.count == 1 { return head.count == 16 ? head : nil }
        guard let tail = groups(halves[1]), head.count + tail.count <= 14 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}

extension String {
    /// Splits on the first `::` only; a second `::` yields three parts, which the caller
    /// rejects as an invalid address.
    fileprivate func components(separatedByDoubleColon _: Void) -> [Substring] {
        let characters = Array(self)
        guard let first = characters.indices.dropLast().first(where: { characters[$0] == ":" && characters[$0 + 1] == ":" })
        else { return [Substring(self)] }
        let headEnd = index(startIndex, offsetBy: first)
        let rest = self[index(headEnd, offsetBy: 2)...]
        let restCharacters = Array(rest)
        if restCharacters.indices.dropLast().contains(where: { restCharacters[$0] == ":" && restCharacters[$0 + 1] == ":" }) {
            return [self[..<headEnd], rest, rest]
        }
        return [self[..<headEnd], rest]
    }
}
