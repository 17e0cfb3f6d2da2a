package import CertificateParsing
import Synchronization
package import TrustEvaluation

/// Classifies failing chains: path validation against the public roots (TrustEvaluation's
/// ``Verifier``, the same RFC 5280 rules clients use) and a comparison with the CAs the
/// operator expects.
///
/// The rules, in order:
/// 1. The chain validates against the public roots (server-auth purpose). If its leaf is not
///    valid for the host the report names (RFC 6125 §6, as a client checks it), it is
///    **invalid**: a report can carry any chain, and a publicly trusted certificate of another
///    server is no new key of this one, whatever CA issued it. Otherwise, if some CA
///    certificate of the validated path has the key of an expected CA, it is a **rotation**;
///    with expected CAs configured and none on the path, an **unexpected CA**; with none
///    configured, a rotation whose reason says the issuer was not compared.
/// 2. It does not validate and no public root is reached (`untrustedRoot`): an
///    **interception**. A top certificate that bears a public root's name with another key
///    is called out: that is an impostor root, not a misconfiguration.
/// 3. It does not validate for any other reason: **invalid**, with the verifier's reason.
///
/// A classification depends on the chain, whether its leaf is valid for the reported host and
/// the clock only, so it is computed once per distinct pair and cached (bounded): the caller's
/// fingerprint must tell the two apart (``Collector`` derives another one for a chain whose
/// leaf does not cover the reported host).
package final class ChainClassifier: Sendable {
    /// The roots a chain must reach to count as public.
    package let publicRoots: TrustStore
    /// The CAs the operator's certificates come from.
    package let expectedCAs: [Certificate]
    private let verifier: Verifier<OpenSSLSignatureVerifier>
    /// "Now" for each classification.
    private let clock: TrustClock
    private let expectedKeys: Set<[UInt8]>
    private let cache = Mutex<[String: ChainClassification]>([:])
    private static let cacheLimit = 4096

    /// - Parameters:
    ///   - publicRoots: The public roots (`TrustStore.system()` in production).
    ///   - expectedCAs: The CA certificates (intermediates or roots) the operator's
    ///     certificates are issued under.
    ///   - clock: The validation instant's source.
    package init(publicRoots: TrustStore, expectedCAs: [Certificate] = [], clock: TrustClock = .system) {
        self.publicRoots = publicRoots
        self.expectedCAs = expectedCAs
        self.expectedKeys = Set(expectedCAs.map { Array($0.subjectPublicKeyInfo.derBytes) })
        self.verifier = Verifier(anchors: publicRoots, policy: .sslServer(host: nil))
        self.clock = clock
    }

    /// Whether `leaf` is valid for `host`, the report's `hostname` (RFC 6125 §6 through
    /// ``ServerIdentity``; an IPv6 literal may come in brackets, as in a URL).
    package static func leaf(_ leaf: Certificate, isValidFor host: String) -> Bool {
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return ServerIdentity.matches(leaf, name: .dns(name))
    }

    /// The classification of `chain` (leaf first, as reported), from the cache when seen.
    /// `fingerprint` identifies the chain and `coversHost` together.
    package func classify(_ chain: [Certificate], coversHost: Bool = true, fingerprint: String) -> ChainClassification {
        if let known = cache.withLock({ $0[fingerprint] }) { return known }
        let verdict = classify(chain, coversHost: coversHost)
        cache.withLock { table in
            if table.count >= Self.cacheLimit { table.removeAll(keepingCapacity: true) }
            table[fingerprint] = verdict
        }
        return verdict
    }

    /// The classification of `chain`, computed; `coversHost` is whether its leaf is valid for
    /// the host the report names (``leaf(_:isValidFor:)``).
    package func classify(_ chain: [Certificate], coversHost: Bool = true) -> ChainClassification {
        let leaf = chain[0]
        let issuer = leaf.issuer.rfc4514
        let leafPin = "sha256/" + leaf.spkiSHA256Base64
        let outcome = verifier.validate(leaf: leaf, intermediates: Array(chain.dropFirst()), at: clock.now())
        func verdict(_ chainClass: ChainClass, _ reason: String, root: String, validates: Bool) -> ChainClassification {
            ChainClassification(
                chainClass: chainClass, reason: reason, validatesAgainstPublicRoots: validates, root: root, issuer: issuer,
                leafSubject: leaf.subject.rfc4514, leafPin: leafPin)
        }
        switch outcome.result {
        case .success(let path):
            let root = path.anchor.subject.rfc4514
            let cas = path.certificates.dropFirst()
            let via = "validates against the public roots, ending at the root “\(root)”; the leaf is issued by “\(issuer)”"
            guard coversHost else {
                let names = ServerIdentity.names(of: leaf)
                return verdict(
                    .invalid,
                    "The chain \(via), but the leaf is valid for \(names.isEmpty ? "no names" : names.joined(separator: ", ")), not for the "
                        + "host the report names, so no client checking names accepts it there and it is not that server's new key. "
                        + "A report can carry any chain: do not add its pin.",
                    root: root, validates: false)
            }
            if let expected = cas.first(where: { expectedKeys.contains(Array($0.subjectPublicKeyInfo.derBytes)) }) {
                return verdict(
                    .rotation,
                    "The chain \(via), and it passes through “\(expected.subject.rfc4514)”, a CA you expect. The report says none of "
                        + "its known pins matched (a claim the collector does not check), so the server most likely has a new key: once "
                        + "confirmed, add \(leafPin) (or the CA's key) to the pin set.",
                    root: root, validates: true)
            }
            if expectedCAs.isEmpty {
                return verdict(
                    .rotation,
                    "The chain \(via). The report says none of its known pins matched (a claim the collector does not check), so this "
                        + "is most likely a new key from a public CA. No expected "
                        + "CA is configured (collect --expected-ca), so whether this CA is yours was not checked.",
                    root: root, validates: true)
            }
            return verdict(
                .unexpectedCA,
                "The chain \(via), but none of its CAs is one you expect: a change of CA nobody told the app about, or a certificate "
                    + "mis-issued for your name (look the leaf up in Certificate Transparency logs).",
                root: root, validates: true)
        case .failure(let failure):
            let top = chain[chain.count - 1]
            let topName = top.subject.rfc4514
            if failure.kind == .untrustedRoot || failure.kind == .badSignature,
                let impersonated = publicRoots.certificates.first(where: { $0.subject.matches(top.subject) && $0 != top })
            {
                if top.isSelfIssued || failure.kind == .badSignature {
                    return verdict(
                        .interception,
                        "The chain ends at a certificate named like the public root “\(impersonated.subject.rfc4514)” but with another "
                            + "key: an impostor root made to look public, which only an interceptor has reason to use.",
                        root: topName, validates: false)
                }
            }
            if failure.kind == .untrustedRoot {
                let ending =
                    top.isSelfIssued
                    ? "ends at the root “\(topName)”, which no public trust store holds"
                    : "ends at “\(topName)”, issued by “\(top.issuer.rfc4514)”, which no public trust store holds"
                return verdict(
                    .interception,
                    "The chain does not validate against the public roots: it \(ending). The device trusted it, so a root was "
                        + "installed on it: a TLS-intercepting proxy (corporate, Charles, mitmproxy), antivirus or malware.",
                    root: topName, validates: false)
            }
            return verdict(
                .invalid,
                "The chain does not validate against the public roots: \(failure.kind.rawValue) (\(failure.detail)). A misconfigured "
                    + "or expired server certificate is likelier than an attack, but the device accepted it: check its trust settings.",
                root: topName, validates: false)
        }
    }
}
