import ServerTrustLab
import Testing

/// The web-PKI builder: chains verify with `openssl verify` for every key algorithm.
@Suite struct LabPKITests {
    @Test(arguments: LabKeyAlgorithm.common)
    func webChainVerifies(algorithm: LabKeyAlgorithm) throws {
        let directory = try TemporaryDirectory()
        let pki = try LabPKI.webChain(host: "www.example.com", algorithm: algorithm)
        let result = try OpenSSLCLI.verify(
            leaf: pki.leaf, root: pki.root, untrusted: [pki.intermediate],
            extra: ["-x509_strict", "-purpose", "sslserver", "-verify_hostname", "www.example.com"], in: directory
        )
        #expect(result.ok && result.output.hasSuffix(": OK\n"), "\(result)")
        for certificate in [pki.root, pki.intermediate, pki.leaf] {
            #expect(try OpenSSLCLI.text(certificate, in: directory).ok)
        }
        #expect(pki.leaf.subjectKey === pki.leafKey && pki.leafKey.algorithm == algorithm)
    }

    @Test func webChainShape() throws {
        let directory = try TemporaryDirectory()
        let pki = try LabPKI.webChain(host: "shape.example", algorithm: .rsa(bits: 2048))
        let root = try OpenSSLCLI.text(pki.root, in: directory).output
        let intermediate = try OpenSSLCLI.text(pki.intermediate, in: directory).output
        let leaf = try OpenSSLCLI.text(pki.leaf, in: directory).output
        for needle in [
            "X509v3 Basic Constraints: critical", "CA:TRUE", "Certificate Sign, CRL Sign",
            "X509v3 Subject Key Identifier", "Not Before: Jan  4 00:00:00 2016 GMT",
        ] {
            #expect(root.contains(needle), "root missing \(needle)")
        }
        for needle in [
            "CA:TRUE, pathlen:0", "TLS Web Server Authentication, TLS Web Client Authentication",
            "X509v3 Authority Key Identifier",
        ] {
            #expect(intermediate.contains(needle), "intermediate missing \(needle)")
        }
        for needle in [
            "CA:FALSE", "Digital Signature, Key Encipherment", "DNS:shape.example",
            "Not Before: Dec  2 00:00:00 2025 GMT", "Not After : Mar  2 00:00:00 2026 GMT",
        ] {
            #expect(leaf.contains(needle), "leaf missing \(needle) in \(leaf)")
        }
        #expect(pki.serverChain == [pki.leaf, pki.intermediate])
        #expect(pki.leaf.issuerNameDER == pki.intermediate.subjectNameDER)
        #expect(pki.intermediate.issuerNameDER == pki.root.subjectNameDER)
    }

    @Test func leafValidityWindowIsEnforced() throws {
        let directory = try TemporaryDirectory()
        let pki = try LabPKI.webChain(host: "time.example")
        let expired = try OpenSSLCLI.verify(
            leaf: pki.leaf, root: pki.root, untrusted: [pki.intermediate],
            at: LabPKI.leafValidity.notAfter + 1, in: directory)
        #expect(!expired.ok && expired.output.contains("certificate has expired"), "\(expired)")
        let early = try OpenSSLCLI.verify(
            leaf: pki.leaf, root: pki.root, untrusted: [pki.intermediate],
            at: LabPKI.leafValidity.notBefore - 1, in: directory)
        #expect(!early.ok && early.output.contains("not yet valid"), "\(early)")

        let custom = try LabPKI.webChain(
            host: "time.example", leafNotBefore: LabClock.reference - 10 * LabClock.day,
            leafNotAfter: LabClock.reference - LabClock.day)
        let stale = try OpenSSLCLI.verify(leaf: custom.leaf, root: custom.root, untrusted: [custom.intermediate], in: directory)
        #expect(!stale.ok && stale.output.contains("certificate has expired"), "\(stale)")
    }

    @Test func anotherHostFromTheSameCA() throws {
        let directory = try TemporaryDirectory()
        let pki = try LabPKI.webChain(host: "first.example")
        let second = try pki.withLeaf(host: "second.example")
        #expect(second.root == pki.root && second.intermediate == pki.intermediate && second.leaf != pki.leaf)
        let ok = try OpenSSLCLI.verify(
            leaf: second.leaf, root: second.root, untrusted: [second.intermediate],
            extra: ["-verify_hostname", "second.example"], in: directory)
        #expect(ok.ok, "\(ok)")
        let wrongHost = try OpenSSLCLI.verify(
            leaf: second.leaf, root: second.root, untrusted: [second.intermediate],
            extra: ["-verify_hostname", "first.example"], in: directory)
        #expect(!wrongHost.ok && wrongHost.output.contains("hostname mismatch"), "\(wrongHost)")
    }

    @Test func ipHostsAndCustomSANs() throws {
        let directory = try TemporaryDirectory()
        let pki = try LabPKI.webChain(host: "127.0.0.1")
        let ip = try OpenSSLCLI.verify(
            leaf: pki.leaf, root: pki.root, untrusted: [pki.intermediate],
            extra: ["-verify_ip", "127.0.0.1"], in: directory)
        #expect(ip.ok, "\(ip)")
        let v6 = try pki.withLeaf(host: "::1")
        #expect(try OpenSSLCLI.text(v6.leaf, in: directory).output.contains("IP Address:0:0:0:0:0:0:0:1"))

        let custom = try LabPKI.webChain(host: "custom.example", leafSubjectAltNames: [.dns("alt.example"), .dns("*.wild.example")])
        let text = try OpenSSLCLI.text(custom.leaf, in: directory).output
        #expect(text.contains("DNS:alt.example, DNS:*.wild.example") && !text.contains("DNS:custom.example"), "\(text)")
        let wildcard = try OpenSSLCLI.verify(
            leaf: custom.leaf, root: custom.root, untrusted: [custom.intermediate],
            extra: ["-verify_hostname", "a.wild.example"], in: directory)
        #expect(wildcard.ok, "\(wildcard)")
    }

    @Test func mixedLeafAlgorithmAndSlotsGiveIndependentPKIs() throws {
        let directory = try TemporaryDirectory()
        let mixed = try LabPKI.webChain(host: "mixed.example", algorithm: .rsa(bits: 2048), leafAlgorithm: .ed25519)
        #expect(mixed.leafKey.algorithm == .ed25519 && mixed.rootKey.algorithm == .rsa(bits: 2048))
        #expect(try OpenSSLCLI.verify(leaf: mixed.leaf, root: mixed.root, untrusted: [mixed.intermediate], in: directory).ok)
        let a = try LabPKI.webChain(host: "x.example", keySlot: 5)
        let b = try LabPKI.webChain(host: "x.example", keySlot: 6)
        #expect(a.rootKey != b.rootKey && a.intermediateKey != b.intermediateKey && a.leafKey != b.leafKey)
        // A leaf from one PKI does not verify under the other's root.
        let cross = try OpenSSLCLI.verify(leaf: a.leaf, root: b.root, untrusted: [a.intermediate], in: directory)
        #expect(!cross.ok, "\(cross)")
    }

    @Test func leafSpecCanBeCustomised() throws {
        let pki = try LabPKI.webChain(host: "spec.example")
        var spec = LabPKI.leafSpec(
            host: "spec.example", keyAlgorithm: .p256,
            extraExtensions: [
                .authorityInfoAccess(ocsp: ["http://ocsp.example"], caIssuers: [])
            ])
        spec.serial = [0x42]
        let leaf = try LabCertificate.issue(spec, subjectKey: pki.leafKey, issuer: pki.intermediateIssuer)
        #expect(leaf.serialNumber == [0x42])
        let text = try OpenSSLCLI.text(leaf, in: TemporaryDirectory()).output
        #expect(text.contains("OCSP - URI:http://ocsp.example") && text.contains("DNS:spec.example"))
    }
}
