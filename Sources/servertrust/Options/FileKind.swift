import CertificateParsing

/// What a file that should hold a certificate (or a key) holds instead, in words a user
/// recognises: "not a certificate: looks like text" rather than the parser's `DER truncated at
/// byte 0`, which is true but says nothing about the mistake (a README, a key or a `.p12` given
/// to `--cacert`).
enum FileKind {
    /// A short description of `bytes` when they are recognisably something other than a
    /// certificate (`"text"`, `"PKCS#12"`, `"a private key"`, …), or `nil` when they may be a
    /// certificate gone wrong, whose parser error is then the better message.
    static func describe(_ bytes: [UInt8]) -> String? {
        if bytes.isEmpty { return "an empty file" }
        if PEMDocument.looksLikePEM(bytes) {
            // A PEM file that fails to parse as PEM is a PEM problem: the parser names the line.
            guard let documents = try? PEMDocument.parseAll(String(decoding: bytes, as: UTF8.self)) else { return nil }
            let labels = documents.map(\.label)
            if labels.contains(where: { $0 == "CERTIFICATE" || $0 == "X509 CERTIFICATE" }) { return nil }
            guard let label = labels.first else { return nil }
            return pemLabel(label)
        }
        if let der = derShape(bytes) { return der }
        if isText(bytes) { return "text" }
        return nil
    }

    /// The PEM labels of RFC 7468 §4 onwards, and OpenSSL's traditional key labels.
    static func pemLabel(_ label: String) -> String {
        switch label {
        case "PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY":
            return "a private key (PEM \(label))"
        case "PUBLIC KEY", "RSA PUBLIC KEY": return "a public key (PEM \(label))"
        case "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST": return "a certificate request (PEM \(label))"
        case "X509 CRL": return "a certificate revocation list (PEM X509 CRL)"
        case "PKCS7", "CMS": return "PKCS#7 (PEM \(label); extract the certificates with 'openssl pkcs7 -print_certs')"
        default: return "PEM \(label)"
        }
    }

    /// Recognises the DER (or BER) shapes users confuse with certificates by their first
    /// fields, without a full parse: PKCS#12 (RFC 7292: `SEQUENCE { INTEGER 3, …}`), private
    /// keys (PKCS#8, PKCS#1 and SEC 1 start with `INTEGER 0` or `1`), a SubjectPublicKeyInfo.
    static func derShape(_ bytes: [UInt8]) -> String? {
        guard bytes.count > 4, bytes[0] == 0x30 else { return nil }
        var index = 1
        let length = bytes[index]
        index += 1
        if length & 0x80 != 0 && length != 0x80 { index += Int(length & 0x7F) }
        guard index + 3 <= bytes.count else { return nil }
        if bytes[index] == 0x02 && bytes[index + 1] == 0x01 {
            switch bytes[index + 2] {
            case 3: return "PKCS#12"
            case 0, 1: return "a private key (DER)"
            default: return nil
            }
        }
        if (try? SubjectPublicKeyInfo(derEncoded: bytes)) != nil { return "a public key (DER)" }
        return nil
    }

    /// UTF-8 with no control characters but tab, line feed and carriage return.
    static func isText(_ bytes: [UInt8]) -> Bool {
        guard let text = String(validating: bytes, as: UTF8.self) else { return false }
        return text.unicodeScalars.allSatisfy { scalar in
            (scalar.value >= 0x20 && scalar.value != 0x7F) || scalar == "\t" || scalar == "\n" || scalar == "\r"
        }
    }
}

extension FileKind {
    /// The certificates of a PEM or DER file, for every command that reads one (`inspect`,
    /// `pins`, `evaluate`, and the certificate options of `get`). A file that is something
    /// else says what it looks like ("not a certificate: looks like text", "… PKCS#12"), not
    /// which DER element the parser stumbled on; a certificate gone wrong keeps the parser's
    /// message, which names the byte.
    /// - Parameters:
    ///   - path: The file.
    ///   - option: The option that named it (`--cacert`), for messages; `nil` for a positional.
    ///   - tolerant: Read a local file the user trusts (`--pinned-cert`, `inspect FILE`) as
    ///     `SecurityPolicy.loadCertificates(atPath:)` reads pinned certificates, accepting the
    ///     signatureAlgorithm encoding quirk of AFNetworking's and Alamofire's test
    ///     certificates; each such certificate is noted on stderr.
    static func certificates(_ path: String, option: String? = nil, tolerant: Bool? = nil) throws -> [Certificate] {
        let prefix = option.map { $0 + " " } ?? ""
        let bytes: [UInt8]
        do { bytes = try InputFile.read(path) } catch let error as CLIError { throw CLIError(prefix + error.message) }
        let tolerance: Certificate.ParsingTolerance = (tolerant ?? (option == "--pinned-cert")) ? .signatureAlgorithmParameterEncoding : []
        do {
            let certificates = try Certificate.load(bytes, tolerating: tolerance)
            for (index, certificate) in certificates.enumerated() {
                for deviation in certificate.toleratedDeviations {
                    Console.writeStderr("servertrust: note: \(prefix)\(path): certificate \(index + 1): \(deviation)")
                }
            }
            return certificates
        } catch {
            if let kind = describe(bytes) { throw CLIError("\(prefix)\(path): not a certificate: looks like \(kind)") }
            throw CLIError("\(prefix)\(path): \(error)")
        }
    }
}
