public import CertificateParsing

/// Certificate Transparency (RFC 6962) for a validated certificate, enforced as Apple's and
/// Chrome's policies enforce it: the one entry point the whole-path check calls.
///
/// ```swift
/// let evaluation = CertificateTransparency.evaluate(
///     leaf: path[0], issuer: path[1],
///     tlsSCTList: sctsFromTheHandshake, ocspSCTList: sctsFromTheStapledResponse,
///     logList: logList, policy: .apple, at: clock.now())
/// if !evaluation.permitsConnection { /* refuse, or note it in report-only mode */ }
/// ```
///
/// What the caller decides, not this type:
/// - **Whether CT applies.** CT covers the public Web PKI only: browsers exempt chains that end
///   at a private or user-added anchor (an interception proxy's CA never appears in CT logs),
///   and so must the caller. Call this only when the validated path ends at a root of the
///   system store; for any other anchor, record the exemption instead.
/// - **What a failure does** (refuse, or note it and proceed in report-only mode).
///
/// Where the inputs come from:
/// - `leaf` and `issuer`: the validated path's first two certificates. The issuer is the
///   certificate that signed the leaf (for embedded SCTs its key hash is part of the signed
///   precertificate entry, RFC 6962 §3.2), never a Precertificate Signing Certificate.
/// - `tlsSCTList`: the `extension_data` of the TLS `signed_certificate_timestamp` extension
///   (type 18) the server sent, in TLS 1.2 in its ServerHello, in TLS 1.3 in the leaf's
///   CertificateEntry. A server sends it only to a client that offered it. With OpenSSL (in
///   libcurl's `CURLOPT_SSL_CTX_FUNCTION`), `SSL_CTX_add_custom_ext` for type 18 with the contexts
///   `SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_2_SERVER_HELLO | SSL_EXT_TLS1_3_CERTIFICATE`, an add
///   callback that sends it empty and a parse callback that keeps the bytes for `chainidx` 0,
///   hands over exactly these bytes (OpenSSL allows a custom extension of this type as long as
///   its own CT validation is off). A resumed session has no Certificate message and so no
///   TLS SCTs: the first handshake's evaluation must be kept with the session.
/// - `ocspSCTList`: the TLS-encoded list from the stapled OCSP response's singleExtension
///   1.3.6.1.4.1.11129.2.4.5, inside its extnValue's OCTET STRING (the content that
///   ``/CertificateParsing/SignedCertificateTimestampList/init(extensionValue:)`` reads), and only from a response
///   that was itself verified for this certificate.
/// - Embedded SCTs are read from the leaf itself.
public enum CertificateTransparency {
    /// Verifies every SCT of `leaf` and judges them by `policy`.
    ///
    /// - Parameters:
    ///   - leaf: The server's certificate.
    ///   - issuer: The certificate that issued it, or `nil` when unknown (embedded SCTs then
    ///     cannot be checked).
    ///   - tlsSCTList: The TLS extension's SCT list, if the server sent one.
    ///   - ocspSCTList: The SCT list of the stapled OCSP response, if any.
    ///   - logList: The logs the app trusts.
    ///   - policy: ``CTPolicy/apple`` or ``CTPolicy/chrome``.
    ///   - maximumLogListAge: Seconds after the list's timestamp at which enforcement stops
    ///     (default ``CTLogList/defaultMaximumAge``, 70 days).
    ///   - time: The time of check, seconds since 1970 (the library's `TrustClock`).
    ///   - signatureVerifier: The signature seam every SCT signature goes through.
    /// - Returns: The verdict with every SCT and rule.
    public static func evaluate<Verifier: SignatureVerifier>(
        leaf: Certificate,
        issuer: Certificate?,
        tlsSCTList: [UInt8]? = nil,
        ocspSCTList: [UInt8]? = nil,
        logList: CTLogList,
        policy: CTPolicy,
        maximumLogListAge: Int64 = CTLogList.defaultMaximumAge,
        at time: Int64,
        signatureVerifier: Verifier
    ) -> CTEvaluation {
        var verification = SCTVerification(verifier: signatureVerifier, logList: logList, leaf: leaf, issuer: issuer, time: time)
        var results: [CTSCTResult] = []
        var notes: [String] = []
        let deliveries: [(CTSCTResult.Source, [UInt8]?)] = [
            (.embedded, leaf.extensions.signedCertificateTimestamps.map { Array($0) }),
            (.tlsExtension, tlsSCTList),
            (.ocspResponse, ocspSCTList),
        ]
        for case (let source, let bytes?) in deliveries {
            let list: SignedCertificateTimestampList
            do { list = try SignedCertificateTimestampList(tlsEncoded: bytes) } catch {
                results.append(CTSCTResult(source: source, sct: nil, log: nil, status: .malformed(error)))
                notes.append("the \(source.rawValue) SCT list is malformed, so none of its SCTs count")
                continue
            }
            for entry in list.entries {
                switch entry {
                case .parsed(let sct): results.append(verification.check(sct, from: source))
                case .malformed(_, let error): results.append(CTSCTResult(source: source, sct: nil, log: nil, status: .malformed(error)))
                }
            }
        }

        let valid = results.compactMap { result -> CTPolicyInput.Counted? in
            guard result.status.isValid, let sct = result.sct, let log = result.log else { return nil }
            return CTPolicyInput.Counted(source: result.source, sct: sct, log: log)
        }
        let input = CTPolicyInput(valid: valid, notBefore: leaf.notBefore, notAfter: leaf.notAfter, time: time)
        let (compliant, rules) = policy.judge(input)

        let verdict: CTEvaluation.Verdict
        // Chrome's CT policy, "CT Enforcement Timeout": no enforcement once the list is 70 days
        // (10 weeks) old; Chromium: timely while `(now - log_list_date).InDays() < 70`.
        if logList.age(at: time) >= maximumLogListAge {
            verdict = .notEnforced(.staleLogList(listTimestamp: logList.timestamp, maximumAge: maximumLogListAge))
            notes.append(
                "CT not enforced: the log list (\(logList.timestampSource.rawValue) timestamp \(logList.timestamp.rfc3339)) is older than \(maximumLogListAge / 86_400) days; the result is \(compliant ? "compliant" : "non-compliant") for the record only"
            )
        } else {
            verdict = compliant ? .compliant : .nonCompliant
        }
        return CTEvaluation(policy: policy, verdict: verdict, scts: results, rules: rules, notes: notes)
    }

    /// ``evaluate(leaf:issuer:tlsSCTList:ocspSCTList:logList:policy:maximumLogListAge:at:signatureVerifier:)``
    /// with libcrypto's ``OpenSSLSignatureVerifier``.
    ///
    /// - Parameters:
    ///   - leaf: The server's certificate.
    ///   - issuer: The certificate that issued it, or `nil`.
    ///   - tlsSCTList: The TLS extension's SCT list, if any.
    ///   - ocspSCTList: The stapled OCSP response's SCT list, if any.
    ///   - logList: The logs the app trusts.
    ///   - policy: The policy.
    ///   - maximumLogListAge: Seconds after which a list stops enforcement.
    ///   - time: The time of check, seconds since 1970.
    /// - Returns: The verdict with every SCT and rule.
    public static func evaluate(
        leaf: Certificate,
        issuer: Certificate?,
        tlsSCTList: [UInt8]? = nil,
        ocspSCTList: [UInt8]? = nil,
        logList: CTLogList,
        policy: CTPolicy,
        maximumLogListAge: Int64 = CTLogList.defaultMaximumAge,
        at time: Int64
    ) -> CTEvaluation {
        evaluate(
            leaf: leaf, issuer: issuer, tlsSCTList: tlsSCTList, ocspSCTList: ocspSCTList, logList: logList, policy: policy,
            maximumLogListAge: maximumLogListAge, at: time, signatureVerifier: OpenSSLSignatureVerifier())
    }
}
