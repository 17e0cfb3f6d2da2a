import CertificateParsing
import Synchronization

/// Certificates parsed from the DER that peers served, found again by their exact bytes.
///
/// A server sends the same chain on every connection, new or resumed, and parsing it is about
/// 44 k instructions per certificate: a tenth of a resumed connection's client cost, which
/// re-decides the chain the session kept. `Certificate(derEncoded:)` is a pure function of
/// the bytes, so the certificate parsed the first time is the one the same bytes parse to
/// every time after: this keeps parse results only, never a decision, a time check or a
/// policy, and a parse error is not kept (the bytes are parsed again and fail again).
///
/// Entries are found by the whole DER: Swift's per-process seeded hash picks the bucket
/// (a peer cannot aim collisions at it), then the bytes are compared in full. Reaching
/// ``capacity`` empties the cache, so a peer sending endless fresh certificates holds the
/// memory of at most that many.
final class ParsedCertificateCache: Sendable {
    /// The cache every session's transport reads served chains through.
    static let shared = ParsedCertificateCache()

    /// More distinct certificates than a process sees between restarts in normal use.
    static let capacity = 512

    /// The DER bytes as a dictionary key: hashed and compared over the raw buffer, which
    /// costs a few instructions per byte where `[UInt8]`'s own conformance hashes and
    /// compares element by element.
    private struct DER: Hashable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        static func == (a: DER, b: DER) -> Bool { a.bytes[...].bytesEqual(b.bytes[...]) }
    }

    private let table = Mutex<[DER: Certificate]>([:])

    /// The certificate `der` encodes: the one parsed before from the same bytes, or a new parse.
    ///
    /// - Parameter der: One certificate's DER, as the peer sent it.
    /// - Returns: The parsed certificate.
    /// - Throws: ``/CertificateParsing/DERError`` from the parse, exactly as
    ///   `Certificate(derEncoded:)` throws it.
    func certificate(_ der: [UInt8]) throws(DERError) -> Certificate {
        let key = DER(bytes: der)
        if let known = table.withLock({ $0[key] }) { return known }
        let parsed = try Certificate(derEncoded: der)
        table.withLock { table in
            if table.count >= Self.capacity { table.removeAll() }
            table[key] = parsed
        }
        return parsed
    }

    /// How many certificates are held (for tests).
    var count: Int { table.withLock { $0.count } }
}
