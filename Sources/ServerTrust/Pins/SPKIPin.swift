public import CertificateParsing

/// A pin on a SubjectPublicKeyInfo digest (RFC 7469 §2.4), with where it may match and when
/// it is valid.
///
/// Written `sha256/<base64>` (OkHttp), `sha256//<base64>` (curl), `sha384/…`, `sha512/…`, or
/// bare base64 whose decoded length selects the digest (TrustKit, NSC, ATS write bare
/// SHA-256 base64).
public struct SPKIPin: Hashable, Sendable, CustomStringConvertible {
    /// The digest algorithm.
    public let algorithm: PinDigestAlgorithm
    /// The digest of the pinned SPKI.
    public let digest: [UInt8]
    /// Where in the chain it may match.
    public var scope: PinScope
    /// Start of the pin's validity (seconds since 1970), for staged rotation; `nil`: always.
    public var notBefore: Int64?
    /// End of the pin's validity (seconds since 1970); `nil`: never ends.
    public var notAfter: Int64?

    /// Creates a pin from a digest.
    /// - Parameters:
    ///   - algorithm: The digest algorithm.
    ///   - digest: The digest; its length must be `algorithm.byteCount`.
    ///   - scope: Where it may match.
    ///   - notBefore: Start of validity.
    ///   - notAfter: End of validity.
    /// - Throws: ``PolicyConfigurationError`` (`invalidPin`) for a digest of the wrong length.
    public init(
        algorithm: PinDigestAlgorithm, digest: [UInt8], scope: PinScope = .any, notBefore: Int64? = nil, notAfter: Int64? = nil
    ) throws(PolicyConfigurationError) {
        guard digest.count == algorithm.byteCount else {
            throw PolicyConfigurationError(
                .invalidPin, path: "", "not a valid \(algorithm.rawValue) pin: \(digest.count) bytes, expected \(algorithm.byteCount)")
        }
        self.algorithm = algorithm
        self.digest = digest
        self.scope = scope
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// The forms a pin may be written in, for messages.
    public static let acceptedForms = "sha256/BASE64 (OkHttp), sha256//BASE64 (curl), sha384/BASE64, sha512/BASE64 or bare base64 (TrustKit)"

    /// Parses a pin.
    ///
    /// A hex fingerprint (40, 64, 96 or 128 hex digits, with or without colons) is refused
    /// by name: 64 hex digits are also valid base64, of 48 bytes, and would otherwise be read
    /// as a SHA-384 pin that matches nothing. (A real base64 pin made only of hex digits has a
    /// chance of about 10^-30.)
    /// - Parameters:
    ///   - text: `sha256/…`, `sha256//…`, `sha384/…`, `sha512/…` or bare base64.
    ///   - scope: Where it may match.
    ///   - notBefore: Start of validity.
    ///   - notAfter: End of validity.
    /// - Throws: ``PolicyConfigurationError`` (`invalidPin`) saying what is wrong and naming
    ///   the accepted forms (``acceptedForms``).
    public init(_ text: String, scope: PinScope = .any, notBefore: Int64? = nil, notAfter: Int64? = nil) throws(PolicyConfigurationError) {
        var algorithm: PinDigestAlgorithm?
        var body = Substring(text)
        for candidate in PinDigestAlgorithm.allCases {
            let prefix = candidate.rawValue + "/"
            if body.lowercased().hasPrefix(prefix) {
                algorithm = candidate
                body = body.dropFirst(prefix.count)
                // curl writes `sha256//<base64>`. Base64 may itself start with "/", so the
                // extra slash is dropped only when the text is not valid as it stands.
                if body.hasPrefix("/"), Base64.decode(Array(body.utf8))?.count != candidate.byteCount { body = body.dropFirst() }
                break
            }
        }
        func invalid(_ reason: String, digest: PinDigestAlgorithm? = .sha256) -> PolicyConfigurationError {
            let what = (algorithm ?? digest).map { "not a valid \($0.rawValue) pin" } ?? "not a valid pin"
            return PolicyConfigurationError(.invalidPin, path: "", "\(what): \(reason); a pin is \(Self.acceptedForms)")
        }
        // "sha1/…", "md5/…": a digest this library does not accept (OkHttp's legacy sha1 pins
        // are refused on purpose; SHA-1 is not collision resistant).
        if algorithm == nil, let slash = body.firstIndex(of: "/"), body[..<slash].count <= 7,
            body[..<slash].lowercased().hasPrefix("sha") || body[..<slash].lowercased().hasPrefix("md")
        {
            throw invalid("unsupported digest \"\(body[..<slash])\" (use sha256, sha384 or sha512)", digest: nil)
        }
        if let digits = Self.hexFingerprintDigits(body) {
            throw invalid(
                "\(digits) hex digits look like a certificate fingerprint, not a pin (the base64 digest of the public key; "
                    + "'servertrust pins FILE' prints it)")
        }
        guard !body.isEmpty, let digest = Base64.decode(Array(body.utf8)) else {
            throw invalid("not base64")
        }
        let resolved: PinDigestAlgorithm
        if let algorithm {
            resolved = algorithm
        } else {
            guard let inferred = PinDigestAlgorithm.allCases.first(where: { $0.byteCount == digest.count }) else {
                throw invalid("bare base64 decodes to \(digest.count) bytes (32, 48 or 64 expected)")
            }
            resolved = inferred
        }
        guard digest.count == resolved.byteCount else {
            throw invalid("\(digest.count) bytes, expected \(resolved.byteCount)")
        }
        try self.init(algorithm: resolved, digest: digest, scope: scope, notBefore: notBefore, notAfter: notAfter)
    }

    /// The number of hex digits when `text` is a hex fingerprint as tools print them (SHA-1,
    /// SHA-256, SHA-384 or SHA-512 of something: 40, 64, 96 or 128 digits, optionally in
    /// colon-separated pairs); `nil` otherwise.
    package static func hexFingerprintDigits(_ text: Substring) -> Int? {
        let digits = text.filter { $0 != ":" }
        guard [40, 64, 96, 128].contains(digits.count), digits.allSatisfy(\.isHexDigit) else { return nil }
        // With colons, only pairs: `AB:CD:…`.
        if digits.count != text.count, text.split(separator: ":", omittingEmptySubsequences: false).contains(where: { $0.count != 2 }) { return nil }
        return digits.count
    }

    /// The pin of `certificate`'s public key.
    /// - Parameters:
    ///   - certificate: The certificate.
    ///   - algorithm: The digest.
    ///   - scope: Where it may match.
    public init(certificate: Certificate, algorithm: PinDigestAlgorithm = .sha256, scope: PinScope = .any) {
        self.algorithm = algorithm
        self.digest = algorithm.digest(certificate.subjectPublicKeyInfo.derBytes)
        self.scope = scope
        self.notBefore = nil
        self.notAfter = nil
    }

    /// `sha256/<base64>`.
    public var description: String { algorithm.rawValue + "/" + Base64.encode(digest) }

    /// RFC 7469's form, `pin-sha256="<base64>"`, used in failure reports.
    public var rfc7469: String { "pin-\(algorithm.rawValue)=\"\(Base64.encode(digest))\"" }

    /// Whether the pin is valid at `time` (its window, when it has one, includes both ends).
    public func isActive(at time: Int64) -> Bool {
        if let notBefore, time < notBefore { return false }
        if let notAfter, time > notAfter { return false }
        return true
    }

    /// Whether `certificate`'s public key is the pinned one.
    public func matches(_ certificate: Certificate) -> Bool {
        SPKIDigestCache.shared.digests(of: [certificate], algorithm)[0] == digest
    }
}
