import ServerTrust
import Synchronization
import TrustEvaluation

/// Collects what a reporter, observer or logger receives.
final class Collector<Item: Sendable>: Sendable {
    private let items = Mutex<[Item]>([])

    func append(_ item: Item) { items.withLock { $0.append(item) } }

    var all: [Item] { items.withLock { $0 } }
}

/// A PinFailureReporter that keeps the reports.
struct CollectingReporter: PinFailureReporter {
    let reports = Collector<(PinFailureReport, [String])>()

    func send(_ report: PinFailureReport, to reportURIs: [String]) { reports.append((report, reportURIs)) }
}

/// A clock the test moves.
final class SteppingClock: Sendable {
    private let instant: Mutex<Int64>

    init(_ start: Int64) { instant = Mutex(start) }

    func advance(by seconds: Int64) { instant.withLock { $0 += seconds } }

    var clock: TrustClock { TrustClock { self.instant.withLock { $0 } } }
}
