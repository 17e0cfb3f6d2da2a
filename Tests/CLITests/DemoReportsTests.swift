import Foundation
import Testing

/// The demo's report-only scene (issue 28): both failures reach the collector the demo starts,
/// filed as a rotation and an interception, and the database is kept for the dashboard.
@Suite("servertrust demo: report-only pins and the collector")
struct DemoReportsTests {
    @Test("both report-only failures are accepted, reported, classified and stored; the last lines point at the dashboard")
    func reportScene() async throws {
        let result = try await CLIRunner.run(["demo", "--json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let output = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let steps = try #require(output["reports"] as? [[String: String]])
        #expect(steps.map { $0["actual"] ?? "" } == ["accepted", "accepted", "rotation", "interception", "2"], "\(steps)")
        for step in steps { #expect(step["expected"] == step["actual"], "\(step)") }
        let database = try #require(output["dashboard"] as? String)
        #expect(FileManager.default.fileExists(atPath: database), "the demo keeps its reports for the dashboard")

        let human = try await CLIRunner.run(["demo", "--no-color"])
        #expect(human.status == 0)
        let last = human.stdout.split(separator: "\n").suffix(2)
        #expect(last.first?.contains("The dashboard was at http://127.0.0.1:") == true, "\(last)")
        #expect(last.last?.contains("servertrust collect --db sqlite:") == true && last.last?.contains("http://127.0.0.1:8470/") == true, "\(last)")
    }
}
