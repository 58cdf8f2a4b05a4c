import Foundation
import Testing
import BerthTestSupport

/// Every public declaration of BerthRuntime carries a `///` comment, so the DocC reference
/// (`BERTH_DOCC=1 swift package generate-documentation --target BerthRuntime`) has no
/// undocumented symbol. A source scan: a `public` line counts when every type it is nested
/// in is public too (a `public` member of a `package` type is not part of the API), and so
/// does a `case` line of such a public enum.
@Suite("BerthRuntime's public API is documented")
struct PublicDocumentationTests {
    @Test("every public declaration of BerthRuntime has a /// comment")
    func everyPublicDeclarationIsDocumented() throws {
        // BerthCore's public values are BerthRuntime's (it re-exports them).
        let scan = try PublicDeclarationScan(folders: ["BerthRuntime", "BerthCore"].map { BuildProducts.packageRoot + "/Sources/" + $0 })
        #expect(scan.declarations.count > 100, "the scan found too few public declarations to be reading the sources")
        let undocumented = scan.declarations.filter { !$0.documented }
        #expect(undocumented.isEmpty, "public without a /// comment:\n\(undocumented.map(\.location).joined(separator: "\n"))")
    }

    @Test("the scan tells documented, undocumented and non-public declarations apart")
    func scanControl() {
        let source = """
            /// A type.
            public struct Shown {
                /// Documented.
                public var documented: Int
                @MainActor
                public func undocumented() {}
                /// Documented.
                @exclusivity(unchecked) public var attributed = 0
                public var afterAnAttributedLine: Bool { true }
            }
            package struct Hidden {
                public var notAPI: Int
            }
            extension Hidden {
                public func alsoNotAPI() {}
            }
            extension Shown {
                public func undocumentedToo() {}
            }
            /// Kinds.
            public enum Kind {
                /// Documented.
                case one, two
                case three
                func name() -> String {
                    switch self {
                    case .one, .two, .three: "a switch case is no declaration"
                    }
                }
            }
            """
        let scan = PublicDeclarationScan(files: ["Sample.swift": source])
        #expect(scan.declarations.map(\.location) == [
            "Sample.swift:2: public struct Shown {", "Sample.swift:4: public var documented: Int",
            "Sample.swift:6: public func undocumented() {}", "Sample.swift:8: @exclusivity(unchecked) public var attributed = 0",
            "Sample.swift:9: public var afterAnAttributedLine: Bool { true }", "Sample.swift:18: public func undocumentedToo() {}",
            "Sample.swift:21: public enum Kind {", "Sample.swift:23: case one, two", "Sample.swift:24: case three",
        ])
        #expect(scan.declarations.map(\.documented) == [true, true, false, true, false, false, true, true, false])
    }
}

/// The public declarations of a folder of Swift sources, found by their `public` keyword and
/// their nesting (indentation), each with whether a `///` line precedes it.
struct PublicDeclarationScan {
    struct Declaration {
        var location: String
        var documented: Bool
    }

    private(set) var declarations: [Declaration] = []

    init(folders: [String]) throws {
        var files: [String: String] = [:]
        for folder in folders {
            let enumerator = FileManager.default.enumerator(atPath: folder)
            while let relative = enumerator?.nextObject() as? String {
                guard relative.hasSuffix(".swift") else { continue }
                files[(folder as NSString).lastPathComponent + "/" + relative] = try String(contentsOfFile: folder + "/" + relative, encoding: .utf8)
            }
        }
        self.init(files: files)
    }

    init(files: [String: String]) {
        let sources = files.mapValues { $0.components(separatedBy: "\n") }
        // Whether each type name is declared public anywhere (extensions name types by name).
        var publicTypes: Set<String> = []
        for lines in sources.values {
            for line in lines {
                if let (name, isPublic) = Self.typeDeclaration(line), isPublic { publicTypes.insert(name) }
            }
        }
        for (file, lines) in sources.sorted(by: { $0.key < $1.key }) {
            for (index, line) in lines.enumerated() {
                if Self.isPublicDeclaration(line) {
                    guard Self.enclosingScopesArePublic(lines, index, publicTypes) else { continue }
                } else if Self.isCaseDeclaration(line) {
                    guard let enclosing = Self.enclosingLine(lines, index), Self.typeDeclaration(lines[enclosing])?.1 == true,
                          Self.significantWords(lines[enclosing]).contains("enum"),
                          Self.enclosingScopesArePublic(lines, enclosing, publicTypes) else { continue }
                } else {
                    continue
                }
                declarations.append(Declaration(
                    location: "\(file):\(index + 1): \(line.trimmingCharacters(in: .whitespaces))",
                    documented: Self.precededByDocComment(lines, index)
                ))
            }
        }
    }

    private static let modifiers: Set<String> = [
        "final", "static", "class", "override", "nonisolated", "convenience", "required", "indirect", "mutating", "lazy",
    ]

    /// A line that declares something `public` (not an import or an extension).
    private static func isPublicDeclaration(_ line: String) -> Bool {
        let words = significantWords(line)
        guard let index = words.firstIndex(of: "public"), words[..<index].allSatisfy(modifiers.contains) else { return false }
        let next = words.dropFirst(index + 1).first
        return next != "import" && next != "extension"
    }

    /// The words of a line without its attributes (`@MainActor`, `@inlinable`).
    /// A line that declares enum cases (`case a, b`), not a `switch` case (`case .a:`).
    private static func isCaseDeclaration(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        return trimmed.hasPrefix("case ") && trimmed.dropFirst(5).first.map { $0.isLetter || $0 == "_" } == true
    }

    /// The index of the nearest line above `index` that is indented less: what it is nested in.
    private static func enclosingLine(_ lines: [String], _ index: Int) -> Int? {
        let depth = indentation(lines[index])
        return lines[..<index].lastIndex { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return !trimmed.isEmpty && !trimmed.hasPrefix("//") && !trimmed.hasPrefix("#") && indentation(line) < depth
        }
    }

    private static func significantWords(_ line: String) -> [String] {
        line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init).filter { !$0.hasPrefix("@") }
    }

    private static let typeKeywords: Set<String> = ["struct", "class", "enum", "actor", "protocol"]

    /// The name of the type a line declares, and whether it is public.
    private static func typeDeclaration(_ line: String) -> (String, Bool)? {
        let words = significantWords(line)
        guard let keyword = words.firstIndex(where: typeKeywords.contains), keyword + 1 < words.count,
              words[..<keyword].allSatisfy({ modifiers.contains($0) || accessWords.contains($0) }) else { return nil }
        let name = words[keyword + 1].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        guard !name.isEmpty else { return nil }
        return (String(name), words[..<keyword].contains("public"))
    }

    private static let accessWords: Set<String> = ["public", "package", "internal", "fileprivate", "private"]

    private static func indentation(_ line: String) -> Int { line.prefix { $0 == " " }.count }

    /// Whether every type or extension the line at `index` is nested in is public.
    private static func enclosingScopesArePublic(_ lines: [String], _ index: Int, _ publicTypes: Set<String>) -> Bool {
        var depth = indentation(lines[index])
        var cursor = index - 1
        while depth > 0 && cursor >= 0 {
            let line = lines[cursor]
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            defer { cursor -= 1 }
            guard !trimmed.isEmpty, !trimmed.hasPrefix("//"), !trimmed.hasPrefix("#"), indentation(line) < depth else { continue }
            depth = indentation(line)
            let words = significantWords(line)
            if let extended = words.firstIndex(of: "extension"), extended + 1 < words.count {
                let name = words[extended + 1].split(separator: ".").last.map { $0.prefix { $0.isLetter || $0.isNumber || $0 == "_" } }
                guard let name, publicTypes.contains(String(name)) else { return false }
            } else if let (_, isPublic) = typeDeclaration(line) {
                guard isPublic else { return false }
            }
        }
        return true
    }

    /// Whether a `///` line comes right before the declaration (attribute lines between).
    private static func precededByDocComment(_ lines: [String], _ index: Int) -> Bool {
        var cursor = index - 1
        while cursor >= 0 {
            let trimmed = lines[cursor].trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("@") && significantWords(trimmed).isEmpty { cursor -= 1; continue }
            return trimmed.hasPrefix("///")
        }
        return false
    }
}
