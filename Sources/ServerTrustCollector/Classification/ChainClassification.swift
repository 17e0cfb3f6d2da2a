/// What a failing chain most likely is. The operator's first question at 3 a.m.
package enum ChainClass: String, CaseIterable, Sendable, Codable {
    /// Validates against the public roots through a CA the operator expects: a new key the
    /// pin set does not cover yet.
    case rotation
    /// Validates against the public roots, but through none of the expected CAs: a CA change
    /// nobody told the app about, or a mis-issued certificate.
    case unexpectedCA = "unexpected-ca"
    /// Does not reach a public root: the chain ends at a root no public store holds (a
    /// corporate proxy, Charles, mitmproxy, antivirus, malware).
    case interception
    /// Reaches toward a public root but fails validation for another reason (expired, wrong
    /// use, bad signature): a misconfigured server more often than an attack.
    case invalid

    /// Words for a legend.
    package var title: String {
        switch self {
        case .rotation: return "likely rotation"
        case .unexpectedCA: return "unexpected public CA"
        case .interception: return "likely interception"
        case .invalid: return "invalid chain"
        }
    }
}

/// The verdict on one distinct failing chain, with its reason in words.
package struct ChainClassification: Sendable, Hashable, Codable {
    /// The class.
    package var chainClass: ChainClass
    /// Why, in a sentence or two an operator can act on.
    package var reason: String
    /// Whether the chain validates against the public (system) roots.
    package var validatesAgainstPublicRoots: Bool
    /// The root the chain ends at (the trust anchor when it validates, else the subject of the
    /// chain's top certificate), RFC 4514.
    package var root: String
    /// The leaf's issuing CA, RFC 4514.
    package var issuer: String
    /// The leaf's subject, RFC 4514.
    package var leafSubject: String
    /// The pin of the leaf's key, `sha256/…`: what the operator adds if this is a rotation.
    package var leafPin: String

    package init(
        chainClass: ChainClass, reason: String, validatesAgainstPublicRoots: Bool, root: String, issuer: String, leafSubject: String,
        leafPin: String
    ) {
        self.chainClass = chainClass
        self.reason = reason
        self.validatesAgainstPublicRoots = validatesAgainstPublicRoots
        self.root = root
        self.issuer = issuer
        self.leafSubject = leafSubject
        self.leafPin = leafPin
    }
}
