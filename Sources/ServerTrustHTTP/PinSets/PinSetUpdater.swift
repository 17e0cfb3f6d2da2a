public import ServerTrust
import Synchronization
public import TrustEvaluation

/// Keeps an ``HTTPSession``'s pins current from signed pin sets (docs/pinset-format.md): it
/// fetches the document over HTTPS, through the session itself, so the request is decided by
/// the pin set in force; verifies it (``/ServerTrust/PinSetChain``); stores it crash-safely
/// (``/ServerTrust/PinSetStore``); and swaps the session's decider (``HTTPSession/replaceServerTrust(_:)``),
/// so new connections are decided under the new set and connections accepted under the old
/// one are decided again before they serve.
///
/// ```swift
/// let rules = try PinSetRules(signingKeys: try shippedKeys.map(PinSetSigningKey.init(base64:)))
/// let session = try HTTPSession(serverTrust: ServerTrustDecider(policy: baseline, anchors: try .system()))
/// let updater = try PinSetUpdater(PinSetUpdater.Configuration(
///     url: "https://pins.example.com/pinset.json", baseline: baseline, rules: rules,
///     anchors: try .system(), storePath: supportDirectory + "/pinset.json"), session: session) { event in log(event) }
/// updater.start()                       // every `interval`, and at the document's expiry
/// let outcome = await updater.checkNow() // on demand
/// ```
///
/// A check that fails in any way (network, status, size, signature, serial, time) leaves the
/// set in force untouched and is reported as an ``Event``; nothing falls back to "no pins".
public final class PinSetUpdater: Sendable {
    /// Where the updater fetches from and what it trusts.
    public struct Configuration: Sendable {
        /// The document's `https://` URL. Pin its host in the baseline: the fetch is decided by
        /// the pin set in force, so a man in the middle is refused before any byte is read.
        public var url: String
        /// The policy shipped in the app. A signed pin set replaces only its pins, for the hosts
        /// the document names; its evaluators, anchors and revocation settings stay in force.
        public var baseline: TrustPolicy
        /// Shipped signing keys, baseline serial, clock and skew.
        public var rules: PinSetRules
        /// The roots the decider starts with (the system store, or your private CA).
        public var anchors: TrustStore
        /// The store file, or `nil` to keep accepted documents in memory only.
        public var storePath: String?
        /// What an expired document becomes (default: the baseline).
        public var expiry: PinSetExpiry
        /// Seconds between scheduled checks (default 6 hours).
        public var interval: Double
        /// Seconds before a scheduled retry after a failed check (default 5 minutes).
        public var retryInterval: Double
        /// The fetch's timeout in seconds.
        public var timeout: Double
        /// Receives pin-failure reports from the policies in force.
        public var reporter: (any PinFailureReporter)?
        /// Sees every decision.
        public var observer: DecisionObserver?

        /// Creates a configuration.
        /// - Parameters:
        ///   - url: The document's `https://` URL.
        ///   - baseline: The policy shipped in the app.
        ///   - rules: Shipped signing keys, baseline serial, clock and skew.
        ///   - anchors: The roots the decider starts with.
        ///   - storePath: The store file, or `nil` for memory only.
        public init(url: String, baseline: TrustPolicy, rules: PinSetRules, anchors: TrustStore, storePath: String?) {
            self.url = url
            self.baseline = baseline
            self.rules = rules
            self.anchors = anchors
            self.storePath = storePath
            self.expiry = .baseline
            self.interval = 6 * 3600
            self.retryInterval = 300
            self.timeout = 30
            self.reporter = nil
            self.observer = nil
        }
    }

    /// What the updater did or found; every failure is one of these, delivered to the event
    /// handler and returned by ``checkNow()``.
    public enum Event: Sendable, CustomStringConvertible {
        /// At start: the stored chain verified again, and this serial is in force (0 or the
        /// baseline serial when nothing was stored).
        case restored(serial: Int64)
        /// A stored document or store file was unusable and ignored (at start), or the store
        /// could not be written (after an update, which is in force until the process ends).
        case storeProblem(PinSetError)
        /// A new document is in force.
        case updated(serial: Int64)
        /// The server has nothing newer (304, or the document in force byte for byte).
        case unchanged(serial: Int64)
        /// The document was refused; the set in force stays.
        case refused(PinSetError)
        /// The fetch failed (connection, TLS decision, status, size); the set in force stays.
        case fetchFailed(HTTPError)
        /// The document in force expired: the ``/ServerTrust/PinSetExpiry`` fallback decides now.
        case expired(serial: Int64)

        /// One line.
        public var description: String {
            switch self {
            case .restored(let serial): return "restored: serial \(serial) in force"
            case .storeProblem(let error): return "store problem: \(error.summary)"
            case .updated(let serial): return "updated: serial \(serial) in force"
            case .unchanged(let serial): return "unchanged: serial \(serial) in force"
            case .refused(let error): return "refused: \(error.summary)"
            case .fetchFailed(let error): return "fetch failed: \(error)"
            case .expired(let serial): return "expired: serial \(serial); the fallback decides"
            }
        }
    }

    /// The configuration.
    public let configuration: Configuration
    /// The session whose decider this updater replaces, and through which it fetches.
    public let session: HTTPSession
    private let onEvent: (@Sendable (Event) -> Void)?
    private let store: PinSetStore?

    private struct State {
        var chain: PinSetChain
        var etag: String?
        var schedule: Task<Void, Never>?
        var reportedExpiry: Int64?
    }
    private let state: Mutex<State>

    /// Restores the stored chain (every signature verified again; anything that fails is
    /// reported and ignored in favour of the last good document, or the baseline) and gives
    /// the session the decider of the set in force.
    /// - Parameters:
    ///   - configuration: The configuration.
    ///   - session: The session to keep current.
    ///   - onEvent: Receives every event, from the updater's tasks (start-up events before
    ///     this returns).
    /// - Throws: ``HTTPError/invalidRequest(_:)`` when the URL is not `https://`.
    public init(_ configuration: Configuration, session: HTTPSession, onEvent: (@Sendable (Event) -> Void)? = nil) throws(HTTPError) {
        guard configuration.url.lowercased().hasPrefix("https://") else {
            throw HTTPError.invalidRequest("a pin-set URL must be https://, not \(configuration.url)")
        }
        self.configuration = configuration
        self.session = session
        self.onEvent = onEvent
        self.store = configuration.storePath.map(PinSetStore.init(path:))
        var events: [Event] = []
        var chain = PinSetChain(rules: configuration.rules)
        var etag: String?
        if let store {
            let restored = store.restore(rules: configuration.rules)
            chain = restored.chain
            etag = restored.etag
            events += restored.problems.map(Event.storeProblem)
            if restored.needsRepair {
                do { try store.save(chain.documents.map(\.envelope), etag: etag) } catch { events.append(.storeProblem(error)) }
            }
        }
        events.append(.restored(serial: chain.serial))
        state = Mutex(State(chain: chain, etag: etag))
        session.replaceServerTrust(Self.decider(for: chain, configuration))
        if let current = chain.current, configuration.rules.isExpired(current, at: configuration.rules.clock.now()) {
            state.withLock { $0.reportedExpiry = current.serial }
            events.append(.expired(serial: current.serial))
        }
        for event in events { onEvent?(event) }
    }

    deinit { state.withLock { $0.schedule?.cancel() } }

    /// The chain in force.
    public var chain: PinSetChain { state.withLock { $0.chain } }

    /// The decider the session was given for the chain in force.
    public var decider: ServerTrustDecider { session.serverTrust }

    /// The decider for a chain: the baseline with its current document's pins laid over it
    /// (``/ServerTrust/TrustPolicy/overlaying(_:expiry:rules:)``), with the configured anchors and
    /// the rules' clock.
    static func decider(for chain: PinSetChain, _ configuration: Configuration) -> ServerTrustDecider {
        ServerTrustDecider(
            policy: configuration.baseline.overlaying(chain.current, expiry: configuration.expiry, rules: configuration.rules)
                .reporting(to: configuration.reporter ?? configuration.baseline.reporter, observer: configuration.observer ?? configuration.baseline.observer),
            anchors: configuration.anchors, clock: configuration.rules.clock)
    }

    /// Fetches the document now, and applies it if it passes every rule.
    /// - Returns: What happened (also delivered to the event handler).
    @discardableResult
    public func checkNow() async -> Event {
        let event = await check()
        onEvent?(event)
        return event
    }

    private func check() async -> Event {
        var request = HTTPRequest(.get, configuration.url)
        request.timeout = configuration.timeout
        request.maximumResponseBodySize = PinSetDocument.maximumSize
        let (etag, serialBefore) = state.withLock { ($0.chain.current == nil ? nil : $0.etag, $0.chain.serial) }
        if let etag { request.headers["If-None-Match"] = etag }
        let response: HTTPResponse
        do { response = try await session.send(request) } catch { return .fetchFailed(error) }
        if response.statusCode == 304 { return .unchanged(serial: serialBefore) }
        guard response.statusCode == 200 else { return .fetchFailed(.unacceptableStatusCode(response)) }
        let newETag = Self.usableETag(response.headers["ETag"])
        // The event handler runs after the lock is released, so it may call back into the updater.
        let (event, storeProblem) = state.withLock { state -> (Event, PinSetError?) in
            let outcome: PinSetChain.Acceptance
            do throws(PinSetError) { outcome = try state.chain.accept(response.body) } catch { return (.refused(error), nil) }
            var storeProblem: PinSetError?
            switch outcome {
            case .unchanged:
                if state.etag != newETag {
                    state.etag = newETag
                    do throws(PinSetError) { try store?.save(state.chain.documents.map(\.envelope), etag: newETag) } catch { storeProblem = error }
                }
                return (.unchanged(serial: state.chain.serial), storeProblem)
            case .accepted(let serial):
                state.etag = newETag
                state.reportedExpiry = nil
                // Stored before it is used; a store that cannot be written is reported, and the
                // verified document is in force until the process ends.
                do throws(PinSetError) { try store?.save(state.chain.documents.map(\.envelope), etag: newETag) } catch { storeProblem = error }
                // Swapped under the lock, so two checks finishing together cannot install an
                // older decider after a newer one.
                session.replaceServerTrust(Self.decider(for: state.chain, configuration))
                return (.updated(serial: serial), storeProblem)
            }
        }
        if let storeProblem { onEvent?(.storeProblem(storeProblem)) }
        return event
    }

    /// An entity tag worth sending back: at most 256 visible ASCII characters (RFC 9110 §8.8.3).
    static func usableETag(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= 256, value.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else { return nil }
        return value
    }

    /// Checks every ``Configuration/interval`` seconds (``Configuration/retryInterval`` after a
    /// failure), and wakes at the current document's expiry to report it and have connections
    /// decided under it decided again. Calling it again restarts the schedule.
    public func start() {
        let task = Task { [weak self] in
            var delay = 0.0
            while !Task.isCancelled {
                guard let wait = self?.nextWake(after: delay) else { return }
                // Any configured interval sleeps: NaN, negative or infinite values are clamped to
                // [0, one year] rather than trapping in the conversion.
                let seconds = wait.seconds.isFinite ? min(max(0, wait.seconds), 365 * 86_400) : 365 * 86_400
                do { try await Task.sleep(for: .milliseconds(Int64(seconds * 1000))) } catch { return }
                guard let self else { return }
                if wait.isExpiry {
                    self.noteExpiry()
                    delay = max(0, delay - wait.seconds)
                    continue
                }
                switch await self.checkNow() {
                case .fetchFailed, .refused: delay = self.configuration.retryInterval
                default: delay = self.configuration.interval
                }
            }
        }
        state.withLock { state in
            state.schedule?.cancel()
            state.schedule = task
        }
    }

    /// Stops the schedule (a check under way finishes).
    public func stop() {
        state.withLock { state in
            state.schedule?.cancel()
            state.schedule = nil
        }
    }

    /// The sooner of the next check and an unreported expiry.
    private func nextWake(after delay: Double) -> (seconds: Double, isExpiry: Bool) {
        state.withLock { state in
            guard let current = state.chain.current, state.reportedExpiry != current.serial else { return (delay, false) }
            let now = configuration.rules.clock.now()
            // In Double: an injected clock may read anything, and no Int64 may overflow here.
            let expiresIn = Double(current.expiresAt) + Double(configuration.rules.clockSkew) - Double(now)
            return expiresIn < delay ? (max(0, expiresIn), true) : (delay, false)
        }
    }

    /// Reports the current document's expiry once, and gives the session the same chain's
    /// decider again, so connections decided while it was in force are decided again.
    private func noteExpiry() {
        let expired: Int64? = state.withLock { state in
            guard let current = state.chain.current, state.reportedExpiry != current.serial,
                configuration.rules.isExpired(current, at: configuration.rules.clock.now())
            else { return nil }
            state.reportedExpiry = current.serial
            session.replaceServerTrust(Self.decider(for: state.chain, configuration))
            return current.serial
        }
        if let expired { onEvent?(.expired(serial: expired)) }
    }
}
