import CertificateParsing
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where a client keeps the pin sets it accepted, across restarts, so that a crash at any
/// instant leaves either the old store or the new one, never a mix.
///
/// A save writes a temporary file beside the store, `fsync`s it, moves the old store to
/// `PATH.previous`, renames the temporary file to `PATH` and `fsync`s the directory
/// (rename(2) is atomic within a file system; the `fsync`s order the data before the names, as
/// the ext4 and XFS documentation require for crash safety). A load reads both generations and
/// the caller keeps whichever verifies to the higher serial (``PinSetChain/restoring(_:rules:)``):
/// nothing read here is trusted before its signatures verify again.
///
/// The file is JSON, `{"format": 1, "etag": …, "documents": ["<base64 envelope>", …]}`, mode
/// 0600.
public struct PinSetStore: Sendable {
    /// The store file.
    public let path: String

    /// The largest store file read: every rotation and the current document at their maximum
    /// size, in base64, with room for the rest.
    public static let maximumSize = (PinSetRules.maximumKeyRotations + 1) * PinSetDocument.maximumSize * 4 / 3 + 4096

    /// What one store file held.
    public struct Generation: Sendable {
        /// The stored envelopes, oldest first (not yet verified).
        public let documents: [[UInt8]]
        /// The entity tag of the response the current document came in, for `If-None-Match`.
        public let etag: String?
    }

    /// A store at `path` (its directory must exist).
    /// - Parameter path: The store file.
    public init(path: String) {
        self.path = path
    }

    /// The older generation, kept by every save.
    public var previousPath: String { path + ".previous" }

    /// Reads both generations, newest first, and removes temporary files a crash left behind.
    /// - Returns: Each readable generation, and one problem per file that exists but cannot be
    ///   read or parsed (torn, truncated, not a store).
    public func load() -> (generations: [Generation], problems: [PinSetError]) {
        removeLeftovers()
        var generations: [Generation] = []
        var problems: [PinSetError] = []
        for file in [path, previousPath] {
            switch Self.read(file) {
            case .none: continue
            case .some(.success(let generation)): generations.append(generation)
            case .some(.failure(let problem)): problems.append(problem)
            }
        }
        return (generations, problems)
    }

    /// What a start finds in the store.
    public struct Restored: Sendable {
        /// The chain of the generation that verified to the higher serial (the newer file on a
        /// tie), or a chain at the baseline.
        public let chain: PinSetChain
        /// That generation's entity tag (`nil` without a current document).
        public let etag: String?
        /// Every file or stored document that was unusable and ignored.
        public let problems: [PinSetError]
        /// Whether the store should be written again from ``chain`` (the newer file was not
        /// the one used, or something in it was dropped).
        public let needsRepair: Bool
    }

    /// Loads both generations and verifies each again from the shipped keys
    /// (``PinSetChain/restoring(_:rules:)``): a torn, truncated or tampered file is detected and
    /// ignored in favour of the last good document, or the baseline.
    /// - Parameter rules: The app's rules.
    /// - Returns: The chain to use and what was wrong.
    public func restore(rules: PinSetRules) -> Restored {
        let (generations, loadProblems) = load()
        var problems = loadProblems
        var best: (chain: PinSetChain, etag: String?, index: Int)?
        var dropped: [[PinSetError]] = []
        for (index, generation) in generations.enumerated() {
            let (chain, problems) = PinSetChain.restoring(generation.documents, rules: rules)
            dropped.append(problems)
            if chain.serial > best?.chain.serial ?? -1 { best = (chain, generation.etag, index) }
        }
        guard let best else { return Restored(chain: PinSetChain(rules: rules), etag: nil, problems: problems, needsRepair: !problems.isEmpty) }
        problems += dropped[best.index]
        if best.index != 0 {
            problems += dropped[0]
            if dropped[0].isEmpty {
                problems.append(
                    PinSetError(.storeUnusable, "\(path) holds an older set than \(previousPath); serial \(best.chain.serial) from the older file is in force"))
            }
        }
        return Restored(
            chain: best.chain, etag: best.chain.current == nil ? nil : best.etag, problems: problems,
            needsRepair: best.index != 0 || !problems.isEmpty)
    }

    /// Replaces the store, crash-safely (see the type's documentation).
    /// - Parameters:
    ///   - documents: The envelopes to keep, oldest first.
    ///   - etag: The current document's entity tag.
    /// - Throws: ``PinSetError`` (`storeWriteFailed`); the old store is then untouched.
    public func save(_ documents: [[UInt8]], etag: String?) throws(PinSetError) {
        var object: [(String, String)] = [("format", "1")]
        object.append(("etag", etag.map(Self.quote) ?? "null"))
        object.append(("documents", "[" + documents.map { "\"" + Base64.encode($0) + "\"" }.joined(separator: ",\n  ") + "]"))
        let text = "{" + object.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ",\n ") + "}\n"
        let temporary = DurableFile.temporaryName(beside: path)
        do {
            try DurableFile.create(temporary, with: Array(text.utf8))
        } catch {
            throw PinSetError(.storeWriteFailed, error.reason)
        }
        if access(path, F_OK) == 0, rename(path, previousPath) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw PinSetError(.storeWriteFailed, "cannot keep \(path) as \(previousPath): \(reason)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw PinSetError(.storeWriteFailed, "cannot rename the new store to \(path): \(reason)")
        }
        DurableFile.syncDirectory(of: path)
    }

    /// Writes `bytes` to `path` crash-safely: a temporary file beside it,
    /// `fsync`, rename(2), `fsync` of the directory. Readers see the old file or the new one,
    /// never part of either.
    /// - Parameters:
    ///   - bytes: The contents.
    ///   - path: The file to replace or create.
    ///   - mode: Its permissions (0600 for a store; a published document may be 0644).
    /// - Throws: ``PinSetError`` (`storeWriteFailed`); `path` is then untouched.
    package static func writeAtomically(_ bytes: [UInt8], to path: String, mode: UInt16 = 0o600) throws(PinSetError) {
        do {
            try DurableFile.replace(path, with: bytes, mode: UInt32(mode))
        } catch {
            throw PinSetError(.storeWriteFailed, error.reason)
        }
    }

    /// Removes `PATH.tmp-*` files: a save that crashed before its rename.
    func removeLeftovers() {
        let directory = (path as NSString).deletingLastPathComponent
        let prefix = (path as NSString).lastPathComponent
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory) else { return }
        for name in names where DurableFile.isTemporary(name, for: prefix) {
            unlink((directory.isEmpty ? "" : directory + "/") + name)
        }
    }

    /// One store file: `nil` when it does not exist.
    static func read(_ file: String) -> Result<Generation, PinSetError>? {
        switch DurableFile.read(file, maximumSize: maximumSize) {
        case nil: return nil
        case .failure(let failure)?: return .failure(PinSetError(.storeUnusable, failure.reason))
        case .success(let bytes)?: return parse(bytes, file: file)
        }
    }

    /// Parses a store file strictly: exactly the three members, each envelope canonical base64.
    static func parse(_ bytes: [UInt8], file: String) -> Result<Generation, PinSetError> {
        let root: Any
        let duplicates: [PolicyConfigurationError]
        do { (root, duplicates) = try PolicyFile.readJSON(bytes) } catch {
            return .failure(PinSetError(.storeUnusable, "\(file): not JSON (torn or truncated?)", problems: error.problems))
        }
        var reader = ConfigReader()
        reader.problems = duplicates
        guard let object = reader.object(root, "$") else { return .failure(PinSetError(.storeUnusable, "\(file): not a store", problems: reader.problems)) }
        reader.allowOnly(object, ["format", "etag", "documents"], "$")
        if reader.integer(object, "format", "$") != 1 { reader.fail(.unsupportedVersion, "$.format", "not store format 1") }
        var etag: String?
        if !(object["etag"] is NSNull) { etag = reader.string(object, "etag", "$") }
        var documents: [[UInt8]] = []
        for (text, path) in reader.strings(object, "documents", "$") ?? [] {
            guard let envelope = PinSetEncoding.canonicalBase64(text) else {
                reader.fail(.invalidValue, path, "not canonical base64")
                continue
            }
            documents.append(envelope)
        }
        if object["documents"] == nil { reader.fail(.missingKey, "$.documents", "missing") }
        guard reader.problems.isEmpty else { return .failure(PinSetError(.storeUnusable, "\(file): not a valid store", problems: reader.problems)) }
        return .success(Generation(documents: documents, etag: etag))
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
