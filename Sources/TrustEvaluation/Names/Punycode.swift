/// Punycode encoding (RFC 3492), the Bootstring instance IDNA uses to write a Unicode label
/// as an ASCII-compatible "A-label" (`xn--` followed by the encoding, RFC 5890 §2.3.2.1).
///
/// Only encoding is needed: names are compared as A-labels (``DNSName``), and the one source
/// of U-labels is the Public Suffix List, whose internationalised rules are written in
/// Unicode (``PublicSuffixList``). No mapping or normalisation is applied (IDNA2008's
/// U-labels are already lower-case and NFC, RFC 5891 §5.3); mixed-case annotation
/// (RFC 3492 Appendix A) is not produced.
enum Punycode {
    // RFC 3492 §5: the Punycode parameter values.
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700
    private static let initialBias = 72
    private static let initialN = 0x80

    /// The Punycode encoding of `scalars` (RFC 3492 §6.3), without the ACE prefix; `nil` if
    /// a delta would overflow (RFC 3492 §6.4), which no label of 63 octets can reach.
    static func encode(_ scalars: [Unicode.Scalar]) -> String? {
        let input = scalars.map { Int($0.value) }
        var output: [UInt8] = input.filter { $0 < 0x80 }.map { UInt8($0) }
        let basicCount = output.count
        var handled = basicCount
        if basicCount > 0 { output.append(UInt8(ascii: "-")) }
        var n = initialN
        var delta = 0
        var bias = initialBias
        while handled < input.count {
            // The smallest code point not handled yet.
            guard let m = input.filter({ $0 >= n }).min() else { return nil }
            let (step, stepOverflow) = (m - n).multipliedReportingOverflow(by: handled + 1)
            guard !stepOverflow else { return nil }
            let (advanced, addOverflow) = delta.addingReportingOverflow(step)
            guard !addOverflow else { return nil }
            delta = advanced
            n = m
            for code in input {
                if code < n {
                    guard delta < Int.max else { return nil }
                    delta += 1
                }
                guard code == n else { continue }
                // Write delta as a generalized variable-length integer (§3.3).
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, count: handled + 1, first: handled == basicCount)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The A-label of `label`: the label itself when it is ASCII, else `xn--` and its
    /// encoding; `nil` if it cannot be encoded or the A-label would exceed 63 octets
    /// (RFC 1034 §3.1).
    static func aLabel(_ label: Substring) -> String? {
        guard label.unicodeScalars.contains(where: { !$0.isASCII }) else { return String(label) }
        guard let encoded = encode(Array(label.unicodeScalars)) else { return nil }
        let result = "xn--" + encoded
        return result.utf8.count <= 63 ? result : nil
    }

    /// `0…25` as `a…z`, `26…35` as `0…9` (§5).
    private static func digit(_ value: Int) -> UInt8 {
        value < 26 ? UInt8(ascii: "a") + UInt8(value) : UInt8(ascii: "0") + UInt8(value - 26)
    }

    /// Bias adaptation (§6.1).
    private static func adapt(_ delta: Int, count: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / count
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}

/// The A-label of one label (``Punycode``), for the layers above that accept host names
/// written in Unicode (`HostPattern`): they fold and normalize the label first.
package enum InternationalHost {
    /// The A-label of `label` (already lower-case and NFC): the label itself when ASCII, else
    /// `xn--` and its Punycode; `nil` when it cannot be encoded in 63 octets.
    package static func aLabel(_ label: Substring) -> String? { Punycode.aLabel(label) }
}
