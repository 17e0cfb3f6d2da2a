public import ServerTrust
internal import Synchronization

extension FetchingCRLProvider {
    /// The provider of this process for `cacheDirectory` (in memory only for `nil`), made on
    /// first use and then shared by every session and decider that fetches CRLs with that
    /// folder: one cache and one in-flight fetch per URL for the whole process, so a hundred
    /// sessions starting at once fetch a CRL once.
    ///
    /// - Parameter cacheDirectory: The disk cache's folder (created, mode 0700, if missing), or
    ///   `nil` for memory only.
    /// - Returns: The provider.
    /// - Throws: ``/ServerTrust/CRLCacheError`` when the folder cannot be created or is not one.
    public static func shared(cacheDirectory: String? = nil) throws(CRLCacheError) -> FetchingCRLProvider {
        let key = cacheDirectory.map(Self.normalized)
        if let known = sharedProviders.withLock({ $0[key] }) { return known }
        let made = FetchingCRLProvider(cache: try CRLCache(directory: key))
        return sharedProviders.withLock { providers in
            if let raced = providers[key] { return raced }
            providers[key] = made
            return made
        }
    }

    /// A folder path without `.`, `..`, repeated or trailing slashes, so two spellings of one
    /// folder share a provider.
    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        return path.hasPrefix("/") ? "/" + joined : (joined.isEmpty ? "." : joined)
    }
}

private let sharedProviders = Mutex<[String?: FetchingCRLProvider]>([:])

extension ServerTrustDecider {
    /// This decider with the CRL fetching its policy asks for bound to a fetcher: every host
    /// whose revocation setting fetches from distribution points
    /// (``/ServerTrust/RevocationPolicy/Fetching/distributionPoints(cacheDirectory:)``) gets the
    /// process's ``FetchingCRLProvider`` for that folder (``FetchingCRLProvider/shared(cacheDirectory:)``).
    ///
    /// An ``HTTPSession`` does this with the decider it is given, and again with each
    /// ``HTTPSession/replaceServerTrust(_:)``; call it yourself to fetch CRLs with a decider used
    /// outside a session. Settings that name a provider, or fetch nothing, stay as they are.
    /// - Returns: The decider.
    /// - Throws: ``/ServerTrust/CRLCacheError`` when a cache folder cannot be used.
    public func withCRLFetching() throws(CRLCacheError) -> ServerTrustDecider {
        var folders: [String?] = []
        for host in policy.rules.map(\.policy) + (policy.unmatched.map { [$0] } ?? []) {
            if case .distributionPoints(let folder) = host.revocation.fetching, !folders.contains(folder) { folders.append(folder) }
        }
        guard !folders.isEmpty else { return self }
        var providers: [String?: FetchingCRLProvider] = [:]
        for folder in folders { providers[folder] = try FetchingCRLProvider.shared(cacheDirectory: folder) }
        let bound = policy.mapHosts { host in
            guard case .distributionPoints(let folder) = host.revocation.fetching, let provider = providers[folder] else { return host }
            var host = host
            host.revocation.fetching = .provider(provider)
            return host
        }
        return ServerTrustDecider(policy: bound, anchors: anchors, clock: clock)
    }
}
