import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustCollector
import ServerTrustLab
import Testing

/// The collector's reader of untrusted report bodies: both senders' shapes in, everything
/// malformed out with the member named.
@Suite("collector: reading reports as untrusted input")
struct ReportReaderTests {
    static let pki: LabPKI? = try? Lab.pki(host: "api.collector.test", keySlot: 80)

    static func chain() throws -> LabPKI { try #require(pki) }

    @Test("ServerTrust's own PinFailureReport is read back field for field")
    func serverTrustShape() throws {
        let pki = try Self.chain()
        let pinned = PinnedHost(
            pattern: try HostPattern("**.collector.test"),
            pins: [
                try SPKIPin(algorithm: .sha256, digest: Array(repeating: 7, count: 32)),
                try SPKIPin(algorithm: .sha384, digest: Array(repeating: 9, count: 48)),
            ],
            enforcePinning: false, reportURIs: [])
        let sent = PinFailureReport(
            date: 1_767_225_600, hostname: "API.collector.test", port: 8443, pinnedHost: pinned, served: [try Lab.certificate(pki.leaf)],
            validated: try [pki.leaf, pki.intermediate, pki.root].map(Lab.certificate), result: .failedNoMatchingPin)
        let report = try ReportReader().read(sent.jsonBytes)
        #expect(report.hostname == "api.collector.test" && report.port == 8443 && report.notedHostname == "**.collector.test")
        #expect(report.reportedAt == 1_767_225_600 && report.enforcePinning == false && report.includeSubdomains == true)
        #expect(report.validatedChain == (try [pki.leaf, pki.intermediate, pki.root].map(Lab.certificate)))
        #expect(report.servedChain == [try Lab.certificate(pki.leaf)])
        #expect(report.knownPins == pinned.pins && report.validationResult == 1)
        #expect(report.app == ReceivedReport.App() && report.unknownFields == "{}")
    }

    @Test("TrustKit's shape: the app fields are read, unknown members kept as inert ASCII JSON")
    func trustKitShape() throws {
        let pki = try Self.chain()
        let body = try ReportBodies.trustKit(
            chain: [pki.leaf, pki.intermediate], vendor: "5E2A-1", version: "2.4.1 (311)",
            extra: ["x-custom": ["<b>": "</script>&"], "known-pins-expiration-date": "2027-01-01"])
        let report = try ReportReader().read(body)
        #expect(report.app.bundleID == "com.example.app" && report.app.version == "2.4.1 (311)" && report.app.vendorID == "5E2A-1")
        #expect(report.app.platform == "IOS" && report.app.platformVersion == "17.4" && report.app.reporterVersion == "3.0.4")
        #expect(report.knownPinsExpiration == 1_798_761_600)
        #expect(report.unknownFields == #"{"x-custom":{"\u003cb\u003e":"\u003c/script\u003e\u0026"}}"#)
        #expect(!report.unknownFields.contains("<") && !report.unknownFields.contains(">"))
    }

    static let refusals: [(name: String, body: String, path: String)] = [
        ("not JSON", "hello", "$"),
        ("an array", "[]", "$"),
        ("trailing data", #"{"hostname":"a.test"} {}"#, "$"),
        ("nested too deep", String(repeating: "[", count: 40) + String(repeating: "]", count: 40), "$"),
        ("a repeated member", #"{"hostname":"a.test","hostname":"b.test"}"#, "$"),
        ("invalid UTF-8", "{\"hostname\":\"\u{FFFD}\"}", "$"),
        ("an unpaired surrogate", #"{"hostname":"\ud800"}"#, "$"),
        ("no hostname", #"{"port":443}"#, #"$["hostname"]"#),
    ]

    @Test("what is not a JSON object, or is ambiguous, is refused at the document", arguments: refusals)
    func documentRefusals(_ entry: (name: String, body: String, path: String)) {
        var bytes = Array(entry.body.utf8)
        if entry.name == "invalid UTF-8" { bytes = Array(#"{"hostname":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8) }
        #expect(throws: ReportError.self, "\(entry.name)") { try ReportReader().read(bytes) }
        do {
            _ = try ReportReader().read(bytes)
        } catch {
            #expect(error.path == entry.path, "\(entry.name): \(error)")
        }
    }

    /// A valid TrustKit report with one member replaced.
    static func replacing(_ name: String, with value: Any) throws -> [UInt8] {
        let pki = try chain()
        return try ReportBodies.trustKit(chain: [pki.leaf, pki.intermediate], extra: [name: value])
    }

    static let fieldRefusals: [(name: String, value: String, why: String)] = [
        ("hostname", "<script>alert(1)</script>", "markup in the host"),
        ("hostname", "api.example.test\r\nX-Injected: 1", "CR/LF in the host"),
        ("hostname", "", "an empty host"),
        ("hostname", String(repeating: "a", count: 254), "a host over 253 characters"),
        ("noted-hostname", "\"><img src=x>", "markup in the pattern"),
        ("app-version", "1.0\r\n2026-01-01 forged log line", "CR/LF in a free-text field"),
        ("app-bundle-id", "com.example\u{1B}[31m", "a terminal escape"),
        ("app-vendor-id", "abc\u{202E}fed", "a bidirectional override"),
        ("app-platform", "x\u{2028}y", "a line separator"),
        ("trustkit-version", String(repeating: "9", count: 201), "a field over 200 characters"),
        ("date-time", "yesterday", "a date that is no RFC 3339"),
    ]

    @Test("a text field with markup where markup cannot be, a line break, an escape or an override is refused, naming the member", arguments: fieldRefusals)
    func fieldRefusal(_ entry: (name: String, value: String, why: String)) throws {
        let body = try Self.replacing(entry.name, with: entry.value)
        do {
            _ = try ReportReader().read(body)
            Issue.record("\(entry.why) was accepted")
        } catch {
            #expect(error.path == "$[\"\(entry.name)\"]", "\(entry.why): \(error)")
            #expect(!error.description.contains("\r") && !error.description.contains("\n") && !error.description.contains("<script"), "\(error)")
        }
    }

    @Test("markup in the app's free-text fields is kept as data (escaped wherever it is shown)")
    func markupStoredInert() throws {
        let pki = try Self.chain()
        let markup = "<img src=x onerror=alert(1)>\"'&"
        let body = try ReportBodies.trustKit(chain: [pki.leaf, pki.intermediate], vendor: markup, bundle: markup, version: markup)
        let report = try ReportReader().read(body)
        #expect(report.app.bundleID == markup && report.app.version == markup && report.app.vendorID == markup)
    }

    @Test("types, ranges, pins and certificates are checked member by member")
    func typedRefusals() throws {
        let pki = try Self.chain()
        let cases: [(String, Any, String)] = [
            ("port", 70_000, #"$["port"]"#),
            ("port", "443; DROP TABLE reports", #"$["port"]"#),
            ("validation-result", "one", #"$["validation-result"]"#),
            ("include-subdomains", "yes", #"$["include-subdomains"]"#),
            ("known-pins", ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="], #"$["known-pins"][0]"#),
            ("known-pins", ["pin-sha256=\"AAAA\""], #"$["known-pins"][0]"#),
            ("known-pins", "pin-sha256", #"$["known-pins"]"#),
            ("validated-certificate-chain", [String](), #"$["validated-certificate-chain"]"#),
            ("validated-certificate-chain", Array(repeating: pki.leaf.pem, count: 11), #"$["validated-certificate-chain"]"#),
            ("validated-certificate-chain", [pki.leaf.pem, 42], #"$["validated-certificate-chain"][1]"#),
            ("validated-certificate-chain", [pki.leaf.pem + pki.intermediate.pem], #"$["validated-certificate-chain"][0]"#),
            ("served-certificate-chain", ["-----BEGIN <script>-----\nAAAA\n-----END <script>-----\n"], #"$["served-certificate-chain"][0]"#),
        ]
        for (name, value, path) in cases {
            let body = try Self.replacing(name, with: value)
            do {
                _ = try ReportReader().read(body)
                Issue.record("\(name) = \(value) was accepted")
            } catch {
                #expect(error.path == path, "\(name): \(error)")
            }
        }
    }

    @Test("a certificate that our strict DER reader refuses (a flipped length byte, a truncated body, trailing bytes) refuses the report")
    func brokenCertificates() throws {
        let pki = try Self.chain()
        var flipped = pki.leaf.der
        flipped[1] ^= 0x01
        let truncated = Array(pki.leaf.der.dropLast(10))
        let trailing = pki.leaf.der + [0x00]
        for (index, der) in [flipped, truncated, trailing].enumerated() {
            let pem = PEMDocument(label: "CERTIFICATE", derBytes: der).pemString
            let body = try Self.replacing("validated-certificate-chain", with: [pem, pki.intermediate.pem])
            do {
                _ = try ReportReader().read(body)
                Issue.record("broken certificate \(index) accepted")
            } catch {
                #expect(error.path == #"$["validated-certificate-chain"][0]"#, "\(error)")
                #expect(error.reason.hasPrefix("not a certificate"), "\(error)")
            }
        }
    }

    @Test(
        "one host however it is spelt (case, one trailing dot): the same stored name and the same deduplication key",
        arguments: ["api.collector.test", "API.Collector.Test", "api.collector.test.", "API.COLLECTOR.TEST."])
    func hostSpellings(_ spelling: String) throws {
        let pki = try Self.chain()
        let body = try ReportBodies.trustKit(chain: [pki.leaf, pki.intermediate], host: spelling)
        let report = try ReportReader().read(body)
        let canonical = try ReportReader().read(try ReportBodies.trustKit(chain: [pki.leaf, pki.intermediate], host: "api.collector.test"))
        #expect(report.hostname == "api.collector.test")
        #expect(report.deduplicationKey == canonical.deduplicationKey)
        #expect(try Collector.filter(["host": spelling]).host == "api.collector.test")
    }

    @Test("the deduplication key ignores the date and follows the app, device, host, chain and pins")
    func deduplicationKey() throws {
        let pki = try Self.chain()
        func key(_ extra: [String: Any] = [:], vendor: String = "v1") throws -> String {
            try ReportReader().read(try ReportBodies.trustKit(chain: [pki.leaf, pki.intermediate], vendor: vendor, extra: extra)).deduplicationKey
        }
        let base = try key()
        #expect(try key(["date-time": "2027-05-05T00:00:00Z"]) == base)
        #expect(try key(vendor: "v2") != base)
        #expect(try key(["hostname": "other.collector.test"]) != base)
        #expect(try key(["validated-certificate-chain": [pki.leaf.pem]]) != base)
        #expect(try key(["known-pins": [String]()]) != base)
    }
}
