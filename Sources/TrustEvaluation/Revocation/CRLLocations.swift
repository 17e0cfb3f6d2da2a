public import CertificateParsing

/// Where a certificate's cRLDistributionPoints (RFC 5280 §4.2.1.13) say its CRLs can be fetched:
/// for each distribution point, its `http` and `https` URIs, and for everything else, why it is
/// not fetched.
///
/// Only `fullName` URIs with the `http` or `https` scheme are fetched: the CA/Browser Forum
/// Baseline Requirements (§7.1.2.11.2) require an `http` URI in every Web PKI distribution
/// point, and CRLs are signed, so a plain-HTTP transport is no weaker than the CRL itself. LDAP
/// URIs (RFC 4516), other schemes, directory names, names relative to the CRL issuer and points
/// that only name a cRLIssuer are listed in ``ignored`` with the reason, so a decision record can
/// say why a certificate's status could not be fetched. A URI with user information
/// (`http://user:pass@host/`) is ignored: the fetch never sends credentials.
public struct CRLLocations: Hashable, Sendable {
    /// One distribution point with at least one fetchable URL.
    public struct Point: Hashable, Sendable {
        /// The distribution point as the certificate states it (the CRL check matches a CRL's
        /// issuingDistributionPoint against it).
        public let distributionPoint: DistributionPoint
        /// Its `http` and `https` URIs, in the certificate's order: any one of them gives the
        /// point's CRL.
        public let urls: [String]
    }

    /// The points that can be fetched, in the certificate's order.
    public let points: [Point]
    /// What cannot be fetched, and why.
    public let ignored: [CRLLocationProblem]

    /// Reads `certificate`'s cRLDistributionPoints; a certificate without them has no points.
    ///
    /// - Parameter certificate: The certificate.
    public init(_ certificate: Certificate) {
        var points: [Point] = []
        var ignored: [CRLLocationProblem] = []
        for point in certificate.extensions.crlDistributionPoints ?? [] {
            var urls: [String] = []
            switch point.name {
            case .fullName(let names)?:
                for name in names {
                    guard case .uri(let uri) = name else {
                        ignored.append(.notAURI(name.description))
                        continue
                    }
                    switch Self.classify(uri) {
                    case nil: urls.append(uri)
                    case let problem?: ignored.append(problem)
                    }
                }
            case .nameRelativeToCRLIssuer?: ignored.append(.nameRelativeToCRLIssuer)
            case nil: ignored.append(.noName)
            }
            if !urls.isEmpty { points.append(Point(distributionPoint: point, urls: urls)) }
        }
        self.points = points
        self.ignored = ignored
    }

    /// Every fetchable URL, in order, each once.
    public var urls: [String] {
        var seen = Set<String>()
        return points.flatMap(\.urls).filter { seen.insert($0).inserted }
    }

    /// Why `uri` is not fetched, or `nil` when it is an `http` or `https` URL without user
    /// information.
    static func classify(_ uri: String) -> CRLLocationProblem? {
        guard let colon = uri.firstIndex(of: ":") else { return .malformedURL(uri) }
        let scheme = uri[..<colon].lowercased()
        switch scheme {
        case "http", "https": break
        case "ldap", "ldaps": return .ldap(uri)
        default: return .unsupportedScheme(uri)
        }
        let rest = uri[uri.index(after: colon)...]
        guard rest.hasPrefix("//") else { return .malformedURL(uri) }
        // RFC 3986 §3.2: the authority ends at the first "/", "?" or "#".
        let authority = rest.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty else { return .malformedURL(uri) }
        if authority.contains("@") { return .credentialsInURL(uri) }
        // IA5String allows control characters; a URL never contains them, nor spaces.
        if uri.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) { return .malformedURL(uri) }
        return nil
    }
}

/// Why a distribution point, or one of its names, is not fetched.
public enum CRLLocationProblem: Hashable, Sendable, CustomStringConvertible {
    /// An `ldap:` or `ldaps:` URI: LDAP is not fetched.
    case ldap(String)
    /// A URI of another scheme (`ftp:`, `file:`, …).
    case unsupportedScheme(String)
    /// A URI that is not `scheme://authority…`, or contains spaces or control characters.
    case malformedURL(String)
    /// A URI with user information: the fetch never sends credentials.
    case credentialsInURL(String)
    /// A fullName that is not a URI (a directory name, a DNS name), described.
    case notAURI(String)
    /// A name relative to the CRL issuer: a directory name, not a location.
    case nameRelativeToCRLIssuer
    /// A point that names only its cRLIssuer.
    case noName

    /// One line: what was ignored and why.
    public var description: String {
        switch self {
        case .ldap(let uri): return "\(uri) ignored: LDAP is not fetched"
        case .unsupportedScheme(let uri): return "\(uri) ignored: only http and https are fetched"
        case .malformedURL(let uri): return "\(uri) ignored: not a well-formed URL"
        case .credentialsInURL: return "a URL with user information ignored: CRL fetches never send credentials"
        case .notAURI(let name): return "\(name) ignored: not a URI"
        case .nameRelativeToCRLIssuer: return "a distribution point named relative to the CRL issuer ignored: not a location"
        case .noName: return "a distribution point with only a cRLIssuer ignored: no location"
        }
    }
}
