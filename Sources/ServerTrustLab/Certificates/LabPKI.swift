/// A three-level web PKI (root → intermediate → leaf) shaped like a public TLS hierarchy,
/// dated around ``LabClock/reference``.
public struct LabPKI: Sendable, Hashable {
    /// The self-signed root CA (critical CA:TRUE, keyCertSign|cRLSign, SKI).
    public let root: LabCertificate
    /// The root's private key.
    public let rootKey: LabKey
    /// The intermediate CA (pathLen 0, AKI/SKI, EKU serverAuth+clientAuth).
    public let intermediate: LabCertificate
    /// The intermediate's private key.
    public let intermediateKey: LabKey
    /// The TLS server leaf (CA:FALSE, EKU serverAuth, SAN, AKI/SKI).
    public let leaf: LabCertificate
    /// The leaf's private key.
    public let leafKey: LabKey

    /// The root as an issuer.
    public var rootIssuer: LabIssuer { LabIssuer(certificate: root, key: rootKey) }
    /// The intermediate as an issuer (what signs leaves).
    public var intermediateIssuer: LabIssuer { LabIssuer(certificate: intermediate, key: intermediateKey) }
    /// What a TLS server sends: leaf then intermediate (the root is the client's trust anchor).
    public var serverChain: [LabCertificate] { [leaf, intermediate] }

    /// Validity of the root: ``LabClock/reference`` ± 10 years.
    public static let rootValidity = (notBefore: LabClock.reference - 10 * LabClock.year, notAfter: LabClock.reference + 10 * LabClock.year)
    /// Validity of the intermediate: ``LabClock/reference`` ± 5 years.
    public static let intermediateValidity = (notBefore: LabClock.reference - 5 * LabClock.year, notAfter: LabClock.reference + 5 * LabClock.year)
    /// Default validity of leaves: 30 days before to 60 days after ``LabClock/reference``.
    public static let leafValidity = (notBefore: LabClock.reference - 30 * LabClock.day, notAfter: LabClock.reference + 60 * LabClock.day)

    /// Builds a root, intermediate and leaf for `host` with cached keys.
    ///
    /// - Parameters:
    ///   - host: The server host name or IP literal (leaf CN and default SAN).
    ///   - algorithm: Key algorithm for the root and intermediate (and the leaf by default).
    ///   - leafAlgorithm: Leaf key algorithm, if different.
    ///   - leafSubjectAltNames: Leaf SAN entries; `nil` means `[.forHost(host)]`.
    ///   - leafNotBefore: Leaf start of validity; `nil` uses ``leafValidity``.
    ///   - leafNotAfter: Leaf end of validity; `nil` uses ``leafValidity``.
    ///   - keySlot: Selects which cached keys are used (roles use slots `3*keySlot`,
    ///     `3*keySlot+1`, `3*keySlot+2`), so two PKIs with different slots share no key.
    /// - Returns: The PKI.
    /// - Throws: ``LabError`` if generation or signing fails.
    public static func webChain(
        host: String,
        algorithm: LabKeyAlgorithm = .p256,
        leafAlgorithm: LabKeyAlgorithm? = nil,
        leafSubjectAltNames: [LabGeneralName]? = nil,
        leafNotBefore: Int64? = nil,
        leafNotAfter: Int64? = nil,
        keySlot: Int = 0
    ) throws -> LabPKI {
        let rootKey = try LabKey.shared(algorithm, slot: 3 * keySlot)
        let intermediateKey = try LabKey.shared(algorithm, slot: 3 * keySlot + 1)
        let leafKey = try LabKey.shared(leafAlgorithm ?? algorithm, slot: 3 * keySlot + 2)

        let rootSpec = LabCertificateSpec(
            subject: LabName([("C", "US"), ("O", "ServerTrust Lab"), ("CN", "ServerTrust Lab Root CA \(algorithm)")]),
            notBefore: rootValidity.notBefore,
            notAfter: rootValidity.notAfter,
            extensions: [
                .basicConstraints(ca: true),
                .keyUsage([.keyCertSign, .cRLSign]),
                .subjectKeyIdentifier(),
            ]
        )
        let root = try LabCertificate.issue(rootSpec, subjectKey: rootKey)

        let intermediateSpec = LabCertificateSpec(
            subject: LabName([("C", "US"), ("O", "ServerTrust Lab"), ("CN", "ServerTrust Lab Issuing CA \(algorithm)")]),
            notBefore: intermediateValidity.notBefore,
            notAfter: intermediateValidity.notAfter,
            extensions: [
                .basicConstraints(ca: true, pathLength: 0),
                .keyUsage([.digitalSignature, .keyCertSign, .cRLSign]),
                .extendedKeyUsage(["serverAuth", "clientAuth"]),
                .subjectKeyIdentifier(),
                .authorityKeyIdentifier(),
            ]
        )
        let intermediate = try LabCertificate.issue(
            intermediateSpec, subjectKey: intermediateKey, issuer: LabIssuer(certificate: root, key: rootKey)
        )
        let ca = LabPKI(
            root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey,
            leaf: intermediate, leafKey: intermediateKey)
        let leaf = try ca.issueLeaf(
            host: host, key: leafKey, subjectAltNames: leafSubjectAltNames,
            notBefore: leafNotBefore, notAfter: leafNotAfter)
        return ca.replacingLeaf(leaf, key: leafKey)
    }

    /// The spec of a typical TLS server leaf: CN=host, CA:FALSE, digitalSignature (plus
    /// keyEncipherment for RSA keys), EKU serverAuth, SAN, SKI and AKI.
    ///
    /// - Parameters:
    ///   - host: Host name or IP literal.
    ///   - keyAlgorithm: The leaf key's algorithm (decides keyEncipherment).
    ///   - subjectAltNames: SAN entries; `nil` means `[.forHost(host)]`; empty omits the SAN.
    ///   - notBefore: Start of validity; `nil` uses ``leafValidity``.
    ///   - notAfter: End of validity; `nil` uses ``leafValidity``.
    ///   - extraExtensions: Appended after the standard extensions.
    /// - Returns: The spec, ready to adjust further and pass to ``LabCertificate/issue(_:subjectKey:issuer:)``.
    public static func leafSpec(
        host: String,
        keyAlgorithm: LabKeyAlgorithm,
        subjectAltNames: [LabGeneralName]? = nil,
        notBefore: Int64? = nil,
        notAfter: Int64? = nil,
        extraExtensions: [LabExtension] = []
    ) -> LabCertificateSpec {
        let usages: [LabKeyUsage] = keyAlgorithm.isRSA ? [.digitalSignature, .keyEncipherment] : [.digitalSignature]
        var extensions: [LabExtension] = [
            .basicConstraints(ca: false),
            .keyUsage(usages),
            .extendedKeyUsage(["serverAuth"]),
        ]
        let sans = subjectAltNames ?? [.forHost(host)]
        if !sans.isEmpty { extensions.append(.subjectAltName(sans)) }
        extensions += [.subjectKeyIdentifier(), .authorityKeyIdentifier()]
        return LabCertificateSpec(
            subject: LabName([("CN", host)]),
            notBefore: notBefore ?? leafValidity.notBefore,
            notAfter: notAfter ?? leafValidity.notAfter,
            extensions: extensions + extraExtensions
        )
    }

    /// Issues another leaf from this PKI's intermediate.
    ///
    /// - Parameters:
    ///   - host: Host name or IP literal.
    ///   - key: The leaf key; `nil` uses this PKI's ``leafKey``.
    ///   - subjectAltNames: SAN entries; `nil` means `[.forHost(host)]`.
    ///   - notBefore: Start of validity; `nil` uses ``leafValidity``.
    ///   - notAfter: End of validity; `nil` uses ``leafValidity``.
    ///   - extraExtensions: Appended after the standard extensions.
    /// - Returns: The leaf certificate (its ``LabCertificate/subjectKey`` is set).
    /// - Throws: ``LabError`` if signing fails.
    public func issueLeaf(
        host: String,
        key: LabKey? = nil,
        subjectAltNames: [LabGeneralName]? = nil,
        notBefore: Int64? = nil,
        notAfter: Int64? = nil,
        extraExtensions: [LabExtension] = []
    ) throws -> LabCertificate {
        let leafKey = key ?? self.leafKey
        let spec = Self.leafSpec(
            host: host, keyAlgorithm: leafKey.algorithm, subjectAltNames: subjectAltNames,
            notBefore: notBefore, notAfter: notAfter, extraExtensions: extraExtensions)
        return try LabCertificate.issue(spec, subjectKey: leafKey, issuer: intermediateIssuer)
    }

    /// The same CA with a new leaf for another host.
    ///
    /// - Parameters:
    ///   - host: Host name or IP literal.
    ///   - subjectAltNames: SAN entries; `nil` means `[.forHost(host)]`.
    ///   - notBefore: Start of validity; `nil` uses ``leafValidity``.
    ///   - notAfter: End of validity; `nil` uses ``leafValidity``.
    /// - Returns: A PKI sharing this root and intermediate.
    /// - Throws: ``LabError`` if signing fails.
    public func withLeaf(host: String, subjectAltNames: [LabGeneralName]? = nil, notBefore: Int64? = nil, notAfter: Int64? = nil) throws -> LabPKI {
        replacingLeaf(try issueLeaf(host: host, subjectAltNames: subjectAltNames, notBefore: notBefore, notAfter: notAfter), key: leafKey)
    }

    /// The same CA with `leaf` (and its key) in place of the current leaf.
    ///
    /// - Parameters:
    ///   - leaf: The new leaf.
    ///   - key: Its key.
    /// - Returns: The updated PKI.
    public func replacingLeaf(_ leaf: LabCertificate, key: LabKey) -> LabPKI {
        LabPKI(root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey, leaf: leaf, leafKey: key)
    }

    /// Writes `root.pem`, `intermediate.pem`, `leaf.pem` (each also as `.der`), `chain.pem`
    /// (leaf + intermediate) and `leaf.key` (PKCS#8 PEM) into `directory`.
    ///
    /// - Parameter directory: The directory (created if missing).
    /// - Returns: The paths written.
    /// - Throws: ``LabError`` if a file cannot be written or the key cannot be encoded.
    @discardableResult
    public func write(to directory: String) throws -> [String] {
        var paths: [String] = []
        paths += try LabFiles.write(root, named: "root", in: directory)
        paths += try LabFiles.write(intermediate, named: "intermediate", in: directory)
        paths += try LabFiles.write(leaf, named: "leaf", in: directory)
        paths.append(try LabFiles.writeBundle(serverChain, to: directory + "/chain.pem"))
        paths.append(try LabFiles.write(try leafKey.privateKeyPEM(), to: directory + "/leaf.key"))
        return paths
    }

    /// Equal when every certificate and key is.
    public static func == (lhs: LabPKI, rhs: LabPKI) -> Bool {
        lhs.root == rhs.root && lhs.intermediate == rhs.intermediate && lhs.leaf == rhs.leaf
            && lhs.rootKey == rhs.rootKey && lhs.intermediateKey == rhs.intermediateKey && lhs.leafKey == rhs.leafKey
    }

    /// Hashes the certificates (keys are determined by them in practice).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(root)
        hasher.combine(intermediate)
        hasher.combine(leaf)
    }
}
