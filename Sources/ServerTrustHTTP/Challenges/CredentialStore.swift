internal import Foundation
internal import ServerTrust
internal import Synchronization

/// The credentials a session remembers per protection space (`URLCredentialStorage`):
/// ``Credential/Persistence/forSession`` ones in memory, ``Credential/Persistence/permanent``
/// ones also in a JSON file created with mode 0600 (user/password credentials only).
public final class CredentialStore: Sendable {
    /// The file permanent credentials are written to, if any.
    public let path: String?
    private let entries = Mutex<[ProtectionSpace: Credential]>([:])

    /// Opens a store, loading the permanent credentials in `path` if the file exists.
    ///
    /// - Parameter path: The credential file, or `nil` for memory only.
    /// - Throws: ``HTTPError/fileError(path:reason:)`` if the file exists but cannot be read
    ///   or is not a credential file.
    public init(path: String? = nil) throws(HTTPError) {
        self.path = path
        guard let path, FileManager.default.fileExists(atPath: path) else { return }
        let records: [Record]
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            records = try JSONDecoder().decode([Record].self, from: data)
        } catch {
            throw HTTPError.fileError(path: path, reason: "not a credential store: \(error)")
        }
        var loaded: [ProtectionSpace: Credential] = [:]
        for record in records {
            guard let method = ProtectionSpace.AuthenticationMethod(rawValue: record.method) else { continue }
            let space = ProtectionSpace(
                host: record.host, port: record.port, protocol: record.protocol, realm: record.realm,
                authenticationMethod: method, isProxy: record.proxy)
            loaded[space] = .user(record.user, password: record.password, persistence: .permanent)
        }
        entries.withLock { $0 = loaded }
    }

    /// The credential remembered for `space`.
    ///
    /// - Parameter space: The protection space.
    /// - Returns: The credential, or `nil`.
    public func credential(for space: ProtectionSpace) -> Credential? {
        entries.withLock { $0[space] }
    }

    /// Remembers `credential` for `space` according to its persistence (``Credential/Persistence/none``
    /// is not remembered).
    ///
    /// - Parameters:
    ///   - credential: The credential.
    ///   - space: The protection space.
    /// - Throws: ``HTTPError/fileError(path:reason:)`` if the file cannot be written.
    public func set(_ credential: Credential, for space: ProtectionSpace) throws(HTTPError) {
        guard credential.persistence != .none else { return }
        entries.withLock { $0[space] = credential }
        if credential.persistence == .permanent { try save() }
    }

    /// Forgets the credential for `space` (and rewrites the file if it was permanent).
    ///
    /// - Parameter space: The protection space.
    /// - Throws: ``HTTPError/fileError(path:reason:)`` if the file cannot be written.
    public func remove(for space: ProtectionSpace) throws(HTTPError) {
        let removed = entries.withLock { $0.removeValue(forKey: space) }
        if removed?.persistence == .permanent { try save() }
    }

    private struct Record: Codable {
        var host: String
        var port: Int
        var `protocol`: String
        var realm: String?
        var method: String
        var proxy: Bool
        var user: String
        var password: String
    }

    /// Writes every permanent password credential to a new file created with mode 0600 under a
    /// random name (exclusively, never through a link planted in the directory), then renames
    /// it over the store: the file is never readable by others, not even briefly, and a
    /// symbolic link placed where the temporary file goes gets nothing written through it.
    private func save() throws(HTTPError) {
        guard let path else { return }
        let records: [Record] = entries.withLock { entries in
            entries.compactMap { space, credential in
                guard credential.persistence == .permanent, case .password(let user, let password) = credential.kind else { return nil }
                return Record(
                    host: space.host, port: space.port, protocol: space.protocol, realm: space.realm,
                    method: space.authenticationMethod.rawValue, proxy: space.isProxy, user: user, password: password)
            }
        }.sorted { ($0.host, $0.port, $0.realm ?? "") < ($1.host, $1.port, $1.realm ?? "") }
        let data: [UInt8]
        do {
            data = Array(try JSONEncoder().encode(records))
        } catch {
            throw HTTPError.fileError(path: path, reason: "\(error)")
        }
        do {
            try DurableFile.replace(path, with: data, mode: 0o600)
        } catch {
            throw HTTPError.fileError(path: path, reason: error.reason)
        }
    }
}
