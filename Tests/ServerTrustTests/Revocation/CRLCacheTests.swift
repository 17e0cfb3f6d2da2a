import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustLab
import Testing
import TrustEvaluation

/// The CRL cache: fresh until the CRL's nextUpdate plus skew and at most a day after the last
/// confirmation, revalidated after (a 304 counts), kept on disk crash-safely under names derived
/// from a hash of the URL, bounded in memory and on disk, and never trusting a file it cannot
/// read back exactly.
@Suite("CRL cache")
struct CRLCacheTests {
    static let now = LabClock.reference
    static let url = "http://crl.example/issuing.crl"

    static func crl(number: Int = 1, thisUpdate: Int64 = now - 3600, nextUpdate: Int64? = now + 2 * 86_400, entries: Int = 0) throws
        -> CertificateRevocationList
    {
        let pki = try LabPKI.webChain(host: "cache.example", keySlot: 136)
        let revoked = (0..<entries).map { LabRevokedEntry(serial: [0x10, UInt8($0 & 0xFF), UInt8($0 >> 8)]) }
        let spec = LabCRLSpec(entries: revoked, thisUpdate: thisUpdate, nextUpdate: nextUpdate, number: number)
        return try CertificateRevocationList(derEncoded: LabCRL.issue(spec, signer: pki.intermediateIssuer))
    }

    static func directory() -> String { NSTemporaryDirectory() + "servertrust-crl-cache-" + UUID().uuidString }

    @Test("in memory: fresh until nextUpdate plus the skew, then stale; a 304 makes it fresh again")
    func memoryFreshness() throws {
        let cache = try CRLCache()
        let crl = try Self.crl(nextUpdate: Self.now + 3600)
        #expect(cache.entry(for: Self.url) == nil)
        let stored = cache.store(crl, url: Self.url, etag: "\"v1\"", lastModified: "Thu, 01 Jan 2026 00:00:00 GMT", at: Self.now)
        #expect(cache.entry(for: Self.url) == stored)
        #expect(cache.freshUntil(stored) == Self.now + 3600 + 300)
        #expect(cache.isFresh(stored, at: Self.now + 3600 + 300))
        #expect(!cache.isFresh(stored, at: Self.now + 3600 + 301))
        // Revalidated after its window ended: a 304 confirms it for the recheck interval.
        let confirmed = try #require(cache.revalidated(Self.url, at: Self.now + 7200))
        #expect(confirmed.etag == "\"v1\"" && confirmed.lastModified == "Thu, 01 Jan 2026 00:00:00 GMT")
        #expect(confirmed.fetchedAt == Self.now && confirmed.validatedAt == Self.now + 7200)
        #expect(cache.isFresh(confirmed, at: Self.now + 7200 + 300))
        #expect(!cache.isFresh(confirmed, at: Self.now + 7200 + 301))
    }

    @Test("a long window is revalidated at most a day after the last confirmation")
    func maximumAge() throws {
        let cache = try CRLCache()
        let stored = cache.store(try Self.crl(nextUpdate: Self.now + 10 * 86_400), url: Self.url, etag: nil, lastModified: nil, at: Self.now)
        #expect(cache.freshUntil(stored) == Self.now + 86_400)
        let confirmed = try #require(cache.revalidated(Self.url, at: Self.now + 86_401))
        #expect(cache.freshUntil(confirmed) == Self.now + 2 * 86_400 + 1)
    }

    @Test("an entry stored in the future (a clock that went back) is not fresh")
    func clockWentBack() throws {
        let cache = try CRLCache()
        let stored = cache.store(try Self.crl(), url: Self.url, etag: nil, lastModified: nil, at: Self.now + 86_400)
        #expect(!cache.isFresh(stored, at: Self.now))
    }

    @Test("on disk: a new cache on the same folder reads the entry back, validators and times included; names are hashes, modes 0600 and 0700")
    func disk() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let crl = try Self.crl()
        let url = "http://crl.example/../../etc/passwd?x=\n"
        try CRLCache(directory: directory).store(crl, url: url, etag: "W/\"abc\"", lastModified: "Thu, 01 Jan 2026 00:00:00 GMT", at: Self.now)
        let reopened = try CRLCache(directory: directory)
        let entry = try #require(reopened.entry(for: url))
        #expect(entry.crl == crl && entry.etag == "W/\"abc\"" && entry.lastModified == "Thu, 01 Jan 2026 00:00:00 GMT")
        #expect(entry.fetchedAt == Self.now && entry.validatedAt == Self.now)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(names == [Hex.encode(SHA256.hash(Array(url.utf8))) + ".crl"])
        #expect((try FileManager.default.attributesOfItem(atPath: directory + "/" + names[0])[.posixPermissions] as? Int) == 0o600)
        #expect((try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int) == 0o700)
        #expect(reopened.entry(for: "http://crl.example/other.crl") == nil)
    }

    @Test("a crash before the rename leaves the old entry; the temporary file is removed when the cache opens")
    func crashBeforeRename() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let old = try Self.crl(number: 1)
        try CRLCache(directory: directory).store(old, url: Self.url, etag: "\"1\"", lastModified: nil, at: Self.now)
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: directory).first)
        // What a write of CRL 2 leaves when the process dies after writing half the temporary file.
        let torn =
            Array("servertrust-crl-cache 1\nurl \(Base64.encode(Array(Self.url.utf8)))\netag \"2\"\n".utf8)
            + Array(try Self.crl(number: 2).derBytes.prefix(100))
        try Data(torn).write(to: URL(fileURLWithPath: "\(directory)/\(file).tmp-4242-99"))
        let reopened = try CRLCache(directory: directory)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [file])
        #expect(reopened.entry(for: Self.url)?.crl.number == old.number)
    }

    /// Files that are not what the cache wrote for the URL asked for.
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case truncated = "the DER cut short"
        case garbage = "random bytes"
        case otherURL = "another URL's entry under this URL's name"
        case badHeader = "an unknown format line"
        case notACRL = "a valid header over a certificate's DER"
        var testDescription: String { rawValue }
    }

    @Test("a damaged file is treated as missing and deleted, never trusted or crashed on", arguments: Damage.allCases)
    func damaged(_ damage: Damage) throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try CRLCache(directory: directory)
        cache.store(try Self.crl(), url: Self.url, etag: nil, lastModified: nil, at: Self.now)
        let path = directory + "/" + Hex.encode(SHA256.hash(Array(Self.url.utf8))) + ".crl"
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let header = "servertrust-crl-cache 1\nurl \(Base64.encode(Array(Self.url.utf8)))\netag \nlast-modified \nfetched 1\nvalidated 1\n\n"
        let replacement: [UInt8]
        switch damage {
        case .truncated: replacement = Array(bytes.dropLast(7))
        case .garbage: replacement = (0..<500).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        case .otherURL:
            let otherDirectory = Self.directory()
            defer { try? FileManager.default.removeItem(atPath: otherDirectory) }
            try CRLCache(directory: otherDirectory).store(try Self.crl(), url: "http://crl.example/other.crl", etag: nil, lastModified: nil, at: Self.now)
            let otherFile = try #require(try FileManager.default.contentsOfDirectory(atPath: otherDirectory).first)
            replacement = [UInt8](try Data(contentsOf: URL(fileURLWithPath: otherDirectory + "/" + otherFile)))
        case .badHeader: replacement = Array("servertrust-crl-cache 2\n".utf8) + bytes.drop { $0 != 0x0A }.dropFirst()
        case .notACRL: replacement = Array(header.utf8) + (try LabPKI.webChain(host: "cache.example", keySlot: 136).leaf.der)
        }
        try Data(replacement).write(to: URL(fileURLWithPath: path))
        let reopened = try CRLCache(directory: directory)
        #expect(reopened.entry(for: Self.url) == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("bounded: memory keeps the most recently used entries, the folder the most recently confirmed files")
    func bounded() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let big = try Self.crl(entries: 300)
        let limits = CRLCache.Limits(maximumEntries: 2, maximumDiskBytes: 2 * big.derBytes.count + 600)
        let memoryOnly = try CRLCache(limits: limits)
        for n in 1...3 { memoryOnly.store(big, url: "http://crl.example/\(n).crl", etag: nil, lastModified: nil, at: Self.now) }
        #expect(memoryOnly.entry(for: "http://crl.example/1.crl") == nil)
        #expect(memoryOnly.entry(for: "http://crl.example/3.crl") != nil)
        let onDisk = try CRLCache(directory: directory, limits: limits)
        for n in 1...3 {
            onDisk.store(big, url: "http://crl.example/\(n).crl", etag: nil, lastModified: nil, at: Self.now)
            usleep(20_000)  // distinct modification times
        }
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
        let expected = Set([2, 3].map { Hex.encode(SHA256.hash(Array("http://crl.example/\($0).crl".utf8))) + ".crl" })
        #expect(names == expected)
    }

    @Test("remove forgets an entry in memory and on disk, but not a newer CRL stored meanwhile")
    func remove() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try CRLCache(directory: directory)
        let first = try Self.crl(number: 1)
        let second = try Self.crl(number: 2)
        cache.store(second, url: Self.url, etag: nil, lastModified: nil, at: Self.now)
        cache.remove(Self.url, ifHolding: first)
        #expect(cache.entry(for: Self.url)?.crl == second)
        cache.remove(Self.url, ifHolding: second)
        #expect(cache.entry(for: Self.url) == nil)
        #expect(try CRLCache(directory: directory).entry(for: Self.url) == nil)
    }

    @Test("validators that are not printable ASCII are not kept")
    func validators() throws {
        let cache = try CRLCache()
        let entry = cache.store(try Self.crl(), url: Self.url, etag: "\"a\"\r\nX-Injected: 1", lastModified: "", at: Self.now)
        #expect(entry.etag == nil && entry.lastModified == nil)
    }

    @Test("a folder path that is a file is refused with a typed error")
    func notAFolder() throws {
        let file = Self.directory()
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(throws: CRLCacheError.self) { try CRLCache(directory: file) }
    }
}
