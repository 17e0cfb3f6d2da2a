public import CertificateParsing
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A set of trust anchors, indexed by subject name (compared as RFC 5280 §7.1 compares names).
///
/// Anchors are parsed with the project's own DER reader (about 3 µs each), and their public
/// keys are built lazily, once, the first time an anchor is used to check a signature, so that
/// loading a 140-root system bundle costs parsing only (OpenSSL's `X509_STORE_load_file` takes
/// about 20 ms because it decodes every key up front).
public final class TrustStore: Sendable {
    /// The anchors, in load order, without duplicates.
    public let certificates: [Certificate]
    /// Where the anchors came from (file paths or a description), for decision records.
    public let sources: [String]
    /// Whether this is the system trust store (``system()``), as opposed to anchors an
    /// application chose: records call only this store the system's, and checks that apply to
    /// publicly trusted roots only (Certificate Transparency) ask it.
    public let isSystemStore: Bool
    /// Anchor indices by subject bytes (the lookup of nearly every path step).
    private let bySubject: [DistinguishedName: [Int]]
    /// Anchor indices by ``DistinguishedName/comparisonHash`` of their subject (RFC 5280 §7.1).
    private let byComparisonHash: [Int: [Int]]
    /// Comparison hashes whose anchors' subjects are not all byte-identical: only there can an
    /// exact-bytes lookup miss an equivalent anchor.
    private let mixedEncodings: Set<Int>
    /// Each anchor's comparison hash, index for index with ``certificates``.
    private let comparisonHashes: [Int]
    /// Certificate hashing looks at a few signature bytes and equality compares the DER, so
    /// membership costs a short hash and at most one byte comparison.
    private let members: Set<Certificate>
    let keys: KeyCache
    /// The last union made with this store on the left (``+``), so that merging the same two
    /// stores again, as every evaluation with custom anchors beside the system roots does,
    /// returns the same store with its built keys and shared verifiers instead of a new one.
    private let lastUnion = Mutex(UnionMemo())

    private struct UnionMemo {
        /// Weak: a store must not keep the other operand alive (two stores merged in both
        /// orders would otherwise hold each other).
        weak var other: TrustStore?
        var union: TrustStore?
    }

    /// Creates a store from certificates; exact duplicates are dropped.
    /// - Parameters:
    ///   - certificates: The anchors.
    ///   - sources: Where they came from, for decision records.
    public convenience init(_ certificates: [Certificate], sources: [String] = []) {
        self.init(certificates, sources: sources, isSystemStore: false)
    }

    init(_ certificates: [Certificate], sources: [String], isSystemStore: Bool) {
        var unique: [Certificate] = []
        var seen = Set<Certificate>()
        var bySubject: [DistinguishedName: [Int]] = [:]
        var byComparisonHash: [Int: [Int]] = [:]
        var mixedEncodings = Set<Int>()
        var comparisonHashes: [Int] = []
        unique.reserveCapacity(certificates.count)
        for certificate in certificates where seen.insert(certificate).inserted {
            let hash = certificate.subject.comparisonHash
            if let other = byComparisonHash[hash]?.first, unique[other].subject != certificate.subject { mixedEncodings.insert(hash) }
            bySubject[certificate.subject, default: []].append(unique.count)
            byComparisonHash[hash, default: []].append(unique.count)
            comparisonHashes.append(hash)
            unique.append(certificate)
        }
        self.certificates = unique
        self.sources = sources
        self.isSystemStore = isSystemStore
        self.bySubject = bySubject
        self.byComparisonHash = byComparisonHash
        self.mixedEncodings = mixedEncodings
        self.comparisonHashes = comparisonHashes
        self.members = seen
        self.keys = KeyCache(count: unique.count)
    }

    /// An empty store (trusts nothing).
    public static let empty = TrustStore([])

    /// Anchors whose subject matches `name` under RFC 5280 §7.1 (byte-identical names, and
    /// names that differ only in case, insignificant whitespace or string type), in load order.
    func candidates(issuedTo name: DistinguishedName) -> [Int] {
        // Byte-identical subjects first. When they are the only encoding of that name in the
        // store, they are every match; otherwise, or when none is identical, the §7.1 index
        // is consulted.
        if let exact = bySubject[name], !mixedEncodings.contains(comparisonHashes[exact[0]]) { return exact }
        let hash = name.comparisonHash
        guard let bucket = byComparisonHash[hash] else { return [] }
        return bucket.filter { certificates[$0].subject.matches(name) }
    }

    /// Whether this exact certificate is an anchor.
    public func contains(_ certificate: Certificate) -> Bool { members.contains(certificate) }

    /// The number of anchors.
    public var count: Int { certificates.count }

    /// Loads anchors from PEM or DER files, bundles, or every certificate file in a directory.
    /// - Throws: ``TrustStoreError`` naming the file and what is wrong with it.
    public convenience init(contentsOf paths: [String]) throws(TrustStoreError) {
        var all: [Certificate] = []
        for path in paths {
            all += try TrustStore.load(path: path)
        }
        self.init(all, sources: paths)
    }

    /// Merges stores (custom anchors plus system roots, for example). Merging the same two
    /// stores again returns the same merged store.
    public static func + (lhs: TrustStore, rhs: TrustStore) -> TrustStore {
        if rhs.count == 0 { return lhs }
        if lhs.count == 0 { return rhs }
        if let hit = lhs.lastUnion.withLock({ memo in memo.other === rhs ? memo.union : nil }) { return hit }
        let union = TrustStore(lhs.certificates + rhs.certificates, sources: lhs.sources + rhs.sources)
        lhs.lastUnion.withLock { $0 = UnionMemo(other: rhs, union: union) }
        return union
    }

    static func load(path: String) throws(TrustStoreError) -> [Certificate] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw TrustStoreError(path: path, reason: String(cString: strerror(errno)))
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            return try loadDirectory(path)
        }
        let bytes = try readFile(path)
        do {
            return try Certificate.load(bytes)
        } catch {
            throw TrustStoreError(path: path, reason: error.description)
        }
    }

    /// A directory as OpenSSL's `SSL_CERT_DIR` uses it: every regular file that holds
    /// certificates (hash-named links included); files that are not certificates are skipped,
    /// since such directories commonly hold other files too.
    static func loadDirectory(_ path: String) throws(TrustStoreError) -> [Certificate] {
        guard let dir = opendir(path) else { throw TrustStoreError(path: path, reason: String(cString: strerror(errno))) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name.hasPrefix(".") { continue }
            names.append(name)
        }
        var result: [Certificate] = []
        for name in names.sorted() {
            let file = path + "/" + name
            var info = stat()
            guard stat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            guard let bytes = try? readFile(file), let certificates = try? Certificate.load(bytes) else { continue }
            result += certificates
        }
        return result
    }

    /// The largest trust file read: the Debian bundle is about 200 KB; a device such as
    /// /dev/zero or a huge file must not exhaust memory.
    package static let maximumFileSize = 64 << 20

    /// Reads a whole regular file of at most ``maximumFileSize`` bytes. Devices, FIFOs and
    /// directories are refused rather than read until memory runs out (FZ-2). Shared by every
    /// module that loads a file a user names (policy files, pinned certificates, report state).
    package static func readFile(_ path: String) throws(TrustStoreError) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever, before
        // the check below could refuse it (POSIX open(), O_NONBLOCK). It changes nothing for a
        // regular file's reads.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0, let file = fdopen(descriptor, "rb") else {
            let reason = String(cString: strerror(errno))
            if descriptor >= 0 { close(descriptor) }
            throw TrustStoreError(path: path, reason: reason)
        }
        defer { fclose(file) }
        var info = stat()
        guard fstat(fileno(file), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw TrustStoreError(path: path, reason: "not a regular file")
        }
        guard Int(info.st_size) <= maximumFileSize else {
            throw TrustStoreError(path: path, reason: "larger than \(maximumFileSize >> 20) MiB")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n > 0 { bytes.append(contentsOf: buffer[0..<n]) }
            if n < buffer.count {
                // A short read is the end or an error; an error must not pass as a shorter file
                // (`/proc/self/mem` is a regular file whose first read fails with EIO).
                if ferror(file) != 0 { throw TrustStoreError(path: path, reason: "read error") }
                break
            }
        }
        return bytes
    }

    /// The system trust store, as OpenSSL finds it: `SSL_CERT_FILE` (default
    /// `/etc/ssl/certs/ca-certificates.crt`) and, if set, `SSL_CERT_DIR`. Loaded once per process
    /// for each combination of those two settings.
    public static func system() throws(TrustStoreError) -> TrustStore {
        let file = getenv("SSL_CERT_FILE").map { String(cString: $0) }
        let dir = getenv("SSL_CERT_DIR").map { String(cString: $0) }
        return try SystemStoreCache.shared.store(file: file, directory: dir)
    }

    static let defaultBundlePath = "/etc/ssl/certs/ca-certificates.crt"

    static func makeSystem(file: String?, directory: String?) throws(TrustStoreError) -> TrustStore {
        var certificates: [Certificate] = []
        var sources: [String] = []
        let bundle = file ?? defaultBundlePath
        if file != nil || access(bundle, R_OK) == 0 {
            certificates += try load(path: bundle)
            sources.append(bundle)
        }
        if let directory {
            for part in directory.split(separator: ":") where access(String(part), R_OK) == 0 {
                certificates += try loadDirectory(String(part))
                sources.append(String(part))
            }
        }
        return TrustStore(certificates, sources: sources, isSystemStore: true)
    }
}

/// Loads the default system store once per process.
final class SystemStoreCache: Sendable {
    static let shared = SystemStoreCache()
    private let stores = Mutex<[String: TrustStore]>([:])

    /// The store for these settings, loaded on first use. (Files changed on disk afterwards are
    /// not seen until the process restarts, as with OpenSSL's default store.)
    func store(file: String?, directory: String?) throws(TrustStoreError) -> TrustStore {
        let key = (file ?? "\u{0}") + "\n" + (directory ?? "\u{0}")
        if let cached = stores.withLock({ $0[key] }) { return cached }
        let store = try TrustStore.makeSystem(file: file, directory: directory)
        stores.withLock { $0[key] = store }
        return store
    }
}

/// A trust store file or directory that could not be read.
public struct TrustStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file or directory.
    public let path: String
    /// What went wrong.
    public let reason: String
    /// `<path>: <reason>`, one line.
    public var description: String { "\(path): \(reason)" }
}

/// Which anchors an evaluation trusts, as SecTrust offers them.
public enum AnchorMode: String, Hashable, Sendable {
    /// The system roots only (SecTrust's default).
    case systemOnly
    /// The custom anchors only (`SecTrustSetAnchorCertificates`).
    case customOnly
    /// Custom anchors and the system roots (`SecTrustSetAnchorCertificatesOnly(false)`).
    case customAndSystem
}
