import CertificateParsing
import Synchronization

/// Memoised SPKI digests, so a pin check on keys already seen costs lookups, not hashing.
///
/// A pin check runs on every connection to a pinned host, for the same few server and CA
/// keys; TrustKit keeps the same kind of cache (`TSKSPKIHashCache`). Entries are found by a
/// cheap fingerprint of the SPKI (its length and last 16 bytes, i.e. key material) and then
/// compared in full, so a key crafted to collide with a pinned one only lands in the same
/// bucket, never gets its digest.
final class SPKIDigestCache: Sendable {
    static let shared = SPKIDigestCache()

    /// More entries than any process talks to keys; reaching it clears the cache (bounded
    /// memory even if a peer sends endless fresh certificates).
    static let capacity = 4096

    private struct Entry {
        let spki: [UInt8]
        let algorithm: PinDigestAlgorithm
        let digest: [UInt8]
    }

    private struct Table {
        var buckets: [UInt64: [Entry]] = [:]
        var count = 0
    }

    private let table = Mutex(Table())

    /// The digests of every certificate's SPKI, in order: one lock for the lookups and, for
    /// keys not yet seen, one for the inserts.
    func digests(of chain: [Certificate], _ algorithm: PinDigestAlgorithm) -> [[UInt8]] {
        let spkis = chain.map(\.subjectPublicKeyInfo.derBytes)
        let fingerprints = spkis.map { Self.fingerprint($0, algorithm) }
        var result: [[UInt8]?] = table.withLock { table in
            spkis.indices.map { index in
                table.buckets[fingerprints[index]]?.first { $0.algorithm == algorithm && Self.same(spkis[index], $0.spki) }?.digest
            }
        }
        var fresh: [(UInt64, Entry)] = []
        for index in spkis.indices where result[index] == nil {
            let spki = spkis[index]
            let digest = algorithm.digest(spki)
            result[index] = digest
            fresh.append((fingerprints[index], Entry(spki: Array(spki), algorithm: algorithm, digest: digest)))
        }
        if !fresh.isEmpty {
            table.withLock { table in
                if table.count + fresh.count > Self.capacity { table = Table() }
                for (fingerprint, entry) in fresh {
                    table.buckets[fingerprint, default: []].append(entry)
                    table.count += 1
                }
            }
        }
        return result.map { $0 ?? [] }
    }

    private static func fingerprint(_ spki: ArraySlice<UInt8>, _ algorithm: PinDigestAlgorithm) -> UInt64 {
        var value = UInt64(truncatingIfNeeded: spki.count) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(algorithm.byteCount)
        spki.withUnsafeBytes { bytes in
            if bytes.count >= 16 {
                value ^= bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self)
                value ^= bytes.loadUnaligned(fromByteOffset: bytes.count - 16, as: UInt64.self).rotated(by: 29)
            } else {
                for byte in bytes { value = value &* 31 &+ UInt64(byte) }
            }
        }
        return value
    }

    /// Full byte equality, eight bytes at a time.
    private static func same(_ a: ArraySlice<UInt8>, _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                var offset = 0
                while offset + 8 <= x.count {
                    if x.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != y.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
                        return false
                    }
                    offset += 8
                }
                while offset < x.count {
                    if x[offset] != y[offset] { return false }
                    offset += 1
                }
                return true
            }
        }
    }
}

extension UInt64 {
    fileprivate func rotated(by count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}
