import CertificateParsing
import ServerTrust

/// Why a report was refused: the member concerned (a JSON path such as
/// `$["validated-certificate-chain"][1]`) and what is wrong with it, in words that never
/// repeat the attacker's bytes beyond a sanitised excerpt.
package struct ReportError: Error, Sendable, CustomStringConvertible {
    /// The JSON path of the offending member, `$` for the document.
    package let path: String
    /// What is wrong.
    package let reason: String

    /// `reason` may quote parser messages that quote input (a PEM label, say): it is cut to
    /// 300 characters with control characters replaced, so a refusal is one line.
    package init(_ path: String, _ reason: String) {
        self.path = path
        var clean = ""
        for scalar in reason.unicodeScalars.prefix(300) {
            if scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029 {
                clean += "?"
            } else {
                clean.unicodeScalars.append(scalar)
            }
        }
        self.reason = clean
    }

    package var description: String { "\(path): \(reason)" }
}

/// Reads a POSTed report body as untrusted input and returns a ``ReceivedReport`` or a
/// ``ReportError``; nothing in between is stored.
///
/// The rules, one place each:
/// - the body is one JSON object ( ``StrictJSON``: depth, value count, UTF-8, no repeated
///   names, nothing after it);
/// - `hostname` is a DNS name or IP literal and `noted-hostname` a pattern of one (the
///   characters a host pattern may hold, `*` included), both at most 253 characters: they
///   are what the dashboard groups by, so markup or line breaks there are refused, not stored;
///   a hostname is lowercased and loses one trailing dot;
/// - every certificate of `validated-certificate-chain` (1 to ``maximumChainLength``) and of
///   `served-certificate-chain` is exactly one PEM `CERTIFICATE` block that CertificateParsing
///   reads without error;
/// - `known-pins` are RFC 7469 `pin-sha256="…"` (or sha384/sha512) with a digest of the
///   algorithm's length;
/// - the app's free-text fields are at most ``maximumTextLength`` characters with no control,
///   line-separator or bidirectional-override character (a CR/LF forges log lines, an override
///   reorders what a reader sees); other characters, markup included, are stored as data and
///   escaped wherever shown;
/// - a member of the wrong type is refused; an unknown member is kept aside, never read.
package struct ReportReader: Sendable {
    /// The most certificates in one chain (the verifier's own bound is 8 intermediates).
    package var maximumChainLength = 10
    /// The most characters of one PEM certificate.
    package var maximumCertificateLength = 16 * 1024
    /// The most pins.
    package var maximumPins = 32
    /// The most characters of a free-text field.
    package var maximumTextLength = 200
    /// The JSON limits.
    package var json = StrictJSON()

    package init() {}

    /// Reads one report.
    package func read(_ body: [UInt8]) throws(ReportError) -> ReceivedReport {
        let document: JSONNode
        do {
            document = try json.parse(body)
        } catch {
            throw ReportError("$", error.description)
        }
        guard case .object(let members) = document else { throw ReportError("$", "a report is a JSON object") }
        var fields: [String: JSONNode] = [:]
        var unknown: [(String, JSONNode)] = []
        for (name, value) in members {
            if Self.knownNames.contains(name) { fields[name] = value } else { unknown.append((name, value)) }
        }
        func path(_ name: String) -> String { "$[\"\(name)\"]" }

        let hostname = try hostText(fields["hostname"], path("hostname"), allowingWildcards: false)
        let noted = try hostText(fields["noted-hostname"], path("noted-hostname"), allowingWildcards: true)
        let port = try integer(fields["port"], path("port"), range: 0...65535)
        let result = try integer(fields["validation-result"], path("validation-result"), range: 0...255)
        let validated = try chain(fields["validated-certificate-chain"], path("validated-certificate-chain"))
        guard let validated else { throw ReportError(path("validated-certificate-chain"), "missing") }
        let served = try chain(fields["served-certificate-chain"], path("served-certificate-chain"))
        let pins = try knownPins(fields["known-pins"], path("known-pins"))
        var report = ReceivedReport(
            reportedAt: try date(fields["date-time"], path("date-time")), hostname: hostname, port: port, notedHostname: noted,
            includeSubdomains: try bool(fields["include-subdomains"], path("include-subdomains")),
            enforcePinning: try bool(fields["enforce-pinning"], path("enforce-pinning")),
            validatedChain: validated, servedChain: served, knownPins: pins, validationResult: result,
            knownPinsExpiration: try date(fields["known-pins-expiration-date"], path("known-pins-expiration-date")),
            app: ReceivedReport.App(), unknownFields: JSONNode.object(unknown).serialized)
        report.app.bundleID = try text(fields["app-bundle-id"], path("app-bundle-id"))
        report.app.version = try text(fields["app-version"], path("app-version"))
        report.app.vendorID = try text(fields["app-vendor-id"], path("app-vendor-id"))
        report.app.platform = try text(fields["app-platform"], path("app-platform"))
        report.app.platformVersion = try text(fields["app-platform-version"], path("app-platform-version"))
        report.app.reporterVersion = try text(fields["trustkit-version"], path("trustkit-version"))
        return report
    }

    static let knownNames: Set<String> = [
        "date-time", "hostname", "port", "noted-hostname", "include-subdomains", "enforce-pinning", "served-certificate-chain",
        "validated-certificate-chain", "known-pins", "validation-result", "known-pins-expiration-date", "app-bundle-id", "app-version",
        "app-vendor-id", "app-platform", "app-platform-version", "trustkit-version",
    ]

    // MARK: - One rule per kind of field

    private func hostText(_ node: JSONNode?, _ path: String, allowingWildcards: Bool) throws(ReportError) -> String {
        guard let node else { throw ReportError(path, "missing") }
        guard case .string(let text) = node else { throw ReportError(path, "not a string") }
        guard !text.isEmpty, text.utf8.count <= 253 else { throw ReportError(path, "not a host name (1 to 253 characters)") }
        // Letters, digits, '-', '.', '_' (seen in real names), ':' and brackets for IPv6
        // literals, '*' in patterns only. Nothing that could be markup, a line break or a URL.
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
                continue
            case UInt8(ascii: "*") where allowingWildcards:
                continue
            default:
                throw ReportError(path, "not a host name: character \(Self.describe(byte)) is not allowed")
            }
        }
        // One trailing dot names the same host (RFC 1034 §3.1, an absolute name): dropped from a
        // hostname, so `a.test.` and `a.test` are one host on the dashboard and in filters.
        if !allowingWildcards, text.count > 1, text.hasSuffix(".") { return String(text.dropLast()).lowercased() }
        return text.lowercased()
    }

    private func text(_ node: JSONNode?, _ path: String) throws(ReportError) -> String? {
        guard let node else { return nil }
        if case .null = node { return nil }
        guard case .string(let text) = node else { throw ReportError(path, "not a string") }
        guard text.count <= maximumTextLength else { throw ReportError(path, "longer than \(maximumTextLength) characters") }
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x00..<0x20, 0x7F..<0xA0:
                throw ReportError(path, "control character U+\(Self.hex(scalar.value)) (a line break or terminal escape) is not allowed")
            case 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C:
                throw ReportError(path, "line-separator or bidirectional-override character U+\(Self.hex(scalar.value)) is not allowed")
            default: continue
            }
        }
        return text
    }

    private func integer(_ node: JSONNode?, _ path: String, range: ClosedRange<Int>) throws(ReportError) -> Int {
        guard let node else { throw ReportError(path, "missing") }
        // TrustKit and ServerTrust send numbers; a decimal string is accepted for senders that quote them.
        let text: String
        switch node {
        case .number(let number): text = number
        case .string(let string) where string.count <= 6: text = string
        default: throw ReportError(path, "not an integer")
        }
        guard let value = Int(text), range.contains(value) else { throw ReportError(path, "not an integer in \(range.lowerBound)...\(range.upperBound)") }
        return value
    }

    private func bool(_ node: JSONNode?, _ path: String) throws(ReportError) -> Bool? {
        switch node {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        // NSJSONSerialization writes NSNumber booleans from some code paths as 0 / 1.
        case .number("0")?: return false
        case .number("1")?: return true
        default: throw ReportError(path, "not a boolean")
        }
    }

    private func date(_ node: JSONNode?, _ path: String) throws(ReportError) -> Int64? {
        guard let node else { return nil }
        if case .null = node { return nil }
        guard case .string(let text) = node, text.count <= 40 else { throw ReportError(path, "not a date") }
        if let time = ASN1Time(rfc3339: text) { return time.secondsSince1970 }
        // `yyyy-MM-dd` (TrustKit's kTSKExpirationDate form).
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            let time = ASN1Time(year: year, month: month, day: day, hour: 0, minute: 0, second: 0)
        {
            return time.secondsSince1970
        }
        throw ReportError(path, "not an RFC 3339 date")
    }

    private func chain(_ node: JSONNode?, _ path: String) throws(ReportError) -> [Certificate]? {
        guard let node else { return nil }
        if case .null = node { return nil }
        guard case .array(let elements) = node else { throw ReportError(path, "not an array of PEM certificates") }
        guard !elements.isEmpty, elements.count <= maximumChainLength else {
            throw ReportError(path, "holds \(elements.count) certificates (1 to \(maximumChainLength) accepted)")
        }
        var certificates: [Certificate] = []
        for (index, element) in elements.enumerated() {
            let elementPath = "\(path)[\(index)]"
            guard case .string(let pem) = element else { throw ReportError(elementPath, "not a PEM string") }
            guard pem.utf8.count <= maximumCertificateLength else { throw ReportError(elementPath, "longer than \(maximumCertificateLength) bytes") }
            do {
                certificates.append(try Certificate(pemEncoded: pem))
            } catch {
                throw ReportError(elementPath, "not a certificate: \(error)")
            }
        }
        return certificates
    }

    private func knownPins(_ node: JSONNode?, _ path: String) throws(ReportError) -> [SPKIPin] {
        guard let node else { throw ReportError(path, "missing") }
        guard case .array(let elements) = node, elements.count <= maximumPins else {
            throw ReportError(path, "not an array of at most \(maximumPins) pins")
        }
        var pins: [SPKIPin] = []
        for (index, element) in elements.enumerated() {
            let elementPath = "\(path)[\(index)]"
            guard case .string(let text) = element, let pin = Self.rfc7469Pin(text) else {
                throw ReportError(elementPath, "not an RFC 7469 pin (pin-sha256=\"BASE64\")")
            }
            pins.append(pin)
        }
        return pins
    }

    /// `pin-sha256="<base64>"` (RFC 7469 §2.1.1's pin directive, as TrustKit and ServerTrust
    /// write known pins), also `pin-sha384` and `pin-sha512`.
    static func rfc7469Pin(_ text: String) -> SPKIPin? {
        for algorithm in PinDigestAlgorithm.allCases {
            let prefix = "pin-\(algorithm.rawValue)=\""
            guard text.hasPrefix(prefix), text.hasSuffix("\""), text.count > prefix.count + 1 else { continue }
            let body = text.dropFirst(prefix.count).dropLast()
            guard let digest = Base64.decode(Array(body.utf8)) else { return nil }
            return try? SPKIPin(algorithm: algorithm, digest: digest)
        }
        return nil
    }

    private static func describe(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) && byte != UInt8(ascii: "<") && byte != UInt8(ascii: ">") && byte != UInt8(ascii: "&")
            ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + hex(UInt32(byte))
    }

    private static func hex(_ value: UInt32) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }
}
