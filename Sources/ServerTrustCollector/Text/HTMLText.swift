import CertificateParsing

/// Text made safe for HTML and SVG, in element content and in quoted attribute values alike.
/// Every value that comes from a report goes through ``escape(_:)``; nothing else writes
/// report text into a page.
package enum HTMLText {
    /// `&`, `<`, `>`, `"` and `'` as character references, control characters (which no
    /// stored field should hold, but a database can be edited) as U+FFFD.
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                if scalar.value < 0x20 && scalar != "\n" || (0x7F..<0xA0).contains(scalar.value) {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// A percent-encoded query value (RFC 3986 unreserved characters kept).
    package static func queryValue(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// `2026-12-02 14:05 UTC`.
    package static func time(_ seconds: Int64) -> String {
        let text = ASN1Time(secondsSince1970: seconds).rfc3339
        guard text.count >= 16 else { return text }
        return text.prefix(10) + " " + text.dropFirst(11).prefix(5) + " UTC"
    }

    /// Control characters of a terminal line escaped (`\u{1B}` and the like), for
    /// `servertrust reports summary`.
    package static func terminal(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029 {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
