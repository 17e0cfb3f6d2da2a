public import TrustEvaluation

/// What an app trusts pin-set updates by: the update-signing keys it ships, the serial of the
/// pin set it ships (its baseline), and the clock with its skew tolerance.
///
/// The signing keys are never TLS keys: they sign documents offline, and a server's key or a
/// certificate's cannot be given here (only Ed25519 and P-256 SubjectPublicKeyInfos, which
/// ``PinSetSigningKey`` reads; give it keys made by `servertrust pinset keygen`).
public struct PinSetRules: Sendable {
    /// The keys shipped in the app: at least two distinct ones, so the key that signs today
    /// can be retired by a document signed with it, or replaced by the other if it is lost.
    public let signingKeys: [PinSetSigningKey]
    /// The serial of the baseline the app ships: stored documents with this serial or a lower
    /// one are older than the app and are ignored.
    public let baselineSerial: Int64
    /// Seconds of clock difference tolerated at both ends of a document's window (0 … 86 400).
    public let clockSkew: Int64
    /// "Now" (the library's one clock; tests inject a fixed or stepped one).
    public let clock: TrustClock

    /// The most key-rotation documents a chain keeps (each one proves the keys after it).
    public static let maximumKeyRotations = 32
    /// The largest clock-skew tolerance accepted: one day.
    public static let maximumClockSkew: Int64 = 86_400

    /// Creates the rules.
    /// - Parameters:
    ///   - signingKeys: At least two distinct update-signing keys.
    ///   - baselineSerial: The serial of the pin set shipped in the app (0 … ``PinSetDocument/maximumSerial``).
    ///   - clockSkew: Seconds of tolerated clock difference (default 300).
    ///   - clock: "Now".
    /// - Throws: ``PinSetError`` (`invalidRules`).
    public init(signingKeys: [PinSetSigningKey], baselineSerial: Int64 = 0, clockSkew: Int64 = 300, clock: TrustClock = .system) throws(PinSetError) {
        if let problem = Self.signingKeyProblem(signingKeys) { throw PinSetError(.invalidRules, problem) }
        guard (0...Self.maximumClockSkew).contains(clockSkew) else {
            throw PinSetError(.invalidRules, "the clock-skew tolerance must be 0 to \(Self.maximumClockSkew) seconds, not \(clockSkew)")
        }
        guard (0...PinSetDocument.maximumSerial).contains(baselineSerial) else {
            throw PinSetError(.invalidRules, "the baseline serial must be 0 to \(PinSetDocument.maximumSerial), not \(baselineSerial)")
        }
        self.signingKeys = signingKeys
        self.baselineSerial = baselineSerial
        self.clockSkew = clockSkew
        self.clock = clock
    }

    /// The rule for every set of signing keys, shipped or introduced by a document.
    static func signingKeyProblem(_ keys: [PinSetSigningKey]) -> String? {
        let distinct = Set(keys)
        if distinct.count < 2 { return "at least 2 distinct signing keys are needed, so the signing key itself can rotate (\(distinct.count) given)" }
        if distinct.count != keys.count { return "a signing key is listed twice" }
        if keys.count > PinSetDocument.maximumSigningKeys { return "at most \(PinSetDocument.maximumSigningKeys) signing keys" }
        return nil
    }

    /// Whether `document` is past its window at `time`: `expiresAt` earlier than `time` minus
    /// the skew (saturating, so no clock value overflows).
    public func isExpired(_ document: PinSetDocument, at time: Int64) -> Bool {
        document.expiresAt <= time.subtractingSaturated(clockSkew)
    }

    /// Why `document` is outside its window at `time`, or `nil`.
    func windowProblem(_ document: PinSetDocument, at time: Int64) -> PinSetError? {
        if document.issuedAt > time.addingSaturated(clockSkew) {
            return PinSetError(
                .notYetValid,
                "serial \(document.serial) is issued at \(ASN1TimeText.rfc3339(document.issuedAt)), after now (\(ASN1TimeText.rfc3339(time))) plus \(clockSkew) s of tolerated skew"
            )
        }
        if isExpired(document, at: time) {
            return PinSetError(
                .expired,
                "serial \(document.serial) expired at \(ASN1TimeText.rfc3339(document.expiresAt)), before now (\(ASN1TimeText.rfc3339(time))) less \(clockSkew) s of tolerated skew"
            )
        }
        return nil
    }
}

extension Int64 {
    func addingSaturated(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    func subtractingSaturated(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other > 0 ? .min : .max) : difference
    }
}
