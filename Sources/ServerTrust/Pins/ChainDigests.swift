import CertificateParsing

/// SPKI digests of a chain, computed once per algorithm actually used.
struct ChainDigests {
    let chain: [Certificate]
    private var sha256: [[UInt8]]?
    private var others: [PinDigestAlgorithm: [[UInt8]]] = [:]

    init(_ chain: [Certificate]) { self.chain = chain }

    /// The first position in `range` whose key `pin` names.
    mutating func firstPosition(of pin: SPKIPin, in range: Range<Int>) -> Int? {
        let digests = self.digests(pin.algorithm)
        for position in range where digests[position] == pin.digest { return position }
        return nil
    }

    /// Takes the keys at `positions` to be new ones that no pin names (a renewal with a new
    /// key, as `servertrust pins check` asks about), for every digest algorithm.
    mutating func renew(_ positions: [Int]) {
        for algorithm in PinDigestAlgorithm.allCases {
            var renewed = digests(algorithm)
            for position in positions where renewed.indices.contains(position) { renewed[position] = [] }
            if algorithm == .sha256 { sha256 = renewed } else { others[algorithm] = renewed }
        }
    }

    private mutating func digests(_ algorithm: PinDigestAlgorithm) -> [[UInt8]] {
        if algorithm == .sha256, let sha256 { return sha256 }
        if algorithm != .sha256, let known = others[algorithm] { return known }
        let computed = SPKIDigestCache.shared.digests(of: chain, algorithm)
        if algorithm == .sha256 { sha256 = computed } else { others[algorithm] = computed }
        return computed
    }
}
