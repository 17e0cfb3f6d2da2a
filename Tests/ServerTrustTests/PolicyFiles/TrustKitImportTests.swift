import CertificateParsing
import Foundation
import ServerTrust
import Testing

@Suite("TrustKit configuration import")
struct TrustKitImportTests {
    let f = PolicyFixtures.shared
    var rootHash: String { f.root.spkiSHA256Base64 }
    var backupHash: String { Base64.encode(f.backupPin.digest) }

    @Test("a TrustKit dictionary becomes pinned hosts with TrustKit's defaults")
    func mapping() throws {
        let policy = try PolicyFile.fromTrustKit([
            "kTSKSwizzleNetworkDelegates": true,
            "kTSKPinnedDomains": [
                "example.test": [
                    "kTSKIncludeSubdomains": true,
                    "kTSKPublicKeyHashes": [rootHash, backupHash],
                    "kTSKReportUris": ["https://reports.example.test/trustkit"],
                    "kTSKExpirationDate": "2027-06-30",
                    "kTSKPublicKeyAlgorithms": ["kTSKAlgorithmRsa2048"],
                ] as [String: Any],
                "legacy.example.test": ["kTSKExcludeSubdomainFromParentPolicy": true],
                "api.example.org": [
                    "kTSKEnforcePinning": false, "kTSKPublicKeyHashes": [rootHash], "kTSKDisableDefaultReportUri": true,
                ] as [String: Any],
            ] as [String: Any],
        ])
        #expect(!policy.allHostsMustBeEvaluated)
        let pinning = policy.pinning
        let example = try #require(pinning.pinnedHost(for: "deep.api.example.test"))
        #expect(example.pattern.description == "**.example.test")
        #expect(example.enforcePinning)
        #expect(example.pins.map(\.description) == ["sha256/" + rootHash, "sha256/" + backupHash])
        #expect(example.reportURIs == ["https://reports.example.test/trustkit", PolicyFile.trustKitDefaultReportURI])
        #expect(example.expirationDate == 1_814_313_600)
        #expect(pinning.pinnedHost(for: "legacy.example.test")?.isExcluded == true)
        let org = try #require(pinning.pinnedHost(for: "api.example.org"))
        #expect(!org.enforcePinning && org.reportURIs.isEmpty)

        let manager = policy
        #expect(manager.decide(f.trust(f.validChain), forHost: PolicyFixtures.host).isTrusted)
        #expect(manager.decide(f.trust(f.validChain, host: "legacy.example.test"), forHost: "legacy.example.test").failure?.kind == .hostValidationFailed)
        #expect(manager.decide(f.trust(f.interceptedChain), forHost: PolicyFixtures.host).failure?.kind == .spkiPinningFailed)
        #expect(manager.decide(f.trust(f.validChain, host: "unlisted.example.net"), forHost: "unlisted.example.net").failure?.kind == .hostValidationFailed)
    }

    /// TrustKit's own tests pin "BBBB…BBB=": its last digit carries a stray padding bit, which
    /// NSData's decoder (TrustKit reads pins with `initWithBase64EncodedString:options:0`)
    /// ignores. The import reads it so; what NSData refuses stays refused.
    @Test(
        "a TrustKit pin with stray padding bits reads as TrustKit reads it; what NSData refuses is refused",
        arguments: [
            ("BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=", "sha256/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA=" as String?),
            ("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="),
            ("BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", nil),  // unpadded: NSData wants a multiple of 4
            ("BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB-=", nil),  // outside the alphabet
            ("BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB==", nil),  // 31 bytes
        ])
    func strayPaddingBits(_ text: String, _ expected: String?) throws {
        let configuration: [String: Any] = [
            "kTSKPinnedDomains": ["example.test": ["kTSKPublicKeyHashes": [text, backupHash]] as [String: Any]]
        ]
        guard let expected else {
            let error = #expect(throws: PolicyFileError.self, "\(text)") { try PolicyFile.fromTrustKit(configuration) }
            #expect(error?.problems.first?.kind == .invalidPin, "\(text): \(String(describing: error))")
            return
        }
        let pins = try PolicyFile.fromTrustKit(configuration).pinning.pinnedHost(for: "example.test")?.pins.map(\.description)
        #expect(pins == [expected, "sha256/" + backupHash], "\(text)")
        // ServerTrust's own pin syntax stays canonical.
        if expected != "sha256/" + text { #expect(throws: PolicyConfigurationError.self) { try SPKIPin("sha256/" + text) } }
    }

    @Test("a JSON file with kTSKPinnedDomains loads as TrustKit")
    func jsonFile() throws {
        let json = #"{"kTSKPinnedDomains": {"example.test": {"kTSKPublicKeyHashes": ["\#(rootHash)", "\#(backupHash)"]}}}"#
        let policy = try PolicyFile.parse(Array(json.utf8))
        #expect(policy.pinning.pinnedHost(for: "example.test")?.pins.count == 2)
    }

    @Test("TrustKit's validation rules, one error per problem with its path")
    func errors() {
        let error = #expect(throws: PolicyFileError.self) {
            try PolicyFile.fromTrustKit([
                "kTSKBogus": 1,
                "kTSKPinnedDomains": [
                    "one.example.test": ["kTSKPublicKeyHashes": [rootHash]],
                    "twice.example.test": ["kTSKPublicKeyHashes": [rootHash, rootHash]],
                    "bad.example.test": ["kTSKPublicKeyHashes": ["sha256/" + rootHash, "AAAA"], "kTSKEnforcePinning": false] as [String: Any],
                    "com": ["kTSKPublicKeyHashes": [rootHash, backupHash]],
                    "orphan.example.org": ["kTSKExcludeSubdomainFromParentPolicy": true],
                    "mixed.example.test": ["kTSKExcludeSubdomainFromParentPolicy": true, "kTSKEnforcePinning": true] as [String: Any],
                    "date.example.test": ["kTSKPublicKeyHashes": [rootHash, backupHash], "kTSKExpirationDate": "30/06/2027"] as [String: Any],
                    "none.example.test": ["kTSKPublicKeyHashes": [String]()],
                    "uri.example.test": ["kTSKPublicKeyHashes": [rootHash, backupHash], "kTSKReportUris": ["ftp://x"]] as [String: Any],
                    "type.example.test": ["kTSKPublicKeyHashes": [rootHash, backupHash], "kTSKIncludeSubdomains": "yes"] as [String: Any],
                ] as [String: Any],
            ])
        }
        let problems = error?.problems.map { "\($0.kind.rawValue) \($0.path)" } ?? []
        #expect(problems.contains("unknownKey $.kTSKBogus"))
        #expect(problems.contains("invalidPin $.kTSKPinnedDomains[\"bad.example.test\"].kTSKPublicKeyHashes[0]"))
        #expect(problems.contains("invalidPin $.kTSKPinnedDomains[\"bad.example.test\"].kTSKPublicKeyHashes[1]"))
        #expect(problems.contains("invalidHostPattern $.kTSKPinnedDomains.com"))
        #expect(problems.contains("missingBackupPin $.kTSKPinnedDomains[\"one.example.test\"].kTSKPublicKeyHashes"))
        #expect(problems.contains("missingBackupPin $.kTSKPinnedDomains[\"twice.example.test\"].kTSKPublicKeyHashes"), "the same hash twice is one pin")
        #expect(problems.contains("excludeWithoutParent $.kTSKPinnedDomains[\"orphan.example.org\"]"))
        #expect(problems.contains("conflictingOptions $.kTSKPinnedDomains[\"mixed.example.test\"].kTSKEnforcePinning"))
        #expect(problems.contains("invalidDate $.kTSKPinnedDomains[\"date.example.test\"].kTSKExpirationDate"))
        #expect(problems.contains("noPins $.kTSKPinnedDomains[\"none.example.test\"]"))
        #expect(problems.contains("invalidValue $.kTSKPinnedDomains[\"uri.example.test\"].kTSKReportUris[0]"))
        #expect(problems.contains("wrongType $.kTSKPinnedDomains[\"type.example.test\"].kTSKIncludeSubdomains"))
        #expect(problems.count == 13, "\(problems)")
    }

    @Test("kTSKPinnedDomains is required and must not be empty")
    func required() {
        #expect((#expect(throws: PolicyFileError.self) { try PolicyFile.fromTrustKit([:]) })?.problems.map(\.kind) == [.missingKey])
        #expect(
            (#expect(throws: PolicyFileError.self) { try PolicyFile.fromTrustKit(["kTSKPinnedDomains": [String: Any]()]) })?.problems.map(\.kind) == [
                .invalidValue
            ])
    }
}
