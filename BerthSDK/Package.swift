// swift-tools-version: 6.0
// What a Berth plugin depends on, and nothing else: the Swift SDK and the C header. A
// package of its own, so a plugin resolves no dependency of the runtime or the CLI; the
// root package depends on it by path. Referenced by path, its package identity is its
// folder's name, `berthsdk`, wherever the checkout is.
import PackageDescription

let package = Package(
    name: "BerthSDK",
    products: [
        // The Swift SDK: `Screen`, views, state, services, navigation.
        .library(name: "BerthSDK", targets: ["BerthSDK"]),
        // The bare C ABI (berth.h), for C plugins and for hosts.
        .library(name: "CBerth", targets: ["CBerth"]),
        // The test kit: a plugin package's test target depends on it (Docs/testing-plugins.md).
        // It drives the plugin through the `berth` executable, so it compiles no runtime.
        .library(name: "BerthTesting", targets: ["BerthTesting"]),
    ],
    targets: [
        .target(name: "CBerth"),
        .target(name: "BerthSDK", dependencies: ["CBerth"]),
        .target(name: "BerthTesting"),
    ]
)

// The documentation plugin, only when asked for (`BERTH_DOCC=1 swift package
// generate-documentation --target BerthSDK`). Plugins depend on this package, and a plugin
// must resolve no remote package, so it is not a dependency by default.
if Context.environment["BERTH_DOCC"] != nil {
    package.dependencies.append(
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0")
    )
}
