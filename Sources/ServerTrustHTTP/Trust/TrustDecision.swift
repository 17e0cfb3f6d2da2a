public import CertificateParsing
public import TrustEvaluation

/// The certificates a server presented on one TLS connection, and where the client was
/// connecting: the input of every server-trust decision (what `SecTrust` holds on Apple
/// platforms).
public struct ServedChain: Sendable {
    /// The certificates in the order the server sent them, leaf first.
    public let certificates: [Certificate]
    /// The host from the request URL (not the address connected to), without brackets for IPv6.
    public let host: String
    /// The port from the request URL.
    public let port: Int
    /// The negotiated protocol version as OpenSSL names it (`TLSv1.3`), when known.
    public let tlsVersion: String?
    /// The negotiated cipher suite (OpenSSL's name), if known.
    public let cipher: String?
    /// The application protocol the server selected by ALPN, if any.
    public let alpn: String?

    /// Creates a served chain.
    ///
    /// - Parameters:
    ///   - certificates: Leaf first, as served.
    ///   - host: The host the client wanted.
    ///   - port: The port the client wanted.
    ///   - tlsVersion: The negotiated version, if known.
    public init(certificates: [Certificate], host: String, port: Int, tlsVersion: String? = nil, cipher: String? = nil, alpn: String? = nil) {
        self.cipher = cipher
        self.alpn = alpn
        self.certificates = certificates
        self.host = host
        self.port = port
        self.tlsVersion = tlsVersion
    }

    /// The leaf, if the server sent any certificate.
    public var leaf: Certificate? { certificates.first }
}

/// The record of one server-trust decision: what was served, who decided, and why.
///
/// A transfer whose chain was rejected fails with ``HTTPError/serverTrustRejected(_:)``
/// carrying this record (AFNetworking's -1202 with the peer trust attached); an accepted one
/// is attached to the ``HTTPResponse``.
public struct TrustDecision: Sendable, CustomStringConvertible {
    /// Accept or reject.
    public enum Verdict: String, Sendable, Hashable {
        /// The handshake may complete and the request may be sent.
        case accepted
        /// The handshake is aborted before any request byte is sent.
        case rejected
    }

    /// The verdict.
    public let verdict: Verdict
    /// Which decider or handler made the decision (`"chain"`, `"pins"`, `"challenge handler"`, …).
    public let evaluator: String
    /// One line saying why.
    public let reason: String
    /// The chain-validation failure behind a rejection, when path validation was the cause.
    public let validationFailure: ValidationFailure?
    /// The chain the server presented, leaf first.
    public let servedChain: [Certificate]
    /// The validated path (leaf to anchor) when chain validation ran and succeeded.
    public let verifiedChain: [Certificate]?
    /// The host the decision was made for.
    public let host: String
    /// The port the decision was made for.
    public let port: Int
    /// A multi-line account of the evaluation (the policy's decision record), when the decider
    /// provides one.
    public let explanation: String?
    /// `true` when this record belongs to an earlier handshake whose connection or TLS
    /// session the request reused (no certificate was presented for the request itself).
    public let isFromEarlierHandshake: Bool

    /// Creates a decision.
    ///
    /// - Parameters:
    ///   - verdict: Accept or reject.
    ///   - chain: What was served.
    ///   - evaluator: Who decided.
    ///   - reason: Why, in one line.
    ///   - validationFailure: The path-validation failure, if that was the cause.
    ///   - verifiedChain: The validated path, if validation succeeded.
    ///   - explanation: A multi-line account, if the decider keeps one.
    public init(
        _ verdict: Verdict,
        for chain: ServedChain,
        evaluator: String,
        reason: String,
        validationFailure: ValidationFailure? = nil,
        verifiedChain: [Certificate]? = nil,
        explanation: String? = nil
    ) {
        self.init(verdict: verdict, evaluator: evaluator, reason: reason, validationFailure: validationFailure,
                  servedChain: chain.certificates, verifiedChain: verifiedChain, host: chain.host, port: chain.port,
                  explanation: explanation, isFromEarlierHandshake: false)
    }

    init(verdict: Verdict, evaluator: String, reason: String, validationFailure: ValidationFailure?, servedChain: [Certificate],
         verifiedChain: [Certificate]?, host: String, port: Int, explanation: String?, isFromEarlierHandshake: Bool) {
        self.verdict = verdict
        self.evaluator = evaluator
        self.reason = reason
        self.validationFailure = validationFailure
        self.servedChain = servedChain
        self.verifiedChain = verifiedChain
        self.host = host
        self.port = port
        self.explanation = explanation
        self.isFromEarlierHandshake = isFromEarlierHandshake
    }

    /// An acceptance.
    ///
    /// - Parameters:
    ///   - chain: What was served.
    ///   - evaluator: Who decided.
    ///   - reason: Why.
    /// - Returns: The decision.
    public static func accept(_ chain: ServedChain, by evaluator: String, _ reason: String) -> TrustDecision {
        TrustDecision(.accepted, for: chain, evaluator: evaluator, reason: reason)
    }

    /// A rejection.
    ///
    /// - Parameters:
    ///   - chain: What was served.
    ///   - evaluator: Who decided.
    ///   - reason: Why.
    /// - Returns: The decision.
    public static func reject(_ chain: ServedChain, by evaluator: String, _ reason: String) -> TrustDecision {
        TrustDecision(.rejected, for: chain, evaluator: evaluator, reason: reason)
    }

    /// Whether the verdict is ``Verdict/accepted``.
    public var isAccepted: Bool { verdict == .accepted }

    /// The same decision marked as reused by a later request.
    var reused: TrustDecision {
        TrustDecision(verdict: verdict, evaluator: evaluator, reason: reason, validationFailure: validationFailure,
                      servedChain: servedChain, verifiedChain: verifiedChain, host: host, port: port, explanation: explanation,
                      isFromEarlierHandshake: true)
    }

    /// `rejected www.example.test:443 by chain: hostnameMismatch: …`, one line.
    public var description: String { "\(verdict.rawValue) \(host):\(port) by \(evaluator): \(reason)" }
}

/// Decides whether a served chain is trusted. The transport calls ``decide(_:)`` synchronously
/// inside OpenSSL's certificate-verify callback, on the session's transfer thread, once per
/// new TLS connection (never for a reused connection or a resumed TLS session); keep it fast
/// and never block on other requests of the same session.
///
/// The module `ServerTrust` (issue 4) will provide its `SecurityPolicy`; any type conforming
/// to this protocol plugs in.
public protocol ServerTrustDecider: Sendable {
    /// Judges one served chain.
    ///
    /// - Parameter chain: The chain, host and port.
    /// - Returns: The decision, with a reason.
    func decide(_ chain: ServedChain) -> TrustDecision
}

/// A decider made from a closure.
public struct ClosureTrustDecider: ServerTrustDecider {
    private let body: @Sendable (ServedChain) -> TrustDecision

    /// Wraps `body`.
    ///
    /// - Parameter body: The decision; called on the transfer thread during the handshake.
    public init(_ body: @escaping @Sendable (ServedChain) -> TrustDecision) {
        self.body = body
    }

    /// Calls the closure.
    ///
    /// - Parameter chain: The served chain.
    /// - Returns: The closure's decision.
    public func decide(_ chain: ServedChain) -> TrustDecision { body(chain) }
}
