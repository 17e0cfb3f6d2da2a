import Foundation
import ServerTrustLab
import Testing

/// PEM helpers and file output.
@Suite struct LabOutputTests {
    @Test func pemRoundTripsAndBundles() throws {
        for length in [0, 1, 2, 3, 47, 48, 49, 100, 1000] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37) }
            let pem = LabPEM.encode(bytes, label: "TEST")
            #expect(pem.hasPrefix("-----BEGIN TEST-----\n") && pem.hasSuffix("-----END TEST-----\n"))
            let decoded = try LabPEM.decode(pem)
            #expect(decoded.count == 1 && decoded[0].label == "TEST" && decoded[0].der == bytes)
        }
        let pki = try LabPKI.webChain(host: "bundle.example")
        let bundle = LabPEM.bundle([pki.leaf, pki.intermediate, pki.root])
        #expect(try LabPEM.decode(bundle).map(\.der) == [pki.leaf.der, pki.intermediate.der, pki.root.der])
        #expect(throws: LabError.self) { try LabPEM.decode("-----BEGIN X-----\nAAAA\n") }
        #expect(throws: LabError.self) { try LabPEM.decode("-----BEGIN X-----\n!!!!\n-----END X-----\n") }
    }

    @Test func pemMatchesOpenSSL() throws {
        let directory = try TemporaryDirectory()
        let pki = try LabPKI.webChain(host: "pem.example", algorithm: .rsa(bits: 2048))
        let derPath = try directory.write(pki.leaf.der, named: "leaf.der")
        let result = try OpenSSLCLI.run(["x509", "-inform", "DER", "-in", derPath])
        #expect(result.output == pki.leaf.pem)
    }

    @Test func pkiFilesVerifyFromDisk() throws {
        let directory = try TemporaryDirectory()
        let pki = try LabPKI.webChain(host: "files.example")
        let out = directory.path + "/nested/pki"
        let paths = try pki.write(to: out)
        #expect(paths.count == 8)
        for path in paths { #expect(FileManager.default.fileExists(atPath: path), "\(path)") }
        let verify = try OpenSSLCLI.run([
            "verify", "-attime", String(LabClock.reference), "-CAfile", out + "/root.pem",
            "-untrusted", out + "/chain.pem", out + "/leaf.pem",
        ])
        #expect(verify.ok, "\(verify)")
        let der = try OpenSSLCLI.run(["x509", "-inform", "DER", "-in", out + "/intermediate.der", "-noout"])
        #expect(der.ok, "\(der)")
        let key = try OpenSSLCLI.run(["pkey", "-in", out + "/leaf.key", "-noout"])
        #expect(key.ok, "\(key)")
        let count = try OpenSSLCLI.run(["storeutl", "-certs", out + "/chain.pem"])
        #expect(count.output.contains("Total found: 2"), "\(count)")
        #expect(throws: LabError.self) { try LabFiles.write([1], to: "/proc/definitely/not/writable") }
    }
}
