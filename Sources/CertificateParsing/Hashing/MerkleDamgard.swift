/// The Merkle–Damgård framing shared by SHA-1 and the SHA-2 family (RFC 6234 §4): whole
/// blocks are compressed straight from the caller's buffer, then the tail is copied into one
/// stack buffer with the `0x80` marker, zero fill and the big-endian bit length.
///
/// Everything here is `@inline(__always)` so each digest gets its own specialised copy and the
/// compression closure is inlined: no heap allocation happens per message or per block.
enum MerkleDamgard {
    /// Feeds `input` through `compress`, padding the final block(s).
    ///
    /// - Parameters:
    ///   - input: The message.
    ///   - blockSize: 64 (SHA-1, SHA-256) or 128 (SHA-384, SHA-512).
    ///   - compress: Processes `count` consecutive blocks starting at the pointer.
    @inline(__always)
    static func process(
        _ input: UnsafeRawBufferPointer,
        blockSize: Int,
        _ compress: (_ blocks: UnsafeRawPointer, _ count: Int) -> Void
    ) {
        let fullBlocks = input.count / blockSize
        if fullBlocks > 0, let base = input.baseAddress {
            compress(base, fullBlocks)
        }
        let remainder = input.count - fullBlocks * blockSize
        // RFC 6234 §4.1/§4.2: append 0x80, zeros, then the message length in bits in the last
        // 8 (SHA-1/SHA-256) or 16 (SHA-384/SHA-512) bytes of the block.
        let lengthFieldSize = blockSize / 8
        let tailBlocks = remainder + 1 + lengthFieldSize <= blockSize ? 1 : 2
        withUnsafeTemporaryAllocation(byteCount: 2 * blockSize, alignment: 16) { tail in
            guard let tailBase = tail.baseAddress else { return }
            let tailBytes = tailBlocks * blockSize
            tailBase.initializeMemory(as: UInt8.self, repeating: 0, count: tailBytes)
            if remainder > 0, let base = input.baseAddress {
                tailBase.copyMemory(from: base + fullBlocks * blockSize, byteCount: remainder)
            }
            tailBase.storeBytes(of: 0x80, toByteOffset: remainder, as: UInt8.self)
            // Inputs are in memory, so their bit length fits in 64 bits; the upper half of
            // SHA-512's 128-bit length field stays zero.
            let bitLength = UInt64(truncatingIfNeeded: input.count) &* 8
            tailBase.storeBytes(of: bitLength.bigEndian, toByteOffset: tailBytes - 8, as: UInt64.self)
            compress(UnsafeRawPointer(tailBase), tailBlocks)
        }
    }
}

extension UInt32 {
    /// Right rotation (RFC 6234 §3 `ROTR^n`); LLVM lowers the shift pair to one `ror`.
    @inline(__always)
    func rotatedRight(_ n: UInt32) -> UInt32 { (self &>> n) | (self &<< (32 &- n)) }
}

extension UInt64 {
    /// Right rotation (RFC 6234 §3 `ROTR^n`).
    @inline(__always)
    func rotatedRight(_ n: UInt64) -> UInt64 { (self &>> n) | (self &<< (64 &- n)) }
}
