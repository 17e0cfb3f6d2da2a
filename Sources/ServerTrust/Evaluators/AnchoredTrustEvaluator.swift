import CertificateParsing

/// Adds configured anchors to the trust, then delegates.
final class AnchoredTrustEvaluator: ServerTrustEvaluating {
    let anchors: [Certificate]
    let anchorsOnly: Bool
    let evaluator: any ServerTrustEvaluating

    init(anchors: [Certificate], anchorsOnly: Bool, evaluator: any ServerTrustEvaluating) {
        self.anchors = anchors
        self.anchorsOnly = anchorsOnly
        self.evaluator = evaluator
    }

    func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    func decide(_ trust: PeerTrust, forHost host: String) -> PolicyDecision {
        var trust = trust
        trust.anchors += anchors
        if anchorsOnly { trust.anchorsOnly = true }
        let decision = evaluator.decide(trust, forHost: host)
        var record = decision.record
        record.steps.insert("anchors: \(anchors.count) configured anchor(s) added\(anchorsOnly ? ", system roots not trusted" : "")", at: 0)
        return PolicyDecision(failure: decision.failure, record: record)
    }
}
