public import CertificateParsing
import Foundation

/// A pin-validation failure report in TrustKit's JSON format, itself modelled on RFC 7469 §3.
///
/// Sent for any failure on a pinned host, including report-only mismatches. The keys are
/// `date-time`, `hostname`, `port`, `noted-hostname`, `include-subdomains`, `enforce-pinning`,
/// `served-certificate-chain`, `validated-certificate-chain` (PEM strings), `known-pins`
/// (`pin-sha256="…"`), `validation-result` and, when the pin set has one,
/// `known-pins-expiration-date`.
public struct PinFailureReport: Hashable, Sendable {
    /// TrustKit's `TSKTrustEvaluationResult` values, so existing report collectors read them.
    public enum ValidationResult: Int, Hashable, Sendable {
        /// The pins matched (never reported).
        case success = 0
        /// No pin matched.
        case failedNoMatchingPin = 1
        /// The chain did not validate.
        case failedInvalidCertificateChain = 2
        /// Enforced pinning without a backup pin (TrustKit's "invalid parameters").
        case errorInvalidParameters = 3
        /// A negative pin matched (a ServerTrust addition; TrustKit has no negative pins).
        case failedNegativePinMatched = 6
    }

    /// When the failure happened, seconds since 1970.
    public let date: Int64
    /// The host connected to.
    public let hostname: String
    /// The port connected to.
    public let port: Int
    /// The pattern of the pin set applied.
    public let notedHostname: String
    /// Whether that pattern covers subdomains.
    public let includeSubdomains: Bool
    /// Whether the pin set is enforced (`false`: report-only).
    public let enforcePinning: Bool
    /// The certificates the server sent, as PEM.
    public let servedCertificateChain: [String]
    /// The validated chain as PEM, or the served chain when none validated.
    public let validatedCertificateChain: [String]
    /// The configured pins, `pin-sha256="…"`.
    public let knownPins: [String]
    /// The failure.
    public let validationResult: ValidationResult
    /// The pin set's expiration date, if it has one.
    public let knownPinsExpirationDate: Int64?

    /// Creates a report.
    /// - Parameters:
    ///   - date: When the failure happened.
    ///   - hostname: The host connected to.
    ///   - port: The port.
    ///   - pinnedHost: The pin set applied.
    ///   - served: The served chain.
    ///   - validated: The validated chain, or the served one.
    ///   - result: The failure.
    public init(date: Int64, hostname: String, port: Int, pinnedHost: PinnedHost, served: [Certificate], validated: [Certificate], result: ValidationResult) {
        self.date = date
        self.hostname = hostname
        self.port = port
        self.notedHostname = pinnedHost.pattern.description
        self.includeSubdomains = pinnedHost.includesSubdomains
        self.enforcePinning = pinnedHost.enforcePinning
        self.servedCertificateChain = served.map(\.pemString)
        self.validatedCertificateChain = validated.map(\.pemString)
        self.knownPins = pinnedHost.pins.map(\.rfc7469)
        self.validationResult = result
        self.knownPinsExpirationDate = pinnedHost.expirationDate
    }

    /// The report as a JSON object.
    public var jsonObject: [String: Any] {
        var object: [String: Any] = [
            "date-time": ASN1TimeText.rfc3339(date),
            "hostname": hostname,
            "port": port,
            "noted-hostname": notedHostname,
            "include-subdomains": includeSubdomains,
            "enforce-pinning": enforcePinning,
            "served-certificate-chain": servedCertificateChain,
            "validated-certificate-chain": validatedCertificateChain,
            "known-pins": knownPins,
            "validation-result": validationResult.rawValue,
        ]
        if let knownPinsExpirationDate { object["known-pins-expiration-date"] = ASN1TimeText.rfc3339(knownPinsExpirationDate) }
        return object
    }

    /// The report as UTF-8 JSON with sorted keys (what a reporter POSTs as
    /// `application/json`).
    public var jsonBytes: [UInt8] {
        guard let data = try? JSONSerialization.data(withJSONObject: jsonObject, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return Array("{}".utf8)
        }
        return Array(data)
    }

    /// What makes two reports "identical" for rate limiting, as a SHA-256 in hex: what the
    /// app configured and where it connected (noted host name, host name, port, known pins,
    /// enforcement, validation result), never the certificates served. TrustKit's key also
    /// holds the chain, which the man in the middle being reported chooses: minting a new leaf
    /// per connection would make every report unique and let all of them through. One report
    /// per host and failure per interval tells the operator what happened; the chains of the
    /// reports that were held back add nothing an attacker could not vary at will.
    public var rateLimitKey: String {
        let text = [
            notedHostname, hostname, String(port), String(validationResult.rawValue), String(enforcePinning), String(includeSubdomains),
            knownPins.joined(separator: ","),
        ].joined(separator: "\n")
        return SHA256.hash(Array(text.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
