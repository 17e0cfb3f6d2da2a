/// `servertrust reports summary`: the dashboard's content as terminal text. Values from
/// reports have their control characters escaped (``HTMLText/terminal(_:)``).
package enum SummaryText {
    package static func render(_ summary: Summary, chains: [ChainSummary]) -> String {
        let t = HTMLText.terminal
        var lines: [String] = []
        var heading = "\(summary.reports) reports (\(summary.storedRows) rows) of \(summary.chains) distinct chains from \(summary.hosts) hosts"
        if summary.devices > 0 { heading += ", \(summary.devices) devices" }
        if let first = summary.firstReceived, let last = summary.lastReceived { heading += ", \(HTMLText.time(first)) to \(HTMLText.time(last))" }
        lines.append(heading)
        if !summary.filter.isEmpty {
            var parts: [String] = []
            if let host = summary.filter.host { parts.append("host \(t(host))") }
            if let app = summary.filter.app { parts.append("app \(t(app))") }
            if let since = summary.filter.since { parts.append("since \(HTMLText.time(since))") }
            if let until = summary.filter.until { parts.append("until \(HTMLText.time(until))") }
            lines.append("filter: " + parts.joined(separator: ", "))
        }
        lines.append("")
        lines.append("by class:")
        for count in summary.byClass {
            lines.append("  \(pad(count.classification.title, 22)) \(pad(String(count.reports), 8, left: true)) reports  \(count.chains) chains")
        }
        if !summary.byHost.isEmpty {
            lines.append("")
            lines.append("hosts:")
            for host in summary.byHost.prefix(20) {
                let classes = ChainClass.allCases.compactMap { chainClass -> String? in
                    guard let count = host.byClass[chainClass.rawValue], count > 0 else { return nil }
                    return "\(count) \(chainClass.title)"
                }
                lines.append("  \(pad(t(host.host), 30)) \(pad(String(host.reports), 8, left: true))  \(classes.joined(separator: ", "))")
            }
        }
        let versions = summary.appVersions.filter { !$0.app.isEmpty || !$0.version.isEmpty }
        if !versions.isEmpty {
            lines.append("")
            lines.append("app versions:")
            for version in versions.prefix(20) {
                lines.append("  \(pad(t([version.app, version.version].filter { !$0.isEmpty }.joined(separator: " ")), 40)) \(version.reports)")
            }
        }
        if !chains.isEmpty {
            lines.append("")
            lines.append("chains (most reported first):")
            for chain in chains {
                let verdict = chain.classification
                lines.append("  [\(verdict.chainClass.title)] \(chain.reports) reports, \(HTMLText.time(chain.firstSeen)) to \(HTMLText.time(chain.lastSeen))")
                lines.append("    root:   \(t(verdict.root))")
                lines.append("    issuer: \(t(verdict.issuer))")
                lines.append("    leaf:   \(t(verdict.leafSubject)) (\(verdict.leafPin))")
                lines.append("    hosts:  \(chain.hosts.prefix(5).map(t).joined(separator: ", "))")
                if chain.appVersions != ["-"] { lines.append("    apps:   \(chain.appVersions.prefix(5).map(t).joined(separator: ", "))") }
                lines.append("    why:    \(t(verdict.reason))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        guard text.count < width else { return text }
        let fill = String(repeating: " ", count: width - text.count)
        return left ? fill + text : text + fill
    }
}
