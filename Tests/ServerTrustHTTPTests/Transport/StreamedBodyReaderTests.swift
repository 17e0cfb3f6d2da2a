import Foundation
import Testing

@testable import ServerTrustHTTP

/// The reader behind streamed bodies: pieces read in any chunk size come out as their
/// concatenation, a rewind to any position resumes there, and a file that shrinks after the
/// hop started is an error, not a short body.
@Suite("StreamedBodyReader: pieces, chunks, rewinds")
struct StreamedBodyReaderTests {
    static func file(_ bytes: [UInt8]) throws -> String {
        let path = try Lab.temporaryDirectory() + "/piece.bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func drain(_ reader: StreamedBodyReader, chunk: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, capacity: chunk) }
            if count == 0 { return out }
            out += buffer[..<count]
        }
    }

    @Test("any chunk size gives the concatenation; a rewind to any position resumes there", arguments: [1, 7, 4096])
    func chunksAndRewinds(_ chunk: Int) throws {
        let fileBytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let path = try Self.file(fileBytes)
        let body = StreamedBody([.bytes(Array("head".utf8)), .bytes([]), .file(path: path), .bytes(Array("tail".utf8))])
        let whole = Array("head".utf8) + fileBytes + Array("tail".utf8)
        let reader = try StreamedBodyReader(body)
        #expect(reader.size == Int64(whole.count))
        #expect(try Self.drain(reader, chunk: chunk) == whole)
        for position in [0, 3, 4, 5, 2000, 5004, whole.count] {
            #expect(reader.seek(to: Int64(position)))
            #expect(try Self.drain(reader, chunk: chunk) == Array(whole[position...]), "from \(position)")
        }
        #expect(!reader.seek(to: Int64(whole.count + 1)) && !reader.seek(to: -1))
    }

    @Test("a file shorter than when the hop started is a file error; a longer one is read to its old size")
    func fileChangesSize() throws {
        let path = try Self.file([UInt8](repeating: 7, count: 100))
        let shrinking = try StreamedBodyReader(StreamedBody([.file(path: path)]))
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        #expect(throws: HTTPError.self) { _ = try Self.drain(shrinking, chunk: 64) }
        let growing = try StreamedBodyReader(StreamedBody([.file(path: path)]))
        try Data([UInt8](repeating: 9, count: 50)).write(to: URL(fileURLWithPath: path))
        #expect(try Self.drain(growing, chunk: 64) == [UInt8](repeating: 9, count: 3))
    }
}
