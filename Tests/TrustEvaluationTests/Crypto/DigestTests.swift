import CertificateParsing
import Testing
import TrustEvaluation

/// The pure-Swift digests (CertificateParsing/Hashing) against the FIPS 180-4 / RFC 6234 test
/// vectors and against OpenSSL's `EVP_Digest` (through ``TrustEvaluation/Digest``).
@Suite("Pure-Swift SHA-1 and SHA-2")
struct DigestTests {
    /// One known-answer vector: the message and the expected digest for each algorithm.
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let message: [UInt8]
        let sha1: String
        let sha256: String
        let sha384: String
        let sha512: String
        var testDescription: String { name }
    }

    /// RFC 6234 §8.5 TEST1, TEST2_1 and TEST2_2 (the 448-bit and 896-bit messages), plus the
    /// empty message (FIPS 180-4 examples, NIST CAVP `ShortMsg` Len = 0).
    static let vectors: [Vector] = [
        Vector(
            name: "empty",
            message: [],
            sha1: "da39a3ee5e6b4b0d3255bfef95601890afd80709",
            sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            sha384: "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b",
            sha512:
                "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        ),
        Vector(
            name: "abc",
            message: Array("abc".utf8),
            sha1: "a9993e364706816aba3e25717850c26c9cd0d89d",
            sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            sha384: "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
            sha512:
                "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        ),
        Vector(
            name: "448-bit message",
            message: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
            sha1: "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
            sha256: "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            sha384: "3391fdddfc8dc7393707a65b1b4709397cf8b1d162af05abfe8f450de5f36bc6b0455a8520bc4e6f5fe95b1fe3c8452b",
            sha512:
                "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c33596fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445"
        ),
        Vector(
            name: "896-bit message",
            message: Array(
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
                    .utf8
            ),
            sha1: "a49b2446a02c645bf419f995b67091253a04a259",
            sha256: "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
            sha384: "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712fcc7c71a557e2db966c3e9fa91746039",
            sha512:
                "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"
        ),
    ]

    @Test("FIPS 180-4 / RFC 6234 known answers", arguments: vectors)
    func knownAnswers(_ vector: Vector) {
        #expect(CryptoTestKit.hex(SHA1.hash(vector.message)) == vector.sha1)
        #expect(CryptoTestKit.hex(SHA256.hash(vector.message)) == vector.sha256)
        #expect(CryptoTestKit.hex(SHA384.hash(vector.message)) == vector.sha384)
        #expect(CryptoTestKit.hex(SHA512.hash(vector.message)) == vector.sha512)
    }

    @Test("SHA-256 of one million 'a' (RFC 6234 TEST3)")
    func millionA() {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(
            CryptoTestKit.hex(SHA256.hash(message))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }

    @Test("digest sizes")
    func sizes() {
        #expect(SHA1.hash([UInt8]()).count == SHA1.byteCount)
        #expect(SHA256.hash([UInt8]()).count == SHA256.byteCount)
        #expect(SHA384.hash([UInt8]()).count == SHA384.byteCount)
        #expect(SHA512.hash([UInt8]()).count == SHA512.byteCount)
        #expect([SHA1.byteCount, SHA256.byteCount, SHA384.byteCount, SHA512.byteCount] == [20, 32, 48, 64])
    }

    /// Every length from 0 to 300 crosses the one-block/two-block padding boundaries of both
    /// block sizes (55/56 and 119/120 bytes, 111/112 and 239/240 bytes).
    @Test("matches OpenSSL for every length 0–300", arguments: [DigestAlgorithm.sha1, .sha256, .sha384, .sha512])
    func matchesOpenSSL(_ algorithm: DigestAlgorithm) throws {
        var generator = CryptoTestKit.Generator(seed: 0x5EED_0000 + UInt64(algorithm.outputSize))
        for length in 0...300 {
            let message = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let expected = try Digest.hash(algorithm, message)
            #expect(Self.swiftHash(algorithm, message) == expected, "length \(length)")
        }
    }

    @Test("slices, offsets and non-contiguous collections hash their elements only")
    func collectionKinds() {
        let base = (0..<400).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let slice = base[37..<331]
        let copy = Array(slice)
        #expect(SHA256.hash(slice) == SHA256.hash(copy))
        #expect(SHA1.hash(slice) == SHA1.hash(copy))
        #expect(SHA384.hash(slice) == SHA384.hash(copy))
        #expect(SHA512.hash(slice) == SHA512.hash(copy))
        // A lazy map is not contiguous, so it takes the copying path.
        let lazy = copy.lazy.map { $0 }
        #expect(SHA256.hash(lazy) == SHA256.hash(copy))
        #expect(SHA512.hash(lazy) == SHA512.hash(copy))
        #expect(SHA1.hash(lazy) == SHA1.hash(copy))
        #expect(SHA384.hash(lazy) == SHA384.hash(copy))
    }

    @Test("OpenSSL digest helper: sizes and algorithm names", arguments: DigestAlgorithm.allCases)
    func openSSLHelper(_ algorithm: DigestAlgorithm) throws {
        let digest = try Digest.hash(algorithm, Array("abc".utf8))
        #expect(digest.count == algorithm.outputSize)
        if algorithm == .sha256 { #expect(try Digest.sha256(Array("abc".utf8)) == digest) }
        if algorithm == .sha384 { #expect(try Digest.sha384(Array("abc".utf8)) == digest) }
        if algorithm == .sha512 { #expect(try Digest.sha512(Array("abc".utf8)) == digest) }
    }

    static func swiftHash(_ algorithm: DigestAlgorithm, _ message: [UInt8]) -> [UInt8] {
        switch algorithm {
        case .sha1: return SHA1.hash(message)
        case .sha256: return SHA256.hash(message)
        case .sha384: return SHA384.hash(message)
        case .sha512: return SHA512.hash(message)
        case .md5, .sha224: return []
        }
    }
}
