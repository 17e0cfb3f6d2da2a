import Foundation
import ServerTrustLab
import Testing

/// LabProcess and LabChildProcess: the children the tests judge the code with inherit nothing
/// but their standard descriptors, report their status, and are reaped.
@Suite struct LabProcessTests {
    @Test func childInheritsOnlyItsStandardDescriptors() async throws {
        // A pipe that is not close-on-exec, as Foundation's Pipe and many C libraries make
        // them: a child spawned with Foundation's Process while it is being opened inherits it.
        var leaked: [Int32] = [-1, -1]
        #expect(pipe(&leaked) == 0)
        defer { for end in leaked { close(end) } }
        let listing = try await LabProcess.run("/bin/ls", ["-1", "/proc/self/fd"])
        #expect(listing.status == 0, "\(listing)")
        let descriptors = Set(listing.stdoutText.split(separator: "\n").compactMap { Int32($0) })
        // 0, 1, 2 and the directory ls itself opened to list them.
        #expect(descriptors.isSubset(of: [0, 1, 2, 3]), "\(descriptors)")
        #expect(descriptors.isDisjoint(with: leaked))
    }

    @Test func statusOutputsInputAndDuration() async throws {
        let echoed = try await LabProcess.run("/bin/sh", ["-c", "cat; echo oops >&2; exit 3"], input: Array("hello\n".utf8))
        #expect(echoed.status == 3 && echoed.stdoutText == "hello\n" && echoed.stderrText == "oops\n", "\(echoed)")
        let slept = try await LabProcess.run("/bin/sleep", ["0.3"])
        #expect(slept.status == 0 && slept.elapsed >= .milliseconds(300), "\(slept)")
        // More than a pipe holds (64 KiB) on both outputs at once.
        let big = try await LabProcess.run("/bin/sh", ["-c", "head -c 300000 /dev/zero >&2; head -c 300000 /dev/zero"])
        #expect(big.stdout.count == 300_000 && big.stderr.count == 300_000)
    }

    @Test func signalsAndStop() throws {
        let sleeper = try LabChildProcess("/bin/sleep", ["60"], environment: [:], stdin: 0, stdout: 1, stderr: 2)
        #expect(sleeper.isRunning)
        #expect(sleeper.stop(grace: .seconds(5)) == SIGTERM)
        #expect(!sleeper.isRunning)
        #expect(sleeper.waitUntilExit() == SIGTERM)
    }

    @Test func missingProgramIsATypedError() async throws {
        await #expect(throws: LabError.self) { try await LabProcess.run("/nonexistent/program", []) }
    }
}
