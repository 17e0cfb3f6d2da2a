import CertificateParsing
import Foundation
import TrustEvaluation

/// `servertrust limbo-serve`: the `limbo-jsonl/1` protocol of ../shared/conformance (one JSON
/// request per stdin line, one response line per request, in order, flushed).
enum LimboServeCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments, flags: ["--help"], values: ["--signature-memo"])
        if options.flags.contains("--help") {
            print(
                """
                usage: servertrust limbo-serve

                The x509-limbo conformance server: speaks limbo-jsonl/1 (../shared/conformance/README.md).
                validation_kind SERVER and CLIENT use the Web PKI profile; BASIC (NIST PKITS) is RFC 5280
                path validation with the request's pkits_inputs (RFC 5280 6.1.1 policy inputs).
                Reads one JSON request per line on stdin (id, peer_certificate, untrusted_intermediates,
                trusted_certs, validation_time, expected_peer_name, …) and answers each, in order, with one
                line on stdout: {"id": …, "result": "SUCCESS"|"FAILURE"|"SKIP", "reason": …}. A line that is
                not a request is answered with FAILURE ("unreadable request"), not an exit.

                options:
                  --signature-memo shared|off|twice
                                    shared (default): signatures go through the process-wide memo of verified
                                    signatures, as in the library; off: every signature verified afresh;
                                    twice: each request is evaluated twice through the shared memo and the
                                    second, warm answer is given (the differential test of
                                    scripts/memo-differential.sh compares it with off). The memo's counters
                                    are written to stderr at the end.

                exit codes: 0 at the end of stdin, 2 bad usage
                """)
            return ExitCode.success
        }
        guard options.positionals.isEmpty else { throw CLIError("unexpected argument '\(options.positionals[0])' (requests come on stdin)") }
        let memoMode = options.value("--signature-memo") ?? "shared"
        guard ["shared", "off", "twice"].contains(memoMode) else {
            throw CLIError("--signature-memo: '\(memoMode)' is not shared, off or twice")
        }
        let signatures = OpenSSLSignatureVerifier(memo: memoMode == "off" ? nil : .shared)
        while let line = readLine(strippingNewline: true) {
            if line.isEmpty { continue }
            if memoMode == "twice" { _ = answer(line, signatures) }
            // Written straight to fd 1: each response must reach the runner before it sends the
            // next request (lock-step), so nothing may sit in a stdio buffer.
            Console.writeStdout(answer(line, signatures).rendered + "\n")
        }
        if memoMode != "off" { Console.writeStderr("servertrust: limbo-serve: signature memo: \(SignatureMemo.shared.statistics)") }
        return ExitCode.success
    }

    static func answer(_ line: String, _ signatures: OpenSSLSignatureVerifier) -> JSON {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let id = object["id"] as? String
        else {
            return .object([("id", .null), ("result", .string("FAILURE")), ("reason", .string("unreadable request"))])
        }
        func reply(_ result: String, _ reason: String) -> JSON {
            .object([("id", .string(id)), ("result", .string(result)), ("reason", .string(reason))])
        }
        do {
            let (result, reason) = try evaluate(object, signatures)
            return reply(result, reason)
        } catch let error as LimboError {
            return reply(error.result, error.reason)
        } catch {
            return reply("FAILURE", "\(error)")
        }
    }

    struct LimboError: Error {
        let result: String
        let reason: String
    }

    static func certificate(_ pem: Any?, _ what: String) throws -> Certificate {
        guard let text = pem as? String else { throw LimboError(result: "FAILURE", reason: "\(what): missing") }
        do { return try Certificate(pemEncoded: text) } catch {
            throw LimboError(result: "FAILURE", reason: "malformed \(what): \(error)")
        }
    }

    static func evaluate(_ request: [String: Any], _ signatures: OpenSSLSignatureVerifier) throws -> (String, String) {
        let leaf = try certificate(request["peer_certificate"], "peer certificate")
        let trusted = try (request["trusted_certs"] as? [Any] ?? []).map { try certificate($0, "trusted certificate") }
        let intermediates = try (request["untrusted_intermediates"] as? [Any] ?? []).map {
            try certificate($0, "intermediate")
        }
        guard let timeText = request["validation_time"] as? String, let time = ASN1Time(rfc3339: timeText) else {
            throw LimboError(result: "FAILURE", reason: "bad validation_time")
        }
        let kind = request["validation_kind"] as? String ?? "SERVER"
        var policy: ValidationPolicy
        if kind == "CLIENT" {
            policy = .sslClient
            for name in request["expected_peer_names"] as? [[String: Any]] ?? [] {
                policy.expectedClientNames.append(try peerName(name))
            }
        } else if kind == "BASIC" {
            // RFC 5280 path validation without a TLS profile (NIST PKITS): no name, no EKU, the
            // RFC 5280 certificate rules, and the §6.1.1 policy inputs of the request.
            policy = .basicX509
            policy.profile = .rfc5280
            policy.policyInputs = try policyInputs(request["pkits_inputs"])
        } else {
            policy = ValidationPolicy(kind: .sslServer)
            if let name = request["expected_peer_name"] as? [String: Any] {
                policy.peerName = try peerName(name)
            }
        }
        // Optional limbo features this verifier deliberately does not implement answer SKIP, as
        // the protocol allows: a root's EKU is not forbidden (CA/B BR 7.1.2.1.2), because
        // private and enterprise roots use EKUs as constraints and rejecting them would break
        // deployments for no security gain.
        let features = request["features"] as? [String] ?? []
        if features.contains("pedantic-webpki-eku") {
            return ("SKIP", "pedantic-webpki-eku: root extendedKeyUsage is not prohibited")
        }
        let ekus = request["extended_key_usage"] as? [String] ?? []
        policy.requiredExtendedKeyUsages = try ekus.map { name in
            switch name {
            case "serverAuth": return OID.serverAuth
            case "clientAuth": return OID.clientAuth
            case "codeSigning": return OID.codeSigning
            case "emailProtection": return OID.emailProtection
            case "timeStamping": return OID.timeStamping
            case "OCSPSigning": return OID.ocspSigning
            case "anyExtendedKeyUsage": return OID.anyExtendedKeyUsage
            default: throw LimboError(result: "SKIP", reason: "unknown extended key usage \(name)")
            }
        }
        policy.requiredKeyUsages = request["key_usage"] as? [String] ?? []
        if let depth = request["max_chain_depth"] as? Int { policy.maximumIntermediates = depth }
        if let algorithms = request["signature_algorithms"] as? [String], !algorithms.isEmpty {
            return ("SKIP", "custom signature algorithm sets are not supported")
        }
        // CRLs given with the case are checked through the verifier's whole-path hook, as every
        // revocation source is (RFC 5280 §6.3, hard-fail).
        let crlTexts = request["crls"] as? [String] ?? []
        var checks: [any PathCheck] = []
        if !crlTexts.isEmpty {
            var crls: [CertificateRevocationList] = []
            for text in crlTexts {
                do { crls += try CertificateRevocationList.load(Array(text.utf8)) } catch {
                    return ("FAILURE", "malformed CRL: \(error)")
                }
            }
            checks = [CRLCheck(crls)]
        }
        let verifier = Verifier(anchors: TrustStore(trusted), policy: policy, signatureVerifier: signatures)
        let outcome = verifier.validate(leaf: leaf, intermediates: intermediates, at: time.secondsSince1970, checks: checks)
        switch outcome.result {
        case .success(let chain):
            var reason = "chain of \(chain.certificates.count)"
            if kind == "BASIC" {
                // The §6.1.6 output, for comparison with PKITS's expected user-constrained set.
                let set = chain.policies.userConstrained.map(\.identifier.dotted)
                reason += "; user-constrained-policy-set {\(set.joined(separator: ", "))}"
            }
            return ("SUCCESS", reason)
        case .failure(let failure): return ("FAILURE", failure.description)
        }
    }

    /// The RFC 5280 §6.1.1 inputs of a BASIC request (`pkits_inputs`); absent fields keep the
    /// RFC defaults.
    static func policyInputs(_ value: Any?) throws -> CertificatePolicyInputs {
        var inputs = CertificatePolicyInputs()
        guard let value else { return inputs }
        guard let object = value as? [String: Any] else { throw LimboError(result: "FAILURE", reason: "pkits_inputs is not an object") }
        if let set = object["user_initial_policy_set"] {
            guard let texts = set as? [String] else { throw LimboError(result: "FAILURE", reason: "user_initial_policy_set is not a list of OIDs") }
            var oids = Set<ASN1ObjectIdentifier>()
            for text in texts {
                guard let oid = ASN1ObjectIdentifier(text) else { throw LimboError(result: "FAILURE", reason: "bad policy OID \(text)") }
                oids.insert(oid)
            }
            inputs.initialPolicySet = oids
        }
        func flag(_ key: String) throws -> Bool {
            guard let raw = object[key] else { return false }
            guard let bool = raw as? Bool else { throw LimboError(result: "FAILURE", reason: "\(key) is not a boolean") }
            return bool
        }
        inputs.initialExplicitPolicy = try flag("initial_explicit_policy")
        inputs.initialPolicyMappingInhibit = try flag("initial_policy_mapping_inhibit")
        inputs.initialAnyPolicyInhibit = try flag("initial_any_policy_inhibit")
        return inputs
    }

    static func peerName(_ object: [String: Any]) throws -> PeerName {
        guard let kind = object["kind"] as? String, let value = object["value"] as? String else {
            throw LimboError(result: "FAILURE", reason: "bad peer name")
        }
        switch kind {
        case "DNS": return .dns(value)
        case "IP": return .ip(value)
        case "RFC822": return .email(value)
        default: throw LimboError(result: "SKIP", reason: "unsupported peer name kind \(kind)")
        }
    }
}
