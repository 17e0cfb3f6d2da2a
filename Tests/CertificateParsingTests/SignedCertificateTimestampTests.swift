import CertificateParsing
import ServerTrustLab
import Testing

// SCTs and SCT lists (RFC 6962 §3.2–3.3) built here byte by byte, independently of the parser.

/// TLS presentation-language helpers for hand-built SCTs.
private enum TLS {
    static func u16(_ n: Int) -> [UInt8] { [UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] }
    static func u64(_ n: UInt64) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: n >> (UInt64($0) * 8)) } }
    static func vector16(_ bytes: [UInt8]) -> [UInt8] { u16(bytes.count) + bytes }

    /// A v1 SCT: version, 32-byte log ID, timestamp, extensions, hash, signature algorithm, signature.
    static func sct(
        version: UInt8 = 0, logID: [UInt8] = Array(repeating: 0xAB, count: 32), timestamp: UInt64 = 1_767_225_600_123,
        extensions: [UInt8] = [], hash: UInt8 = 4, signatureAlgorithm: UInt8 = 3, signature: [UInt8] = [0x30, 0x06, 1, 2, 3, 4, 5, 6]
    ) -> [UInt8] {
        [version] + logID + u64(timestamp) + vector16(extensions) + [hash, signatureAlgorithm] + vector16(signature)
    }

    static func list(_ scts: [[UInt8]]) -> [UInt8] { vector16(scts.flatMap(vector16)) }
}

@Suite("Signed certificate timestamps: parsing")
struct SignedCertificateTimestampParsingTests {
    @Test("every field of a v1 SCT is read as sent")
    func fields() throws {
        let logID = (0..<32).map { UInt8($0) }
        let bytes = TLS.sct(logID: logID, timestamp: 0x0102_0304_0506_0708, extensions: [9, 9], hash: 4, signatureAlgorithm: 1, signature: [7, 7, 7])
        let sct = try SignedCertificateTimestamp(serialized: bytes)
        #expect(sct.version == .v1)
        #expect(sct.logID == logID)
        #expect(sct.timestamp == 0x0102_0304_0506_0708)
        #expect(sct.extensions == [9, 9])
        #expect(sct.hashAlgorithm == .sha256)
        #expect(sct.signatureAlgorithm == .rsa)
        #expect(sct.signature == [7, 7, 7])
        #expect(sct.serialized == bytes)
        #expect(sct.timestampSeconds == Int64(0x0102_0304_0506_0708 / 1000))
    }

    @Test("a list keeps its entries in order and the encoder rebuilds it byte for byte")
    func listRoundTrip() throws {
        let first = TLS.sct(timestamp: 1)
        let second = TLS.sct(logID: Array(repeating: 0xCD, count: 32), timestamp: 2, extensions: [0, 5, 0, 0, 0, 0, 0, 7])
        let encoded = TLS.list([first, second])
        let list = try SignedCertificateTimestampList(tlsEncoded: encoded)
        #expect(list.timestamps.map(\.timestamp) == [1, 2])
        #expect(list.timestamps.map(\.serialized) == [first, second])
        #expect(SignedCertificateTimestampList.encode([first, second]) == encoded)
    }

    @Test("the X.509 and OCSP form is the same list inside a DER OCTET STRING")
    func extensionValue() throws {
        let list = TLS.list([TLS.sct()])
        let wrapped = LabDER.octetString(list)
        #expect(try SignedCertificateTimestampList(extensionValue: wrapped) == SignedCertificateTimestampList(tlsEncoded: list))
        #expect(throws: CTEncodingError(.invalidWrapping, at: 0, "")) { try SignedCertificateTimestampList(extensionValue: LabDER.sequence([wrapped])) }
        #expect(throws: CTEncodingError(.invalidWrapping, at: 0, "")) { try SignedCertificateTimestampList(extensionValue: wrapped + [0]) }
        #expect(throws: CTEncodingError(.invalidWrapping, at: 0, "")) { try SignedCertificateTimestampList(extensionValue: list) }
    }

    @Test("an entry of an unknown version or with a broken field is kept as malformed; its neighbours still parse")
    func malformedEntriesStayInTheList() throws {
        let good = TLS.sct()
        let v2 = TLS.sct(version: 1)
        let trailing = TLS.sct() + [0]
        let shortSignature = Array(TLS.sct().dropLast(2))
        let list = try SignedCertificateTimestampList(tlsEncoded: TLS.list([v2, good, trailing, shortSignature]))
        #expect(list.entries.count == 4)
        #expect(list.timestamps.map(\.serialized) == [good])
        let codes = list.entries.compactMap { entry -> CTEncodingError.Code? in
            if case .malformed(_, let error) = entry { return error.code }
            return nil
        }
        #expect(codes == [.unsupportedVersion, .trailingData, .truncated])
        // Offsets point into the list: the unknown version byte is the fourth byte (2 + 2).
        if case .malformed(let bytes, let error) = list.entries[0] {
            #expect(bytes == v2)
            #expect(error.offset == 4)
        }
    }

    struct FramingCase: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let code: CTEncodingError.Code
        var testDescription: String { "\(name) → \(code)" }
    }

    static let framing: [FramingCase] = {
        let entry = TLS.vector16(TLS.sct())
        return [
            FramingCase(name: "no bytes", bytes: [], code: .truncated),
            FramingCase(name: "one length byte", bytes: [0], code: .truncated),
            FramingCase(name: "empty list", bytes: [0, 0], code: .invalidLength),
            FramingCase(name: "list longer than the input", bytes: TLS.u16(entry.count + 1) + entry, code: .truncated),
            FramingCase(name: "bytes after the list", bytes: TLS.u16(entry.count) + entry + [0], code: .trailingData),
            FramingCase(name: "empty SerializedSCT", bytes: TLS.vector16([0, 0]), code: .invalidLength),
            FramingCase(name: "SerializedSCT longer than the list", bytes: TLS.vector16(TLS.u16(200) + [1, 2]), code: .truncated),
            FramingCase(name: "one stray byte after an entry", bytes: TLS.vector16(entry + [7]), code: .truncated),
        ]
    }()

    @Test("a malformed list framing is a typed error", arguments: framing)
    func framingErrors(_ testCase: FramingCase) {
        #expect(throws: CTEncodingError(testCase.code, at: 0, "")) { try SignedCertificateTimestampList(tlsEncoded: testCase.bytes) }
    }

    @Test("a single SCT is refused when truncated anywhere, and a LogID is always 32 bytes")
    func truncations() {
        let bytes = TLS.sct(extensions: [1, 2, 3])
        for length in 0..<bytes.count {
            #expect(throws: CTEncodingError.self) { try SignedCertificateTimestamp(serialized: Array(bytes.prefix(length))) }
        }
    }

    @Test("fuzz: every one-byte change and truncation of a list ends in a value or a typed error, never a trap")
    func mutations() {
        let list = TLS.list([TLS.sct(extensions: [0, 5, 0, 0, 0, 0, 0, 1]), TLS.sct(timestamp: 9)])
        var generator = SeededGenerator(seed: 26)
        for index in list.indices {
            for _ in 0..<8 {
                var mutated = list
                mutated[index] = UInt8.random(in: 0...255, using: &generator)
                _ = try? SignedCertificateTimestampList(tlsEncoded: mutated)
                _ = try? SignedCertificateTimestampList(tlsEncoded: mutated.prefix(index))
            }
        }
        for _ in 0..<2000 {
            let random = (0..<Int.random(in: 0...120, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? SignedCertificateTimestampList(tlsEncoded: random)
            _ = try? SignedCertificateTimestamp(serialized: random)
        }
    }

    @Test("the list encoder refuses what it cannot encode")
    func encoderLimits() {
        #expect(SignedCertificateTimestampList.encode([]) == nil)
        #expect(SignedCertificateTimestampList.encode([[]]) == nil)
        #expect(SignedCertificateTimestampList.encode([Array(repeating: 1, count: 0x1_0000)]) == nil)
        #expect(SignedCertificateTimestampList.encode(Array(repeating: Array(repeating: 1, count: 40_000), count: 2)) == nil)
    }
}

/// A deterministic generator for the fuzz loops (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Signed certificate timestamps: log entries")
struct CTLogEntryTests {
    private static func issuer() throws -> LabIssuer {
        let key = try LabKey.shared(.p256, slot: 600)
        let root = try LabCertificate.issue(
            LabCertificateSpec(subject: LabName([("CN", "CT entry test CA")]), extensions: [.basicConstraints(ca: true), .subjectKeyIdentifier()]),
            subjectKey: key)
        return LabIssuer(certificate: root, key: key)
    }

    /// The same leaf issued twice: with `extensions`, and with `extensions` minus the SCT list.
    private static func pair(_ extensions: [LabExtension]) throws -> (withList: Certificate, withoutList: Certificate, issuer: Certificate) {
        let issuer = try issuer()
        let key = try LabKey.shared(.p256, slot: 601)
        var spec = LabCertificateSpec(subject: LabName([("CN", "leaf.example")]), serial: [0x11, 0x22, 0x33], extensions: extensions)
        let withList = try LabCertificate.issue(spec, subjectKey: key, issuer: issuer)
        spec.extensions = extensions.filter { $0.oid != "1.3.6.1.4.1.11129.2.4.2" }
        let withoutList = try LabCertificate.issue(spec, subjectKey: key, issuer: issuer)
        return (
            try Certificate(derEncoded: withList.der), try Certificate(derEncoded: withoutList.der),
            try Certificate(derEncoded: issuer.certificate.der)
        )
    }

    /// SCT list payloads whose removal moves the TBSCertificate, the `[3]` wrapper and the
    /// extension SEQUENCE across the DER short/long length boundaries (127/128, 255/256 bytes).
    static let payloadSizes = [1, 40, 90, 100, 120, 127, 128, 200, 255, 256, 300, 1000]

    @Test("the precertificate TBS is the certificate's TBS without the SCT list, byte for byte", arguments: payloadSizes)
    func precertificateTBS(_ size: Int) throws {
        let list: [UInt8] = Array(repeating: 0x5A, count: size)
        let (withList, withoutList, issuer) = try Self.pair([
            .basicConstraints(ca: false), .signedCertificateTimestamps(list), .subjectAltName([.dns("leaf.example")]),
        ])
        let entry = try CTLogEntry.precertificate(withList, issuer: issuer)
        #expect(entry.type == .precertificate)
        #expect(entry.certificateBytes == Array(withoutList.tbsBytes))
        #expect(entry.issuerKeyHash == SHA256.hash(issuer.subjectPublicKeyInfo.derBytes))
    }

    @Test("the SCT list as the first, last or only extension")
    func positions() throws {
        let list: [UInt8] = [0, 3, 0, 1, 9]
        for extensions: [LabExtension] in [
            [.signedCertificateTimestamps(list), .basicConstraints(ca: false)],
            [.basicConstraints(ca: false), .keyUsage([.digitalSignature]), .signedCertificateTimestamps(list)],
            [.signedCertificateTimestamps(list)],
        ] {
            let (withList, withoutList, issuer) = try Self.pair(extensions)
            let entry = try CTLogEntry.precertificate(withList, issuer: issuer)
            // The only extension gone, `extensions [3]` is omitted: it is SIZE (1..MAX).
            #expect(entry.certificateBytes == Array(withoutList.tbsBytes))
        }
    }

    @Test("a certificate without an SCT list keeps its TBS; an x509 entry is the whole certificate")
    func noList() throws {
        let (_, withoutList, issuer) = try Self.pair([.basicConstraints(ca: false)])
        #expect(try CTLogEntry.precertificate(withoutList, issuer: issuer).certificateBytes == Array(withoutList.tbsBytes))
        let x509 = try CTLogEntry.x509(withoutList)
        #expect(x509.type == .x509)
        #expect(x509.issuerKeyHash == nil)
        #expect(x509.certificateBytes == withoutList.derBytes)
    }

    @Test("the signed data follows RFC 6962 §3.2 field by field")
    func signedData() throws {
        let (withList, _, issuer) = try Self.pair([.signedCertificateTimestamps([0, 1, 2])])
        let sct = try SignedCertificateTimestamp(serialized: TLS.sct(timestamp: 0x0A0B, extensions: [0xEE]))
        let x509 = try CTLogEntry.x509(withList)
        let u24 = { (n: Int) -> [UInt8] in [UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] }
        #expect(sct.signedData(for: x509) == [0, 0] + TLS.u64(0x0A0B) + [0, 0] + u24(withList.derBytes.count) + withList.derBytes + [0, 1, 0xEE])
        let precert = try CTLogEntry.precertificate(withList, issuer: issuer)
        let tbs = precert.certificateBytes
        #expect(
            sct.signedData(for: precert)
                == [0, 0] + TLS.u64(0x0A0B) + [0, 1] + SHA256.hash(issuer.subjectPublicKeyInfo.derBytes) + u24(tbs.count) + tbs + [0, 1, 0xEE])
    }
}
