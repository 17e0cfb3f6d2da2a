import CertificateParsing
import Foundation
import ServerTrust
import Testing
import TrustEvaluation

#if canImport(Glibc)
    import Glibc
#endif

/// The pin-set store on disk: crash-safe saves, and a store that was torn, truncated or
/// tampered with detected at start by verifying every signature again.
@Suite("signed pin sets: the store")
struct PinSetStoreTests {
    typealias F = PinSetFixture

    static func directory() throws -> String {
        let path = NSTemporaryDirectory() + "servertrust-pinset-store-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func restore(_ store: PinSetStore) throws -> (serial: Int64, problems: [PinSetError]) {
        let restored = store.restore(rules: try F.rules())
        return (restored.chain.serial, restored.problems)
    }

    @Test("a store path that is a FIFO nobody writes to is a problem at once, not a start that waits for a writer")
    func fifoStore() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/pinset.json"
        #expect(mkfifo(path, 0o600) == 0)
        // Were the open to wait, a writer after 10 s lets it go on (and the test fail on time).
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) {
            let writer = open(path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        let start = ContinuousClock.now
        let loaded = PinSetStore(path: path).load()
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(loaded.generations.isEmpty && loaded.problems.count == 1)
        #expect(loaded.problems.first?.description.contains("not a regular file") == true, "\(loaded.problems)")
    }

    @Test("a save writes the store (mode 0600) and keeps the previous generation; the etag comes back")
    func saveAndLoad() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = PinSetStore(path: directory + "/pinset.json")
        try store.save([try F.sign(serial: 1)], etag: "\"one\"")
        try store.save([try F.sign(serial: 2)], etag: "\"two\"")
        let (generations, problems) = store.load()
        #expect(problems.isEmpty && generations.map(\.etag) == ["\"two\"", "\"one\""])
        let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try Self.restore(store).serial == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["pinset.json", "pinset.json.previous"])
    }

    @Test("a crash between write and rename: the half-written temporary file is ignored and removed, the old store stays")
    func crashBeforeRename() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = PinSetStore(path: directory + "/pinset.json")
        try store.save([try F.sign(serial: 1)], etag: nil)
        // What the next save had written when the process died: half of a newer store.
        let newer = Array("{\"format\": 1, \"etag\": null, \"documents\": [\"\(Base64.encode(try F.sign(serial: 2)))\"]}".utf8)
        try Data(newer.prefix(newer.count / 2)).write(to: URL(fileURLWithPath: store.path + ".tmp-4242-17"))
        let (serial, problems) = try Self.restore(store)
        #expect(serial == 1 && problems.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: store.path + ".tmp-4242-17"))
    }

    @Test("a crash between the two renames: only the previous generation exists, and it is used")
    func crashBetweenRenames() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = PinSetStore(path: directory + "/pinset.json")
        try store.save([try F.sign(serial: 1)], etag: nil)
        try store.save([try F.sign(serial: 2)], etag: nil)
        try FileManager.default.moveItem(atPath: store.path, toPath: store.previousPath + ".moved")
        try FileManager.default.removeItem(atPath: store.previousPath)
        try FileManager.default.moveItem(atPath: store.previousPath + ".moved", toPath: store.previousPath)
        #expect(try Self.restore(store).serial == 2)
    }

    /// Damage to the newest store file, and what the start must fall back to.
    static let damage: [(name: String, damage: @Sendable ([UInt8]) -> [UInt8])] = [
        ("torn: cut mid-write", { Array($0.prefix($0.count / 2)) }),
        ("truncated to nothing", { _ in [] }),
        (
            "one byte of a stored signature flipped",
            { bytes in
                // The stored envelope is base64 inside the store: decode, flip, encode back.
                var text = String(decoding: bytes, as: UTF8.self)
                guard let start = text.range(of: "[\""), let end = text.range(of: "\"]") else { return bytes }
                let encoded = String(text[start.upperBound..<end.lowerBound])
                guard var envelope = Base64.decode(Array(encoded.utf8)) else { return bytes }
                envelope[envelope.count - 6] ^= 0x04
                text.replaceSubrange(start.upperBound..<end.lowerBound, with: Base64.encode(envelope))
                return Array(text.utf8)
            }
        ),
        (
            "a document signed by an attacker's key put in its place",
            { bytes in
                guard let forged = try? F.sign(serial: 9, key: F.attacker) else { return bytes }
                return Array("{\"format\": 1, \"etag\": null, \"documents\": [\"\(Base64.encode(forged))\"]}".utf8)
            }
        ),
        ("not a store", { _ in Array("{\"format\": 2}".utf8) }),
    ]

    @Test("a damaged or tampered store is detected at start and ignored in favour of the last good generation", arguments: 0..<5)
    func damagedStore(index: Int) throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = PinSetStore(path: directory + "/pinset.json")
        try store.save([try F.sign(serial: 1)], etag: nil)
        try store.save([try F.sign(serial: 2)], etag: nil)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.path)))
        try Data(Self.damage[index].damage(bytes)).write(to: URL(fileURLWithPath: store.path))
        let (serial, problems) = try Self.restore(store)
        #expect(serial == 1, "\(Self.damage[index].name): the previous generation is the last good document")
        #expect(!problems.isEmpty && problems.allSatisfy { $0.kind == .storeUnusable }, "\(Self.damage[index].name): \(problems)")
        // With both generations damaged, nothing stored counts: the baseline.
        try Data(Self.damage[index].damage(bytes)).write(to: URL(fileURLWithPath: store.previousPath))
        #expect(try Self.restore(store).serial == 0, "\(Self.damage[index].name)")
    }

    @Test("a save that cannot be written leaves the old store untouched and says why")
    func saveFailure() throws {
        let store = PinSetStore(path: "/proc/servertrust-no-such-dir/pinset.json")
        let error = #expect(throws: PinSetError.self) { try store.save([try F.sign(serial: 1)], etag: nil) }
        #expect(error?.kind == .storeWriteFailed)
    }
}
