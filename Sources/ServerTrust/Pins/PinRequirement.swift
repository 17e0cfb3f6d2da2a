import CertificateParsing
import TrustEvaluation

/// What one pin configuration needs of a path: its pins are on it. The one statement, per kind
/// of pin, of when a proven path satisfies the pins, used to choose among several proven paths
/// (every valid path, ``PinPreference``; every signature-linked chain,
/// ``ProvenChain/signatureChain(of:)``). The decision itself is still made by each matcher on
/// the path chosen (``PinEnforcement``, the evaluators), so a requirement can only make a
/// correctly pinned server pass, never a wrongly pinned one.
struct PinRequirement: Hashable, Sendable {
    enum Kind: Hashable, Sendable {
        /// An SPKI pin set (``PinnedHost``) for a host: its check must match
        /// (``PinningConfiguration/check(_:forHost:at:)``), so scopes, windows and negative pins
        /// count as they do in the decision.
        case pinSet(PinnedHost, host: String)
        /// Pinned SubjectPublicKeyInfo encodings: one must be the key of a certificate on the path.
        case keys(Set<[UInt8]>)
        /// Pinned certificates (DER): one must be on the path.
        case certificates(Set<[UInt8]>)
    }

    let kind: Kind

    /// An SPKI pin set's requirement, when the set is in force for `host` at `time` (an
    /// exclusion or an expired set asks nothing of a path).
    static func pinSet(_ pins: PinnedHost, host: String, at time: Int64) -> PinRequirement? {
        if pins.isExcluded || (pins.pins.isEmpty && pins.negativePins.isEmpty) { return nil }
        if let expiration = pins.expirationDate, time > expiration { return nil }
        return PinRequirement(kind: .pinSet(pins, host: host))
    }

    /// Whether `certificates` (a proven path, leaf first) carry the pins at `time`.
    func isMet(by certificates: [Certificate], at time: Int64) -> Bool {
        switch kind {
        case .pinSet(let pins, let host):
            return PinningConfiguration.check(pins, certificates: certificates, forHost: host, at: time).outcome == .matched
        case .keys(let keys):
            return certificates.contains { keys.contains(Array($0.subjectPublicKeyInfo.derBytes)) }
        case .certificates(let pinned):
            return certificates.contains { pinned.contains($0.derBytes) }
        }
    }
}

/// The pins of a trust as a ``/TrustEvaluation/PathPreference``: a path is preferred when it
/// meets every requirement (the pin sets of every matcher that will look at it).
struct PinPreference: PathPreference {
    let requirements: [PinRequirement]

    func prefers(_ path: CandidatePath, at time: Int64) -> Bool { isMet(by: path.certificates, at: time) }

    func isMet(by certificates: [Certificate], at time: Int64) -> Bool {
        requirements.allSatisfy { $0.isMet(by: certificates, at: time) }
    }
}

/// An evaluator that compares pins with a proven path: what its pins need of a path, so that
/// every evaluation of the same decision, including one an earlier evaluator of a
/// ``CompositeTrustEvaluator`` makes, prefers a path its pins are on.
protocol PinRequiring {
    /// The requirements of this evaluator's pins for `host` at `time`.
    func pinRequirements(forHost host: String, at time: Int64) -> [PinRequirement]
}

extension PeerTrust {
    /// Adds what `requirements` need of a path to what every later evaluation of this trust
    /// prefers (``pinPreference``); a requirement already there is not added again.
    mutating func prefer(_ requirements: [PinRequirement]) {
        for requirement in requirements where !pinRequirements.contains(requirement) { pinRequirements.append(requirement) }
    }

    /// Adds the requirements of `evaluator`'s pins, if it has any.
    mutating func prefer(pinsOf evaluator: any ServerTrustEvaluating, forHost host: String) {
        guard let pinned = evaluator as? any PinRequiring else { return }
        prefer(pinned.pinRequirements(forHost: host, at: evaluationTime()))
    }

    /// What an evaluation of this trust prefers among valid paths: `nil` without pins, so an
    /// unpinned evaluation stops at its first valid path and costs nothing more.
    var pinPreference: PinPreference? { pinRequirements.isEmpty ? nil : PinPreference(requirements: pinRequirements) }
}
