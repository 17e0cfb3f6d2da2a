import CertificateParsing
import Foundation
import Testing

/// Every certificate of the system CA bundle, compared field by field with `openssl x509`.
///
/// Normalisations, all on the openssl side unless stated:
/// - serial: openssl prints uppercase hex of the magnitude; compared case-insensitively.
/// - dates: `May  5 09:37:37 2011 GMT` is rewritten as RFC 3339 (`2011-05-05T09:37:37Z`).
/// - fingerprint: colons removed, compared case-insensitively.
/// - SPKI pin: the `-pubkey` PEM is decoded with Foundation's base64, hashed by `openssl dgst
///   -sha256`, and the digest base64-encoded with Foundation; the library's SHA-256 and base64
///   are not used on the reference side.
/// - key: `rsaEncryption`/`id-ecPublicKey`/`ED25519`/`ED448` map to `RSA`/`EC`/`Ed25519`/`Ed448`.
/// - subject: `-nameopt esc_2253,utf8,sep_comma_plus,dn_rev,sname` — RFC 2253 escaping of
///   specials, strings converted to raw UTF-8 (not `\XX` escaped as `-nameopt RFC2253` would),
///   RDNs reversed, short names; it is compared verbatim with `DistinguishedName.rfc4514`.
/// - SAN: openssl's `-ext subjectAltName` line is compared with the library's names rendered
///   the way OpenSSL prints them (see ``openSSLStyle(_:)``): `IP Address:` instead of `IP:`
///   (IPv6 as eight uppercase groups), and `DirName:` in OpenSSL's one-line `/type=value` form.
@Suite("System CA bundle agrees with openssl")
struct SystemBundleTests {
    static let bundlePath = "/etc/ssl/certs/ca-certificates.crt"

    /// The text of each `CERTIFICATE` block, split by simple line matching (not by the parser
    /// under test).
    static func blocks(_ text: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("-----BEGIN CERTIFICATE-----") { current = [] }
            if current != nil { current?.append(line) }
            if line.hasPrefix("-----END CERTIFICATE-----"), let lines = current {
                blocks.append(lines.joined(separator: "\n") + "\n")
                current = nil
            }
        }
        return blocks
    }

    @Test("Certificate.load parses the whole bundle", .enabled(if: FileManager.default.fileExists(atPath: bundlePath)))
    func loadWholeBundle() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.bundlePath)))
        let text = String(decoding: bytes, as: UTF8.self)
        let certificates = try Certificate.load(bytes)
        #expect(certificates.count == Self.blocks(text).count)
        #expect(certificates.count > 50)
        #expect(Set(certificates).count == certificates.count, "no duplicates")
        // Roots: self-issued, and a CA wherever basicConstraints is present.
        for certificate in certificates {
            #expect(certificate.isSelfIssued || certificate.issuer.derBytes.count > 0, "\(certificate.subject)")
            if let constraints = certificate.extensions.basicConstraints {
                #expect(constraints.isCertificateAuthority, "\(certificate.subject)")
            }
            #expect(certificate.extensions.unknownCritical.isEmpty, "\(certificate.subject): unknown critical extension")
        }
    }

    /// What openssl reported for one certificate.
    struct OpenSSLFields {
        var serial = ""
        var notBefore = ""
        var notAfter = ""
        var fingerprint = ""
        var subject = ""
        var subjectAltName: String?
        var keyAlgorithm = ""
        var keyBits: Int?
        var publicKeyPEM = ""

        init(_ text: Substring) {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            var index = 0
            var inKey = false
            while index < lines.count {
                let line = lines[index]
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if inKey {
                    publicKeyPEM += line + "\n"
                    if line == "-----END PUBLIC KEY-----" { inKey = false }
                } else if line.hasPrefix("serial=") {
                    serial = String(line.dropFirst("serial=".count))
                } else if line.hasPrefix("notBefore=") {
                    notBefore = String(line.dropFirst("notBefore=".count))
                } else if line.hasPrefix("notAfter=") {
                    notAfter = String(line.dropFirst("notAfter=".count))
                } else if line.hasPrefix("sha256 Fingerprint=") {
                    fingerprint = String(line.dropFirst("sha256 Fingerprint=".count))
                } else if line.hasPrefix("subject=") {
                    subject = String(line.dropFirst("subject=".count))
                } else if line.hasPrefix("X509v3 Subject Alternative Name:"), index + 1 < lines.count {
                    subjectAltName = lines[index + 1].trimmingCharacters(in: .whitespaces)
                    index += 1
                } else if trimmed.hasPrefix("Public Key Algorithm: ") {
                    keyAlgorithm = String(trimmed.dropFirst("Public Key Algorithm: ".count))
                } else if trimmed.contains("Public-Key: ("), let open = trimmed.firstIndex(of: "("),
                    let space = trimmed[open...].firstIndex(of: " ")
                {
                    keyBits = Int(trimmed[trimmed.index(after: open)..<space])
                } else if line == "-----BEGIN PUBLIC KEY-----" {
                    inKey = true
                    publicKeyPEM = line + "\n"
                }
                index += 1
            }
        }
    }

    @Test("every certificate matches openssl x509 field by field", .enabled(if: FileManager.default.fileExists(atPath: bundlePath)))
    func compareWithOpenSSL() throws {
        let text = try String(contentsOfFile: Self.bundlePath, encoding: .utf8)
        let blocks = Self.blocks(text)
        #expect(blocks.count > 50)
        let directory = try TemporaryDirectory()
        for (index, block) in blocks.enumerated() {
            try directory.write(block, to: String(format: "cert-%04d.pem", index))
        }

        // One shell loop prints every field of every certificate (one openssl run per certificate).
        let report = try OpenSSL.shell(
            """
            cd '\(directory.path)' || exit 1
            for f in cert-*.pem; do
              echo "==== $f"
              openssl x509 -in "$f" -noout -serial -dates -fingerprint -sha256 \
                -subject -nameopt esc_2253,utf8,sep_comma_plus,dn_rev,sname \
                -ext subjectAltName \
                -text -certopt no_header,no_version,no_serial,no_signame,no_validity,no_subject,no_issuer,no_extensions,no_sigdump,no_aux \
                -pubkey 2>/dev/null || echo "openssl failed"
            done
            """
        ).text
        let sections = report.split(separator: "==== ").filter { !$0.isEmpty }
        try #require(sections.count == blocks.count, "openssl reported \(sections.count) of \(blocks.count) certificates")

        var fields: [OpenSSLFields] = []
        for (index, section) in sections.enumerated() {
            #expect(section.hasPrefix(String(format: "cert-%04d.pem", index)))
            #expect(!section.contains("openssl failed"), "openssl could not read certificate \(index)")
            let parsed = OpenSSLFields(section)
            fields.append(parsed)
            let spki = try #require(foundationPEMBlocks(parsed.publicKeyPEM, label: "PUBLIC KEY").first, "no -pubkey for \(index)")
            try directory.write(spki, to: String(format: "spki-%04d.der", index))
        }

        // One openssl run hashes every SubjectPublicKeyInfo.
        let digests = try OpenSSL.shell("cd '\(directory.path)' && openssl dgst -sha256 -r spki-*.der").text
        var pins: [String: String] = [:]
        for line in digests.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let digest = bytesFromHex(parts[0]) else { continue }
            pins[String(parts[1].drop { $0 == "*" })] = Data(digest).base64EncodedString()
        }

        #expect(pins.count == blocks.count)
        var compared = 0
        for (index, (block, openssl)) in zip(blocks, fields).enumerated() {
            let name = openssl.subject
            let certificate: Certificate
            switch Result(catching: { () throws(CertificateLoadingError) in try Certificate(pemEncoded: block) }) {
            case .success(let parsed): certificate = parsed
            case .failure(let error):
                Issue.record("\(name): rejected by the parser: \(error)")
                continue
            }
            compared += 1
            #expect(certificate.serialNumber.hex.lowercased() == openssl.serial.lowercased(), "\(name): serial")
            #expect(certificate.notBefore.rfc3339 == rfc3339(fromOpenSSLDate: openssl.notBefore), "\(name): notBefore")
            #expect(certificate.notAfter.rfc3339 == rfc3339(fromOpenSSLDate: openssl.notAfter), "\(name): notAfter")
            #expect(
                hexString(certificate.sha256Fingerprint) == openssl.fingerprint.replacingOccurrences(of: ":", with: "").lowercased(),
                "\(name): SHA-256 fingerprint")
            let spkiFile = String(format: "spki-%04d.der", index)
            #expect(certificate.spkiSHA256Base64 == pins[spkiFile], "\(name): SPKI SHA-256")
            #expect(
                Array(certificate.subjectPublicKeyInfo.derBytes) == (try directory.read(spkiFile)), "\(name): SubjectPublicKeyInfo DER")
            #expect(certificate.subjectPublicKeyInfo.key.algorithmName == Self.keyName(openssl.keyAlgorithm), "\(name): key algorithm")
            #expect(certificate.subjectPublicKeyInfo.key.bitSize == openssl.keyBits, "\(name): key size")
            #expect(certificate.subject.rfc4514 == openssl.subject, "\(name): subject")
            let san = certificate.extensions.subjectAlternativeNames.map { $0.map(Self.openSSLStyle).joined(separator: ", ") }
            #expect(san == openssl.subjectAltName, "\(name): subjectAltName")
        }
        #expect(compared == blocks.count)
    }

    static func keyName(_ openssl: String) -> String {
        switch openssl {
        case "rsaEncryption": return "RSA"
        case "id-ecPublicKey": return "EC"
        case "ED25519": return "Ed25519"
        case "ED448": return "Ed448"
        case "dsaEncryption": return "DSA"
        default: return openssl
        }
    }

    /// A GeneralName as OpenSSL 3.0 prints it in `-ext subjectAltName` / `-text`.
    static func openSSLStyle(_ name: GeneralName) -> String {
        switch name {
        case .ipAddress(let bytes) where bytes.count == 16:
            let groups = stride(from: bytes.startIndex, to: bytes.endIndex, by: 2).map {
                String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16, uppercase: true)
            }
            return "IP Address:" + groups.joined(separator: ":")
        case .ipAddress(let bytes) where bytes.count == 4:
            return "IP Address:" + bytes.map(String.init).joined(separator: ".")
        case .directoryName(let name):
            let parts = name.rdns.flatMap(\.attributes).map { attribute in
                "/\(AttributeTypeAndValue.shortName(attribute.type) ?? attribute.type.dotted)=\(attribute.stringValue)"
            }
            return "DirName:" + parts.joined()
        default:
            return name.description
        }
    }
}
