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

    /// Parses a pin.
    /// - Parameters:
    ///   - text: `sha256/…`, `sha256//…`, `sha384/…`, `sha512/…` or bare base64.
    ///   - scope: Where it may match.
    ///   - notBefore: Start of validity.
    ///   - notAfter: End of validity.
    /// - Throws: ``PolicyConfigurationError`` (`invalidPin`) saying what is wrong.
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
        // "sha1/…", "md5/…": a digest this library does not accept (OkHttp's legacy sha1 pins
        // are refused on purpose; SHA-1 is not collision resistant).
        if algorithm == nil, let slash = body.firstIndex(of: "/"), body[..<slash].count <= 7,
            body[..<slash].lowercased().hasPrefix("sha") || body[..<slash].lowercased().hasPrefix("md")
        {
            throw PolicyConfigurationError(.invalidPin, path: "", "not a valid pin: unsupported digest \"\(body[..<slash])\" (use sha256, sha384 or sha512)")
        }
        guard !body.isEmpty, let digest = Base64.decode(Array(body.utf8)) else {
            throw PolicyConfigurationError(.invalidPin, path: "", "not a valid \(algorithm?.rawValue ?? "sha256") pin: not base64")
        }
        let resolved: PinDigestAlgorithm
        if let algorithm {
            resolved = algorithm
        } else {
            guard let inferred = PinDigestAlgorithm.allCases.first(where: { $0.byteCount == digest.count }) else {
                throw PolicyConfigurationError(
                    .invalidPin, path: "", "not a valid sha256 pin: base64 decodes to \(digest.count) bytes (32, 48 or 64 expected)")
            }
            resolved = inferred
        }
        try self.init(algorithm: resolved, digest: digest, scope: scope, notBefore: notBefore, notAfter: notAfter)
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
