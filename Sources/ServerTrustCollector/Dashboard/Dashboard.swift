import CertificateParsing

/// `GET /`: the page an operator opens. Server-rendered HTML with inline CSS and inline SVG
/// charts, nothing fetched (the favicon is a `data:` URL, so the browser does not ask for
/// one), served under a Content-Security-Policy that forbids scripts and any other origin.
package enum Dashboard {
    /// The Content-Security-Policy the page is served with: no script at all, no fetch, no
    /// frame; inline styles and `data:` images only.
    package static let contentSecurityPolicy =
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    /// The page for `summary` and `chains`; `token`, when the request carried one in its
    /// query, is carried into the filter form so filtering keeps working.
    package static func render(summary: Summary, chains: [ChainSummary], hosts: [String], token: String?) -> String {
        let e = HTMLText.escape
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>ServerTrust · pin-failure reports</title><link rel="icon" href="data:,">
            <style>
            body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f7fafc;color:#1a202c}
            header{background:#1a202c;color:#f7fafc;padding:16px 28px}header h1{margin:0;font-size:22px}header p{margin:4px 0 0;color:#cbd5e0;font-size:13px}
            main{padding:20px 28px;max-width:1180px}section{background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:16px 20px;margin:0 0 18px;overflow-x:auto}td.when{white-space:nowrap}
            h2{font-size:17px;margin:0 0 12px}h3{font-size:14px;margin:14px 0 6px}.cards{display:flex;flex-wrap:wrap;gap:12px}
            .card{flex:1 1 130px;border:1px solid #e2e8f0;border-radius:6px;padding:10px 12px}.card b{display:block;font-size:24px}.card span{font-size:12px;color:#4a5568}
            .swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}.legend span{margin-right:16px;font-size:13px}
            table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;vertical-align:top;padding:6px 8px;border-bottom:1px solid #edf2f7}
            th{color:#4a5568;font-weight:600}td.num{text-align:right}.reason{color:#2d3748;max-width:420px}.mono{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
            .chart text{font-size:11px;fill:#2d3748}.chart .axis{fill:#718096}.empty{color:#718096}
            form{display:flex;flex-wrap:wrap;gap:10px;align-items:end;font-size:13px}form label{display:flex;flex-direction:column;gap:3px}
            input,select{font:inherit;padding:4px 6px;border:1px solid #cbd5e0;border-radius:4px}button{font:inherit;padding:5px 12px}
            .tag{display:inline-block;padding:1px 7px;border-radius:10px;color:#fff;font-size:12px;white-space:nowrap}
            </style></head><body>
            <header><h1>Pin-failure reports</h1><p>\(e(caption(summary)))</p></header><main>

            """
        html += filterForm(summary.filter, hosts: hosts, token: token)
        html += overview(summary)
        html += timelines(summary)
        html += topChains(chains)
        html += appVersions(summary)
        html += chainTable(chains)
        html += "</main></body></html>\n"
        return html
    }

    static func caption(_ summary: Summary) -> String {
        var text = "\(summary.reports) reports of \(summary.chains) distinct chains from \(summary.hosts) hosts"
        if let first = summary.firstReceived, let last = summary.lastReceived { text += ", \(HTMLText.time(first)) to \(HTMLText.time(last))" }
        return text + " · generated \(HTMLText.time(summary.generatedAt))"
    }

    static func tag(_ chainClass: ChainClass) -> String {
        #"<span class="tag" style="background:\#(SVGCharts.color(chainClass))">\#(chainClass.title)</span>"#
    }

    static func filterForm(_ filter: ReportFilter, hosts: [String], token: String?) -> String {
        let e = HTMLText.escape
        var html = #"<section><form method="get" action="/"><label>host<select name="host"><option value="">all hosts</option>"#
        for host in hosts { html += #"<option value="\#(e(host))"\#(host == filter.host ? " selected" : "")>\#(e(host))</option>"# }
        html += #"</select></label><label>app bundle<input name="app" value="\#(e(filter.app ?? ""))" placeholder="any"></label>"#
        html +=
            #"<label>since (RFC 3339)<input name="since" value="\#(filter.since.map { e(ASN1TimeFormat.rfc3339($0)) } ?? "")" placeholder="2026-01-01T00:00:00Z"></label>"#
        html += #"<label>until<input name="until" value="\#(filter.until.map { e(ASN1TimeFormat.rfc3339($0)) } ?? "")"></label>"#
        if let token { html += #"<input type="hidden" name="token" value="\#(e(token))">"# }
        return html + "<button type=\"submit\">filter</button></form></section>\n"
    }

    static func overview(_ summary: Summary) -> String {
        var html = "<section><h2>Overview</h2><div class=\"cards\">"
        html += #"<div class="card" id="total-reports" data-count="\#(summary.reports)"><b>\#(summary.reports)</b><span>reports</span></div>"#
        html += #"<div class="card"><b>\#(summary.chains)</b><span>distinct chains</span></div>"#
        html += #"<div class="card"><b>\#(summary.hosts)</b><span>hosts</span></div>"#
        html += #"<div class="card"><b>\#(summary.devices > 0 ? String(summary.devices) : "–")</b><span>devices (app-vendor-id)</span></div>"#
        for count in summary.byClass {
            html +=
                #"<div class="card" data-class="\#(count.classification.rawValue)" data-count="\#(count.reports)"><b style="color:\#(SVGCharts.color(count.classification))">\#(count.reports)</b><span>\#(count.classification.title) · \#(count.chains) chains</span></div>"#
        }
        html += "</div><h3>Reports by class</h3>" + SVGCharts.classBar(summary) + legend() + "</section>\n"
        return html
    }

    static func legend() -> String {
        var html = "<p class=\"legend\">"
        for chainClass in ChainClass.allCases {
            html += #"<span><i class="swatch" style="background:\#(SVGCharts.color(chainClass))"></i>\#(chainClass.title)</span>"#
        }
        return html + "</p>"
    }

    static func timelines(_ summary: Summary) -> String {
        var html = "<section><h2>Failures over time, per host, stacked by class</h2>"
        guard !summary.timeline.isEmpty else { return html + "<p class=\"empty\">No reports yet.</p></section>\n" }
        let bucket = summary.bucketSeconds == 86_400 ? "day" : summary.bucketSeconds == 3600 ? "hour" : "\(summary.bucketSeconds / 60) minutes"
        html += "<p class=\"empty\">One bar per \(bucket).</p>"
        for (index, host) in summary.byHost.prefix(8).enumerated() {
            html += "<h3>\(HTMLText.escape(host.host)) · \(host.reports) reports</h3>"
            html += SVGCharts.timeline(
                host: host.host, points: summary.timeline.filter { $0.host == host.host }, summary: summary, id: "timeline-\(index)")
        }
        if summary.byHost.count > 8 { html += "<p class=\"empty\">\(summary.byHost.count - 8) more hosts: filter by host to see them.</p>" }
        return html + legend() + "</section>\n"
    }

    static func topChains(_ chains: [ChainSummary]) -> String {
        let html = "<section><h2>Top failing chains</h2>"
        guard !chains.isEmpty else { return html + "<p class=\"empty\">No reports yet.</p></section>\n" }
        let rows = chains.prefix(10).map { chain in
            (
                label: "\(chain.classification.issuer) → \(chain.classification.leafSubject)", count: chain.reports,
                color: SVGCharts.color(chain.classification.chainClass),
                attributes: #" data-class="\#(chain.classification.chainClass.rawValue)" data-fingerprint="\#(HTMLText.escape(chain.fingerprint))""#
            )
        }
        return html + SVGCharts.bars(id: "top-chains", rows: Array(rows)) + legend() + "</section>\n"
    }

    static func appVersions(_ summary: Summary) -> String {
        var html = "<section><h2>App versions</h2>"
        let known = summary.appVersions.filter { !$0.app.isEmpty || !$0.version.isEmpty }
        guard !known.isEmpty else {
            return html + "<p class=\"empty\">No report names its app (ServerTrust's reports carry no app fields; TrustKit's do).</p></section>\n"
        }
        let rows = known.prefix(12).map { version in
            (
                label: [version.app, version.version].filter { !$0.isEmpty }.joined(separator: " "), count: version.reports, color: "#4a5568",
                attributes: #" data-app="\#(HTMLText.escape(version.app))" data-version="\#(HTMLText.escape(version.version))""#
            )
        }
        html += SVGCharts.bars(id: "app-versions", rows: Array(rows))
        return html + "</section>\n"
    }

    static func chainTable(_ chains: [ChainSummary]) -> String {
        let e = HTMLText.escape
        var html = "<section><h2>Chains</h2>"
        guard !chains.isEmpty else { return html + "<p class=\"empty\">No reports yet.</p></section>\n" }
        html += "<table id=\"chains\"><thead><tr><th>class</th><th>why</th><th>root · issuer · leaf</th><th>hosts</th><th>app versions</th>"
        html += "<th>first · last seen</th><th>reports</th><th>devices</th></tr></thead><tbody>"
        for chain in chains {
            let verdict = chain.classification
            html += #"<tr data-fingerprint="\#(e(chain.fingerprint))" data-class="\#(verdict.chainClass.rawValue)" data-count="\#(chain.reports)">"#
            html += "<td>\(tag(verdict.chainClass))</td><td class=\"reason\">\(e(verdict.reason))</td>"
            html += "<td><div>root: \(e(verdict.root))</div><div>issuer: \(e(verdict.issuer))</div><div>leaf: \(e(verdict.leafSubject))</div>"
            html += "<div class=\"mono\">\(e(verdict.leafPin))</div></td>"
            html += "<td>\(chain.hosts.prefix(5).map(e).joined(separator: "<br>"))\(chain.hosts.count > 5 ? "<br>…" : "")</td>"
            html += "<td>\(chain.appVersions.prefix(5).map(e).joined(separator: "<br>"))\(chain.appVersions.count > 5 ? "<br>…" : "")</td>"
            html += "<td class=\"when\">\(HTMLText.time(chain.firstSeen))<br>\(HTMLText.time(chain.lastSeen))</td>"
            html += "<td class=\"num\">\(chain.reports)</td><td class=\"num\">\(chain.devices > 0 ? String(chain.devices) : "–")</td></tr>"
        }
        return html + "</tbody></table></section>\n"
    }
}

/// RFC 3339 text of an instant.
enum ASN1TimeFormat {
    static func rfc3339(_ seconds: Int64) -> String { ASN1Time(secondsSince1970: seconds).rfc3339 }
}
