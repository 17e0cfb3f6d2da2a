import ServerTrust
import ServerTrustHTTP
import TrustEvaluation

/// `get`'s event monitor for the violations a decision only reports (Certificate
/// Transparency in `report` mode): one line each on stderr, as curl prints a warning, while the
/// request goes on.
struct ReportedViolationPrinter: EventMonitor {
    func request(_ request: HTTPRequest, didReportViolations violations: [PathCheckFinding], in decision: TrustDecision) {
        for violation in violations {
            let detail = violation.reportedFailure?.detail ?? violation.detail
            Console.writeStderr("servertrust: get: \(decision.host ?? "(no host)"):\(decision.port): \(violation.check), report only: \(detail)")
        }
    }
}
