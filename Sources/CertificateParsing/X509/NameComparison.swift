/// Distinguished-name comparison as RFC 5280 §7.1 defines it: attribute values of string type
/// are compared after the LDAP string preparation of RFC 4518 (case folding, insignificant
/// whitespace, characters mapped to nothing), whatever their ASN.1 string type, so
/// `PrintableString "Good CA"` matches `UTF8String "good  ca"`.
///
/// The comparison walks both encodings in place. Byte-identical names (nearly every real
/// chain) never reach it, and names that differ are usually told apart at their first
/// differing character without any allocation; only values outside ASCII are decoded.
///
/// NOTE: RFC 4518 step 3 (NFKC normalisation) is approximated by Unicode canonical
/// equivalence (Swift `String` equality) plus the few canonical singletons that decompose to
/// ASCII: the Swift standard library has no compatibility normalisation, so compatibility
/// characters (full-width forms, ligatures) are not folded onto their ASCII counterparts.
/// Case folding uses the Unicode case mappings of characters that change when case-folded
/// (RFC 3454 table B.2 in effect).
extension DistinguishedName {
    /// Whether the two names match under RFC 5280 §7.1: the same number of RDNs, in the same
    /// order, each RDN with the same number of attributes, each attribute of the same type with
    /// values equal after RFC 4518 preparation (string types) or byte-identical (other types).
    ///
    /// Byte equality (`==`) implies a match; the converse does not hold.
    public func matches(_ other: DistinguishedName) -> Bool {
        if derBytes.bytesEqual(other.derBytes) { return true }
        return NameComparison.namesMatch(derBytes, other.derBytes)
    }

    /// Whether this name lies in the subtree `base` names: its RDN sequence starts with the
    /// RDNs of `base`, compared as ``matches(_:)`` compares them (RFC 5280 §4.2.1.10
    /// directoryName constraints, §7.1).
    public func isWithin(_ base: DistinguishedName) -> Bool {
        NameComparison.hasPrefix(derBytes, base.derBytes)
    }

    /// A hash consistent with ``matches(_:)``: names that match have the same value, so an
    /// index keyed on it finds every matching name (the trust store's subject index).
    public var comparisonHash: Int {
        var hasher = Hasher()
        NameComparison.hash(derBytes, into: &hasher)
        return hasher.finalize()
    }

    /// This name with `rdn` appended as its last (least significant) RDN: how a
    /// `nameRelativeToCRLIssuer` distribution point name becomes a full name (RFC 5280
    /// §4.2.1.13, §5.2.5).
    public func appending(_ rdn: RelativeDistinguishedName) -> DistinguishedName {
        var content: [UInt8] = []
        var rest = derBytes
        // The outer SEQUENCE's content: every existing RDN, verbatim.
        if let outer = try? DER.readElement(&rest) { content += outer.content }
        var attributes: [UInt8] = []
        for attribute in rdn.attributes {
            let oid = NameComparison.tlv(0x06, Array(attribute.type.bytes))
            attributes += NameComparison.tlv(0x30, oid + Array(attribute.valueNode.encodedBytes))
        }
        content += NameComparison.tlv(0x31, attributes)
        let bytes = NameComparison.tlv(0x30, content)
        // Both parts were validated when they were parsed, so the result is a valid Name.
        return (try? DistinguishedName(derEncoded: bytes)) ?? self
    }
}

extension RelativeDistinguishedName {
    /// Whether the two RDNs match under RFC 5280 §7.1: the same number of attributes, and each
    /// attribute of one matches an attribute of the other.
    public func matches(_ other: RelativeDistinguishedName) -> Bool {
        guard attributes.count == other.attributes.count else { return false }
        var used = [Bool](repeating: false, count: other.attributes.count)
        outer: for attribute in attributes {
            for (index, candidate) in other.attributes.enumerated() where !used[index] {
                if attribute.type == candidate.type
                    && NameComparison.valueBytesMatch(attribute.valueNode.encodedBytes, candidate.valueNode.encodedBytes)
                {
                    used[index] = true
                    continue outer
                }
            }
            return false
        }
        return true
    }
}

/// The walkers behind ``DistinguishedName/matches(_:)``. Every function reads Name encodings
/// that were validated when they were parsed, through the same strict header reader; a
/// structure that cannot be read compares unequal.
enum NameComparison {
    /// Reads the element at `position` through the one DER header reader
    /// (`DERInput.header`), or `nil` if it is not a DER element that fits before `end`.
    @inline(__always)
    static func element(_ p: UnsafeBufferPointer<UInt8>, at position: Int, end: Int) -> RawNode? {
        try? DERInput.header(p, at: position, end: end, bias: 0)
    }

    /// The children of `node`.
    static func children(_ p: UnsafeBufferPointer<UInt8>, _ node: RawNode) -> [RawNode]? {
        var result: [RawNode] = []
        var position = node.contentStart
        while position < node.end {
            guard let child = element(p, at: position, end: node.end) else { return nil }
            result.append(child)
            position = child.end
        }
        return result
    }

    static func namesMatch(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                guard let na = element(pa, at: 0, end: pa.count), let nb = element(pb, at: 0, end: pb.count) else { return false }
                // Names of another shape (RDN count, attribute counts) cannot match: told apart
                // from the headers alone, before any value is prepared (an issuer and a subject
                // usually differ this way).
                guard sameShape(pa, na, pb, nb) else { return false }
                return rdnSequencesMatch(pa, na, pb, nb, prefixOnly: false)
            }
        }
    }

    /// Whether the two names have the same number of RDNs and each RDN pair the same number
    /// of attributes.
    static func sameShape(_ pa: UnsafeBufferPointer<UInt8>, _ na: RawNode, _ pb: UnsafeBufferPointer<UInt8>, _ nb: RawNode) -> Bool {
        var ia = na.contentStart
        var ib = nb.contentStart
        while ia < na.end && ib < nb.end {
            guard let ra = element(pa, at: ia, end: na.end), let rb = element(pb, at: ib, end: nb.end) else { return false }
            var ja = ra.contentStart
            var jb = rb.contentStart
            while ja < ra.end && jb < rb.end {
                guard let a = element(pa, at: ja, end: ra.end), let b = element(pb, at: jb, end: rb.end) else { return false }
                ja = a.end
                jb = b.end
            }
            guard ja >= ra.end && jb >= rb.end else { return false }
            ia = ra.end
            ib = rb.end
        }
        return ia >= na.end && ib >= nb.end
    }

    static func hasPrefix(_ name: ArraySlice<UInt8>, _ base: ArraySlice<UInt8>) -> Bool {
        name.withUnsafeBufferPointer { pn in
            base.withUnsafeBufferPointer { pb in
                guard let nn = element(pn, at: 0, end: pn.count), let nb = element(pb, at: 0, end: pb.count) else { return false }
                return rdnSequencesMatch(pn, nn, pb, nb, prefixOnly: true)
            }
        }
    }

    /// Walks the RDNs of `a` and `b` in step. With `prefixOnly`, `b`'s RDNs must match the first
    /// RDNs of `a` and `a` may have more.
    static func rdnSequencesMatch(
        _ pa: UnsafeBufferPointer<UInt8>, _ na: RawNode, _ pb: UnsafeBufferPointer<UInt8>, _ nb: RawNode, prefixOnly: Bool
    ) -> Bool {
        var ia = na.contentStart
        var ib = nb.contentStart
        while ib < nb.end {
            guard ia < na.end, let ra = element(pa, at: ia, end: na.end), let rb = element(pb, at: ib, end: nb.end) else { return false }
            guard rdnsMatch(pa, ra, pb, rb) else { return false }
            ia = ra.end
            ib = rb.end
        }
        return prefixOnly || ia >= na.end
    }

    /// RDN match (RFC 5280 §7.1): same attribute count, each attribute matched once. The
    /// single-attribute RDN (nearly all of them) is compared without allocating.
    static func rdnsMatch(_ pa: UnsafeBufferPointer<UInt8>, _ ra: RawNode, _ pb: UnsafeBufferPointer<UInt8>, _ rb: RawNode) -> Bool {
        guard let first = element(pa, at: ra.contentStart, end: ra.end), let other = element(pb, at: rb.contentStart, end: rb.end) else {
            return ra.contentCount == 0 && rb.contentCount == 0
        }
        if first.end == ra.end && other.end == rb.end { return attributesMatch(pa, first, pb, other) }
        guard let left = children(pa, ra), let right = children(pb, rb), left.count == right.count else { return false }
        var used = [Bool](repeating: false, count: right.count)
        outer: for attribute in left {
            for (index, candidate) in right.enumerated() where !used[index] && attributesMatch(pa, attribute, pb, candidate) {
                used[index] = true
                continue outer
            }
            return false
        }
        return true
    }

    /// `AttributeTypeAndValue` match: the same type OID and matching values.
    static func attributesMatch(_ pa: UnsafeBufferPointer<UInt8>, _ a: RawNode, _ pb: UnsafeBufferPointer<UInt8>, _ b: RawNode) -> Bool {
        guard let typeA = element(pa, at: a.contentStart, end: a.end), let typeB = element(pb, at: b.contentStart, end: b.end),
            typeA.contentCount == typeB.contentCount,
            let valueA = element(pa, at: typeA.end, end: a.end), let valueB = element(pb, at: typeB.end, end: b.end)
        else { return false }
        for k in 0..<typeA.contentCount where pa[typeA.contentStart + k] != pb[typeB.contentStart + k] { return false }
        return valuesMatch(pa, valueA, pb, valueB)
    }

    /// Attribute values: strings after RFC 4518 preparation, anything else byte for byte.
    static func valuesMatch(_ pa: UnsafeBufferPointer<UInt8>, _ a: RawNode, _ pb: UnsafeBufferPointer<UInt8>, _ b: RawNode) -> Bool {
        // Identical encodings match whatever the type (the common case inside names that differ
        // elsewhere).
        if a.end - a.start == b.end - b.start {
            var same = true
            for k in 0..<(a.end - a.start) where pa[a.start + k] != pb[b.start + k] {
                same = false
                break
            }
            if same { return true }
        }
        guard let kindA = ASN1String.kind(of: a.identifier), let kindB = ASN1String.kind(of: b.identifier) else { return false }
        let bytesA = UnsafeBufferPointer(rebasing: pa[a.contentRange])
        let bytesB = UnsafeBufferPointer(rebasing: pb[b.contentRange])
        if isASCIICompatible(kindA), isASCIICompatible(kindB), isASCII(bytesA), isASCII(bytesB) {
            var left = PreparedASCII(bytesA)
            var right = PreparedASCII(bytesB)
            while true {
                let x = left.next()
                let y = right.next()
                if x != y { return false }
                if x == nil { return true }
            }
        }
        guard let left = prepared(kindA, bytesA), let right = prepared(kindB, bytesB) else {
            // RFC 4518 §2.4: a prohibited character fails preparation and the match is
            // undefined; only identical encodings are treated as equal.
            return kindA == kindB && bytesA.elementsEqual(bytesB)
        }
        return left == right
    }

    /// Values given as complete TLV encodings (for decoded attributes).
    static func valueBytesMatch(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                guard let na = element(pa, at: 0, end: pa.count), let nb = element(pb, at: 0, end: pb.count) else { return false }
                return valuesMatch(pa, na, pb, nb)
            }
        }
    }

    @inline(__always)
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where byte >= 0x80 { return false }
        return true
    }

    /// String types whose bytes below 0x80 are ASCII characters.
    static func isASCIICompatible(_ kind: ASN1String.Kind) -> Bool {
        switch kind {
        case .utf8String, .printableString, .ia5String, .visibleString, .numericString, .teletexString: return true
        case .bmpString, .universalString: return false
        }
    }

    /// RFC 4518 preparation of an ASCII value, one prepared byte at a time: control characters
    /// mapped to nothing (§2.2), whitespace to SPACE, A–Z folded, and insignificant spaces
    /// removed (§2.6.1: none at either end, one between words).
    struct PreparedASCII {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var emitted = false
        var pendingSpace = false

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func next() -> UInt8? {
            while index < bytes.count {
                var c = bytes[index]
                if c <= 0x08 || (c >= 0x0E && c <= 0x1F) || c == 0x7F {
                    index += 1
                    continue
                }
                if c == 0x20 || (c >= 0x09 && c <= 0x0D) {
                    index += 1
                    if emitted { pendingSpace = true }
                    continue
                }
                if pendingSpace {
                    pendingSpace = false
                    return 0x20
                }
                index += 1
                emitted = true
                if c >= 0x41 && c <= 0x5A { c += 0x20 }
                return c
            }
            return nil
        }
    }

    /// RFC 4518 preparation of any string value as a `String` (compared with canonical
    /// equivalence), or `nil` when the value holds a prohibited character (§2.4).
    static func prepared(_ kind: ASN1String.Kind, _ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        var prohibited = false
        func append(_ scalar: Unicode.Scalar) {
            let value = scalar.value
            // §2.4: unassigned, private use, non-characters, surrogates and U+FFFD are prohibited.
            switch scalar.properties.generalCategory {
            case .unassigned, .privateUse, .surrogate:
                prohibited = true
                return
            default: break
            }
            if value == 0xFFFD || scalar.properties.isNoncharacterCodePoint {
                prohibited = true
                return
            }
            // §2.2: characters mapped to nothing.
            if value <= 0x08 || (0x0E...0x1F).contains(value) || (0x7F...0x84).contains(value) || (0x86...0x9F).contains(value)
                || value == 0x00AD || value == 0x034F || value == 0x1806 || (0x180B...0x180E).contains(value)
                || (0x200B...0x200F).contains(value) || (0x202A...0x202E).contains(value) || (0x2060...0x2063).contains(value)
                || (0xFE00...0xFE0F).contains(value) || value == 0xFEFF || value == 0xFFFC
            {
                return
            }
            // §2.2: whitespace (and the line and paragraph separators) maps to SPACE; §2.6.1
            // removes it at the ends and compresses it inside.
            if (0x09...0x0D).contains(value) || value == 0x85 || scalar.properties.generalCategory == .spaceSeparator
                || value == 0x2028 || value == 0x2029
            {
                if !scalars.isEmpty { pendingSpace = true }
                return
            }
            if pendingSpace {
                scalars.append(" ")
                pendingSpace = false
            }
            // Canonical singletons that decompose to ASCII, so that they hash with it.
            switch value {
            case 0x037E:
                scalars.append(";")
                return
            case 0x1FEF:
                scalars.append("`")
                return
            default: break
            }
            if scalar.properties.changesWhenCaseFolded {
                for upper in scalar.properties.uppercaseMapping.unicodeScalars {
                    scalars.append(contentsOf: upper.properties.lowercaseMapping.unicodeScalars)
                }
            } else {
                scalars.append(scalar)
            }
        }
        switch kind {
        case .utf8String, .printableString, .ia5String, .visibleString, .numericString:
            for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars { append(scalar) }
        case .teletexString:
            for byte in bytes { append(Unicode.Scalar(byte)) }
        case .bmpString:
            var i = 0
            while i + 1 < bytes.count {
                append(Unicode.Scalar(UInt32(bytes[i]) << 8 | UInt32(bytes[i + 1])) ?? "\u{FFFD}")
                i += 2
            }
        case .universalString:
            var i = 0
            while i + 3 < bytes.count {
                let unit = UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
                append(Unicode.Scalar(unit) ?? "\u{FFFD}")
                i += 4
            }
        }
        return prohibited ? nil : String(scalars)
    }

    /// Feeds a Name to `hasher` so that matching names hash alike: per RDN its attribute
    /// count and an order-independent sum of its attributes' digests; a string value
    /// contributes its prepared text when that is ASCII and a marker otherwise (canonical
    /// equivalence is left to the comparison). The digests are FNV-1a, cheap enough for the
    /// trust-store lookup of every path step; `Hasher` seeds the final combination.
    static func hash(_ name: ArraySlice<UInt8>, into hasher: inout Hasher) {
        name.withUnsafeBufferPointer { p in
            guard let root = element(p, at: 0, end: p.count) else { return }
            var digest = fnvOffset
            var position = root.contentStart
            while position < root.end, let rdn = element(p, at: position, end: root.end) {
                var sum: UInt64 = 0
                var attributes: UInt64 = 0
                var inner = rdn.contentStart
                while inner < rdn.end, let attribute = element(p, at: inner, end: rdn.end) {
                    sum &+= attributeDigest(p, attribute)
                    attributes += 1
                    inner = attribute.end
                }
                digest = (digest ^ attributes) &* fnvPrime
                digest = (digest ^ sum) &* fnvPrime
                position = rdn.end
            }
            hasher.combine(digest)
        }
    }

    static let fnvOffset: UInt64 = 0xCBF2_9CE4_8422_2325
    static let fnvPrime: UInt64 = 0x100_0000_01B3

    static func attributeDigest(_ p: UnsafeBufferPointer<UInt8>, _ attribute: RawNode) -> UInt64 {
        guard let type = element(p, at: attribute.contentStart, end: attribute.end),
            let value = element(p, at: type.end, end: attribute.end)
        else { return 0 }
        var digest = fnvOffset
        for i in type.contentRange { digest = (digest ^ UInt64(p[i])) &* fnvPrime }
        digest = (digest ^ 0xFF) &* fnvPrime
        guard let kind = ASN1String.kind(of: value.identifier) else {
            for i in value.start..<value.end { digest = (digest ^ UInt64(p[i])) &* fnvPrime }
            return digest
        }
        // One pass over an ASCII value, preparing as PreparedASCII does (RFC 4518 §2.2, §2.6.1).
        if isASCIICompatible(kind) {
            var prepared = digest
            var emitted = false
            var pendingSpace = false
            var ascii = true
            for i in value.contentRange {
                var c = p[i]
                if c >= 0x80 {
                    ascii = false
                    break
                }
                if c <= 0x08 || (c >= 0x0E && c <= 0x1F) || c == 0x7F { continue }
                if c == 0x20 || (c >= 0x09 && c <= 0x0D) {
                    pendingSpace = emitted
                    continue
                }
                if pendingSpace {
                    prepared = (prepared ^ 0x20) &* fnvPrime
                    pendingSpace = false
                }
                if c >= 0x41 && c <= 0x5A { c += 0x20 }
                prepared = (prepared ^ UInt64(c)) &* fnvPrime
                emitted = true
            }
            if ascii { return prepared }
        }
        if let text = prepared(kind, UnsafeBufferPointer(rebasing: p[value.contentRange])), text.utf8.allSatisfy({ $0 < 0x80 }) {
            for byte in text.utf8 { digest = (digest ^ UInt64(byte)) &* fnvPrime }
        } else {
            digest = (digest ^ 0xFE) &* fnvPrime
        }
        return digest
    }

    /// A minimal DER TLV (definite length).
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [tag]
        let n = content.count
        if n < 0x80 {
            out.append(UInt8(n))
        } else {
            var length: [UInt8] = []
            var rest = n
            while rest > 0 {
                length.insert(UInt8(rest & 0xFF), at: 0)
                rest >>= 8
            }
            out.append(0x80 | UInt8(length.count))
            out += length
        }
        return out + content
    }
}
