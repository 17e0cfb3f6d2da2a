internal import COpenSSL
package import CertificateParsing
internal import Synchronization

/// A bounded, thread-safe memo of signature checks that succeeded: "this key verified this
/// signature over these bytes, with this algorithm".
///
/// Every signature check of ``OpenSSLSignatureVerifier`` goes through it (certificate chains,
/// CRLs, pin-set documents, and any later caller of the same seam), so a chain met again (a
/// resumed connection whose decision is re-made, the next connection to the same host, the CRL
/// or SCT that repeats from connection to connection) costs a digest and a table look-up
/// instead of an RSA or ECDSA verification.
///
/// ## What it remembers, and what it never does
///
/// Only successes of the cryptographic check, keyed by a SHA-256 fingerprint of everything
/// the check's outcome depends on. Never a failure (a bad signature is verified, and refused,
/// every time), never a time check, a name check, a pin or any other part of a decision: those
/// are made again on every evaluation, so a resumed connection after a pin change or after its
/// leaf expired is refused exactly as it would be with no memo.
///
/// ## The key
///
/// SHA-256 over, each field length-prefixed so no two inputs encode alike: a domain tag, the
/// signature algorithm with all its parameters (for RSASSA-PSS the message digest, the MGF1
/// digest and the salt length), the signer's SubjectPublicKeyInfo DER exactly as encoded, the
/// signed bytes and the signature value. The signed bytes enter as the digest the signature
/// scheme itself computes over them (the `H(M)` of RSASSA-PKCS1-v1_5, RSASSA-PSS and ECDSA,
/// RFC 8017 §9.2 step 1 and §9.1.2 step 2, SEC 1 §4.1.4 step 2), which the verification
/// needs anyway: a miss hashes the signed bytes once, not twice. This keeps the memo
/// exact: those schemes' verification reads the message only through that digest, so any two
/// inputs with one fingerprint get one answer from libcrypto as well (even for MD5 or SHA-1,
/// whose collisions fool the signature itself, not the memo: whether such signatures are
/// acceptable stays the validation policy's decision, made on every evaluation). EdDSA signs the
/// message itself (RFC 8032 §5.1.7), so there the signed bytes enter as their SHA-256.
///
/// ## Threat model
///
/// The attacker controls the signed bytes and the signature (a served chain, a CRL, a
/// document), may choose keys of their own, and may fill the memo with signatures that are
/// valid under those keys. They do not control the keying. An entry answers only for a
/// fingerprint equal to its own; a false "valid" needs a SHA-256 collision between the
/// attacker's input and a successfully verified one. Flooding evicts others' entries, which
/// only costs them the verification the memo would have saved. Lookups hash the fingerprint
/// with the standard library's per-process seeded hasher, so crafted fingerprints cannot
/// degrade the table.
///
/// ## Bounds
///
/// ``capacity`` entries at most, evicted by CLOCK (second chance): an entry found again since
/// the hand last passed it survives one more sweep, so the chains a process keeps meeting stay
/// while one-off entries go first. Entries are fixed-size fingerprints, never the signed bytes,
/// so memory is bounded by the entry count: about ``maximumBytes``. The table is split into
/// independently locked shards so concurrent evaluations rarely wait for one another.
///
/// ## Opting out
///
/// Per verifier: `OpenSSLSignatureVerifier(memo: nil)` checks every signature afresh (the
/// `Verifier` initialisers that take a `signatureVerifier:` accept it). Process-wide: set
/// ``isEnabled`` of ``shared`` to `false`, which every default-built verifier (the shared
/// verifiers of `HTTPSession`, pin-set documents) uses; a disabled memo holds nothing.
public final class SignatureMemo: Sendable {
    /// The memo every default-built ``OpenSSLSignatureVerifier`` uses.
    public static let shared = SignatureMemo()

    /// The default ``capacity``: 4096 signatures, about 1,400 distinct chains with their CRLs,
    /// in about 0.4 MiB (see ``maximumBytes``).
    public static let defaultCapacity = 4096

    /// The most entries the memo holds (at most the capacity it was made with: a whole number
    /// per shard).
    public let capacity: Int

    /// An upper bound on the memory of a full memo, in bytes: the shards' fingerprint rings,
    /// reference bits and hash-table buckets, allocated up front for ``capacity`` entries.
    public var maximumBytes: Int { shards.count * Shard.bytes(forCapacity: shardCapacity) }

    private let shards: [ShardBox]
    private let shardCapacity: Int
    private let enabled: Atomic<Bool>

    /// Creates an empty memo.
    ///
    /// - Parameter capacity: The most entries to hold; at least 1. Large memos are split into
    ///   up to 16 shards of equal size, each at least 64 entries.
    public init(capacity: Int = SignatureMemo.defaultCapacity) {
        let requested = max(1, capacity)
        let shardCount = max(1, min(16, requested / 64))
        let perShard = requested / shardCount
        shardCapacity = perShard
        self.capacity = perShard * shardCount
        shards = (0..<shardCount).map { _ in ShardBox(capacity: perShard) }
        enabled = Atomic(true)
    }

    /// Whether checks consult and fill the memo. Setting `false` also empties it, so a disabled
    /// memo holds nothing; setting `true` again starts empty.
    public var isEnabled: Bool {
        get { enabled.load(ordering: .relaxed) }
        set {
            enabled.store(newValue, ordering: .relaxed)
            if !newValue { removeAll() }
        }
    }

    /// Forgets every entry (counters are kept).
    public func removeAll() {
        for shard in shards { shard.state.withLock { $0.removeAll() } }
    }

    /// Counters since the memo was made.
    public struct Statistics: Sendable, Hashable, CustomStringConvertible {
        /// Look-ups that found their fingerprint (a verification saved).
        public var hits = 0
        /// Look-ups that did not.
        public var misses = 0
        /// Fingerprints added after a successful verification.
        public var insertions = 0
        /// Entries removed to make room.
        public var evictions = 0
        /// Entries held now.
        public var count = 0

        /// `"hits 3, misses 2, insertions 2, evictions 0, entries 2"`.
        public var description: String {
            "hits \(hits), misses \(misses), insertions \(insertions), evictions \(evictions), entries \(count)"
        }
    }

    /// The counters, summed over the shards.
    public var statistics: Statistics {
        var total = Statistics()
        for shard in shards {
            shard.state.withLock { state in
                total.hits += state.hits
                total.misses += state.misses
                total.insertions += state.insertions
                total.evictions += state.evictions
                total.count += state.index.count
            }
        }
        return total
    }

    /// Whether a check with this fingerprint succeeded before (and is still held). A hit marks
    /// the entry as recently used.
    func contains(_ fingerprint: Fingerprint) -> Bool {
        shard(for: fingerprint).state.withLock { $0.lookUp(fingerprint) }
    }

    /// Records that a check with this fingerprint succeeded; only ever called after a
    /// successful verification.
    func insert(_ fingerprint: Fingerprint) {
        guard isEnabled else { return }
        shard(for: fingerprint).state.withLock { $0.insert(fingerprint) }
    }

    /// Whether the memo holds the success of this check, without counting a look-up or marking
    /// the entry: for tests that must know the memo is warm before they act.
    ///
    /// - Parameters:
    ///   - signature: The signature value.
    ///   - data: The signed bytes.
    ///   - algorithm: The signature algorithm.
    ///   - key: The signer's key.
    /// - Returns: `true` when a check of exactly these inputs succeeded and is still held.
    package func holds(signature: ArraySlice<UInt8>, over data: ArraySlice<UInt8>, algorithm: SignatureAlgorithm, key: VerificationKey) -> Bool {
        let digest: DigestAlgorithm
        switch algorithm {
        case .rsaPKCS1(let d), .ecdsa(let d): digest = d
        case .rsaPSS(let parameters): digest = parameters.digest
        case .ed25519, .ed448: digest = .sha256
        case .other: return false
        }
        let result = OpenSSLSignatureVerifier.withDigest(digest, of: data) { hash in
            guard
                let fingerprint = Fingerprint(
                    algorithm: algorithm, publicKeyInfo: key.publicKeyInfoDER, messageDigest: hash, signature: signature),
                shard(for: fingerprint).state.withLock({ $0.index[fingerprint] != nil })
            else { return .invalid(SignatureError(.badSignature, "not held")) }
            return .valid
        }
        return result.isValid
    }

    private func shard(for fingerprint: Fingerprint) -> ShardBox {
        shards[Int(truncatingIfNeeded: fingerprint.words.0 % UInt64(shards.count))]
    }

    /// The SHA-256 key of one signature check (see the type's documentation for the fields).
    struct Fingerprint: Hashable, Sendable {
        let words: (UInt64, UInt64, UInt64, UInt64)

        static func == (lhs: Fingerprint, rhs: Fingerprint) -> Bool {
            lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(words.0)
            hasher.combine(words.1)
            hasher.combine(words.2)
            hasher.combine(words.3)
        }

        /// The version tag that starts every fingerprinted input; a change of the layout below
        /// changes it.
        private static let domain: [UInt8] = Array("ServerTrust signature memo v1".utf8)

        /// The fingerprint of a check of `signature` by the key with SubjectPublicKeyInfo
        /// `publicKeyInfo` over a message whose digest (as `algorithm` computes it; SHA-256 for
        /// EdDSA) is `messageDigest`; `nil` if libcrypto's SHA-256 fails.
        init?(
            algorithm: SignatureAlgorithm,
            publicKeyInfo: ArraySlice<UInt8>,
            messageDigest: UnsafeBufferPointer<UInt8>,
            signature: ArraySlice<UInt8>
        ) {
            guard let code = Fingerprint.algorithmCode(algorithm) else { return nil }
            let domain = Fingerprint.domain
            let total = domain.count + MemoryLayout.size(ofValue: code) + 3 * 8 + publicKeyInfo.count + messageDigest.count + signature.count
            var result: (UInt64, UInt64, UInt64, UInt64)?
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: total + 32) { buffer in
                guard let base = buffer.baseAddress else { return }
                var offset = 0
                func append(_ bytes: UnsafeRawBufferPointer) {
                    guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
                    UnsafeMutableRawPointer(base + offset).copyMemory(from: start, byteCount: bytes.count)
                    offset += bytes.count
                }
                func appendField(_ bytes: UnsafeRawBufferPointer) {
                    withUnsafeBytes(of: UInt64(bytes.count).bigEndian) { append($0) }
                    append(bytes)
                }
                domain.withUnsafeBytes { append($0) }
                withUnsafeBytes(of: code) { append($0) }
                publicKeyInfo.withUnsafeBytes { appendField($0) }
                appendField(UnsafeRawBufferPointer(messageDigest))
                signature.withUnsafeBytes { appendField($0) }
                let output = base + offset
                guard Digest.hash(.sha256, UnsafeRawBufferPointer(start: base, count: offset), into: output) else { return }
                let raw = UnsafeRawPointer(output)
                result = (
                    raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
                )
            }
            guard let result else {
                OpenSSLError.clear()
                return nil
            }
            words = result
        }

        /// The parsed algorithm and every parameter its verification uses, as three big-endian
        /// words: the scheme, its digests (message and, for RSASSA-PSS, MGF1), and the PSS salt
        /// length; `nil` for algorithms that never verify (nothing to remember).
        static func algorithmCode(_ algorithm: SignatureAlgorithm) -> (UInt64, UInt64, UInt64)? {
            func digestCode(_ digest: DigestAlgorithm) -> UInt64 {
                switch digest {
                case .md5: return 1
                case .sha1: return 2
                case .sha224: return 3
                case .sha256: return 4
                case .sha384: return 5
                case .sha512: return 6
                }
            }
            switch algorithm {
            case .rsaPKCS1(let digest): return (UInt64(1).bigEndian, digestCode(digest).bigEndian, 0)
            case .rsaPSS(let parameters):
                return (
                    UInt64(2).bigEndian, (digestCode(parameters.digest) << 8 | digestCode(parameters.mgf1Digest)).bigEndian,
                    UInt64(bitPattern: Int64(parameters.saltLength)).bigEndian
                )
            case .ecdsa(let digest): return (UInt64(3).bigEndian, digestCode(digest).bigEndian, 0)
            case .ed25519: return (UInt64(4).bigEndian, 0, 0)
            case .ed448: return (UInt64(5).bigEndian, 0, 0)
            case .other: return nil
            }
        }
    }

    /// One lock and the table it guards.
    private final class ShardBox: Sendable {
        let state: Mutex<Shard>
        init(capacity: Int) { state = Mutex(Shard(capacity: capacity)) }
    }

    /// A CLOCK-evicted set of fingerprints: a ring of slots with a reference bit each, and an
    /// index from fingerprint to slot, all sized once for `capacity` entries.
    private struct Shard {
        let capacity: Int
        var index: [Fingerprint: Int32]
        var slots: [Fingerprint]
        var referenced: [Bool]
        var hand = 0
        var hits = 0
        var misses = 0
        var insertions = 0
        var evictions = 0

        init(capacity: Int) {
            self.capacity = capacity
            index = Dictionary(minimumCapacity: capacity)
            slots = []
            slots.reserveCapacity(capacity)
            referenced = []
            referenced.reserveCapacity(capacity)
        }

        /// The bytes a shard of `capacity` entries holds at most: the ring, the reference bits
        /// and the index's buckets (the standard library sizes a dictionary to a power of two
        /// buckets at a maximum load of 3/4), with the keys and values stored per bucket.
        static func bytes(forCapacity capacity: Int) -> Int {
            var buckets = 1
            while buckets * 3 / 4 < capacity { buckets *= 2 }
            let ring = capacity * (MemoryLayout<Fingerprint>.stride + MemoryLayout<Bool>.stride)
            let table = buckets * (MemoryLayout<Fingerprint>.stride + MemoryLayout<Int32>.stride) + buckets / 8
            // Two array headers and one dictionary header, as allocated.
            return ring + table + 3 * 64
        }

        mutating func lookUp(_ fingerprint: Fingerprint) -> Bool {
            guard let slot = index[fingerprint] else {
                misses += 1
                return false
            }
            referenced[Int(slot)] = true
            hits += 1
            return true
        }

        mutating func insert(_ fingerprint: Fingerprint) {
            guard index[fingerprint] == nil else { return }  // another thread verified it too
            insertions += 1
            if slots.count < capacity {
                index[fingerprint] = Int32(slots.count)
                slots.append(fingerprint)
                referenced.append(false)
                return
            }
            // CLOCK: clear reference bits until the hand finds an entry not used since its last
            // pass; at most one full turn, after which every bit is clear.
            while referenced[hand] {
                referenced[hand] = false
                hand = (hand + 1) % capacity
            }
            index[slots[hand]] = nil
            evictions += 1
            slots[hand] = fingerprint
            index[fingerprint] = Int32(hand)
            hand = (hand + 1) % capacity
        }

        mutating func removeAll() {
            index.removeAll(keepingCapacity: true)
            slots.removeAll(keepingCapacity: true)
            referenced.removeAll(keepingCapacity: true)
            hand = 0
        }
    }
}
