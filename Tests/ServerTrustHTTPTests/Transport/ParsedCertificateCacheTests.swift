import CertificateParsing
import ServerTrustLab
import Testing

@testable import ServerTrustHTTP

/// The transport parses each distinct served certificate once: a certificate comes back for
/// exactly the bytes it was parsed from, so a peer changing any byte (its signature, its key)
/// gets a parse of its own bytes, and bytes that do not parse fail every time.
@Suite("served certificates parsed once per distinct DER")
struct ParsedCertificateCacheTests {
    /// A chain generated at a fixed time (keys from slot 40, shared read-only with other tests).
    static func chain() throws -> LabPKI {
        try LabPKI.webChain(host: "www.example.test", leafNotBefore: 1_800_000_000, leafNotAfter: 1_802_000_000, keySlot: 40)
    }

    @Test("the same bytes give the certificate parsed before; one changed byte anywhere is parsed anew")
    func exactBytes() throws {
        let pki = try Self.chain()
        let cache = ParsedCertificateCache()
        let der = pki.leaf.der
        let first = try cache.certificate(der)
        #expect(first == (try Certificate(derEncoded: der)))
        #expect(try cache.certificate(der) == first)
        #expect(cache.count == 1)
        // The attacker's copy of the genuine leaf with another signature (last byte), or another
        // key (a byte inside the SPKI): never the cached parse of the genuine bytes.
        var resigned = der
        resigned[resigned.count - 1] ^= 0x01
        let other = try cache.certificate(resigned)
        #expect(other.signature != first.signature)
        #expect(other == (try Certificate(derEncoded: resigned)))
        let spki = try #require(first.subjectPublicKeyInfo.derBytes.indices.last)
        var rekeyed = der
        rekeyed[spki] ^= 0x01
        let rekeyedParse = try cache.certificate(rekeyed)
        #expect(rekeyedParse.subjectPublicKeyInfo.derBytes.elementsEqual(first.subjectPublicKeyInfo.derBytes) == false)
        #expect(cache.count == 3)
    }

    @Test("bytes that do not parse fail on every call and are not held")
    func malformed() throws {
        let cache = ParsedCertificateCache()
        let truncated = Array(try Self.chain().intermediate.der.dropLast())
        for _ in 0..<2 {
            #expect(throws: DERError.self) { try cache.certificate(truncated) }
        }
        #expect(cache.count == 0)
    }

    @Test("reaching the capacity empties the cache: memory stays bounded whatever a peer sends")
    func bounded() throws {
        let cache = ParsedCertificateCache()
        var der = try Self.chain().leaf.der
        for index in 0..<(ParsedCertificateCache.capacity + 1) {
            der[der.count - 1] = UInt8(truncatingIfNeeded: index)
            der[der.count - 2] = UInt8(truncatingIfNeeded: index >> 8)
            _ = try cache.certificate(der)
        }
        #expect(cache.count == 1)
    }
}
