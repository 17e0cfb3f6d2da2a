/// SHA-1 (FIPS 180-4 §6.1, RFC 3174), in pure Swift.
///
/// SHA-1 is broken for collision resistance; it is here for certificate fingerprints as
/// browsers and `openssl x509 -fingerprint` still display them, and for RFC 5280 §4.2.1.2
/// key identifiers. Nothing in this library trusts a SHA-1 signature because of this type.
public enum SHA1 {
    /// The digest length in bytes.
    public static let byteCount = 20

    /// Hashes `data`.
    ///
    /// Contiguous collections are hashed in place; any other collection is copied first.
    ///
    /// - Parameter data: The message.
    /// - Returns: The 20-byte digest.
    @inlinable
    public static func hash<C: Collection>(_ data: C) -> [UInt8] where C.Element == UInt8 {
        if let digest = data.withContiguousStorageIfAvailable({ hash(bytes: UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(data).withUnsafeBytes { hash(bytes: $0) }
    }

    @usableFromInline
    static func hash(bytes: UnsafeRawBufferPointer) -> [UInt8] {
        // FIPS 180-4 §5.3.1.
        var h0: UInt32 = 0x6745_2301
        var h1: UInt32 = 0xefcd_ab89
        var h2: UInt32 = 0x98ba_dcfe
        var h3: UInt32 = 0x1032_5476
        var h4: UInt32 = 0xc3d2_e1f0
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { schedule in
            guard let w = schedule.baseAddress else { return }
            MerkleDamgard.process(bytes, blockSize: 64) { blocks, count in
                var block = blocks
                for _ in 0..<count {
                    // FIPS 180-4 §6.1.2 step 1.
                    for t in 0..<16 {
                        w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t &* 4, as: UInt32.self))
                    }
                    for t in 16..<80 {
                        w[t] = (w[t &- 3] ^ w[t &- 8] ^ w[t &- 14] ^ w[t &- 16]).rotatedRight(31)
                    }
                    var a = h0
                    var b = h1
                    var c = h2
                    var d = h3
                    var e = h4
                    // Steps 2–3, one loop per function f_t and constant K_t (§4.1.1, §4.2.1).
                    for t in 0..<20 {
                        let temp = a.rotatedRight(27) &+ (d ^ (b & (c ^ d))) &+ e &+ 0x5a82_7999 &+ w[t]
                        e = d
                        d = c
                        c = b.rotatedRight(2)
                        b = a
                        a = temp
                    }
                    for t in 20..<40 {
                        let temp = a.rotatedRight(27) &+ (b ^ c ^ d) &+ e &+ 0x6ed9_eba1 &+ w[t]
                        e = d
                        d = c
                        c = b.rotatedRight(2)
                        b = a
                        a = temp
                    }
                    for t in 40..<60 {
                        let temp = a.rotatedRight(27) &+ ((b & c) | (d & (b | c))) &+ e &+ 0x8f1b_bcdc &+ w[t]
                        e = d
                        d = c
                        c = b.rotatedRight(2)
                        b = a
                        a = temp
                    }
                    for t in 60..<80 {
                        let temp = a.rotatedRight(27) &+ (b ^ c ^ d) &+ e &+ 0xca62_c1d6 &+ w[t]
                        e = d
                        d = c
                        c = b.rotatedRight(2)
                        b = a
                        a = temp
                    }
                    // Step 4.
                    h0 = h0 &+ a
                    h1 = h1 &+ b
                    h2 = h2 &+ c
                    h3 = h3 &+ d
                    h4 = h4 &+ e
                    block += 64
                }
            }
        }
        return [UInt8](unsafeUninitializedCapacity: 20) { buffer, count in
            guard let base = buffer.baseAddress else { return }
            let raw = UnsafeMutableRawPointer(base)
            raw.storeBytes(of: h0.bigEndian, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: h1.bigEndian, toByteOffset: 4, as: UInt32.self)
            raw.storeBytes(of: h2.bigEndian, toByteOffset: 8, as: UInt32.self)
            raw.storeBytes(of: h3.bigEndian, toByteOffset: 12, as: UInt32.self)
            raw.storeBytes(of: h4.bigEndian, toByteOffset: 16, as: UInt32.self)
            count = 20
        }
    }
}
