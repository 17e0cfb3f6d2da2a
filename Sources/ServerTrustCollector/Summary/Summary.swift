/// What the dashboard, `/api/summary` and `servertrust reports summary` show: totals, the
/// classes, hosts, app versions and the failures over time.
package struct Summary: Sendable, Codable {
    /// Reports counted per class.
    package struct ClassCount: Sendable, Codable, Hashable {
        package var classification: ChainClass
        package var reports: Int64
        package var chains: Int64
    }

    /// Reports for one host, per class.
    package struct HostCount: Sendable, Codable, Hashable {
        package var host: String
        package var reports: Int64
        package var byClass: [String: Int64]
    }

    /// Reports from one app version.
    package struct AppVersionCount: Sendable, Codable, Hashable {
        package var app: String
        package var version: String
        package var reports: Int64
    }

    /// Reports in one time bucket, for one host and class.
    package struct TimelinePoint: Sendable, Codable, Hashable {
        package var host: String
        package var classification: ChainClass
        /// The bucket's start, seconds since 1970.
        package var start: Int64
        package var reports: Int64
    }

    /// The filter applied.
    package var filter: ReportFilter
    /// When the summary was made.
    package var generatedAt: Int64
    /// Reports received (duplicates counted).
    package var reports: Int64
    /// Stored rows (a row counts a failure's repeats within the deduplication window).
    package var storedRows: Int64
    /// Distinct failing chains.
    package var chains: Int64
    /// Distinct hosts.
    package var hosts: Int64
    /// Distinct `app-vendor-id`s (devices; 0 when reporters send none, as ServerTrust's do).
    package var devices: Int64
    /// First report received, if any.
    package var firstReceived: Int64?
    /// Last report received, if any.
    package var lastReceived: Int64?
    /// Per class, every class listed.
    package var byClass: [ClassCount]
    /// Per host, most reports first.
    package var byHost: [HostCount]
    /// Per app and version, most reports first.
    package var appVersions: [AppVersionCount]
    /// The timeline's bucket size in seconds.
    package var bucketSeconds: Int64
    /// Per host, class and bucket.
    package var timeline: [TimelinePoint]

    /// Reports of one class.
    package func reports(of chainClass: ChainClass) -> Int64 { byClass.first { $0.classification == chainClass }?.reports ?? 0 }
}

/// One distinct failing chain, with its classification and who reported it.
package struct ChainSummary: Sendable, Codable, Hashable {
    /// The chain's fingerprint (``ReceivedReport/chainFingerprint``; for reports of a host the
    /// chain's leaf is not valid for, a digest of it, as ``Collector`` keeps those apart).
    package var fingerprint: String
    /// The verdict.
    package var classification: ChainClassification
    package var firstSeen: Int64
    package var lastSeen: Int64
    /// Reports (duplicates counted).
    package var reports: Int64
    /// Distinct `app-vendor-id`s.
    package var devices: Int64
    /// Hosts that reported it, most reports first.
    package var hosts: [String]
    /// `app version` pairs that reported it, most reports first (`-` for none sent).
    package var appVersions: [String]
    /// The chain, PEM, leaf first.
    package var certificates: String
}
