// swift-tools-version: 6.0
// Berth: a plugin-hosting runtime for Swift on Linux. This package holds the runtime, the
// CLI, the example plugins and the tests; the plugin SDK and the C header are the package
// in BerthSDK/ (what a plugin depends on); Benchmarks/ is its own package.
import PackageDescription

let package = Package(
    name: "Berth",
    products: [
        // What an embedding host depends on.
        .library(name: "BerthRuntime", targets: ["BerthRuntime"]),
        // The full-screen terminal front end, over BerthRuntime's public API (embeddable).
        .library(name: "BerthTerminalUI", targets: ["BerthTerminalUI"]),
        .executable(name: "berth", targets: ["berth"]),
        // The CLI's commands, for `berth-web` (WebUI/), which is the same CLI with the web
        // front end plugged in: the `berth` binary itself never links the web server.
        .library(name: "BerthCLI", targets: ["BerthCLI"]),
        // The process an isolated plugin runs in (spawned by the host, one per generation).
        .executable(name: "berth-worker", targets: ["berth-worker"]),
        // Example plugins: each one a shared library the host finds with dlopen.
        .library(name: "Counter", type: .dynamic, targets: ["Counter"]),
        .library(name: "Greeter", type: .dynamic, targets: ["Greeter"]),
        .library(name: "Inbox", type: .dynamic, targets: ["Inbox"]),
        .library(name: "UserPicker", type: .dynamic, targets: ["UserPicker"]),
        .library(name: "Profile", type: .dynamic, targets: ["Profile"]),
        // Test fixture: a C library with deliberately odd entry points and typed exports.
        .library(name: "BerthFixtures", type: .dynamic, targets: ["BerthFixtures"]),
        // Test fixture: a C plugin that crashes or hangs on purpose (isolation tests).
        .library(name: "BerthCrasher", type: .dynamic, targets: ["BerthCrasher"]),
        // Test fixture: a C plugin that tries host services, files and sockets (capabilities, sandbox).
        .library(name: "BerthProbe", type: .dynamic, targets: ["BerthProbe"]),
        // Test fixture: a hostile C plugin that tries every way out of a worker's sandbox.
        .library(name: "BerthAttacker", type: .dynamic, targets: ["BerthAttacker"]),
        // Test fixture: a C plugin that floods the host with state, log lines and a sibling's handle.
        .library(name: "BerthFlooder", type: .dynamic, targets: ["BerthFlooder"]),
        // Test and benchmark fixture: a screen of many stateful views.
        .library(name: "BerthStress", type: .dynamic, targets: ["BerthStress"]),
        // Test fixtures: a Swift provider and a Swift consumer of the contracts in ReminderContract.
        .library(name: "BerthReminders", type: .dynamic, targets: ["BerthReminders"]),
        .library(name: "BerthHabits", type: .dynamic, targets: ["BerthHabits"]),
    ],
    dependencies: [
        .package(path: "BerthSDK"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // `berth run`'s host and front end as a ServiceGroup (the CLI only).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(name: "CBerthSystem"),
        // Only berth-worker links this: it defines open(2) for the whole process.
        .target(name: "CBerthWorkerProc"),
        .systemLibrary(name: "CFFI", pkgConfig: "libffi", providers: [.apt(["libffi-dev"])]),
        // The REPL's line editor: libedit's readline-compatible interface, bound at run time
        // (dlopen of the image's libedit.so.2), so the build needs no libedit header.
        .target(name: "CBerthEditLine", linkerSettings: [.linkedLibrary("dl")]),
        // The wire format and the plugin-calling core: what the host and a worker share.
        // No host code: a worker links it without BerthRuntime.
        .target(
            name: "BerthCore",
            dependencies: [.product(name: "CBerth", package: "berthsdk"), "CBerthSystem", "CFFI"]
        ),
        // The worker's side of the seam (Worker/ before): only berth-worker links it.
        .target(
            name: "BerthWorker",
            dependencies: ["BerthCore", .product(name: "CBerth", package: "berthsdk"), "CBerthSystem"]
        ),
        // The host, above BerthCore (which it re-exports: its public values are BerthRuntime's).
        .target(
            name: "BerthRuntime",
            dependencies: [
                "BerthCore",
                .product(name: "CBerth", package: "berthsdk"),
                "CBerthSystem",
                "CFFI",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The terminal front end sees BerthRuntime as an application does: its public value
        // API alone. Without package access, BerthRuntime's `package` declarations are hidden
        // from it; TerminalUIBoundaryTests fails on an `@_spi` or `@testable` import there.
        .target(name: "BerthTerminalUI", dependencies: ["BerthRuntime"], packageAccess: false),
        .target(
            name: "BerthCLI",
            dependencies: [
                "BerthRuntime",
                "BerthTerminalUI",
                "CBerthSystem",
                "CBerthEditLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(name: "berth", dependencies: ["BerthCLI"]),
        .executableTarget(
            name: "berth-worker", dependencies: ["BerthWorker", "CBerthSystem", "CBerthWorkerProc"],
            linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=open"])]
        ),

        // Plugins/ needs explicit paths: SwiftPM otherwise reserves it for package plugins.
        .target(name: "Counter", dependencies: [.product(name: "BerthSDK", package: "berthsdk")], path: "Plugins/Counter"),
        .target(name: "GreeterService", path: "Plugins/GreeterService"),
        .target(name: "Greeter", dependencies: [.product(name: "CBerth", package: "berthsdk"), "GreeterService"], path: "Plugins/Greeter"),
        .target(name: "Inbox", dependencies: [.product(name: "BerthSDK", package: "berthsdk")], path: "Plugins/Inbox"),
        .target(name: "UserPicker", dependencies: [.product(name: "BerthSDK", package: "berthsdk")], path: "Plugins/UserPicker"),
        .target(name: "Profile", dependencies: [.product(name: "BerthSDK", package: "berthsdk"), "GreeterService"], path: "Plugins/Profile"),
        .target(name: "BerthFixtures", dependencies: [.product(name: "CBerth", package: "berthsdk")], path: "Tests/Fixtures/BerthFixtures"),
        .target(name: "BerthStress", dependencies: [.product(name: "BerthSDK", package: "berthsdk")], path: "Tests/Fixtures/BerthStress"),
        .target(name: "BerthCrasher", dependencies: [.product(name: "CBerth", package: "berthsdk")], path: "Tests/Fixtures/BerthCrasher"),
        .target(name: "BerthProbe", dependencies: [.product(name: "CBerth", package: "berthsdk")], path: "Tests/Fixtures/BerthProbe"),
        .target(name: "BerthAttacker", dependencies: [.product(name: "CBerth", package: "berthsdk")], path: "Tests/Fixtures/BerthAttacker"),
        .target(name: "BerthFlooder", dependencies: [.product(name: "CBerth", package: "berthsdk")], path: "Tests/Fixtures/BerthFlooder"),
        .target(name: "ReminderContract", dependencies: [.product(name: "BerthSDK", package: "berthsdk")], path: "Tests/Fixtures/ReminderContract"),
        .target(name: "BerthReminders", dependencies: [.product(name: "BerthSDK", package: "berthsdk"), "ReminderContract"], path: "Tests/Fixtures/BerthReminders"),
        .target(name: "BerthHabits", dependencies: [.product(name: "BerthSDK", package: "berthsdk"), "ReminderContract"], path: "Tests/Fixtures/BerthHabits"),

        // Tests find the built plugin libraries beside the test bundle; none links a plugin.
        .target(
            name: "BerthTestSupport",
            dependencies: ["BerthRuntime", "CBerthSystem", .product(name: "Logging", package: "swift-log")],
            path: "Tests/BerthTestSupport"
        ),
        .testTarget(name: "BerthRuntimeTests", dependencies: ["BerthRuntime", "BerthWorker", "BerthTestSupport", .product(name: "CBerth", package: "berthsdk")]),
        .testTarget(name: "BerthTerminalUITests", dependencies: ["BerthRuntime", "BerthTerminalUI", "BerthTestSupport"], exclude: ["Frames"]),
        .testTarget(name: "BerthCLITests", dependencies: ["BerthRuntime", "BerthCLI", "BerthTestSupport"], exclude: ["Expected"]),
    ]
)

// The documentation plugin, only when asked for (`BERTH_DOCC=1 swift package
// generate-documentation --target BerthRuntime`): builds and tests resolve no extra package.
if Context.environment["BERTH_DOCC"] != nil {
    package.dependencies.append(
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0")
    )
}
