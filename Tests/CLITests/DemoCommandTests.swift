import Foundation
import Testing

@Suite("servertrust demo", .serialized)
struct DemoCommandTests {
    @Test("the live matrix: 12 policies × 8 situations × compat and strict, every cell as expected")
    func jsonMatrixMatches() async throws {
        let result = try await CLIRunner.run(["demo", "--json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let output = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let cells = try #require(output["matrix"] as? [[String: Any]])
        #expect(cells.count == 12 * 8 * 2)
        for cell in cells {
            for key in ["mode", "allowInvalidCertificates", "validatesDomainName", "strict", "situation", "expected", "actual", "reason"] {
                #expect(cell[key] != nil, "missing \(key)")
            }
            #expect(cell["expected"] as? String == cell["actual"] as? String, "cell \(cell)")
        }
        // The cells the demo exists to show: with the default policy the man-in-the-middle is
        // accepted; with every pinning mode it is refused.
        let mitm = cells.filter { $0["situation"] as? String == "mitm" && $0["strict"] as? Bool == false }
        let defaultPolicy = mitm.first {
            $0["mode"] as? String == "none" && $0["allowInvalidCertificates"] as? Bool == false && $0["validatesDomainName"] as? Bool == true
        }
        #expect(defaultPolicy?["actual"] as? String == "accepted")
        #expect(mitm.filter { $0["mode"] as? String != "none" }.allSatisfy { $0["actual"] as? String == "rejected" })
        // The attack on pinning itself: the genuine pinned intermediate appended to the
        // attacker's and to the MITM's chain is refused by every pinning row, in both semantics.
        for situation in ["attacker+int", "mitm+int"] {
            let pinning = cells.filter { $0["situation"] as? String == situation && $0["mode"] as? String != "none" }
            #expect(pinning.count == 8 * 2)
            #expect(pinning.allSatisfy { $0["actual"] as? String == "rejected" }, "\(situation)")
        }
    }

    @Test("the rotation scene: forged, tampered, MITM-served and replayed updates refused, the operator's set accepted and in force after a restart")
    func rotationScene() async throws {
        let result = try await CLIRunner.run(["demo", "--json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let output = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let steps = try #require(output["rotation"] as? [[String: String]])
        #expect(steps.count == 10)
        for step in steps { #expect(step["expected"] == step["actual"], "\(step)") }
        // What each refusal was refused for: the scene shows the rule that stops each attack.
        let details = steps.map { $0["detail"] ?? "" }
        #expect(details.prefix(5) == ["not-pinned", "unknownKey", "badSignature", "fetch: not-pinned", "serial 2 in force"], "\(details)")
        #expect(details[6] == "serialNotIncreasing")
        #expect(
            steps.map { $0["actual"] ?? "" } == [
                "refused", "refused", "refused", "refused", "accepted", "accepted", "refused", "accepted", "accepted", "accepted",
            ])
    }

    @Test("the human matrix names both semantics and ends with the summary line")
    func humanMatrix() async throws {
        let result = try await CLIRunner.run(["demo", "--no-color"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("COMPAT semantics"))
        #expect(result.stdout.contains("STRICT semantics"))
        #expect(result.stdout.contains("192 of 192 cells match the expected table"))
        #expect(result.stdout.contains("10 of 10 rotation steps as expected"))
        #expect(!result.stdout.contains("\u{1B}["), "no colour codes when asked for none or not on a terminal")
    }

    @Test("the demo leaves no temporary folder behind")
    func cleansUp() async throws {
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("servertrust-demo-") })
        _ = try await CLIRunner.run(["demo", "--json"])
        let after = Set(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("servertrust-demo-") })
        #expect(after.subtracting(before).isEmpty)
    }

    @Test("bad options exit 2 with one line")
    func badInput() async throws {
        let result = try await CLIRunner.run(["demo", "--bogus"])
        #expect(result.status == 2)
        #expect(result.stderr.split(separator: "\n").count == 1)
    }
}
