internal import COpenSSL
internal import Foundation

/// OpenSSL's own SCT verification, `SCT_validate` with a `CTLOG_STORE`: the independent
/// implementation the library's SCT verifier is checked against, so that it is not only
/// tested with SCTs the Lab made and the Lab's idea of what they cover.
///
/// OpenSSL builds the precertificate entry itself from the certificate (`SCT_CTX_set1_cert`
/// removes the SCT list and poison extensions and re-encodes the TBSCertificate) and rejects
/// SCTs dated after the evaluation time.
package enum LabCTOracle {
    /// `sct_validation_status_t`.
    package enum Status: String, Sendable, Hashable {
        /// `SCT_VALIDATION_STATUS_VALID`.
        case valid
        /// `SCT_VALIDATION_STATUS_INVALID`: bad signature, wrong entry, future timestamp.
        case invalid
        /// `SCT_VALIDATION_STATUS_UNKNOWN_LOG`.
        case unknownLog
        /// `SCT_VALIDATION_STATUS_UNVERIFIED` (a precertificate SCT without an issuer).
        case unverified
        /// `SCT_VALIDATION_STATUS_UNKNOWN_VERSION`.
        case unknownVersion
        /// `SCT_VALIDATION_STATUS_NOT_SET`, or an SCT OpenSSL could not parse.
        case notValidated
    }

    /// Validates one serialized SCT.
    ///
    /// - Parameters:
    ///   - serialized: The SCT's TLS encoding.
    ///   - embedded: Whether it was embedded (a precert entry) or delivered (an x509 entry).
    ///   - certificate: The certificate DER.
    ///   - issuer: The issuer certificate DER (required for embedded SCTs).
    ///   - logKeys: The trusted logs' DER SubjectPublicKeyInfos.
    ///   - milliseconds: The evaluation time.
    /// - Returns: OpenSSL's verdict.
    /// - Throws: ``LabError`` if OpenSSL cannot be set up (a certificate that does not parse,
    ///   a log store that does not load).
    package static func validate(
        sct serialized: [UInt8], embedded: Bool, certificate: [UInt8], issuer: [UInt8]?, logKeys: [[UInt8]], at milliseconds: UInt64
    ) throws -> Status {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lab-ctlog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The CT log file format `openssl s_client -ctlogfile` reads (CTLOG_STORE_load_file).
        let names = logKeys.indices.map { "log\($0)" }
        var config = "enabled_logs = \(names.joined(separator: ","))\n"
        for (name, key) in zip(names, logKeys) { config += "[\(name)]\ndescription = \(name)\nkey = \(Data(key).base64EncodedString())\n" }
        let path = directory.appendingPathComponent("ct_log_list.cnf").path
        try Data(config.utf8).write(to: URL(fileURLWithPath: path))

        guard let store = CTLOG_STORE_new() else { throw LabError.openSSL("CTLOG_STORE_new") }
        defer { CTLOG_STORE_free(store) }
        guard CTLOG_STORE_load_file(store, path) == 1 else { throw LabError.openSSL("CTLOG_STORE_load_file") }

        let leaf = try x509(certificate)
        defer { X509_free(leaf) }
        let issuerX509 = try issuer.map(x509)
        defer { if let issuerX509 { X509_free(issuerX509) } }

        let sct = serialized.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return o2i_SCT(nil, &cursor, buffer.count)
        }
        guard let sct else {
            ERR_clear_error()
            return .notValidated
        }
        defer { SCT_free(sct) }
        guard SCT_set_log_entry_type(sct, embedded ? CT_LOG_ENTRY_TYPE_PRECERT : CT_LOG_ENTRY_TYPE_X509) == 1,
            SCT_set_source(sct, embedded ? SCT_SOURCE_X509V3_EXTENSION : SCT_SOURCE_TLS_EXTENSION) == 1
        else { throw LabError.openSSL("SCT_set_log_entry_type") }

        guard let context = CT_POLICY_EVAL_CTX_new() else { throw LabError.openSSL("CT_POLICY_EVAL_CTX_new") }
        defer { CT_POLICY_EVAL_CTX_free(context) }
        guard CT_POLICY_EVAL_CTX_set1_cert(context, leaf) == 1 else { throw LabError.openSSL("CT_POLICY_EVAL_CTX_set1_cert") }
        if let issuerX509, CT_POLICY_EVAL_CTX_set1_issuer(context, issuerX509) != 1 {
            throw LabError.openSSL("CT_POLICY_EVAL_CTX_set1_issuer")
        }
        CT_POLICY_EVAL_CTX_set_shared_CTLOG_STORE(context, store)
        CT_POLICY_EVAL_CTX_set_time(context, milliseconds)
        _ = SCT_validate(sct, context)
        ERR_clear_error()
        switch SCT_get_validation_status(sct) {
        case SCT_VALIDATION_STATUS_VALID: return .valid
        case SCT_VALIDATION_STATUS_INVALID: return .invalid
        case SCT_VALIDATION_STATUS_UNKNOWN_LOG: return .unknownLog
        case SCT_VALIDATION_STATUS_UNVERIFIED: return .unverified
        case SCT_VALIDATION_STATUS_UNKNOWN_VERSION: return .unknownVersion
        default: return .notValidated
        }
    }

    private static func x509(_ der: [UInt8]) throws -> OpaquePointer {
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw LabError.openSSL("d2i_X509") }
        return parsed
    }
}
