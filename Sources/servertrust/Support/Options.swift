/// Minimal option parsing: `--flag`, `--key value`, positionals.
struct Options {
    var positionals: [String] = []
    var flags: Set<String> = []
    var values: [String: [String]] = [:]
    /// Where the values of ``SecretArguments/options`` sit, for ``SecretArguments/blank(_:in:)``.
    var secretPositions: [SecretArguments.Position] = []

    init(_ arguments: [String], flags allowedFlags: Set<String>, values allowedValues: Set<String>) throws {
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            if arg.hasPrefix("--") && arg.count > 2 {
                var name = arg
                var inline: String?
                if let eq = arg.firstIndex(of: "=") {
                    name = String(arg[..<eq])
                    inline = String(arg[arg.index(after: eq)...])
                }
                if allowedFlags.contains(name) && inline == nil {
                    flags.insert(name)
                } else if allowedValues.contains(name) {
                    let value: String
                    if let inline {
                        value = inline
                        if SecretArguments.options.contains(name) { secretPositions.append(.init(argument: i, offset: name.utf8.count + 1)) }
                    } else {
                        i += 1
                        guard i < arguments.count else { throw CLIError("\(name) needs a value") }
                        value = arguments[i]
                        if SecretArguments.options.contains(name) { secretPositions.append(.init(argument: i, offset: 0)) }
                    }
                    values[name, default: []].append(value)
                } else {
                    throw CLIError("unknown option \(name)")
                }
            } else {
                positionals.append(arg)
            }
            i += 1
        }
    }

    func value(_ name: String) -> String? { values[name]?.last }

    func int(_ name: String, default fallback: Int) throws -> Int {
        guard let text = value(name) else { return fallback }
        guard let v = Int(text), v >= 0 else { throw CLIError("\(name) must be a non-negative integer, got '\(text)'") }
        return v
    }
}
