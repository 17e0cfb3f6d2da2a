/// nameConstraints (RFC 5280 §4.2.1.10).
public struct NameConstraints: Hashable, Sendable {
    /// Subtrees every name below the CA must fall in (per name type present).
    public let permittedSubtrees: [GeneralName]
    /// Subtrees no name below the CA may fall in.
    public let excludedSubtrees: [GeneralName]

    init(_ node: ASN1Node) throws(DERError) {
        (permittedSubtrees, excludedSubtrees) = try node.sequence(.sequence, "nameConstraints") { nodes throws(DERError) in
            let permitted = try nodes.optional(.context(0)).map { n throws(DERError) in try NameConstraints.subtrees(n, "permittedSubtrees") }
            let excluded = try nodes.optional(.context(1)).map { n throws(DERError) in try NameConstraints.subtrees(n, "excludedSubtrees") }
            // RFC 5280 §4.2.1.10: "Conforming CAs MUST NOT issue certificates where name
            // constraints is an empty sequence."
            guard permitted != nil || excluded != nil else {
                throw DERError(.invalidValue, at: node.offset, "nameConstraints is empty")
            }
            return (permitted ?? [], excluded ?? [])
        }
    }

    /// GeneralSubtrees ::= SEQUENCE SIZE (1..MAX) OF GeneralSubtree; GeneralSubtree ::= SEQUENCE
    /// { base GeneralName, minimum [0] DEFAULT 0, maximum [1] OPTIONAL }. RFC 5280 requires
    /// minimum 0 and maximum absent; DER requires the DEFAULT minimum to be omitted.
    static func subtrees(_ node: ASN1Node, _ name: String) throws(DERError) -> [GeneralName] {
        let list = try node.sequence(node.identifier, name) { nodes throws(DERError) in
            var list: [GeneralName] = []
            while let subtree = try nodes.next() {
                let base = try subtree.sequence(.sequence, "GeneralSubtree") { fields throws(DERError) in
                    guard let first = try fields.next() else {
                        throw DERError(.missingField, at: subtree.offset, "GeneralSubtree has no base")
                    }
                    let base = try GeneralName(first)
                    if let minimum = try fields.optional(.context(0)) {
                        throw DERError(.invalidValue, at: minimum.offset, "GeneralSubtree minimum must be absent (RFC 5280 §4.2.1.10)")
                    }
                    if let maximum = try fields.optional(.context(1)) {
                        throw DERError(.invalidValue, at: maximum.offset, "GeneralSubtree maximum must be absent (RFC 5280 §4.2.1.10)")
                    }
                    return base
                }
                list.append(base)
            }
            return list
        }
        guard !list.isEmpty else { throw DERError(.invalidValue, at: node.offset, "\(name) is empty") }
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

    init(_ node: ASN1Node) throws(DERError) {
        (keyIdentifier, authorityCertIssuer, authorityCertSerialNumber) = try node.sequence(.sequence, "authorityKeyIdentifier") {
            nodes throws(DERError) in
            let keyID = try nodes.optional(.context(0)).map { n throws(DERError) in try n.octetString("keyIdentifier", identifier: .context(0)) }
            let issuer = try nodes.optional(.context(1)).map { n throws(DERError) in
                try GeneralName.sequence(n, "authorityCertIssuer", identifier: .context(1))
            }
            let serial = try nodes.optional(.context(2)).map { n throws(DERError) in
                try n.integerBytes("authorityCertSerialNumber", identifier: .context(2))
            }
            // RFC 5280 §4.2.1.1: issuer and serial appear together or not at all.
            guard (issuer == nil) == (serial == nil) else {
                throw DERError(.invalidValue, at: node.offset, "authorityCertIssuer and authorityCertSerialNumber must appear together")
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

    static func list(_ node: ASN1Node) throws(DERError) -> [PolicyInformation] {
        let policies = try node.sequence(.sequence, "certificatePolicies") { nodes throws(DERError) in
            var policies: [PolicyInformation] = []
            while let child = try nodes.next() {
                policies.append(try child.sequence(.sequence, "PolicyInformation") { fields throws(DERError) in
                    let oid = try fields.next(.objectIdentifier, "policyIdentifier").objectIdentifier("policyIdentifier")
                    var qualifiers: [PolicyQualifier] = []
                    if let list = try fields.optional(.sequence) {
                        qualifiers = try list.sequence(.sequence, "policyQualifiers") { q throws(DERError) in
                            var out: [PolicyQualifier] = []
                            while let qualifier = try q.next() { out.append(try PolicyQualifier(qualifier)) }
                            return out
                        }
                        guard !qualifiers.isEmpty else {
                            throw DERError(.invalidValue, at: list.offset, "policyQualifiers is empty")
                        }
                    }
                    return PolicyInformation(policyIdentifier: oid, qualifiers: qualifiers)
                })
            }
            return policies
        }
        guard !policies.isEmpty else { throw DERError(.invalidValue, at: node.offset, "certificatePolicies is empty") }
        // RFC 5280 §4.2.1.4: "A certificate policy OID MUST NOT appear more than once".
        var seen = Set<ASN1ObjectIdentifier>()
        for policy in policies where !seen.insert(policy.policyIdentifier).inserted {
            throw DERError(.invalidValue, at: node.offset, "certificatePolicies lists \(policy.policyIdentifier) twice")
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

    init(_ node: ASN1Node) throws(DERError) {
        (qualifierID, qualifier) = try node.sequence(.sequence, "PolicyQualifierInfo") { nodes throws(DERError) in
            let oid = try nodes.next(.objectIdentifier, "policyQualifierId").objectIdentifier("policyQualifierId")
            guard let value = try nodes.next() else {
                throw DERError(.missingField, at: node.offset, "PolicyQualifierInfo has no qualifier")
            }
            return (oid, value)
        }
        if qualifierID == OID.cpsQualifier {
            guard qualifier.identifier == .ia5String else {
                throw DERError(.unexpectedTag, at: qualifier.offset, "CPS qualifier must be an IA5String")
            }
            cpsURI = try ASN1String.ia5(qualifier, "CPSuri")
        } else {
            cpsURI = nil
        }
    }
}

/// One policy mapping (RFC 5280 §4.2.1.5).
public struct PolicyMapping: Hashable, Sendable {
    public let issuerDomainPolicy: ASN1ObjectIdentifier
    public let subjectDomainPolicy: ASN1ObjectIdentifier

    static func list(_ node: ASN1Node) throws(DERError) -> [PolicyMapping] {
        let mappings = try node.sequence(.sequence, "policyMappings") { nodes throws(DERError) in
            var mappings: [PolicyMapping] = []
            while let child = try nodes.next() {
                mappings.append(try child.sequence(.sequence, "PolicyMapping") { fields throws(DERError) in
                    PolicyMapping(
                        issuerDomainPolicy: try fields.next(.objectIdentifier, "issuerDomainPolicy").objectIdentifier("issuerDomainPolicy"),
                        subjectDomainPolicy: try fields.next(.objectIdentifier, "subjectDomainPolicy").objectIdentifier("subjectDomainPolicy"))
                })
            }
            return mappings
        }
        guard !mappings.isEmpty else { throw DERError(.invalidValue, at: node.offset, "policyMappings is empty") }
        return mappings
    }
}

/// policyConstraints (RFC 5280 §4.2.1.11).
public struct PolicyConstraints: Hashable, Sendable {
    public let requireExplicitPolicy: Int?
    public let inhibitPolicyMapping: Int?

    init(_ node: ASN1Node) throws(DERError) {
        (requireExplicitPolicy, inhibitPolicyMapping) = try node.sequence(.sequence, "policyConstraints") { nodes throws(DERError) in
            let require = try nodes.optional(.context(0)).map { n throws(DERError) in
                try n.integer("requireExplicitPolicy", identifier: .context(0))
            }
            let inhibit = try nodes.optional(.context(1)).map { n throws(DERError) in
                try n.integer("inhibitPolicyMapping", identifier: .context(1))
            }
            // RFC 5280 §4.2.1.11: "Conforming CAs MUST NOT issue certificates where policy
            // constraints is an empty sequence."
            guard require != nil || inhibit != nil else {
                throw DERError(.invalidValue, at: node.offset, "policyConstraints is empty")
            }
            return (require, inhibit)
        }
    }
}

/// One entry of authorityInfoAccess (RFC 5280 §4.2.2.1).
public struct AccessDescription: Hashable, Sendable {
    public let accessMethod: ASN1ObjectIdentifier
    public let accessLocation: GeneralName

    static func list(_ node: ASN1Node, _ name: String) throws(DERError) -> [AccessDescription] {
        let list = try node.sequence(.sequence, name) { nodes throws(DERError) in
            var list: [AccessDescription] = []
            while let child = try nodes.next() {
                list.append(try child.sequence(.sequence, "AccessDescription") { fields throws(DERError) in
                    let method = try fields.next(.objectIdentifier, "accessMethod").objectIdentifier("accessMethod")
                    guard let location = try fields.next() else {
                        throw DERError(.missingField, at: child.offset, "AccessDescription has no accessLocation")
                    }
                    return AccessDescription(accessMethod: method, accessLocation: try GeneralName(location))
                })
            }
            return list
        }
        guard !list.isEmpty else { throw DERError(.invalidValue, at: node.offset, "\(name) is empty") }
        return list
    }
}

/// One CRL distribution point (RFC 5280 §4.2.1.13).
public struct DistributionPoint: Hashable, Sendable {
    /// `fullName` names, when the point is given that way.
    public let fullName: [GeneralName]?
    /// `nameRelativeToCRLIssuer`, raw.
    public let nameRelativeToCRLIssuer: ASN1Node?
    /// `reasons`.
    public let reasons: ASN1BitString?
    /// `cRLIssuer`.
    public let crlIssuer: [GeneralName]?

    static func list(_ node: ASN1Node) throws(DERError) -> [DistributionPoint] {
        let list = try node.sequence(.sequence, "cRLDistributionPoints") { nodes throws(DERError) in
            var list: [DistributionPoint] = []
            while let child = try nodes.next() { list.append(try DistributionPoint(child)) }
            return list
        }
        guard !list.isEmpty else { throw DERError(.invalidValue, at: node.offset, "cRLDistributionPoints is empty") }
        return list
    }

    init(_ node: ASN1Node) throws(DERError) {
        (fullName, nameRelativeToCRLIssuer, reasons, crlIssuer) = try node.sequence(.sequence, "DistributionPoint") { nodes throws(DERError) in
            var fullName: [GeneralName]?
            var relative: ASN1Node?
            if let pointName = try nodes.optional(.context(0)) {
                // distributionPoint [0] DistributionPointName (a CHOICE, so explicitly tagged).
                try pointName.sequence(.context(0), "distributionPoint") { inner throws(DERError) in
                    guard let choice = try inner.next() else {
                        throw DERError(.missingField, at: pointName.offset, "distributionPoint is empty")
                    }
                    switch choice.identifier {
                    case .context(0): fullName = try GeneralName.sequence(choice, "fullName", identifier: .context(0))
                    case .context(1): relative = choice
                    default: throw DERError(.unexpectedTag, at: choice.offset, "DistributionPointName: unexpected \(choice.identifier)")
                    }
                }
            }
            let reasons = try nodes.optional(.context(1)).map { n throws(DERError) in try n.bitString("reasons", identifier: .context(1)) }
            let issuer = try nodes.optional(.context(2)).map { n throws(DERError) in
                try GeneralName.sequence(n, "cRLIssuer", identifier: .context(2))
            }
            // RFC 5280 §4.2.1.13: distributionPoint or cRLIssuer MUST be present.
            guard fullName != nil || relative != nil || issuer != nil else {
                throw DERError(.invalidValue, at: node.offset, "DistributionPoint has neither distributionPoint nor cRLIssuer")
            }
            return (fullName, relative, reasons, issuer)
        }
    }
}
