import Foundation
import ServerTrustLab
import Testing

/// Generated OCSP responses, judged by `openssl ocsp -respin`: OpenSSL reads every field as
/// configured, verifies the issuer's and a delegated responder's signature, and refuses a
/// responder the issuer did not delegate (RFC 6960 §4.2.2.2).
@Suite struct LabOCSPTests {
    /// Now, since `openssl ocsp` checks the response window against the wall clock.
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    struct Files {
        let directory: TemporaryDirectory
        let root: String
        let issuer: String
        let leaf: String
    }

    static func files(_ pki: LabPKI) throws -> Files {
        let directory = try TemporaryDirectory()
        return Files(
            directory: directory, root: try directory.write(pki.root.pem, named: "root.pem"),
            issuer: try directory.write(pki.intermediate.pem, named: "issuer.pem"), leaf: try directory.write(pki.leaf.pem, named: "leaf.pem"))
    }

    /// `openssl ocsp -respin`, looking the leaf up by a CertID hashed with `digest`.
    static func check(_ response: [UInt8], _ files: Files, digest: String = "-sha1") throws -> CLIResult {
        let path = try files.directory.write(response, named: "response-\(UUID().uuidString).der")
        return try OpenSSLCLI.run([
            "ocsp", "-respin", path, "-resp_text", "-CAfile", files.root, "-issuer", files.issuer, "-verify_other", files.issuer, digest, "-cert",
            files.leaf,
        ])
    }

    static func pki() throws -> LabPKI {
        try LabPKI.webChain(host: "lab-ocsp.example", leafNotBefore: now - LabClock.day, leafNotAfter: now + 30 * LabClock.day, keySlot: 132)
    }

    @Test func issuerSignedGoodResponseVerifies() throws {
        let pki = try Self.pki()
        let result = try Self.check(try LabOCSP.response(for: pki.leaf, issuer: pki.intermediateIssuer, now: Self.now), Self.files(pki))
        #expect(result.ok, "\(result)")
        for needle in ["Response verify OK", "leaf.pem: good", "OCSP Response Status: successful (0x0)", "Hash Algorithm: sha1", "Responder Id: "] {
            #expect(result.output.contains(needle), "missing '\(needle)' in:\n\(result.output)")
        }
    }

    @Test func delegatedResponderRevokedWithReasonVerifies() throws {
        let pki = try Self.pki()
        let responder = try LabOCSP.responderCertificate(
            issuer: pki.intermediateIssuer, key: try LabKey.shared(.p256, slot: 3 * 132 + 3), notBefore: Self.now - LabClock.day,
            notAfter: Self.now + 30 * LabClock.day)
        let response = try LabOCSP.response(
            for: pki.leaf, issuer: pki.intermediateIssuer, status: .revoked(time: Self.now - LabClock.day, reason: 1), now: Self.now,
            digest: .sha256, signer: try responder.asIssuer())
        let result = try Self.check(response, Self.files(pki), digest: "-sha256")
        #expect(result.ok, "\(result)")
        for needle in ["Response verify OK", "leaf.pem: revoked", "Reason: keyCompromise", "Hash Algorithm: sha256", "OCSP No Check", "OCSP Signing"] {
            #expect(result.output.contains(needle), "missing '\(needle)' in:\n\(result.output)")
        }
    }

    @Test func unknownStatusAndNoNextUpdate() throws {
        let pki = try Self.pki()
        let result = try Self.check(
            try LabOCSP.response(for: pki.leaf, issuer: pki.intermediateIssuer, status: .unknown, now: Self.now, validity: nil), Self.files(pki))
        #expect(result.ok, "\(result)")
        #expect(result.output.contains("leaf.pem: unknown"), "\(result.output)")
        #expect(!result.output.contains("Next Update"), "\(result.output)")
    }

    @Test func responderWithoutOCSPSigningIsRefusedByOpenSSL() throws {
        let pki = try Self.pki()
        let undelegated = try LabOCSP.responderCertificate(
            issuer: pki.intermediateIssuer, key: try LabKey.shared(.p256, slot: 3 * 132 + 4), extendedKeyUsage: ["serverAuth"], noCheck: false,
            notBefore: Self.now - LabClock.day, notAfter: Self.now + 30 * LabClock.day)
        let response = try LabOCSP.response(for: pki.leaf, issuer: pki.intermediateIssuer, now: Self.now, signer: try undelegated.asIssuer())
        let result = try Self.check(response, Self.files(pki))
        #expect(result.output.contains("Response Verify Failure"), "\(result)")
        #expect(!result.output.contains("Response verify OK"), "\(result)")
    }

    @Test func staleResponseIsFlaggedByOpenSSL() throws {
        let pki = try Self.pki()
        let stale = try LabOCSP.response(for: pki.leaf, issuer: pki.intermediateIssuer, now: Self.now - 10 * LabClock.day, validity: LabClock.day)
        let result = try Self.check(stale, Self.files(pki))
        #expect(result.output.contains("Status times invalid") || result.output.contains("status expired"), "\(result)")
    }

    @Test func errorStatusHasNoResponseBytes() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write(LabOCSP.unsuccessful(3), named: "try-later.der")
        let result = try OpenSSLCLI.run(["ocsp", "-respin", path, "-resp_text", "-noverify"])
        #expect(result.output.contains("Responder Error: trylater (3)"), "\(result)")
    }
}
