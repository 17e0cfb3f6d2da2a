import CertificateParsing
import ServerTrustLab
import Testing

/// The one departure from RFC 5280 a caller may ask a parse to accept: a certificate whose two
/// signature AlgorithmIdentifiers differ only in NULL versus absent parameters of the same RSA
/// PKCS #1 v1.5 algorithm (AFNetworking's and Alamofire's test certificates, generated here in
/// that shape). Strict parsing, the default and the only one served chains get, refuses it.
@Suite("parsing tolerance: the signatureAlgorithm parameter encoding")
struct ParsingToleranceTests {
    /// A self-signed RSA certificate whose TBS `signature` field is `tbs` and whose outer
    /// signatureAlgorithm is the scheme's own encoding.
    static func certificate(
        tbs: (LabSignatureScheme) throws -> [UInt8], scheme: LabSignatureScheme = .rsaPKCS1(.sha256), key: LabKeyAlgorithm = .rsa(bits: 2048)
    )
        throws -> [UInt8]
    {
        var spec = LabPKI.leafSpec(host: "foobar.com", keyAlgorithm: key)
        spec.signatureScheme = scheme
        spec.tbsSignatureAlgorithmDER = try tbs(scheme)
        return try LabCertificate.issue(spec, subjectKey: try LabKey.shared(key, slot: 37)).der
    }

    @Test("the TBS field without NULL parameters: refused strictly, loaded tolerantly with a note")
    func nullVersusAbsent() throws {
        let der = try Self.certificate(tbs: { try $0.algorithmIdentifierDERWithoutParameters })
        let strict = #expect(throws: DERError.self) { try Certificate(derEncoded: der) }
        #expect(strict?.reason.contains("differs from signatureAlgorithm") == true, "\(String(describing: strict))")
        #expect(throws: CertificateLoadingError.self) { try Certificate.load(der) }

        let tolerant = try Certificate(derEncoded: der, tolerating: .signatureAlgorithmParameterEncoding)
        #expect(tolerant.toleratedDeviations.count == 1)
        #expect(tolerant.toleratedDeviations.first?.contains("absent versus NULL parameters") == true, "\(tolerant.toleratedDeviations)")
        #expect(tolerant.signatureAlgorithm == .rsaPKCS1(.sha256))
        #expect(try Certificate.load(der, tolerating: .signatureAlgorithmParameterEncoding).first?.derBytes == der)
        // A certificate that needs no tolerance notes none.
        let plain = try Self.certificate(tbs: { try $0.algorithmIdentifierDER })
        #expect(try Certificate(derEncoded: plain, tolerating: .signatureAlgorithmParameterEncoding).toleratedDeviations.isEmpty)
    }

    @Test(
        "any other difference between the two fields stays an error, tolerance or not",
        arguments: [
            // Another algorithm in the TBS: a substitution, never a quirk of encoding.
            "sha384 in the TBS", "NULL in ECDSA's TBS field", "the TBS identifier with a non-NULL parameter",
        ])
    func otherDifferences(_ name: String) throws {
        let der: [UInt8]
        switch name {
        case "sha384 in the TBS": der = try Self.certificate(tbs: { _ in try LabSignatureScheme.rsaPKCS1(.sha384).algorithmIdentifierDER })
        case "NULL in ECDSA's TBS field":
            der = try Self.certificate(
                tbs: { try LabDER.sequence(LabDER.parse(try $0.algorithmIdentifierDER).children().map(\.encoded) + [LabDER.null()]) },
                scheme: .ecdsa(.sha256), key: .p256)
        default:
            der = try Self.certificate(tbs: {
                try LabDER.sequence(LabDER.parse(try $0.algorithmIdentifierDER).children().prefix(1).map(\.encoded) + [LabDER.integer(0)])
            })
        }
        let error = #expect(throws: DERError.self, "\(name)") { try Certificate(derEncoded: der, tolerating: .signatureAlgorithmParameterEncoding) }
        #expect(error?.reason.contains("differs from signatureAlgorithm") == true, "\(name): \(String(describing: error))")
    }
}
