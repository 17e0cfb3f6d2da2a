public import CertificateParsing
public import TrustEvaluation
internal import Synchronization

/// A SHA-256 SubjectPublicKeyInfo pin (`sha256/BASE64`, as HPKP, OkHttp and `servertrust
/// inspect` print it; curl's `sha256//BASE64` form is accepted too).
public struct PublicKeyPin: Hashable, Sendable, CustomStringConvertible {
    /// Standard base64 of the 32-byte digest.
    public let base64: String

    /// Parses `sha256/BASE64` or `sha256//BASE64`.
    ///
    /// - Parameter text: The pin text.
    /// - Returns: `nil` unless the text names SHA-256 and carries 32 bytes of standard base64.
    public init?(_ text: String) {
        var body = Substring(text)
        guard body.hasPrefix("sha256/") else { return nil }
        body = body.dropFirst("sha256/".count)
        // curl writes `sha256//<base64>`, but base64 may itself start with "/": the extra slash
        // is dropped only when the text is not a valid digest as it stands (one pin in 64 starts
        // with "/", and dropping it unconditionally made those pins unusable).
        if body.hasPrefix("/"), Base64.decode(body.utf8)?.count != 32 { body = body.dropFirst() }
        guard let bytes = Base64.decode(body.utf8), bytes.count == 32 else { return nil }
        self.base64 = Base64.encode(bytes)
    }

    /// The pin of a certificate's public key.
    ///
    /// - Parameter certificate: The certificate.
    public init(certificate: Certificate) {
        self.base64 = certificate.spkiSHA256Base64
    }

    /// `sha256/BASE64`.
    public var description: String { "sha256/" + base64 }
}

/// The built-in decider: RFC 5280 path validation against a trust store and the RFC 6125
/// host check (``TrustEvaluation/Verifier``), plus optional SPKI pinning, with the switches
/// of AFNetworking's `AFSecurityPolicy` (`allowInvalidCertificates`, `validatesDomainName`,
/// pinning mode public key).
///
/// Until module `ServerTrust` exposes its `SecurityPolicy`, this is what ``HTTPSession`` uses
/// by default (with the system trust store).
public struct StandardTrustDecider: ServerTrustDecider {
    /// The trust anchors, parsed once when the decider is made.
    public let anchors: TrustStore
    /// Check the leaf against the request host (AFNetworking's `validatesDomainName`).
    public var validatesDomainName: Bool
    /// Skip path validation (AFNetworking's `allowInvalidCertificates`); pins, if any, are
    /// still enforced.
    public var allowInvalidCertificates: Bool
    /// SPKI pins; when non-empty, some certificate of the served chain must carry one of them.
    public var pins: Set<PublicKeyPin>
    /// A fixed validation time (seconds since 1970), or `nil` for the current time.
    public var validationTime: Int64? {
        didSet { verifiers = VerifierCache() }
    }
    /// Verifiers per host: a verifier's rule tables are built once, not per handshake.
    private var verifiers = VerifierCache()

    /// Creates a decider.
    ///
    /// - Parameters:
    ///   - anchors: The trust store.
    ///   - validatesDomainName: Check the host name (default `true`).
    ///   - allowInvalidCertificates: Skip path validation (default `false`).
    ///   - pins: SPKI pins (default none).
    ///   - validationTime: Fixed time, or `nil` for now.
    public init(anchors: TrustStore, validatesDomainName: Bool = true, allowInvalidCertificates: Bool = false,
                pins: Set<PublicKeyPin> = [], validationTime: Int64? = nil) {
        self.anchors = anchors
        self.validatesDomainName = validatesDomainName
        self.allowInvalidCertificates = allowInvalidCertificates
        self.pins = pins
        self.validationTime = validationTime
    }

    /// The system trust store with the default checks.
    ///
    /// - Returns: The decider.
    /// - Throws: ``TrustEvaluation/TrustStoreError`` if the system bundle cannot be read.
    public static func system() throws(TrustStoreError) -> StandardTrustDecider {
        StandardTrustDecider(anchors: try TrustStore.system())
    }

    /// Validates the chain, then checks the pins.
    ///
    /// - Parameter chain: The served chain.
    /// - Returns: The decision (`evaluator` is `"chain"` or `"pins"`).
    public func decide(_ chain: ServedChain) -> TrustDecision {
        guard let leaf = chain.leaf else {
            return .reject(chain, by: "chain", "the server sent no certificate")
        }
        var verified: [Certificate]?
        if !allowInvalidCertificates {
            let host: String? = validatesDomainName ? chain.host : nil
            let verifier = verifiers.verifier(host: host, anchors: anchors, time: validationTime)
            let outcome = verifier.validate(leaf: leaf, intermediates: Array(chain.certificates.dropFirst()))
            switch outcome.result {
            case .failure(let failure):
                return TrustDecision(.rejected, for: chain, evaluator: "chain", reason: failure.description, validationFailure: failure)
            case .success(let path):
                verified = path.certificates
            }
        }
        if !pins.isEmpty {
            // AFNetworking's public-key mode: any served certificate (and, after validation,
            // the anchor the path ended at) may carry the pin.
            let candidates = chain.certificates + (verified.map { Array($0.suffix(1)) } ?? [])
            // Hashed one at a time up to the first match (usually the leaf), not all up front.
            guard candidates.lazy.map(PublicKeyPin.init(certificate:)).contains(where: pins.contains) else {
                let list = candidates.map { PublicKeyPin(certificate: $0).description }.joined(separator: ", ")
                return TrustDecision(.rejected, for: chain, evaluator: "pins",
                                     reason: "no pinned public key in the served chain (served \(list))", verifiedChain: verified)
            }
            return TrustDecision(.accepted, for: chain, evaluator: "pins",
                                 reason: allowInvalidCertificates ? "pinned public key present (chain not validated)"
                                     : "chain valid and pinned public key present", verifiedChain: verified)
        }
        if allowInvalidCertificates {
            return TrustDecision(.accepted, for: chain, evaluator: "chain", reason: "invalid certificates allowed (no validation)")
        }
        let anchor = verified?.last?.subject.rfc4514 ?? "?"
        let what = validatesDomainName ? "valid for \(chain.host)" : "valid (host not checked)"
        return TrustDecision(.accepted, for: chain, evaluator: "chain", reason: "chain to \"\(anchor)\" \(what)", verifiedChain: verified)
    }
}

/// Verifiers for a decider, one per host name, built on first use. The anchors and the time
/// setting of a decider never change while it is shared (changing them makes a new cache).
final class VerifierCache: Sendable {
    private let verifiers = Mutex<[String: Verifier<OpenSSLSignatureVerifier>]>([:])
    /// Hosts remembered; beyond this the cache starts over (a client talks to few hosts).
    private static let limit = 256

    func verifier(host: String?, anchors: TrustStore, time: Int64?) -> Verifier<OpenSSLSignatureVerifier> {
        let key = host ?? ""
        if let cached = verifiers.withLock({ $0[key] }), cached.anchors === anchors { return cached }
        let verifier = Verifier(anchors: anchors, policy: .sslServer(host: host, at: time))
        verifiers.withLock { cache in
            if cache.count >= Self.limit { cache.removeAll() }
            cache[key] = verifier
        }
        return verifier
    }
}
