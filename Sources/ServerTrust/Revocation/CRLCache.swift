public import CertificateParsing
import Foundation
import Synchronization
public import TrustEvaluation

#if canImport(Glibc)
    import Glibc
#endif

/// CRLs kept between decisions, keyed by the URL they were fetched from: in memory always, and
/// on disk when given a folder, so that a decision under a warm cache makes no network request
/// and a restarted process does not fetch again.
///
/// **Freshness.** An entry is used without a request until the CRL's own window ends (its
/// nextUpdate, RFC 5280 §5.1.2.5, by
/// ``/TrustEvaluation/RevocationFreshness/end(thisUpdate:nextUpdate:maximumValidity:)``, plus the
/// clock skew) and at most ``Limits/maximumAge`` after the server last confirmed it, whichever
/// comes first; then it is revalidated with the `ETag` and `Last-Modified` the server sent
/// (`If-None-Match`, `If-Modified-Since`), and a `304 Not Modified` counts as a confirmation.
/// When the server keeps confirming a CRL whose window has already ended (a CA that stopped
/// publishing), the entry is used for ``Limits/staleRecheckInterval`` after each confirmation, so
/// a broken publisher is asked again every few minutes, not on every connection; the revocation
/// check still finds that CRL stale.
///
/// **What is stored.** Only bytes that parse as a complete CRL are stored; whether the CRL is
/// signed by the right key is the revocation check's business, after which the provider is asked
/// to forget (``remove(_:ifHolding:)``) a CRL whose signature or signer is wrong. So garbage never
/// enters, and a well-formed but forged CRL (an on-path attacker answering a plain-HTTP fetch)
/// lives until the first decision that uses it, and in no case longer than ``Limits/maximumAge``.
///
/// **On disk.** One file per URL, named by the SHA-256 of the URL in hex (never by text from
/// the certificate or the server), holding a small header (the URL, the validators, the times)
/// and the DER. Writes are crash-safe: a temporary file, `fsync`, rename(2), `fsync` of the
/// folder (as ``PinSetStore`` does); leftovers of a crashed write are removed when the cache is
/// opened. A file that does not parse, or whose URL is not the one asked for, is deleted and
/// treated as missing. The folder is bounded by ``Limits/maximumDiskBytes``: the files confirmed
/// longest ago are deleted first. Files are created mode 0600, the folder (when created) 0700.
///
/// The cache is safe to use from any number of threads.
public final class CRLCache: Sendable {
    /// Bounds and intervals.
    public struct Limits: Hashable, Sendable {
        /// Entries kept in memory; the least recently used go first.
        public var maximumEntries: Int
        /// DER bytes kept in memory; the least recently used go first.
        public var maximumMemoryBytes: Int
        /// Bytes of cache files in the folder.
        public var maximumDiskBytes: Int
        /// The longest time an entry is used after the server last confirmed it, in seconds
        /// (a day: the CA/Browser Forum Baseline Requirements have CAs publish a new CRL within
        /// 24 hours of a revocation, while a CRL's nextUpdate may be ten days away).
        public var maximumAge: Int64
        /// How long a confirmation of an already stale CRL is used, in seconds.
        public var staleRecheckInterval: Int64

        /// 512 entries and 64 MiB in memory, 256 MiB on disk, a day, five minutes.
        public init(
            maximumEntries: Int = 512, maximumMemoryBytes: Int = 64 << 20, maximumDiskBytes: Int = 256 << 20, maximumAge: Int64 = 86_400,
            staleRecheckInterval: Int64 = 300
        ) {
            self.maximumEntries = maximumEntries
            self.maximumMemoryBytes = maximumMemoryBytes
            self.maximumDiskBytes = maximumDiskBytes
            self.maximumAge = maximumAge
            self.staleRecheckInterval = staleRecheckInterval
        }
    }

    /// One cached CRL.
    public struct Entry: Sendable, Hashable {
        /// The URL it was fetched from.
        public let url: String
        /// The CRL.
        public let crl: CertificateRevocationList
        /// The server's `ETag`, for `If-None-Match`.
        public let etag: String?
        /// The server's `Last-Modified`, for `If-Modified-Since`.
        public let lastModified: String?
        /// When its bytes were downloaded (seconds since 1970).
        public let fetchedAt: Int64
        /// When the server last confirmed it, by a 200 or a 304.
        public let validatedAt: Int64
    }

    /// The folder of the disk cache, if any.
    public let directory: String?
    /// The time rules (the skew added to a CRL's window).
    public let freshness: RevocationFreshness
    /// The bounds.
    public let limits: Limits

    private struct Memory {
        var entries: [String: (entry: Entry, lastUse: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }
    private let memory = Mutex(Memory())

    /// A cache in memory only, or also in `directory`.
    ///
    /// - Parameters:
    ///   - directory: The folder for the disk cache (created, mode 0700, if missing), or `nil`.
    ///   - freshness: The time rules.
    ///   - limits: Bounds and intervals.
    /// - Throws: ``CRLCacheError`` when the folder cannot be created or is not a folder.
    public init(directory: String? = nil, freshness: RevocationFreshness = .default, limits: Limits = Limits()) throws(CRLCacheError) {
        self.directory = directory
        self.freshness = freshness
        self.limits = limits
        guard let directory else { return }
        var info = stat()
        if stat(directory, &info) != 0 {
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw CRLCacheError(directory: directory, reason: "cannot create the folder: \(String(cString: strerror(errno)))")
            }
        } else if (info.st_mode & S_IFMT) != S_IFDIR {
            throw CRLCacheError(directory: directory, reason: "not a folder")
        }
        removeLeftovers()
    }

    // MARK: - Reading

    /// The entry for `url`, from memory or, failing that, from the folder; fresh or not.
    ///
    /// - Parameter url: The URL as the certificate names it.
    /// - Returns: The entry, or `nil`.
    public func entry(for url: String) -> Entry? {
        if let entry = memory.withLock({ memory -> Entry? in
            guard let found = memory.entries[url] else { return nil }
            memory.clock += 1
            memory.entries[url]?.lastUse = memory.clock
            return found.entry
        }) {
            return entry
        }
        guard let entry = readFile(for: url) else { return nil }
        remember(entry)
        return entry
    }

    /// Until when `entry` is used without asking the server (inclusive, seconds since 1970).
    ///
    /// - Parameter entry: A cache entry.
    /// - Returns: The later of its confirmation and the end of the CRL's window plus the skew,
    ///   capped at ``Limits/maximumAge`` after the confirmation; a CRL already past its window
    ///   when confirmed is used for ``Limits/staleRecheckInterval``.
    public func freshUntil(_ entry: Entry) -> Int64 {
        let crlEnd = freshness.end(thisUpdate: entry.crl.thisUpdate, nextUpdate: entry.crl.nextUpdate).addingClamped(freshness.clockSkew)
        guard crlEnd >= entry.validatedAt else { return entry.validatedAt.addingClamped(limits.staleRecheckInterval) }
        return min(crlEnd, entry.validatedAt.addingClamped(limits.maximumAge))
    }

    /// Whether `entry` may be used at `time` without asking the server.
    ///
    /// - Parameters:
    ///   - entry: A cache entry.
    ///   - time: Now, in seconds since 1970.
    /// - Returns: `true` while `time ≤` ``freshUntil(_:)`` (and the entry is not from the future).
    public func isFresh(_ entry: Entry, at time: Int64) -> Bool {
        time <= freshUntil(entry) && entry.validatedAt <= time.addingClamped(freshness.clockSkew)
    }

    // MARK: - Writing

    /// Stores a CRL downloaded now (HTTP 200), replacing the entry for `url`.
    ///
    /// - Parameters:
    ///   - crl: The parsed CRL (its DER is what is stored).
    ///   - url: The URL it was fetched from.
    ///   - etag: The response's `ETag`, if any.
    ///   - lastModified: The response's `Last-Modified`, if any.
    ///   - time: Now, in seconds since 1970.
    /// - Returns: The new entry.
    @discardableResult
    public func store(_ crl: CertificateRevocationList, url: String, etag: String?, lastModified: String?, at time: Int64) -> Entry {
        let entry = Entry(
            url: url, crl: crl, etag: etag.flatMap(Self.validator), lastModified: lastModified.flatMap(Self.validator), fetchedAt: time,
            validatedAt: time)
        remember(entry)
        writeFile(entry)
        return entry
    }

    /// Records that the server confirmed the entry for `url` now (HTTP 304 to a conditional
    /// request).
    ///
    /// - Parameters:
    ///   - url: The URL.
    ///   - time: Now, in seconds since 1970.
    /// - Returns: The updated entry, or `nil` when there is none.
    @discardableResult
    public func revalidated(_ url: String, at time: Int64) -> Entry? {
        guard let old = entry(for: url) else { return nil }
        let entry = Entry(
            url: url, crl: old.crl, etag: old.etag, lastModified: old.lastModified, fetchedAt: old.fetchedAt, validatedAt: max(time, old.validatedAt))
        remember(entry)
        writeFile(entry)
        return entry
    }

    /// Forgets the entry for `url`, in memory and on disk, if it still holds `crl` (a newer CRL
    /// stored meanwhile stays).
    ///
    /// - Parameters:
    ///   - url: The URL.
    ///   - crl: The CRL found unusable, or `nil` to forget whatever is stored.
    public func remove(_ url: String, ifHolding crl: CertificateRevocationList? = nil) {
        let removed = memory.withLock { memory -> Bool in
            guard let found = memory.entries[url] else { return crl == nil }
            if let crl, found.entry.crl != crl { return false }
            memory.entries[url] = nil
            memory.bytes -= found.entry.crl.derBytes.count
            return true
        }
        guard let path = path(for: url) else { return }
        if !removed, let crl {
            // Not in memory: the file may still hold it.
            guard let onDisk = readFile(for: url), onDisk.crl == crl else { return }
        }
        unlink(path)
    }

    /// Forgets every entry, in memory and on disk.
    public func removeAll() {
        memory.withLock { $0 = Memory() }
        guard let directory else { return }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasSuffix(Self.suffix) {
            unlink(directory + "/" + name)
        }
    }

    // MARK: - Memory

    private func remember(_ entry: Entry) {
        memory.withLock { memory in
            memory.clock += 1
            if let old = memory.entries[entry.url] { memory.bytes -= old.entry.crl.derBytes.count }
            memory.entries[entry.url] = (entry, memory.clock)
            memory.bytes += entry.crl.derBytes.count
            while memory.entries.count > limits.maximumEntries || (memory.bytes > limits.maximumMemoryBytes && memory.entries.count > 1) {
                guard let oldest = memory.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) else { break }
                memory.entries[oldest.key] = nil
                memory.bytes -= oldest.value.entry.crl.derBytes.count
            }
        }
    }

    // MARK: - Disk

    static let suffix = ".crl"
    static let magic = "servertrust-crl-cache 1"

    /// The file for `url`: the SHA-256 of the URL in hex, so no byte of the URL reaches the
    /// file system.
    func path(for url: String) -> String? {
        guard let directory else { return nil }
        return directory + "/" + Hex.encode(SHA256.hash(Array(url.utf8))) + Self.suffix
    }

    /// A validator as the server sent it, if it is printable ASCII of a sane length (a header
    /// value never holds CR or LF, but nothing else is assumed).
    static func validator(_ text: String) -> String? {
        guard !text.isEmpty, text.utf8.count <= 512, text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return text
    }

    /// `magic`, `url` (base64: a URL may hold any byte), `etag`, `last-modified` (printable
    /// ASCII by ``validator(_:)``), `fetched`, `validated` lines, a blank line, the DER.
    static func encode(_ entry: Entry) -> [UInt8] {
        let header = [
            magic, "url \(Base64.encode(Array(entry.url.utf8)))", "etag \(entry.etag ?? "")", "last-modified \(entry.lastModified ?? "")",
            "fetched \(entry.fetchedAt)",
            "validated \(entry.validatedAt)", "",
        ].joined(separator: "\n")
        return Array((header + "\n").utf8) + entry.crl.derBytes
    }

    static func decode(_ bytes: [UInt8], url: String) -> Entry? {
        var lines: [String] = []
        var start = 0
        var index = 0
        while index < bytes.count, lines.count < 8 {
            if bytes[index] == 0x0A {
                let line = String(decoding: bytes[start..<index], as: UTF8.self)
                start = index + 1
                if line.isEmpty { break }
                lines.append(line)
            }
            index += 1
        }
        guard lines.count == 6, lines[0] == magic else { return nil }
        func value(_ line: Int, _ key: String) -> String? {
            guard lines[line].hasPrefix(key + " ") else { return nil }
            return String(lines[line].dropFirst(key.count + 1))
        }
        guard let encodedURL = value(1, "url"), Base64.decode(Array(encodedURL.utf8)) == Array(url.utf8), let etag = value(2, "etag"),
            let lastModified = value(3, "last-modified"),
            let fetched = value(4, "fetched").flatMap({ Int64($0) }), let validated = value(5, "validated").flatMap({ Int64($0) }),
            let crl = try? CertificateRevocationList(derEncoded: Array(bytes[start...]))
        else { return nil }
        return Entry(
            url: url, crl: crl, etag: etag.isEmpty ? nil : validator(etag), lastModified: lastModified.isEmpty ? nil : validator(lastModified),
            fetchedAt: fetched, validatedAt: validated)
    }

    private func readFile(for url: String) -> Entry? {
        guard let path = path(for: url) else { return nil }
        switch DurableFile.read(path, maximumSize: limits.maximumDiskBytes) {
        case nil: return nil
        case .success(let bytes)?:
            if let entry = Self.decode(bytes, url: url) { return entry }
            unlink(path)  // torn by something else than us, or another URL's: useless
            return nil
        case .failure?:
            unlink(path)
            return nil
        }
    }

    private func writeFile(_ entry: Entry) {
        guard let path = path(for: entry.url), let directory else { return }
        // A failed write loses only the disk copy; the memory entry serves this process.
        guard (try? DurableFile.replace(path, with: Self.encode(entry))) != nil else { return }
        trimDisk(in: directory, keeping: path)
    }

    /// Deletes the files confirmed longest ago (by modification time: every write is a
    /// confirmation) until the folder holds at most ``Limits/maximumDiskBytes``.
    private func trimDisk(in directory: String, keeping kept: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        var files: [(path: String, size: Int, modified: Int)] = []
        var total = 0
        for name in names where name.hasSuffix(Self.suffix) {
            let path = directory + "/" + name
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            files.append((path, Int(info.st_size), Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec)))
            total += Int(info.st_size)
        }
        guard total > limits.maximumDiskBytes else { return }
        for file in files.sorted(by: { $0.modified < $1.modified }) where total > limits.maximumDiskBytes && file.path != kept {
            unlink(file.path)
            total -= file.size
        }
    }

    /// Removes temporary files a crashed write left behind.
    private func removeLeftovers() {
        guard let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.contains(Self.suffix + ".tmp-") {
            unlink(directory + "/" + name)
        }
    }
}

/// A CRL cache folder that cannot be used.
public struct CRLCacheError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The folder.
    public let directory: String
    /// What is wrong, on one line.
    public let reason: String

    /// `CRL cache DIR: REASON`.
    public var description: String { "CRL cache \(directory): \(reason)" }
}
