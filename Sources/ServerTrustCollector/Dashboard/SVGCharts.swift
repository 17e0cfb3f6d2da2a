/// The dashboard's charts as inline SVG, drawn on the server: no script, no font or image
/// fetched, so the page works offline and under a `default-src 'none'` policy.
///
/// Every mark carries its number twice: as `data-count` (what a test or a scraper reads) and
/// in a `<title>` (what a person hovering sees). Labels that come from reports are escaped.
enum SVGCharts {
    static func color(_ chainClass: ChainClass) -> String {
        switch chainClass {
        case .rotation: return "#2b6cb0"
        case .unexpectedCA: return "#c27c0e"
        case .interception: return "#c53030"
        case .invalid: return "#718096"
        }
    }

    static func number(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    /// One horizontal bar split by class: the share of each.
    static func classBar(_ summary: Summary) -> String {
        let width = 720.0
        let total = Double(max(1, summary.reports))
        var svg =
            #"<svg id="classes" class="chart" viewBox="0 0 720 28" width="720" height="28" role="img" aria-label="reports by class" data-total="\#(summary.reports)">"#
        var x = 0.0
        for count in summary.byClass {
            let share = Double(count.reports) / total * width
            svg +=
                #"<rect x="\#(number(x))" y="0" width="\#(number(share))" height="28" fill="\#(color(count.classification))" data-class="\#(count.classification.rawValue)" data-count="\#(count.reports)"><title>\#(count.reports) reports: \#(count.classification.title)</title></rect>"#
            x += share
        }
        if summary.reports == 0 { svg += #"<rect x="0" y="0" width="720" height="28" fill="rgb(237,242,247)"/>"# }
        return svg + "</svg>"
    }

    /// Failures over time for one host: a bar per bucket, stacked by class.
    static func timeline(host: String, points: [Summary.TimelinePoint], summary: Summary, id: String) -> String {
        let width = 720.0
        let height = 150.0
        let left = 40.0
        let bottom = 20.0
        let bucket = summary.bucketSeconds
        guard let first = summary.timeline.map(\.start).min(), let last = summary.timeline.map(\.start).max() else { return "" }
        let count = Int((last - first) / bucket) + 1
        var stacks: [Int64: [ChainClass: Int64]] = [:]
        for point in points { stacks[point.start, default: [:]][point.classification, default: 0] += point.reports }
        let peak = Double(max(1, stacks.values.map { $0.values.reduce(0, +) }.max() ?? 1))
        let slot = (width - left) / Double(count)
        let barWidth = min(48, max(1, slot * 0.8))
        let total = points.reduce(0) { $0 + $1.reports }
        var svg =
            #"<svg id="\#(id)" class="chart" viewBox="0 0 720 150" width="720" height="150" role="img" aria-label="failures over time for \#(HTMLText.escape(host))" data-host="\#(HTMLText.escape(host))" data-total="\#(total)">"#
        svg += #"<line x1="\#(number(left))" y1="\#(number(height - bottom))" x2="720" y2="\#(number(height - bottom))" stroke="rgb(160,174,192)"/>"#
        svg += #"<text x="\#(number(left - 4))" y="12" text-anchor="end" class="axis">\#(Int(peak))</text>"#
        svg += #"<text x="\#(number(left - 4))" y="\#(number(height - bottom))" text-anchor="end" class="axis">0</text>"#
        svg += #"<text x="\#(number(left))" y="\#(number(height - 4))" class="axis">\#(HTMLText.time(first))</text>"#
        if count > 1 { svg += #"<text x="720" y="\#(number(height - 4))" text-anchor="end" class="axis">\#(HTMLText.time(last))</text>"# }
        for (start, classes) in stacks.sorted(by: { $0.key < $1.key }) {
            let index = Double((start - first) / bucket)
            var y = height - bottom
            for chainClass in ChainClass.allCases {
                guard let reports = classes[chainClass], reports > 0 else { continue }
                let barHeight = Double(reports) / peak * (height - bottom - 8)
                y -= barHeight
                svg +=
                    #"<rect x="\#(number(left + index * slot + (slot - barWidth) / 2))" y="\#(number(y))" width="\#(number(barWidth))" height="\#(number(barHeight))" fill="\#(color(chainClass))" data-class="\#(chainClass.rawValue)" data-start="\#(start)" data-count="\#(reports)"><title>\#(reports) \#(chainClass.title) at \#(HTMLText.time(start))</title></rect>"#
            }
        }
        return svg + "</svg>"
    }

    /// Horizontal bars with a label each: the top failing chains, the app versions.
    static func bars(id: String, rows: [(label: String, count: Int64, color: String, attributes: String)]) -> String {
        let rowHeight = 24.0
        let labelWidth = 300.0
        let width = 720.0
        let peak = Double(max(1, rows.map(\.count).max() ?? 1))
        let height = max(rowHeight, Double(rows.count) * rowHeight)
        var svg =
            #"<svg id="\#(id)" class="chart" viewBox="0 0 720 \#(number(height))" width="720" height="\#(number(height))" role="img" aria-label="\#(id)">"#
        for (index, row) in rows.enumerated() {
            let y = Double(index) * rowHeight
            let length = max(2, Double(row.count) / peak * (width - labelWidth - 60))
            let label = row.label.count > 46 ? String(row.label.prefix(45)) + "…" : row.label
            svg += #"<g class="bar" data-count="\#(row.count)"\#(row.attributes)><title>\#(HTMLText.escape(row.label)): \#(row.count)</title>"#
            svg += #"<text x="\#(number(labelWidth - 6))" y="\#(number(y + 16))" text-anchor="end" class="label">\#(HTMLText.escape(label))</text>"#
            svg += #"<rect x="\#(number(labelWidth))" y="\#(number(y + 4))" width="\#(number(length))" height="16" fill="\#(row.color)"/>"#
            svg += #"<text x="\#(number(labelWidth + length + 6))" y="\#(number(y + 16))" class="value">\#(row.count)</text></g>"#
        }
        return svg + "</svg>"
    }
}
