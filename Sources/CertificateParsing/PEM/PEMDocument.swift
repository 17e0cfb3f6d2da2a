/// One PEM block (RFC 7468): its label and the decoded DER bytes.
public struct PEMDocument: Hashable, Sendable {
    /// The label between `BEGIN ` and the dashes, e.g. `CERTIFICATE`, `PRIVATE KEY`.
    public let label: String
    /// The base64-decoded content.
    public let derBytes: [UInt8]
    /// 1-based line number of the `-----BEGIN` line in the input.
    public let line: Int

    /// Creates a document (for encoding).
    public init(label: String, derBytes: [UInt8], line: Int = 1) {
        self.label = label
        self.derBytes = derBytes
        self.line = line
    }

    /// The PEM text: 64-character base64 lines between the encapsulation boundaries.
    public var pemString: String {
        let encoded = Base64.encode(derBytes)
        var out = "-----BEGIN \(label)-----\n"
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let end = encoded.index(index, offsetBy: 64, limitedBy: encoded.endIndex) ?? encoded.endIndex
            out += encoded[index..<end]
            out += "\n"
            index = end
        }
        out += "-----END \(label)-----\n"
        return out
    }

    /// Parses every PEM block in `text`.
    ///
    /// Text outside blocks is ignored, as RFC 7468 §2 allows ("explanatory text", e.g. the
    /// output of `openssl x509 -text`). Inside a block, RFC 1421 headers (`Proc-Type:`, …) are
    /// rejected rather than silently dropped, since they mean the content is encrypted; base64
    /// must be valid with correct padding; the END label must match the BEGIN label.
    /// - Throws: ``PEMError`` naming the line.
    public static func parseAll(_ text: String) throws(PEMError) -> [PEMDocument] {
        var documents: [PEMDocument] = []
        var lineNumber = 0
        // The open block: its label, BEGIN line number and the offset where its body starts.
        var open: (label: String, line: Int, bodyStart: Int)?
        let bytes = Array(text.utf8)
        var lineStart = 0
        while lineStart <= bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            lineNumber += 1
            defer { lineStart = lineEnd + 1 }
            // Boundaries start with five dashes; only those lines need a closer look.
            guard lineEnd - lineStart >= 10, bytes[lineStart] == UInt8(ascii: "-") else { continue }
            var line = bytes[lineStart..<lineEnd]
            while let last = line.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") {
                line = line.dropLast()
            }
            guard let (label, isBegin) = boundary(line) else { continue }
            if isBegin {
                if let current = open {
                    throw PEMError(.missingEnd, line: current.line, "BEGIN \(current.label) has no END line before line \(lineNumber)")
                }
                open = (label, lineNumber, lineEnd + 1)
                continue
            }
            guard let current = open else {
                throw PEMError(.unexpectedEnd, line: lineNumber, "END \(label) without a BEGIN line")
            }
            guard current.label == label else {
                throw PEMError(.labelMismatch, line: lineNumber, "END \(label) closes BEGIN \(current.label) (line \(current.line))")
            }
            let body = bytes[min(current.bodyStart, lineStart)..<lineStart]
            // RFC 1421 headers ("Proc-Type: 4,ENCRYPTED") mean encrypted content; base64 has no
            // colon, so any colon in the body is a header.
            if body.contains(UInt8(ascii: ":")) {
                throw PEMError(.unsupportedHeaders, line: current.line + 1, "the \(current.label) block has RFC 1421 headers (encrypted PEM is not supported)")
            }
            guard let der = Base64.decode(body) else {
                throw PEMError(.invalidBase64, line: current.line, "the \(label) block's base64 is invalid")
            }
            guard !der.isEmpty else {
                throw PEMError(.invalidBase64, line: current.line, "the \(label) block is empty")
            }
            documents.append(PEMDocument(label: label, derBytes: der, line: current.line))
            open = nil
        }
        if let current = open {
            throw PEMError(.missingEnd, line: current.line, "BEGIN \(current.label) has no END line")
        }
        return documents
    }

    /// Parses `text`, which must hold exactly one block.
    public init(pemEncoded text: String) throws(PEMError) {
        let all = try PEMDocument.parseAll(text)
        guard all.count == 1 else {
            throw PEMError(.noBlock, line: 1, all.isEmpty ? "no PEM block found" : "expected one PEM block, found \(all.count)")
        }
        self = all[0]
    }

    /// Whether `bytes` looks like PEM text (contains a BEGIN line) rather than DER.
    public static func looksLikePEM(_ bytes: [UInt8]) -> Bool {
        let marker = Array("-----BEGIN ".utf8)
        guard bytes.count >= marker.count else { return false }
        for start in 0...(bytes.count - marker.count) where bytes[start] == marker[0] {
            if bytes[start..<(start + marker.count)].elementsEqual(marker) { return true }
        }
        return false
    }

    /// Returns (label, isBegin) when `line` is an encapsulation boundary.
    private static func boundary(_ line: ArraySlice<UInt8>) -> (String, Bool)? {
        let dashes = Array("-----".utf8)
        guard line.count >= 10, line.prefix(5).elementsEqual(dashes), line.suffix(5).elementsEqual(dashes) else { return nil }
        let inner = line.dropFirst(5).dropLast(5)
        let begin = Array("BEGIN ".utf8)
        let end = Array("END ".utf8)
        if inner.starts(with: begin) {
            return (String(decoding: inner.dropFirst(begin.count), as: UTF8.self), true)
        }
        if inner.starts(with: end) {
            return (String(decoding: inner.dropFirst(end.count), as: UTF8.self), false)
        }
        return nil
    }
}

/// A malformed PEM file, with the 1-based line where the problem is.
public struct PEMError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public enum Code: String, Hashable, Sendable {
        /// A `-----BEGIN …-----` line with no matching END line before the file ends or the next BEGIN.
        case missingEnd
        /// An `-----END …-----` line with no open block.
        case unexpectedEnd
        /// An END line whose label is not its BEGIN line's (RFC 7468 §2 requires the same label).
        case labelMismatch
        /// A block whose text is not strict base64 (RFC 4648 §4: alphabet, padding, zero pad bits), or
        /// is empty.
        case invalidBase64
        /// RFC 1421 headers inside a block (`Proc-Type: 4,ENCRYPTED`): a traditionally encrypted key,
        /// which RFC 7468 does not allow and this reader does not decrypt.
        case unsupportedHeaders
        /// No block of the kind required: none at all, only other labels, or more than one where one
        /// was required.
        case noBlock
        /// A label refused on purpose where certificates are read: `TRUSTED CERTIFICATE`, whose
        /// OpenSSL trust settings may restrict the certificate and would be ignored.
        case unexpectedLabel
    }

    /// The kind of problem; errors compare by it alone, as ``DERError`` does.
    public let code: Code
    /// The 1-based line of the problem (for a problem inside a block, usually its BEGIN line).
    public let line: Int
    /// Human-readable detail.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, line: Int, _ reason: String) {
        self.code = code
        self.line = line
        self.reason = reason
    }

    /// Errors are equal when their ``code`` is, whatever the line and reason.
    public static func == (lhs: PEMError, rhs: PEMError) -> Bool { lhs.code == rhs.code }
    /// Hashes the ``code`` that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    /// One line for people: `PEM <code> at line <line>: <reason>`.
    public var description: String { "PEM \(code.rawValue) at line \(line): \(reason)" }
}

/// Standard base64 (RFC 4648 §4) without line length rules; strict padding.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 0–63: the digit's value; 0xFE: whitespace (skipped); 0xFF: anything else.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        for c in [UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t")] { table[Int(c)] = 0xFE }
        return table
    }()

    /// Encodes bytes as standard base64 with padding.
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        if let result = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return result }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    /// The encoder proper, over contiguous bytes: called across modules, the generic entry
    /// point is not specialized, and stepping its iterator through witness tables cost about
    /// 400 instructions per byte (a pin's base64 in every decision record).
    static func encode(buffer bytes: UnsafeBufferPointer<UInt8>) -> String {
        alphabet.withUnsafeBufferPointer { alphabet in
            String(unsafeUninitializedCapacity: (bytes.count + 2) / 3 * 4) { out in
                var written = 0
                var index = 0
                while index < bytes.count {
                    let b0 = bytes[index]
                    let b1: UInt8? = index + 1 < bytes.count ? bytes[index + 1] : nil
                    let b2: UInt8? = index + 2 < bytes.count ? bytes[index + 2] : nil
                    out[written] = alphabet[Int(b0 >> 2)]
                    out[written + 1] = alphabet[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)]
                    out[written + 2] = b1 == nil ? UInt8(ascii: "=") : alphabet[Int(((b1 ?? 0) & 0x0F) << 2 | (b2 ?? 0) >> 6)]
                    out[written + 3] = b2 == nil ? UInt8(ascii: "=") : alphabet[Int((b2 ?? 0) & 0x3F)]
                    written += 4
                    index += 3
                }
                return written
            }
        }
    }

    /// Decodes base64, ignoring ASCII whitespace. Returns `nil` on any other non-alphabet
    /// character, a bad length, misplaced padding, or non-zero padding bits.
    public static func decode<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        if let result = text.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return result }
        return Array(text).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    /// The decoder proper, over contiguous bytes (trust bundles are hundreds of kilobytes of
    /// base64, so this loop is what loading the system roots mostly costs).
    static func decode(buffer text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        decodeTable.withUnsafeBufferPointer { table -> [UInt8]? in
            var out = [UInt8](repeating: 0, count: text.count / 4 * 3 + 3)
            var written = 0
            var quad: UInt32 = 0
            var count = 0
            var padding = 0
            let ok = out.withUnsafeMutableBufferPointer { output -> Bool in
                for c in text {
                    let v = table[Int(c)]
                    if v < 64 {
                        guard padding == 0 else { return false }
                        quad = quad << 6 | UInt32(v)
                        count += 1
                    } else if v == 0xFE {
                        continue  // whitespace
                    } else if c == UInt8(ascii: "=") {
                        padding += 1
                        guard padding <= 2 else { return false }
                        quad <<= 6
                        count += 1
                    } else {
                        return false
                    }
                    if count == 4 {
                        output[written] = UInt8(truncatingIfNeeded: quad >> 16)
                        output[written + 1] = UInt8(truncatingIfNeeded: quad >> 8)
                        output[written + 2] = UInt8(truncatingIfNeeded: quad)
                        written += 3 - min(padding, 2)
                        // Padding bits must be zero (RFC 4648 §3.5), so each text has one decoding.
                        if padding == 1 && quad & 0xFF != 0 { return false }
                        if padding == 2 && quad & 0xFFFF != 0 { return false }
                        quad = 0
                        count = 0
                        if padding > 0 { padding = 3 }  // nothing may follow a padded quad
                    }
                }
                return count == 0
            }
            guard ok else { return nil }
            out.removeLast(out.count - written)
            return out
        }
    }
}
