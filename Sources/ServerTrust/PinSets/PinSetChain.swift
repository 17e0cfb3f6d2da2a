/// The signed pin sets a client has accepted: the document in force, and the documents that
/// rotated the signing keys since the app's shipped ones, so that the whole chain can be
/// verified again from the shipped keys (TUF's root-rotation chain, TUF specification §5.3).
///
/// Everything else is derived: the keys trusted now are those of the last rotation (or the
/// shipped ones), the serial in force is the current document's (or the baseline's).
public struct PinSetChain: Sendable {
    /// The rules: shipped keys, baseline serial, clock and skew.
    public let rules: PinSetRules
    /// The documents that changed the signing keys, oldest first.
    public private(set) var rotations: [PinSetDocument] = []
    /// The document in force, or `nil` for the baseline.
    public private(set) var current: PinSetDocument?

    /// What accepting a document did.
    public enum Acceptance: Sendable, Equatable {
        /// It is the new document in force.
        case accepted(serial: Int64)
        /// It is byte for byte the document already in force (a mirror serving it again is not
        /// a replay).
        case unchanged
    }

    /// A chain at the baseline.
    /// - Parameter rules: The rules.
    public init(rules: PinSetRules) {
        self.rules = rules
    }

    /// The keys that may sign the next document.
    public var trustedKeys: [PinSetSigningKey] { rotations.last?.nextSigningKeys ?? rules.signingKeys }

    /// The serial in force: the current document's, or the baseline's.
    public var serial: Int64 { current?.serial ?? rules.baselineSerial }

    /// The documents to store, in order: the rotations, then the current document when it is
    /// not itself the last rotation.
    public var documents: [PinSetDocument] {
        guard let current else { return rotations }
        return rotations.last?.serial == current.serial ? rotations : rotations + [current]
    }

    /// Verifies a document against the keys trusted now, without changing anything: envelope,
    /// key, signature, payload schema, serial and time window, in that order.
    /// - Parameter bytes: The envelope as received.
    /// - Returns: The verified document.
    /// - Throws: ``PinSetError`` saying which rule it breaks.
    public func verify(_ bytes: [UInt8]) throws(PinSetError) -> PinSetDocument {
        try Self.verify(bytes, trustedKeys: trustedKeys, after: serial, rules: rules)
    }

    /// Verifies a document against `trustedKeys` and the serial in force (`servertrust pinset verify`).
    static func verify(_ bytes: [UInt8], trustedKeys: [PinSetSigningKey], after serial: Int64, rules: PinSetRules) throws(PinSetError) -> PinSetDocument {
        let document = try PinSetDocument.verify(bytes, trustedKeys: trustedKeys)
        guard document.serial > serial else {
            throw PinSetError(
                .serialNotIncreasing,
                "serial \(document.serial) is \(document.serial == serial ? "the serial in force (a replay with other contents)" : "older than the serial in force, \(serial) (a rollback)")"
            )
        }
        if let problem = rules.windowProblem(document, at: rules.clock.now()) { throw problem }
        return document
    }

    /// Accepts a document if it passes every rule (``verify(_:)``); otherwise nothing changes.
    /// - Parameter bytes: The envelope as received.
    /// - Returns: Whether it is new or the one already in force.
    /// - Throws: ``PinSetError``; the chain is then unchanged.
    @discardableResult
    public mutating func accept(_ bytes: [UInt8]) throws(PinSetError) -> Acceptance {
        if let current, current.envelope == bytes { return .unchanged }
        let document = try verify(bytes)
        try adopt(document)
        return .accepted(serial: document.serial)
    }

    /// Makes a verified document current, recording it as a rotation when it changes the keys.
    private mutating func adopt(_ document: PinSetDocument) throws(PinSetError) {
        if let next = document.nextSigningKeys, Set(next) != Set(trustedKeys) {
            guard rotations.count < PinSetRules.maximumKeyRotations else {
                throw PinSetError(.tooManyKeyRotations, "the chain already holds \(rotations.count) key rotations; ship the current keys in an app update")
            }
            rotations.append(document)
        }
        current = document
    }

    /// Rebuilds a chain from stored envelopes, verifying each again from the shipped keys:
    /// signatures, payloads and strictly increasing serials (not the time window: a stored
    /// document that has since expired still proves its keys, and the evaluator decides what an
    /// expired current document means). A document that fails (torn, tampered with, or signed
    /// by keys this app no longer ships) is dropped and reported; the documents after it must
    /// still verify under the keys trusted so far, so dropping one never grants trust.
    /// - Parameters:
    ///   - envelopes: The stored documents, oldest first.
    ///   - rules: The rules.
    /// - Returns: The chain (the last good document in force), and one problem per dropped document.
    public static func restoring(_ envelopes: [[UInt8]], rules: PinSetRules) -> (chain: PinSetChain, problems: [PinSetError]) {
        var chain = PinSetChain(rules: rules)
        var problems: [PinSetError] = []
        for (index, bytes) in envelopes.enumerated() {
            do throws(PinSetError) {
                let document = try PinSetDocument.verify(bytes, trustedKeys: chain.trustedKeys)
                guard document.serial > chain.serial else {
                    // At or below the baseline: older than the app, so not in force, and not a fault.
                    if chain.current == nil && document.serial <= rules.baselineSerial { continue }
                    throw PinSetError(.serialNotIncreasing, "serial \(document.serial) does not follow \(chain.serial)")
                }
                try chain.adopt(document)
            } catch {
                problems.append(PinSetError(.storeUnusable, "stored document \(index + 1) of \(envelopes.count) was dropped: \(error.summary)"))
            }
        }
        return (chain, problems)
    }
}
