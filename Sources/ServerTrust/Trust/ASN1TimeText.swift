import CertificateParsing

/// RFC 3339 text for instants, through CertificateParsing's calendar arithmetic.
enum ASN1TimeText {
    /// `2026-01-01T00:00:00Z`.
    static func rfc3339(_ seconds: Int64) -> String { ASN1Time(secondsSince1970: seconds).rfc3339 }

    /// Parses `yyyy-MM-dd` (midnight UTC, TrustKit's `kTSKExpirationDate` and NSC's
    /// `expiration` form) or RFC 3339.
    static func parse(_ text: String) -> Int64? {
        if let time = ASN1Time(rfc3339: text) { return time.secondsSince1970 }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            let time = ASN1Time(year: year, month: month, day: day, hour: 0, minute: 0, second: 0)
        else { return nil }
        return time.secondsSince1970
    }
}
