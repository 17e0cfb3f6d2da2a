import CertificateParsing
import ServerTrust
import ServerTrustHTTP
import TrustEvaluation

/// The one line `get` prints for a failed request: what a user can act on, in words, rather
/// than the library's kind names (`leafIsCertificateAuthority`, `spkiPinningFailed`) or a
/// libcurl code whose text misleads (27, "Out of memory", for a header too large).
///
/// The library's descriptions stay as they are: they are what `--json` carries in `error`
/// and what logs grep for; the decision record printed after the line, and `--json`'s
/// `failureKind`, keep the internal names.
enum UserMessages {
    /// The line for `error`, without the `servertrust: get: ` prefix.
    static func describe(_ error: HTTPError) -> String {
        switch error {
        case .serverTrustRejected(let decision): return "server trust rejected: " + rejection(decision, rootsOption: "--cacert")
        case .proxyTrustRejected(let decision): return "proxy trust rejected: " + rejection(decision, rootsOption: "--proxy-cacert")
        case .transport(let transport) where transport.responseHeaderLimit != nil:
            return "response header larger than \(transport.responseHeaderLimit ?? 0) bytes (one header field; libcurl's limit, \(transport.diagnostic))"
        default: return "\(error)"
        }
    }

    /// `HOST:PORT: reason`; `rootsOption` is the option that adds a root for this peer.
    static func rejection(_ decision: TrustDecision, rootsOption: String) -> String {
        "\(decision.host ?? "(no host)"):\(decision.port): \(reason(decision, rootsOption: rootsOption))"
    }

    /// Why `decision` refused, in words.
    static func reason(_ decision: TrustDecision, rootsOption: String) -> String {
        guard let failure = decision.failure else { return "trusted" }
        if let validation = failure.validationFailure, failure.kind == .chainValidationFailed || failure.kind == .hostValidationFailed {
            return reason(validation, served: decision.servedChain, host: decision.host, rootsOption: rootsOption)
        }
        switch failure.kind {
        case .spkiPinningFailed, .publicKeyPinningFailed:
            // curl: "SSL: public key does not match pinned public key". The served leaf's pin
            // is named so that a deliberate key change can be pinned (after checking it).
            let leaf = decision.servedChain.first.map { " (the server's key is sha256//\($0.spkiSHA256Base64))" } ?? ""
            return "public key does not match the pinned public key\(leaf)"
        case .certificatePinningFailed: return "certificate is not one of the pinned certificates"
        // ServerTrustManager's fail-closed rule: --policy's hosts, or --pin's one host (a
        // redirect elsewhere is refused).
        case .noRequiredEvaluator:
            return "no trust rule covers \(decision.host ?? "this host") (with --pin, --pinnedpubkey or --policy, hosts they do not name are refused)"
        case .emptyChain: return "the server sent no certificate"
        case .malformedCertificate: return "the server's certificate cannot be read: \(failure.detail)"
        default: return failure.detail
        }
    }

    /// A path-validation failure in words.
    static func reason(_ failure: ValidationFailure, served: [Certificate], host: String?, rootsOption: String) -> String {
        let which = failure.subject.map { " (\"\($0)\")" } ?? ""
        let leaf = served.first
        switch failure.kind {
        // A certificate that issued itself and is not an anchor: curl's "self-signed
        // certificate" (OpenSSL's X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT). Typical ones
        // (`openssl req -x509`) assert cA, which the leaf profile refuses first.
        case .leafIsCertificateAuthority where leaf?.isSelfIssued == true, .untrustedRoot where leaf?.isSelfIssued == true:
            let subject = leaf.map { " (\"\($0.subject.rfc4514)\")" } ?? ""
            return "self-signed certificate, not trusted\(subject); trust it with \(rootsOption) FILE"
        case .leafIsCertificateAuthority:
            return "the server's certificate is a CA certificate, not a server certificate\(which)"
        case .untrustedRoot:
            return "certificate not trusted: \(failure.detail); add the issuing CA with \(rootsOption) FILE"
        case .hostnameMismatch:
            let names = leaf.map(names(of:)) ?? []
            let target = host ?? "the host"
            return "certificate is not valid for \(target)" + (names.isEmpty ? " (it names no host)" : " (it is for \(names.joined(separator: ", ")))")
        case .expired: return "certificate expired: \(failure.detail)\(which)"
        case .notYetValid: return "certificate not valid yet: \(failure.detail)\(which)"
        case .badSignature: return "certificate signature does not verify: \(failure.detail)"
        case .certificateTransparencyNotCompliant: return "Certificate Transparency: the server's certificate is \(failure.detail)"
        default: return "certificate rejected: \(failure.detail)\(which)"
        }
    }

    /// The DNS names and IP addresses a certificate is for (its SAN; the CN without one).
    static func names(of certificate: Certificate) -> [String] {
        let sans = certificate.subjectAlternativeNames.compactMap { name -> String? in
            switch name {
            case .dnsName(let dns): return DisplayText.escaped(dns)
            case .ipAddress(let bytes): return IPAddressText.format(bytes)
            default: return nil
            }
        }
        if !sans.isEmpty { return sans }
        return certificate.subject.rfc4514.isEmpty ? [] : ["\"\(certificate.subject.rfc4514)\""]
    }
}
