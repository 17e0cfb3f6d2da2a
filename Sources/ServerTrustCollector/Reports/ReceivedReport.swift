package import CertificateParsing
package import ServerTrust

/// A pin-failure report that passed ``ReportReader``: every field checked, every certificate
/// parsed by CertificateParsing's strict DER reader, unknown members set aside.
///
/// Both senders' shapes are read: ServerTrust's `PinFailureReport` (`date-time`, `hostname`,
/// `port`, `noted-hostname`, `include-subdomains`, `enforce-pinning`,
/// `served-certificate-chain`, `validated-certificate-chain`, `known-pins`,
/// `validation-result`, `known-pins-expiration-date`) and TrustKit's `TSKPinFailureReport`,
/// which adds `app-bundle-id`, `app-version`, `app-vendor-id`, `app-platform`,
/// `app-platform-version` and `trustkit-version`.
package struct ReceivedReport: Sendable {
    /// The app that sent it (TrustKit's fields; all `nil` in ServerTrust's reports).
    package struct App: Sendable, Hashable {
        package var bundleID: String?
        package var version: String?
        /// `identifierForVendor`: one per device and vendor, so it counts devices.
        package var vendorID: String?
        package var platform: String?
        package var platformVersion: String?
        /// `trustkit-version`.
        package var reporterVersion: String?

        package init(
            bundleID: String? = nil, version: String? = nil, vendorID: String? = nil, platform: String? = nil, platformVersion: String? = nil,
            reporterVersion: String? = nil
        ) {
            self.bundleID = bundleID
            self.version = version
            self.vendorID = vendorID
            self.platform = platform
            self.platformVersion = platformVersion
            self.reporterVersion = reporterVersion
        }
    }

    /// When the failure happened (`date-time`), seconds since 1970, if sent.
    package var reportedAt: Int64?
    /// The host the app connected to, lowercased.
    package var hostname: String
    /// The port.
    package var port: Int
    /// The pin set's pattern (`noted-hostname`).
    package var notedHostname: String
    /// `include-subdomains`, if sent.
    package var includeSubdomains: Bool?
    /// `enforce-pinning`, if sent (`false`: report-only).
    package var enforcePinning: Bool?
    /// `validated-certificate-chain`, leaf first.
    package var validatedChain: [Certificate] {
        didSet { chainFingerprint = Self.fingerprint(validatedChain) }
    }
    /// `served-certificate-chain` (ServerTrust's addition), if sent.
    package var servedChain: [Certificate]?
    /// `known-pins`.
    package var knownPins: [SPKIPin]
    /// `validation-result` (TrustKit's `TSKTrustEvaluationResult`, ServerTrust's additions).
    package var validationResult: Int
    /// `known-pins-expiration-date`, seconds since 1970, if sent.
    package var knownPinsExpiration: Int64?
    /// The app fields.
    package var app: App
    /// Members this collector does not know, as compact ASCII JSON (`{}` when none): kept for
    /// the record, never read.
    package var unknownFields: String

    /// SHA-256 in hex over the SHA-256 of each certificate of the validated chain, in order:
    /// the identity of a distinct failing chain (derived from ``validatedChain``, computed when
    /// it is set).
    package private(set) var chainFingerprint: String

    package init(
        reportedAt: Int64?, hostname: String, port: Int, notedHostname: String, includeSubdomains: Bool?, enforcePinning: Bool?,
        validatedChain: [Certificate], servedChain: [Certificate]?, knownPins: [SPKIPin], validationResult: Int, knownPinsExpiration: Int64?,
        app: App, unknownFields: String
    ) {
        self.reportedAt = reportedAt
        self.hostname = hostname
        self.port = port
        self.notedHostname = notedHostname
        self.includeSubdomains = includeSubdomains
        self.enforcePinning = enforcePinning
        self.validatedChain = validatedChain
        self.servedChain = servedChain
        self.knownPins = knownPins
        self.validationResult = validationResult
        self.knownPinsExpiration = knownPinsExpiration
        self.app = app
        self.unknownFields = unknownFields
        self.chainFingerprint = Self.fingerprint(validatedChain)
    }

    /// The fingerprint of a chain (see ``chainFingerprint``).
    package static func fingerprint(_ chain: [Certificate]) -> String {
        Hex.encode(SHA256.hash(chain.flatMap(\.sha256Fingerprint)))
    }

    /// What makes two reports the same failure for deduplication: the app (bundle, version,
    /// device), the connection (host, port, pin set), the chain, the pins and the result, as
    /// SHA-256 in hex. The date is not part of it: a device retrying, or the same failure
    /// again within the window, is counted, not stored twice.
    package var deduplicationKey: String {
        let fields: [String] = [
            app.bundleID ?? "", app.version ?? "", app.vendorID ?? "", hostname, String(port), notedHostname, chainFingerprint,
            knownPins.map(\.rfc7469).joined(separator: ","), String(validationResult),
        ]
        return Hex.encode(SHA256.hash(Array(fields.joined(separator: "\u{0}").utf8)))
    }

    /// The name of a `validation-result` value.
    package static func validationResultName(_ value: Int) -> String {
        switch value {
        case 0: return "success"
        case 1: return "no matching pin"
        case 2: return "invalid certificate chain"
        case 3: return "invalid parameters"
        case 4: return "user-defined trust anchor"
        case 5: return "could not generate SPKI hash"
        case 6: return "negative pin matched"
        default: return "result \(value)"
        }
    }
}
