// swift-tools-version:6.0
// The README's recipes as an app would write them: a package that depends on ServerTrust by
// path and imports ServerTrustKit (with Foundation and FoundationNetworking for URL and
// URLSession). Tests/ServerTrustHTTPTests/Integration/RecipesTests.swift builds a copy of it,
// with the README's blocks themselves as a second target, and runs every recipe against a
// local nginx.
//
// In your own app the dependency is
//     .package(url: "https://github.com/servertrust/servertrust.git", from: "0.1.0")
// and the product `.product(name: "ServerTrustKit", package: "servertrust")`.
import Foundation
import PackageDescription

// A path dependency's package identity is its folder's name, which is whatever the clone
// was called; read it rather than assume it.
let project = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL

let package = Package(
    name: "Recipes",
    dependencies: [.package(path: project.path)],
    targets: [
        .executableTarget(
            name: "recipes",
            dependencies: [.product(name: "ServerTrustKit", package: project.lastPathComponent)]
        )
    ],
    swiftLanguageModes: [.v6]
)
