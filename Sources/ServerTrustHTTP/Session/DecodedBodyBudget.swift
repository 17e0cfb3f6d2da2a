internal import Synchronization

/// The bound on a body that libcurl decodes on its way to a file or a stream
/// (``HTTPSessionConfiguration/maximumDecodedBodySize``): each hop's sink carries one, and the
/// transfer thread asks it before handing on each decoded chunk. Whether the body is decoded
/// at all is settled at its first chunk, when the response head is known: only a response
/// with a content coding libcurl was asked to decode is counted.
final class DecodedBodyBudget: Sendable {
    /// The most decoded bytes.
    let limit: Int

    private struct State {
        /// `nil` until the first chunk; then whether the body is being decoded.
        var decoding: Bool?
        var count = 0
    }

    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether `count` more bytes fit: `false` once the body is decoded and would pass the
    /// limit. With `commit` the bytes are counted; a caller that may be offered the same bytes
    /// again (a paused stream) checks first and counts them with ``add(_:)`` once taken.
    /// - Parameters:
    ///   - count: The chunk's size.
    ///   - commit: Count the bytes when they fit.
    ///   - decoding: Whether the response is being decoded (asked once, at the first chunk).
    func admit(_ count: Int, commit: Bool = true, decoding: () -> Bool) -> Bool {
        state.withLock { state in
            if state.decoding == nil { state.decoding = decoding() }
            guard state.decoding == true else { return true }
            guard state.count + count <= limit else { return false }
            if commit { state.count += count }
            return true
        }
    }

    /// Counts `count` bytes that ``admit(_:commit:decoding:)`` let through uncounted.
    func add(_ count: Int) {
        state.withLock { state in
            if state.decoding == true { state.count += count }
        }
    }

    /// Whether a response with these fields has its body decoded by libcurl: it was asked to
    /// (`Accept-Encoding` sent) and the response names a coding other than `identity`.
    static func isDecoded(_ headers: HTTPHeaders, accepting: Bool) -> Bool {
        guard accepting else { return false }
        return headers.values("Content-Encoding").contains { value in
            value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() != "identity" }
        }
    }
}
