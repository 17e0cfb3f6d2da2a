/// The reason a certificate was revoked: the CRLReason of a CRL entry's reasonCode extension
/// (RFC 5280 §5.3.1).
public enum RevocationReason: Int, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// No reason given (RFC 5280 says to omit reasonCode instead).
    case unspecified = 0
    /// The subject's private key is known or suspected to be compromised.
    case keyCompromise = 1
    /// The issuing CA's key is compromised.
    case cACompromise = 2
    /// The subject's name or other information changed.
    case affiliationChanged = 3
    /// The certificate was replaced.
    case superseded = 4
    /// The certificate is no longer needed.
    case cessationOfOperation = 5
    /// The certificate is on hold: revoked until a later CRL says `removeFromCRL`.
    case certificateHold = 6
    /// Only in delta CRLs: the entry of a base CRL no longer applies (RFC 5280 §5.2.4).
    case removeFromCRL = 8
    /// A privilege asserted in the certificate was withdrawn.
    case privilegeWithdrawn = 9
    /// An attribute authority is compromised.
    case aACompromise = 10

    /// The reason as RFC 5280 §5.3.1 spells it (`keyCompromise`, `removeFromCRL`).
    public var description: String {
        switch self {
        case .unspecified: return "unspecified"
        case .keyCompromise: return "keyCompromise"
        case .cACompromise: return "cACompromise"
        case .affiliationChanged: return "affiliationChanged"
        case .superseded: return "superseded"
        case .cessationOfOperation: return "cessationOfOperation"
        case .certificateHold: return "certificateHold"
        case .removeFromCRL: return "removeFromCRL"
        case .privilegeWithdrawn: return "privilegeWithdrawn"
        case .aACompromise: return "aACompromise"
        }
    }
}

/// A set of revocation reasons: the `ReasonFlags` BIT STRING of distribution points and of
/// issuingDistributionPoint's onlySomeReasons (RFC 5280 §4.2.1.13), bit n = reason n.
public struct RevocationReasons: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// Bit n set for reason n (RFC 5280 ReasonFlags numbering).
    public let rawValue: UInt16

    /// Creates a set from its bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// keyCompromise (bit 1), as ``RevocationReason/keyCompromise``.
    public static let keyCompromise = RevocationReasons(rawValue: 1 << 1)
    /// cACompromise (bit 2), as ``RevocationReason/cACompromise``.
    public static let cACompromise = RevocationReasons(rawValue: 1 << 2)
    /// affiliationChanged (bit 3), as ``RevocationReason/affiliationChanged``.
    public static let affiliationChanged = RevocationReasons(rawValue: 1 << 3)
    /// superseded (bit 4), as ``RevocationReason/superseded``.
    public static let superseded = RevocationReasons(rawValue: 1 << 4)
    /// cessationOfOperation (bit 5), as ``RevocationReason/cessationOfOperation``.
    public static let cessationOfOperation = RevocationReasons(rawValue: 1 << 5)
    /// certificateHold (bit 6), as ``RevocationReason/certificateHold``.
    public static let certificateHold = RevocationReasons(rawValue: 1 << 6)
    /// privilegeWithdrawn (bit 7), as ``RevocationReason/privilegeWithdrawn``. ReasonFlags has
    /// no bit for CRLReason's unused value 7 or for removeFromCRL (8), so privilegeWithdrawn and
    /// aACompromise are bits 7 and 8 here but CRLReason values 9 and 10.
    public static let privilegeWithdrawn = RevocationReasons(rawValue: 1 << 7)
    /// aACompromise (bit 8), as ``RevocationReason/aACompromise``.
    public static let aACompromise = RevocationReasons(rawValue: 1 << 8)

    /// RFC 5280 §6.3.3's all-reasons: every defined reason (bit 0, "unused", is not one).
    public static let all: RevocationReasons = [
        .keyCompromise, .cACompromise, .affiliationChanged, .superseded, .cessationOfOperation, .certificateHold,
        .privilegeWithdrawn, .aACompromise,
    ]

    /// Reads a ReasonFlags BIT STRING (named bits; bits past aACompromise are ignored).
    init(_ bits: ASN1BitString) {
        var raw: UInt16 = 0
        for n in 1...8 where bits.bit(n) { raw |= 1 << UInt16(n) }
        self.init(rawValue: raw)
    }

    static let names = [
        "unused", "keyCompromise", "cACompromise", "affiliationChanged", "superseded", "cessationOfOperation", "certificateHold",
        "privilegeWithdrawn", "aACompromise",
    ]

    /// The names of the reasons in the set, comma-separated, in bit order.
    public var description: String {
        (1...8).filter { rawValue & (1 << UInt16($0)) != 0 }.map { RevocationReasons.names[$0] }.joined(separator: ", ")
    }
}

/// A distribution point's name (RFC 5280 §4.2.1.13): full names, or a name relative to the
/// CRL issuer (an RDN appended to the CRL issuer's distinguished name).
public enum DistributionPointName: Hashable, Sendable {
    /// `[0] fullName`.
    case fullName([GeneralName])
    /// `[1] nameRelativeToCRLIssuer`.
    case nameRelativeToCRLIssuer(RelativeDistinguishedName)

    /// The names this point stands for, with a relative name completed against `issuer` (the
    /// CRL issuer: the certificate's cRLIssuer, else its issuer; for a CRL's IDP, the CRL's
    /// issuer).
    public func names(relativeTo issuer: DistinguishedName) -> [GeneralName] {
        switch self {
        case .fullName(let names): return names
        case .nameRelativeToCRLIssuer(let rdn): return [.directoryName(issuer.appending(rdn))]
        }
    }

    /// Reads `distributionPoint [0] DistributionPointName` (a CHOICE, so explicitly tagged).
    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        self = try input.sequence(node, .context(0), "distributionPoint") { inner throws(DERError) in
            guard let choice = try inner.next() else {
                throw DERError(.missingField, at: node.start, "distributionPoint is empty")
            }
            switch choice.identifier {
            case .context(0): return .fullName(try GeneralName.sequence(choice, input, "fullName", identifier: .context(0)))
            case .context(1):
                return .nameRelativeToCRLIssuer(try RelativeDistinguishedName(input.node(choice), "nameRelativeToCRLIssuer", identifier: .context(1)))
            default: throw DERError(.unexpectedTag, at: choice.start, "DistributionPointName: unexpected \(choice.identifier)")
            }
        }
    }
}

/// issuingDistributionPoint (RFC 5280 §5.2.5): the scope of a CRL.
public struct IssuingDistributionPoint: Hashable, Sendable {
    /// The distribution point the CRL is for, if named.
    public let distributionPoint: DistributionPointName?
    /// The CRL covers only end-entity certificates.
    public let onlyContainsUserCerts: Bool
    /// The CRL covers only CA certificates.
    public let onlyContainsCACerts: Bool
    /// The CRL covers only these reasons (all when `nil`).
    public let onlySomeReasons: RevocationReasons?
    /// The CRL may list certificates of other issuers (certificateIssuer entry extensions).
    public let indirectCRL: Bool
    /// The CRL covers only attribute certificates.
    public let onlyContainsAttributeCerts: Bool
    /// The extension value as encoded (§5.2.4: a delta CRL's scope must be identical to its base's).
    public let derBytes: ArraySlice<UInt8>

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        var point: DistributionPointName?
        var user = false
        var ca = false
        var reasons: RevocationReasons?
        var indirect = false
        var attribute = false
        try input.sequence(node, .sequence, "issuingDistributionPoint") { fields throws(DERError) in
            if let n = try fields.optional(.context(0)) { point = try DistributionPointName(n, input) }
            // BOOLEAN DEFAULT FALSE fields: DER never encodes the default (X.690 §11.5).
            func flag(_ tag: UInt32, _ name: StaticString) throws(DERError) -> Bool {
                guard let n = try fields.optional(.context(tag)) else { return false }
                guard try input.boolean(n, name, identifier: .context(tag)) else {
                    throw DERError(.invalidValue, at: n.start, "\(name) must be an encoded TRUE (DER omits FALSE)")
                }
                return true
            }
            user = try flag(1, "onlyContainsUserCerts")
            ca = try flag(2, "onlyContainsCACerts")
            if let n = try fields.optional(.context(3)) { reasons = RevocationReasons(try input.bitString(n, "onlySomeReasons", identifier: .context(3))) }
            indirect = try flag(4, "indirectCRL")
            attribute = try flag(5, "onlyContainsAttributeCerts")
        }
        // RFC 5280 §5.2.5: at most one of the three "only" flags may be set, and the
        // extension MUST NOT be an empty sequence.
        guard [user, ca, attribute].filter({ $0 }).count <= 1 else {
            throw DERError(
                .invalidValue, at: node.start,
                "issuingDistributionPoint sets more than one of onlyContainsUserCerts, onlyContainsCACerts, onlyContainsAttributeCerts")
        }
        guard point != nil || user || ca || reasons != nil || indirect || attribute else {
            throw DERError(.invalidValue, at: node.start, "issuingDistributionPoint is empty")
        }
        distributionPoint = point
        onlyContainsUserCerts = user
        onlyContainsCACerts = ca
        onlySomeReasons = reasons
        indirectCRL = indirect
        onlyContainsAttributeCerts = attribute
        derBytes = input.slice(node.range)
    }
}

/// A CRL number (cRLNumber, RFC 5280 §5.2.3; BaseCRLNumber, §5.2.4): a non-negative INTEGER of
/// up to 20 octets, ordered numerically.
public struct CRLNumber: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The magnitude, big-endian, without leading zero octets (empty for zero).
    public let magnitude: [UInt8]

    init(_ node: RawNode, _ input: DERInput, _ name: StaticString) throws(DERError) {
        let range = try input.integerRange(node, name)
        guard input[range.lowerBound] & 0x80 == 0 else { throw DERError(.invalidValue, at: node.start, "\(name) is negative") }
        // §5.2.3: "CRL verifiers MUST be able to handle CRLNumber values up to 20 octets."
        guard range.count <= 21 else { throw DERError(.invalidValue, at: node.start, "\(name) is longer than 20 octets") }
        magnitude = Array(input.slice(range).drop { $0 == 0 })
    }

    /// Orders by value: a CRL with a larger number was issued later (RFC 5280 §5.2.3).
    public static func < (lhs: CRLNumber, rhs: CRLNumber) -> Bool {
        if lhs.magnitude.count != rhs.magnitude.count { return lhs.magnitude.count < rhs.magnitude.count }
        return lhs.magnitude.lexicographicallyPrecedes(rhs.magnitude)
    }

    /// The number in lowercase hex, `0` for zero.
    public var description: String { magnitude.isEmpty ? "0" : Hex.encode(magnitude) }
}

/// One entry of a CRL's revokedCertificates (RFC 5280 §5.1.2.6) with its entry extensions
/// (§5.3).
public struct RevokedCertificate: Hashable, Sendable {
    /// userCertificate: the serial number of the revoked certificate.
    public let serialNumber: SerialNumber
    /// revocationDate.
    public let revocationDate: ASN1Time
    /// crlEntryExtensions, in order.
    public let extensions: [Extension]
    /// reasonCode (§5.3.1), when present.
    public let reason: RevocationReason?
    /// invalidityDate (§5.3.2), when present.
    public let invalidityDate: ASN1Time?
    /// certificateIssuer (§5.3.3) of this entry, when present. In an indirect CRL it also
    /// applies to the entries that follow, up to the next one that has it.
    public let certificateIssuer: [GeneralName]?
    /// holdInstructionCode (1.2.840.10040.2), when present.
    public let holdInstruction: ASN1ObjectIdentifier?

    /// The entry extensions this model decodes; a critical one of any other type makes the
    /// whole CRL unusable (§5.3).
    public static let decodedOIDs: Set<ASN1ObjectIdentifier> = [
        OID.reasonCode, OID.invalidityDate, OID.certificateIssuer, OID.holdInstructionCode,
    ]

    /// Entry extensions marked critical that this model does not decode.
    public var unknownCriticalExtensions: [Extension] {
        extensions.filter { $0.critical && !RevokedCertificate.decodedOIDs.contains($0.oid) }
    }

    init(_ node: RawNode, _ input: DERInput) throws(DERError) {
        var extensions: [Extension] = []
        (serialNumber, revocationDate) = try input.sequence(node, .sequence, "revoked certificate") { f throws(DERError) in
            let serial = SerialNumber(input.slice(try input.integerRange(f.next(.integer, "userCertificate"), "userCertificate")))
            guard let dateNode = try f.next() else {
                throw DERError(.missingField, at: node.start, "revoked entry has no revocationDate")
            }
            let date = try input.time(dateNode, "revocationDate")
            if let list = try f.optional(.sequence) {
                extensions = try Extension.list(list, input, "crlEntryExtensions")
            }
            return (serial, date)
        }
        var reason: RevocationReason?
        var invalidity: ASN1Time?
        var issuer: [GeneralName]?
        var hold: ASN1ObjectIdentifier?
        for ext in extensions {
            let value = try input.single(ext.valueRange)
            switch ext.oid {
            case OID.reasonCode:
                let code = try input.integer(value, "reasonCode", in: 0...10, identifier: .enumerated)
                // §5.3.1: value 7 is not used.
                guard let known = RevocationReason(rawValue: code) else {
                    throw DERError(.invalidValue, at: value.start, "reasonCode \(code) is not a CRLReason")
                }
                reason = known
            case OID.invalidityDate:
                guard value.identifier == .generalizedTime else {
                    throw DERError(.unexpectedTag, at: value.start, "invalidityDate must be a GeneralizedTime")
                }
                invalidity = try input.time(value, "invalidityDate")
            case OID.certificateIssuer: issuer = try GeneralName.sequence(value, input, "certificateIssuer")
            case OID.holdInstructionCode: hold = try input.objectIdentifier(value, "holdInstructionCode")
            default: break
            }
        }
        self.extensions = extensions
        self.reason = reason
        self.invalidityDate = invalidity
        self.certificateIssuer = issuer
        self.holdInstruction = hold
    }
}

extension Extension {
    /// Reads `Extensions ::= SEQUENCE SIZE (1..MAX) OF Extension`, rejecting duplicates
    /// (RFC 5280 §4.2, §5.2, §5.3: at most one instance of each extension).
    static func list(_ node: RawNode, _ input: DERInput, _ name: StaticString) throws(DERError) -> [Extension] {
        let list = try input.sequence(node, .sequence, name) { n throws(DERError) in
            var list: [Extension] = []
            while let child = try n.next() { list.append(try Extension(child, input)) }
            return list
        }
        guard !list.isEmpty else { throw DERError(.invalidValue, at: node.start, "\(name) must contain at least one extension") }
        if let index = firstDuplicate(list, key: { $0.oid }) {
            throw DERError(.invalidValue, at: list[index].derBytes.startIndex, "\(name): duplicate extension \(list[index].oid)")
        }
        return list
    }
}
