import Foundation
import Testing
import BerthTestSupport

/// Docs/first-plugin.md, common-tasks.md and c-plugins.md stay true: every source file they show builds.
///
/// The convention the tutorial follows: a fenced code block whose info string carries
/// `file=PATH` is a complete source file at PATH, for example
/// "```swift file=Sources/Hello/Hello.swift group=hello-world". `group=NAME` puts blocks
/// together in one package (blocks without it form the group `default`); independent
/// samples use different groups. For each group:
///
/// - Swift blocks are written into a SwiftPM package and built with `swift build`. When
///   the group has no `file=Package.swift` block, a Package.swift is generated: one
///   `.dynamic` library product per `Sources/<Target>/` folder, each target depending on
///   BerthSDK from this checkout's BerthSDK/ package. A Package.swift the doc shows is used as written, except
///   that its path dependency is pointed at this checkout's BerthSDK/ (the doc shows the
///   path of the checkout it was written in).
/// - C blocks are compiled together into one shared library with
///   `cc -std=c11 -fPIC -shared -I <checkout>/BerthSDK/Sources/CBerth/include`.
///
/// The group `hello-world` is the tutorial's minimal plugin; it must stay within 25
/// non-blank lines, its entry function included.
@Suite("Docs/first-plugin.md and common-tasks.md: the tutorial's sources build", .serialized, .blocking, .buildsPackages)
struct TutorialTests {
    @Test("the tutorial has a Swift package, the two-plugin app, a C file, the hello world and the common tasks")
    func tutorialHasItsSamples() throws {
        let blocks = try TutorialBlocks.load()
        let groups = Set(blocks.map(\.group))
        #expect(groups.isSuperset(of: ["new", "new-c", "hello-world", "tasks", "app"]), "groups found: \(groups.sorted())")
        #expect(blocks.contains { $0.language == "c" })
        #expect(blocks.contains { $0.path == "Package.swift" })
    }

    @Test("each group of source blocks builds (swift build, or cc for C)", arguments: TutorialBlocks.groupNames)
    func groupBuilds(_ group: String) throws {
        let blocks = try TutorialBlocks.load().filter { $0.group == group }
        try #require(!blocks.isEmpty, "no blocks in group \(group)")
        let workspace = PluginWorkspace()
        let folder = workspace.root + "/" + group
        for block in blocks {
            let target = folder + "/" + block.path
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let contents = block.path == "Package.swift" ? TutorialBlocks.pointedAtCheckout(block.contents) : block.contents
            try contents.write(toFile: target, atomically: true, encoding: .utf8)
        }

        let swiftBlocks = blocks.filter { $0.language == "swift" }
        if !swiftBlocks.isEmpty {
            if !swiftBlocks.contains(where: { $0.path == "Package.swift" }) {
                let package = try TutorialBlocks.generatedPackage(for: swiftBlocks.map(\.path))
                try package.write(toFile: folder + "/Package.swift", atomically: true, encoding: .utf8)
            }
            let (status, log) = try ToolProcess.run("/usr/bin/env", ["swift", "build", "--package-path", folder], in: workspace.root)
            #expect(status == 0, "swift build of group \(group) failed:\n\(log)")
        }

        let cFiles = blocks.filter { $0.language == "c" }.map { folder + "/" + $0.path }
        if !cFiles.isEmpty {
            let include = BuildProducts.packageRoot + "/BerthSDK/Sources/CBerth/include"
            let (status, log) = try ToolProcess.run(
                "/usr/bin/cc", ["-std=c11", "-fPIC", "-shared", "-I", include, "-o", folder + "/lib\(group).so"] + cFiles, in: folder
            )
            #expect(status == 0, "cc of group \(group) failed:\n\(log)")
        }
    }

    @Test("the hello world is at most 25 non-blank lines, the export line included")
    func helloWorldIsShort() throws {
        let blocks = try TutorialBlocks.load().filter { $0.group == "hello-world" && $0.language == "swift" }
        let block = try #require(blocks.first, "no swift block with group=hello-world")
        #expect(blocks.count == 1)
        #expect(block.contents.contains("@_cdecl("), "the hello world includes its entry function")
        let lines = block.contents.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(lines.count <= 25, "the hello world has \(lines.count) non-blank lines")
    }

}

/// A source file shown in the tutorial.
struct TutorialBlock: Sendable {
    var language: String
    var path: String
    var group: String
    var contents: String
}

enum TutorialBlocks {
    /// The pages whose `file=` blocks are built; group names are shared across them.
    static let documentPaths = ["first-plugin.md", "common-tasks.md", "c-plugins.md"].map { BuildProducts.packageRoot + "/Docs/" + $0 }

    /// The group names, for the parameterized test (empty when the doc cannot be read,
    /// which `tutorialHasItsSamples` reports).
    static var groupNames: [String] {
        var names: [String] = []
        for block in (try? load()) ?? [] where !names.contains(block.group) { names.append(block.group) }
        return names
    }

    /// Every fenced block of the tutorial pages whose info string has `file=`.
    static func load() throws -> [TutorialBlock] {
        try documentPaths.flatMap { try load(String(contentsOfFile: $0, encoding: .utf8)) }
    }

    private static func load(_ text: String) -> [TutorialBlock] {
        var blocks: [TutorialBlock] = []
        var current: TutorialBlock?
        var inFence = false
        for line in text.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("```") else {
                current?.contents += line + "\n"
                continue
            }
            if inFence {
                if let block = current { blocks.append(block) }
                current = nil
                inFence = false
                continue
            }
            inFence = true
            let words = trimmed.dropFirst(3).split(separator: " ").map(String.init)
            var attributes: [String: String] = [:]
            for word in words.dropFirst() {
                let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { attributes[parts[0]] = parts[1] }
            }
            if let path = attributes["file"] {
                current = TutorialBlock(language: words.first ?? "", path: path, group: attributes["group"] ?? "default", contents: "")
            }
        }
        return blocks
    }

    /// The SDK package of this checkout, and the identity SwiftPM gives it as a path dependency.
    static var sdkPackage: String { BuildProducts.packageRoot + "/BerthSDK" }
    static let checkoutIdentity = "berthsdk"

    /// A Package.swift for Swift sources at `paths`: a `.dynamic` library per target.
    static func generatedPackage(for paths: [String]) throws -> String {
        var targets: [String] = []
        for path in paths {
            let components = path.split(separator: "/").map(String.init)
            guard components.count >= 3, components[0] == "Sources" else {
                throw TutorialError("\(path): Swift sources without a Package.swift must be at Sources/<Target>/…")
            }
            if !targets.contains(components[1]) { targets.append(components[1]) }
        }
        let products = targets.map { ".library(name: \"\($0)\", type: .dynamic, targets: [\"\($0)\"])" }
        let targetLines = targets.map { ".target(name: \"\($0)\", dependencies: [.product(name: \"BerthSDK\", package: \"\(checkoutIdentity)\")])" }
        return """
            // swift-tools-version: 6.0
            import PackageDescription

            let package = Package(
                name: "Tutorial",
                products: [\(products.joined(separator: ", "))],
                dependencies: [.package(path: "\(sdkPackage)")],
                targets: [\(targetLines.joined(separator: ", "))]
            )

            """
    }

    /// The doc's Package.swift with its path dependency and package identity replaced by
    /// this checkout's.
    static func pointedAtCheckout(_ manifest: String) -> String {
        manifest
            .replacingOccurrences(of: #"\.package\(path: "[^"]*"\)"#, with: ".package(path: \"\(sdkPackage)\")", options: .regularExpression)
            .replacingOccurrences(of: #"package: "[^"]*"\)"#, with: "package: \"\(checkoutIdentity)\")", options: .regularExpression)
    }
}

struct TutorialError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
