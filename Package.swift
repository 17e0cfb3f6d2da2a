// swift-tools-version:6.0
// ServerTrust: HTTPS server trust for Swift on Linux.
// Dependencies point strictly downward (see DEVELOPERS.md / README "Layout"):
// C layer <- CertificateParsing <- TrustEvaluation <- ServerTrust <- ServerTrustHTTP <- servertrust;
// ServerTrustHTTP <- ServerTrustURLSession (Foundation's URLSession served through HTTPSession).
// ServerTrustLab (test PKI, TLS servers) stands beside them on CertificateParsing and OpenSSL only,
// so test fixtures never come from the code they test.
// ServerTrustCollector (the pin-failure report collector behind `servertrust collect`) sits on
// ServerTrust with libmicrohttpd, SQLite and libpq under it; nothing below imports it. It is not a
// product: an app that depends on ServerTrust never needs those three libraries' headers, and the
// collector's API is the CLI's (`package`), free to change without a release note.
import PackageDescription

let package = Package(
    name: "ServerTrust",
    products: [
        .library(name: "CertificateParsing", targets: ["CertificateParsing"]),
        .library(name: "TrustEvaluation", targets: ["TrustEvaluation"]),
        .library(name: "ServerTrust", targets: ["ServerTrust"]),
        .library(name: "ServerTrustHTTP", targets: ["ServerTrustHTTP"]),
        .library(name: "ServerTrustURLSession", targets: ["ServerTrustURLSession"]),
        // The one import for apps: the modules above, re-exported.
        .library(name: "ServerTrustKit", targets: ["ServerTrustKit"]),
        .library(name: "ServerTrustLab", targets: ["ServerTrustLab"]),
        .executable(name: "servertrust", targets: ["servertrust"]),
    ],
    targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CServerTrustShims", dependencies: ["COpenSSL", "CCurl"]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(name: "CCollectorShims", dependencies: ["CMicroHTTPD", "CSQLite"]),
        .target(name: "CertificateParsing"),
        .target(name: "TrustEvaluation", dependencies: ["CertificateParsing", "COpenSSL", "CServerTrustShims"]),
        .target(name: "ServerTrust", dependencies: ["TrustEvaluation", "CertificateParsing"]),
        .target(
            name: "ServerTrustHTTP",
            dependencies: ["ServerTrust", "TrustEvaluation", "CertificateParsing", "CCurl", "COpenSSL", "CServerTrustShims"]
        ),
        .target(name: "ServerTrustURLSession", dependencies: ["ServerTrustHTTP", "ServerTrust"]),
        .target(
            name: "ServerTrustKit",
            dependencies: ["ServerTrustURLSession", "ServerTrustHTTP", "ServerTrust", "TrustEvaluation", "CertificateParsing"]
        ),
        .target(name: "ServerTrustLab", dependencies: ["COpenSSL", "CServerTrustShims"]),
        .target(
            name: "ServerTrustCollector",
            dependencies: ["ServerTrust", "TrustEvaluation", "CertificateParsing", "CMicroHTTPD", "CSQLite", "CLibPQ", "CCollectorShims"]
        ),
        .executableTarget(
            name: "servertrust",
            dependencies: [
                "ServerTrustHTTP", "ServerTrust", "TrustEvaluation", "CertificateParsing", "ServerTrustLab", "CServerTrustShims",
                "ServerTrustCollector",
            ]
        ),
        .testTarget(name: "CertificateParsingTests", dependencies: ["CertificateParsing", "ServerTrustLab"]),
        .testTarget(name: "TrustEvaluationTests", dependencies: ["TrustEvaluation", "CertificateParsing", "ServerTrustLab"]),
        .testTarget(name: "ServerTrustLabTests", dependencies: ["ServerTrustLab"]),
        .testTarget(name: "CLITests", dependencies: ["CertificateParsing", "ServerTrustLab"]),
        .testTarget(name: "ServerTrustTests", dependencies: ["ServerTrust", "TrustEvaluation", "CertificateParsing", "ServerTrustLab"]),
        .testTarget(
            name: "ServerTrustHTTPTests",
            dependencies: [
                "ServerTrustHTTP", "ServerTrustURLSession", "ServerTrust", "TrustEvaluation", "CertificateParsing", "ServerTrustLab",
                "ServerTrustCollector",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// Upcoming features for every Swift target (swift-certificates' "standard settings").
for target in package.targets where target.type != .system && target.type != .plugin {
    guard !["CServerTrustShims", "CCollectorShims"].contains(target.name) else { continue }
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
