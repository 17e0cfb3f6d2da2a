import CertificateParsing
import Foundation
import ServerTrustLab
import Testing
import TrustEvaluation

#if canImport(Glibc)
    import Glibc
#endif

/// Trust stores and SecTrust's anchor modes: system roots only (from `SSL_CERT_FILE` /
/// `SSL_CERT_DIR`, pointed at generated files), custom anchors only, and custom plus system;
/// loading from a directory, a PEM bundle and a DER file; errors that name the file.
///
/// Serialized: the system-store tests set process environment variables (restored at once).
@Suite("Trust stores and anchor modes", .serialized)
struct TrustStoreTests {
    /// Chain A (anchor "Trust Test Root") and chain B (anchor "Trust Test Other Root").
    let a: TrustChain
    let b: TrustChain

    init() throws {
        a = try TrustChain.make()
        b = try TrustChain.make(
            rootName: "Trust Test Other Root", intermediateName: "Trust Test Other Issuing CA", rootSlot: TrustSlot.otherRoot,
            intermediateSlot: TrustSlot.otherIntermediate)
    }

    func validate(_ chain: TrustChain, _ store: TrustStore) throws -> ValidationOutcome {
        try TrustPKI.validate(chain.leaf, [chain.intermediate.certificate], store: store)
    }

    func expectChainTrusted(_ chain: TrustChain, by store: TrustStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try expectTrusted(
            try validate(chain, store), chain: [chain.leaf, chain.intermediate.certificate, chain.root.certificate],
            sourceLocation: sourceLocation)
    }

    func expectChainUntrusted(_ chain: TrustChain, by store: TrustStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        expectRejected(try validate(chain, store), .untrustedRoot, at: 1, sourceLocation: sourceLocation)
    }

    // MARK: - Anchor modes

    @Test("custom anchors only: their chains are trusted, others are not")
    func customOnly() throws {
        let store = TrustStore([try TrustPKI.parse(a.root.certificate)])
        try expectChainTrusted(a, by: store)
        try expectChainUntrusted(b, by: store)
        try expectChainUntrusted(a, by: .empty)
    }

    @Test("system only: TrustStore.system() reads SSL_CERT_FILE")
    func systemOnly() throws {
        try withTemporaryDirectory { directory in
            let bundle = try LabFiles.writeBundle([b.root.certificate], to: directory + "/system.pem")
            let store = try withEnvironment(["SSL_CERT_FILE": bundle, "SSL_CERT_DIR": nil]) { try TrustStore.system() }
            #expect(store.count == 1)
            #expect(store.sources == [bundle])
            try expectChainTrusted(b, by: store)
            try expectChainUntrusted(a, by: store)
        }
    }

    @Test("system only: TrustStore.system() adds SSL_CERT_DIR")
    func systemDirectory() throws {
        try withTemporaryDirectory { directory in
            let bundle = try LabFiles.writeBundle([b.root.certificate], to: directory + "/system.pem")
            try LabFiles.write(a.root.certificate, named: "root-a", in: directory + "/certs", formats: [.pem])
            let store = try withEnvironment(["SSL_CERT_FILE": bundle, "SSL_CERT_DIR": directory + "/certs"]) {
                try TrustStore.system()
            }
            #expect(store.count == 2)
            #expect(store.sources == [bundle, directory + "/certs"])
            try expectChainTrusted(a, by: store)
            try expectChainTrusted(b, by: store)
        }
    }

    @Test("custom + system trusts both, without duplicating shared anchors")
    func customAndSystem() throws {
        try withTemporaryDirectory { directory in
            let bundle = try LabFiles.writeBundle([b.root.certificate], to: directory + "/system.pem")
            let system = try withEnvironment(["SSL_CERT_FILE": bundle, "SSL_CERT_DIR": nil]) { try TrustStore.system() }
            let custom = TrustStore([try TrustPKI.parse(a.root.certificate)], sources: ["custom"])
            let both = custom + system
            #expect(both.count == 2)
            #expect(both.sources == ["custom", bundle])
            try expectChainTrusted(a, by: both)
            try expectChainTrusted(b, by: both)
            // Custom only still refuses the system root's chain.
            try expectChainUntrusted(b, by: custom)
            // An anchor in both halves is kept once.
            #expect((system + system).count == 1)
        }
    }

    @Test("a missing SSL_CERT_FILE is a TrustStoreError naming it")
    func systemMissingFile() throws {
        try withTemporaryDirectory { directory in
            let missing = directory + "/no-such-bundle.pem"
            let error = #expect(throws: TrustStoreError.self) {
                _ = try withEnvironment(["SSL_CERT_FILE": missing, "SSL_CERT_DIR": nil]) { try TrustStore.system() }
            }
            #expect(error?.path == missing)
        }
    }

    // MARK: - Loading

    @Test("a directory loads every certificate file and skips the rest")
    func directory() throws {
        try withTemporaryDirectory { directory in
            try LabFiles.write(a.root.certificate, named: "root-a", in: directory, formats: [.pem])
            try LabFiles.write(b.root.certificate, named: "root-b", in: directory, formats: [.der])
            try LabFiles.write("not a certificate\n", to: directory + "/README.txt")
            try LabFiles.write(a.intermediate.certificate.pem, to: directory + "/.hidden.pem")
            let store = try TrustStore(contentsOf: [directory])
            #expect(store.count == 2)
            #expect(store.sources == [directory])
            #expect(store.contains(try TrustPKI.parse(a.root.certificate)))
            #expect(store.contains(try TrustPKI.parse(b.root.certificate)))
            #expect(!store.contains(try TrustPKI.parse(a.intermediate.certificate)))
            try expectChainTrusted(a, by: store)
            try expectChainTrusted(b, by: store)
        }
    }

    @Test("a PEM bundle loads every certificate in it")
    func pemBundle() throws {
        try withTemporaryDirectory { directory in
            let path = try LabFiles.writeBundle([a.root.certificate, b.root.certificate], to: directory + "/bundle.pem")
            let store = try TrustStore(contentsOf: [path])
            #expect(store.count == 2)
            #expect(store.certificates == [try TrustPKI.parse(a.root.certificate), try TrustPKI.parse(b.root.certificate)])
            try expectChainTrusted(a, by: store)
            try expectChainTrusted(b, by: store)
        }
    }

    @Test("a DER file loads its certificate; files overlapping a bundle are deduplicated")
    func derFile() throws {
        try withTemporaryDirectory { directory in
            let der = try LabFiles.write(a.root.certificate, named: "root-a", in: directory, formats: [.der])[0]
            let store = try TrustStore(contentsOf: [der])
            #expect(store.count == 1)
            #expect(store.sources == [der])
            try expectChainTrusted(a, by: store)
            try expectChainUntrusted(b, by: store)

            let bundle = try LabFiles.writeBundle([a.root.certificate, b.root.certificate], to: directory + "/bundle.pem")
            #expect(try TrustStore(contentsOf: [der, bundle]).count == 2)
        }
    }

    /// Unreadable or malformed store files.
    enum BadFile: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case missing, garbage, truncatedDER, pemWithoutCertificate, brokenPEM
        var testDescription: String { rawValue }
    }

    @Test("a bad file is a TrustStoreError naming that file", arguments: BadFile.allCases)
    func badFile(_ kind: BadFile) throws {
        try withTemporaryDirectory { directory in
            let good = try LabFiles.writeBundle([a.root.certificate], to: directory + "/good.pem")
            let bad = directory + "/bad-\(kind.rawValue)"
            switch kind {
            case .missing: break
            case .garbage: try LabFiles.write("hello, world\n", to: bad)
            case .truncatedDER: try LabFiles.write(Array(a.root.certificate.der.prefix(100)), to: bad)
            case .pemWithoutCertificate: try LabFiles.write(try TrustPKI.key(TrustSlot.leaf).privateKeyPEM(), to: bad)
            case .brokenPEM:
                try LabFiles.write("-----BEGIN CERTIFICATE-----\n!!!notbase64!!!\n-----END CERTIFICATE-----\n", to: bad)
            }
            let error = #expect(throws: TrustStoreError.self) { _ = try TrustStore(contentsOf: [good, bad]) }
            #expect(error?.path == bad)
            #expect(error?.reason.isEmpty == false)
            #expect(error?.description.hasPrefix(bad + ": ") == true)
        }
    }

    // MARK: - Helpers

    /// Runs `body` with a fresh temporary directory, removed afterwards.
    func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trust-store-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try body(url.path)
    }

    /// Runs `body` with environment variables set (or, for nil, unset), restoring them at once.
    func withEnvironment<T>(_ values: [String: String?], _ body: () throws -> T) throws -> T {
        let saved = values.keys.map { name in (name, getenv(name).map { String(cString: $0) }) }
        func apply(_ name: String, _ value: String?) {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        for (name, value) in values { apply(name, value) }
        defer { for (name, value) in saved { apply(name, value) } }
        return try body()
    }
}
