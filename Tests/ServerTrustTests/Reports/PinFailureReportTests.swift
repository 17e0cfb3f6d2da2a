import CertificateParsing
import Foundation
import ServerTrust
import Testing

@Suite("Pin failure reports (TrustKit / RFC 7469 JSON)")
struct PinFailureReportTests {
    let f = PolicyFixtures.shared

    func report(result: PinFailureReport.ValidationResult = .failedNoMatchingPin, port: Int = 443, chain: [Certificate]? = nil) throws -> PinFailureReport {
        var host = PinnedHost(
            pattern: try HostPattern("**.example.test"), pins: [SPKIPin(certificate: f.root), f.backupPin], enforcePinning: false,
            expirationDate: PolicyFixtures.now + 86_400, reportURIs: ["https://reports.example.test/pins"])
        host.requiresBackupPin = true
        return PinFailureReport(
            date: PolicyFixtures.now, hostname: PolicyFixtures.host, port: port, pinnedHost: host, served: chain ?? f.validChain,
            validated: (chain ?? f.validChain) + [f.root], result: result)
    }

    @Test("the JSON has TrustKit's keys and values")
    func json() throws {
        let bytes = try report().jsonBytes
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "date-time", "hostname", "port", "noted-hostname", "include-subdomains", "enforce-pinning", "served-certificate-chain",
                "validated-certificate-chain", "known-pins", "validation-result", "known-pins-expiration-date",
            ])
        #expect(object["date-time"] as? String == "2026-01-01T00:00:00Z")
        #expect(object["hostname"] as? String == PolicyFixtures.host)
        #expect(object["port"] as? Int == 443)
        #expect(object["noted-hostname"] as? String == "**.example.test")
        #expect(object["include-subdomains"] as? Bool == true)
        #expect(object["enforce-pinning"] as? Bool == false)
        #expect(object["validation-result"] as? Int == 1)
        #expect(object["known-pins-expiration-date"] as? String == "2026-01-02T00:00:00Z")
        #expect(object["known-pins"] as? [String] == ["pin-sha256=\"\(f.root.spkiSHA256Base64)\"", f.backupPin.rfc7469])
        let served = try #require(object["served-certificate-chain"] as? [String])
        #expect(served.count == 2)
        #expect(try served.map { try Certificate(pemEncoded: $0) } == f.validChain)
        #expect((object["validated-certificate-chain"] as? [String])?.count == 3)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("{\"date-time\":"), "keys are sorted")
    }

    @Test("the rate-limit key ignores the date and the served chain (the attacker's to vary), and changes with anything else")
    func rateLimitKey() throws {
        let base = try report()
        let later = PinFailureReport(
            date: base.date + 10, hostname: base.hostname, port: base.port,
            pinnedHost: PinnedHost(pattern: try HostPattern("**.example.test"), pins: [SPKIPin(certificate: f.root), f.backupPin], enforcePinning: false),
            served: f.validChain, validated: f.validChain + [f.root], result: .failedNoMatchingPin)
        #expect(later.rateLimitKey == base.rateLimitKey)
        #expect(try report(port: 8443).rateLimitKey != base.rateLimitKey)
        #expect(try report(result: .failedInvalidCertificateChain).rateLimitKey != base.rateLimitKey)
        #expect(try report(chain: f.otherHostChain).rateLimitKey == base.rateLimitKey)
        let otherPins = PinFailureReport(
            date: base.date, hostname: base.hostname, port: base.port,
            pinnedHost: PinnedHost(
                pattern: try HostPattern("**.example.test"), pins: [SPKIPin(certificate: f.intermediate), f.backupPin], enforcePinning: false),
            served: f.validChain, validated: f.validChain + [f.root], result: .failedNoMatchingPin)
        #expect(otherPins.rateLimitKey != base.rateLimitKey)
    }
}
