extension SecurityPolicy: ServerTrustEvaluating {
    /// ``evaluate(_:forDomain:)`` with `host` as the domain.
    public func evaluate(_ trust: PeerTrust, forHost host: String) throws(TrustEvaluationError) {
        try decide(trust, forHost: host).get()
    }

    /// ``evaluate(_:forDomain:)`` with `host` as the domain.
    public func decide(_ trust: PeerTrust, forHost host: String) -> TrustDecision {
        evaluate(trust, forDomain: host)
    }
}
