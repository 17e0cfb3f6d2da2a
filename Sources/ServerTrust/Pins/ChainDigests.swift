import CertificateParsing

/// SPKI digests of a chain, computed once per algorithm actually used.
struct ChainDigests {
    let chain: [Certificate]
    /// Positions whose key is taken to be a new one no pin names (a renewal with a new key).
    let renewed: [Int]
    private var sha256: [[UInt8]]?
    private var others: [PinDigestAlgorithm: [[UInt8]]] = [:]

    init(_ chain: [Certificate], renewing renewed: [Int] = []) {
        self.chain = chain
        self.renewed = renewed
    }

    /// The first position in `range` whose key `pin` names.
    mutating func firstPosition(of pin: SPKIPin, in range: Range<Int>) -> Int? {
        let digests = self.digests(pin.algorithm)
        for position in range where digests[position] == pin.digest { return position }
        return nil
    }

    private mutating func digests(_ algorithm: PinDigestAlgorithm) -> [[UInt8]] {
        if algorithm == .sha256, let sha256 { return sha256 }
        if algorithm != .sha256, let known = others[algorithm] { return known }
        var computed = SPKIDigestCache.shared.digests(of: chain, algorithm)
        for position in renewed where computed.indices.contains(position) { computed[position] = [] }
        if algorithm == .sha256 { sha256 = computed } else { others[algorithm] = computed }
        return computed
    }
}
