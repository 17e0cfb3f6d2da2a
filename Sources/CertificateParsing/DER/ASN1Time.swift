/// A point in time from a UTCTime or GeneralizedTime, in the strict forms RFC 5280 §4.1.2.5
/// requires: `YYMMDDHHMMSSZ` and `YYYYMMDDHHMMSSZ`, seconds present, no fraction, `Z` only.
public struct ASN1Time: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Which ASN.1 type carried the time.
    public enum Encoding: Hashable, Sendable {
        /// UTCTime, `YYMMDDHHMMSSZ`: RFC 5280 §4.1.2.5.1 reads `YY` ≥ 50 as 19YY and < 50 as 20YY,
        /// and requires it for validity dates from 1950 through 2049.
        case utcTime
        /// GeneralizedTime, `YYYYMMDDHHMMSSZ`: RFC 5280 §4.1.2.5.2 requires it from 2050 on.
        case generalizedTime
    }

    /// The year, 0–9999 (UTCTime's two digits already expanded to four).
    public let year: Int
    /// The month, 1–12.
    public let month: Int
    /// The day of the month, 1–31, checked against the month and leap years.
    public let day: Int
    /// The hour, 0–23 (UTC).
    public let hour: Int
    /// The minute, 0–59.
    public let minute: Int
    /// The second, 0–59: RFC 5280 times have no leap second.
    public let second: Int
    /// The encoding it was read from.
    public let encoding: Encoding
    /// Seconds since 1970-01-01T00:00:00Z.
    public let secondsSince1970: Int64

    /// Creates a time from components (validated); `nil` if they name no real instant.
    public init?(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, encoding: Encoding = .generalizedTime) {
        guard (0...9999).contains(year), (1...12).contains(month), (0...23).contains(hour), (0...59).contains(minute),
            (0...59).contains(second), day >= 1, day <= ASN1Time.daysInMonth(year, month)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.encoding = encoding
        self.secondsSince1970 =
            ASN1Time.daysFromCivil(year, month, day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// Creates a time from seconds since 1970 (UTC).
    public init(secondsSince1970 seconds: Int64) {
        // Floor division written so that no Int64 overflows (`seconds - 86_399` did at Int64.min).
        let days = seconds >= 0 ? seconds / 86_400 : -1 - (-1 - seconds) / 86_400
        let rest = Int(seconds >= 0 ? seconds % 86_400 : 86_399 - (-1 - seconds) % 86_400)
        let (y, m, d) = ASN1Time.civilFromDays(days)
        self.year = y
        self.month = m
        self.day = d
        self.hour = rest / 3600
        self.minute = rest % 3600 / 60
        self.second = rest % 60
        self.encoding = (1950...2049).contains(y) ? .utcTime : .generalizedTime
        self.secondsSince1970 = seconds
    }

    /// Orders by the instant (``secondsSince1970``), whatever the encoding.
    public static func < (lhs: ASN1Time, rhs: ASN1Time) -> Bool { lhs.secondsSince1970 < rhs.secondsSince1970 }
    /// The same instant, whatever the encoding: a UTCTime and a GeneralizedTime for the same second
    /// are equal.
    public static func == (lhs: ASN1Time, rhs: ASN1Time) -> Bool { lhs.secondsSince1970 == rhs.secondsSince1970 }
    /// Hashes the instant that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(secondsSince1970) }

    /// RFC 3339 in UTC, e.g. `2026-01-01T00:00:00Z`.
    public var rfc3339: String {
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))Z"
    }

    /// The time in RFC 3339, as ``rfc3339``.
    public var description: String { rfc3339 }

    /// Parses an RFC 3339 timestamp (`2024-01-01T00:00:00Z`, `+hh:mm` offsets and fractional
    /// seconds accepted; fractions are truncated). Returns `nil` for anything else.
    public init?(rfc3339 text: String) {
        let b = Array(text.utf8)
        guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || b[10] == UInt8(ascii: " "),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
            let y = ASN1Time.digits(b[0..<4]), let mo = ASN1Time.digits(b[5..<7]), let d = ASN1Time.digits(b[8..<10]),
            let h = ASN1Time.digits(b[11..<13]), let mi = ASN1Time.digits(b[14..<16]), let s = ASN1Time.digits(b[17..<19])
        else { return nil }
        var i = 19
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < b.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) { i += 1 }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            guard b.count - i == 6, b[i + 3] == UInt8(ascii: ":"), let oh = ASN1Time.digits(b[(i + 1)..<(i + 3)]),
                let om = ASN1Time.digits(b[(i + 4)..<(i + 6)]), oh < 24, om < 60
            else { return nil }
            offset = (oh * 60 + om) * 60 * (b[i] == UInt8(ascii: "+") ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count, let local = ASN1Time(year: y, month: mo, day: d, hour: h, minute: mi, second: s) else { return nil }
        self.init(secondsSince1970: local.secondsSince1970 - Int64(offset))
    }

    /// The decimal number `bytes` spell in ASCII digits, or `nil` if one is not a digit (the
    /// one digit reader of the RFC 3339 and the DER time forms).
    static func digits(_ bytes: some Collection<UInt8>) -> Int? {
        var value = 0
        for byte in bytes {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    static func daysInMonth(_ y: Int, _ m: Int) -> Int {
        switch m {
        case 2: return isLeap(y) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days: exact proleptic Gregorian arithmetic.
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ days: Int64) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        return (Int(y), Int(m), Int(d))
    }
}

extension ASN1Node {
    /// A UTCTime or GeneralizedTime in RFC 5280's strict DER form.
    ///
    /// UTCTime years 50–99 mean 1950–1999 and 00–49 mean 2000–2049 (RFC 5280 §4.1.2.5.1).
    public func time(_ name: @autoclosure () -> String) throws(DERError) -> ASN1Time {
        try DERRules.expectPrimitive(self, name)
        return try content.withUnsafeBufferPointer { (bytes) throws(DERError) -> ASN1Time in
            try DERRules.time(identifier, bytes, at: offset, name)
        }
    }
}
