// swift-tools-version: 6.2
// The browser front end (issue 43): its own package, so `swift build` of Berth (the README's
// first command, CI's builds) never compiles the web server. `scripts/build-web` builds it;
// `berth run --web` finds the `berth-web` it makes and hands it its arguments.
import PackageDescription

let package = Package(
    name: "BerthWebUI",
    platforms: [.macOS(.v15)],
    products: [
        // What an embedding application depends on to serve its host's screens to browsers.
        .library(name: "BerthWebUI", targets: ["BerthWebUI"]),
        // `berth` with the web front end plugged in: `berth run --web` and `berth dev --web`.
        .executable(name: "berth-web", targets: ["berth-web"]),
    ],
    dependencies: [
        .package(name: "Berth", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
    ],
    targets: [
        .target(
            name: "BerthWebUI",
            dependencies: [
                .product(name: "BerthRuntime", package: "Berth"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            ],
            resources: [.embedInCode("Page/page.js"), .embedInCode("Page/page.css")]
        ),
        .executableTarget(
            name: "berth-web",
            dependencies: ["BerthWebUI", .product(name: "BerthCLI", package: "Berth")]
        ),
        .testTarget(
            name: "BerthWebUITests",
            dependencies: ["BerthWebUI", .product(name: "BerthRuntime", package: "Berth")]
        ),
    ]
)
