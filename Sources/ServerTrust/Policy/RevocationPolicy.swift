public import CertificateParsing
import TrustEvaluation

/// How a host's chains are checked for revocation: the revocation settings of one
/// ``HostTrustPolicy``.
///
/// Today the sources are CRLs the caller supplies (a policy file's `crls`, curl's `--crlfile`,
/// `--crl`): every certificate of the validated path but the anchor must be covered by them
/// and not revoked, hard-fail (``/TrustEvaluation/CRLCheck``). The checks run through the
/// verifier's one hook for whole-path checks (``/TrustEvaluation/PathCheck``), whatever
/// evaluator decides, and appear in the decision record.
public struct RevocationPolicy: Sendable {
    /// CRLs the caller supplied; empty for none.
    public var revocationLists: [CertificateRevocationList]

    /// Creates the settings.
    /// - Parameter revocationLists: CRLs every certificate of the path but the anchor must be
    ///   covered by (RFC 5280 §6.3, hard-fail).
    public init(revocationLists: [CertificateRevocationList] = []) {
        self.revocationLists = revocationLists
    }

    /// No revocation checking.
    public static let off = RevocationPolicy()

    /// Whether any revocation check runs.
    public var isOn: Bool { !revocationLists.isEmpty }

    /// The same settings with `more` CRLs added (a file-level list and a host's own list, or
    /// the command line's beside a policy file's).
    /// - Parameter more: The CRLs to add.
    /// - Returns: The settings.
    public func adding(_ more: [CertificateRevocationList]) -> RevocationPolicy {
        RevocationPolicy(revocationLists: revocationLists + more)
    }

    /// The whole-path checks these settings ask for, in the order they run.
    var pathChecks: [any PathCheck] {
        revocationLists.isEmpty ? [] : [CRLCheck(revocationLists)]
    }
}
