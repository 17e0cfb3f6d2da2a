/// Receives one line of diagnostic text, such as "pin set for example.com expired on …; the
/// host is treated as unpinned" (TrustKit's `+setLoggerBlock:` in spirit).
public typealias PolicyLogger = @Sendable (String) -> Void

/// Receives the record of every decision, after it is made; it cannot change the decision
/// (TrustKit's `pinningValidatorCallback`).
public typealias DecisionObserver = @Sendable (DecisionRecord) -> Void
