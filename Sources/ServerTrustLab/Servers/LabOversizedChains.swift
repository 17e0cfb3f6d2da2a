// Certificates and chains far larger than any a real server should send, for the fault tests
// of issue 7 §3: a client must refuse them with a typed error in bounded time, not hang,
// exhaust memory or crash.

extension LabPKI {
    /// A chain of `length` certificates under this PKI's root: a leaf for `host` followed by
    /// `length - 1` CA certificates, each issued by the next, the last one by ``root``.
    ///
    /// Every CA has CA:TRUE with no path-length limit, keyCertSign, SKI/AKI and its own P-256
    /// key, so the only thing wrong with the chain is its length: a verifier that caps the
    /// number of intermediates (as RFC 5280 §6.1 allows and every browser does) must stop at
    /// its cap, and one that does not must still finish. Send it as served (root excluded).
    ///
    /// - Parameters:
    ///   - host: The leaf's host name (CN and SAN).
    ///   - length: Certificates in the chain, leaf included (at least 2).
    ///   - leafNotBefore: The leaf's start of validity; `nil` uses ``leafValidity``.
    ///   - leafNotAfter: The leaf's end of validity; `nil` uses ``leafValidity``.
    /// - Returns: The chain, leaf first, and the leaf's key (this PKI's ``leafKey``).
    /// - Throws: ``LabError`` if key generation or signing fails.
    public func deepChain(
        host: String, length: Int, leafNotBefore: Int64? = nil,
        leafNotAfter: Int64? = nil
    ) throws -> LabTLSServer.Identity {
        guard length >= 2 else { throw LabError.invalid("deepChain", "a chain needs a leaf and at least one CA") }
        var issuer = rootIssuer
        var authorities: [LabCertificate] = []
        for level in 1..<length {
            // A fresh key per level: with shared keys, key identifiers would repeat and a path
            // builder could take shortcuts the test is not about.
            let key = try LabKey(.p256)
            let spec = LabCertificateSpec(
                subject: LabName([("O", "ServerTrust Lab"), ("CN", "ServerTrust Lab Deep CA \(level)")]),
                notBefore: Self.intermediateValidity.notBefore,
                notAfter: Self.intermediateValidity.notAfter,
                extensions: [
                    .basicConstraints(ca: true),
                    .keyUsage([.digitalSignature, .keyCertSign, .cRLSign]),
                    .subjectKeyIdentifier(),
                    .authorityKeyIdentifier(),
                ])
            let authority = try LabCertificate.issue(spec, subjectKey: key, issuer: issuer)
            authorities.append(authority)
            issuer = LabIssuer(certificate: authority, key: key)
        }
        let spec = Self.leafSpec(host: host, keyAlgorithm: leafKey.algorithm, notBefore: leafNotBefore, notAfter: leafNotAfter)
        let leaf = try LabCertificate.issue(spec, subjectKey: leafKey, issuer: issuer)
        return LabTLSServer.Identity(chain: [leaf] + authorities.reversed(), key: leafKey)
    }

    /// A leaf for `host` from this PKI's intermediate whose DER is at least `minimumSize`
    /// bytes, made large the way real oversized certificates are: a subjectAltName with
    /// thousands of dNSNames (`host` first, then `nNNNNNN.<host>` fillers).
    ///
    /// - Parameters:
    ///   - host: The leaf's host name (CN and first SAN).
    ///   - minimumSize: The smallest acceptable DER size in bytes.
    ///   - notBefore: Start of validity; `nil` uses ``leafValidity``.
    ///   - notAfter: End of validity; `nil` uses ``leafValidity``.
    /// - Returns: The leaf (with ``leafKey``); serve it with ``intermediate``.
    /// - Throws: ``LabError`` if signing fails.
    public func oversizedLeaf(
        host: String, minimumSize: Int, notBefore: Int64? = nil,
        notAfter: Int64? = nil
    ) throws -> LabCertificate {
        // Each filler is a 2-byte tag and length plus "n0000001." + host.
        let entrySize = 2 + 9 + host.utf8.count
        let count = max(0, minimumSize / entrySize) + 1
        var names: [LabGeneralName] = [.dns(host)]
        names.reserveCapacity(count + 1)
        for index in 0..<count {
            let digits = String(index)
            names.append(.dns("n" + String(repeating: "0", count: max(0, 7 - digits.count)) + digits + "." + host))
        }
        return try issueLeaf(host: host, subjectAltNames: names, notBefore: notBefore, notAfter: notAfter)
    }
}
