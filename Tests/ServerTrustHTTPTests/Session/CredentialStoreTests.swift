import Foundation
import ServerTrustHTTP
import Testing

/// The permanent credential file, from the side of another local user who can write to its
/// directory (a shared or misconfigured application-support folder).
@Suite("credential store file")
struct CredentialStoreTests {
    static let space = ProtectionSpace(host: "api.example.test", port: 443, protocol: "https", realm: "api", authenticationMethod: .httpBasic)

    @Test("a symbolic link planted where the store writes its temporary file gets nothing written through it")
    func plantedLinkNotFollowed() throws {
        let directory = try Lab.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/credentials.json"
        let victim = directory + "/attacker-readable.txt"
        try Data("untouched".utf8).write(to: URL(fileURLWithPath: victim))
        // The name the store used to write through: PATH.tmp-<pid>, predictable by anyone.
        try FileManager.default.createSymbolicLink(atPath: path + ".tmp-\(getpid())", withDestinationPath: victim)

        let store = try CredentialStore(path: path)
        try store.set(.user("alice", password: "s3cret", persistence: .permanent), for: Self.space)

        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "untouched", "the credentials were written into the link's target")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let reloaded = try CredentialStore(path: path)
        guard case .password(let user, let password)? = reloaded.credential(for: Self.space)?.kind else {
            Issue.record("the permanent credential was not stored")
            return
        }
        #expect(user == "alice" && password == "s3cret")
        let planted = "credentials.json.tmp-\(getpid())"
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".tmp-") && $0 != planted }
        #expect(leftovers.isEmpty, "temporary files left behind: \(leftovers)")
    }

    @Test("a store file that is a link to another file is replaced, not written through")
    func storeLinkReplaced() throws {
        let directory = try Lab.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/credentials.json"
        let victim = directory + "/elsewhere.json"
        try Data("[]".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: victim)
        let store = try CredentialStore(path: path)
        try store.set(.user("alice", password: "s3cret", persistence: .permanent), for: Self.space)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "[]")
        #expect((try FileManager.default.attributesOfItem(atPath: path))[.type] as? FileAttributeType == .typeRegular)
    }
}
