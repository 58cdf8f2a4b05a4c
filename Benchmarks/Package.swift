// swift-tools-version: 6.1
// Berth's benchmarks: a package of its own so that the benchmark harness and its
// dependencies never enter the runtime's dependency graph. It depends on the root package
// by path and runs with `swift package benchmark` (see Docs/benchmarks.md).
import PackageDescription

let package = Package(
    name: "BerthBenchmarks",
    products: [
        // Preloaded under valgrind only (scripts/bench --instructions): see its source.
        .library(name: "ValgrindSigsuspend", type: .dynamic, targets: ["ValgrindSigsuspend"]),
    ],
    dependencies: [
        .package(name: "Berth", path: ".."),
        .package(path: "../BerthSDK"),
        // Only the MallocInterposer trait: malloc counts without jemalloc, and without the
        // default RuntimeInterposer trait (ARC counters), whose package is not needed here.
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The comparison for scoped resolution (container scope).
        .package(url: "https://github.com/Swinject/Swinject", from: "2.10.0"),
    ],
    targets: [
        // The raw libffi baseline (a prepared cif, called from C).
        .target(name: "RawFFI", path: "Benchmarks/RawFFI", linkerSettings: [.linkedLibrary("ffi")]),
        // Callgrind's instrumentation around the measured loops (scripts/bench --instructions);
        // does nothing without valgrind's headers.
        .target(name: "Callgrind", path: "Benchmarks/Callgrind"),
        .target(name: "ValgrindSigsuspend", path: "Benchmarks/ValgrindSigsuspend"),
        .executableTarget(
            name: "LoaderBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "BerthRuntime", package: "Berth"),
                // The terminal front end's rows (TerminalUIBenchmarks.swift).
                .product(name: "BerthTerminalUI", package: "Berth"),
                .product(name: "CBerth", package: "berthsdk"),
                .product(name: "Swinject", package: "Swinject"),
                .product(name: "Logging", package: "swift-log"),
                "RawFFI",
                "Callgrind",
            ],
            path: "Benchmarks/LoaderBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "package-benchmark"),
            ]
        ),
    ]
)
