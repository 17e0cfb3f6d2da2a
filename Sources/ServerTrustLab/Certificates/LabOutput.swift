internal import Foundation

/// PEM text encoding (RFC 7468), implemented here so output is byte-identical on every
/// platform: 64-column base64 lines, `\n` line endings, trailing newline.
public enum LabPEM {
    /// Encodes DER as one PEM block.
    ///
    /// - Parameters:
    ///   - der: The bytes.
    ///   - label: The label, such as `CERTIFICATE`.
    /// - Returns: The PEM block, ending in a newline.
    public static func encode(_ der: [UInt8], label: String) -> String {
        let body = base64(der)
        var text = "-----BEGIN \(label)-----\n"
        var index = body.startIndex
        while index < body.endIndex {
            let end = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            text += body[index..<end] + "\n"
            index = end
        }
        return text + "-----END \(label)-----\n"
    }

    /// Concatenates certificates as PEM blocks in the given order (leaf first for a chain
    /// file, roots for a CA bundle).
    ///
    /// - Parameter certificates: The certificates.
    /// - Returns: The bundle text.
    public static func bundle(_ certificates: [LabCertificate]) -> String {
        certificates.map(\.pem).joined()
    }

    /// Decodes every PEM block in `text`.
    ///
    /// - Parameter text: PEM text (other lines between blocks are ignored).
    /// - Returns: Each block's label and DER bytes, in order.
    /// - Throws: ``LabError`` on an unterminated block or invalid base64.
    public static func decode(_ text: String) throws -> [(label: String, der: [UInt8])] {
        var blocks: [(label: String, der: [UInt8])] = []
        var label: String?
        var body = ""
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                label = String(line.dropFirst(11).dropLast(5))
                body = ""
            } else if line.hasPrefix("-----END "), let open = label {
                guard let bytes = Data(base64Encoded: body) else {
                    throw LabError.invalid("LabPEM.decode", "invalid base64 in \(open) block")
                }
                blocks.append((open, Array(bytes)))
                label = nil
            } else if label != nil {
                body += line
            }
        }
        if let open = label { throw LabError.invalid("LabPEM.decode", "unterminated \(open) block") }
        return blocks
    }

    private static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var output = ""
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            output.append(alphabet[Int(b0 >> 2)])
            output.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            output.append(index + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : "=")
            output.append(index + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : "=")
            index += 3
        }
        return output
    }
}

/// File output for fixtures that must live on disk (CLI tests, `openssl` cross-checks, demos).
public enum LabFiles {
    /// The encodings a certificate can be written in.
    public enum Format: Sendable, Hashable, CaseIterable {
        /// Binary DER, file extension `.der`.
        case der
        /// PEM text, file extension `.pem`.
        case pem
    }

    /// Writes bytes to `path`, creating parent directories.
    ///
    /// - Parameters:
    ///   - bytes: The content.
    ///   - path: The file path.
    /// - Returns: `path`.
    /// - Throws: ``LabError`` if the file cannot be written.
    @discardableResult
    public static func write(_ bytes: [UInt8], to path: String) throws -> String {
        let url = URL(fileURLWithPath: path)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        } catch {
            throw LabError.invalid("LabFiles.write(\(path))", "\(error)")
        }
        return path
    }

    /// Writes UTF-8 text to `path`, creating parent directories.
    ///
    /// - Parameters:
    ///   - text: The content.
    ///   - path: The file path.
    /// - Returns: `path`.
    /// - Throws: ``LabError`` if the file cannot be written.
    @discardableResult
    public static func write(_ text: String, to path: String) throws -> String {
        try write(Array(text.utf8), to: path)
    }

    /// Writes a certificate as `directory/name.pem` and/or `directory/name.der`.
    ///
    /// - Parameters:
    ///   - certificate: The certificate.
    ///   - name: The base file name without extension.
    ///   - directory: The directory (created if missing).
    ///   - formats: Which encodings to write.
    /// - Returns: The written paths, PEM first.
    /// - Throws: ``LabError`` if a file cannot be written.
    @discardableResult
    public static func write(
        _ certificate: LabCertificate,
        named name: String,
        in directory: String,
        formats: [Format] = [.pem, .der]
    ) throws -> [String] {
        var paths: [String] = []
        if formats.contains(.pem) { paths.append(try write(certificate.pem, to: directory + "/" + name + ".pem")) }
        if formats.contains(.der) { paths.append(try write(certificate.der, to: directory + "/" + name + ".der")) }
        return paths
    }

    /// Writes a PEM bundle of certificates to `path`.
    ///
    /// - Parameters:
    ///   - certificates: The certificates, in file order.
    ///   - path: The file path.
    /// - Returns: `path`.
    /// - Throws: ``LabError`` if the file cannot be written.
    @discardableResult
    public static func writeBundle(_ certificates: [LabCertificate], to path: String) throws -> String {
        try write(LabPEM.bundle(certificates), to: path)
    }
}
