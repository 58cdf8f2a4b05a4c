import BerthTestSupport
import Foundation
import Testing

/// The terminal front end reads the host through BerthRuntime's public value API alone
/// (Docs/terminal-ui.md, Docs/embedding.md). Two things keep it so: the compiler, which
/// does not show BerthRuntime's `package` declarations to a target without package access
/// (`packageAccess: false` in Package.swift), and this scan, which fails on an import that
/// would open more than the public API (`@_spi(Engine)`, `@testable`).
@Suite("Terminal UI: only BerthRuntime's public value API")
struct TerminalUIBoundaryTests {
    static let sources = BuildProducts.packageRoot + "/Sources/BerthTerminalUI"

    @Test("no source of BerthTerminalUI imports with an attribute (@_spi, @testable)")
    func plainImportsOnly() throws {
        let files = Self.swiftFiles(in: Self.sources)
        #expect(files.count > 20, "the scan found too few sources to be reading BerthTerminalUI: \(files.count)")
        var found: [String] = []
        for file in files {
            let text = try String(contentsOfFile: Self.sources + "/" + file, encoding: .utf8)
            found += Self.attributedImports(in: text).map { "\(file): \($0)" }
        }
        #expect(found.isEmpty, "imports that open more than the public API:\n\(found.joined(separator: "\n"))")
    }

    @Test("the scan finds an attributed import, however it is spelled, and passes plain ones")
    func scanControl() {
        let sample = """
            public import BerthRuntime
            import Foundation
            @_spi(Engine) import BerthRuntime
            @_spi(Engine)
            public import BerthRuntime
            @testable internal import BerthRuntime
            // @_spi(Engine) import BerthRuntime, in a comment
            """
        #expect(Self.attributedImports(in: sample) == [
            "@_spi(Engine) import BerthRuntime", "@_spi(Engine) public import BerthRuntime", "@testable internal import BerthRuntime",
        ])
    }

    @Test("Package.swift builds BerthTerminalUI without package access, so package declarations stay hidden from it")
    func ownPackageName() throws {
        let manifest = try String(contentsOfFile: BuildProducts.packageRoot + "/Package.swift", encoding: .utf8)
        let target = manifest.components(separatedBy: "\n").first { $0.contains(".target(name: \"BerthTerminalUI\"") }
        let line = try #require(target, "no BerthTerminalUI target in Package.swift")
        #expect(line.contains("packageAccess: false"), "the target has package access: \(line)")
    }

    /// Every import with an attribute before it, on its line or on the lines above, as one line.
    static func attributedImports(in text: String) -> [String] {
        var found: [String] = []
        var attributes: [String] = []
        for line in text.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.hasPrefix("//") else { continue }
            let words = trimmed.split(separator: " ").map(String.init)
            let leading = words.prefix { $0.hasPrefix("@") }
            attributes += leading
            let rest = words.dropFirst(leading.count)
            guard !rest.isEmpty else { continue }
            if rest.contains("import"), !attributes.isEmpty { found.append((attributes + rest).joined(separator: " ")) }
            attributes = []
        }
        return found
    }

    /// The Swift files under `folder`, by their paths relative to it.
    static func swiftFiles(in folder: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder)
        var files: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            if relative.hasSuffix(".swift") { files.append(relative) }
        }
        return files.sorted()
    }
}
