/// A distribution point name (RFC 5280 §4.2.1.13), as a certificate's cRLDistributionPoints or
/// a CRL's issuingDistributionPoint carries it.
public enum LabDistributionPointName: Sendable, Hashable {
    /// `[0] fullName`.
    case fullName([LabGeneralName])
    /// `[1] nameRelativeToCRLIssuer`: one RDN, appended to the CRL issuer's name.
    case relativeToCRLIssuer([LabAttribute])

    /// `distributionPoint [0] DistributionPointName` (explicit: the name is a CHOICE).
    func derEncoded() throws -> [UInt8] {
        switch self {
        case .fullName(let names):
            return LabDER.explicit(0, LabDER.contextSpecific(0, constructed: true, try names.flatMap { try $0.derEncoded() }))
        case .relativeToCRLIssuer(let attributes):
            let set = LabDER.set(try attributes.map { try $0.derEncoded() })
            // [1] IMPLICIT RelativeDistinguishedName: the SET's content under tag [1].
            return LabDER.explicit(0, try LabDER.implicit(1, set))
        }
    }
}

/// One DistributionPoint of a certificate's cRLDistributionPoints (or freshestCRL).
public struct LabDistributionPoint: Sendable, Hashable {
    /// `distributionPoint`, if any.
    public var name: LabDistributionPointName?
    /// `reasons` as ReasonFlags bit numbers (1 keyCompromise … 8 aACompromise), if limited.
    public var reasons: [Int]?
    /// `cRLIssuer`, if the CRL comes from someone else than the certificate issuer.
    public var crlIssuer: [LabGeneralName]?

    /// Creates a distribution point.
    ///
    /// - Parameters:
    ///   - name: The point's name.
    ///   - reasons: ReasonFlags bit numbers, or `nil` for all reasons.
    ///   - crlIssuer: The CRL issuer's names, or `nil`.
    public init(name: LabDistributionPointName? = nil, reasons: [Int]? = nil, crlIssuer: [LabGeneralName]? = nil) {
        self.name = name
        self.reasons = reasons
        self.crlIssuer = crlIssuer
    }

    /// A point named by one URI.
    ///
    /// - Parameter uri: The CRL's URI.
    /// - Returns: `DistributionPoint { fullName URI }`.
    public static func uri(_ uri: String) -> LabDistributionPoint {
        LabDistributionPoint(name: .fullName([.uri(uri)]))
    }

    func derEncoded() throws -> [UInt8] {
        var fields: [[UInt8]] = []
        if let name { fields.append(try name.derEncoded()) }
        if let reasons { fields.append(try LabDER.implicit(1, LabDER.namedBitString(reasons))) }
        if let crlIssuer { fields.append(LabDER.contextSpecific(2, constructed: true, try crlIssuer.flatMap { try $0.derEncoded() })) }
        return LabDER.sequence(fields)
    }
}
