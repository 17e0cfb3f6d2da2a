/// nameConstraints (RFC 5280 §4.2.1.10).
public struct NameConstraints: Hashable, Sendable {
    /// Subtrees every name below the CA must fall in (per name type present).
    public let permittedSubtrees: [GeneralName]
    /// Subtrees no name below the CA may fall in.
    public let excludedSubtrees: [GeneralName]

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        (permittedSubtrees, excludedSubtrees) = try input.sequence(node, .sequence, "nameConstraints") { nodes throws(DERError) in
            var permitted: [GeneralName]?
            var excluded: [GeneralName]?
            if let n = try nodes.optional(.context(0)) { permitted = try NameConstraints.subtrees(n, input, "permittedSubtrees") }
            if let n = try nodes.optional(.context(1)) { excluded = try NameConstraints.subtrees(n, input, "excludedSubtrees") }
            // RFC 5280 §4.2.1.10: "Conforming CAs MUST NOT issue certificates where name
            // constraints is an empty sequence."
            guard permitted != nil || excluded != nil else {
                throw DERError(.invalidValue, at: node.start, "nameConstraints is empty")
            }
            return (permitted ?? [], excluded ?? [])
        }
    }

    /// GeneralSubtrees ::= SEQUENCE SIZE (1..MAX) OF GeneralSubtree; GeneralSubtree ::= SEQUENCE
    /// { base GeneralName, minimum [0] DEFAULT 0, maximum [1] OPTIONAL }. RFC 5280 requires
    /// minimum 0 and maximum absent; DER requires the DEFAULT minimum to be omitted.
    static func subtrees(_ node: RawNode, _ input: DERInput, _ name: StaticString) throws(DERError) -> [GeneralName] {
        let list = try input.sequence(node, node.identifier, name) { nodes throws(DERError) in
            var list: [GeneralName] = []
            while let subtree = try nodes.next() {
                let base = try input.sequence(subtree, .sequence, "GeneralSubtree") { fields throws(DERError) in
                    guard let first = try fields.next() else {
                        throw DERError(.missingField, at: subtree.start, "GeneralSubtree has no base")
                    }
                    let base = try GeneralName(first, input)
                    if let minimum = try fields.optional(.context(0)) {
                        throw DERError(.invalidValue, at: minimum.start, "GeneralSubtree minimum must be absent (RFC 5280 §4.2.1.10)")
                    }
                    if let maximum = try fields.optional(.context(1)) {
                        throw DERError(.invalidValue, at: maximum.start, "GeneralSubtree maximum must be absent (RFC 5280 §4.2.1.10)")
                    }
                    return base
                }
                list.append(base)
            }
            return list
        }
        guard !list.isEmpty else { throw DERError(.invalidValue, at: node.start, "\(name) is empty") }
        return list
    }
}

/// authorityKeyIdentifier (RFC 5280 §4.2.1.1).
public struct AuthorityKeyIdentifier: Hashable, Sendable {
    /// `[0] keyIdentifier`.
    public let keyIdentifier: ArraySlice<UInt8>?
    /// `[1] authorityCertIssuer`.
    public let authorityCertIssuer: [GeneralName]?
    /// `[2] authorityCertSerialNumber` (INTEGER content bytes).
    public let authorityCertSerialNumber: ArraySlice<UInt8>?

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        (keyIdentifier, authorityCertIssuer, authorityCertSerialNumber) = try input.sequence(node, .sequence, "authorityKeyIdentifier") {
            nodes throws(DERError) in
            var keyID: ArraySlice<UInt8>?
            var issuer: [GeneralName]?
            var serial: ArraySlice<UInt8>?
            if let n = try nodes.optional(.context(0)) { keyID = input.slice(try input.primitive(n, .context(0), "keyIdentifier")) }
            if let n = try nodes.optional(.context(1)) {
                issuer = try GeneralName.sequence(n, input, "authorityCertIssuer", identifier: .context(1))
            }
            if let n = try nodes.optional(.context(2)) {
                serial = input.slice(try input.integerRange(n, "authorityCertSerialNumber", identifier: .context(2)))
            }
            // RFC 5280 §4.2.1.1: issuer and serial appear together or not at all.
            guard (issuer == nil) == (serial == nil) else {
                throw DERError(.invalidValue, at: node.start, "authorityCertIssuer and authorityCertSerialNumber must appear together")
            }
            return (keyID, issuer, serial)
        }
    }
}

/// One certificate policy (RFC 5280 §4.2.1.4).
public struct PolicyInformation: Hashable, Sendable {
    /// The policy OID.
    public let policyIdentifier: ASN1ObjectIdentifier
    /// Qualifiers as (qualifier OID, qualifier element).
    public let qualifiers: [PolicyQualifier]

    static func list(_ node: RawNode, _ input: DERInput) throws(DERError) -> [PolicyInformation] {
        let policies = try input.sequence(node, .sequence, "certificatePolicies") { nodes throws(DERError) in
            var policies: [PolicyInformation] = []
            while let child = try nodes.next() {
                policies.append(
                    try input.sequence(child, .sequence, "PolicyInformation") { fields throws(DERError) in
                        let oid = try input.objectIdentifier(fields.next(.objectIdentifier, "policyIdentifier"), "policyIdentifier")
                        var qualifiers: [PolicyQualifier] = []
                        if let list = try fields.optional(.sequence) {
                            qualifiers = try input.sequence(list, .sequence, "policyQualifiers") { q throws(DERError) in
                                var out: [PolicyQualifier] = []
                                while let qualifier = try q.next() { out.append(try PolicyQualifier(qualifier, input)) }
                                return out
                            }
                            guard !qualifiers.isEmpty else {
                                throw DERError(.invalidValue, at: list.start, "policyQualifiers is empty")
                            }
                        }
                        return PolicyInformation(policyIdentifier: oid, qualifiers: qualifiers)
                    })
            }
            return policies
        }
        guard !policies.isEmpty else { throw DERError(.invalidValue, at: node.start, "certificatePolicies is empty") }
        // RFC 5280 §4.2.1.4: "A certificate policy OID MUST NOT appear more than once".
        if let index = firstDuplicate(policies, key: { $0.policyIdentifier }) {
            throw DERError(.invalidValue, at: node.start, "certificatePolicies lists \(policies[index].policyIdentifier) twice")
        }
        return policies
    }
}

/// A policy qualifier: CPS pointer, user notice, or other (raw).
public struct PolicyQualifier: Hashable, Sendable {
    /// The qualifier OID.
    public let qualifierID: ASN1ObjectIdentifier
    /// The qualifier element.
    public let qualifier: ASN1Node
    /// The CPS URI, for id-qt-cps.
    public let cpsURI: String?

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        let (oid, value) = try input.sequence(node, .sequence, "PolicyQualifierInfo") { nodes throws(DERError) in
            let oid = try input.objectIdentifier(nodes.next(.objectIdentifier, "policyQualifierId"), "policyQualifierId")
            guard let value = try nodes.next() else {
                throw DERError(.missingField, at: node.start, "PolicyQualifierInfo has no qualifier")
            }
            return (oid, value)
        }
        qualifierID = oid
        qualifier = input.node(value)
        if oid == OID.cpsQualifier {
            guard value.identifier == .ia5String else {
                throw DERError(.unexpectedTag, at: value.start, "CPS qualifier must be an IA5String")
            }
            cpsURI = try input.ia5(value, "CPSuri")
        } else {
            cpsURI = nil
        }
    }
}

/// One policy mapping (RFC 5280 §4.2.1.5).
public struct PolicyMapping: Hashable, Sendable {
    /// The policy as the issuing CA's domain names it.
    public let issuerDomainPolicy: ASN1ObjectIdentifier
    /// The policy of the subject CA's domain that the issuer's policy is taken to be equivalent to.
    public let subjectDomainPolicy: ASN1ObjectIdentifier

    static func list(_ node: RawNode, _ input: DERInput) throws(DERError) -> [PolicyMapping] {
        let mappings = try input.sequence(node, .sequence, "policyMappings") { nodes throws(DERError) in
            var mappings: [PolicyMapping] = []
            while let child = try nodes.next() {
                mappings.append(
                    try input.sequence(child, .sequence, "PolicyMapping") { fields throws(DERError) in
                        PolicyMapping(
                            issuerDomainPolicy: try input.objectIdentifier(fields.next(.objectIdentifier, "issuerDomainPolicy"), "issuerDomainPolicy"),
                            subjectDomainPolicy: try input.objectIdentifier(fields.next(.objectIdentifier, "subjectDomainPolicy"), "subjectDomainPolicy"))
                    })
            }
            return mappings
        }
        guard !mappings.isEmpty else { throw DERError(.invalidValue, at: node.start, "policyMappings is empty") }
        return mappings
    }
}

/// policyConstraints (RFC 5280 §4.2.1.11).
public struct PolicyConstraints: Hashable, Sendable {
    /// requireExplicitPolicy: how many more certificates may follow before the path must be valid
    /// for an explicit policy (RFC 5280 §6.1.4 (i)); `nil` when absent.
    public let requireExplicitPolicy: Int?
    /// inhibitPolicyMapping: how many more certificates may follow before policy mapping stops
    /// being allowed (RFC 5280 §6.1.4 (i)); `nil` when absent.
    public let inhibitPolicyMapping: Int?

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        (requireExplicitPolicy, inhibitPolicyMapping) = try input.sequence(node, .sequence, "policyConstraints") { nodes throws(DERError) in
            var require: Int?
            var inhibit: Int?
            if let n = try nodes.optional(.context(0)) { require = try input.integer(n, "requireExplicitPolicy", identifier: .context(0)) }
            if let n = try nodes.optional(.context(1)) { inhibit = try input.integer(n, "inhibitPolicyMapping", identifier: .context(1)) }
            // RFC 5280 §4.2.1.11: "Conforming CAs MUST NOT issue certificates where policy
            // constraints is an empty sequence."
            guard require != nil || inhibit != nil else {
                throw DERError(.invalidValue, at: node.start, "policyConstraints is empty")
            }
            return (require, inhibit)
        }
    }
}

/// One entry of authorityInfoAccess (RFC 5280 §4.2.2.1).
public struct AccessDescription: Hashable, Sendable {
    /// What the location serves: ``OID/caIssuers`` (the issuer's certificate) or ``OID/ocsp``.
    public let accessMethod: ASN1ObjectIdentifier
    /// Where it is, usually a URI.
    public let accessLocation: GeneralName

    static func list(_ node: RawNode, _ input: DERInput, _ name: StaticString) throws(DERError) -> [AccessDescription] {
        let list = try input.sequence(node, .sequence, name) { nodes throws(DERError) in
            var list: [AccessDescription] = []
            while let child = try nodes.next() {
                list.append(
                    try input.sequence(child, .sequence, "AccessDescription") { fields throws(DERError) in
                        let method = try input.objectIdentifier(fields.next(.objectIdentifier, "accessMethod"), "accessMethod")
                        guard let location = try fields.next() else {
                            throw DERError(.missingField, at: child.start, "AccessDescription has no accessLocation")
                        }
                        return AccessDescription(accessMethod: method, accessLocation: try GeneralName(location, input))
                    })
            }
            return list
        }
        guard !list.isEmpty else { throw DERError(.invalidValue, at: node.start, "\(name) is empty") }
        return list
    }
}

/// One CRL distribution point (RFC 5280 §4.2.1.13).
public struct DistributionPoint: Hashable, Sendable {
    /// `distributionPoint`: where the CRL is, or which CRL scope it is.
    public let name: DistributionPointName?
    /// `reasons`: the revocation reasons this point's CRLs cover (all when `nil`).
    public let reasons: RevocationReasons?
    /// `cRLIssuer`: who issues the CRL, when it is not the certificate's issuer.
    public let crlIssuer: [GeneralName]?

    static func list(_ node: RawNode, _ input: DERInput) throws(DERError) -> [DistributionPoint] {
        let list = try input.sequence(node, .sequence, "cRLDistributionPoints") { nodes throws(DERError) in
            var list: [DistributionPoint] = []
            while let child = try nodes.next() { list.append(try DistributionPoint(child, input)) }
            return list
        }
        guard !list.isEmpty else { throw DERError(.invalidValue, at: node.start, "cRLDistributionPoints is empty") }
        return list
    }

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        (name, reasons, crlIssuer) = try input.sequence(node, .sequence, "DistributionPoint") { nodes throws(DERError) in
            var name: DistributionPointName?
            if let pointName = try nodes.optional(.context(0)) { name = try DistributionPointName(pointName, input) }
            var reasons: RevocationReasons?
            var issuer: [GeneralName]?
            if let n = try nodes.optional(.context(1)) { reasons = RevocationReasons(try input.bitString(n, "reasons", identifier: .context(1))) }
            if let n = try nodes.optional(.context(2)) { issuer = try GeneralName.sequence(n, input, "cRLIssuer", identifier: .context(2)) }
            // RFC 5280 §4.2.1.13: distributionPoint or cRLIssuer MUST be present.
            guard name != nil || issuer != nil else {
                throw DERError(.invalidValue, at: node.start, "DistributionPoint has neither distributionPoint nor cRLIssuer")
            }
            return (name, reasons, issuer)
        }
    }
}
