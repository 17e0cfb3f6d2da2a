/// Limits on the work one validation may do (pyca's `Budget`, Go's `maxChainSignatureChecks`),
/// so that a hostile chain ends in milliseconds instead of occupying the caller. Running out
/// ends the whole search at once (``ValidationFailure/Kind/budgetExhausted``), never a retry.
struct Budget {
    /// Signature checks: both Go and rustls-webpki pick 100; no real chain needs more than a
    /// handful, and each costs 20–200 µs, so 128 bounds the worst case near 25 ms. CRL
    /// signatures and the paths of CRL signers are paid from the same budget.
    var signatureChecks = 128
    /// Name-constraint comparisons (pyca and Go: 2^20): each is a short string comparison.
    var nameConstraintChecks = 1 << 20
    /// RFC 5280 §6.1 policy-graph work: one unit per policy read, node, parent edge or index
    /// entry, each a few array operations. A real path spends tens of units; the CVE-2023-0464
    /// shape at 8 levels of 40 policies each mapped to all 40 (a 40^8-node tree) spends about
    /// 65,000. 2^18 units allow four times that and stop any shape within a few milliseconds.
    var policyGraphWork = 1 << 18

    mutating func spendSignatureCheck() -> Bool {
        guard signatureChecks > 0 else { return false }
        signatureChecks -= 1
        return true
    }

    mutating func spendNameConstraintCheck() -> Bool {
        guard nameConstraintChecks > 0 else { return false }
        nameConstraintChecks -= 1
        return true
    }

    mutating func spendPolicyGraphWork(_ units: Int) -> Bool {
        guard policyGraphWork >= units else {
            policyGraphWork = 0
            return false
        }
        policyGraphWork -= units
        return true
    }

    static let exhaustedFailure = ValidationFailure(.budgetExhausted, "path building exceeded its work budget")
}
