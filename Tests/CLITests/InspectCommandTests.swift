import Foundation
import ServerTrustLab
import Testing

@Suite("servertrust inspect")
struct InspectCommandTests {
    static let pki: LabPKI = {
        do { return try LabPKI.webChain(host: "www.example.test", algorithm: .p256, keySlot: 40) } catch {
            fatalError("test PKI generation failed: \(error)")
        }
    }()

    @Test("prints the JSON schema for each certificate of a PEM bundle")
    func jsonForBundle() async throws {
        let dir = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/chain.pem"
        try LabPEM.bundle([Self.pki.leaf, Self.pki.intermediate]).write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await CLIRunner.run(["inspect", path, "--json"])
        #expect(result.status == 0)
        let items = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(items.count == 2)
        let leaf = items[0]
        for key in ["subject", "issuer", "serial", "notBefore", "notAfter", "sha256", "spkiSHA256", "keyAlgorithm", "keySize", "san"] {
            #expect(leaf[key] != nil, "missing \(key)")
        }
        #expect(leaf["keyAlgorithm"] as? String == "EC")
        #expect(leaf["keySize"] as? Int == 256)
        #expect((leaf["san"] as? [String])?.contains("DNS:www.example.test") == true)
        #expect((leaf["notAfter"] as? String)?.hasSuffix("Z") == true)
        let serial = try #require(leaf["serial"] as? String)
        #expect(serial == serial.lowercased() && !serial.contains(":"))
        #expect((leaf["sha256"] as? String)?.count == 64)
    }

    @Test("reads DER files and prints a human block")
    func humanForDER() async throws {
        let dir = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/leaf.der"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(Self.pki.leaf.der)))
        let result = try await CLIRunner.run(["inspect", path])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Subject"))
        #expect(result.stdout.contains("DNS:www.example.test"))
        #expect(result.stdout.contains("SPKI pin   sha256/") || result.stdout.contains("sha256/"))
    }

    @Test(
        "bad input gives a one-line error naming the file and exit 2",
        arguments: [
            ("missing", nil as [UInt8]?),
            ("garbage", Array("hello, not a certificate".utf8)),
            ("truncated-der", [0x30, 0x82, 0x01, 0x00, 0x30]),
            ("pem-without-end", Array("-----BEGIN CERTIFICATE-----\nMIIB\n".utf8)),
        ])
    func badInput(name: String, bytes: [UInt8]?) async throws {
        let dir = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/" + name
        if let bytes { #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes))) }
        let result = try await CLIRunner.run(["inspect", path])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(result.stderr.contains(path))
    }

    @Test("inspect and pins on a text file, a PKCS#12 file or a key say what the file looks like, as get and evaluate do")
    func notACertificate() async throws {
        let dir = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p12 = try LabPKCS12.create(certificate: Self.pki.leaf, key: Self.pki.leafKey, password: "pw")
        let files: [(name: String, bytes: [UInt8], kind: String)] = [
            ("notes.txt", Array("these are my notes, not a certificate\n".utf8), "text"),
            ("client.p12", p12, "PKCS#12"),
            ("leaf.key", Array(try Self.pki.leafKey.privateKeyPEM().utf8), "a private key (PEM PRIVATE KEY)"),
        ]
        for file in files {
            let path = try LabFiles.write(file.bytes, to: dir + "/" + file.name)
            for command in [["inspect", path], ["pins", path, "--host", "www.example.test"], ["evaluate", path, "--host", "www.example.test"]] {
                let result = try await CLIRunner.run(command)
                #expect(result.status == 2, "\(command): \(result.stderr)")
                #expect(
                    result.stderr == "servertrust: \(command[0]): \(path): not a certificate: looks like \(file.kind)\n",
                    "\(command): \(result.stderr)")
            }
        }
    }

    @Test("a device is refused at once instead of read forever")
    func deviceRefused() async throws {
        let result = try await CLIRunner.run(["inspect", "/dev/zero"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("/dev/zero: not a regular file"))
        let anchors = try await CLIRunner.run(["evaluate", "/dev/null", "--host", "x.test", "--anchors", "/dev/zero"])
        #expect(anchors.status == 2)
    }

    @Test("usage errors exit 2")
    func usageErrors() async throws {
        #expect(try await CLIRunner.run(["inspect"]).status == 2)
        #expect(try await CLIRunner.run(["inspect", "--bogus", "x"]).status == 2)
        #expect(try await CLIRunner.run(["no-such-command"]).status == 2)
        #expect(try await CLIRunner.run(["inspect", "--help"]).status == 0)
    }
}
