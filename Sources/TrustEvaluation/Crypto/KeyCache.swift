import CertificateParsing
import Synchronization

/// Lazily built anchor keys, shared by every validation against one store.
final class KeyCache: Sendable {
    private let keys: Mutex<[ObjectIdentifier: [Int: any Sendable]]>

    init(count: Int) { keys = Mutex([:]) }

    /// The key at `index`, made once per verifier type; a key that cannot be made is made again
    /// next time (and fails again), never remembered.
    func verificationKey<V: SignatureVerifier>(at index: Int, of verifier: V, spki: SubjectPublicKeyInfo) -> Result<V.Key, SignatureError> {
        let type = ObjectIdentifier(V.self)
        if let cached = keys.withLock({ $0[type]?[index] }) as? V.Key { return .success(cached) }
        do {
            let key = try verifier.makeKey(spki)
            keys.withLock { $0[type, default: [:]][index] = key }
            return .success(key)
        } catch {
            return .failure(error)
        }
    }
}
