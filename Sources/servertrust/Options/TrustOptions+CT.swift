import CertificateParsing
import ServerTrust
import TrustEvaluation

/// The Certificate Transparency flags of `get` and `evaluate` (issue 26):
///
/// - `--ct off|report|require`: the mode for every host (over a policy file's own);
/// - `--ct-policy apple|chrome`: the policy (default apple, what `SecTrust` enforces);
/// - `--ct-log-list FILE`: the log list (Chrome's v3 JSON or Apple's list), required with
///   `report` and `require`: CT needs the app's list, never a built-in one.
///
/// CT applies to chains that end at a system root; with `--cacert` or `--anchors-only` the
/// roots are the user's own, so their chains are exempt, as browsers exempt user-added roots.
extension TrustOptions {
    /// The flags' names, each taking a value.
    static let certificateTransparencyNames: Set<String> = ["--ct", "--ct-policy", "--ct-log-list"]

    /// The settings the flags describe, or `nil` without `--ct`.
    func certificateTransparency() throws -> CertificateTransparencyPolicy? {
        guard let modeText = values["--ct"]?.last else {
            for name in ["--ct-policy", "--ct-log-list"] where values[name] != nil {
                throw CLIError("\(name) needs --ct report or --ct require")
            }
            return nil
        }
        guard let mode = CTMode(rawValue: modeText) else { throw CLIError("--ct: '\(modeText)' is not off, report or require") }
        var policy = CTPolicy.apple
        if let text = values["--ct-policy"]?.last {
            guard let named = CTPolicy(rawValue: text) else { throw CLIError("--ct-policy: '\(text)' is not apple or chrome") }
            policy = named
        }
        guard let path = values["--ct-log-list"]?.last else {
            guard mode == .off else { throw CLIError("--ct \(mode) needs --ct-log-list FILE (the CT log list JSON the SCTs are checked against)") }
            return .off
        }
        return CertificateTransparencyPolicy(mode: mode, policy: policy, logList: try Self.logList(path, option: "--ct-log-list"))
    }

    /// A CT log list file, or a one-line error naming it.
    static func logList(_ path: String, option: String) throws -> CTLogList {
        let bytes = try InputFile.read(path)
        do { return try CTLogList(json: bytes) } catch {
            let kind = FileKind.describe(bytes) ?? ((try? Certificate.load(bytes)).map { $0.count == 1 ? "a certificate" : "certificates" })
            throw CLIError("\(option) \(path): not a CT log list" + (kind.map { ": looks like \($0)" } ?? " (\(error))"))
        }
    }
}
