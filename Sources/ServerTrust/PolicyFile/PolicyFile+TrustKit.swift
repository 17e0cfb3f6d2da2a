import CertificateParsing
import Foundation
import TrustEvaluation

extension PolicyFile {
    /// TrustKit's default report URI, added unless `kTSKDisableDefaultReportUri` is set
    /// (TrustKit `TSKTrustKitConfig.h`).
    public static let trustKitDefaultReportURI = "https://overmind.datatheorem.com/trustkit/report"

    /// Imports a TrustKit configuration dictionary (`kTSK…` keys), for migration.
    ///
    /// Every pinned domain becomes an `spkiPins` entry with chain and host validation (TrustKit
    /// always re-evaluates with `SecPolicyCreateSSL(YES, hostname)`), and hosts without an
    /// entry get default validation, as TrustKit leaves them to the system
    /// (`allHostsMustBeEvaluated` is `false`). TrustKit's own validation rules apply
    /// (`parse_configuration.m`): `kTSKPinnedDomains` is required and not empty; each
    /// `kTSKPublicKeyHashes` entry is base64 of 32 bytes; at least 2 pins when enforcing
    /// (`kTSKEnforcePinning`, default YES) and 1 otherwise; a domain must not be a public
    /// suffix, nor carry `kTSKIncludeSubdomains` on one; `kTSKExcludeSubdomainFromParentPolicy`
    /// must be its entry's only key and needs a parent entry; `kTSKExpirationDate` is
    /// `yyyy-MM-dd`, UTC. `kTSKSwizzleNetworkDelegates`,
    /// `kTSKIgnorePinningForUserDefinedTrustAnchors` (macOS) and the deprecated
    /// `kTSKPublicKeyAlgorithms` are accepted and ignored.
    /// - Parameters:
    ///   - configuration: The dictionary (as from a plist or JSON).
    ///   - source: What decision records call the configuration.
    /// - Returns: The policy.
    /// - Throws: ``PolicyFileError`` listing every problem, at paths such as
    ///   `$.kTSKPinnedDomains["example.com"].kTSKPublicKeyHashes[0]`.
    public static func fromTrustKit(_ configuration: [String: Any], source: String = "TrustKit configuration") throws(PolicyFileError) -> TrustPolicy {
        var reader = ConfigReader()
        reader.allowOnly(configuration, ["kTSKSwizzleNetworkDelegates", "kTSKPinnedDomains", "kTSKIgnorePinningForUserDefinedTrustAnchors"], "$")
        _ = reader.bool(configuration, "kTSKSwizzleNetworkDelegates", "$")
        _ = reader.bool(configuration, "kTSKIgnorePinningForUserDefinedTrustAnchors", "$")
        var rules: [TrustPolicy.Rule] = []
        if let value = configuration["kTSKPinnedDomains"] {
            if let domains = reader.object(value, "$.kTSKPinnedDomains") {
                if domains.isEmpty { reader.fail(.invalidValue, "$.kTSKPinnedDomains", "no pinned domains") }
                for domain in domains.keys.sorted() {
                    let path = ConfigReader.path("$.kTSKPinnedDomains", domain)
                    if let pins = trustKitDomain(domain, domains[domain] as Any, path: path, all: domains, reader: &reader) {
                        // TrustKit always evaluates with SecPolicyCreateSSL(YES, hostname), then pins.
                        rules.append(
                            TrustPolicy.Rule(
                                pins.pattern,
                                HostTrustPolicy(
                                    evaluator: DefaultTrustEvaluator(validateHost: true), pins: pins, source: "\(source) \(path)")))
                    }
                }
            }
        } else {
            reader.fail(.missingKey, "$.kTSKPinnedDomains", "missing: the pinned domains")
        }
        guard reader.problems.isEmpty else { throw PolicyFileError(reader.problems) }
        // Hosts TrustKit does not pin are left to the system's default handling.
        return TrustPolicy(rules: rules, unmatched: HostTrustPolicy(source: "\(source): hosts without an entry"))
    }

    /// One `kTSKPinnedDomains` entry as its pin set (an exclusion as an excluded one).
    private static func trustKitDomain(
        _ domain: String, _ value: Any, path: String, all: [String: Any], reader: inout ConfigReader
    ) -> PinnedHost? {
        guard let entry = reader.object(value, path) else { return nil }
        reader.allowOnly(
            entry,
            [
                "kTSKPublicKeyHashes", "kTSKIncludeSubdomains", "kTSKExcludeSubdomainFromParentPolicy", "kTSKEnforcePinning", "kTSKReportUris",
                "kTSKDisableDefaultReportUri", "kTSKExpirationDate", "kTSKPublicKeyAlgorithms",
            ], path)
        let includeSubdomains = reader.bool(entry, "kTSKIncludeSubdomains", path) ?? false
        let pattern: HostPattern
        do {
            pattern = try HostPattern(domain, includeSubdomains: includeSubdomains)
        } catch {
            reader.fail(error, at: path)
            return nil
        }
        // TrustKit requires a registrable domain (GetRegistryLength > 0): a bare public
        // suffix such as "com" cannot be pinned.
        if pattern.kind == .exact, DNSName(pattern.base) != nil, DNSPattern("*." + pattern.base) == nil, IPAddress(pattern.base) == nil {
            reader.fail(.invalidHostPattern, path, "\(domain) is a public suffix, not a domain that can be pinned")
        }
        if reader.bool(entry, "kTSKExcludeSubdomainFromParentPolicy", path) == true {
            for key in entry.keys.sorted() where key != "kTSKExcludeSubdomainFromParentPolicy" {
                reader.fail(.conflictingOptions, ConfigReader.path(path, key), "kTSKExcludeSubdomainFromParentPolicy must be the only key of its entry")
            }
            let parent = all.contains { key, value in
                guard key != domain, let other = value as? [String: Any], other["kTSKIncludeSubdomains"] as? Bool == true,
                    let parentPattern = try? HostPattern(key, includeSubdomains: true)
                else { return false }
                return parentPattern.matches(domain)
            }
            if !parent { reader.fail(.excludeWithoutParent, path, "\(domain) is excluded, but no entry with kTSKIncludeSubdomains covers it") }
            return .excluded(pattern)
        }
        var pins: [SPKIPin] = []
        var pinCountKnown = true
        if let hashes = reader.strings(entry, "kTSKPublicKeyHashes", path) {
            for (text, pinPath) in hashes {
                guard let digest = Self.trustKitPinDigest(text), digest.count == 32, let pin = try? SPKIPin(algorithm: .sha256, digest: digest) else {
                    reader.fail(.invalidPin, pinPath, "not a valid sha256 pin: TrustKit hashes are base64 of a 32-byte SHA-256 SPKI digest")
                    pinCountKnown = false
                    continue
                }
                pins.append(pin)
            }
        } else {
            pinCountKnown = entry["kTSKPublicKeyHashes"] == nil
        }
        let enforce = reader.bool(entry, "kTSKEnforcePinning", path) ?? true
        if pinCountKnown {
            if pins.isEmpty {
                reader.fail(.noPins, path, "kTSKPublicKeyHashes must hold at least one pin")
            } else if enforce && PinnedHost(pattern: pattern, pins: pins).distinctPinCount < 2 {
                // The backup-pin rule of PinningConfiguration, which is TrustKit's own (a set of
                // at least two hashes when enforcing).
                reader.fail(
                    .missingBackupPin, "\(path).kTSKPublicKeyHashes",
                    "kTSKEnforcePinning needs at least 2 distinct pins, one a backup: with 1 a key change locks every client out (RFC 7469 §4.3)")
            }
        }
        var uris = reader.uris(entry, "kTSKReportUris", path) ?? []
        if reader.bool(entry, "kTSKDisableDefaultReportUri", path) != true { uris.append(trustKitDefaultReportURI) }
        var expiration: Int64?
        if let text = reader.string(entry, "kTSKExpirationDate", path) {
            // TrustKit parses "yyyy-MM-dd" in UTC; nothing else.
            if text.count == 10, let time = ASN1TimeText.parse(text) {
                expiration = time
            } else {
                reader.fail(.invalidDate, "\(path).kTSKExpirationDate", "\"\(text)\" is not yyyy-MM-dd")
            }
        }
        return PinnedHost(pattern: pattern, pins: pins, enforcePinning: enforce, expirationDate: expiration, reportURIs: uris)
    }

    /// A `kTSKPublicKeyHashes` string read as TrustKit reads it:
    /// `[[NSData alloc] initWithBase64EncodedString:pin options:0]` (parse_configuration.m).
    /// That decoder requires a length that is a multiple of 4 and nothing but the base64
    /// alphabet and trailing `=`, but it ignores the padding bits of the last digit, which
    /// RFC 4648 §3.5 wants zero; TrustKit's own tests pin `BBBB…BBB=`, whose last digit
    /// carries a stray bit. Such a pin reads here as TrustKit reads it (the stray bits
    /// dropped); everything else NSData refuses is refused. Only the TrustKit import is this
    /// lenient: ServerTrust's own pins (``SPKIPin``) stay canonical.
    static func trustKitPinDigest(_ text: String) -> [UInt8]? {
        if let strict = Base64.decode(Array(text.utf8)) { return strict }
        var bytes = Array(text.utf8)
        let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        guard bytes.count % 4 == 0, (1...2).contains(padding),
            bytes.dropLast(padding).allSatisfy({ alphabet.contains($0) }),
            let last = alphabet.firstIndex(of: bytes[bytes.count - padding - 1])
        else { return nil }
        // One `=`: the last digit's low 2 bits are padding; two: its low 4.
        let kept = last & (padding == 1 ? 0b111100 : 0b110000)
        bytes[bytes.count - padding - 1] = alphabet[kept]
        return Base64.decode(bytes)
    }
}
