import CertificateParsing
import TrustEvaluation

/// `get`'s client certificate options, as curl spells them (curl(1)):
///
/// - `--cert FILE[:PASSWORD]` (`-E`): "the file name, with the password after a colon"; a
///   colon in the name is written `\:` and a backslash `\\`, as curl's own parser unescapes
///   them.
/// - `--cert-type PEM|DER|P12`: "If not specified, PEM is assumed" by curl; here the file's
///   shape decides when it is not given (PEM text, a DER certificate, else PKCS#12), and when
///   it is given the file must be of that type.
/// - `--key FILE`: the private key of a PEM or DER certificate (PEM or DER; curl's
///   `--key-type` is not needed, the shape decides).
/// - `--pass PHRASE`: curl's "passphrase for the private key", also the PKCS#12 password. As
///   an addition, `env:NAME`, `file:PATH` and `pass:TEXT` (``PasswordSource``) keep it out of
///   argv; a phrase that itself starts with one of those is written `pass:…`.
struct ClientCertificateOptions {
    let certificate: String?
    let type: String?
    let key: String?
    let pass: String?

    /// The identity the options describe, or `nil` without `--cert`.
    /// - Throws: ``CLIError``, one line naming the option and the file.
    func identity() throws -> Identity? {
        guard let certificate else {
            for (name, value) in [("--key", key), ("--cert-type", type), ("--pass", pass)] where value != nil {
                throw CLIError("\(name) needs --cert")
            }
            return nil
        }
        let (path, inlinePassword) = Self.splitCertParameter(certificate)
        if inlinePassword != nil && pass != nil { throw CLIError("--cert FILE:PASSWORD and --pass both give the password: give it once") }
        let password = try inlinePassword ?? pass.map { try PasswordSource.resolve($0, option: "--pass", literalOtherwise: true) }
        return try Self.identity(path, type: type, keyPath: key, password: password)
    }

    /// curl's `--cert` argument split into the file name and the password after the first
    /// unescaped colon (tool_getparam.c `parse_cert_parameter`): `\:` is a colon of the name,
    /// `\\` a backslash, any other backslash stays; an empty password is none.
    static func splitCertParameter(_ text: String) -> (path: String, password: String?) {
        var path = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "\\" {
                let next = text.index(after: index)
                if next < text.endIndex, text[next] == ":" || text[next] == "\\" {
                    path.append(text[next])
                    index = text.index(after: next)
                } else {
                    path.append(character)
                    index = next
                }
                continue
            }
            if character == ":" {
                let password = String(text[text.index(after: index)...])
                return (path, password.isEmpty ? nil : password)
            }
            path.append(character)
            index = text.index(after: index)
        }
        return (path, nil)
    }

    enum FileType: String {
        case pem = "PEM"
        case der = "DER"
        case p12 = "P12"
    }

    static func identity(_ path: String, type: String?, keyPath: String?, password: String?) throws -> Identity {
        let bytes = try read(path, option: "--cert")
        let isPEM = PEMDocument.looksLikePEM(bytes)
        let isDERCertificate = !isPEM && (try? Certificate(derEncoded: bytes)) != nil
        let fileType: FileType
        if let type {
            switch type.uppercased() {
            case "PEM": fileType = .pem
            case "DER": fileType = .der
            case "P12": fileType = .p12
            case "ENG": throw CLIError("--cert-type ENG (an OpenSSL engine) is not supported")
            default: throw CLIError("--cert-type must be PEM, DER or P12, got '\(type)'")
            }
            let actual = isPEM ? "PEM text" : isDERCertificate ? "a DER certificate" : FileKind.describe(bytes) ?? "binary data"
            let matches: Bool
            switch fileType {
            case .pem: matches = isPEM
            case .der: matches = isDERCertificate
            case .p12: matches = !isPEM && !isDERCertificate
            }
            guard matches else { throw CLIError("--cert-type \(fileType.rawValue), but --cert \(path) is \(actual)") }
        } else {
            fileType = isPEM ? .pem : isDERCertificate ? .der : .p12
        }
        if fileType == .p12 {
            if keyPath != nil { throw CLIError("--key is for a PEM or DER --cert: the PKCS#12 file \(path) carries its key") }
            do {
                return try Identity(pkcs12: bytes, password: password ?? "")
            } catch {
                throw CLIError(problem(error, option: "--cert", path: path, bytes: bytes, passwordGiven: password != nil, pkcs12: true))
            }
        }
        let certificates: [Certificate]
        do {
            certificates = try Certificate.load(bytes)
        } catch {
            if let kind = FileKind.describe(bytes) {
                let hint = kind.hasPrefix("a private key") ? " (give the certificate with --cert and its key with --key)" : ""
                throw CLIError("--cert \(path): not a certificate: looks like \(kind)\(hint)")
            }
            throw CLIError("--cert \(path): \(error)")
        }
        let keyBytes: [UInt8]
        let keyOption: String
        if let keyPath {
            keyBytes = try read(keyPath, option: "--key")
            keyOption = "--key \(keyPath)"
        } else if isPEM {
            keyBytes = bytes
            keyOption = "--cert \(path)"
        } else {
            throw CLIError("--cert \(path) is a DER certificate: give its private key with --key FILE")
        }
        let privateKey: PrivateKey
        do {
            if PEMDocument.looksLikePEM(keyBytes) {
                privateKey = try PrivateKey(pemEncoded: String(decoding: keyBytes, as: UTF8.self), password: password)
            } else {
                privateKey = try PrivateKey(derEncoded: keyBytes, password: password)
            }
        } catch {
            if error.code == .missingKey && keyPath == nil {
                throw CLIError("--cert \(path): a certificate without its private key (give the key with --key FILE, or use a PKCS#12 file)")
            }
            throw CLIError(problem(error, option: keyOption, bytes: keyBytes, passwordGiven: password != nil))
        }
        do {
            return try Identity(certificate: certificates[0], privateKey: privateKey, chain: Array(certificates.dropFirst()))
        } catch {
            if error.code == .keyMismatch {
                throw CLIError("--cert \(path): the private key (\(keyOption)) does not belong to the certificate")
            }
            throw CLIError("--cert \(path): \(error.reason)")
        }
    }

    /// A ``KeyError`` in words: what is wrong with the file, not the error's code name.
    static func problem(_ error: KeyError, option: String, path: String? = nil, bytes: [UInt8], passwordGiven: Bool, pkcs12: Bool = false) -> String {
        let subject = path.map { "\(option) \($0)" } ?? option
        switch error.code {
        case .wrongPassword:
            return passwordGiven
                ? "\(subject): wrong password"
                : "\(subject): needs a password (--cert FILE:PASSWORD, or --pass env:NAME or file:PATH)"
        case .malformed:
            // (A file that is what was expected, but damaged, gets the parser's reason.)
            if let kind = FileKind.describe(bytes), !(pkcs12 ? kind == "PKCS#12" : kind.hasPrefix("a private key")) {
                return "\(subject): not \(pkcs12 ? "a certificate or PKCS#12" : "a private key"): looks like \(kind)"
            }
            return "\(subject): unreadable: \(error.reason)"
        case .missingKey: return "\(subject): no private key in it (\(error.reason))"
        case .missingCertificate: return "\(subject): no certificate in it (\(error.reason))"
        case .keyMismatch: return "\(subject): the private key does not belong to the certificate"
        case .unsupported: return "\(subject): not supported: \(error.reason)"
        case .unreadable: return "\(subject): cannot read: \(error.reason)"
        }
    }

    /// The file's bytes; a missing or unreadable file is named with its option.
    static func read(_ path: String, option: String) throws -> [UInt8] {
        do { return try InputFile.read(path) } catch let error as CLIError { throw CLIError("\(option) \(error.message)") }
    }
}
