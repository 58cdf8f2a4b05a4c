// swift-tools-version: 6.0
// An application that embeds the Berth runtime and its terminal front end: it opens a
// plugins folder, loads what it finds, and shows the first screen full-screen.
import PackageDescription

let package = Package(
    name: "EmbeddingApp",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The Berth package, two folders up (a real application names its git URL).
        .package(name: "Berth", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "EmbeddingApp",
            dependencies: [
                .product(name: "BerthRuntime", package: "Berth"),
                .product(name: "BerthTerminalUI", package: "Berth"),
            ]
        ),
    ]
)
