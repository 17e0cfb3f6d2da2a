import CertificateParsing
import Foundation
import Testing

/// Real PEM files from the `openssl` CLI, generated once per test run.
struct OpenSSLPEMFixtures: Sendable {
    /// Each file's text, by label, in generation order.
    let files: [(label: String, text: String)]
    /// A self-signed Ed25519 certificate (`CERTIFICATE`).
    let certificatePEM: String
    /// `openssl x509 -text` output: explanatory text, then the PEM block.
    let certificateText: String
    /// The same certificate with OpenSSL trust settings (`TRUSTED CERTIFICATE`).
    let trustedCertificatePEM: String

    static let shared: Result<OpenSSLPEMFixtures, ProcessFailure> = {
        do { return .success(try OpenSSLPEMFixtures()) } catch let error as ProcessFailure { return .failure(error) } catch {
            return .failure(ProcessFailure(description: "\(error)"))
        }
    }()

    private init() throws {
        let directory = try TemporaryDirectory()
        let config = """
            [ca]
            default_ca = d
            [d]
            database = index.txt
            crlnumber = crlnumber
            default_md = default
            default_crl_days = 30
            """
        try directory.write(config, to: "ca.cnf")
        try OpenSSL.shell(
            """
            set -e
            cd '\(directory.path)'
            : > index.txt
            echo 01 > crlnumber
            openssl genpkey -algorithm ed25519 -out key.pem
            openssl pkey -in key.pem -pubout -out pub.pem
            openssl genrsa -traditional -out rsa.pem 1024 2>/dev/null
            openssl ecparam -genkey -name prime256v1 -noout -out ec.pem
            openssl req -x509 -key key.pem -subj '/CN=PEM Test/O=Example, Inc.' -days 30 -out cert.pem
            openssl x509 -in cert.pem -text -out text.pem
            openssl x509 -in cert.pem -addtrust serverAuth -trustout -out trusted.pem
            openssl ca -config ca.cnf -gencrl -keyfile key.pem -cert cert.pem -out crl.pem 2>/dev/null
            """)
        func read(_ name: String) throws -> String { String(decoding: try directory.read(name), as: UTF8.self) }
        files = [
            ("PRIVATE KEY", try read("key.pem")), ("PUBLIC KEY", try read("pub.pem")), ("RSA PRIVATE KEY", try read("rsa.pem")),
            ("EC PRIVATE KEY", try read("ec.pem")), ("CERTIFICATE", try read("cert.pem")), ("X509 CRL", try read("crl.pem")),
        ]
        certificatePEM = try read("cert.pem")
        certificateText = try read("text.pem")
        trustedCertificatePEM = try read("trusted.pem")
    }

    static func get() throws -> OpenSSLPEMFixtures {
        switch shared {
        case .success(let fixtures): return fixtures
        case .failure(let error): throw error
        }
    }
}

@Suite("PEM documents and base64")
struct PEMTests {
    @Test("several blocks with different labels: labels, bytes and line numbers are kept")
    func multipleBlocks() throws {
        let fixtures = try OpenSSLPEMFixtures.get()
        var text = "A bundle of everything openssl writes.\n\n"
        var expectedLines: [Int] = []
        for (label, file) in fixtures.files {
            text += "# \(label) follows: with a colon, outside any block\n"
            expectedLines.append(text.split(separator: "\n", omittingEmptySubsequences: false).count)
            text += file
            text += "\n"
        }
        let documents = try PEMDocument.parseAll(text)
        #expect(documents.map(\.label) == fixtures.files.map(\.label))
        #expect(documents.map(\.line) == expectedLines)
        for (document, (label, file)) in zip(documents, fixtures.files) {
            let independent = try #require(foundationPEMBlocks(file, label: label).first)
            #expect(document.derBytes == independent, "\(label)")
            #expect(try DER.parse(document.derBytes).identifier == .sequence, "\(label) holds one DER element")
        }
        // Certificate.load takes the CERTIFICATE block and skips the others.
        let certificates = try Certificate.load(Array(text.utf8))
        #expect(certificates.count == 1)
        #expect(certificates.first?.subject.rfc4514 == "O=Example\\, Inc.,CN=PEM Test")
        // The PUBLIC KEY block is a SubjectPublicKeyInfo, identical to the certificate's.
        let publicKey = try SubjectPublicKeyInfo(derEncoded: documents[1].derBytes)
        #expect(publicKey.key.algorithmName == "Ed25519")
        #expect(publicKey.derBytes.elementsEqual(try #require(certificates.first).subjectPublicKeyInfo.derBytes))
    }

    @Test("explanatory text around a block (openssl x509 -text output)")
    func explanatoryText() throws {
        let fixtures = try OpenSSLPEMFixtures.get()
        #expect(fixtures.certificateText.contains("Certificate:\n    Data:"))
        #expect(fixtures.certificateText.contains("Signature Algorithm: ED25519"))
        let documents = try PEMDocument.parseAll(fixtures.certificateText)
        #expect(documents.count == 1)
        #expect(documents.first?.label == "CERTIFICATE")
        let fromText = try Certificate(pemEncoded: fixtures.certificateText)
        let plain = try Certificate(pemEncoded: fixtures.certificatePEM)
        #expect(fromText == plain)
        let beginLine = fixtures.certificateText.split(separator: "\n", omittingEmptySubsequences: false)
            .firstIndex { $0.hasPrefix("-----BEGIN CERTIFICATE-----") }
        #expect(documents.first?.line == beginLine.map { $0 + 1 })
    }

    @Test("CRLF line endings and trailing whitespace parse the same as LF")
    func crlf() throws {
        let fixtures = try OpenSSLPEMFixtures.get()
        let lf = fixtures.files.map(\.text).joined()
        let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(crlf.contains("\r\n"))
        let a = try PEMDocument.parseAll(lf)
        let b = try PEMDocument.parseAll(crlf)
        #expect(a == b)
        #expect(a.map(\.line) == b.map(\.line))
        #expect(a.count == fixtures.files.count)
        let padded = lf.replacingOccurrences(of: "-----\n", with: "-----  \t\n")
        #expect(try PEMDocument.parseAll(padded) == a)
        let indented = lf.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("-----") ? String($0) : "  " + $0 }.joined(separator: "\n")
        #expect(try PEMDocument.parseAll(indented) == a)
        #expect(
            try Certificate(pemEncoded: fixtures.certificatePEM.replacingOccurrences(of: "\n", with: "\r\n"))
                == Certificate(pemEncoded: fixtures.certificatePEM))
    }

    @Test(
        "pemString round-trips for every length up to 200 bytes",
        arguments: [
            "CERTIFICATE", "PUBLIC KEY", "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "X509 CRL",
        ])
    func roundTrip(label: String) throws {
        var generator = SystemRandomNumberGenerator()
        for count in 1...200 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let document = PEMDocument(label: label, derBytes: bytes)
            let text = document.pemString
            let lines = text.split(separator: "\n")
            #expect(lines.first == "-----BEGIN \(label)-----")
            #expect(lines.last == "-----END \(label)-----")
            #expect(lines.dropFirst().dropLast().allSatisfy { $0.count <= 64 })
            #expect(lines.dropFirst().dropLast().dropLast().allSatisfy { $0.count == 64 })
            #expect(text.hasSuffix("-----\n"))
            let parsed = try PEMDocument(pemEncoded: text)
            #expect(parsed.label == label)
            #expect(parsed.derBytes == bytes)
            #expect(parsed.line == 1)
            // Foundation decodes the same bytes.
            #expect(foundationPEMBlocks(text, label: label).first == bytes)
        }
    }

    @Test("a certificate's pemString round-trips and matches openssl's PEM")
    func certificatePEMString() throws {
        let fixtures = try OpenSSLPEMFixtures.get()
        let certificate = try Certificate(pemEncoded: fixtures.certificatePEM)
        #expect(certificate.pemString == fixtures.certificatePEM)
        #expect(try Certificate(pemEncoded: certificate.pemString) == certificate)
    }

    @Test("OpenSSL TRUSTED CERTIFICATE blocks are refused, not read without their trust settings")
    func trustedCertificate() throws {
        // OpenSSL writes this label for a certificate DER followed by an X509_CERT_AUX SEQUENCE
        // (trust settings that may reject the certificate). Reading only the certificate would
        // trust more than the file says, so loading fails closed with an explanation.
        let fixtures = try OpenSSLPEMFixtures.get()
        let block = try PEMDocument(pemEncoded: fixtures.trustedCertificatePEM)
        #expect(block.label == "TRUSTED CERTIFICATE")
        let plain = try Certificate(pemEncoded: fixtures.certificatePEM)
        #expect(Array(block.derBytes.prefix(plain.derBytes.count)) == plain.derBytes)
        #expect(throws: CertificateLoadingError.pem(PEMError(.unexpectedLabel, line: 1, ""))) {
            try Certificate.load(Array(fixtures.trustedCertificatePEM.utf8))
        }
    }

    @Test("no blocks: parseAll returns nothing, the single-block initialiser throws")
    func noBlocks() throws {
        #expect(try PEMDocument.parseAll("").isEmpty)
        #expect(try PEMDocument.parseAll("plain text\nwith lines: and colons\n").isEmpty)
        #expect(throws: PEMError(.noBlock, line: 1, "")) { try PEMDocument(pemEncoded: "") }
        // A line that merely starts with dashes is text.
        #expect(try PEMDocument.parseAll("----- not a boundary\n-----\n").isEmpty)
    }

    @Test("looksLikePEM finds a BEGIN line anywhere")
    func looksLikePEM() {
        #expect(PEMDocument.looksLikePEM(Array("-----BEGIN X-----".utf8)))
        #expect(PEMDocument.looksLikePEM(Array("text\n\n-----BEGIN CERTIFICATE-----\n".utf8)))
        #expect(!PEMDocument.looksLikePEM([0x30, 0x82, 0x01, 0x00]))
        #expect(!PEMDocument.looksLikePEM([]))
        #expect(!PEMDocument.looksLikePEM(Array("-----BEGIN".utf8)))
    }

    @Test("PEM errors compare by code and name their line")
    func errorDescriptions() {
        let error = PEMError(.missingEnd, line: 7, "why")
        #expect(error == PEMError(.missingEnd, line: 1, "other"))
        #expect(error != PEMError(.labelMismatch, line: 7, "why"))
        #expect(error.description == "PEM missingEnd at line 7: why")
    }

    // MARK: Base64

    @Test(
        "base64: RFC 4648 §10 test vectors",
        arguments: [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")])
    func base64Vectors(plain: String, encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(Base64.decode(Array(encoded.utf8)) == Array(plain.utf8))
    }

    @Test("base64 agrees with Foundation on random data, and ignores whitespace")
    func base64Random() {
        var generator = SystemRandomNumberGenerator()
        for count in 0..<300 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let ours = Base64.encode(bytes)
            #expect(ours == Data(bytes).base64EncodedString())
            // A collection without contiguous storage, and a slice not starting at zero, take
            // the same encoder.
            #expect(Base64.encode(bytes.lazy.map { $0 }) == ours)
            #expect(Base64.encode(([0x41] + bytes)[1...]) == ours)
            #expect(Base64.decode(Array(ours.utf8)) == bytes)
            let wrapped = Data(bytes).base64EncodedString(options: [.lineLength64Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
            #expect(Base64.decode(Array((wrapped + " \t").utf8)) == bytes)
        }
    }

    @Test(
        "base64: malformed text is rejected",
        arguments: ["Zg", "Zg=", "Z", "Zg===", "=Zg=", "Zg==Zg==", "Zh==", "Zm9=", "Zm9v!", "Zm9v-_", "Zm9vYg==\u{0}", "Zm9vYg=A", "Zm9vY==="])
    func base64Malformed(text: String) {
        #expect(Base64.decode(Array(text.utf8)) == nil)
    }

    @Test("a malformed CRL block is named as a CRL, with its block and line")
    func crlBlockErrorNamesTheCRL() throws {
        let text = "comment\n-----BEGIN X509 CRL-----\nMAMCAQE=\n-----END X509 CRL-----\n"
        #expect(throws: CRLLoadingError.self) { try CertificateRevocationList.load(Array(text.utf8)) }
        do {
            _ = try CertificateRevocationList.load(Array(text.utf8))
        } catch {
            guard case .der(_, let block?) = error else {
                Issue.record("expected a DER error with a block, got \(error)")
                return
            }
            #expect(block.index == 1)
            #expect(block.line == 2)
            #expect(error.description.hasPrefix("CRL in PEM block 1 (line 2): "))
        }
    }
}
